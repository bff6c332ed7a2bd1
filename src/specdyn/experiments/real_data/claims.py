"""real-data's claims: pure functions of its tables and config, with their tolerances.

Every tolerance is fixed here before the run, and says where it comes from: a derived
bound (a critical value, half the gap the claim must resolve, one checkpoint, the Wishart
level of a width), or the spread of the measured value over seeds 1-5 of the quick config
(never the judged seed 0; ``benchmarks/real_data_spread.py`` reruns them and prints the
numbers quoted here). The seed rule: for a value expected near 0, tolerance = the largest
magnitude over seeds 1-5 plus three times their standard deviation, rounded up to two
significant digits; for a finding (a ratio, a size), the band is the seeds' mean plus or
minus the largest distance from it plus three standard deviations, rounded outwards
(``rule`` and ``band`` of ``benchmarks/real_data_spread.py``). Each note says by how much
the effect the claim tests exceeds its tolerance. This module: the data, the linear
network, the end regions and the tasks where the model applies; the ReLU student and the
SGD networks: :mod:`~specdyn.experiments.real_data.network_claims`; the readings both
judge: :mod:`~specdyn.experiments.real_data.readings`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from specdyn.experiments.real_data.config import VALIDATION_TASKS, RealDataConfig
from specdyn.experiments.real_data.full_bands import at_size
from specdyn.experiments.real_data.readings import (
    clock_error,
    end_after_plateau,
    end_tolerance,
    exponents,
    fit,
    learning_times,
    net_error,
    peak,
    rms_level,
    series,
    sig3,
    transient,
    wide,
    wishart_level,
)
from specdyn.runs.claims import OWN, Claim, rank_correlation, sized, within

#: The claim that the digits' miss is the misalignment (the partner of the rank claims).
DIGITS_SPLIT = "digits, feature learning: the aligned theory's miss is the misalignment effect"
#: The run's table files, by short name.
TABLES = {"dynamics": "real-data.parquet", "modes": "real-data_modes.parquet",
          "fits": "real-data_fits.parquet", "regions": "real-data_regions.parquet",
          "tasks": "real-data_tasks.parquet", "widths": "real-data_widths.parquet"}

#: Tasks with an output overlap at most this are nearly aligned; their aligned theory's error
#: against the exact reference is at most SMALL_OVERLAP_TOL (max over those tasks at seeds
#: 1-5: 0.0594 0.0519 0.0564 0.0576 0.0632).
SMALL_OVERLAP, SMALL_OVERLAP_TOL = 0.1, 0.076
#: One-sided 5 % critical value of Spearman's rho for n = 7 (exact permutation
#: distribution; Zar 1972, table B.20): a measure that orders the seven tasks' errors at
#: least this well does so at p < 0.05.
SPEARMAN_CRIT_7 = 0.714
#: Linear network (Gram engine, N = 1024) against the exact reference: max over
#: checkpoints of the median over modes 1..kmax of |log rho_sim / rho_reference| (finite
#: width and GD only). Seeds 1-5: patches FL 0.0298 0.0253 0.0356 0.0380 0.0387; blur IIIa
#: 0.0898 0.0926 0.0892 0.0799 0.0840; IIIb 0.0381 0.0424 0.0333 0.0366 0.0367; digits FL
#: 0.0299 0.0250 0.0402 0.0385 0.0323; denoise FL: see DENOISE_REF_TOL.
NET_REF_TOL = {"patches/feature-learning": 0.056, "blur/IIIa": 0.11, "blur/IIIb": 0.053,
               "digits/feature-learning": 0.059}
#: The same for the tasks where the model applies (every seed of a task shares its
#: tolerance; text-denoise's from the quick config with its network trained, ``--model-
#: networks``). Seeds 1-5: denoise 0.0284 0.0244 0.0360 0.0343 0.0345; text-denoise 0.0313
#: 0.0326 0.0359 0.0327 0.0410.
MODEL_REF_TOL = {"denoise": 0.051, "text-denoise": 0.053}
#: The lower end of every network-vs-reference band: half the Wishart level of the width
#: (:func:`~specdyn.experiments.real_data.readings.wishart_level`; derived): the distance
#: includes the network's initial fluctuation, so a network equal to its reference fails.
LEVEL_SHARE = 0.5
#: The linear networks' distance from the exact reference at t = 0 (rms over all modes of
#: log rho_sim / rho_reference, over sqrt(2/N): each diagonal entry of W^T W / N is sigma_w^2
#: chi2_N / N, whose log has sd sqrt(2/N)), geometric mean over the trained runs, predicted
#: 1 (derived), within this factor: the ReLU zero-output level's (ZERO_LEVEL_FACTOR). An rms
#: over D = 100 modes resolves its level to about 1/sqrt(2 D) = 7 %; seeds 1-3, measured
#: after the claim was written: 1.079, 0.907, 0.994 (the runs share their W0, so a seed's
#: runs agree to 2 %). A network at twice its width (0.71 of these: 0.64-0.76) fails, as
#: does one equal to its reference (0); one at half its width (1.28-1.53) mostly fails.
START_LEVEL_FACTOR = 1.3
START_LEVEL_REVISED = ("added after a referee's wrong model (issue 47: the linear networks "
                       "at width 2N, deviations 0.71 times their size) passed the "
                       "network-vs-reference bands; seed 0's value (0.913) was seen in that "
                       "test")
#: |a_net(0) - alpha|, max over the trained tasks: Wishart noise of W^T W at N = 1024.
#: Seeds 1-5: 0.0274 0.0301 0.0103 0.0165 0.0147.
START_TOL = 0.056
#: |max_t a_net - max_t a_reference| on the blurred target, max over IIIa and IIIb.
#: Seeds 1-5: 0.0310 0.0256 0.0274 0.0295 0.0201.
PEAK_TOL = 0.044
#: |index of the network's peak - index of the reference's|: one checkpoint (derived: the
#: checkpoints are the time resolution).
TIMING_TOL = 1
#: Lazy (blurred target): max_t |a(t) - a(0)|. Seeds 1-5: 0.0147 0.0142 0.0172 0.0146 0.0143.
LAZY_TOL = 0.021
#: digits: |err(network vs theory) - err(reference vs theory)|.
#: Seeds 1-5: -0.0015 -0.0052 -0.0022 -0.0012 -0.0042.
DIGITS_SPLIT_TOL = 0.011
#: patches, feature learning: mean exponent over the theory's peak window minus elsewhere
#: (seeds 1-5: 1.11-1.17; the theory's own value 1.16: the bound is less than half of it;
#: a network that never learns gives 0).
TRANSIENT_MIN = 0.5
#: The estimator's roundoff: |mode_exponents - fit_power_law| on the same values (derived).
ESTIMATOR_TOL = 1e-9
#: Linear network: median over modes 1..kmax of |log t_network(k) / t_reference(k)| (each
#: mode's half-rise time), max over its feature-learning runs. Seeds 1-5: 0.1026 0.1200
#: 0.1107 0.1123 0.1012.
CLOCK_TOL = 0.15
#: The runs the clock claim times (task, regime).
CLOCK_RUNS = (("patches", "feature-learning"), ("blur", "IIIa"), ("blur", "IIIb"),
              ("denoise", "feature-learning"))
#: Linear network where P >= D and the target is nearly aligned (patches and the model
#: tasks, feature learning): max_t |a_spectrum(t) - a_mode(t)|. Seeds 1-5: 0.1076 0.0930
#: 0.1062 0.0864 0.1081.
SPECTRUM_TOL = 0.14
#: digits (P = 10 < D): the representation's end exponent minus the per-mode diagonal's is
#: at least this: an order-one difference (derived: a quarter of the digits' alpha; seeds
#: 1-5: 1.92-1.93).
DIGITS_SPECTRUM_MIN = 0.25


def read_tables(folder: Path) -> dict[str, pd.DataFrame]:
    """The tables a run wrote to ``folder``, by short name."""
    return {k: pd.read_parquet(folder / f) for k, f in TABLES.items()}


def trained_model_tasks(dyn: pd.DataFrame) -> list[str]:
    """The model tasks (any seed) on which the linear network trained, in table order."""
    from specdyn.experiments.real_data.config import MODEL_TASKS

    sim = dyn[(dyn.quantity == "rho_sim") & (dyn.student == "linear")]
    return [t for t in dict.fromkeys(sim.task) if str(t).partition("@s")[0] in MODEL_TASKS]


def real_data_claims(tables: dict[str, pd.DataFrame], cfg: RealDataConfig) -> list[Claim]:
    """The claims of ``real-data``, a pure function of its tables (``read_tables``)."""
    from specdyn.experiments.real_data import network_claims

    dyn, fits, tasks = tables["dynamics"], tables["fits"], tables["tasks"]
    kp, kd = cfg.kmax_patches, cfg.kmax_digits
    claims = _misalignment_claims(tasks, fits)
    claims.append(estimator_claim(tables["modes"], fits))
    claims += _linear_claims(dyn, fits, tasks, cfg)
    claims += _region_claims(dyn, fits, kp)
    claims += _spectrum_claims(dyn, tasks, cfg, kd)
    claims += network_claims.relu_claims(dyn, tables["widths"], fits, cfg)
    claims += network_claims.sgd_claims(dyn, fits, cfg)
    return at_size(claims, cfg)


def _small_overlap_claim(tasks: pd.DataFrame) -> Claim:
    """Where the output overlap is small, the aligned theory (built from the data's own
    lambda_k, mu_k) is close to the exact reference: the theory's inputs are right."""
    small = tasks[tasks.output_overlap.astype(float) <= SMALL_OVERLAP]
    err = small.error.to_numpy(dtype=float)
    return within(
        "a small output overlap: the aligned theory is near the exact reference",
        float(np.max(err)) if err.size else float("nan"), 0.0, SMALL_OVERLAP_TOL, source=OWN,
        key="small-overlap-theory", partner=DIGITS_SPLIT,
        note=f"max over the tasks with output overlap <= {SMALL_OVERLAP:g} (the synthetic "
             "aligned teacher, the shifted patches, denoise, the rotated teacher at most "
             "seeds) of the aligned theory's error against the exact reference (feature "
             "learning): the theory on the data's own spectra, in mode order, is right where "
             "the data are nearly aligned; a theory on mispaired inputs (mu_k sorted) "
             "misses the shifted patches by 0.2; written after the quick run was seen, "
             "tolerance from seeds 1-5")


