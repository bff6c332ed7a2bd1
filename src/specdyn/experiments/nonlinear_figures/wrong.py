"""fig4's wrong models: what the run would have written under a plausible mistake
(:class:`~specdyn.runs.WrongModel`), built from its own tables ``fig4_slopes.parquet`` and
``fig4.parquet``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from specdyn.runs.registry import WrongModel
from specdyn.runs.wrong import edit_table, table_edit


def _never_learns(cfg: Any, folder: Path) -> None:
    """The feature-learning student stays at its initialisation: its slope and its
    preactivation spectrum keep their t = 0 values."""
    def slopes(df: pd.DataFrame) -> pd.DataFrame:
        fl = df["regime"] == "feature-learning"
        first = df[fl].sort_values("t")["slope_sim"].iloc[0]
        df.loc[fl, "slope_sim"] = first
        return df

    def spectra(df: pd.DataFrame) -> pd.DataFrame:
        fl = (df["regime"] == "feature-learning") & (df["quantity"] == "preact")
        t0 = df.loc[fl, "t"].min()
        start = df[fl & (df["t"] == t0)].set_index("k")["value"]
        df.loc[fl, "value"] = df.loc[fl, "k"].map(start).to_numpy()
        return df

    edit_table(folder, "fig4_slopes.parquet", slopes)
    edit_table(folder, "fig4.parquet", spectra)


FIG4_WRONG = (
    WrongModel("plain linear theory", "the ReLU student follows the linear theory at the "
               "paper's gamma0 (its linear part c1 = 1/2 ignored)",
               table_edit("fig4_slopes.parquet",
                          lambda df: df.assign(slope_sim=df["slope_linear_theory"])),
               catches=("feature-learning: max |sim - linear theory at gamma0/c1|",)),
    WrongModel("never learns", "the feature-learning student never leaves its "
               "initialisation (its slope and spectrum stay at t = 0)", _never_learns,
               catches=("feature learning: lasting slope change (late minimum - slope at "
                        "t = 0)",)),
)
