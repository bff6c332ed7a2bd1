"""real-data's wrong models: the plausible wrong answers its expected claims must catch.

Each rewrites a scratch copy of a finished run's tables (:class:`specdyn.runs.WrongModel`,
:func:`specdyn.runs.wrong.judge`); ``kind`` names its class of mistake
(:data:`specdyn.runs.registry.WRONG_KINDS`):

- ``never learns``: every network's measured rows (linear, ReLU, MLP, CNN; spectra,
  per-mode ``rho`` and losses) frozen at their step-0 values;
- ``lazy as feature learning``: each feature-learning run of the linear student (patches,
  digits; Regions IIIa and IIIb on the blurred target) replaced by the same task's lazy
  run, checkpoint by checkpoint;
- ``aligned theory as exact reference``: the exact reference replaced by the aligned
  per-mode theory on every task (the tasks' theory error becomes 0);
- ``IIIb fed as IIIa``: the blurred target's Region IIIa run replaced by its IIIb run (an
  end exponent off by beta/2);
- ``width ignored``: every lazy ReLU run of the width series (both starts) given the
  smallest width's values (``attribution``: a rescaling that depends on width);
- ``network is its reference`` (``is-theory``): the linear network's per-mode ``rho`` and
  spectrum replaced by the exact reference's;
- ``clock off by 2`` (``clock``): the linear network run at twice the speed (its values at
  ``t`` those at ``2 t``, interpolated in ``log t``);
- ``held-out is training`` (``attribution``): the networks' held-out rows (per-mode
  ``rho``, spectra, loss) replaced by the training ones;
- ``zero-output control is the random start`` (``attribution``): the lazy ReLU's
  zero-output runs replaced by its random-start runs;
- ``lazy fluctuation of N units`` (``fluctuation-size``): the zero-output lazy ReLU's
  deviation from its theory shrunk to that of ``N`` independent units (``1/sqrt 2`` in
  ``log rho``), not ``N/2``;
- ``lazy baseline as the MLP`` (``attribution``): the MLP's rows replaced by its lazy
  baseline's;
- ``exponents in rank order`` (``convention``): the exponent estimator sorts the values
  before fitting (rank order, not mode order), in the claims and the readings alike;
- ``theory on mu in rank order`` (``wrong-inputs``): every aligned theory (the linear
  student's per task, the ReLU student's effective one) built from ``mu_k`` sorted into
  decreasing order (not the data's mode order).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn.experiments.real_data.networks import LAYERS, spectrum_quantity
from specdyn.experiments.real_data.students import ZERO_OUTPUT
from specdyn.runs.registry import WrongModel
from specdyn.runs.wrong import edit_table, table_edit

#: The quantities a network measured (the rest are theory or reference).
SIM = ("rho_sim", "spectrum_sim", "loss_sim", "rho_train", "rho_heldout", "loss_train",
       "loss_heldout", *(spectrum_quantity(p, layer) for p in ("train", "heldout")
                         for layer in LAYERS))
#: Feature-learning runs of the linear student per task, each with the task's lazy run.
FL_RUNS = {"patches": ("feature-learning",), "blur": ("IIIa", "IIIb"),
           "digits": ("feature-learning",)}


def _frozen(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """``df`` with every measured row's value replaced by its step-0 value."""
    sim = df.quantity.isin(SIM)
    part = df[sim].sort_values("step", kind="stable")
    first = part.groupby(keys, sort=False).value.transform("first")
    df.loc[first.index, "value"] = first.to_numpy()
    return df


def _never_learns(cfg: Any, folder: Path) -> None:
    edit_table(folder, "real-data.parquet",
               lambda df: _frozen(df, ["task", "student", "regime", "quantity", "k"]))
    edit_table(folder, "real-data_widths.parquet",
               lambda df: _frozen(df, ["regime", "N", "quantity", "k"]))


def _replaced(df: pd.DataFrame, task: str, src: str, dst: str,
              quantities: tuple[str, ...] = ("rho_sim", "spectrum_sim")) -> pd.DataFrame:
    """The ``dst`` run of the linear student on ``task`` given the ``src`` run's values,
    checkpoint by checkpoint (the i-th checkpoint of ``dst`` gets the i-th of ``src``, or
    its last)."""
    for q in quantities:
        base = (df.task == task) & (df.student == "linear") & (df.quantity == q)
        s = df[base & (df.regime == src)].pivot_table(index="step", columns="k",
                                                      values="value", aggfunc="first")
        rows = df[base & (df.regime == dst)]
        if s.empty or rows.empty:
            continue
        order = {st: i for i, st in enumerate(sorted(rows.step.unique()))}
        i = np.minimum(rows.step.map(order).to_numpy(), len(s) - 1)
        col = {k: j for j, k in enumerate(s.columns)}
        j = rows.k.map(col).to_numpy()
        df.loc[rows.index, "value"] = s.to_numpy()[i, j]
    return df