def _misalignment_claims(tasks: pd.DataFrame, fits: pd.DataFrame) -> list[Claim]:
    small = _small_overlap_claim(tasks)
    tasks = tasks[tasks.task.isin(VALIDATION_TASKS)]
    err = tasks.error.to_numpy(dtype=float)
    rho_ov = rank_correlation(tasks.output_overlap.to_numpy(dtype=float), err)
    rho_tot = rank_correlation(tasks.total_misalignment.to_numpy(dtype=float), err)
    name_ov = "misalignment: the output overlap orders the aligned theory's error"
    return [
        within(name_ov, rho_ov, SPEARMAN_CRIT_7, 1.0, source=OWN, key="overlap-orders-error",
               partner=DIGITS_SPLIT,
               note=f"Spearman rho over the {len(tasks)} tasks (shifted patch, blurred patch at "
                    "two widths, digits, text, a synthetic aligned and a rotated teacher) of the "
                    "output overlap (rms cosine between the targets of modes 1..kmax) and the "
                    "aligned theory's error against the exact reference (feature learning, "
                    "max_t median over modes 1..kmax of |log rho_ref / rho_theory|); bound: "
                    "the one-sided 5 % critical value for n = 7 (no association: 0; seeds "
                    "1-5: 1.00 each); a shuffle of seven errors can leave them nearly in order "
                    "(1 in 20 passes), so the digits' split, read from the networks' tables, "
                    "is its partner"),
        within("misalignment: the |c_k|^2-weighted share does not", rho_tot, -1.0,
               SPEARMAN_CRIT_7, source=OWN, key="headline-does-not", partner=DIGITS_SPLIT,
               note="the same Spearman rho for the headline misalignment, which weighs mode k "
                    "by |c_k|^2 so that the top modes decide it: below the critical value, it "
                    "does not order the errors (the blurred target scores below the shifted "
                    "one, its error is 3 times larger; seeds 1-5: 0.39-0.68)"),
        within("blurred target: beta clearly above 0", fit(fits, "blur", "beta", "ci_low"),
               0.0, np.inf, source=OWN, key="blur-beta-positive",
               partner="blur, IIIa: final exponent near alpha + beta",
               note="the lower end of beta's 95 % interval (alpha + beta fitted on lambda_k "
                    "mu_k in mode order, minus alpha; 0.62-0.75 at seeds 1-5): a low-pass "
                    "target damps the high modes; the shifted patch's beta is near 0, where "
                    "alpha + beta, alpha + beta/2 and alpha cannot be told apart"),
        small,
    ]


