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
from specdyn.experiments.paper_setting import PaperSettingConfig
from specdyn.measure.exponents import fit_exponents, loglog_fit, two_point_exponent
from specdyn.plot import linear as lplot
from specdyn.plot import save_figure
from specdyn.runs.claims import Claim, learning_order, loglog_slope, within
from specdyn.runs.registry import ExperimentResult, Measured, register
from specdyn.schedule import Schedule
from specdyn.settings import PowerLawSetting
from specdyn.sim.linear import train_linear
from specdyn.sim.overlay import theory_agreement, theory_spectra
from specdyn.sim.protocol import derive_seed

FIT_RANKS = (1, 2, 3)  # ranks of a local log-log fit (kept for fit_exponent's callers)
LOCAL_RANKS = (1, 2)  # the two-point local exponent at k = 1 of fig2's panel (b)

# fig2's claims: every tolerance fixed before the run.
#: Ranks of the t = 0 exponent fit: the top of the spectrum, where a sample covariance of
#: M >= 8 D samples moves a level by a few percent (its tail bends with D/M).
INIT_KMIN, INIT_KMAX = 2, 16
_INIT_FIT = f"the t = 0 exponent fit uses ranks {INIT_KMIN}..{INIT_KMAX}"
#: |fitted exponent - alpha| at t = 0.
INIT_TOL = 0.1
#: median over ranks of |log rho_sim / rho_theory|, at every checkpoint.
SPECTRUM_TOL = 0.25
#: |two-point exponent at k = 1: simulation - theory|.
EXPONENT_TOL = 0.15
#: Why the core paper's "closely match" is not expected of the k = 1 exponent at every time:
#: measured on the quick setting (D = 128, seed 0, steps 1-6) before this claim was written.
EXPONENT_DISPUTED = ("the top pair of a sample covariance is spread at finite M: with N = inf "
                     "and GD the k = 1 exponent gap is 0.36-0.40 at t = 1-6 for M = 1024 (0.1 "
                     "with M = inf, 0 for flow); 0.2 at the paper's N = 8192, M = 4096")
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
GROWTH, GROWTH_TOL, SINH_ARG = 2.0, 0.2, 0.3



@dataclass(frozen=True)
@v.constrained_fields(D=v.Int(INIT_KMAX, why=_INIT_FIT), N=v.SIZE,
                      M=v.Int(INIT_KMAX, why=_INIT_FIT), steps=v.SIZE, dt=v.POSITIVE,
                      checkpoints=v.SIZE, n_curves=v.Int(2),
                      dtype=v.Choice("float32", "float64"))
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



def _fig2_full() -> Fig2Config:
    # Appendix G: D = P = 512, N = 8192, M = 4096; 3e4 steps so mode 512 has learned.
    # float32 halves the cost of the O(D^3) step; spectra are taken in float64.
    return Fig2Config(D=512, N=8192, M=4096, steps=30_000, dtype="float32")


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
    return [
        within(f"t = 0: simulation's exponent over ranks {INIT_KMIN}..{INIT_KMAX} is alpha",
               init, cfg.alpha - INIT_TOL, cfg.alpha + INIT_TOL, source="core Sec. 3.1",
               note="'at initialization rho_k(0) has the same exponent alpha as lambda_k': "
                    "tests the finite network's initial Gram (Wishart at N) and sample "
                    "covariance (M) through the measurement, not the dynamics"),
        within("every checkpoint: median |log rho_sim/rho_theory|", float(err.max()), 0.0,
               SPECTRUM_TOL, source="core Sec. 3.1, Fig. 2(a)",
               note=f"'the analytical solution closely matches finite-width networks'; worst "
                    f"at t = {float(err.idxmax()):g}, over ranks 1..D with a nonzero "
                    f"eigenvalue"),
        within("every checkpoint: |simulation - theory| of the k = 1 exponent",
               float(np.abs(diff[i])), 0.0, EXPONENT_TOL, source="core Sec. 3.1, Fig. 2(b)",
               note=f"worst at t = {times[i]:g}; the same two-point slope "
                    f"log(rho_1/rho_2)/log 2 of both", disputed=EXPONENT_DISPUTED),
        within(f"late (t >= t_learn(2) = {late_t:.3g}): simulation - theory, k = 1 exponent",
               gap, -EXPONENT_TOL, EXPONENT_TOL, source="core Sec. 3.1, Fig. 2(b)",
               note="median over the checkpoints of a window fixed by the theory (both ranks "
                    "learned); finite N, M and GD vs flow separate them; both curves are flat "
                    "there, so a wrong table at that level passes: the shape claim is its "
                    "partner", partner=SHAPE_NAME),
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
               note=f"pooled log-log slope of rho_k(t) - rho_k(0) against t, each rank while "
                    f"2 lambda_k theta_k t / gamma0 <= {SINH_ARG:g} (sinh linear, Eq. 21); the "
                    f"exact theory's own slope there is 1.93; tolerance fixed from it and a "
                    f"pilot run (seed 1: 1.96); the sinh growth beyond is checked by fig3 "
                    "on the theory's deep panel (here l_k is not << 1 where sinh x != x)"),
        within(SHAPE_NAME, curve_correlation(sim.alpha_eff.to_numpy(), th.alpha_eff.to_numpy()),
               SHAPE_MIN, 1.0, source="core Sec. 3.1, Fig. 2(b)",
               note="Pearson correlation over the checkpoints of the two-point exponent "
                    "log(rho_1/rho_2)/log 2, simulation against theory: the exponent 'can "
                    "change during training' and the simulation changes as the theory does; "
                    f"{SHAPE_MIN:g} fixed from a pilot run (quick size, seed 1: 0.9994)"),
    ]


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


