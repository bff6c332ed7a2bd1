"""``real-data``: the core paper's open question on real data, as a test that can fail.

"It will also be important to determine the extent to which the predicted exponent
transitions and boundaries can be observed in real data" (core Sec. 4). Per task
(:mod:`~specdyn.experiments.real_data.tasks`: image patches -> the shifted patch, ->
the blurred patch at two widths; digits -> labels; text -> character frequencies;
a synthetic aligned and a rotated teacher) the study of
:mod:`~specdyn.study`: the aligned theory on the data's own
``lambda_k``, ``mu_k``, the exact reference (the infinite-width flow on the data's own
``Sigma`` and ``C``; the gap between the two is the misalignment effect), and the
two-layer linear network (exact Gram engine) trained on the data by full-batch GD;
the ReLU student against the effective theory; an SGD MLP and a CNN on held-out data
(:mod:`~specdyn.experiments.real_data.networks`).

Tables (``task`` first where there is one):

- ``real-data.parquet``: tidy ``task, student, regime, step, t, k, quantity, value``;
  ``rho_theory``, ``rho_reference``, ``rho_sim`` per input mode ``k`` (mode order;
  ``rho_sim = lambda_k (U^T G^w U)_kk``), ``spectrum_*`` by rank, ``loss_*`` at
  ``k = 0`` (above the least-squares loss); the real networks (task ``net``, regime
  ``sgd``, ``t`` = SGD step): ``rho_train``, ``rho_heldout`` (per mode, from the first
  layer's weights), ``spectrum_train``, ``spectrum_heldout`` (the trackers' first
  hidden layer spectra), ``loss_train``, ``loss_heldout``;
- ``real-data_modes.parquet``: ``task, k, lam, mu, misalignment, overlap``;
- ``real-data_fits.parquet``: ``task, quantity, value, ci_low, ci_high, kmin, kmax``
  (``alpha``, ``alpha_plus_beta``, ``beta``; mode order);
- ``real-data_regions.parquet``: the theory's region of every mode at every checkpoint;
- ``real-data_tasks.parquet``: per task the misalignment measures and the aligned
  theory's error against the exact reference (feature learning);
- ``real-data_widths.parquet``: ``N, step, t, k, quantity, value`` of the ReLU
  student's lazy width series.

Exponents are :func:`specdyn.measure.mode_exponents` over modes ``2..kmax`` (the data's
own estimator), so a table whose values were shuffled or made constant fails them.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pandas as pd

from specdyn import io
from specdyn.experiments.real_data.claims import (
    TABLES,
    read_tables,
    real_data_claims,
    real_data_claims_of,
)
from specdyn.experiments.real_data.config import VALIDATION_TASKS, RealDataConfig, full_real_data
from specdyn.experiments.real_data.networks import LAYERS, spectrum_quantity
from specdyn.experiments.real_data.wrong import REAL_DATA_WRONG, REAL_DATA_WRONG_NA
from specdyn.runs.registry import ExperimentResult, Measured, register

#: What the networks measured (the theory and the exact reference are computed from the
#: data, as inputs are: a wrong network leaves them as they are).
_MEASURED = ("rho_sim", "spectrum_sim", "loss_sim", "rho_train", "rho_heldout",
             "loss_train", "loss_heldout", *(spectrum_quantity(p, layer) for p in (
                 "train", "heldout") for layer in LAYERS))


#: The per-mode learning times written beside the tables (not read by the claims).
TIMES = "real-data_times.parquet"
#: The runs whose learning times are written: (task, regime).
TIMED = (("patches", "feature-learning"), ("blur", "IIIb"), ("denoise", "feature-learning"))


def learning_times_table(dyn: pd.DataFrame, tasks_table: pd.DataFrame, cfg: RealDataConfig
                         ) -> pd.DataFrame:
    """Each mode's half-rise time (:func:`~specdyn.experiments.real_data.readings.
    learning_times`) of the aligned theory, the exact reference and the linear network:
    rows ``task, regime, k, source, t`` (the Saxe-style anchor: one time per mode)."""
    from specdyn.experiments.real_data.readings import learning_times, series

    rows = []
    for task, regime in TIMED:
        row = tasks_table[tasks_table.task == task]
        kmax = int(row.kmax.iloc[0]) if len(row) else cfg.kmax_patches
        s = series(dyn, task, regime)
        for source, q in (("theory", "rho_theory"), ("reference", "rho_reference"),
                          ("network", "rho_sim")):
            t = learning_times(s["t"], s[q], kmax)
            rows += [{"task": task, "regime": regime, "k": k + 1, "source": source,
                      "t": float(t[k])} for k in range(kmax)]
    return pd.DataFrame(rows, columns=["task", "regime", "k", "source", "t"])


def lazy_relu_summary(widths: pd.DataFrame, cfg: RealDataConfig) -> dict[str, Any]:
    """The lazy ReLU per width (drift from each start, the theory's, the zero output's
    distance from the theory over the Wishart level of ``N/2`` units) and the random
    start's equal-time log-log slopes over the widths (the f0 effect's ``1/N``)."""
    from specdyn.experiments.real_data.network_claims import zero_output_readings
    from specdyn.plot.real_data import drift_slopes

    sl = drift_slopes(widths, cfg.relu_kmax).dropna()
    rows = zero_output_readings(widths, cfg.relu_kmax)
    return {"widths": rows.astype(object).where(rows.notna(), None).to_dict("records"),
            "random_start_slopes": [float(sl.slope.min()), float(sl.slope.max())]
            if len(sl) else None}


def _summary_of(st: Any, text: str) -> dict[str, Any]:
    out = st.summary()
    out["preprocessing"] = text
    return out


@register("real-data", "the paper's theory and the exact reference from real data's own "
          "spectra (image patches, digits, text) against linear, ReLU and SGD-trained "
          "networks on them", RealDataConfig, full=full_real_data,
          claims=real_data_claims_of,
          measured={TABLES["dynamics"]: Measured(
                        ("value",), by=("task", "student", "regime", "quantity"),
                        where={"quantity": _MEASURED}),
                    # the reference's error per task; the measures are the data's
                    TABLES["tasks"]: Measured(("error",)),
                    TABLES["widths"]: Measured(("value",), by=("regime", "N", "quantity"),
                                               where={"quantity": ("rho_sim", "spectrum_sim",
                                                                   "loss_sim")})},
          wrong_models=REAL_DATA_WRONG, wrong_na=REAL_DATA_WRONG_NA)
def run_real_data(cfg: RealDataConfig, out_dir: Path) -> ExperimentResult:
    """Study every task, train the ReLU and SGD networks, write tables and figures."""
    from specdyn.experiments.real_data import networks, students, tasks
    from specdyn.plot import save_figure

    parts: dict[str, list[pd.DataFrame]] = {k: [] for k in TABLES}
    # wall and CPU seconds per part (CPU: this process's threads; the budget's measure on a
    # shared machine, whose wall time depends on the other jobs)
    summary: dict[str, Any] = {"wall_s": {}, "cpu_s": {}}
    # the SGD networks first (their rows still go last): a step size too large for a size
    # is the one way this experiment crashes, and at --full they take minutes of its hour
    start, cpu = time.perf_counter(), time.process_time()
    nets, net_fits, net_summary = networks.real_networks(cfg, out_dir / "trackers")
    net_wall, net_cpu = time.perf_counter() - start, time.process_time() - cpu
    for task in (*VALIDATION_TASKS, *tasks.model_task_names(cfg)):
        start, cpu = time.perf_counter(), time.process_time()
        st, check, text = tasks.run_task(cfg, task)
        for name, df in tasks.task_tables(st, task).items():
            parts[name].append(df)
        row = tasks.validation_row(check, task)
        parts["tasks"].append(pd.DataFrame([row]))
        summary[task] = _summary_of(st, text)
        warning = tasks.rank_warning(row)
        if warning:
            summary[task]["warning"] = warning
        if check is not st:
            summary[task]["check"] = check.summary()["regimes"]
        summary["wall_s"][task] = time.perf_counter() - start
        summary["cpu_s"][task] = time.process_time() - cpu
    start, cpu = time.perf_counter(), time.process_time()
    relu, widths, relu_fits = students.relu_runs(cfg)
    parts["dynamics"].append(relu)
    parts["widths"].append(widths)
    parts["fits"].append(relu_fits)
    summary["wall_s"]["relu"] = time.perf_counter() - start
    summary["cpu_s"]["relu"] = time.process_time() - cpu
    summary["net"] = net_summary
    parts["dynamics"].append(nets)
    parts["fits"].append(net_fits[["task", *net_fits.columns.drop("task")]])
    summary["wall_s"]["networks"], summary["cpu_s"]["networks"] = net_wall, net_cpu
    tables = {k: pd.concat(v, ignore_index=True) for k, v in parts.items()}
    paths = [io.write_table(tables[k], out_dir / f) for k, f in TABLES.items()]
    times = learning_times_table(tables["dynamics"], tables["tasks"], cfg)
    paths.append(io.write_table(times, out_dir / TIMES))
    summary["lazy_relu"] = lazy_relu_summary(tables["widths"], cfg)
    figures: list[Path] = []
    if cfg.figure:
        from specdyn.plot.real_data import real_data_figure
        from specdyn.plot.real_networks import anchors_figure, glance_figure, networks_figure

        claims = real_data_claims(tables, cfg)
        figures += save_figure(real_data_figure(tables, cfg.kmax_patches, cfg.relu_kmax),
                               out_dir / "real-data")
        figures += save_figure(networks_figure(tables, cfg.kmax_patches, claims),
                               out_dir / "real-data_networks")
        figures += save_figure(anchors_figure(tables, times, tasks.model_task_names(cfg),
                                              cfg.kmax_patches, cfg.kmax_digits),
                               out_dir / "real-data_anchors")
        figures += save_figure(glance_figure(tables, cfg.kmax_patches, claims),
                               out_dir / "real-data_glance")
    return ExperimentResult("real-data", out_dir, figures=figures, tables=paths,
                            summary=summary)


__all__ = ["TABLES", "read_tables", "run_real_data", "real_data_claims_of"]