def estimator_claim(modes: pd.DataFrame, fits: pd.DataFrame) -> Claim:
    """The exponent estimator the claims and figures call (``mode_exponents``) against the
    data's fits made at run time by another code path (``fit_power_law``, mode order)."""
    from specdyn.measure import mode_exponents

    worst = 0.0
    for task, g in modes.groupby("task", sort=False):
        row = fits[(fits.task == task) & (fits.quantity == "alpha_plus_beta")]
        if row.empty:
            continue
        g = g.sort_values("k")
        got = mode_exponents((g.lam * g.mu).to_numpy(float), int(row.kmin.iloc[0]),
                             int(row.kmax.iloc[0]))
        worst = max(worst, abs(float(got) - float(row.value.iloc[0])))
    return within(
        "the exponent estimator reproduces the data's fits (an independent code path)",
        worst if len(modes) else float("nan"), 0.0, ESTIMATOR_TOL, source=OWN,
        key="estimator-oracle", partner=DIGITS_SPLIT, aspect="oracle",
        note="max over the tasks of |mode_exponents(lambda_k mu_k) - alpha + beta| (the "
             "data's fit, made at run time by fit_power_law in mode order): the estimator "
             "every claim and figure reads exponents with, against another implementation; "
             "values sorted into rank order first would differ by 0.044 on the digits "
             "(derived: roundoff)")