def _fig2_claims_of(cfg: Fig2Config, folder: Path) -> list[Claim]:
    return fig2_claims(pd.read_parquet(folder / "fig2.parquet"),
                       pd.read_parquet(folder / "fig2_alpha.parquet"), cfg)


@register("fig2", "Fig. 2: finite-width linear network vs the exact spectrum dynamics",
          Fig2Config, full=_fig2_full, claims=_fig2_claims_of,
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
    late_t = late_start(s)
    late = tr.times >= late_t
    gap = float(np.median(alpha_sim[late] - alpha_th_ck[late])) if late.any() else float("nan")
    worst = int(np.argmax(np.abs(alpha_sim - alpha_th_ck)))
    why = (f"simulation - theory: late (t >= {late_t:.3g}) {gap:+.3f}, largest "
           f"{alpha_sim[worst] - alpha_th_ck[worst]:+.3f} at t = {tr.times[worst]:g}\n"
           f"separating them: finite width "
           f"N = {cfg.N},\nfinite samples M = {cfg.M} (the sample covariance is not "
           f"$\\Lambda$),\nGD with dt = {cfg.dt:g} against gradient flow")

    fig = lplot.fig2(tr.times[rows], k, th[rows], tr.spectra[rows], t_fine, alpha_exact,
                     alpha_local_theory, tr.times, alpha_sim, local_ranks=LOCAL_RANKS,
                     note=why, symlog_t=cfg.dt, late_t=late_t,
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
        "late_window_t_min": late_t,
        "alpha_theory_exact_range": [float(alpha_exact.min()), float(alpha_exact.max())],
    }
    return ExperimentResult("fig2", out_dir, figures=figures, tables=tables, summary=summary)


@dataclass(frozen=True)
@v.constrained_fields(sizes=v.Tuple(v.SIZE, min_len=2, why="two sizes at least, to fit a slope"),
                      t_max=v.POSITIVE, checkpoints=v.Int(2), n_seeds=v.SIZE)
class FiniteSizeConfig(PaperSettingConfig):
    """Agreement with theory vs width and samples. Defaults: quick; ``--full``: larger.

    ``checkpoints`` is a count of log-spaced steps (``Schedule.log``), as everywhere;
    step 0 is not recorded (the agreement is averaged over the dynamics, ``t > 0``).
    """

    sizes: tuple[int, ...] = (64, 128, 256, 512, 1024, 2048, 4096)
    t_max: float = 1000.0
    checkpoints: int = 12
    n_seeds: int = 3



def _finite_size_full() -> FiniteSizeConfig:
    return FiniteSizeConfig(D=64, sizes=(64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384),
                            t_max=2000.0, n_seeds=5)


#: The error slope against N or M: fluctuations of a Wishart Gram or of a sample covariance
#: fall as size^(-1/2); +- 0.2 for the few sizes and seeds of a run.
SIZE_SLOPE, SIZE_SLOPE_TOL = -0.5, 0.2


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
                   SIZE_SLOPE - SIZE_SLOPE_TOL, SIZE_SLOPE + SIZE_SLOPE_TOL, source="own",
                   note="fluctuations of a Wishart Gram (N) or sample covariance (M): "
                        "size^(-1/2), the seed-mean error falling at every step of the upper "
                        "half of the sizes (NaN where it does not); the core paper states no "
                        "rate", revised=SLOPE_REVISED)
            for axis in ("N", "M")]


def _finite_size_claims_of(cfg: FiniteSizeConfig, folder: Path) -> list[Claim]:
    return finite_size_slope_claims(pd.read_parquet(folder / "finite-size.parquet"), cfg)


@register("finite-size", "agreement of finite-N / finite-M linear networks with the theory",
          FiniteSizeConfig, full=_finite_size_full, claims=_finite_size_claims_of,
          measured={"finite-size.parquet": Measured(("median_abs_log", "max_abs_log"),
                                                    by=("axis",))})
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
        seed = derive_seed(cfg.seed, "rep", rep)  # the same repeats at every size
        tr = train_linear(s, N, M, 1000, dt=dt, method="flow", checkpoints=ck,
                          seed=seed, progress=False)
        ag = theory_agreement(tr, s)
        rows.append({"axis": axis, "size": size, "seed": seed,
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
                            title=f"D = P = {cfg.D}, gradient flow to t = {cfg.t_max:g}, "
                                  f"{cfg.n_seeds} seeds")
    figures = save_figure(fig, out_dir / "finite-size")
    io.write_json({"setting": s.to_dict(), "config": asdict(cfg)},
                  out_dir / "finite-size_settings.json")
    return ExperimentResult("finite-size", out_dir, figures=figures, tables=tables,
                            summary=summary)