def _lazy_as_fl(df: pd.DataFrame) -> pd.DataFrame:
    for task, regimes in FL_RUNS.items():
        for reg in regimes:
            df = _replaced(df, task, "lazy", reg)
    return df


def _width_ignored(df: pd.DataFrame) -> pd.DataFrame:
    """Each lazy run's ``rho_sim`` replaced by the smallest width's of its series, row for
    row (same steps and modes: the widths share their checkpoints)."""
    keys = ["step", "k"]
    for regime in ("lazy", ZERO_OUTPUT):
        sim = (df.regime == regime) & df.quantity.isin(["rho_sim", "spectrum_sim"])
        if not sim.any():
            continue
        for q in ("rho_sim", "spectrum_sim"):
            rows = sim & (df.quantity == q)
            smallest = df[rows & (df.N == df.loc[rows, "N"].min())].set_index(keys).value
            idx = pd.MultiIndex.from_frame(df.loc[rows, keys])
            df.loc[rows, "value"] = smallest.reindex(idx).to_numpy()
    return df


def _take(df: pd.DataFrame, dst: pd.Series, src: pd.Series, keys: list[str]) -> pd.DataFrame:
    """The rows ``dst`` given the values of the rows ``src`` matched on ``keys``."""
    values = df[src].set_index(keys).value
    values = values[~values.index.duplicated()]
    idx = pd.MultiIndex.from_frame(df.loc[dst, keys])
    df.loc[dst, "value"] = values.reindex(idx).to_numpy()
    return df


def _aligned_as_reference(cfg: Any, folder: Path) -> None:
    def change(df: pd.DataFrame) -> pd.DataFrame:
        keys = ["task", "student", "regime", "step", "k"]
        for what in ("rho", "spectrum", "loss"):
            df = _take(df, df.quantity == f"{what}_reference", df.quantity == f"{what}_theory",
                       keys)
        return df

    edit_table(folder, "real-data.parquet", change)
    edit_table(folder, "real-data_tasks.parquet", lambda df: df.assign(error=0.0))


def _network_is_reference(df: pd.DataFrame) -> pd.DataFrame:
    keys = ["task", "regime", "student", "step", "k"]
    lin = df.student == "linear"
    for what in ("rho", "spectrum"):
        df = _take(df, lin & (df.quantity == f"{what}_sim"),
                   lin & (df.quantity == f"{what}_reference"), keys)
    return df


def _clock_off(df: pd.DataFrame, factor: float = 2.0) -> pd.DataFrame:
    """The linear network's ``rho_sim`` and ``spectrum_sim`` at ``t`` given its values at
    ``factor * t`` (linear in ``log t`` between checkpoints; the last value beyond)."""
    sim = (df.student == "linear") & df.quantity.isin(["rho_sim", "spectrum_sim"])
    for _, g in df[sim].groupby(["task", "regime", "quantity", "k"], sort=False):
        g = g.sort_values("t")
        t, v = g.t.to_numpy(float), g.value.to_numpy(float)
        pos = t > 0
        if pos.sum() < 2:
            continue
        lt = np.log(t[pos])
        new = v.copy()
        new[pos] = np.interp(lt + np.log(factor), lt, v[pos])
        df.loc[g.index, "value"] = new
    return df


def _heldout_is_training(df: pd.DataFrame) -> pd.DataFrame:
    keys = ["task", "student", "regime", "step", "k"]
    qs = [("rho_heldout", "rho_train"), ("loss_heldout", "loss_train"),
          *((spectrum_quantity("heldout", layer), spectrum_quantity("train", layer))
            for layer in LAYERS)]
    for dst, src in qs:
        df = _take(df, df.quantity == dst, df.quantity == src, keys)
    return df


def _zero_is_random(df: pd.DataFrame) -> pd.DataFrame:
    keys = ["N", "step", "k", "quantity"]
    return _take(df, (df.regime == ZERO_OUTPUT) & df.quantity.isin(SIM),
                 (df.regime == "lazy") & df.quantity.isin(SIM), keys)


def _fluctuation_of_n(df: pd.DataFrame) -> pd.DataFrame:
    """The zero-output runs' ``rho_sim`` with their log-deviation from the theory times
    ``1/sqrt 2`` (the fluctuation of ``N`` independent units instead of ``N/2``)."""
    keys = ["N", "step", "k"]
    z = df.regime == ZERO_OUTPUT
    sim = df[z & (df.quantity == "rho_sim")]
    th = df[z & (df.quantity == "rho_theory")].set_index(keys).value
    th = th.reindex(pd.MultiIndex.from_frame(sim[keys])).to_numpy()
    v = sim.value.to_numpy()
    df.loc[sim.index, "value"] = th * (v / th) ** (1 / np.sqrt(2.0))
    return df