def _kmax(tasks: pd.DataFrame, task: str, default: int) -> int:
    row = tasks[tasks.task == task]
    return int(row.kmax.iloc[0]) if len(row) else default


def _linear_claims(dyn: pd.DataFrame, fits: pd.DataFrame, tasks: pd.DataFrame,
                   cfg: RealDataConfig) -> list[Claim]:
    kp, kd = cfg.kmax_patches, cfg.kmax_digits
    runs = {("patches", "feature-learning"): (kp, NET_REF_TOL["patches/feature-learning"]),
            ("blur", "IIIa"): (kp, NET_REF_TOL["blur/IIIa"]),
            ("blur", "IIIb"): (kp, NET_REF_TOL["blur/IIIb"]),
            ("digits", "feature-learning"): (kd, NET_REF_TOL["digits/feature-learning"])}
    for task in trained_model_tasks(dyn):
        runs[(task, "feature-learning")] = (_kmax(tasks, task, kp),
                                            MODEL_REF_TOL[task.partition("@s")[0]])
    lo = sig3(LEVEL_SHARE * wishart_level(cfg.N))
    ser = {key: series(dyn, *key) for key in runs}
    claims = []
    for (task, regime), (kmax, tol) in runs.items():
        s = ser[(task, regime)]
        old = task in ("patches", "blur", "digits")
        claims.append(within(
            f"{task}, {regime}: linear network vs exact reference",
            net_error(s["rho_sim"], s["rho_reference"], kmax), lo, tol,
            source="core Eq. (12)", key=f"net-vs-reference/{task}/{regime}",
            rule=f"in [{LEVEL_SHARE:g} x wishart_level(N), {tol:g}]",
            note=f"max over checkpoints of the median over modes 1..{kmax} of |log rho_sim / "
                 f"rho_reference|: width N = {cfg.N} and GD against the infinite-width flow "
                 "on the data's own Sigma and C; upper end from seeds 1-5; lower end half "
                 f"the Wishart level of N (0.6745 sqrt(2/N) = {wishart_level(cfg.N):.3g} at "
                 "t = 0, derived): a network equal to its reference fails; the learning it "
                 "follows moves the median log rho_k by 4.7-5.8, about 50 to 100 times the "
                 "tolerance",
            revised="after the values were seen: the lower end (half the Wishart level) "
                    "added to [0, tol], so that a network that returns its reference fails"
                    if old else "", revised_how="tighter" if old else "", aspect="size"))
    levels = [rms_level(ser[key]["rho_sim"][:1], ser[key]["rho_reference"][:1], cfg.N)
              for key in runs]
    claims.append(sized(
        "linear networks, t = 0: distance from the exact reference is the width's Wishart "
        "level", float(np.exp(np.mean(np.log(levels)))) if levels and np.all(
            np.isfinite(levels)) and min(levels) > 0 else float("nan"), 1.0,
        START_LEVEL_FACTOR, source="core Eq. (12)", key="start-level",
        predicted_by=f"the initial fluctuation of N = {cfg.N} Gaussian units, sqrt(2/N) in "
                     "log rho_k, closed form",
        note=f"rms over all modes of log rho_sim / rho_reference at t = 0, over sqrt(2/N), "
             f"geometric mean over the {len(levels)} trained runs ("
             + ", ".join(f"{x:.3f}" for x in levels) + "): a network of another width, or "
             "equal to its reference, fails; factor as the ReLU zero-output level's (seeds "
             "1-3: 1.079, 0.907, 0.994)",
        revised=START_LEVEL_REVISED, revised_how="tighter"))
    d = ser[("digits", "feature-learning")]
    split = (net_error(d["rho_sim"], d["rho_theory"], kd)
             - net_error(d["rho_reference"], d["rho_theory"], kd))
    claims.append(within(
        DIGITS_SPLIT, split, -DIGITS_SPLIT_TOL, DIGITS_SPLIT_TOL, source=OWN,
        key="digits-miss-is-misalignment",
        note="error(network vs aligned theory) minus error(exact reference vs aligned theory); "
             "each about 0.7 on the labels (a factor 2 in rho, 60 times the tolerance), so the "
             "labels' miss is the misalignment, not the width; tolerance from seeds 1-5"))
    starts = []
    for (task, regime), (kmax, _) in runs.items():
        if task in ("patches", "blur", "digits"):
            a0 = exponents(ser[(task, regime)]["rho_sim"][:1], kmax)[0]
            starts.append(abs(a0 - fit(fits, task, "alpha")))
    claims.append(within(
        "linear network starts at the data's alpha (one estimator)",
        float(np.max(starts)), 0.0, START_TOL, source="core Eq. (17)", key="start-at-alpha",
        sanity=True, revised="after its values were seen: an expected claim demoted to a "
                             "sanity check (forced by the initialisation)",
        revised_how="restated",
        note="a sanity check (true at t = 0 for any isotropic initialisation: rho_k(0) = "
             "sigma_w^2 lambda_k): max over patches, blur, digits of |a_network(t = 0) - "
             "alpha|, both fitted in mode order with weights 1/k; tolerance from seeds 1-5, "
             "the Wishart noise of N = 1024"))
    times = []
    for key in CLOCK_RUNS:
        if key not in ser:
            continue
        c, k = ser[key], runs[key][0]
        times.append(clock_error(learning_times(c["t"], c["rho_sim"], k),
                                 learning_times(c["t"], c["rho_reference"], k)))
    claims.append(within(
        "linear network: each mode learns when the exact reference says",
        float(np.max(times)) if times else float("nan"), 0.0, CLOCK_TOL,
        source="core Eq. (182)", key="learning-clock", aspect="clock",
        note="each mode's half-rise time (its learned part rho_k(t) - rho_k(0) reaches half "
             "its end value; log-interpolated between checkpoints), modes 1..kmax; median over "
             "the modes of |log t_network / t_reference|, max over patches and denoise "
             "(feature learning) and blur (IIIa, IIIb); the times span 2-3 decades over the "
             "modes; a clock off by a factor 2 gives 0.69; tolerance from seeds 1-5"))
    return claims


