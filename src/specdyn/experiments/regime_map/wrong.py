"""The regime map's wrong models: what its table would hold under a plausible mistake
(:class:`~specdyn.runs.WrongModel`), built from its own ``regime-map.parquet``."""

from __future__ import annotations

import pandas as pd

from specdyn.runs.registry import WrongModel
from specdyn.runs.wrong import table_edit


def _gamma_step_low(df: pd.DataFrame) -> pd.DataFrame:
    """Each cell shows the simulated change of the cell one gamma0 step below it (the
    lowest keeps its own): gamma0 theta0 / S off by one grid factor (5.6 at the quick
    grid), e.g. gamma0 not rescaled by theta0 / S."""
    df = df.sort_values(["sigma_ratio", "gamma_ratio"]).copy()
    low = df.groupby("sigma_ratio")["delta_alpha"].shift(1)
    df["delta_alpha"] = low.fillna(df["delta_alpha"])
    return df


REGIME_MAP_WRONG = (
    WrongModel("change x0.75", "every simulated exponent change 25 % too small (a scale "
               "error of the fitted exponent)",
               table_edit("regime-map.parquet",
                          lambda df: df.assign(delta_alpha=0.75 * df["delta_alpha"])),
               catches=("max |simulation - theory| exponent change",)),
    WrongModel("gamma0 one step low", "each cell simulated at the next smaller gamma0 "
               "theta0 / S of the grid (a factor 5.6: gamma0 not rescaled by theta0 / S)",
               table_edit("regime-map.parquet", _gamma_step_low),
               catches=("max |simulation - theory| exponent change",)),
)
