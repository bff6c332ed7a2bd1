"""Theory figures of the core paper: fig3 (the exponent map), fig5 and fig6 (first layer only).

Closed-form theory on a (k, t) grid, no simulation. One module a concern, imported in
this order (each imports only those above it):

- ``config``: the config dataclasses (``Fig3Config``, ``FirstLayerConfig``), their
  declared constraints and ``--full`` sizes;
- ``readings``: what the claims read off an ``alpha_eff`` grid (plateau runs, boundary
  offsets, mode sequences, the Eq. (21) deviations) and the windows they read in;
- ``claims``: the tolerances, dispute and revision records and the claims, pure
  functions of a table and its config;
- ``run``: the registered runs (``@register``): tables, figures, summaries.

Importing this package imports ``run``, which registers the three experiments.
"""

from __future__ import annotations

from specdyn.experiments.theory_figures import run  # noqa: F401  (registers fig3, fig5, fig6)

# Nothing is exported: the experiments are used by name through specdyn.runs, their
# configs and claims from their modules.
__all__: list[str] = []
