"""Two GD steps in the linear-width regime: outlier-count phase grid and batch reuse.

Experiments (``docs/related-works.md`` section 2, second related abstract):

``two-step-phase``
    Outliers of ``W2`` over an ``(alpha1, alpha2)`` grid, beside the abstract's
    count ``floor(alpha2 / (1/2 - alpha1))``, the count with the step-1 spike,
    ``1 + floor(...)``, and the finite-N theory's count; chosen cells at several widths.
    Cells within ``line_margin`` (an exponent gap, below) of a line where the formula
    steps are "near a line" and left out of the score.
``batch-reuse``
    Target overlap ``|<v_i, beta>|`` of the learned directions of ``W2`` -- the
    outliers whose left singular vector is identified with a power of ``a`` --
    fresh versus reused batch, for targets of information exponent 1, 2 (with
    and without ``E[z sigma*^2] != 0``) and 3. The largest overlap over *all*
    outliers is kept beside it (``max_overlap``): with a fresh batch and a
    heavy-tailed residual (He2, He3) the second step also makes outliers out of
    a few samples with a large residual; their left vectors are not powers of
    ``a``, their right vectors lean on those samples' inputs, and their target
    overlap is that of the samples, ``|beta . x_j| / sqrt(D)`` -- up to 0.15 at
    D = 2000, 0.11 at D = 4000.

Config fields follow ``docs/concepts.md``: ``D`` inputs, ``M`` samples a step,
``N`` width (the abstract's ``d``, ``n``, ``N``; its ``d = n = N`` regime is
``D = M = N``).

Where the count steps. The ``k``-th step-2 outlier is a spike along ``a^(k+1)``
of strength ``C_k N^(alpha2 - k (1/2 - alpha1))`` (``strength_a*`` columns
measure it), so the distance of a cell from the line ``alpha2 = k (1/2 -
alpha1)`` that decides whether it is resolved at size ``N`` is the exponent gap
``alpha2 - k (1/2 - alpha1)``: a gap ``g`` makes the spike ``N^g`` times
stronger or weaker than on the line. ``line_margin`` is therefore in exponent
units (default 0.05, a factor 1.46 at N = 2000). A margin on the ratio
``alpha2 / (1/2 - alpha1)`` instead shrinks to nothing in exponent units as
``alpha1 -> 1/2`` (0.15 in ratio is 0.009 in exponent at ``alpha1 = 0.44``, a
factor 1.07 in strength); the summary also reports that score
(``ratio_margin_*``, margin 0.15).

At the widths a simulation reaches, the count lags ``floor``: the step-2 spikes' prefactors
are small (``C_1`` about 0.25 for tanh(z + 1/2)) and, near ``alpha1 = 1/2``, the lines are
closer together than any reachable ``N^gap`` makes up. The finite-N theory of the step-2
spikes (:mod:`specdyn.theory.two_step_spikes`, read through :mod:`.spikes`) predicts the
strengths to a few percent and the count run by run; ``two-step-phase`` judges the
abstract's count where that theory says it can be seen, on the grid and on chosen cells
run at several widths (``PhaseConfig.cells``, ``cells_N``). Run with
``OMP_NUM_THREADS=1`` on small shared machines: torch and the host BLAS otherwise
oversubscribe the cores (15x slower here).

One module a concern, imported in this order (each imports only those above it):

- ``config``: the config dataclasses (``PhaseConfig``, ``ReuseConfig``), their declared
  constraints and ``--full`` sizes, and the constants the tables are recorded with;
- ``tables``: the GD runs and the tables they make (``phase_table``, ``reuse_table``);
- ``readings``: what the ``two-step-phase`` claims and figure read off its table (cell
  medians, formula agreement, the rise with ``floor``);
- ``spikes``: what the finite-N theory says of each run (its count, strengths, whether
  ``floor`` is testable there), from the config alone;
- ``rank_one``: the step-1 update's bounds (how far from rank one, whether its spike
  clears the bulk);
- ``reuse_claims``: ``batch-reuse``'s claims;
- ``claims``: ``two-step-phase``'s tolerances, revision and dispute records and claims,
  pure functions of its tables and config (and the topic's claims, imported);
- ``run``: the registered runs (``@register``): tables, figures, summaries.

Importing this package imports ``run``, which registers the two experiments.
"""

from __future__ import annotations

from specdyn.experiments.two_step import run  # noqa: F401  (registers the two)

# Nothing is exported: the experiments are used by name through specdyn.runs, their
# configs, tables and claims from their modules.
__all__: list[str] = []