def _region_claims(dyn: pd.DataFrame, fits: pd.DataFrame, kp: int) -> list[Claim]:
    a, ab = fit(fits, "blur", "alpha"), fit(fits, "blur", "alpha_plus_beta")
    b = ab - a
    tol = end_tolerance(b)
    out = []
    for regime, target, what in (("IIIa", ab, "alpha + beta"), ("IIIb", a + b / 2,
                                                                "alpha + beta/2")):
        s = series(dyn, "blur", regime)
        dev, slope = end_after_plateau(s["t"], exponents(s["rho_sim"], kp), target, tol)
        out.append(within(
            f"blur, {regime}: final exponent near {what}", dev, -tol, tol,
            source="core Eq. (31)", key=f"blur-end/{regime}",
            rule="tolerance 0.8 |beta|/4 of the data's beta (below half the gap |beta|/2 "
                 "between the regions' end values); NaN unless the exponent's slope over the "
                 "run's last half decade is at most the tolerance per decade",
            note=f"the linear network's exponent at the last checkpoint (3 learning times of "
                 f"mode {kp}) minus the data's fitted {what}, judged only after a plateau "
                 f"(slope over the last half decade: {slope:.3g} per decade; bound "
                 f"{tol:.3g}: one more decade would move it by less than the tolerance); "
                 f"tolerance {tol:.3g} = 0.8 |beta|/4, below half the gap beta/2 between the "
                 "end values of Regions IIIa and IIIb (derived); a lazy network ends at "
                 "alpha, beta and beta/2 away",
            revised="after the --full value was seen: tolerance beta/4 (0.2 fixed, equal to "
                    "half the gap) -> 0.8 |beta|/4 of the run's beta, and the end judged "
                    "only after a plateau (the MLP's end claim held at --full while its "
                    "exponent was still falling)", revised_how="restated"))
    heights, shifts = [], []
    for regime in ("IIIa", "IIIb"):
        s = series(dyn, "blur", regime)
        h_net, i_net = peak(exponents(s["rho_sim"], kp))
        h_ref, i_ref = peak(exponents(s["rho_reference"], kp))
        heights.append(abs(h_net - h_ref))
        shifts.append(abs(i_net - i_ref))
    out += [
        within("blur: transient height follows the exact reference", float(max(heights)), 0.0,
               PEAK_TOL, source="core Eq. (32)", key="blur-transient-height",
               note="max over IIIa and IIIb of |peak exponent of the network - of the exact "
                    "reference| (the Region II transient toward 3 alpha + beta: the peaks rise "
                    "2.2-2.6 above alpha, 50 times the tolerance); tolerance from seeds 1-5"),
        within("blur: transient timing follows the exact reference", float(max(shifts)), 0.0,
               TIMING_TOL, source="core Eq. (32)", key="blur-transient-timing", aspect="clock",
               note="max over IIIa and IIIb of the number of checkpoints between the network's "
                    "peak and the reference's (log-spaced: one checkpoint, a factor 1.5 in "
                    "time, is the resolution; derived)"),
    ]
    lazy = exponents(series(dyn, "blur", "lazy")["rho_sim"], kp)
    name_rise = "patches, feature learning: exponent rises (alpha -> 3alpha+beta)"
    out.append(within(
        "blur, lazy: exponent stays at alpha", float(np.max(np.abs(lazy - lazy[0]))), 0.0,
        LAZY_TOL, source="core Eq. (34)", key="blur-lazy-stays", partner=name_rise,
        note="max over checkpoints of |a(t) - a(0)| at gamma0 = 0.05 S/theta_1 (the feature "
             "learning runs move it by 2.2-2.6, 100 times the tolerance); tolerance from seeds "
             "1-5"))
    p = series(dyn, "patches", "feature-learning")
    out.append(within(
        name_rise, transient(exponents(p["rho_sim"], kp), exponents(p["rho_theory"], kp)),
        TRANSIENT_MIN, np.inf, source="core Eq. (32)", key="patches-transient",
        note="the network's mean exponent over the checkpoints where the theory's exponent is "
             "above half its peak rise, minus its mean over the other checkpoints (1.4 "
             "at seeds 1-5, the theory's own 1.16; a network that never learns gives 0)",
        revised="f252508: max_t (slope(t) - slope(0)) >= 0.3 -> mean slope over the theory's "
                "peak window minus the mean elsewhere >= 0.5: the mutation test showed "
                "shuffled tables passing the first form (a noisy maximum)",
        revised_how="restated"))
    return out


