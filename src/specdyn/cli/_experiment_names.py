"""The names of the experiments that ship with specdyn, for ``specdyn reproduce --help``.

``--help`` must start at once, and reading the registry imports every experiment
module (numpy, pandas, scipy, matplotlib, torch). The registry
(:func:`specdyn.runs.builtin_names`) stays the one source of truth:
``tests/cli/test_cli_fast_start.py`` fails when this list differs from it, in
content or order. A command that runs experiments reads the registry itself.
"""

from __future__ import annotations

BUILTIN: tuple[str, ...] = (
    "fig3", "fig5", "fig6", "simulate", "regime-map", "fig2", "finite-size", "fig4",
    "bbp-escape", "trainability", "lr-transfer", "propagation-of-chaos", "sparse-atoms",
    "error-budget", "two-step-phase", "batch-reuse", "finite-size-theory", "real-data",
)