def _linear_at_twice_the_width(df: pd.DataFrame) -> pd.DataFrame:
    """Every linear network's per-mode rho and spectrum with their log-deviation from the
    exact reference times ``1/sqrt 2`` at every step (a network of width ``2N`` recorded as
    ``N``)."""
    keys = ["task", "regime", "step", "k"]
    lin = df.student == "linear"
    for q, ref in (("rho_sim", "rho_reference"), ("spectrum_sim", "spectrum_reference")):
        sim = df[lin & (df.quantity == q)]
        th = df[lin & (df.quantity == ref)].set_index(keys).value
        th = th.reindex(pd.MultiIndex.from_frame(sim[keys])).to_numpy()
        v = sim.value.to_numpy()
        new = th * (v / th) ** (1 / np.sqrt(2.0))
        df.loc[sim.index, "value"] = np.where(np.isfinite(new), new, v)
    return df


def _lazy_as_mlp(df: pd.DataFrame) -> pd.DataFrame:
    keys = ["task", "regime", "step", "k", "quantity"]
    net = df.task == "net"
    q = df.quantity.isin(["rho_train", "rho_heldout", "loss_train", "loss_heldout"])
    return _take(df, net & q & (df.student == "mlp"), net & q & (df.student == "mlp-lazy"),
                 keys)


def _rank_order_exponents(values: Any, kmin: int, kmax: int) -> np.ndarray:
    """:func:`specdyn.measure.mode_exponents` on the values sorted into decreasing order
    (rank order: the convention error)."""
    from specdyn.measure.data_spectra import mode_exponents

    arr = np.asarray(values, dtype=np.float64)
    return mode_exponents(-np.sort(-arr, axis=-1), kmin, kmax)


def _theory_on_sorted_mu(cfg: Any, folder: Path) -> None:
    """Every aligned theory of the tables (the linear student's per task, the ReLU student's
    effective theory) rebuilt on ``mu_k`` sorted into decreasing order, and the tasks'
    theory errors with it (where the table holds the task's feature-learning run)."""
    from specdyn import io, theory
    from specdyn.data import aligned_setting
    from specdyn.data import decompose_data as decompose
    from specdyn.experiments.real_data.config import BLUR_REGIMES, REGIMES
    from specdyn.experiments.real_data.readings import net_error, series
    from specdyn.experiments.real_data.students import relu_data
    from specdyn.settings import AlignedSetting

    summary = io.read_json(folder / "record.json")["summary"]
    modes = pd.read_parquet(folder / "real-data_modes.parquet")
    relu = {"relu-patches": relu_data(cfg, "shift"), "relu-blur": relu_data(cfg, "blur")}

    def setting(task: str, regime: str, student: str) -> Any:
        if student == "relu":
            dec = decompose(*relu[task])
            reg = {**REGIMES, **BLUR_REGIMES}[regime]
            S = reg.sigma_w**2 + reg.sigma_a**2
            s = aligned_setting(dec, reg.sigma_w, reg.sigma_a,
                                reg.gamma0_ratio * S / float(np.sqrt(dec.mu[0])))
            wrong = AlignedSetting(s.lam_values, np.sort(dec.mu)[::-1], s.sigma_w, s.sigma_a,
                                   s.gamma0)
            return theory.effective_setting(wrong, "relu")
        m = modes[modes.task == task].sort_values("k")
        reg = summary.get(task, {}).get("regimes", {}).get(regime)
        if m.empty or reg is None:
            return None
        return AlignedSetting(m.lam.to_numpy(), np.sort(m.mu.to_numpy())[::-1],
                              reg["sigma_w"], reg["sigma_a"], reg["linear"]["gamma0"])

    def change(df: pd.DataFrame) -> pd.DataFrame:
        th = df[(df.quantity == "rho_theory") & df.student.isin(["linear", "relu"])]
        for (task, regime, student), g in th.groupby(["task", "regime", "student"],
                                                     sort=False):
            s = setting(str(task), str(regime), str(student))
            if s is not None:
                df.loc[g.index, "value"] = np.asarray(theory.rho(s, g.k.to_numpy(),
                                                                 g.t.to_numpy()))
        return df

    edit_table(folder, "real-data.parquet", change)
    dyn = pd.read_parquet(folder / "real-data.parquet")

    def errors(tk: pd.DataFrame) -> pd.DataFrame:
        out = []
        for r in tk.itertuples():
            s = series(dyn, str(r.task), "feature-learning")
            e = net_error(s["rho_reference"], s["rho_theory"], int(r.kmax))
            out.append(e if np.isfinite(e) else float(r.error))  # no FL rows: as it was
        return tk.assign(error=out)

    edit_table(folder, "real-data_tasks.parquet", errors)


