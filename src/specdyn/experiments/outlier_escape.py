"""Outlier escape during training (related work 1): three experiments.

``bbp-escape``
    Population GD of a linear student on a rank-one teacher: the top singular
    values against the predicted bulk edge and BBP outlier path, predicted and
    measured (first Tracy-Widom-flagged step) escape times, singular-vector
    alignment with the teacher.
``trainability``
    (learning rate, init variance) phase diagrams: a single-layer student under
    online SGD with label noise (measured cells, exact theory boundary) and a
    two-layer linear network in standard parameterisation (measured only, with
    the naive ``2 / sharpness`` line for comparison: catapults converge beyond it).
``lr-transfer``
    Loss after a fixed budget against the base learning rate for several widths
    under muP and NTK (depth-3 linear nets, power-law teacher), and the escape
    step of the hidden layer's top singular value against width.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn import Schedule, io
from specdyn import _validate as v
from specdyn._progress import progress
from specdyn.experiments.claims import within
from specdyn.experiments.registry import ExperimentResult, register
from specdyn.measure.outliers import find_outliers
from specdyn.plot import outlier_escape as oplot
from specdyn.plot import save_figure
from specdyn.sim import (
    DivergenceError,
    escape_step,
    rank_one_teacher,
    train_deep_linear,
    train_linear_student,
)
from specdyn.theory import outlier_escape as oe


def _run_or_partial(train: Any, *args: Any, **kwargs: Any) -> tuple[Any, int | None]:
    """A student's record and ``None``, or a diverged run's partial record and its step."""
    try:
        return train(*args, **kwargs), None
    except DivergenceError as err:
        return err.record, err.step


# --------------------------------------------------------------------------
# bbp-escape
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class BBPEscapeConfig:
    """Population GD, rank-one ``P x D`` teacher. Defaults: quick (~20 s); ``--full``: P = 1500."""

    P: int = 300
    D: int = 600
    theta: float = 0.005
    sigma0: float = 1.0
    lr: float = 0.05
    horizon: float = 1.6
    alpha: float = 0.01
    top_k: int = 6
    seed: int = 0

    def __post_init__(self) -> None:
        v.positive_int("P", self.P, minimum=3)
        v.positive_int("D", self.D, minimum=3)
        v.positive("theta", self.theta)
        v.positive("sigma0", self.sigma0)
        v.in_range("lr", self.lr, 0.0, 1.0, lo_open=True, hi_open=True)
        v.in_range("horizon", self.horizon, 1.0, 100.0, lo_open=True)
        v.in_range("alpha", self.alpha, 0.0, 1.0, lo_open=True, hi_open=True)
        v.positive_int("top_k", self.top_k)


def _bbp_full() -> BBPEscapeConfig:
    return BBPEscapeConfig(P=1500, D=3000, theta=0.0005, lr=0.02)


@register("bbp-escape", "outlier escape (BBP crossing) of a linear student under population GD",
          BBPEscapeConfig, full=_bbp_full)
def run_bbp_escape(cfg: BBPEscapeConfig, out_dir: Path) -> ExperimentResult:
    c = cfg.P / cfg.D
    W_star, _, _ = rank_one_teacher(cfg.P, cfg.D, cfg.theta, seed=cfg.seed)
    t_star = oe.bbp_crossing_time(cfg.theta, cfg.sigma0, c, cfg.lr)
    steps = int(np.ceil(cfg.horizon * t_star))
    # dense records around t*, sparse elsewhere: a union of two grids, which no one
    # Schedule kind spells (Schedule.every would add the last step), so explicit steps
    rec = np.unique(np.r_[np.arange(0, steps + 1, max(steps // 60, 1)),
                          np.arange(int(0.9 * t_star), min(int(1.15 * t_star), steps) + 1)])
    run = train_linear_student(W_star, method="population", lr=cfg.lr, steps=steps,
                               sigma0=cfg.sigma0, checkpoints=rec, top_k=None,
                               seed=cfg.seed + 1)
    flags = np.array([find_outliers(sv**2 / cfg.P, cfg.D / cfg.P, alpha=cfg.alpha).n_outliers
                      for sv in run.singular_values])
    t_meas = int(run.steps[np.argmax(flags > 0)]) if flags.any() else None
    flagged_before = int(flags[run.steps < t_star].sum())
    path = oe.population_gd_path(cfg.theta, cfg.sigma0, c, cfg.lr, run.steps)
    fine_t = np.linspace(0, steps, 600)
    fine = oe.population_gd_path(cfg.theta, cfg.sigma0, c, cfg.lr, fine_t)
    clear = path.singular_value > 1.1 * path.bulk_edge
    loc_err = (float(np.max(np.abs(run.singular_values[clear, 0] / path.singular_value[clear]
                                   - 1))) if clear.any() else None)
    k = min(cfg.top_k, run.singular_values.shape[1])
    rows = []
    for i, t in enumerate(run.steps):
        base = {"step": int(t), "flagged": int(flags[i])}
        for j in range(k):
            rows.append({**base, "quantity": f"sv{j + 1}", "source": "measured",
                         "value": run.singular_values[i, j]})
        rows += [
            {**base, "quantity": "left_overlap2", "source": "measured",
             "value": run.left_overlap2[i]},
            {**base, "quantity": "right_overlap2", "source": "measured",
             "value": run.right_overlap2[i]},
            {**base, "quantity": "bulk_edge", "source": "theory", "value": path.bulk_edge[i]},
            {**base, "quantity": "outlier", "source": "theory",
             "value": path.singular_value[i]},
            {**base, "quantity": "left_overlap2", "source": "theory",
             "value": path.left_overlap2[i]},
            {**base, "quantity": "right_overlap2", "source": "theory",
             "value": path.right_overlap2[i]},
        ]
    df = pd.DataFrame(rows)
    tables = [io.write_table(df, out_dir / "bbp-escape.parquet")]
    fig = oplot.plot_bbp_escape(
        run.steps, run.singular_values[:, :k], theory_steps=fine_t,
        bulk_edge=fine.bulk_edge, outlier=fine.singular_value, detected=fine.detected,
        t_star=t_star, t_measured=t_meas, left_overlap2=run.left_overlap2,
        right_overlap2=run.right_overlap2, theory_left2=fine.left_overlap2,
        theory_right2=fine.right_overlap2)
    figures = save_figure(fig, out_dir / "bbp-escape")
    summary = {
        "t_star": t_star,
        "escape_step_theory": oe.bbp_escape_step(cfg.theta, cfg.sigma0, c, cfg.lr),
        "escape_step_measured": t_meas,
        "escape_rel_error": None if t_meas is None else t_meas / t_star - 1.0,
        "flagged_before_t_star": flagged_before,
        "outlier_location_max_rel_error_when_clear": loc_err,
    }
    claims = [
        within("outliers flagged before t*", float(flagged_before), 0.0, 0.0,
               note="Tracy-Widom test at level alpha on the bulk before the BBP crossing"),
        within("measured escape / t* - 1", np.nan if t_meas is None else t_meas / t_star - 1.0,
               0.0, 0.25, note="first flagged step against the predicted BBP crossing time; "
                               "detection needs the outlier a fluctuation beyond the edge"),
    ]
    return ExperimentResult("bbp-escape", out_dir, figures=figures, tables=tables,
                            summary=summary, claims=claims)


# --------------------------------------------------------------------------
# trainability
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class TrainabilityConfig:
    """Phase diagrams. Defaults: quick (~40 s); ``--full``: finer grids, larger nets."""

    P: int = 32
    D: int = 32
    B: int = 4
    noise_std: float = 0.3
    theta: float = 1.0
    steps: int = 300
    tol: float = 0.05
    replicas: int = 4
    n_lr: int = 10
    n_var: int = 6
    lr_range: tuple[float, float] = (0.03, 1.4)
    var_range: tuple[float, float] = (0.01, 100.0)
    two_layer_N: int = 64
    two_layer_D: int = 16
    two_layer_steps: int = 200
    two_layer_lr_range: tuple[float, float] = (0.02, 20.0)
    two_layer_var_range: tuple[float, float] = (0.05, 5.0)
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("P", "D", "B", "steps", "replicas", "n_lr", "n_var",
                     "two_layer_N", "two_layer_D", "two_layer_steps"):
            v.positive_int(name, getattr(self, name))
        v.nonnegative("noise_std", self.noise_std)
        v.nonnegative("theta", self.theta)
        v.in_range("tol", self.tol, 0.0, 1.0, lo_open=True, hi_open=True)
        for name in ("lr_range", "var_range", "two_layer_lr_range", "two_layer_var_range"):
            lo, hi = getattr(self, name)
            if not (0 < lo < hi):
                raise ValueError(f"{name} must be (lo, hi) with 0 < lo < hi, got {(lo, hi)!r}")


def _train_full() -> TrainabilityConfig:
    return TrainabilityConfig(P=64, D=64, B=8, steps=600, n_lr=20, n_var=12,
                              replicas=8, two_layer_N=256, two_layer_steps=400)


@register("trainability", "(learning rate, init variance) phase diagrams: single and two-layer",
          TrainabilityConfig, full=_train_full)
def run_trainability(cfg: TrainabilityConfig, out_dir: Path) -> ExperimentResult:
    lr_c = oe.online_sgd_critical_lr(cfg.B, cfg.D)
    lrs = lr_c * np.geomspace(*cfg.lr_range, cfg.n_lr)
    vars_ = np.geomspace(*cfg.var_range, cfg.n_var)
    W_star, _, _ = rank_one_teacher(cfg.P, cfg.D, cfg.theta, seed=cfg.seed)
    rows = []
    cells = [(i, var, j, lr) for i, var in enumerate(vars_) for j, lr in enumerate(lrs)]
    for i, var, j, lr in progress(cells, total=len(cells), desc="trainability: single layer"):
        run, div = _run_or_partial(
            train_linear_student, W_star, method="online", lr=float(lr), steps=cfg.steps,
            sigma0=float(np.sqrt(var)), B=cfg.B,
            noise_std=cfg.noise_std, replicas=cfg.replicas, checkpoints=[0],
            overlaps=False, divergence_factor=1e6, seed=cfg.seed + 1000 * i + j)
        ms = run.mean_sq_error
        rel = float(ms[-1] / ms[0])
        rows.append({"model": "single-layer", "lr": lr, "init_var": var,
                     "rel_error": None if div is not None else rel,
                     "diverged_step": div,
                     "status": str(oe.trainability_status(rel, cfg.tol,
                                                            diverged=div is not None))})
    single = pd.DataFrame(rows)
    th_lr = lr_c * np.geomspace(cfg.lr_range[0] / 1.2, cfg.lr_range[1] * 1.2, 300)
    th_var = np.geomspace(cfg.var_range[0] / 1.5, cfg.var_range[1] * 1.5, 200)
    pred = oe.predict_trainability(th_lr[None, :], np.sqrt(th_var)[:, None], P=cfg.P, D=cfg.D,
                                   theta=cfg.theta, steps=cfg.steps,
                                   B=cfg.B, noise_std=cfg.noise_std,
                                   tol=cfg.tol)
    cell = oe.predict_trainability(single["lr"].to_numpy(), np.sqrt(single["init_var"]),
                                   P=cfg.P, D=cfg.D, theta=cfg.theta, steps=cfg.steps,
                                   B=cfg.B, noise_std=cfg.noise_std,
                                   tol=cfg.tol)
    single["theory_status"] = cell.status
    agree = float(np.mean(single["status"] == single["theory_status"]))

    # two-layer (depth 2, standard parameterisation), population GD, measured only
    d = cfg.two_layer_D
    rng = np.random.default_rng(cfg.seed)
    U, _ = np.linalg.qr(rng.standard_normal((d, d)))
    Vm, _ = np.linalg.qr(rng.standard_normal((d, d)))
    teacher = U @ np.diag(2.0 / np.arange(1, d + 1)) @ Vm.T
    lrs2 = np.geomspace(*cfg.two_layer_lr_range, cfg.n_lr)
    vars2 = np.geomspace(*cfg.two_layer_var_range, cfg.n_var)
    rows2, naive = [], []
    for i, var in progress(list(enumerate(vars2)), total=len(vars2),
                           desc="trainability: two layers"):
        sharp0 = None
        sharp_end = None
        for j, lr in enumerate(lrs2):
            drun, div = _run_or_partial(
                train_deep_linear, teacher, depth=2, N=cfg.two_layer_N,
                parameterization="standard", lr=float(lr), steps=cfg.two_layer_steps,
                sigma0=float(np.sqrt(var)), sharpness=[0, cfg.two_layer_steps],
                divergence_factor=1e6, seed=cfg.seed + 7 * i)  # same init along a row
            if j == 0:
                sharp0 = float(drun.sharpness[0])
            rel = float(drun.loss[-1] / drun.loss[0])
            status = str(oe.trainability_status(rel, cfg.tol, diverged=div is not None))
            if status == "converged" and sharp_end is None:
                sharp_end = float(drun.sharpness[-1])  # solution reached at the smallest lr
            rows2.append({"model": "two-layer", "lr": lr, "init_var": var,
                          "rel_error": None if div is not None else rel,
                          "diverged_step": div,
                          "max_loss_ratio": float(np.max(drun.loss) / drun.loss[0]),
                          "sharpness_init": float(drun.sharpness[0]),
                          "sharpness_final": None if div is not None
                          else float(drun.sharpness[-1]),
                          "status": status})
        naive.append({"init_var": var, "lr": 2.0 / sharp0 if sharp0 else np.inf,
                      "lr_final": 2.0 / sharp_end if sharp_end else np.nan})
    two = pd.DataFrame(rows2)
    naive_df = pd.DataFrame(naive)
    two = two.merge(naive_df.rename(columns={"lr": "naive_lr", "lr_final": "naive_lr_final"}),
                    on="init_var")
    catapult = two[(two["lr"] > two["naive_lr"]) & (two["status"] == "converged")]
    table = pd.concat([single, two], ignore_index=True)
    tables = [io.write_table(table, out_dir / "trainability.parquet")]
    fig = oplot.plot_trainability(single, {"lr": th_lr, "init_var": th_var,
                                           "status": pred.status}, two, lr_c=lr_c,
                                  naive_two_layer=naive_df)
    figures = save_figure(fig, out_dir / "trainability")
    summary = {
        "lr_c_single_layer": lr_c,
        "single_layer_cells_agreeing_with_theory": agree,
        "two_layer_converged_beyond_naive_2_over_sharpness": int(len(catapult)),
        "two_layer_status_counts": two["status"].value_counts().to_dict(),
    }
    claims = [
        within("single layer: cells agreeing with the theory", agree, 0.8, 1.0,
               note="converged / stalled / diverged against the exact trainability boundary"),
        within("two layers: converged beyond 2/sharpness", float(len(catapult)), 1, np.inf,
               note="catapults: learning rates past the naive stability line still converge"),
    ]
    return ExperimentResult("trainability", out_dir, figures=figures, tables=tables,
                            summary=summary, claims=claims)


# --------------------------------------------------------------------------
# lr-transfer
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class LRTransferConfig:
    """muP vs NTK sweeps. Defaults: quick (~50 s); ``--full``: N 256..4096, 3 seeds.

    The lr grids are geometric with ratio ``lr_step``; escape times are seed means.
    """

    N_values: tuple[int, ...] = (128, 256, 512, 1024)
    depth: int = 3
    D: int = 16
    steps: int = 30
    mup_lr_min: float = 0.025
    ntk_lr_min: float = 0.8
    n_lr: int = 8
    lr_step: float = 1.4142135623730951
    escape_runs: tuple[str, ...] = ("mup:0.05:4", "ntk:1.0:4", "ntk:0.1:64")
    escape_steps: int = 30
    escape_margin: float = 0.2
    seeds: int = 1
    escape_seeds: int = 2
    seed: int = 0

    def __post_init__(self) -> None:
        if not self.N_values:
            raise ValueError("N_values must be non-empty")
        for w in self.N_values:
            v.positive_int("N_values", w)
        v.positive_int("depth", self.depth, minimum=2)
        for name in ("D", "steps", "n_lr", "escape_steps", "seeds", "escape_seeds"):
            v.positive_int(name, getattr(self, name))
        for name in ("mup_lr_min", "ntk_lr_min"):
            v.positive(name, getattr(self, name))
        _parse_escape_runs(self.escape_runs)
        v.in_range("lr_step", self.lr_step, 1.0, 100.0, lo_open=True)
        v.nonnegative("escape_margin", self.escape_margin)


def _parse_escape_runs(runs: tuple[str, ...]) -> list[tuple[str, float, float]]:
    """``"parameterization:lr:theta"`` strings -> tuples, validated."""
    out = []
    for r in runs:
        parts = str(r).split(":")
        if len(parts) != 3:
            raise ValueError("escape_runs entries must read 'parameterization:lr:theta', "
                             f"got {r!r}")
        par = v.choice("escape_runs parameterization", parts[0], ("mup", "ntk", "standard"))
        try:
            lr, th = float(parts[1]), float(parts[2])
        except ValueError:
            raise ValueError(f"escape_runs entry {r!r}: lr and theta must be numbers") from None
        out.append((par, v.positive("escape_runs lr", lr), v.positive("escape_runs theta", th)))
    return out


def _lr_full() -> LRTransferConfig:
    return LRTransferConfig(N_values=(256, 512, 1024, 2048, 4096), seeds=3, n_lr=12,
                            mup_lr_min=0.0125, ntk_lr_min=0.4, escape_seeds=5)


@register("lr-transfer", "loss vs learning rate across widths, muP vs NTK; escape time vs width",
          LRTransferConfig, full=_lr_full)
def run_lr_transfer(cfg: LRTransferConfig, out_dir: Path) -> ExperimentResult:
    d = cfg.D
    rng = np.random.default_rng(cfg.seed)
    U, _ = np.linalg.qr(rng.standard_normal((d, d)))
    Vm, _ = np.linalg.qr(rng.standard_normal((d, d)))
    teacher = U @ np.diag(4.0 / np.arange(1, d + 1)) @ Vm.T
    grids = {"mup": cfg.mup_lr_min * cfg.lr_step ** np.arange(cfg.n_lr),
             "ntk": cfg.ntk_lr_min * cfg.lr_step ** np.arange(cfg.n_lr)}
    rows = []
    sweep_runs = [(par, N, s, lr) for par, lrs in grids.items() for N in cfg.N_values
                  for s in range(cfg.seeds) for lr in lrs]
    for par, N, s, lr in progress(sweep_runs, total=len(sweep_runs), desc="lr-transfer: sweep"):
        run, div = _run_or_partial(train_deep_linear, teacher, depth=cfg.depth,
                                   N=N, parameterization=par, lr=float(lr),
                                   steps=cfg.steps, seed=cfg.seed + s)
        rows.append({"parameterization": par, "width": N, "seed": s, "lr": lr,
                     "diverged": div is not None,
                     "diverged_step": div,
                     "loss": None if div is not None else float(run.loss[-1])})
    raw = pd.DataFrame(rows)
    # seed-average (a diverged seed makes the cell diverged)
    sweep = (raw.groupby(["parameterization", "width", "lr"], as_index=False)
             .agg(loss=("loss", "mean"), diverged=("diverged", "any")))
    best = {}
    for (par, N), sub in sweep.groupby(["parameterization", "width"]):
        ok = sub[~sub["diverged"]]
        best[(par, int(N))] = float(ok.loc[ok["loss"].idxmin(), "lr"]) if len(ok) else None

    erows = []
    for par, lr, th in _parse_escape_runs(cfg.escape_runs):
        spike = np.zeros((d, d))
        spike[0, 0] = th
        label = f"{par} (eta0={lr:g}, theta={th:g})"
        for N in cfg.N_values:
            for s in range(cfg.escape_seeds):
                run, div = _run_or_partial(
                    train_deep_linear, spike, depth=cfg.depth, N=N, parameterization=par,
                    lr=lr, steps=cfg.escape_steps, checkpoints=Schedule.every(1), layers=[1],
                    top_k=2, seed=cfg.seed + s)
                e = None if div is not None else escape_step(
                    run.steps, run.singular_values[0][:, 0], run.bulk_edge[0],
                    margin=cfg.escape_margin)
                erows.append({"parameterization": label, "width": N, "seed": s, "lr": lr,
                              "theta": th, "escape_step": e, "budget": cfg.escape_steps,
                              "diverged": div is not None,
                              "max_top_over_edge": float(np.max(run.singular_values[0][:, 0])
                                                         / run.bulk_edge[0])})
    eraw = pd.DataFrame(erows)
    eraw["escape_step"] = eraw["escape_step"].astype("Int64")
    escape = (eraw.groupby(["parameterization", "width"], as_index=False, sort=False)
              .agg(escape_step=("escape_step", lambda x: x.mean() if x.notna().all() else None),
                   budget=("budget", "first"), max_top_over_edge=("max_top_over_edge", "mean")))
    sweep_out = raw.assign(kind="sweep")
    tables = [io.write_table(sweep_out, out_dir / "lr-transfer.parquet"),
              io.write_table(eraw, out_dir / "lr-transfer_escape.parquet")]
    fig = oplot.plot_lr_transfer(sweep, escape, escape_series=list(dict.fromkeys(
        escape["parameterization"])))
    figures = save_figure(fig, out_dir / "lr-transfer")

    def grid_shift(par: str) -> int | None:
        idx = [int(np.argmin(np.abs(grids[par] - b))) for (p, _), b in best.items()
               if p == par and b is not None]
        return max(idx) - min(idx) if idx else None

    def spread(label: str) -> float | None:
        e = escape[escape["parameterization"] == label]["escape_step"]
        return float(e.max() / e.min()) if len(e) and e.notna().all() else None

    summary = {
        "best_lr": {f"{p}/N={N}": b for (p, N), b in best.items()},
        "best_lr_grid_shift_mup": grid_shift("mup"),
        "best_lr_grid_shift_ntk": grid_shift("ntk"),
        "escape_step": {f"{r.parameterization}/N={r.width}":
                        (None if pd.isna(r.escape_step) else float(r.escape_step))
                        for r in escape.itertuples()},
        "max_top_over_edge": {f"{r.parameterization}/N={r.width}": float(r.max_top_over_edge)
                              for r in escape.itertuples()},
        "escape_max_over_min": {label: spread(label)
                                for label in dict.fromkeys(escape["parameterization"])},
    }
    mup, ntk = grid_shift("mup"), grid_shift("ntk")
    claims = [
        within("muP: best lr moves across widths (grid steps)",
               np.nan if mup is None else float(mup), 0, 1,
               note=f"lr grid ratio {cfg.lr_step:.3g}; muP transfers the best lr"),
        within("NTK - muP: how much further the best lr moves (grid steps)",
               np.nan if mup is None or ntk is None else float(ntk - mup), 1, np.inf,
               note="the best lr moves with width under NTK, not under muP"),
        within("NTK: best lr moves across widths (grid steps)",
               np.nan if ntk is None else float(ntk), 2, np.inf,
               note=f"quick widths span only {max(cfg.N_values) // min(cfg.N_values)}x; "
                    "expected over the --full widths (16x), not checked at this size",
               full_only=True),
    ]
    return ExperimentResult("lr-transfer", out_dir, figures=figures, tables=tables,
                            summary=summary, claims=claims)