def _spectrum_claims(dyn: pd.DataFrame, tasks: pd.DataFrame, cfg: RealDataConfig,
                     kd: int) -> list[Claim]:
    """The representation's spectrum (by rank) beside the per-mode diagonal (mode order)."""
    from specdyn.measure import mode_exponents

    def gap(task: str, kmax: int) -> np.ndarray:
        s = series(dyn, task, "feature-learning")
        if s["spectrum_sim"].shape != s["rho_sim"].shape or s["rho_sim"].size == 0:
            return np.full(1, np.nan)
        return mode_exponents(s["spectrum_sim"], 2, kmax) - exponents(s["rho_sim"], kmax)

    aligned = [gap(t, _kmax(tasks, t, cfg.kmax_patches))
               for t in ("patches", *trained_model_tasks(dyn))]
    worst = max((float(np.max(np.abs(g))) for g in aligned), default=float("nan"))
    dg = gap("digits", kd)
    name = "P >= D, nearly aligned: the representation's spectrum has the per-mode exponent"
    return [
        within(name, worst, 0.0, SPECTRUM_TOL, source="core Eq. (12)",
               key="spectrum-is-diagonal", partner=DIGITS_SPLIT,
               note="the linear network's exponent of the representation's spectrum "
                    "(eigenvalues of Sigma^1/2 G^w Sigma^1/2 by rank, the spectrum the paper "
                    "defines) minus that of the per-input-mode diagonal lambda_k (U^T G^w "
                    "U)_kk (mode order), max over checkpoints and over the shifted patches and "
                    "the tasks where the model applies (feature learning): for an aligned "
                    "teacher the two are one; tolerance from seeds 1-5"),
        within("digits (P < D): the per-mode diagonal is not the representation's spectrum",
               float(dg[-1]), DIGITS_SPECTRUM_MIN, np.inf, source=OWN,
               key="digits-spectrum-differs", partner=DIGITS_SPLIT,
               note=f"end exponent of the representation's spectrum minus the per-mode "
                    f"diagonal's, modes/ranks 2..{kd}, on the digits' one-hot labels (P = 10, "
                    "rank(C) = 9): nine learned eigenvalues, then the initial tail, fitted as "
                    "one power law; the paper's picture needs P >= D; bound: a quarter of the "
                    "digits' alpha (derived)"),
    ]


def real_data_claims_of(cfg: RealDataConfig, folder: Path) -> list[Claim]:
    """real-data's claims on the tables a run wrote to ``folder`` (for the registry)."""
    return real_data_claims(read_tables(folder), cfg)


__all__ = ["TABLES", "read_tables", "real_data_claims", "real_data_claims_of", "wide"]
