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

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn import io
from specdyn.experiments.real_data.claims import (
    MIS_SMALL,
    aligned_error,
    all_error,
    real_data_claims,
    real_data_claims_of,
    series,
)
from specdyn.experiments.real_data.config import REGIMES, RealDataConfig, full_real_data
from specdyn.runs.registry import ExperimentResult, Measured, register


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
                            checkpoints=cfg.checkpoints, seed=cfg.seed,
                            progress=True)  # long at --full: its bar (entry points default to none)
    else:
        traj = train_two_layer(s, "relu", N=cfg.relu_N, M=dec.M, steps=steps, dt=dt,
                               teacher=teacher, checkpoints=cfg.checkpoints,
                               record=("preact",), seed=cfg.seed, progress=True)
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
          full=full_real_data, claims=real_data_claims_of,
          measured={"real-data.parquet": Measured(
              ("value",), by=("task", "student", "regime", "quantity"),
              where={"quantity": ("rho_sim", "spectrum_sim")})})
def run_real_data(cfg: RealDataConfig, out_dir: Path) -> ExperimentResult:
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
            sim = series(df, task, "linear", regime, "rho_sim")
            th = series(df, task, "linear", regime, "rho_theory")
            m = modes[modes.task == task].sort_values("k").misalignment.to_numpy()
            summary[task][f"theory_error/{regime}"] = {
                "aligned_modes": aligned_error(sim, th, m), "all_modes": all_error(sim, th)}
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
