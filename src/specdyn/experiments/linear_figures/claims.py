"""The linear figures' claims: pure functions of a table and its config.

Every tolerance, dispute and revision record is fixed here before the run (the ranks of
fig2's ``t = 0`` exponent fit, ``INIT_KMIN..INIT_KMAX``, bound the config's sizes, in
config); :func:`fig2_claims` checks the tables ``fig2.parquet`` and
``fig2_alpha.parquet``, :func:`finite_size_slope_claims` ``finite-size.parquet`` (the
``*_claims_of`` functions read those from a run's folder, for the registry). The windows
and readings they use are in :mod:`specdyn.experiments.linear_figures.readings`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from specdyn.experiments.linear_figures.config import (
    INIT_KMAX,
    INIT_KMIN,
    Fig2Config,
    FiniteSizeConfig,
)
from specdyn.experiments.linear_figures.readings import (
    SINH_ARG,
    SPREAD_T,
    curve_correlation,
    early_growth_exponent,
    falling_upper_half,
    finite_size_level,
    gd_exponent,
    initial_deviation,
    initial_deviation_level,
    late_start,
    learned_ranks,
    oracle_deviation,
    oracle_ranks,
    peak_reading,
    spread_end,
    spread_prediction,
    transient_deviation,
    upper_half_slope,
    upper_sizes,
)
from specdyn.experiments.paper_setting import PaperSettingConfig
from specdyn.experiments.theory_figures.oracle import app_g_setting
from specdyn.measure.exponents import fit_exponents
from specdyn.runs.claims import OWN, Claim, learning_order, sized, within

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
#: |two-point exponent at k = 1: simulation - discrete-time theory| at every checkpoint.
EXPONENT_TOL = 0.15
#: The claim was the simulation against the flow's Eq. (12), disputed ("the top pair of a
#: sample covariance is spread at finite M"). Measured since, at N = M = inf: the GD step
#: alone (theory.discrete against Eq. 12) moves the k = 1 exponent by 0.104 at t = 1 with
#: dt = 1 (0.037 at dt = 0.5, 0.015 at 0.25: first order in dt); the rest, the simulation
#: against the discrete-time theory (GD, modes decoupled at N = M = inf), is finite size:
#: max over t <= 4 t_learn(2), seeds 1-8, 0.240 / 0.108 / 0.036 at M = 1024 / 4096 / 16384
#: (N = inf) and 0.067 / 0.034 / 0.015 at N = 2048 / 8192 / 32768 (M = inf): a convergence
#: study that runs toward the claim, so no dispute; expected at the paper's N = 8192, M =
#: 4096 (--full), not at the quick M = 1024.
EXPONENT_REVISED = ("k = 1 exponent against Eq. (12) (gradient flow), disputed -> against the "
                    "discrete-time theory (GD at N = M = inf, the same dt), expected at --full "
                    "(the paper's N, M), our own: the GD step is 0.104 of the flow comparison "
                    "at t = 1 (dt = 1), falling as dt; the rest falls with M (0.240 / 0.108 / "
                    "0.036 at M = 1024 / 4096 / 16384, N = inf, seeds 1-8) and N (0.067 / "
                    "0.034 / 0.015 at N = 2048 / 8192 / 32768, M = inf)")
#: The judged run's transient deviation from Eq. (12) (:func:`transient_deviation`: the RMS
#: of log rho_sim / rho_theory over every rank and checkpoint t <= SPREAD_T t_learn(2)) over
#: the mean of the spread seeds' must lie within this factor. Seeds 1-24 of the quick size
#: (not the judged seed 0), measured before this claim: mean 0.194, sd 2.3 %, min / max 0.96
#: / 1.04 of the mean (the sample covariance's distortion of the tail sets most of it, the
#: same in every seed); a seed over the mean of 6 others has an sd of 2.5 %: 1.12 is 4.5 of
#: those. Deviations 1.2 times their size fail, and so does a simulation equal to its
#: theory (0).
SPREAD_FACTOR = 1.12
SPREAD_REVISED = ("written with the median over ranks, mean over checkpoints (seeds 1-16: sd "
                  "10 %, factor 1.4): the quick run (seed 0: 0.0617 against 0.0713 predicted, "
                  "held) let deviations 1.5 times their size pass (0.093); -> the RMS over every "
                  "rank and checkpoint (seeds 1-24: sd 2.3 %, factor 1.12), fixed before its "
                  "value on seed 0 was seen")
#: Independent initialisations (numpy, not the engine) whose deviation from Eq. (12) at t = 0
#: sets the size the run's must have (:func:`~.readings.initial_deviation_draws`), and the
#: factor within which the run's must lie. 64 draws at the quick size (N = 2048, M = 1024,
#: D = 128) measured a mean of 0.194 and an sd of 2.5 % (min / max 0.95 / 1.07 of the mean;
#: 0.7 % at --full); the engine's own t = 0 on seeds 1-3 (not the judged 0): 0.195, 0.196,
#: 0.192. 1.12 is 4.5 sd: deviations 1.2 times or 0.8 times their size fail, and so do a
#: simulation equal to its theory (0) and one whose N or M is lost on the way (the spread
#: seeds, run by the same code, would carry such a mistake into the transient claim's own
#: prediction; these draws share none of it).
INIT_DRAWS, INIT_FACTOR = 32, 1.12
INIT_DEV_REVISED = ("added after a referee's wrong models (issue 47: deviations 1.5 or 0.6 "
                    "times their size, M / 2 and N = M = inf everywhere, spread seeds "
                    "included) passed the spread-seed claim; seed 0's value (0.1915) was seen "
                    "in that test before the factor was fixed from the draws and seeds 1-3")
#: |log rho_theory / rho_ODE| of the theory column against the independent ODE integration
#: (Eqs. 144-145, LSODA at rtol 1e-12): the closed form is exact, so only round-off and the
#: solver's tolerance separate them.
ORACLE_TOL = 1e-7

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
#: (readings) over ranks INIT_KMIN..INIT_KMAX; the exact theory's own slope in those
#: windows is 1.93 (the sinh and u corrections), the pilot run (seed 1) measured 1.96.
#: The band was 2 +- 0.2 until seeds 1-8 (not the judged seed 0) measured 1.92-2.27 (seed 6:
#: 2.269): +- 0.35 is 1.3 times the largest departure; t (1) and t^3 growth stay far out.
GROWTH, GROWTH_TOL = 2.0, 0.35
GROWTH_REVISED = ("issue 40: 2 +- 0.2 -> 2 +- 0.35, after seed 6 of the quick size measured "
                  "2.269 (seeds 1-8: 1.92-2.27; seed 0 1.98, --full 1.96)")
#: The late k = 1 exponent gap (median, simulation - theory): the finite-M offset of the top
#: pair. Seeds 1-8 (not the judged seed 0) measured 0.075, 0.056, 0.148, 0.146, 0.162,
#: 0.192, 0.144, -0.082; the band was +- EXPONENT_TOL (0.15), which two of them miss: +- 0.25
#: is 1.3 times the largest.
LATE_TOL = 0.25
LATE_REVISED = ("issue 40: +- 0.15 -> +- 0.25, after seeds 5 and 6 of the quick size measured "
                "0.162 and 0.192 (seeds 1-8: -0.08 to 0.19; seed 0 0.137, --full 0.084)")


def oracle_claim(spectra: pd.DataFrame, cfg: PaperSettingConfig, *, what: str,
                 partner: str) -> Claim:
    """The theory column of a table (``t, k, rho_theory``) against the ODE oracle at
    :func:`oracle_ranks`, from App. G's inputs written out (:func:`~specdyn.experiments.
    theory_figures.oracle.app_g_setting`, not ``cfg.setting()``): a convention error inside
    Eq. (12), or in the setting that the run, the theory and the claims all build through
    ``PowerLawSetting.paper``, fails here."""
    ranks = oracle_ranks(cfg.D)
    s = app_g_setting(cfg.alpha, cfg.beta, cfg.sigma_w, cfg.sigma_a, cfg.gamma0_ratio)
    return within(f"theory column = ODE integration of Eqs. (144)-(145), ranks {ranks}",
                  oracle_deviation(spectra, s, ranks), 0.0, ORACLE_TOL,
                  source="core Eqs. (12), (144)-(145)", aspect="oracle",
                  note=f"max |log rho_theory / rho_ODE| at every checkpoint: {what}, against "
                       "theory.oracles.gram_ode (LSODA, rtol 1e-12) from App. G's inputs "
                       "written out (lambda0 = 1, mu0 = 1/zeta(alpha + beta), gamma0 = ratio "
                       "S / sqrt(mu0)), so a convention error inside it, or in the setting the "
                       "run and the theory share, fails here", key="theory column: ODE oracle",
                  partner=partner)


def fig2_claims(spectra: pd.DataFrame, alpha: pd.DataFrame, cfg: Fig2Config,
                spread: pd.DataFrame | None = None) -> list[Claim]:
    """fig2's claims, a pure function of its tables ``fig2.parquet``, ``fig2_alpha.parquet``
    and ``fig2_spread.parquet``.

    ``spectra`` has ``step, t, k, rho_sim, rho_theory``; ``alpha`` has ``t, source,
    alpha_eff`` with the sources ``simulation-local-k1-2``,
    ``theory-local-k1-2-checkpoints`` (the same two-point slope of both) and
    ``engine-infinite-k1-2`` (the Gram engine at ``N = M = inf``, modes 1-2, through the
    transient); ``spread`` has ``seed, t, k, rho_sim`` of the spread seeds.
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
    late_t = late_start(s)
    late = times >= late_t
    gap = float(np.median(diff[late])) if late.any() else float("nan")
    steps = np.round(times / cfg.dt).astype(np.int64)
    a_gd = gd_exponent(s, steps, cfg.dt)
    gd_diff = np.abs(sim.alpha_eff.to_numpy() - a_gd)
    i = int(np.nanargmax(gd_diff)) if np.isfinite(gd_diff).any() else 0
    step_part = float(np.max(np.abs(a_gd - th.alpha_eff.to_numpy())))
    late_step = float(np.median((a_gd - th.alpha_eff.to_numpy())[late])) if late.any() \
        else float("nan")
    eng = alpha[alpha.source == "engine-infinite-k1-2"].sort_values("t")
    eng_dev = float(np.max(np.abs(eng.alpha_eff.to_numpy() - gd_exponent(
        s, np.round(eng.t.to_numpy() / cfg.dt).astype(np.int64), cfg.dt)))) if len(eng) \
        else float("nan")
    wide = spectra.pivot(index="t", columns="k", values="rho_sim").sort_index()
    t_grid, rho_grid = wide.index.to_numpy(dtype=float), wide.to_numpy(dtype=float)
    order = learned_ranks(s, wide.columns.to_numpy(dtype=float), float(t_grid[-1])).astype(int)
    rise, shift = peak_reading(sim.alpha_eff.to_numpy(), th.alpha_eff.to_numpy())
    t_end = spread_end(s)
    theory_at = spectra.set_index(["t", "k"]).rho_theory
    measured_dev = transient_deviation(spectra, theory_at, t_end)
    predicted_dev, each = (spread_prediction(spectra, spread, t_end) if spread is not None
                           else (float("nan"), []))
    init_mean, init_sd = initial_deviation_level(s, cfg.N, cfg.M, INIT_DRAWS, cfg.seed)
    return [
        within(f"t = 0: simulation's exponent over ranks {INIT_KMIN}..{INIT_KMAX} is alpha",
               init, cfg.alpha - INIT_TOL, cfg.alpha + INIT_TOL, source="core Sec. 3.1",
               note="'at initialization rho_k(0) has the same exponent alpha as lambda_k': "
                    "tests the finite network's initial Gram (Wishart at N) and sample "
                    "covariance (M) through the measurement, not the dynamics",
               sanity=True, revised=INIT_SANITY, revised_how="restated",
               key="t = 0 exponent"),
        within("every checkpoint: median |log rho_sim/rho_theory|", float(err.max()), 0.0,
               SPECTRUM_TOL, source="core Sec. 3.1, Fig. 2(a)",
               note=f"'the analytical solution closely matches finite-width networks'; worst "
                    f"at t = {float(err.idxmax()):g}, over ranks 1..D with a nonzero "
                    f"eigenvalue; tolerance from the spread of seeds 1-3 (0.091-0.109); its "
                    f"two-sided partner: the transient deviation has the spread seeds' size",
               revised=SPECTRUM_REVISED, revised_how="tighter"),
        sized(f"t <= {t_end:.3g}: deviation from the theory has the spread seeds' size",
              measured_dev, predicted_dev, SPREAD_FACTOR, source="core Sec. 3.1, Fig. 2(a)",
              predicted_by=f"the same statistic on {len(each)} other seeds through the "
                           f"transient: {', '.join(f'{x:.3f}' for x in each)}",
              note=f"RMS of log rho_sim/rho_theory over every rank and checkpoint t <= "
                   f"{SPREAD_T:g} t_learn(2): finite N = {cfg.N}, M = {cfg.M} (the sample "
                   f"covariance's tail most) and the GD step set its size, so a simulation "
                   f"equal to its theory (0) fails, and so do deviations 1.2 times their "
                   f"size; factor from seeds 1-24 (sd 2.5 % of a seed over 6 others' mean)",
              revised=SPREAD_REVISED, revised_how="restated",
              key="transient deviation: spread seeds' size"),
        sized("t = 0: deviation from the theory has the finite-size size",
              initial_deviation(spectra, s, "rho_sim"), init_mean, INIT_FACTOR,
              source="core Sec. 3.1, Fig. 2(a)",
              predicted_by=f"the mean over {INIT_DRAWS} independent numpy initialisations at "
                           f"N = {cfg.N}, M = {cfg.M} (sd {init_sd:.3g})",
              note="RMS over ranks of log rho_sim(0) / (sigma_w^2 lambda_k): the network "
                   "starts off Eq. (12) by the Wishart spread of its Gram and of the sample "
                   "covariance; drawn here with numpy, so a mistake in the code the run and "
                   "its spread seeds share (a size lost, fluctuations scaled) fails, as does "
                   "a simulation equal to its theory; factor from 64 draws (sd 2.5 %) and "
                   "seeds 1-3 (0.192-0.196)",
              revised=INIT_DEV_REVISED, revised_how="tighter",
              key="t = 0 deviation: finite-size size"),
        within("k = 1 exponent: rise to its peak, simulation / theory", rise, *PEAK_RISE,
               source="core Sec. 3.1, Fig. 2(b)",
               note="(peak - value at t = 0) of the two-point exponent log(rho_1/rho_2)/log 2 "
                    "over the checkpoints, simulation over theory: the transient's height; "
                    f"band from the spread of other seeds ({PEAK_SEEDS}); a curve shuffled in "
                    "time keeps its peak: its partner, the peak's time, does not",
               partner="k = 1 exponent: peak checkpoint, simulation - theory",
               aspect="prefactor"),
        within("k = 1 exponent: peak checkpoint, simulation - theory", shift,
               -PEAK_CHECKPOINTS, PEAK_CHECKPOINTS, source="core Sec. 3.1, Fig. 2(b)",
               note="index of the checkpoint where the simulated two-point exponent peaks less "
                    "the theory's: the transient's time, to the resolution of the log-spaced "
                    "checkpoints (seeds 0-8: 0); a run at half or twice the speed peaks "
                    "two checkpoints away", aspect="clock"),
        within("every checkpoint: |simulation - discrete-time theory| of the k = 1 exponent",
               float(gd_diff[i]), 0.0, EXPONENT_TOL, source=OWN, full_only=True,
               note=f"worst at t = {times[i]:g}; the same two-point slope "
                    f"log(rho_1/rho_2)/log 2 of both; the discrete-time theory is GD with "
                    f"dt = {cfg.dt:g} at N = M = inf, so finite size alone separates them "
                    f"(the GD step alone moves Eq. (12) by {step_part:.3f} here); expected at "
                    f"the paper's N = 8192, M = 4096 (finite-size part falls with M: 0.240 / "
                    f"0.108 / 0.036 at M = 1024 / 4096 / 16384); our reading of 'closely "
                    f"match', said of the spectra (Fig. 2(a)), for the k = 1 exponent",
               revised=EXPONENT_REVISED, revised_how="restated"),
        within("discrete-time theory = the Gram engine at N = M = inf (k = 1 exponent)",
               eng_dev, 0.0, 1e-9, source=OWN, aspect="oracle",
               note="theory.discrete's map (which the previous claim and panel (b) read) "
                    "against the Gram engine's GD on modes 1-2 at N = M = inf through the "
                    "transient: two implementations of the same map, equal to round-off",
               partner="k = 1 exponent: peak checkpoint, simulation - theory"),
        oracle_claim(spectra, cfg, what="the closed form the figure draws and every "
                                               "comparison reads",
                     partner="every checkpoint: median |log rho_sim/rho_theory|"),
        within(f"late (t >= t_learn(2) = {late_t:.3g}): simulation - theory, k = 1 exponent",
               gap, -LATE_TOL, LATE_TOL, source="core Sec. 3.1, Fig. 2(b)", revised=LATE_REVISED,
               revised_how="looser",
               note="median over the checkpoints of a window fixed by the theory (both ranks "
                    "learned); finite N, M and GD vs flow separate them (the GD step's part: "
                    f"{late_step:.3f}); "
                    "both curves are flat there, so a wrong table at that level passes: the "
                    "shape claim is its partner", partner=SHAPE_NAME, key="late k = 1 exponent"),
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
               revised=GROWTH_REVISED, revised_how="looser",
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


def fig2_claims_of(cfg: Fig2Config, folder: Path) -> list[Claim]:
    """fig2's claims on the tables of a run's folder (the registry's ``claims``)."""
    spread = folder / "fig2_spread.parquet"
    return fig2_claims(pd.read_parquet(folder / "fig2.parquet"),
                       pd.read_parquet(folder / "fig2_alpha.parquet"), cfg,
                       pd.read_parquet(spread) if spread.exists() else None)


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


#: finite-size's slope claims were a slope alone, which a table shuffled across sizes passes
#: in 2 of 5 shuffles at the quick size (the mutation test).
SLOPE_REVISED = ("9aa3bc7 (issue 30): the upper-half slope -> that slope where the seed-mean "
                 "error falls at every step of the upper half (NaN otherwise): a table "
                 "shuffled across sizes kept a slope in range 2 times in 5; changed after the "
                 "mutation test, having seen the quick run (falling there)")


#: The error level against the finite-size theory: over the cells (size in the upper half,
#: seed, checkpoint, rank) where the theory is valid, the RMS of log rho_sim / rho_theory in
#: units of each cell's predicted RMS sqrt(shift^2 + std^2) (1 where the theory has the
#: errors' size), within this factor of 1 per axis. History: the RMS of the log errors over
#: the theory's RMS, with 3 seeds a run, read N 0.917-1.017 and M 0.903-1.088 on base seeds
#: 1-3 (log-sd 0.07), so 1.25 let errors 1.2-1.25 times their size pass; at 8 seeds
#: (base seeds 1-12) N 0.941-1.082 (log-sd 0.040), M 0.883-1.139 (log-sd 0.063: the sample
#: covariance's top modes, whose errors are largest and heaviest-tailed, dominate an RMS
#: of raw log errors), so N went to 1.15 and M stayed at 1.25. Now the standardized RMS
#: (each cell weighs as any other) at 12 seeds a run, base seeds 1-12: N 0.965-1.041
#: (log-sd 0.025), M 0.918-1.061 (log-sd 0.039; 0.047 at 8 seeds): N within 1.10 (3.8
#: log-sd), M within 1.15 (3.6 log-sd). Errors 1.25 times their size fail on all 12 base
#: seeds on both axes; 1.2 times on all 12 for N and 11 of 12 for M (not seed 4's 0.918).
#: A simulation equal to its theory (0) fails; errors 1.5 times their size, or every run
#: recorded at twice its size (the level sqrt 2 too high), fail.
LEVEL_FACTOR = {"N": 1.10, "M": 1.15}
LEVEL_REVISED = ("issue 47: the finite-N level within 1.25 -> 1.15 with 8 seeds a run for "
                 "3, after a referee's wrong model (finite-N errors 1.2-1.25 times their "
                 "size) passed; the quick run's 0.847 (3 seeds) had been seen; then both "
                 "axes: the RMS of the raw log errors over the theory's RMS -> the RMS of "
                 "each cell's error in units of its own predicted size, 12 seeds a run, N "
                 "within 1.10, M within 1.15 (was 1.25), after finite-M errors 1.2-1.25 "
                 "times their size still passed; seed 0's 8-seed levels (N 0.957) had been "
                 "seen")


def finite_size_level_claims(cells: pd.DataFrame, cfg: FiniteSizeConfig) -> list[Claim]:
    """The error levels against the finite-size theory and the theory column against its
    ODE oracle, pure functions of ``finite-size_cells.parquet``."""
    s = cfg.setting()
    sizes = upper_sizes(np.array(cfg.sizes))
    claims = []
    for axis, other in (("N", "M"), ("M", "N")):
        lv = finite_size_level(cells, s, axis, sizes)
        claims.append(sized(
            f"error level against the finite-size theory, finite {axis}", lv.standardized,
            1.0, LEVEL_FACTOR[axis], source=OWN, aspect="prefactor", revised=LEVEL_REVISED,
            revised_how="tighter",
            predicted_by=f"theory.finite_size_moments at each run's {axis} ({other} = inf): "
                         "each cell's log error in units of its predicted RMS sqrt(shift^2 + "
                         "std^2) has RMS 1",
            note=f"RMS over the {lv.cells} cells where the finite-size theory is valid, "
                 f"{axis} = {', '.join(str(int(z)) for z in sizes)} (the slope's sizes), "
                 f"every seed, checkpoint and rank, of log rho_sim / rho_theory over the "
                 f"theory's RMS at that cell: the level of the errors whose slope the claim "
                 f"above reads (unstandardized: RMS {lv.measured:.3g} against the theory's "
                 f"{lv.predicted:.3g}); factor from base seeds 1-12 at 12 seeds a run "
                 f"({'0.965-1.041' if axis == 'N' else '0.918-1.061'})",
            key=f"error level, finite {axis}"))
    big = cells[cells["size"] == cells["size"].max()]
    first = big[(big.axis == "N") & (big.seed == big.seed.min())]
    claims.append(oracle_claim(first, cfg, what="the closed form every error is "
                                                     "measured against, at one run's checkpoints",
                               partner="error level against the finite-size theory, finite N"))
    return claims


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
                        "rate; its level: the next claims", revised=f"{SLOPE_REVISED}; "
                   f"{SIZE_BAND_REVISED}", revised_how="restated")
            for axis in ("N", "M")]


def finite_size_claims_of(cfg: FiniteSizeConfig, folder: Path) -> list[Claim]:
    """finite-size's claims on the tables of a run's folder (the registry's ``claims``)."""
    claims = finite_size_slope_claims(pd.read_parquet(folder / "finite-size.parquet"), cfg)
    cells = folder / "finite-size_cells.parquet"
    return claims + (finite_size_level_claims(pd.read_parquet(cells), cfg) if cells.exists()
                     else [])
