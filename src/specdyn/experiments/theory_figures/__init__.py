"""Theory figures of the core paper: fig3 (the exponent map), fig5 and fig6 (first layer only).

Closed-form theory on a (k, t) grid, no simulation. One module a concern, imported in
this order (each imports only those above it):

- ``config``: the config dataclasses (``Fig3Config``, ``FirstLayerConfig``), their
  declared constraints and ``--full`` sizes;
- ``readings``: what the claims read off an ``alpha_eff`` grid (plateau runs, boundary
  offsets, mode sequences and the premise window of Eq. 32, the Eq. (21) deviations) and
  the windows they read in;
- ``oracle``: the independent evaluations the claims hold the tables against (App. G's
  inputs written out, the ODE and quadrature oracles, the fixed-point formula);
- ``claims_independent``, ``claims``, ``claims_first_layer``: the tolerances, dispute and
  revision records and the claims (fig3's against the oracle, fig3's, fig5's and fig6's),
  pure functions of a table and its config;
- ``wrong``: the wrong models, by class, and the classes that cannot occur;
- ``run``: the registered runs (``@register``): tables, figures, summaries.

Importing this package imports ``run``, which registers the three experiments.
"""

from __future__ import annotations

from specdyn.experiments.theory_figures import run  # noqa: F401  (registers fig3, fig5, fig6)

# Nothing is exported: the experiments are used by name through specdyn.runs, their
# configs and claims from their modules.
__all__: list[str] = []
