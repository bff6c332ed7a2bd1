"""The regime map of the core paper: lazy vs feature learning over two ratios.

Over (sigma_w/sigma_a, gamma0 theta0/S): theory's classification beside the exponent
change measured in a sweep of ``simulate`` runs. One module a concern, imported in this
order (each imports only those above it):

- ``config``: the config dataclass (``RegimeMapConfig``), its declared constraints and
  ``--full`` size;
- ``readings``: what the claims read off each cell's ``simulate`` table (the learned
  part, the exponent change's half time, the spectrum's deviation) and a cell's label
  from the ODE of its strongest mode;
- ``claims``: the tolerances, revision records and claims, pure functions of the table and
  its config;
- ``run``: the registered run (``@register``): the sweep, table, figure and summary.

Importing this package imports ``run``, which registers ``regime-map``.
"""

from __future__ import annotations

from specdyn.experiments.regime_map import run  # noqa: F401  (registers regime-map)

# Nothing is exported: the experiment is used by name through specdyn.runs, its config
# and claims from their modules.
__all__: list[str] = []
