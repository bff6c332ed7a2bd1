"""Finite-size theory against the exact Gram engine, and the effective nonlinear theory.

``finite-size-theory``: many seeds of :func:`specdyn.sim.train_linear`
(Gram engine, gradient flow) of the paper's Fig. 2 setting at each width ``N``
(``M`` infinite) and each sample size ``M`` (``N`` infinite); the seed mean
and std of ``log rho_k(t)`` against :func:`specdyn.theory.finite_size_moments`.
Then, for each activation, a two-layer student (:func:`specdyn.sim.train_two_layer`
at ``fig4``'s sizes, feature-learning and lazy) against the linear theory at
:func:`specdyn.theory.effective_setting`: the fitted slope of the preactivation
spectrum over ``k in [kmin, kmax]`` at every recorded time.

Claims (each checked on this run's data, every tolerance a constant in ``claims``; all the
project's own, the core paper has no finite-size theory):

- levels: the std of ``log rho_k`` (RMS over the valid cells) within 15 % of the
  theory's, and the mean shift (the ``1/SE^2``-weighted regression slope of the measured
  bias on the predicted shift, where ``|bias| > 5 SE``) within 25 % of 1;
- per cell: ``|std_theory / std_sim - 1|`` within 3 sampling SE of a std,
  ``3 / sqrt(2 (S - 1))``, at a fraction of valid cells at least the binomial bound
  ``claims.fraction_min`` (an exact theory falls below it in <= 0.1 % of runs); the
  largest ``|bias - shift_theory|`` in SE where ``|bias| > 5 SE`` below the level an exact
  theory's max exceeds in 0.1 % of runs (``claims.max_resid_tolerance``); ``|bias -
  shift_theory| <= 3 SE`` elsewhere at a fraction of cells at least the same bound;
- sizes, two-sided: the RMS of ``(bias - shift) / SE`` over the valid cells is an exact
  theory's (Student t) within a factor 1.3, and that of the std ratio's departure in
  sampling SE is 1 within 1.35, so that a simulation equal to its theory fails;
- an oracle: the theory's ``t = 0`` std is ``sqrt(2/N + 2/M)`` (the Wishart and sample
  covariance diagonal);
- effective theory: ``|slope_sim - slope_effective| <= slope_tol`` at every
  recorded time, per activation and regime, for the activations whose ``c1``
  stays put; for those in :data:`BREAKS_DOWN` (saturating: ``c1`` drifts as the
  preactivations grow) the claim is that it breaks down, more as training goes on (the
  departure at the last time exceeds every one of the first half of the run by
  ``slope_tol``), fixed here per activation.

One module a concern, imported in this order (each imports only those above it):

- ``config``: the config dataclass (``FiniteSizeConfig``), its declared constraints and
  ``--full`` size;
- ``claims``: the tolerances and revision records and the claims, pure functions of the
  tables and the config;
- ``run``: the registered run (``@register``): the Gram-engine moments and the students'
  slopes, tables, figure, summary.

Importing this package imports ``run``, which registers the experiment.
"""

from __future__ import annotations

from specdyn.experiments.finite_size_theory import run  # noqa: F401  (registers finite-size-theory)

# Nothing is exported: the experiment is used by name through specdyn.runs, its config
# and claims from their modules.
__all__: list[str] = []
