"""Nonlinear students: the core paper's Fig. 4 (Section 3.3, Appendix G).

A ReLU student's preactivation spectrum and its fitted slope, feature learning against
lazy, beside the linear theory at ``gamma0`` and at ``gamma0 / c1``. One module a
concern, imported in this order (each imports only those above it):

- ``config``: the config dataclass (``Fig4Config``), its declared constraints and
  ``--full`` size;
- ``claims``: the tolerances, dispute and revision records and the claims, pure
  functions of the tables and the config;
- ``readings``: the linear theory's slopes (``theory_slopes``), fitted as the students';
- ``wrong``: the plausible wrong answers the claims must catch;
- ``run``: the registered run (``@register``): training, tables, figure and summary.

Importing this package imports ``run``, which registers ``fig4``.
"""

from __future__ import annotations

from specdyn.experiments.nonlinear_figures import run  # noqa: F401  (registers fig4)

# Nothing is exported: the experiment is used by name through specdyn.runs, its config
# and claims from their modules.
__all__: list[str] = []
