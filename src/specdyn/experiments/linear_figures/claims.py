"""The linear figures' claims: pure functions of a table and its config.

Every tolerance, dispute and revision record is fixed here before the run (the ranks of
fig2's ``t = 0`` exponent fit, ``INIT_KMIN..INIT_KMAX``, bound the config's sizes, in
config); :func:`fig2_claims` checks the tables ``fig2.parquet`` and
``fig2_alpha.parquet``, :func:`finite_size_slope_claims` ``finite-size.parquet`` (the
``*_claims_of`` functions read those from a run's folder, for the registry). The windows
the claims read in (:func:`late_start`, :func:`learned_ranks`) and the curves' readings
(:func:`early_growth_exponent`, :func:`curve_correlation`, :func:`upper_half_slope`) are
here too; the runs use two of them for their figures and summaries.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from specdyn import theory
from specdyn.experiments.linear_figures.config import (
    INIT_KMAX,
    INIT_KMIN,
    Fig2Config,
    FiniteSizeConfig,
)
from specdyn.measure.exponents import fit_exponents
from specdyn.runs.claims import Claim, learning_order, loglog_slope, within
from specdyn.settings import PowerLawSetting

LOCAL_RANKS = (1, 2)  # the two-point local exponent at k = 1 of fig2's panel (b)

# fig2's claims: every tolerance fixed before the run (the fit's ranks are in config).
#: |fitted exponent - alpha| at t = 0.
INIT_TOL = 0.1
#: The t = 0 exponent is that of the initial Gram and sample covariance, whatever the
#: dynamics: every model of the training passes it, so it is a sanity check.
INIT_SANITY = ("a claim -> a sanity check (issue 40): the exponent at t = 0 is the "
               "initialisation's, the same for any model of the dynamics (a wrong one passes "
               "it)")
#: median over ranks of |log rho_sim / rho_theory|, at every checkpoint. Seed spread of the
#: quick size, measured on seeds 1-3 (not the judged seed 0): 0.109, 0.091, 0.103; 0.15 is
#: 1.4 times the largest, and a third below the log(1.25) = 0.22 a 25 % scale error puts at
#: every rank.
SPECTRUM_TOL = 0.15
SPECTRUM_REVISED = ("issue 40: 0.25 -> 0.15, after the quick (0.084) and --full (0.069) runs: "
                    "0.25 let every eigenvalue 1.25 times too large pass (0.223); 0.15 from "
                    "the spread of seeds 1-3 (0.091-0.109)")
#: The k = 1 exponent's transient (Fig. 2(b)): its rise from t = 0 to its peak, simulation
#: over theory. The top pair of a finite-M sample covariance spreads the peak (the disputed
#: every-checkpoint claim); on seeds 1-8 (not the judged seed 0) the rise ratio measured
#: 0.997, 1.037, 1.080, 1.114, 1.090, 1.047, 1.091, 0.958 (mean 1.05, sd 0.05). The band is
#: the mean +- 0.2 (4 sd): a transient 30 % low (0.7 of the rise) falls below it.
PEAK_RISE = (0.85, 1.25)
PEAK_SEEDS = "seeds 1-8: 0.96-1.11, mean 1.05"
#: The peak's time: the checkpoint where the simulated k = 1 exponent peaks, within this many
#: log-spaced checkpoints of the theory's (its resolution: one checkpoint apart is a factor
#: 4/3 in t near the peak at t = 3). Seeds 0-8 all measured 0.
PEAK_CHECKPOINTS = 1
#: |two-point exponent at k = 1: simulation - theory|.
EXPONENT_TOL = 0.15
#: Why the core paper's "closely match" is not expected of the k = 1 exponent at every time:
#: measured on the quick setting (D = 128, seed 0, steps 1-6) before this claim was written.
EXPONENT_DISPUTED = ("the top pair of a sample covariance is spread at finite M: with N = inf "
                     "and GD the k = 1 exponent gap is 0.36-0.40 at t = 1-6 for M = 1024 (0.1 "
                     "with M = inf, 0 for flow); 0.2 at the paper's N = 8192, M = 4096 "
                     "(reason written after a pilot run measured these gaps)")
#: Correlation over the checkpoints of the simulated k = 1 exponent with the theory's: the
#: curve's shape (its rise to ~3.6 and fall to ~1.6), whatever its offset and scale. A pilot
#: run (quick size, seed 1, before this claim was written) measured 0.9994.
SHAPE_MIN = 0.9
SHAPE_NAME = "k = 1 exponent over time: correlation of simulation with theory"
#: Rank correlation of each learned rank's half-learning time with the rank (Sec. 3.1: modes
#: learn "in order from low to high mode index"); the exact theory gives 1, the pilot run
#: (quick size, seed 1, before this claim was written) 0.996.
ORDER_MIN = 0.9
#: Eq. (22): the learned part grows as t^2 while 2 lambda_k theta_k t / gamma0 <= SINH_ARG
#: (sinh(x) = x within 1.5 %) over ranks INIT_KMIN..INIT_KMAX; the exact theory's own slope in
#: those windows is 1.93 (the sinh and u corrections), the pilot run (seed 1) measured 1.96.
#: The band was 2 +- 0.2 until seeds 1-8 (not the judged seed 0) measured 1.92-2.27 (seed 6:
#: 2.269): +- 0.35 is 1.3 times the largest departure; t (1) and t^3 growth stay far out.
GROWTH, GROWTH_TOL, SINH_ARG = 2.0, 0.35, 0.3
GROWTH_REVISED = ("issue 40: 2 +- 0.2 -> 2 +- 0.35, after seed 6 of the quick size measured "
                  "2.269 (seeds 1-8: 1.92-2.27; seed 0 1.98, --full 1.96)")
#: The late k = 1 exponent gap (median, simulation - theory): the finite-M offset of the top
#: pair. Seeds 1-8 (not the judged seed 0) measured 0.075, 0.056, 0.148, 0.146, 0.162,
#: 0.192, 0.144, -0.082; the band was +- EXPONENT_TOL (0.15), which two of them miss: +- 0.25
#: is 1.3 times the largest.
LATE_TOL = 0.25
LATE_REVISED = ("issue 40: +- 0.15 -> +- 0.25, after seeds 5 and 6 of the quick size measured "
                "0.162 and 0.192 (seeds 1-8: -0.08 to 0.19; seed 0 0.137, --full 0.084)")


def late_start(s: PowerLawSetting) -> float:
    """Start of fig2's late window: ``t_learn`` of the last rank of the k = 1 exponent.

    Fixed by the theory before the run: from then on both ranks of the two-point
    slope have learned 90 % of their target, so the exponent has settled.
    """
    return float(theory.t_learn(s, float(LOCAL_RANKS[-1])))


def fig2_claims(spectra: pd.DataFrame, alpha: pd.DataFrame, cfg: Fig2Config) -> list[Claim]:
    """fig2's claims, a pure function of its tables ``fig2.parquet`` and ``fig2_alpha.parquet``.

    ``spectra`` has ``t, k, rho_sim, rho_theory``; ``alpha`` has ``t, source,
    alpha_eff`` with the sources ``simulation-local-k1-2`` and
    ``theory-local-k1-2-checkpoints`` (the same two-point slope of both).
    """
    s = cfg.setting()
    t0 = spectra[spectra.t == spectra.t.min()].sort_values("k")
    rho0 = t0.rho_sim.to_numpy()[None, :]
    init = float(fit_exponents(rho0, INIT_KMIN, INIT_KMAX)[0]) if np.all(
        rho0[0, INIT_KMIN - 1:INIT_KMAX] > 0) else float("nan")
    ok = spectra[spectra.rho_sim > 0]
    err = np.abs(np.log(ok.rho_sim / ok.rho_theory)).groupby(ok.t).median()
    sim = alpha[alpha.source == "simulation-local-k1-2"].sort_values("t")
    th = alpha[alpha.source == "theory-local-k1-2-checkpoints"].sort_values("t")
    diff = sim.alpha_eff.to_numpy() - th.alpha_eff.to_numpy()
    times = sim.t.to_numpy()
    i = int(np.nanargmax(np.abs(diff)))
    late_t = late_start(s)
    late = times >= late_t
    gap = float(np.median(diff[late])) if late.any() else float("nan")
    wide = spectra.pivot(index="t", columns="k", values="rho_sim").sort_index()
    t_grid, rho_grid = wide.index.to_numpy(dtype=float), wide.to_numpy(dtype=float)
    order = learned_ranks(s, wide.columns.to_numpy(dtype=float), float(t_grid[-1])).astype(int)
    rise, shift = peak_reading(sim.alpha_eff.to_numpy(), th.alpha_eff.to_numpy())
    return [
        within(f"t = 0: simulation's exponent over ranks {INIT_KMIN}..{INIT_KMAX} is alpha",
               init, cfg.alpha - INIT_TOL, cfg.alpha + INIT_TOL, source="core Sec. 3.1",
               note="'at initialization rho_k(0) has the same exponent alpha as lambda_k': "
                    "tests the finite network's initial Gram (Wishart at N) and sample "
                    "covariance (M) through the measurement, not the dynamics",
               sanity=True, revised=INIT_SANITY, key="t = 0 exponent"),
        within("every checkpoint: median |log rho_sim/rho_theory|", float(err.max()), 0.0,
               SPECTRUM_TOL, source="core Sec. 3.1, Fig. 2(a)",
               note=f"'the analytical solution closely matches finite-width networks'; worst "
                    f"at t = {float(err.idxmax()):g}, over ranks 1..D with a nonzero "
                    f"eigenvalue; tolerance from the spread of seeds 1-3 (0.091-0.109)",
               revised=SPECTRUM_REVISED),
        within("k = 1 exponent: rise to its peak, simulation / theory", rise, *PEAK_RISE,
               source="core Sec. 3.1, Fig. 2(b)",
               note="(peak - value at t = 0) of the two-point exponent log(rho_1/rho_2)/log 2 "
                    "over the checkpoints, simulation over theory: the transient's height; "
                    f"band from the spread of other seeds ({PEAK_SEEDS}); a curve shuffled in "
                    "time keeps its peak: its partner, the peak's time, does not",
               partner="k = 1 exponent: peak checkpoint, simulation - theory"),
        within("k = 1 exponent: peak checkpoint, simulation - theory", shift,
               -PEAK_CHECKPOINTS, PEAK_CHECKPOINTS, source="core Sec. 3.1, Fig. 2(b)",
               note="index of the checkpoint where the simulated two-point exponent peaks less "
                    "the theory's: the transient's time, to the resolution of the log-spaced "
                    "checkpoints (seeds 0-8: 0)"),
        within("every checkpoint: |simulation - theory| of the k = 1 exponent",
               float(np.abs(diff[i])), 0.0, EXPONENT_TOL, source="core Sec. 3.1, Fig. 2(b)",
               note=f"worst at t = {times[i]:g}; the same two-point slope "
                    f"log(rho_1/rho_2)/log 2 of both", disputed=EXPONENT_DISPUTED),
        within(f"late (t >= t_learn(2) = {late_t:.3g}): simulation - theory, k = 1 exponent",
               gap, -LATE_TOL, LATE_TOL, source="core Sec. 3.1, Fig. 2(b)", revised=LATE_REVISED,
               note="median over the checkpoints of a window fixed by the theory (both ranks "
                    "learned); finite N, M and GD vs flow separate them; both curves are flat "
                    "there, so a wrong table at that level passes: the shape claim is its "
                    "partner", partner=SHAPE_NAME, key="late k = 1 exponent"),
        within("modes learn from low to high k (rank correlation)",
               learning_order(t_grid, rho_grid[:, order - 1], order) if order.size >= 3
               else float("nan"), ORDER_MIN, 1.0, source="core Sec. 3.1",
               note="'the modes acquire the teacher-derived component in order from low to "
                    "high mode index': rank correlation of each rank's half-learning time "
                    "(its change reaches half its final change) with the rank, over the ranks "
                    f"the theory has learned by t_end / 10 ({order.size}); {ORDER_MIN:g} fixed "
                    "from a pilot run (quick size, seed 1: 0.996)"),
        within(f"Eq. (22): early learned part grows as t^2 (ranks {INIT_KMIN}..{INIT_KMAX})",
               early_growth_exponent(s, t_grid, rho_grid, range(INIT_KMIN, INIT_KMAX + 1)),
               GROWTH - GROWTH_TOL, GROWTH + GROWTH_TOL, source="core Eqs. (21)-(22)",
               revised=GROWTH_REVISED,
               note=f"pooled log-log slope of rho_k(t) - rho_k(0) against t, each rank while "
                    f"2 lambda_k theta_k t / gamma0 <= {SINH_ARG:g} (sinh linear, Eq. 21); the "
                    f"exact theory's own slope there is 1.93; tolerance from seeds 1-8 "
                    f"(1.92-2.27); the sinh growth beyond is checked by fig3 "
                    "on the theory's deep panel (here l_k is not << 1 where sinh x != x)"),
        within(SHAPE_NAME, curve_correlation(sim.alpha_eff.to_numpy(), th.alpha_eff.to_numpy()),
               SHAPE_MIN, 1.0, source="core Sec. 3.1, Fig. 2(b)",
               note="Pearson correlation over the checkpoints of the two-point exponent "
                    "log(rho_1/rho_2)/log 2, simulation against theory: the exponent 'can "
                    "change during training' and the simulation changes as the theory does; "
                    f"{SHAPE_MIN:g} fixed from a pilot run (quick size, seed 1: 0.9994)"),
    ]


def peak_reading(sim: np.ndarray, th: np.ndarray) -> tuple[float, float]:
    """``(rise, shift)`` of the k = 1 exponent's transient, checkpoints in time order: the
    simulation's rise from its first value to its peak over the theory's, and the index of
    the simulation's peak less the theory's. NaN where a curve is not finite or the theory
    does not rise (a wrong table)."""
    sim, th = np.asarray(sim, dtype=float), np.asarray(th, dtype=float)
    if sim.size < 2 or sim.size != th.size or not (np.all(np.isfinite(sim))
                                                    and np.all(np.isfinite(th))):
        return float("nan"), float("nan")
    th_rise = float(th.max() - th[0])
    if not th_rise > 0:
        return float("nan"), float("nan")
    return (float(sim.max() - sim[0]) / th_rise,
            float(int(np.argmax(sim)) - int(np.argmax(th))))


def learned_ranks(s: PowerLawSetting, ranks: np.ndarray, t_end: float) -> np.ndarray:
    """The ranks the theory has learned (90 %) a decade before ``t_end``."""
    return ranks[theory.t_learn(s, ranks) <= t_end / 10.0]


def early_growth_exponent(s: PowerLawSetting, t: np.ndarray, rho: np.ndarray,
                          ranks: range) -> float:
    """Pooled log-log slope of ``rho_k(t) - rho_k(0)`` against ``t`` over ``ranks`` (columns
    ``k - 1`` of ``rho``), each rank in its early window ``2 lambda_k theta_k t / gamma0 <=``
    :data:`SINH_ARG`, ``t > 0`` (Eq. 22: ``t^2``); NaN where no rank has three positive
    points there (a wrong table)."""
    xs, ys = [], []
    for k in ranks:
        lam, th = s.lambda0 * k ** -s.alpha, s.theta0 * k ** (-s.beta / 2)
        inc = rho[:, k - 1] - rho[0, k - 1]
        m = (t > 0) & (t <= SINH_ARG * s.gamma0 / (2 * lam * th)) & (inc > 0)
        if m.sum() >= 3:
            x, y = np.log(t[m]), np.log(inc[m])
            xs.append(x - x.mean())
            ys.append(y - y.mean())
    if not xs:
        return float("nan")
    x, y = np.concatenate(xs), np.concatenate(ys)
    return float(x @ y / (x @ x))


def curve_correlation(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson correlation of two curves sampled at the same times; NaN where one is flat or
    not finite (a wrong table)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size < 3 or a.size != b.size or not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        return float("nan")
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return float(np.corrcoef(a, b)[0, 1])


def fig2_claims_of(cfg: Fig2Config, folder: Path) -> list[Claim]:
    """fig2's claims on the tables of a run's folder (the registry's ``claims``)."""
    return fig2_claims(pd.read_parquet(folder / "fig2.parquet"),
                       pd.read_parquet(folder / "fig2_alpha.parquet"), cfg)


#: The error slope against N or M: fluctuations of a Wishart Gram or of a sample covariance
#: fall as size^(-1/2), the asymptote; at the sizes run the upper half is still steeper: on
#: seeds 1-3 (not the judged seed 0) N measured -0.583, -0.558, -0.621 and M -0.711, -0.569,
#: -0.653. The band runs from the asymptote less 0.05 (-0.45: an error floor the size of the
#: largest size's error flattens the N slope to -0.37..-0.44 on seeds 0-3) to the seeds'
#: steepest less 0.09 (-0.8).
SIZE_SLOPE_BAND = (-0.8, -0.45)
SIZE_BAND_REVISED = ("issue 40: in [-0.7, -0.3] (-0.5 +- 0.2) -> in [-0.8, -0.45], after the "
                     "quick (-0.60, -0.64) and --full (-0.63, -0.60) runs: seed 1's M slope "
                     "(-0.711) fell outside the old band, and an error floor the size of the "
                     "largest size's error (slope -0.41) passed it")


def upper_half_slope(df: pd.DataFrame, axis: str) -> float:
    """Log-log slope of the seed-mean error against the upper half of the sizes of ``axis``.

    The curve steepens at small sizes (size ~ D); the upper half shows the asymptote.
    """
    mean = df[df.axis == axis].groupby("size").median_abs_log.mean()
    sizes = mean.index.to_numpy(dtype=float)
    half = len(sizes) // 2
    n = len(sizes) - half if len(sizes) - half >= 2 else len(sizes)
    return loglog_slope(sizes[-n:], mean.to_numpy()[-n:])


def falling_upper_half(df: pd.DataFrame, axis: str) -> bool:
    """Whether the seed-mean error of ``axis`` falls at every step of the upper half of the
    sizes (the sizes :func:`upper_half_slope` fits)."""
    mean = df[df.axis == axis].groupby("size").median_abs_log.mean().to_numpy(dtype=float)
    half = len(mean) // 2
    n = len(mean) - half if len(mean) - half >= 2 else len(mean)
    return bool(np.all(np.diff(mean[-n:]) < 0))


#: finite-size's slope claims were a slope alone, which a table shuffled across sizes passes
#: in 2 of 5 shuffles at the quick size (issue 30's mutation test).
SLOPE_REVISED = ("9aa3bc7 (issue 30): the upper-half slope -> that slope where the seed-mean "
                 "error falls at every step of the upper half (NaN otherwise): a table "
                 "shuffled across sizes kept a slope in range 2 times in 5; changed after the "
                 "mutation test, having seen the quick run (falling there)")


def finite_size_slope_claims(df: pd.DataFrame, cfg: FiniteSizeConfig) -> list[Claim]:
    """finite-size's claims, a pure function of its table ``finite-size.parquet``
    (``axis, size, seed, median_abs_log``)."""
    return [within(f"error slope against {axis}, upper half of the sizes",
                   upper_half_slope(df, axis) if falling_upper_half(df, axis) else float("nan"),
                   *SIZE_SLOPE_BAND, source="own",
                   note="fluctuations of a Wishart Gram (N) or sample covariance (M): "
                        "size^(-1/2) asymptotically, steeper at the sizes run (seeds 1-3: -0.56 "
                        "to -0.71), the seed-mean error falling at every step of the upper "
                        "half of the sizes (NaN where it does not); the core paper states no "
                        "rate", revised=f"{SLOPE_REVISED}; {SIZE_BAND_REVISED}")
            for axis in ("N", "M")]


def finite_size_claims_of(cfg: FiniteSizeConfig, folder: Path) -> list[Claim]:
    """finite-size's claims on the table of a run's folder (the registry's ``claims``)."""
    return finite_size_slope_claims(pd.read_parquet(folder / "finite-size.parquet"), cfg)
