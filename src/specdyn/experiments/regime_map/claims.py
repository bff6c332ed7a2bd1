"""The regime map's claims: pure functions of its table and config.

The tolerances and revision records are fixed here before the run;
:func:`regime_map_claims` checks them on ``regime-map.parquet``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from specdyn.experiments.regime_map.config import RegimeMapConfig
from specdyn.experiments.regime_map.readings import ode_label
from specdyn.runs.claims import OWN, Claim, sized, within

#: |exponent change: simulation - theory| at every grid point.
AGREE_TOL = 0.15
#: Why the ratio claim reads "in [0, 1)" and when it changed.
RATIO_REVISED = ("b6f669e (issue 30): in [0, 1] -> in [0, 1): 'less than' is strict, and a table "
                 "whose cells all change alike gives exactly 1; changed after the mutation "
                 "test, the quick run's 0.089 seen")
#: The learned-over-initial ratio R_k of the lazy and feature-learning cells: the cell's
#: label is Eq. (33)'s R_1 < 1 (lazy) or > 1, so on a simulation that follows the theory
#: they hold by construction: sanity checks.
R_SANITY = ("issue 47: a claim -> a sanity check: the cell's label (Eq. 33) is R_1 < 1 or > 1 "
            "in the theory, so the simulation's R follows from the label")
FEATURE_R_MIN = 1.0
FEATURE_R_REVISED = ("issue 40: >= 10 -> > 1, after the --full run measured 6.5 at a "
                     "feature-learning cell where the theory's own R_k reaches 6.1 (quick: 36); "
                     + R_SANITY)
#: The size of the simulation's deviation from the theory, on both sides, against the same
#: statistic of the spread seeds' runs of the same cells (``cfg.spread_seeds`` more seeds):
#: (a) of the spectrum, the root mean square over the cells of ``spec_dev`` (each cell's
#: root mean square of log(rho_sim / rho_theory) over ranks and checkpoints: the finite-width
#: level, about sqrt(2/N) = 0.06 at N = 512); seeds 1-3 of the quick grid (not the judged
#: seed 0) measured 0.062, 0.088, 0.075, pair ratios within 1.41: a factor 2;
#: (b) of the exponent change, the root mean square over the cells of (simulation - theory);
#: seeds 1-3 measured 0.036, 0.029, 0.020, pair ratios up to 1.79 (the cells share one
#: initial draw per seed, so they do not average it out): a factor 2.5 was set. The seed
#: scan then measured the ratio (judged seed over its spread seed) at 0.32 on seed 25 and
#: 0.31 on seed 33: over seeds 0-3 and 25-34 the ratios span 0.31-1.93 with a log sd of
#: 0.62 (one seed's RMS alone: log sd 0.42, over 15 seeds), so the factor is exp(3 x 0.62)
#: rounded, 6: a size claim on one draw resolves little more than "not zero, not several
#: times too large" (the spectrum's, factor 2, resolves far more: its log sd is 0.12).
SPECTRUM_FACTOR, CHANGE_FACTOR = 2.0, 6.0
CHANGE_REVISED = ("issue 47 (seed scan): within a factor 2.5 of the spread seed's -> 6, after "
                  "seeds 25 and 33 measured 0.32 and 0.31 of their spread seeds' (seeds 0-3, "
                  "25-34: 0.31-1.93, log sd 0.62); the factor 2.5 had come from three pilot "
                  "seeds' pair ratios; seed 0's 0.53 had been seen")
#: The exponent's clock: |log10(t_half simulation / t_half theory)| over the cells whose
#: theory changes by at least CLOCK_MIN_CHANGE (below, the half time of a change of a few
#: hundredths is noise). Seeds 1-3 (not the judged seed 0) measured at most 0.064, 0.050
#: and (see below); 0.15 decade, half a clock off by 2.
CLOCK_TOL, CLOCK_MIN_CHANGE = 0.15, 0.1
LAZY_NAME = "lazy cells: learned part below the initial part (largest R_k)"
FEATURE_NAME = "feature-learning cells: learned part dominates (smallest largest R_k)"
RATIO_NAME = "max lazy / min feature-learning exponent change"
AGREE_NAME = "max |simulation - theory| exponent change"


def regime_map_claims(points: pd.DataFrame, cfg: RegimeMapConfig) -> list[Claim]:
    """regime-map's claims, a pure function of its table ``regime-map.parquet``: per grid
    point the ``regime`` label, the simulated and theory's exponent change
    (``delta_alpha``, ``delta_alpha_theory``), the spectrum's deviation from the theory
    (``spec_dev``), the spread seeds' deviations (``dev_spread``, ``spec_dev_spread``),
    the exponent change's half time (``t_half``, ``t_half_theory``) and the simulation's
    largest learned-over-initial ratio (``R_max``)."""
    def col(name: str) -> pd.Series:
        return points[name] if name in points else pd.Series(np.nan, index=points.index)

    lazy = points.loc[points["regime"] == "lazy", "delta_alpha"]
    fl = points.loc[points["regime"] == "feature-learning", "delta_alpha"]
    gap = points["delta_alpha"] - points["delta_alpha_theory"]
    ratio = float("nan")
    if len(lazy) and len(fl):  # a feature-learning cell that never changes: ratio inf
        ratio = float(lazy.max() / fl.min()) if fl.min() > 0 else float("inf")
    r_lazy = col("R_max")[points["regime"] == "lazy"]
    r_fl = col("R_max")[points["regime"] == "feature-learning"]
    lazy_r = float(np.max(r_lazy)) if len(r_lazy) else float("nan")
    fl_r = float(np.min(r_fl)) if len(r_fl) else float("nan")
    def rms(x: pd.Series) -> float:
        return float(np.sqrt(np.mean(x.to_numpy(dtype=float) ** 2))) if len(x) else np.nan

    measured, predicted = rms(gap), rms(col("dev_spread"))
    spec_measured, spec_predicted = rms(col("spec_dev")), rms(col("spec_dev_spread"))
    spread_seeds = ", ".join(str(cfg.seed + i) for i in range(1, cfg.spread_seeds + 1))
    big = points["delta_alpha_theory"] >= CLOCK_MIN_CHANGE
    with np.errstate(divide="ignore", invalid="ignore"):
        clock = np.abs(np.log10(col("t_half")[big].to_numpy(dtype=float)
                                / col("t_half_theory")[big].to_numpy(dtype=float)))
    ode = [ode_label(cfg.alpha, cfg.beta, float(r) * cfg.sigma_a, cfg.sigma_a, float(g))
           for r, g in zip(points["sigma_ratio"], points["gamma_ratio"], strict=True)]
    wrong = [f"({r:.3g}, {g:.3g}): {lab} / {o}" for r, g, lab, o in zip(
        points["sigma_ratio"], points["gamma_ratio"], points["regime"], ode, strict=True)
        if lab != o]
    return [
        Claim(LAZY_NAME, "in [0, 1) (strictly below 1)", lazy_r, bool(0.0 <= lazy_r < 1.0),
              source="core Sec. 3.2.4, Eq. (33)",
              note="'the learned component does not exceed the initialization component even "
                   "for the strongest teacher mode': R_k(t) = rho_k(t) / rho_k(0) - 1 (Eq. 16) "
                   "on the simulated spectrum, largest over the ranks, checkpoints and the "
                   f"{len(r_lazy)} lazy cells; the label says so in the theory",
              sanity=True, revised=R_SANITY, revised_how="restated"),
        Claim(FEATURE_NAME, f"in ({FEATURE_R_MIN:g}, inf] (strictly above 1)", fl_r,
              bool(fl_r > FEATURE_R_MIN), source="core Sec. 3.2.4, Eq. (33)",
              note="the largest R_k of each of the "
                   f"{len(r_fl)} feature-learning cells, smallest over them, above 1 (the "
                   "learned part exceeds the initial one at the strongest mode); the label "
                   "says so in the theory", sanity=True, revised=FEATURE_R_REVISED,
              revised_how="restated"),
        Claim(RATIO_NAME, "in [0, 1) (strictly below 1)",
              ratio, bool(0.0 <= ratio < 1.0), source="core Sec. 3.2.4",
              note="simulation: every lazy cell (Eq. 33) changes its exponent less than every "
                   "feature-learning cell, strictly (a table with equal changes gives 1); 'the "
                   "nonmonotonic exponent evolution ... specific to the feature-learning "
                   "regime'", revised=RATIO_REVISED, revised_how="tighter"),
        within(AGREE_NAME,
               float(gap.abs().max()) if len(gap) else np.nan, 0.0, AGREE_TOL,
               source="core Sec. 3.1",
               note=f"finite width N = {cfg.N} and GD against the N = inf theory"),
        replace(sized("spectrum, log(simulation / theory): root mean square over the cells",
              spec_measured, spec_predicted, SPECTRUM_FACTOR, source=OWN,
              predicted_by=f"the same over the spread seed(s) {spread_seeds} of every cell",
              note=f"each cell's root mean square over ranks and checkpoints: the level finite "
                   f"width N = {cfg.N} gives the spectrum, on both sides: a simulation that is "
                   "its theory fails, as do fluctuations a factor 2 too large or small; factor "
                   "from seeds 1-3 (not the judged one); a size over the cells, the same for "
                   "a shuffled table: its partner compares each cell with its theory"),
                partner=AGREE_NAME),
        sized("exponent change, simulation - theory: root mean square over the cells",
              measured, predicted, CHANGE_FACTOR, source=OWN,
              predicted_by=f"the same over the spread seed(s) {spread_seeds} of every cell",
              revised=CHANGE_REVISED, revised_how="looser",
              note=f"the deviation has the size finite width N = {cfg.N} and GD give it, on "
                   "both sides; factor from the ratios of seeds 0-3 and 25-34 (0.31-1.93, "
                   "log sd 0.62), far wider than the spectrum's: the cells share one initial "
                   "draw per seed, so one run is one draw of this RMS; a simulation that is "
                   "its theory (0) still fails, and so does a deviation 10 times its size"),
        within("exponent change's half time: simulation / theory (max decades off)",
               float(np.max(clock)) if clock.size else float("nan"), 0.0, CLOCK_TOL,
               source="core Sec. 3.1", aspect="clock",
               note=f"over the {int(big.sum())} cells whose theory changes the exponent by "
                    f">= {CLOCK_MIN_CHANGE:g}: the first time |alpha_fit(t) - alpha_fit(0)| "
                    "reaches half its largest value, log t interpolated between checkpoints; "
                    "tolerance from seeds 1-3 (at most 0.064, not the judged seed)"),
        within("cell labels against the ODE of the strongest mode (cells that disagree)",
               float(len(wrong)), 0.0, 0.0, source="core Eq. (33), Sec. 3.2.4",
               aspect="oracle",
               note="each cell's regime (theory.regime, the label of panel (a) and of every "
                    "claim) against Eqs. (144)-(145) for mode 1 integrated until settled from "
                    "App. G's inputs written out: lazy iff R_1 < 1, feature-learning iff also "
                    "sigma_a > sigma_w and xi_1 > S; " + ("; ".join(wrong) or "none disagree"),
               partner=RATIO_NAME),
    ]


def regime_map_claims_of(cfg: RegimeMapConfig, folder: Path) -> list[Claim]:
    """regime-map's claims on the table a run wrote to ``folder`` (for the registry)."""
    return regime_map_claims(pd.read_parquet(folder / "regime-map.parquet"), cfg)
