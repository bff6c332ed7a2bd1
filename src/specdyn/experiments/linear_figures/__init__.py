"""Finite-width simulations of the linear network: Fig. 2 and a finite-size study.

``fig2``: the paper's Fig. 2 (Appendix G) with the exact Gram-space engine:
full-batch GD, learning rate ``nu = N``, ``dt = 1`` (``t = step``), spectra of
``H H^T/(MN)`` against the closed form. ``finite-size``: how the agreement
with the (infinite-width, population) theory improves with the width ``N`` at
``M = inf`` and with the number of samples ``M`` at ``N = inf`` (gradient flow,
so that nothing but the finite size separates simulation and theory).

One module a concern, imported in this order (each imports only those above it):

- ``config``: the config dataclasses (``Fig2Config``, ``FiniteSizeConfig``), their
  declared constraints and ``--full`` sizes;
- ``readings``: the windows fixed by the theory and what the claims, figures and
  summaries read off the tables, pure functions;
- ``claims``: the tolerances and revision records and the claims, pure functions of the
  tables and the config;
- ``wrong``: the plausible wrong answers the claims must catch;
- ``run``: the registered runs (``@register``): tables, figures, summaries.

Importing this package imports ``run``, which registers the two experiments.
"""

from __future__ import annotations

from specdyn.experiments.linear_figures import run  # noqa: F401  (registers fig2, finite-size)

# Nothing is exported: the experiments are used by name through specdyn.runs, their
# configs and claims from their modules.
__all__: list[str] = []
