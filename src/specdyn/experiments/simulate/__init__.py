"""The plain ``simulate`` experiment: the two-layer linear network on one setting.

One training run beside the exact infinite-width theory; the unit that sweeps (and the
regime map) vary. One module a concern, imported in this order (each imports only those
above it):

- ``config``: the config dataclass (``SimulateConfig``), its declared constraints and
  ``--full`` size;
- ``claims``: the tolerances and claims, pure functions of the table and its config;
- ``run``: the registered run (``@register``): the table, figure and summary.

Importing this package imports ``run``, which registers ``simulate``.
"""

from __future__ import annotations

from specdyn.experiments.simulate import run  # noqa: F401  (registers simulate)

# Nothing is exported: the experiment is used by name through specdyn.runs, its config
# and claims from their modules.
__all__: list[str] = []
