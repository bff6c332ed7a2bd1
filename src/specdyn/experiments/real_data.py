"""``real-data``: the core paper's open question on real data (issue 32).

"It will also be important to determine the extent to which the predicted
exponent transitions and boundaries can be observed in real data" (core Sec. 4).
Two tasks (:mod:`specdyn.data.real`):

- ``patches``: grey image patches of scikit-learn's sample photographs, target the
  patch shifted one pixel (``P = D``): a nearly aligned teacher;
- ``digits``: handwritten digits, target the one-hot label (``P = 10``): a
  rank-9 target, strongly misaligned beyond rank 9;

and the spectrum of a third modality, character bigrams of Python's bundled
documentation (``text``, inputs only). For each task the exact theory is built
from the data's own ``lambda_k`` and ``mu_k`` (:func:`specdyn.data.empirical.aligned_setting`,
no power-law fit), and two students train on the data set by full-batch GD:

- the two-layer linear network (exact Gram-space engine, finite ``N``),
  feature-learning (``sigma_w = 0.1``, ``gamma0 = 2 S / theta_1``) and lazy
  (``sigma_w = 1``, ``gamma0 = 0.05 S / theta_1``); ``theta_1 = sqrt(mu_1)`` is the
  teacher strength of the highest-variance mode (the paper's ``theta0``);
- a ReLU student (weight-space engine) on the patches, against the effective
  linear theory (:func:`specdyn.theory.effective_setting`: ``gamma0 / c1``).

Tables: ``real-data.parquet`` (tidy rows ``task, student, regime, step, t, k,
quantity, value``): ``rho_sim`` (``lambda_k (U^T G^w U)_kk``, the network's
representation variance along input mode ``k``, which is ``rho_k`` of Eq. 12
when the teacher is aligned), ``rho_theory`` (Eq. 12 on the data's spectra),
``spectrum_sim`` / ``spectrum_theory`` (eigenvalues by rank, decreasing);
``real-data_modes.parquet`` (``task, k, lam, mu, misalignment``);
``real-data_fits.parquet`` (``task, quantity, value, ci_low, ci_high, kmin, kmax``:
fitted ``alpha``, ``alpha_plus_beta``, ``beta``); ``real-data_regions.parquet``
(``task, student, regime, t, k, region``: the theory's region label of every mode at
every checkpoint, :func:`specdyn.theory.region`, thresholds R = 1, l = 0.9, u = 1).

Exponents in the claims are slopes of ``log rho_k`` against ``log k`` in mode
order over ``kmin..kmax`` (:func:`specdyn.runs.claims.loglog_slope`), so a table
whose values were shuffled or made constant fails them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn import _validate as v
from specdyn import io
from specdyn.runs.claims import OWN, Claim, loglog_slope, within
from specdyn.runs.registry import ExperimentResult, Measured, register

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

#: (sigma_w, gamma0 / (S / theta_1)) of the two regimes; sigma_a = 1.
REGIMES = {"feature-learning": (0.1, 2.0), "lazy": (1.0, 0.05)}


@dataclass(frozen=True)
@v.constrained_fields(patch=v.Int(4, 64), patches_M=v.Int(2), digits_M=v.Int(100, 1797),
                      N=v.SIZE, relu_N=v.SIZE, relu=v.Bool(), checkpoints=v.Int(4),
                      kmax_patches=v.Int(4), kmax_digits=v.Int(4), t_factor=v.Real(1.0),
                      text_D=v.Int(16, 512), seed=v.SEED, figure=v.Bool())
class RealDataConfig:
    """Quick default: 10 x 10 patches (``M = 1000``), all 1797 digits, ``N = 1024``.

    ``t_factor`` sets the run length: ``t_end = t_factor * max_k t_learn(k)`` over the
    fit window ``2..kmax`` (the theory's learning time of the slowest fitted mode,
    :func:`specdyn.theory.t_learn`), per task, regime and student; ``dt = 0.5 / b_1``
    (the fastest mode's rate, stable GD). ``relu`` adds the ReLU student on the
    patches (width ``relu_N``).
    """

    patch: int = 10
    patches_M: int = 1000
    digits_M: int = 1797
    N: int = 1024
    relu_N: int = 128
    relu: bool = True
    checkpoints: int = 24
    kmax_patches: int = 25
    kmax_digits: int = 20
    t_factor: float = 3.0
    text_D: int = 128
    seed: int = 0
    figure: bool = True

    def __post_init__(self) -> None:
        if self.patches_M % 2:
            raise ValueError(f"patches_M must be even (half from each image), got "
                             f"{self.patches_M}")
        if self.kmax_patches > self.patch**2 - 1:
            raise ValueError(f"kmax_patches must be <= patch**2 - 1 = {self.patch**2 - 1} "
                             f"(the patch's modes), got {self.kmax_patches}")
        if self.kmax_digits > 60:
            raise ValueError(f"kmax_digits must be <= 60 (the digits' nonzero modes), got "
                             f"{self.kmax_digits}")


def _full() -> RealDataConfig:
    return RealDataConfig(patch=16, patches_M=20000, N=4096, relu_N=1024, checkpoints=40,
                          kmax_patches=64, kmax_digits=30)


def tiny() -> RealDataConfig:
    """The small config of the tests (seconds)."""
    return RealDataConfig(patch=10, patches_M=1000, digits_M=600, N=512, relu_N=128,
                          checkpoints=12, kmax_patches=25, kmax_digits=12, text_D=64)


# ----------------------------------------------------------------------------- claims


def _series(df: pd.DataFrame, task: str, student: str, regime: str, q: str) -> np.ndarray:
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


def _aligned_error(sim: np.ndarray, th: np.ndarray, mis: np.ndarray) -> float:
    """max over checkpoints of the median over aligned modes of |log sim/theory|."""
    ok = mis < MIS_SMALL
    if sim.shape != th.shape or not ok.any() or ok.size != sim.shape[1]:
        return float("nan")
    with np.errstate(divide="ignore", invalid="ignore"):
        err = np.abs(np.log(sim[:, ok] / th[:, ok]))
    return float(np.max(np.median(err, axis=1)))


def _all_error(sim: np.ndarray, th: np.ndarray) -> float:
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
    lin = {r: (_series(df, "patches", "linear", r, "rho_sim"),
               _series(df, "patches", "linear", r, "rho_theory")) for r in REGIMES}
    a_sim = {r: _exponents(lin[r][0], kp) for r in REGIMES}
    a_th = {r: _exponents(lin[r][1], kp) for r in REGIMES}
    alpha, ab = fit("patches", "alpha"), fit("patches", "alpha_plus_beta")

    def gap(r: str) -> float:
        d = np.abs(a_sim[r] - a_th[r])
        return float(np.max(d)) if d.size == a_sim[r].size and d.size else float("nan")

    claims = [
        within("patches, linear, FL: rho_k(t) vs theory at aligned modes",
               _aligned_error(*lin[fl], mis("patches")), 0.0, LINEAR_TOL, source="core Eq. (12)",
               note=f"theory from the data's own lambda_k, mu_k; modes with misalignment < "
                    f"{MIS_SMALL}; max over checkpoints of the median |log rho_sim/rho_theory|; "
                    f"finite N = {cfg.N} and GD separate them"),
        within("patches, linear, lazy: rho_k(t) vs theory at aligned modes",
               _aligned_error(*lin[lazy], mis("patches")), 0.0, LINEAR_TOL,
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
    d_fl = (_series(df, "digits", "linear", fl, "rho_sim"),
            _series(df, "digits", "linear", fl, "rho_theory"))
    err_digits, err_patches = _all_error(*d_fl), _all_error(*lin[fl])
    d_lazy = (_series(df, "digits", "linear", lazy, "rho_sim"),
              _series(df, "digits", "linear", lazy, "rho_theory"))
    added = ("added after the first run of the claims (f252508), with the number already "
             "seen in an exploratory run")
    claims += [
        within("digits, linear, lazy: rho_k(t) vs theory at aligned modes",
               _aligned_error(*d_lazy, mis("digits")), 0.0, LINEAR_TOL,
               source="core Eq. (34)",
               note=f"lazy: the learned part stays below the initial one, so the misaligned "
                    f"labels barely enter the representation; {added}"),
        within("digits, linear, FL: rho_k(t) vs theory at aligned modes",
               _aligned_error(*d_fl, mis("digits")), 0.0, LINEAR_TOL,
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
        relu = {r: (_series(df, "patches", "relu", r, "rho_sim"),
                    _series(df, "patches", "relu", r, "rho_theory")) for r in REGIMES}
        r_sim = _exponents(relu[fl][0], kp)
        r_th = _exponents(relu[fl][1], kp)
        r_lazy = _exponents(relu[lazy][0], kp)
        d = np.abs(r_sim - r_th)
        claims += [
            within("patches, ReLU, FL: rho_k(t) vs effective theory at aligned modes",
                   _aligned_error(*relu[fl], mis("patches")), 0.0, RELU_TOL,
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


def _claims_of(cfg: RealDataConfig, folder: Path) -> list[Claim]:
    return real_data_claims(pd.read_parquet(folder / "real-data.parquet"),
                            pd.read_parquet(folder / "real-data_modes.parquet"),
                            pd.read_parquet(folder / "real-data_fits.parquet"), cfg)


# -------------------------------------------------------------------------------- run


def _rows(task: str, student: str, regime: str, steps: np.ndarray, times: np.ndarray,
          q: str, values: np.ndarray) -> pd.DataFrame:
    n, D = values.shape
    return pd.DataFrame({"task": task, "student": student, "regime": regime,
                         "step": np.repeat(steps, D), "t": np.repeat(times, D),
                         "k": np.tile(np.arange(1, D + 1), n), "quantity": q,
                         "value": values.ravel()})


def _train(task: str, dec: Any, data: Any, cfg: RealDataConfig, student: str, regime: str,
           kmax: int) -> tuple[pd.DataFrame, dict[str, Any], pd.DataFrame]:
    from specdyn import theory
    from specdyn.data.empirical import DataTeacher, aligned_setting
    from specdyn.sim import train_linear, train_two_layer

    sw, ratio = REGIMES[regime]
    S = sw**2 + 1.0
    s = aligned_setting(dec, sw, 1.0, ratio * S / float(np.sqrt(dec.mu[0])))
    th_s = s if student == "linear" else theory.effective_setting(s, "relu")
    t_end = cfg.t_factor * float(np.max(theory.t_learn(th_s, np.arange(1, kmax + 1))))
    dt = 0.5 / float(theory.mode_rate(th_s, 1))
    steps = max(int(np.ceil(t_end / dt)), cfg.checkpoints)
    teacher = DataTeacher(s, dec, data.X, data.Y)
    if student == "linear":
        traj = train_linear(s, cfg.N, None, steps, dt=dt, teacher=teacher,
                            checkpoints=cfg.checkpoints, seed=cfg.seed, progress=False)
    else:
        traj = train_two_layer(s, "relu", N=cfg.relu_N, M=dec.M, steps=steps, dt=dt,
                               teacher=teacher, checkpoints=cfg.checkpoints,
                               record=("preact",), seed=cfg.seed, progress=False)
    k = np.arange(1, dec.D + 1)
    rho_th = theory.rho(th_s, k, traj.times[:, None])
    rho_sim = dec.lam * traj.diagonals["eta"]
    frames = [
        _rows(task, student, regime, traj.steps, traj.times, "rho_sim", rho_sim),
        _rows(task, student, regime, traj.steps, traj.times, "rho_theory", rho_th),
        _rows(task, student, regime, traj.steps, traj.times, "spectrum_sim",
              traj.series["preact"]),
        _rows(task, student, regime, traj.steps, traj.times, "spectrum_theory",
              -np.sort(-rho_th, axis=1)),
    ]
    max_r = float(np.max(theory.region_quantities(th_s, k, np.inf)["R"]))
    regions = np.asarray(theory.region(th_s, k[None, :], traj.times[:, None]))
    reg_lab = regions[-1]
    region_rows = pd.DataFrame({"task": task, "student": student, "regime": regime,
                                "t": np.repeat(traj.times, dec.D),
                                "k": np.tile(k, traj.times.size), "region": regions.ravel()})
    info = {"steps": steps, "dt": dt, "t_end": float(traj.times[-1]), "gamma0": th_s.gamma0,
            # Eq. (33): lazy when no mode's learned part ever reaches its initial one
            "max_R_t_inf": max_r,
            "regime_eq33": "lazy" if max_r < 1.0 else "feature-learning",
            "gamma0_lazy_boundary": theory.cross_level(th_s) / th_s.theta0,
            "modes_learned_III": int(np.sum(np.char.startswith(reg_lab.astype(str), "III")))}
    return pd.concat(frames, ignore_index=True), info, region_rows


@register("real-data", "the paper's theory from real data's own spectra (image patches, "
          "digits) against linear and ReLU networks trained on them", RealDataConfig,
          full=_full, claims=_claims_of,
          measured={"real-data.parquet": Measured(
              ("value",), by=("task", "student", "regime", "quantity"),
              where={"quantity": ("rho_sim", "spectrum_sim")})})
def run(cfg: RealDataConfig, out_dir: Path) -> ExperimentResult:
    """Load the data, decompose, train both students in both regimes, write tables."""
    from specdyn.data.empirical import decompose
    from specdyn.data.real import digits, image_patches, text_ngrams
    from specdyn.measure.data_spectra import data_exponents

    tasks = {"patches": (image_patches(cfg.patch, cfg.patches_M, 1, cfg.seed), cfg.kmax_patches),
             "digits": (digits(cfg.digits_M, cfg.seed), cfg.kmax_digits)}
    mode_rows, fit_rows, frames, region_frames = [], [], [], []
    summary: dict[str, Any] = {}
    for task, (data, kmax) in tasks.items():
        dec = decompose(data.X, data.Y)
        ex = data_exponents(dec.lam, dec.mu, 2, kmax, seed=cfg.seed)
        mode_rows.append(pd.DataFrame({"task": task, "k": np.arange(1, dec.D + 1),
                                       "lam": dec.lam, "mu": dec.mu,
                                       "misalignment": dec.misalignment}))
        fit_rows += [{"task": task, **r} for r in ex.rows()]
        summary[task] = {"D": dec.D, "P": dec.P, "M": dec.M,
                         "total_misalignment": dec.total_misalignment,
                         "median_misalignment": float(np.median(dec.misalignment)),
                         "aligned_modes": int(np.sum(dec.misalignment < MIS_SMALL)),
                         "alpha": ex.alpha.exponent, "alpha_ci": [ex.alpha.ci_low,
                                                                  ex.alpha.ci_high],
                         "beta": ex.beta, "beta_ci": [ex.beta_low, ex.beta_high],
                         "preprocessing": data.preprocessing}
        students = ["linear"] + (["relu"] if cfg.relu and task == "patches" else [])
        for student in students:
            for regime in REGIMES:
                part, info, reg = _train(task, dec, data, cfg, student, regime, kmax)
                frames.append(part)
                region_frames.append(reg)
                summary[task][f"{student}/{regime}"] = info
    text = text_ngrams(2, cfg.text_D)
    from specdyn.measure import covariance_spectrum, fit_power_law

    lam_text = covariance_spectrum(text.X)
    kmax_text = min(cfg.text_D // 2, 60)
    mode_rows.append(pd.DataFrame({"task": "text", "k": np.arange(1, lam_text.size + 1),
                                   "lam": lam_text, "mu": np.nan, "misalignment": np.nan}))
    ft = fit_power_law(lam_text, 2, kmax_text, seed=cfg.seed)
    fit_rows.append({"task": "text", "quantity": "alpha", "value": ft.exponent,
                     "ci_low": ft.ci_low, "ci_high": ft.ci_high, "kmin": 2, "kmax": kmax_text})
    summary["text"] = {"alpha": ft.exponent, "alpha_ci": [ft.ci_low, ft.ci_high],
                       "preprocessing": text.preprocessing}
    df = pd.concat(frames, ignore_index=True)
    modes = pd.concat(mode_rows, ignore_index=True)
    fits = pd.DataFrame(fit_rows)
    tables = [io.write_table(df, out_dir / "real-data.parquet"),
              io.write_table(modes, out_dir / "real-data_modes.parquet"),
              io.write_table(fits, out_dir / "real-data_fits.parquet"),
              io.write_table(pd.concat(region_frames, ignore_index=True),
                             out_dir / "real-data_regions.parquet")]
    # the theory's error per task (median over modes, max over checkpoints), for the docs
    for task in tasks:
        for regime in REGIMES:
            sim = _series(df, task, "linear", regime, "rho_sim")
            th = _series(df, task, "linear", regime, "rho_theory")
            m = modes[modes.task == task].sort_values("k").misalignment.to_numpy()
            summary[task][f"theory_error/{regime}"] = {
                "aligned_modes": _aligned_error(sim, th, m), "all_modes": _all_error(sim, th)}
    figures: list[Path] = []
    if cfg.figure:
        from specdyn.plot import save_figure
        from specdyn.plot.real_data import glance_figure, real_data_figure

        claims = real_data_claims(df, modes, fits, cfg)
        figures += save_figure(real_data_figure(df, modes, fits, cfg.kmax_patches),
                               out_dir / "real-data")
        figures += save_figure(glance_figure(df, fits, cfg.kmax_patches, claims),
                               out_dir / "real-data_glance")
    return ExperimentResult("real-data", out_dir, figures=figures, tables=tables,
                            summary=summary)
