"""Nonlinear students: the paper's Fig. 4 (Section 3.3, Appendix G).

``fig4``: a ReLU student ``f(x) = a^T ReLU(W x) / (gamma0 N)`` (mean-field,
learning rate ``nu = N``, full-batch GD, ``t = step * dt``) on the paper's
power-law teacher, in the feature-learning (``sigma_w = 0.1``,
``gamma0 = 2 S/theta0``) and lazy (``sigma_w = 1``, ``gamma0 = 0.5 S/theta0``)
regimes, ``sigma_a = 1``. Records the preactivation spectrum (nonzero
eigenvalues of ``H H^T/(MN)``, ``H = X W^T``) over time, fits its slope over a
finite range of ranks (:func:`specdyn.measure.fit_exponents`, weighted
least squares in log-log) and sets it against the same fit of the linear
network's exact spectrum ``rho_k(t)`` (:func:`specdyn.theory.rho`) at the same
settings and times, and at an effective output scale ``gamma0 / c1``, where
``c1 = E[phi'(h)]`` over the initial preactivations is the slope of the
activation's linear part (``c1 = 1/2`` for ReLU: ``relu(h) = h/2 + |h|/2``).
Measured: the ReLU student follows the linear theory at ``2 gamma0`` far
more closely than at ``gamma0`` (see ``tests/sim/test_sim_two_layer_vs_effective_theory.py``).
"""

from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn import io, theory
from specdyn.experiments.nonlinear_figures.claims import fig4_claims_of
from specdyn.experiments.nonlinear_figures.config import Fig4Config, full_fig4
from specdyn.experiments.nonlinear_figures.readings import theory_slopes
from specdyn.experiments.nonlinear_figures.wrong import FIG4_WRONG
from specdyn.measure.exponents import fit_exponents
from specdyn.plot import save_figure
from specdyn.plot.nonlinear import TITLE_SIZE, plot_spectra_and_slopes
from specdyn.runs.registry import ExperimentResult, Measured, register
from specdyn.sim.trajectory import Trajectory
from specdyn.sim.two_layer import train_two_layer
from specdyn.theory.effective import effective_setting, linear_coefficient


@register("fig4", "Fig. 4: slope of a ReLU student's preactivation spectrum, "
          "feature-learning vs lazy", Fig4Config, full=full_fig4, claims=fig4_claims_of,
          wrong_models=FIG4_WRONG,
          wrong_na={"temperature": "full-batch GD on a fixed sample: no noise, no "
                                   "temperature"},
          measured={"fig4_slopes.parquet": Measured(("slope_sim",), by=("regime",)),
                    "fig4.parquet": Measured(("value",), by=("regime", "quantity"))})
