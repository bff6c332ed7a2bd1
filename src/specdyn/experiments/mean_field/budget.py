"""The error-budget claims: a pure function of its table and config.

Every tolerance, source and dispute is fixed here before the run; :func:`budget_claims`
checks them on ``error-budget.parquet`` (with the training inputs
``error-budget_inputs.parquet`` the particle part's exact level is computed from);
:func:`budget_claims_of` reads those from a run's folder, for the registry. The levels are
:mod:`.levels`', read through :mod:`.claims`' cache as propagation-of-chaos's.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn.experiments.mean_field import levels
from specdyn.experiments.mean_field.claims import (
    CHAOS_RATE_SOURCE,
    GIBBS_SOURCE,
    LEVEL_FACTOR,
    cached_level,
    inputs_of,
    scatter_about_level,
)
from specdyn.experiments.mean_field.config import BudgetConfig
from specdyn.experiments.mean_field.readings import (
    INIT_EARLY,
    INIT_END,
    init_spread,
    part_trend,
)
from specdyn.runs.claims import OWN, Claim, loglog_slope, sized, within

# Claim tolerances of ``error-budget`` (fixed before any run).
#: A part "falls" with its knob when its Spearman correlation with it is at most -TREND_MIN.
TREND_MIN = 0.8
#: No initialization-only residual (abstract 3): the spread (max - min) / mean over
#: ``init_scales`` of the t_end test error is at most INIT_END_SPREAD_MAX, and at most
#: INIT_DECAY_MAX of the spread at ``t_early`` (t = 10 at both sizes). From a pilot run (seeds
#: 1, 2): end spreads 0.024, 0.035, ratios 0.088, 0.087; the ratio's bound 0.15 -> 0.2 after
#: seed 3 measured 0.158 (seeds 1-8: 0.019-0.158); an init never forgotten gives 1.
INIT_END_SPREAD_MAX, INIT_DECAY_MAX = 0.07, 0.2
INIT_DECAY_REVISED = ("issue 40: <= 0.15 -> <= 0.2, after quick seed 3 measured 0.158 (seeds "
                      "1-8: 0.019-0.158; seed 0 0.059); the early spread read at t_early = 10 "
                      "at both sizes, not each size's budget time, after --full (data 20a0987) "
                      "measured 1.14: at t = 50 the init was already forgotten (spread 0.0067, "
                      "t_end 0.0077), so the ratio compared two noise-level spreads")
#: error-budget's particle part: one function gap per N (2 replicas), so its slope spreads
#: more than propagation-of-chaos's: seeds 1-8 (not the judged seed 0) measured -0.82 to
#: -1.27; +- 0.3 around -1 (a rate N^(-1/2), the wrong model, measures -0.65).
BUDGET_SLOPE_TOL = 0.3
BUDGET_SLOPE_REVISED = ("issue 40: -1 +- 0.2 -> -1 +- 0.3, after quick seed 2 measured -1.274 "
                        "(seeds 1-8: -0.82 to -1.27; seed 0 -1.15, --full -0.91)")
STATISTICAL_REVISED = (
    "issue 40: expected -> disputed, after quick seeds 3 and 4 measured -0.1 (seeds 1, 2, 5, "
    "6: -1; 7, 8: -0.9) and the --full runs -0.75 (data 49cb59a) and -0.89 (data 20a0987); "
    "issue 47: disputed -> expected, read on the mean over statistical_seeds = 3 seeds (one "
    "seed's test error moves by as much as the part at M >= 200: pilot seed 3 measured "
    "0.344, 0.296, 0.309, 0.307, 0.317; the mean of seeds 1-3 falls in order)")
OPT_SANITY = ("issue 47: claim -> sanity check: E(t) - E(t_end) ends at zero by its "
              "definition; the clock claim (the initial rate) is what can fail")
#: The clock: the test error's fall over the first ``CLOCK_T`` of the population run over
#: the mean-field flow's initial rate lies in CLOCK_BAND. Pilot seeds 1-3 measured 1.14-1.16
#: over the first step (its own tangent kernel and one step's Langevin noise), so a factor
#: 1.35 was set; seeds 1-6 then measured 0.91-1.12 at t = 0.2. Seeds 1-12, 15 and 18 (not
#: the judged 0) measured 0.69-1.11, with a tail only below (0.69, 0.71, 0.85 on seeds 15, 7,
#: 18): the noise adds test error while the drift removes it, so a fall can read short of
#: the rate, not beyond it: nine of the fifteen (with seed 0) lie at 1.01-1.11. The band takes
#: 0.6 below (the tail less 0.09) and 1.2 above (the largest plus 0.09, three sd of those
#: nine); the registered run at twice the speed reads 1.24-2.07 on these seeds (the lowest on
#: seed 7's 0.71), one at half the speed at most 0.56.
CLOCK_T, CLOCK_BAND = 0.2, (0.6, 1.2)
#: The configurational temperature at t_end (population and init-scale runs pooled) against
#: the temperature: pilot seeds 1-3 measured 1.05, 0.93, 0.84 (quick: still relaxing at
#: t_end = 40, the weight decay's time is 1 / (2 lambda') = 10). Seeds 1-12, 15 and 18
#: measured 0.77-1.37 (sd of the log 0.171): a factor 1.45 holds every one and fails half
#: or twice the temperature on every one (0.68 at most, 1.55 at least), 2.2 sd.
TEMPERATURE_FACTOR = 1.45
#: The two bands' revision: both were set on three pilot seeds.
BANDS_REVISED = ("issue 47: factor 1.35 -> the clock in [0.6, 1.2] of its rate and the "
                 "temperature within 1.45, after the seeds beside a new claim's pilot "
                 "(1-12, 15, 18; not the judged 0) measured the clock at 0.69-1.11 and the "
                 "temperature at 0.77-1.37 of their predictions (seeds 7 and 15, and 6, "
                 "outside 1.35): the bands had come from three pilot seeds")
#: The particle part at t = 0: the RMS over N of measured / exact - 1 over its derived size
#: (:func:`scatter_about_level`) lies in this band. One seed and five (--full: six) sizes
#: against one shared reference make the ratio skewed: 1000 Monte-Carlo draws of the initial
#: law (GELU, D = 5, fresh Gaussian inputs, the quick sizes) put its 0.1 % and 99.9 %
#: quantiles at 0.149 and 3.71 (median 0.76), rounded out here; the --full sizes' range is
#: narrower (200 draws: 0.23-2.10).
BUDGET_SCATTER_BAND = (0.14, 3.8)
BUDGET_SCATTER_REVISED = ("added after a referee's wrong model (issue 47: the particle part at "
                          "t = 0 written as its exact level) passed every claim; the level "
                          "claim compares only the sum over N")
_INIT_DECAY = "init forgotten: spread over init scales at t_end / at t_early"
_CLOCK = "clock: the test error's initial fall against the initial rate"
_PARTICLE_SLOPE = "particle part: slope against N"
_TAIL_SOURCE = ('abstract 3: "with a target-dependent Hermite/Barron tail replacing any '
                'initialization-only residual"; own')
#: The seed statement the error-budget claims check.
_BUDGET_SPLIT = ('abstract 3: "the total feature-learning-error decomposition into statistical, '
                 'optimization, propagation-of-chaos, and sparse-residual components"')
#: The parts of ``error-budget.parquet`` that hold a prediction, not a measurement.
THEORY_PARTS = ("initial rate, theory",)


def budget_figure_readings(df: pd.DataFrame, cfg: BudgetConfig,
                           inputs: pd.DataFrame) -> dict[str, Any]:
    """What the error-budget figure draws of its claims, read off its table with the claims'
    own readings and tolerances: ``init_scale`` (label -> (init scales, test error)) at
    ``t_early`` and at ``t_end``, ``init_claim`` ((measured, bound) of the t_end spread and of
    the spread ratio); ``particle_level`` ((N, exact function gap at t = 0), the level
    claim's factor); ``clock`` ((t_c, measured, predicted) rate, the ratio's band); ``temperature``
    ((run labels, configurational temperatures), tau, factor)."""
    t_early, t_end = cfg.early_steps * cfg.dt, cfg.long_factor * cfg.steps * cfg.dt
    rows = df[df["part"] == "init scale"]
    curves = {}
    for knob, label in ((INIT_EARLY, f"at t_early = {t_early:g}"),
                        (INIT_END, f"at t_end = {t_end:g}")):
        r = rows[rows["knob"] == knob].sort_values("x")
        curves[label] = (r["x"].to_numpy(float), r["value"].to_numpy(float))
    early, end = init_spread(df, INIT_EARLY), init_spread(df, INIT_END)
    ratio = end / early if early > 0 else float("nan")
    at0 = df[df["part"] == "particle at t = 0"].sort_values("x")
    Ns = tuple(int(n) for n in at0["x"])
    pred0 = cached_level(levels.initial_function_gap, cfg.activation,
                   inputs_of(inputs, cfg.D, cfg.seed), (1.0, 1.0), Ns, cfg.chaos_reference_N)
    temp = df[df["part"] == "configurational temperature"]
    return {"init_scale": curves,
            "init_claim": ((end, INIT_END_SPREAD_MAX), (ratio, INIT_DECAY_MAX)),
            "particle_level": ((np.asarray(Ns, float), pred0), LEVEL_FACTOR),
            "clock": (clock_reading(df), CLOCK_BAND),
            "temperature": ((temp["knob"].tolist(), temp["value"].to_numpy(float)),
                            cfg.temperature, TEMPERATURE_FACTOR)}


def statistical_mean(df: pd.DataFrame) -> pd.DataFrame:
    """The statistical part's mean over its seeds: rows ``(part, x, value)`` per ``M``."""
    rows = df[df["part"] == "statistical"]
    return rows.groupby("x", as_index=False)["value"].mean().assign(part="statistical")