REAL_DATA_WRONG = (
    WrongModel("never learns", "every network's spectra, per-mode rho and losses stay at "
               "their step-0 values (a run that does not train)", _never_learns,
               catches=("net-vs-reference/patches/feature-learning", "blur-end/IIIa",
                        "patches-transient", "mlp-transient-size")),
    WrongModel("lazy as feature learning", "the lazy run of each task fed as its "
               "feature-learning run (Regions IIIa and IIIb included)",
               table_edit("real-data.parquet", _lazy_as_fl),
               catches=("net-vs-reference/blur/IIIb", "blur-end/IIIa", "blur-end/IIIb",
                        "blur-transient-height")),
    WrongModel("aligned theory as exact reference", "the aligned per-mode theory fed as the "
               "exact reference on every task, misaligned ones included", _aligned_as_reference,
               catches=("overlap-orders-error", "net-vs-reference/digits/feature-learning",
                        "digits-miss-is-misalignment")),
    WrongModel("IIIb fed as IIIa", "the blurred target's Region IIIb run fed as its IIIa run "
               "(an end exponent beta/2 too low)",
               table_edit("real-data.parquet", lambda df: _replaced(df, "blur", "IIIb", "IIIa")),
               catches=("blur-end/IIIa",)),
    WrongModel("width ignored", "every run of the lazy ReLU width series, from both starts, at "
               "the smallest width (the width never reaching the student)",
               table_edit("real-data_widths.parquet", _width_ignored),
               catches=("relu-lazy-zero-level",), kind="attribution"),
    WrongModel("network is its reference", "the linear network's per-mode rho and spectrum "
               "are the exact reference's (a simulation that returns its theory)",
               table_edit("real-data.parquet", _network_is_reference),
               catches=("net-vs-reference/patches/feature-learning",
                        "net-vs-reference/blur/IIIb"), kind="is-theory"),
    WrongModel("clock off by 2", "the linear network runs at twice the speed: its values at "
               "time t are those at 2t", table_edit("real-data.parquet", _clock_off),
               catches=("learning-clock",), kind="clock"),
    WrongModel("held-out is training", "the networks' held-out per-mode rho, spectra and loss "
               "are the training ones", table_edit("real-data.parquet", _heldout_is_training),
               catches=("mlp-heldout-loss",), kind="attribution"),
    WrongModel("zero-output control is the random start", "the lazy ReLU's zero-output runs "
               "are its random-start runs (the control is not one)",
               table_edit("real-data_widths.parquet", _zero_is_random),
               catches=("relu-lazy-zero-drift", "relu-lazy-zero-level"), kind="attribution"),
    WrongModel("lazy fluctuation of N units", "the zero-output lazy ReLU's deviation from its "
               "theory is that of N independent units, not N/2 (1/sqrt 2 in log rho)",
               table_edit("real-data_widths.parquet", _fluctuation_of_n),
               catches=("relu-lazy-zero-level",), kind="fluctuation-size"),
    WrongModel("linear networks at width 2N", "every linear network's deviation from its "
               "exact reference that of twice its width (1/sqrt 2 in log rho, every step)",
               table_edit("real-data.parquet", _linear_at_twice_the_width),
               catches=("start-level",), kind="fluctuation-size"),
    WrongModel("lazy baseline as the MLP", "the MLP's per-mode rho and losses are its lazy "
               "baseline's", table_edit("real-data.parquet", _lazy_as_mlp),
               catches=("mlp-transient-size",), kind="attribution"),
    WrongModel("exponents in rank order", "every exponent fitted on the values sorted into "
               "decreasing order (rank order), not in mode order, in the claims and readings "
               "alike", lambda cfg, folder: None, catches=("estimator-oracle",),
               kind="convention",
               patch={"specdyn.measure.mode_exponents": _rank_order_exponents}),
    WrongModel("theory on mu in rank order", "every aligned theory (the linear student's "
               "and the ReLU's effective one) built from mu_k sorted into decreasing order, "
               "not the data's mode order", _theory_on_sorted_mu,
               catches=("small-overlap-theory",), kind="wrong-inputs"),
)

#: The classes of mistake that cannot occur here, and why.
REAL_DATA_WRONG_NA = {
    "temperature": "no claim reads a spread set by a temperature or a noise level: the "
                   "denoising task's noise is part of its data, seen by the theory and the "
                   "networks alike",
}
