"""The linear figures' runs: fig2 and finite-size train the linear network and write their
tables, figures and summaries.

Each run trains the linear network (:func:`specdyn.sim.linear.train_linear`), writes the
tables its claims read (:mod:`specdyn.experiments.linear_figures.claims`) and draws the figure.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn import io, theory
from specdyn._progress import progress
from specdyn.experiments.linear_figures.claims import fig2_claims_of, finite_size_claims_of
from specdyn.experiments.linear_figures.config import (
    Fig2Config,
    FiniteSizeConfig,
    full_fig2,
    full_finite_size,
)
from specdyn.experiments.linear_figures.readings import (
    LOCAL_RANKS,
    finite_size_level,
    gd_exponent,
    late_start,
    spread_end,
    upper_half_slope,
    upper_sizes,
)
from specdyn.experiments.linear_figures.wrong import FIG2_WRONG, FINITE_SIZE_WRONG
from specdyn.measure.exponents import loglog_fit, two_point_exponent
from specdyn.plot import linear as lplot
from specdyn.plot import save_figure
from specdyn.runs.registry import ExperimentResult, Measured, register
from specdyn.schedule import Schedule
from specdyn.sim.linear import train_linear
from specdyn.sim.overlay import theory_agreement, theory_spectra
from specdyn.sim.protocol import derive_seed


@register("fig2", "Fig. 2: finite-width linear network vs the exact spectrum dynamics",
          Fig2Config, full=full_fig2, claims=fig2_claims_of, wrong_models=FIG2_WRONG,
          wrong_na={"temperature": "full-batch GD on a fixed sample: no noise, no "
                                   "temperature"},
          measured={"fig2.parquet": Measured(("rho_sim",)),
                    "fig2_alpha.parquet": Measured(
                        ("alpha_eff",), where={"source": ("simulation-local-k1-2",)})})
def run_fig2(cfg: Fig2Config, out_dir: Path) -> ExperimentResult:
    s = cfg.setting()
    start = time.perf_counter()
    tr = train_linear(s, cfg.N, cfg.M, cfg.steps, dt=cfg.dt, engine="gram",
                      checkpoints=cfg.checkpoints, seed=cfg.seed, dtype=cfg.dtype,
                      progress=True)  # one long run: its bar (entry points default to none)
    sim_wall = time.perf_counter() - start
    th = theory_spectra(tr, s)
    k = np.arange(1, cfg.D + 1)

    # panel (a): t = 0 and log-spaced checkpoints
    pos = tr.times[tr.times > 0]
    want = np.geomspace(pos.min(), pos.max(), cfg.n_curves - 1)
    rows = np.unique([0] + [int(np.argmin(np.abs(np.log(tr.times[1:] / w)))) + 1
                            for w in want])
    # panel (b): the theory's exact derivative at k = 1 on a fine grid from t = 0, and one
    # estimator -- the two-point slope at k = 1, log(rho_1/rho_2)/log 2 -- applied to the
    # theory's and to the simulation's spectrum alike
    t_fine = np.concatenate([[0.0], np.geomspace(max(pos.min(), 1e-2), pos.max(), 300)])
    alpha_exact = theory.alpha_eff(s, 1.0, t_fine)
    rho_fine = theory.rho(s, np.asarray(LOCAL_RANKS, dtype=float)[None, :], t_fine[:, None])
    alpha_local_theory = two_point_exponent(rho_fine, LOCAL_RANKS)
    alpha_sim = two_point_exponent(tr.spectra, LOCAL_RANKS)
    alpha_th_ck = two_point_exponent(th, LOCAL_RANKS)
    alpha_gd = gd_exponent(s, tr.steps, cfg.dt)
    late_t = late_start(s)
    late = tr.times >= late_t
    gap = float(np.median(alpha_sim[late] - alpha_th_ck[late])) if late.any() else float("nan")
    worst = int(np.argmax(np.abs(alpha_sim - alpha_th_ck)))
    step_part = alpha_gd - alpha_th_ck  # the GD step alone (N = M = inf)
    size_part = alpha_sim - alpha_gd  # finite N and M alone
    why = (f"sim - Eq. (12): late (t >= {late_t:.3g}) {gap:+.3f}, largest "
           f"{alpha_sim[worst] - alpha_th_ck[worst]:+.3f} (t = {tr.times[worst]:g})\n"
           f"GD step dt = {cfg.dt:g} (discrete - Eq. 12): largest "
           f"{step_part[np.argmax(np.abs(step_part))]:+.3f}\n"
           f"finite N = {cfg.N}, M = {cfg.M} (sim - discrete): largest "
           f"{size_part[np.argmax(np.abs(size_part))]:+.3f}")

    # the spread seeds, through the transient: the size the run's deviation should have
    t_end = spread_end(s)
    early = tr.steps[tr.times <= t_end]
    spread = []
    for i in range(cfg.spread_seeds):
        seed = derive_seed(cfg.seed, "spread", i)
        ref = train_linear(s, cfg.N, cfg.M, int(early.max()), dt=cfg.dt, engine="gram",
                           checkpoints=early, seed=seed, dtype=cfg.dtype, progress=False)
        spread.append(pd.DataFrame({"seed": int(seed), "step": np.repeat(ref.steps, cfg.D),
                                    "t": np.repeat(ref.times, cfg.D),
                                    "k": np.tile(k, len(ref)), "rho_sim": ref.spectra.ravel()}))
    # the Gram engine at N = M = inf on modes 1-2 (they decouple there): the discrete-time
    # theory's independent check through the transient
    inf = train_linear(s.with_D(len(LOCAL_RANKS)), None, None, int(early.max()), dt=cfg.dt,
                       engine="gram", checkpoints=early, seed=cfg.seed, dtype="float64",
                       progress=False)

    fig = lplot.fig2(tr.times[rows], k, th[rows], tr.spectra[rows], t_fine, alpha_exact,
                     alpha_local_theory, tr.times, alpha_sim, local_ranks=LOCAL_RANKS,
                     alpha_gd=alpha_gd, note=why, symlog_t=cfg.dt, late_t=late_t,
                     title=f"D = P = {cfg.D}, N = {cfg.N}, M = {cfg.M}, GD dt = {cfg.dt:g}, "
                           f"{cfg.dtype}, Gram engine")
    figures = save_figure(fig, out_dir / "fig2")

    spectra = pd.DataFrame({
        "step": np.repeat(tr.steps, cfg.D), "t": np.repeat(tr.times, cfg.D),
        "k": np.tile(k, len(tr)), "rho_sim": tr.spectra.ravel(), "rho_theory": th.ravel(),
    })
    alpha = pd.concat([
        pd.DataFrame({"t": t_fine, "source": "theory-exact-k1", "alpha_eff": alpha_exact}),
        pd.DataFrame({"t": t_fine, "source": "theory-local-k1-2",
                      "alpha_eff": alpha_local_theory}),
        pd.DataFrame({"t": tr.times, "source": "theory-local-k1-2-checkpoints",
                      "alpha_eff": alpha_th_ck}),
        pd.DataFrame({"t": tr.times, "source": "theory-gd-local-k1-2-checkpoints",
                      "alpha_eff": alpha_gd}),
        pd.DataFrame({"t": inf.times, "source": "engine-infinite-k1-2",
                      "alpha_eff": two_point_exponent(inf.spectra, LOCAL_RANKS)}),
        pd.DataFrame({"t": tr.times, "source": "simulation-local-k1-2",
                      "alpha_eff": alpha_sim}),
    ], ignore_index=True)
    agree = theory_agreement(tr, s)
    tables = [io.write_table(spectra, out_dir / "fig2.parquet"),
              io.write_table(alpha, out_dir / "fig2_alpha.parquet"),
              io.write_table(agree, out_dir / "fig2_agreement.parquet"),
              io.write_table(tr.to_frame(), out_dir / "fig2_trajectory.parquet"),
              io.write_table(pd.concat(spread, ignore_index=True),
                             out_dir / "fig2_spread.parquet")]
    io.write_json({"setting": s.to_dict(), "config": asdict(cfg), "run": tr.meta},
                  out_dir / "fig2_settings.json")
    summary = {
        "sim_wall_time_s": sim_wall,
        "time_per_step_ms": 1e3 * sim_wall / cfg.steps,
        "final_median_abs_log": float(agree.median_abs_log.iloc[-1]),
        "final_max_abs_log": float(agree.max_abs_log.iloc[-1]),
        "max_abs_alpha_sim_minus_theory_local": float(np.max(np.abs(alpha_sim - alpha_th_ck))),
        "late_alpha_sim_minus_theory_local": gap,
        "max_abs_alpha_sim_minus_discrete_theory": float(np.max(np.abs(alpha_sim - alpha_gd))),
        "max_abs_alpha_discrete_minus_flow_theory": float(np.max(np.abs(alpha_gd
                                                                        - alpha_th_ck))),
        "late_window_t_min": late_t,
        "alpha_theory_exact_range": [float(alpha_exact.min()), float(alpha_exact.max())],
    }
    return ExperimentResult("fig2", out_dir, figures=figures, tables=tables, summary=summary)


@register("finite-size", "agreement of finite-N / finite-M linear networks with the theory",
          FiniteSizeConfig, full=full_finite_size, claims=finite_size_claims_of,
          wrong_models=FINITE_SIZE_WRONG,
          wrong_na={"temperature": "gradient flow on a fixed sample or the population: no "
                                   "noise, no temperature"},
          measured={"finite-size.parquet": Measured(("median_abs_log", "max_abs_log"),
                                                    by=("axis",)),
                    "finite-size_cells.parquet": Measured(("rho_sim",), by=("axis",))})
def run_finite_size(cfg: FiniteSizeConfig, out_dir: Path) -> ExperimentResult:
    s = cfg.setting()
    # t is continuous (gradient flow); "steps" are units of dt = t_max / 1000.
    dt = cfg.t_max / 1000.0
    # ``checkpoints`` log-spaced steps in [1, 1000]; step 0 is left out of the mean over t
    ck = Schedule.log(cfg.checkpoints + 1).resolve(1000)[1:]
    rows, cells = [], []
    k = np.arange(1, cfg.D + 1)
    runs = [(axis, size, rep) for axis in ("N", "M") for size in cfg.sizes
            for rep in range(cfg.n_seeds)]
    for axis, size, rep in progress(runs, total=len(runs), desc="finite-size"):
        N, M = (size, None) if axis == "N" else (None, size)
        seed = derive_seed(cfg.seed, "rep", rep)  # the same repeats at every size
        tr = train_linear(s, N, M, 1000, dt=dt, method="flow", checkpoints=ck,
                          seed=seed, progress=False)
        ag = theory_agreement(tr, s)
        n = len(tr)
        cells.append(pd.DataFrame({"axis": axis, "size": size, "seed": int(seed),
                                   "t": np.repeat(tr.times, cfg.D), "k": np.tile(k, n),
                                   "rho_sim": tr.spectra.ravel(),
                                   "rho_theory": theory_spectra(tr, s).ravel()}))
        rows.append({"axis": axis, "size": size, "seed": seed,
                     "median_abs_log": float(ag.median_abs_log.mean()),
                     "max_abs_log": float(ag.max_abs_log.mean())})
    df = pd.DataFrame(rows)
    tables = [io.write_table(df, out_dir / "finite-size.parquet"),
              io.write_table(pd.concat(cells, ignore_index=True),
                             out_dir / "finite-size_cells.parquet")]
    summary: dict[str, Any] = {}
    agg, notes = {}, {}
    all_cells = pd.concat(cells, ignore_index=True)
    for axis in ("N", "M"):
        lv = finite_size_level(all_cells, s, axis, upper_sizes(np.array(cfg.sizes)))
        summary[f"level_rms_vs_{axis}"] = {"measured": lv.measured,
                                           "finite_size_theory": lv.predicted,
                                           "standardized": lv.standardized,
                                           "valid_cells": lv.cells}
        notes[axis] = (f"level (upper half, {lv.cells} valid cells):\nRMS log error "
                       f"{lv.measured:.3g}, finite-size theory {lv.predicted:.3g};\n"
                       f"in units of each cell's predicted size: {lv.standardized:.3g} "
                       "(theory: 1)")
        g = df[df.axis == axis].groupby("size")
        mean, sd = g.median_abs_log.mean(), g.median_abs_log.std().fillna(0.0)
        sizes = mean.index.to_numpy(dtype=float)
        slope = loglog_fit(sizes, mean.to_numpy())[0]
        slope_max = loglog_fit(sizes, g.max_abs_log.mean().to_numpy())[0]
        summary[f"slope_median_vs_{axis}"] = slope
        slope_upper = upper_half_slope(df, axis)
        summary[f"slope_median_vs_{axis}_upper_half"] = slope_upper
        summary[f"slope_max_vs_{axis}"] = slope_max
        summary[f"monotone_in_{axis}"] = bool(np.all(np.diff(mean.to_numpy()) < 0))
        agg[axis] = (sizes, mean.to_numpy(), sd.to_numpy(), slope, slope_upper)
    fig = lplot.finite_size(agg["N"], agg["M"],
                            metric="median over modes of |log rho_sim/rho_th|, mean over t",
                            notes=notes,
                            title=f"D = P = {cfg.D}, gradient flow to t = {cfg.t_max:g}, "
                                  f"{cfg.n_seeds} seeds")
    figures = save_figure(fig, out_dir / "finite-size")
    io.write_json({"setting": s.to_dict(), "config": asdict(cfg)},
                  out_dir / "finite-size_settings.json")
    return ExperimentResult("finite-size", out_dir, figures=figures, tables=tables,
                            summary=summary)
