"""Finite-width simulations of the linear network: Fig. 2 and a finite-size study.

``fig2``: the paper's Fig. 2 (Appendix G) with the exact Gram-space engine:
full-batch GD, learning rate ``nu = N``, ``dt = 1`` (``t = step``), spectra of
``H H^T/(MN)`` against the closed form. ``finite-size``: how the agreement
with the (infinite-width, population) theory improves with the width ``N`` at
``M = inf`` and with the number of samples ``M`` at ``N = inf`` (gradient flow,
so that nothing but the finite size separates simulation and theory).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn import _validate as v
from specdyn import io, theory
from specdyn._progress import progress
from specdyn.experiments.claims import within
from specdyn.experiments.paper_setting import PaperSettingConfig
from specdyn.experiments.registry import ExperimentResult, register
from specdyn.measure.exponents import two_point_exponent
from specdyn.plot import linear as lplot
from specdyn.plot import save_figure
from specdyn.schedule import Schedule
from specdyn.sim.linear import train_linear
from specdyn.sim.overlay import theory_agreement, theory_spectra

FIT_RANKS = (1, 2, 3)  # ranks of a local log-log fit (kept for fit_exponent's callers)
LOCAL_RANKS = (1, 2)  # the two-point local exponent at k = 1 of fig2's panel (b)


@dataclass(frozen=True)
class Fig2Config(PaperSettingConfig):
    """Fig. 2. Defaults: a laptop-sized version; ``--full``: the paper's sizes.

    ``checkpoints`` is a count of log-spaced steps (``Schedule.log``), as everywhere.
    """

    D: int = 128
    N: int = 2048
    M: int = 1024
    steps: int = 10_000
    dt: float = 1.0
    checkpoints: int = 60
    n_curves: int = 8
    dtype: str = "float64"

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("N", "M", "steps", "checkpoints"):
            v.positive_int(name, getattr(self, name))
        v.positive_int("n_curves", self.n_curves, minimum=2)
        v.positive("dt", self.dt)
        v.choice("dtype", self.dtype, ("float32", "float64"))
        if self.D < max(FIT_RANKS):
            raise ValueError(f"D must be >= {max(FIT_RANKS)} for the exponent fit, got {self.D}")


def _fig2_full() -> Fig2Config:
    # Appendix G: D = P = 512, N = 8192, M = 4096; 3e4 steps so mode 512 has learned.
    # float32 halves the cost of the O(D^3) step; spectra are taken in float64.
    return Fig2Config(D=512, N=8192, M=4096, steps=30_000, dtype="float32")


@register("fig2", "Fig. 2: finite-width linear network vs the exact spectrum dynamics",
          Fig2Config, full=_fig2_full)
def run_fig2(cfg: Fig2Config, out_dir: Path) -> ExperimentResult:
    s = cfg.setting()
    start = time.perf_counter()
    tr = train_linear(s, cfg.N, cfg.M, cfg.steps, dt=cfg.dt, engine="gram",
                      checkpoints=cfg.checkpoints, seed=cfg.seed, dtype=cfg.dtype)
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
    late = tr.times >= 0.5 * tr.times[-1]
    gap = float(np.median(alpha_sim[late] - alpha_th_ck[late]))
    why = (f"simulation - theory, late: {gap:+.3f}\nseparating them: finite width "
           f"N = {cfg.N},\nfinite samples M = {cfg.M} (the sample covariance is not "
           f"$\\Lambda$),\nGD with dt = {cfg.dt:g} against gradient flow")

    fig = lplot.fig2(tr.times[rows], k, th[rows], tr.spectra[rows], t_fine, alpha_exact,
                     alpha_local_theory, tr.times, alpha_sim, local_ranks=LOCAL_RANKS,
                     note=why, symlog_t=cfg.dt,
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
        pd.DataFrame({"t": tr.times, "source": "simulation-local-k1-2",
                      "alpha_eff": alpha_sim}),
    ], ignore_index=True)
    agree = theory_agreement(tr, s)
    tables = [io.write_table(spectra, out_dir / "fig2.parquet"),
              io.write_table(alpha, out_dir / "fig2_alpha.parquet"),
              io.write_table(agree, out_dir / "fig2_agreement.parquet"),
              io.write_table(tr.to_frame(), out_dir / "fig2_trajectory.parquet")]
    io.write_json({"setting": s.to_dict(), "config": asdict(cfg), "run": tr.meta},
                  out_dir / "fig2_settings.json")
    summary = {
        "sim_wall_time_s": sim_wall,
        "time_per_step_ms": 1e3 * sim_wall / cfg.steps,
        "final_median_abs_log": float(agree.median_abs_log.iloc[-1]),
        "final_max_abs_log": float(agree.max_abs_log.iloc[-1]),
        "max_abs_alpha_sim_minus_theory_local": float(np.max(np.abs(alpha_sim - alpha_th_ck))),
        "late_alpha_sim_minus_theory_local": gap,
        "alpha_theory_exact_range": [float(alpha_exact.min()), float(alpha_exact.max())],
    }
    claims = [
        within("t = 0: simulation's k = 1 exponent", float(alpha_sim[0]), cfg.alpha - 0.1,
               cfg.alpha + 0.1, note="two-point slope log(rho_1/rho_2)/log 2 of the initial "
               "spectrum; the theory's is alpha exactly"),
        within("late: simulation - theory, k = 1 exponent", gap, -0.15, 0.15,
               note="same two-point estimator on both; finite N, M and GD vs flow separate "
                    "them"),
        within("end: median |log rho_sim/rho_theory|", float(agree.median_abs_log.iloc[-1]), 0.0,
               0.25, note="over ranks 1..D at the last checkpoint"),
    ]
    return ExperimentResult("fig2", out_dir, figures=figures, tables=tables, summary=summary,
                            claims=claims)


@dataclass(frozen=True)
class FiniteSizeConfig(PaperSettingConfig):
    """Agreement with theory vs width and samples. Defaults: quick; ``--full``: larger.

    ``checkpoints`` is a count of log-spaced steps (``Schedule.log``), as everywhere;
    step 0 is not recorded (the agreement is averaged over the dynamics, ``t > 0``).
    """

    sizes: tuple[int, ...] = (64, 128, 256, 512, 1024, 2048, 4096)
    t_max: float = 1000.0
    checkpoints: int = 12
    n_seeds: int = 3

    def __post_init__(self) -> None:
        super().__post_init__()
        if len(self.sizes) < 2:
            raise ValueError("sizes must hold at least two sizes to fit a slope")
        for n in self.sizes:
            v.positive_int("sizes", n)
        v.positive("t_max", self.t_max)
        v.positive_int("checkpoints", self.checkpoints, minimum=2)
        v.positive_int("n_seeds", self.n_seeds)


def _finite_size_full() -> FiniteSizeConfig:
    return FiniteSizeConfig(D=64, sizes=(64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384),
                            t_max=2000.0, n_seeds=5)


@register("finite-size", "agreement of finite-N / finite-M linear networks with the theory",
          FiniteSizeConfig, full=_finite_size_full)
def run_finite_size(cfg: FiniteSizeConfig, out_dir: Path) -> ExperimentResult:
    s = cfg.setting()
    # t is continuous (gradient flow); "steps" are units of dt = t_max / 1000.
    dt = cfg.t_max / 1000.0
    # ``checkpoints`` log-spaced steps in [1, 1000]; step 0 is left out of the mean over t
    ck = Schedule.log(cfg.checkpoints + 1).resolve(1000)[1:]
    rows = []
    runs = [(axis, size, rep) for axis in ("N", "M") for size in cfg.sizes
            for rep in range(cfg.n_seeds)]
    for axis, size, rep in progress(runs, total=len(runs), desc="finite-size"):
        N, M = (size, None) if axis == "N" else (None, size)
        tr = train_linear(s, N, M, 1000, dt=dt, method="flow", checkpoints=ck,
                          seed=cfg.seed + rep, progress=False)
        ag = theory_agreement(tr, s)
        rows.append({"axis": axis, "size": size, "seed": cfg.seed + rep,
                     "median_abs_log": float(ag.median_abs_log.mean()),
                     "max_abs_log": float(ag.max_abs_log.mean())})
    df = pd.DataFrame(rows)
    tables = [io.write_table(df, out_dir / "finite-size.parquet")]
    summary: dict[str, Any] = {}
    agg = {}
    for axis in ("N", "M"):
        g = df[df.axis == axis].groupby("size")
        mean, sd = g.median_abs_log.mean(), g.median_abs_log.std().fillna(0.0)
        sizes = mean.index.to_numpy(dtype=float)
        slope = float(np.polyfit(np.log(sizes), np.log(mean.to_numpy()), 1)[0])
        slope_max = float(np.polyfit(np.log(sizes), np.log(g.max_abs_log.mean().to_numpy()),
                                     1)[0])
        summary[f"slope_median_vs_{axis}"] = slope
        # the curve steepens at small sizes (size ~ D); the upper half shows the asymptote
        half = len(sizes) // 2
        upper = sizes[half:] if len(sizes) - half >= 2 else sizes
        slope_upper = float(np.polyfit(np.log(upper), np.log(mean.to_numpy()[-len(upper):]),
                                       1)[0])
        summary[f"slope_median_vs_{axis}_upper_half"] = slope_upper
        summary[f"slope_max_vs_{axis}"] = slope_max
        summary[f"monotone_in_{axis}"] = bool(np.all(np.diff(mean.to_numpy()) < 0))
        agg[axis] = (sizes, mean.to_numpy(), sd.to_numpy(), slope, slope_upper)
    fig = lplot.finite_size(agg["N"], agg["M"],
                            metric="median over modes of |log rho_sim/rho_th|, mean over t",
                            title=f"D = P = {cfg.D}, gradient flow to t = {cfg.t_max:g}, "
                                  f"{cfg.n_seeds} seeds")
    figures = save_figure(fig, out_dir / "finite-size")
    io.write_json({"setting": s.to_dict(), "config": asdict(cfg)},
                  out_dir / "finite-size_settings.json")
    claims = [within(f"error slope against {axis}, upper half of the sizes",
                     summary[f"slope_median_vs_{axis}_upper_half"], -0.7, -0.3,
                     note="fluctuations of a Wishart Gram or sample covariance: size^(-1/2)")
              for axis in ("N", "M")]
    return ExperimentResult("finite-size", out_dir, figures=figures, tables=tables,
                            summary=summary, claims=claims)