def clock_reading(df: pd.DataFrame) -> tuple[float, float, float]:
    """``(t_c, measured, predicted)``: the population run's test error fall over the first
    ``t_c`` (its checkpoint nearest :data:`CLOCK_T`) over ``t_c``, and the initial rate of the
    mean-field flow (NaN where the rows are missing)."""
    opt = df[df["part"] == "optimisation"].sort_values("x")
    x, val = opt["x"].to_numpy(float), opt["value"].to_numpy(float)
    pred = df.loc[df["part"] == "initial rate, theory", "value"].to_numpy(float)
    if not (x.size and x[0] == 0.0 and (x > 0).any() and pred.size):
        return float("nan"), float("nan"), float("nan")
    j = 1 + int(np.argmin(np.abs(x[1:] - CLOCK_T)))
    return float(x[j]), float((val[j] - val[0]) / x[j]), float(pred[0])


def budget_level_claims(df: pd.DataFrame, cfg: BudgetConfig,
                        inputs: pd.DataFrame) -> list[Claim]:
    """The budget's levels: the particle part at ``t = 0`` (exact), the clock (the initial
    rate) and the Gibbs temperature (the configurational temperature at ``t_end``)."""
    at0 = df[df["part"] == "particle at t = 0"].sort_values("x")
    Ns = tuple(int(n) for n in at0["x"])
    x = inputs_of(inputs, cfg.D, cfg.seed)
    pred0 = cached_level(levels.initial_function_gap, cfg.activation, x, (1.0, 1.0), Ns,
                   cfg.chaos_reference_N)
    s_meas, s_pred = scatter_about_level([(x, Ns, at0["value"].to_numpy(float))],
                                         cfg.activation, cfg.chaos_reference_N,
                                         cfg.chaos_replicas)
    t_c, rate, rate_pred = clock_reading(df)
    temp = df.loc[df["part"] == "configurational temperature", "value"].to_numpy(float)
    return [
        replace(sized("particle part at t = 0 against its exact level",
                      float(at0["value"].sum()), float(pred0.sum()), LEVEL_FACTOR,
                      source=_BUDGET_SPLIT, aspect="prefactor",
                      predicted_by="(1/N + 1/N_ref) s_a^2 E sigma(w . x)^2 "
                                   "(levels.initial_function_gap)",
                      note="the function gap of the coupled systems at the start, summed over "
                           "N (weights 1/N); tolerance as propagation-of-chaos's"),
                partner=_PARTICLE_SLOPE),
        within("particle part at t = 0: scatter about its exact level (over its size)",
               s_meas / s_pred if s_pred > 0 else float("nan"), *BUDGET_SCATTER_BAND,
               source=OWN, aspect="size",
               note=f"RMS over N of measured / exact - 1, one seed, {s_meas:.3g}, over the "
                    f"size {s_pred:.3g} derived from the initial law (levels."
                    "initial_gap_scatter: R_N systems' mean gap against a shared reference): "
                    "gaps written as their levels (zero scatter) fail, and so do gaps "
                    "scattering far more than R_N independent systems allow; band: the "
                    "ratio's 0.1-99.9 % Monte-Carlo quantiles",
               key="particle part at t = 0: scatter about its exact level",
               revised=BUDGET_SCATTER_REVISED, revised_how="tighter"),
        within(_CLOCK, rate / rate_pred if rate_pred < 0 else float("nan"), *CLOCK_BAND,
               source=_BUDGET_SPLIT, aspect="clock",
               note=f"(E(t_c) - E(0)) / t_c of the population run, t_c = {t_c:g} (the "
                    f"checkpoint nearest {CLOCK_T:g}), {-rate:.4g}, over -dE/dt at t = 0 of "
                    f"the mean-field flow, {-rate_pred:.4g} (levels.initial_rate: the initial "
                    "law's tangent kernel fitting the labels): a run at another speed moves it "
                    "by its factor; band from seeds 1-12, 15, 18 (0.69-1.11; the noise can "
                    "only slow the fall)", revised=BANDS_REVISED, revised_how="looser"),
        replace(sized("configurational temperature at t_end against the temperature",
                      float(temp.mean()) if temp.size else float("nan"), cfg.temperature,
                      TEMPERATURE_FACTOR, source=GIBBS_SOURCE, aspect="prefactor",
                      predicted_by="the temperature tau (equipartition at the Gibbs measure)",
                      note="mean over the population and init-scale runs of (1/N) sum_i "
                           "theta_i . grad V(theta_i) / (D + 1) at t_end "
                           "(levels.configurational_temperature); a run at another noise level "
                           "moves it by that factor; tolerance 2.75 sd of seeds 1-12, 15, 18 "
                           "(0.77-1.37 of tau)", revised=BANDS_REVISED, revised_how="looser"),
                partner=_CLOCK),
    ]


