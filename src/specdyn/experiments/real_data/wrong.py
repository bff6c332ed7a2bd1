"""real-data's wrong models: the plausible wrong answers its expected claims must catch.

Each rewrites a scratch copy of a finished run's tables (:class:`specdyn.runs.WrongModel`,
:func:`specdyn.runs.wrong.judge`):

- ``never learns``: every network's measured rows (linear, ReLU, MLP, CNN; spectra and
  per-mode ``rho``) frozen at their step-0 values;
- ``lazy as feature learning``: each feature-learning run of the linear student (patches,
  digits; Regions IIIa and IIIb on the blurred target) replaced by the same task's lazy
  run, checkpoint by checkpoint;
- ``aligned theory as exact reference``: the exact reference replaced by the aligned
  per-mode theory on every task (what a reference that ignores the misalignment would
  give; the tasks' theory error becomes 0);
- ``IIIb fed as IIIa``: the blurred target's Region IIIa run replaced by its IIIb run (an
  end exponent off by beta/2);
- ``width ignored``: every lazy ReLU run of the width series given the smallest width's
  values (the width never reaching the student: each run at the same ``N``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn.runs.registry import WrongModel
from specdyn.runs.wrong import edit_table, table_edit

#: The quantities a network measured (the rest are theory or reference).
SIM = ("rho_sim", "spectrum_sim", "rho_train", "rho_heldout", "spectrum_train",
       "spectrum_heldout")
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
    """Each lazy run's ``rho_sim`` replaced by the smallest width's, row for row (same
    steps and modes: the widths share their checkpoints)."""
    sim = (df.regime == "lazy") & (df.quantity == "rho_sim")
    keys = ["step", "k"]
    smallest = df[sim & (df.N == df.loc[sim, "N"].min())].set_index(keys).value
    idx = pd.MultiIndex.from_frame(df.loc[sim, keys])
    df.loc[sim, "value"] = smallest.reindex(idx).to_numpy()
    return df


def _aligned_as_reference(cfg: Any, folder: Path) -> None:
    def change(df: pd.DataFrame) -> pd.DataFrame:
        keys = ["task", "student", "regime", "step", "k"]
        for what in ("rho", "spectrum", "loss"):
            th = df[df.quantity == f"{what}_theory"].set_index(keys).value
            ref = df[df.quantity == f"{what}_reference"]
            idx = pd.MultiIndex.from_frame(ref[keys])
            df.loc[ref.index, "value"] = th.reindex(idx).to_numpy()
        return df

    edit_table(folder, "real-data.parquet", change)
    edit_table(folder, "real-data_tasks.parquet", lambda df: df.assign(error=0.0))


REAL_DATA_WRONG = (
    WrongModel("never learns", "every network's spectra and per-mode rho stay at their "
               "step-0 values (a run that does not train)", _never_learns,
               catches=("net-vs-reference/patches/feature-learning", "blur-end/IIIa",
                        "blur-end/IIIb", "patches-transient", "mlp-rise")),
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
    WrongModel("width ignored", "every run of the lazy ReLU width series at the smallest "
               "width (the width never reaching the student)",
               table_edit("real-data_widths.parquet", _width_ignored),
               catches=("relu-lazy-drift-width",)),
)