def run_fig4(cfg: Fig4Config, out_dir: Path) -> ExperimentResult:
    runs: dict[str, Trajectory] = {}
    walls: dict[str, float] = {}
    for name, s in cfg.settings().items():
        start = time.perf_counter()
        runs[name] = train_two_layer(
            s, cfg.activation, N=cfg.N, M=cfg.M, steps=cfg.steps, dt=cfg.dt,
            parameterization=cfg.parameterization, optimizer="gd",
            checkpoints=cfg.checkpoints, record=("preact",), seed=cfg.seed,
            dtype=cfg.dtype, device=cfg.device, precision=cfg.precision,
            progress=True)  # long runs: their bars (entry points default to none)
        walls[name] = time.perf_counter() - start

    settings = cfg.settings()
    k_mid = float(np.sqrt(cfg.kmin * cfg.kmax))
    frames, slope_rows = [], []
    summary: dict[str, Any] = {}
    spectra_plot, slopes_plot, effective = {}, {}, {}
    for name, tr in runs.items():
        s = settings[name]
        sim = fit_exponents(tr.spectra, cfg.kmin, cfg.kmax)
        lin = theory_slopes(s, tr.times, cfg.kmin, cfg.kmax)
        s_eff = effective_setting(s, cfg.activation)
        lin_eff = theory_slopes(s_eff, tr.times, cfg.kmin, cfg.kmax)
        a_eff = theory.alpha_eff(s, k_mid, tr.times)
        df = tr.to_frame()
        df.insert(0, "regime", name)
        frames.append(df)
        slope_rows.append(pd.DataFrame({
            "regime": name, "step": tr.steps, "t": tr.times, "slope_sim": sim,
            "slope_linear_theory": lin, "slope_linear_theory_effective_gamma0": lin_eff,
            "alpha_eff_theory_kmid": a_eff,
        }))
        effective[name] = lin_eff
        spectra_plot[name] = (tr.times, tr.spectra)
        slopes_plot[name] = (tr.times, sim, lin)
        change = sim - sim[0]
        dev = sim - lin
        i_dev = int(np.argmax(np.abs(dev)))
        summary[name] = {
            "setting": s.to_dict(),
            "wall_time_s": walls[name],
            "time_per_step_ms": 1e3 * walls[name] / cfg.steps,
            "slope_initial": float(sim[0]), "slope_final": float(sim[-1]),
            "slope_max": float(sim.max()), "t_of_slope_max": float(tr.times[int(sim.argmax())]),
            "max_abs_change": float(np.abs(change).max()),
            "final_change": float(change[-1]),
            "linear_theory_slope_final": float(lin[-1]),
            "linear_theory_slope_max": float(lin.max()),
            "linear_theory_max_abs_change": float(np.abs(lin - lin[0]).max()),
            "max_abs_sim_minus_theory": float(np.abs(dev[i_dev])),
            "t_of_max_abs_sim_minus_theory": float(tr.times[i_dev]),
            "final_sim_minus_theory": float(dev[-1]),
            "effective_gamma0": s_eff.gamma0,
            "max_abs_sim_minus_effective_theory": float(np.abs(sim - lin_eff).max()),
        }
    fl, lz = summary["feature-learning"], summary["lazy"]
    summary["k_range"] = [cfg.kmin, cfg.kmax]
    summary["lazy_over_feature_learning_max_change"] = (
        lz["max_abs_change"] / fl["max_abs_change"])

    s_fl = settings["feature-learning"]
    c1 = linear_coefficient(cfg.activation, s_fl.sigma_w**2 * float(s_fl.spectra()[0].sum()))
    summary["c1"] = c1
    fig = plot_spectra_and_slopes(spectra_plot, slopes_plot, alpha=cfg.alpha, beta=cfg.beta,
                                  k_range=(cfg.kmin, cfg.kmax), effective=effective,
                                  effective_label=r"effective theory ($\gamma_0/c_1$)",
                                  note=f"final (FL): simulation {fl['slope_final']:.2f}, "
                                       f"linear theory {fl['linear_theory_slope_final']:.2f}")
    fig.suptitle(f"{cfg.activation} student, {cfg.parameterization}, D = P = {cfg.D}, "
                 f"N = {cfg.N}, M = {cfg.M}, GD dt = {cfg.dt:g}, {cfg.dtype}\n"
                 f"$c_1 = E[\\phi'(h)]$ = first Hermite coefficient of the activation "
                 f"({cfg.activation}: $c_1$ = {c1:.3g}): the slope of its linear part; the "
                 f"linear theory at $\\gamma_0/c_1$ is the linear network closest to it",
                 fontsize=TITLE_SIZE)
    slopes_df = pd.concat(slope_rows, ignore_index=True)
    figures = save_figure(fig, out_dir / "fig4")
    tables = [io.write_table(pd.concat(frames, ignore_index=True), out_dir / "fig4.parquet"),
              io.write_table(slopes_df, out_dir / "fig4_slopes.parquet")]
    io.write_json({"config": asdict(cfg), "runs": {k: tr.meta for k, tr in runs.items()}},
                  out_dir / "fig4_runs.json")
    return ExperimentResult("fig4", out_dir, figures=figures, tables=tables, summary=summary)
