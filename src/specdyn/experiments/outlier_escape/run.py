"""The outlier-escape experiments' runs: bbp-escape, trainability and lr-transfer simulate,
write the tables their claims read (:mod:`specdyn.experiments.outlier_escape.claims`),
draw the figures and summarise.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn import Schedule, io
from specdyn._progress import progress
from specdyn.experiments.outlier_escape.claims import (
    CLEAR_FACTOR,
    ESCAPE_WIDTH_TOL,
    bbp_claims_of,
    best_lr_grid_shift,
    lr_transfer_claims_of,
    trainability_claims_of,
)
from specdyn.experiments.outlier_escape.config import (
    BBPEscapeConfig,
    LRTransferConfig,
    TrainabilityConfig,
    escape_label,
    full_bbp_escape,
    full_lr_transfer,
    full_trainability,
    parse_escape_runs,
)
from specdyn.experiments.outlier_escape.replicas import TABLE as REPLICA_TABLE
from specdyn.experiments.outlier_escape.replicas import (
    level_factor,
    predicted_level,
    replica_level,
    replica_table,
)
from specdyn.experiments.outlier_escape.stochastic import TABLE as STOCHASTIC_TABLE
from specdyn.experiments.outlier_escape.stochastic import stochastic_panels, stochastic_table
from specdyn.experiments.outlier_escape.transfer import loss_pilot
from specdyn.experiments.outlier_escape.wrong import (
    BBP_WRONG,
    LR_TRANSFER_WRONG,
    LR_TRANSFER_WRONG_NA,
    TRAINABILITY_WRONG,
    TRAINABILITY_WRONG_NA,
)
from specdyn.measure.outliers import find_outliers
from specdyn.plot import outlier_escape as oplot
from specdyn.plot import save_figure
from specdyn.runs.registry import ExperimentResult, Measured, register
from specdyn.sim import (
    DeepLinearRecording,
    DivergenceError,
    Sampling,
    escape_step,
    rank_one_teacher,
    train_deep_linear,
    train_linear_student,
)
from specdyn.sim.protocol import DIVERGENCE_FACTOR, RunOptions, derive_seed
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


@register("bbp-escape", "outlier escape (BBP crossing) of a linear student under population GD",
          BBPEscapeConfig, full=full_bbp_escape, claims=bbp_claims_of,
          wrong_models=BBP_WRONG,
          measured={"bbp-escape.parquet": Measured(("value", "flagged"), by=("quantity",),
                                                   where={"source": ("measured",)}),
                    "bbp-escape_stochastic.parquet": Measured(("value", "flagged"),
                                                              by=("run", "quantity")),
                    REPLICA_TABLE: Measured(("value",), by=("quantity",))})
def run_bbp_escape(cfg: BBPEscapeConfig, out_dir: Path) -> ExperimentResult:
    c = cfg.P / cfg.D
    W_star, _, _ = rank_one_teacher(cfg.P, cfg.D, cfg.theta, seed=cfg.seed)
    t_star = oe.bbp_crossing_time(cfg.theta, cfg.sigma0, c, cfg.lr)
    steps = int(np.ceil(cfg.horizon * t_star))
    # dense records around t*, sparse elsewhere: a union of two grids, which no one
    # Schedule kind spells (Schedule.every would add the last step), so explicit steps
    rec = np.unique(np.r_[np.arange(0, steps + 1, max(steps // 60, 1)),
                          np.arange(int(0.9 * t_star), min(int(1.15 * t_star), steps) + 1)])
    run = train_linear_student(W_star, lr=cfg.lr, steps=steps,
                               sigma0=cfg.sigma0, checkpoints=rec, top_k=None,
                               seed=derive_seed(cfg.seed, "run"))  # independent of the teacher's
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
    stoch = stochastic_table(cfg)
    reps = replica_table(cfg, CLEAR_FACTOR)
    level, factor = replica_level(reps, cfg), level_factor(cfg)
    tables = [io.write_table(df, out_dir / "bbp-escape.parquet"),
              io.write_table(stoch, out_dir / STOCHASTIC_TABLE),
              io.write_table(reps, out_dir / REPLICA_TABLE)]
    fig = oplot.plot_bbp_escape(
        run.steps, run.singular_values[:, :k], theory_steps=fine_t,
        bulk_edge=fine.bulk_edge, outlier=fine.singular_value, detected=fine.detected,
        t_star=t_star, t_measured=t_meas, left_overlap2=run.left_overlap2,
        right_overlap2=run.right_overlap2, theory_left2=fine.left_overlap2,
        theory_right2=fine.right_overlap2,
        replicas=(reps["step"].to_numpy(), reps["value"].to_numpy(),
                  oe.population_gd_path(cfg.theta, cfg.sigma0, c, cfg.lr,
                                        reps["step"].to_numpy(dtype=float)).singular_value,
                  f"{cfg.replicas} replicas: RMS level "
                  f"{level / predicted_level(cfg)[0]:.2f} x its pilot "
                  f"(claim: 1/{factor:.2f}-{factor:.2f})"))
    figures = save_figure(fig, out_dir / "bbp-escape")
    figures += save_figure(oplot.plot_stochastic_escape(stochastic_panels(stoch, cfg)),
                           out_dir / "bbp-escape_stochastic")
    summary = {
        "t_star": t_star,
        "escape_step_theory": oe.bbp_escape_step(cfg.theta, cfg.sigma0, c, cfg.lr),
        "escape_step_measured": t_meas,
        "escape_rel_error": None if t_meas is None else t_meas / t_star - 1.0,
        "flagged_before_t_star": flagged_before,
        "outlier_location_max_rel_error_when_clear": loc_err,
        "replicas_deviation_level": level,
    }
    return ExperimentResult("bbp-escape", out_dir, figures=figures, tables=tables,
                            summary=summary)


# --------------------------------------------------------------------------
# trainability
# --------------------------------------------------------------------------


#: Trainability's own divergence boundary, both models: a cell diverged when its error grew
#: by the protocol's factor (1e6), not by linear_student's larger default (fixed before the
#: claims; deep_linear's default is the same 1e6).
_BOUNDARY = RunOptions(divergence_factor=DIVERGENCE_FACTOR)


@register("trainability", "(learning rate, init variance) phase diagrams: single and two-layer",
          TrainabilityConfig, full=full_trainability,
          claims=trainability_claims_of, wrong_models=TRAINABILITY_WRONG,
          wrong_na=TRAINABILITY_WRONG_NA,
          measured={"trainability.parquet": Measured(
              ("rel_error", "max_loss_ratio", "sharpness_init", "sharpness_final", "naive_lr",
               "naive_lr_final"), by=("model",))})
def run_trainability(cfg: TrainabilityConfig, out_dir: Path) -> ExperimentResult:
    lr_c = oe.online_sgd_critical_lr(cfg.B, cfg.D)
    lrs = lr_c * np.geomspace(*cfg.lr_range, cfg.n_lr)
    vars_ = np.geomspace(*cfg.var_range, cfg.n_var)
    W_star, _, _ = rank_one_teacher(cfg.P, cfg.D, cfg.theta, seed=cfg.seed)
    rows = []
    cells = [(i, var, j, lr) for i, var in enumerate(vars_) for j, lr in enumerate(lrs)]
    for i, var, j, lr in progress(cells, total=len(cells), desc="trainability: single layer"):
        run, div = _run_or_partial(
            train_linear_student, W_star, lr=float(lr), steps=cfg.steps,
            sigma0=float(np.sqrt(var)),
            sampling=Sampling("online", B=cfg.B, noise_std=cfg.noise_std),
            replicas=cfg.replicas, checkpoints=[0],
            overlaps=False, options=_BOUNDARY, seed=derive_seed(cfg.seed, "cell", i, j))
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
    rng = np.random.default_rng(derive_seed(cfg.seed, "teacher"))
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
                sigma0=float(np.sqrt(var)),
                recording=DeepLinearRecording(sharpness=[0, cfg.two_layer_steps]),
                options=_BOUNDARY,  # the same boundary as the single layer
                seed=derive_seed(cfg.seed, "row", i))  # no column in the key: one init a row
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
    return ExperimentResult("trainability", out_dir, figures=figures, tables=tables,
                            summary=summary)


# --------------------------------------------------------------------------
# lr-transfer
# --------------------------------------------------------------------------


@register("lr-transfer", "loss vs learning rate across widths, muP vs NTK; escape time vs width",
          LRTransferConfig, full=full_lr_transfer, claims=lr_transfer_claims_of,
          wrong_models=LR_TRANSFER_WRONG, wrong_na=LR_TRANSFER_WRONG_NA,
          measured={"lr-transfer.parquet": Measured(("loss",)),
                    "lr-transfer_escape.parquet": Measured(("escape_step",
                                                            "max_top_over_edge"))})
def run_lr_transfer(cfg: LRTransferConfig, out_dir: Path) -> ExperimentResult:
    d = cfg.D
    rng = np.random.default_rng(derive_seed(cfg.seed, "teacher"))
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
                                   steps=cfg.steps, seed=derive_seed(cfg.seed, "rep", s))
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
    for par, lr, th in parse_escape_runs(cfg.escape_runs):
        spike = np.zeros((d, d))
        spike[0, 0] = th
        label = escape_label(par, lr, th)
        for N in cfg.N_values:
            for s in range(cfg.escape_seeds):
                run, div = _run_or_partial(
                    train_deep_linear, spike, depth=cfg.depth, N=N, parameterization=par,
                    lr=lr, steps=cfg.escape_steps, checkpoints=Schedule.every(1),
                    recording=DeepLinearRecording(layers=[1], top_k=2),
                    seed=derive_seed(cfg.seed, "rep", s))
                e = None if div is not None else escape_step(
                    run.steps, run.singular_values[0][:, 0], run.bulk_edge[0],
                    margin=cfg.escape_margin)
                erows.append({"parameterization": label, "width": N, "seed": s, "lr": lr,
                              "theta": th, "escape_step": e, "budget": cfg.escape_steps,
                              "diverged": div is not None,
                              "max_top_over_edge": float(np.max(run.singular_values[0][:, 0])
                                                         / run.bulk_edge[0])})
    eraw = pd.DataFrame(erows)
    eraw["escape_step"] = eraw["escape_step"].astype("float64")  # NaN: never escaped
    escape = (eraw.groupby(["parameterization", "width"], as_index=False, sort=False)
              .agg(escape_step=("escape_step", lambda x: x.mean() if x.notna().all() else None),
                   budget=("budget", "first"), max_top_over_edge=("max_top_over_edge", "mean")))
    sweep_out = raw.assign(kind="sweep")
    tables = [io.write_table(sweep_out, out_dir / "lr-transfer.parquet"),
              io.write_table(eraw, out_dir / "lr-transfer_escape.parquet")]
    fig = oplot.plot_lr_transfer(
        sweep, escape, escape_series=list(dict.fromkeys(escape["parameterization"])),
        flat_band={escape_label(par, lr, th): ESCAPE_WIDTH_TOL
                   for par, lr, th in parse_escape_runs(cfg.escape_runs) if par == "mup"},
        loss_pilot=loss_pilot(raw, cfg))
    figures = save_figure(fig, out_dir / "lr-transfer")

    def spread(label: str) -> float | None:
        e = escape[escape["parameterization"] == label]["escape_step"]
        return float(e.max() / e.min()) if len(e) and e.notna().all() else None

    summary = {
        "best_lr": {f"{p}/N={N}": b for (p, N), b in best.items()},
        **{f"best_lr_grid_shift_{p}": (None if np.isnan(x := best_lr_grid_shift(raw, p))
                                         else int(x)) for p in ("mup", "ntk")},
        "escape_step": {f"{r.parameterization}/N={r.width}":
                        (None if pd.isna(r.escape_step) else float(r.escape_step))
                        for r in escape.itertuples()},
        "max_top_over_edge": {f"{r.parameterization}/N={r.width}": float(r.max_top_over_edge)
                              for r in escape.itertuples()},
        "escape_max_over_min": {label: spread(label)
                                for label in dict.fromkeys(escape["parameterization"])},
    }
    return ExperimentResult("lr-transfer", out_dir, figures=figures, tables=tables,
                            summary=summary)