def budget_claims(df: pd.DataFrame, cfg: BudgetConfig | None = None,
                  inputs: pd.DataFrame | None = None) -> list[Claim]:
    """The claims of ``error-budget``, a pure function of its long table.

    ``df`` has rows ``(part, knob, x, value)``. Abstract 3 splits the error into
    statistical, optimisation, propagation-of-chaos and sparse-residual parts:

    * statistical(M), the mean over seeds, falls with M (Spearman <= ``-TREND_MIN``);
      optimisation(t) falls with t (a sanity check: it ends at zero by definition);
    * particle(N) is ``O(1/N)``: log-log slope within ``BUDGET_SLOPE_TOL`` of -1;
    * no initialization-only residual (own reading of abstract 3's fourth result): the
      test error at ``t_end`` hardly depends on the init scale (``INIT_END_SPREAD_MAX``),
      though it did at ``t_early`` (``INIT_DECAY_MAX``, the partner);
    * with ``cfg`` and the inputs, the levels (:func:`budget_level_claims`).

    The sparse-residual part is drawn (the target's Hermite tail, the learned measure's
    K-cluster residual), not claimed: at temperature 0.02 the long-time measure has a
    density, and S* atoms are ``sparse-atoms``' claims, at temperature 1e-4.
    """
    needed = {"part", "x", "value"}
    if not needed <= set(df.columns):
        raise ValueError(f"df must have the columns {sorted(needed)}")
    part = df[df["part"] == "particle"].sort_values("x")
    early, end = init_spread(df, INIT_EARLY), init_spread(df, INIT_END)
    claims = [
        within("statistical part falls with M (Spearman of the seed mean)",
               part_trend(statistical_mean(df), "statistical"), -1.0, -TREND_MIN,
               source=_BUDGET_SPLIT, key="statistical part falls with M (Spearman)",
               note="test error after the budget on M samples minus the population run's, "
                    "mean over the seeds; it holds on 13 of seeds 1-12, 15, 18 (seed 2's "
                    "mean, over seeds 2-4, measures -0.3: one population run's error sets "
                    "every M's zero)", revised=STATISTICAL_REVISED,
               revised_how="restated"),
        within("optimisation part falls with t (Spearman)", part_trend(df, "optimisation"),
               -1.0, -TREND_MIN, source=_BUDGET_SPLIT, sanity=True, revised=OPT_SANITY,
               revised_how="restated", note="E(t) - E(t_end) along the population run"),
        within(_PARTICLE_SLOPE, loglog_slope(part["x"], part["value"]),
               -1.0 - BUDGET_SLOPE_TOL, -1.0 + BUDGET_SLOPE_TOL,
               source=f"{_BUDGET_SPLIT}; {CHAOS_RATE_SOURCE}",
               note="function gap to a coupled reference at the end; claim O(1/N); tolerance "
                    "from seeds 1-8 (-0.82 to -1.27)", revised=BUDGET_SLOPE_REVISED,
               revised_how="looser"),
        within("init forgotten: spread of the t_end test error over init scales "
               "((max - min) / mean)", end, 0.0, INIT_END_SPREAD_MAX, source=_TAIL_SOURCE,
               partner=_INIT_DECAY,
               note="runs from a_0 ~ N(0, s^2), w_0 ~ N(0, s^2 I/D) at each init scale s, same "
                    "samples and noise; what is left at t_end is the target's, not the "
                    "init's; that it is the Hermite/Barron tail is not checked; tolerance "
                    "from a pilot run (seeds 1, 2: 0.024, 0.035)"),
        within(_INIT_DECAY, end / early if early > 0 else float("nan"), 0.0, INIT_DECAY_MAX,
               source=_TAIL_SOURCE,
               note="the init scale mattered at t_early (10 at both sizes) and is forgotten "
                    "by t_end; tolerance from seeds 1-8 (0.019-0.158)",
               revised=INIT_DECAY_REVISED, revised_how="looser", key="init spread decay"),
    ]
    if cfg is not None and inputs is not None:
        claims += budget_level_claims(df, cfg, inputs)
    return claims


def budget_claims_of(cfg: BudgetConfig, folder: Path) -> list[Claim]:
    """error-budget's claims on the tables of a run's folder (the registry's ``claims``)."""
    return budget_claims(pd.read_parquet(folder / "error-budget.parquet"), cfg,
                         pd.read_parquet(folder / "error-budget_inputs.parquet"))
