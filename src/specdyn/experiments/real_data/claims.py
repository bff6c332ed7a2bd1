"""real-data's claims: pure functions of its three tables and config.

Every tolerance is fixed here before the run; :func:`real_data_claims` checks them on
``real-data.parquet``, ``real-data_modes.parquet`` and ``real-data_fits.parquet``.
Exponents are slopes of ``log rho_k`` against ``log k`` in mode order over
``kmin..kmax`` (:func:`specdyn.runs.claims.loglog_slope`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from specdyn.experiments.real_data.config import REGIMES, RealDataConfig
from specdyn.runs.claims import OWN, Claim, loglog_slope, within

#: Modes whose misalignment is below this count as aligned.
MIS_SMALL = 0.1
#: Linear network against the exact theory: max over checkpoints of the median over the
#: aligned modes of |log rho_sim / rho_theory| (finite N and GD separate them).
LINEAR_TOL = 0.15
#: max over checkpoints of |exponent_sim - exponent_theory| (mode-order slope over kmin..kmax).
EXPONENT_TOL = 0.15
#: Feature learning: the network's mean exponent over the theory's peak window must exceed its
#: mean over the other checkpoints by at least this much (alpha -> 3 alpha + beta -> alpha + beta).
TRANSIENT_MIN = 0.5
#: Lazy: the exponent stays within this of its start, and starts within it of the data's alpha.
LAZY_TOL = 0.1
#: Feature learning, last checkpoint: exponent within this of the data's fitted alpha + beta.
FINAL_TOL = 0.15
#: Labels against patches: the theory's error must be larger by at least this much.
ERROR_GAP_MIN = 0.1
#: ReLU student against the effective theory (median |log| over aligned modes, max over t);
#: looser than the linear one: the effective theory freezes c1 and drops the higher
#: Hermite kernel, and the ReLU width is small at the quick size.
RELU_TOL = 0.4
#: ReLU student: max over t of |exponent_sim - exponent_effective_theory|.
RELU_EXPONENT_TOL = 0.25


def series(df: pd.DataFrame, task: str, student: str, regime: str, q: str) -> np.ndarray:
    """``(n_t, D)`` values of one quantity, rows by time, columns by mode/rank."""
    sel = df[(df.task == task) & (df.student == student) & (df.regime == regime)
             & (df.quantity == q)]
    if sel.empty:
        return np.full((1, 1), np.nan)
    wide = sel.pivot_table(index="t", columns="k", values="value", aggfunc="first")
    return wide.sort_index().to_numpy(dtype=np.float64)


def _exponents(rho: np.ndarray, kmax: int) -> np.ndarray:
    """Mode-order slope of ``log rho_k`` over ``k = 2..kmax`` per checkpoint (NaN if unfit)."""
    k = np.arange(2, kmax + 1, dtype=np.float64)
    if rho.shape[1] < kmax:
        return np.full(rho.shape[0], np.nan)
    return np.array([-loglog_slope(k, r[1:kmax]) for r in rho])


def _transient(a_sim: np.ndarray, a_th: np.ndarray) -> float:
    """Mean of ``a_sim`` where the theory's exponent is above half its peak rise, minus its
    mean at the other checkpoints (NaN when either set is empty or the shapes differ)."""
    if a_sim.shape != a_th.shape or a_sim.size < 3:
        return float("nan")
    rise = a_th - a_th[0]
    peak = rise >= 0.5 * np.max(rise)
    if not peak.any() or peak.all() or not np.max(rise) > 0:
        return float("nan")
    return float(np.mean(a_sim[peak]) - np.mean(a_sim[~peak]))


def aligned_error(sim: np.ndarray, th: np.ndarray, mis: np.ndarray) -> float:
    """max over checkpoints of the median over aligned modes of |log sim/theory|."""
    ok = mis < MIS_SMALL
    if sim.shape != th.shape or not ok.any() or ok.size != sim.shape[1]:
        return float("nan")
    with np.errstate(divide="ignore", invalid="ignore"):
        err = np.abs(np.log(sim[:, ok] / th[:, ok]))
    return float(np.max(np.median(err, axis=1)))


def all_error(sim: np.ndarray, th: np.ndarray) -> float:
    """max over checkpoints of the median over every mode of |log sim/theory|."""
    if sim.shape != th.shape:
        return float("nan")
    with np.errstate(divide="ignore", invalid="ignore"):
        err = np.abs(np.log(sim / th))
    return float(np.max(np.median(err, axis=1)))


def real_data_claims(df: pd.DataFrame, modes: pd.DataFrame, fits: pd.DataFrame,
                     cfg: RealDataConfig) -> list[Claim]:
    """The claims of ``real-data``, a pure function of its three tables."""
    def mis(task: str) -> np.ndarray:
        return modes[modes.task == task].sort_values("k").misalignment.to_numpy()

    def fit(task: str, q: str) -> float:
        row = fits[(fits.task == task) & (fits.quantity == q)]
        return float(row.value.iloc[0]) if len(row) else float("nan")

    kp = cfg.kmax_patches
    fl, lazy = "feature-learning", "lazy"
    lin = {r: (series(df, "patches", "linear", r, "rho_sim"),
               series(df, "patches", "linear", r, "rho_theory")) for r in REGIMES}
    a_sim = {r: _exponents(lin[r][0], kp) for r in REGIMES}
    a_th = {r: _exponents(lin[r][1], kp) for r in REGIMES}
    alpha, ab = fit("patches", "alpha"), fit("patches", "alpha_plus_beta")

    def gap(r: str) -> float:
        d = np.abs(a_sim[r] - a_th[r])
        return float(np.max(d)) if d.size == a_sim[r].size and d.size else float("nan")

    claims = [
        within("patches, linear, FL: rho_k(t) vs theory at aligned modes",
               aligned_error(*lin[fl], mis("patches")), 0.0, LINEAR_TOL, source="core Eq. (12)",
               note=f"theory from the data's own lambda_k, mu_k; modes with misalignment < "
                    f"{MIS_SMALL}; max over checkpoints of the median |log rho_sim/rho_theory|; "
                    f"finite N = {cfg.N} and GD separate them"),
        within("patches, linear, lazy: rho_k(t) vs theory at aligned modes",
               aligned_error(*lin[lazy], mis("patches")), 0.0, LINEAR_TOL,
               source="core Eq. (12)", note="as the feature-learning claim, lazy setting"),
        within("patches, linear, FL: exponent vs theory over time", gap(fl), 0.0, EXPONENT_TOL,
               source="core Sec. 3.2",
               note=f"max over checkpoints of |slope_sim - slope_theory|, modes 2..{kp}"),
        within("patches, linear, FL: exponent rises (alpha -> 3alpha+beta)",
               _transient(a_sim[fl], a_th[fl]), TRANSIENT_MIN, np.inf,
               source="core Eq. (32)",
               note="the transient steepening of Region II, on the data's own spectra: the "
                    "network's mean exponent over the checkpoints where the theory's exponent "
                    "is above half its peak rise, minus its mean over the other checkpoints",
               revised="f252508: max_t (slope(t) - slope(0)) >= 0.3 -> mean slope over the "
                       "theory's peak window minus the mean elsewhere >= 0.5: the mutation test "
                       "showed shuffled tables passing the first form (a noisy maximum)"),
        within("patches, linear, FL: final exponent near alpha+beta",
               float(a_sim[fl][-1] - ab), -FINAL_TOL, FINAL_TOL, source="core Eq. (31)",
               note="slope at the last checkpoint minus the data's fitted alpha + beta "
                    "(Region IIIa; IIIb gives alpha + beta/2). The shifted-patch teacher has "
                    "beta near 0, so alpha + beta is close to alpha here: the transient claim "
                    "is the one that tells the regimes apart"),
        within("patches, linear, lazy: exponent stays at alpha",
               float(np.max(np.abs(a_sim[lazy] - a_sim[lazy][0]))), 0.0, LAZY_TOL,
               source="core Eq. (34)", partner="patches, linear, FL: exponent rises "
                                               "(alpha -> 3alpha+beta)",
               note="max over checkpoints of |slope(t) - slope(0)|"),
        within("patches, linear, lazy: initial exponent = data alpha",
               float(a_sim[lazy][0] - alpha), -LAZY_TOL, LAZY_TOL, source="core Eq. (17)",
               note="rho_k(0) = sigma_w^2 lambda_k: the network inherits the data's exponent"),
    ]
    # labels: misaligned beyond rank 9; the theory's error against the patches'
    d_fl = (series(df, "digits", "linear", fl, "rho_sim"),
            series(df, "digits", "linear", fl, "rho_theory"))
    err_digits, err_patches = all_error(*d_fl), all_error(*lin[fl])
    d_lazy = (series(df, "digits", "linear", lazy, "rho_sim"),
              series(df, "digits", "linear", lazy, "rho_theory"))
    added = ("added after the first run of the claims (f252508), with the number already "
             "seen in an exploratory run")
    claims += [
        within("digits, linear, lazy: rho_k(t) vs theory at aligned modes",
               aligned_error(*d_lazy, mis("digits")), 0.0, LINEAR_TOL,
               source="core Eq. (34)",
               note=f"lazy: the learned part stays below the initial one, so the misaligned "
                    f"labels barely enter the representation; {added}"),
        within("digits, linear, FL: rho_k(t) vs theory at aligned modes",
               aligned_error(*d_fl, mis("digits")), 0.0, LINEAR_TOL,
               source="core Eq. (12)",
               disputed="own claim reported as failing (" + added + "): the digits' aligned "
                        "top modes share the 9 label directions with the misaligned modes, "
                        "whose learning couples back into them, so the per-mode theory misses "
                        "even where each mode's own misalignment is small",
               note="the issue's claim 'follows the theory at the ranks where the "
                    "misalignment is small', on the labels"),
    ]
    claims.append(within(
        "labels vs patches: theory error grows with misalignment", err_digits - err_patches,
        ERROR_GAP_MIN, np.inf, source=OWN,
        partner="patches, linear, FL: rho_k(t) vs theory at aligned modes",
        note="feature learning, linear network: max over checkpoints of the median over all "
             "modes of |log rho_sim/rho_theory|, digits minus patches (total misalignment "
             "about 0.1 against 0.01)"))
    if cfg.relu:
        relu = {r: (series(df, "patches", "relu", r, "rho_sim"),
                    series(df, "patches", "relu", r, "rho_theory")) for r in REGIMES}
        r_sim = _exponents(relu[fl][0], kp)
        r_th = _exponents(relu[fl][1], kp)
        r_lazy = _exponents(relu[lazy][0], kp)
        d = np.abs(r_sim - r_th)
        claims += [
            within("patches, ReLU, FL: rho_k(t) vs effective theory at aligned modes",
                   aligned_error(*relu[fl], mis("patches")), 0.0, RELU_TOL,
                   source="core Sec. 3.3",
                   note=f"effective linear theory (gamma0/c1, c1 = 1/2) on the data's spectra; "
                        f"width {cfg.relu_N}"),
            within("patches, ReLU, FL: exponent vs effective theory over time",
                   float(np.max(d)) if d.size == r_sim.size and d.size else float("nan"),
                   0.0, RELU_EXPONENT_TOL, source="core Sec. 3.3",
                   note="'similar exponent dynamics appear in nonlinear networks'"),
            within("patches, ReLU, lazy: exponent stays at alpha",
                   float(np.max(np.abs(r_lazy - r_lazy[0]))), 0.0, LAZY_TOL,
                   source="core Sec. 3.3",
                   disputed="own claim reported as failing, seen in an exploratory run before "
                            "this claim was written: at gamma0 = 0.05 S/theta_1 the mean-field "
                            "ReLU student's output at t = 0 is O(1/(gamma0 sqrt N)) and has a "
                            "nonlinear part the linear theory lacks; fitting it moves W in every "
                            "direction and flattens the spectrum"),
        ]
    return claims


def real_data_claims_of(cfg: RealDataConfig, folder: Path) -> list[Claim]:
    """real-data's claims on the tables a run wrote to ``folder`` (for the registry)."""
    return real_data_claims(pd.read_parquet(folder / "real-data.parquet"),
                            pd.read_parquet(folder / "real-data_modes.parquet"),
                            pd.read_parquet(folder / "real-data_fits.parquet"), cfg)
