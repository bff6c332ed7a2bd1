"""The mean-field wrong models: what propagation-of-chaos, sparse-atoms and error-budget
would have written under a plausible mistake (:class:`~specdyn.runs.WrongModel`), built
from a run's own tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn.experiments.mean_field.readings import INIT_EARLY, INIT_END
from specdyn.runs.registry import WrongModel
from specdyn.runs.wrong import edit_table, table_edit
from specdyn.sim.protocol import derive_seed

#: The seed of the wrong models' own draws (untrained particles): fixed, not the run's.
_WRONG_SEED = 20261205

# --------------------------------------------------------------------------
# propagation-of-chaos
# --------------------------------------------------------------------------


def _chaos_rate(df: pd.DataFrame) -> pd.DataFrame:
    """The coupled distances fall as N^(-1/2), not N^(-1) (a rate of the fluctuations'
    size, not of their squares)."""
    grow = np.sqrt(df["N"] / df["N"].min())
    return df.assign(sq_distance=df["sq_distance"] * grow,
                     w2_distance=df["w2_distance"] * grow)


def _chaos_end_only(df: pd.DataFrame) -> pd.DataFrame:
    """The 1/N rate only at the end: at every earlier checkpoint the distance is the same at
    every N (its mean over N), as for a coupling that only converges at the horizon."""
    early = df["step"] < df["step"].max()
    for col in ("sq_distance", "w2_distance"):
        mean = df[early].groupby(["seed", "step"])[col].transform("mean")
        df.loc[early, col] = mean
    return df


_CHAOS = "propagation-of-chaos.parquet"


CHAOS_WRONG = (
    WrongModel("rate N^-1/2", "the coupled distance falls as N^(-1/2) (the fluctuations' "
               "size taken for their square)", table_edit(_CHAOS, _chaos_rate),
               catches=("slope of the coupled distance against N",)),
    WrongModel("rate only at the end", "the distance is flat in N at every checkpoint "
               "before the last (the rate not uniform in time)",
               table_edit(_CHAOS, _chaos_end_only),
               catches=("worst slope over checkpoints t > 0",)),
)

# --------------------------------------------------------------------------
# sparse-atoms
# --------------------------------------------------------------------------

_ATOMS = ("sparse-atoms.parquet", "sparse-atoms_weak.parquet")

def _untrained(cfg: Any, folder: Path) -> None:
    """Both final-particle tables replaced by untrained particles, drawn as the engine draws
    its initial ones: a ~ N(0, 1), w ~ N(0, I_D / D)."""
    rng = np.random.default_rng(derive_seed(_WRONG_SEED, "untrained particles"))

    def fresh(df: pd.DataFrame) -> pd.DataFrame:
        d = sum(c.startswith("w") and c[1:].isdigit() for c in df.columns)
        df["a"] = rng.standard_normal(len(df))
        for j in range(d):
            df[f"w{j + 1}"] = rng.standard_normal(len(df)) / np.sqrt(d)
        return df

    for table in _ATOMS:
        edit_table(folder, table, fresh)


ATOMS_WRONG = (
    WrongModel("untrained particles", "untrained random particles (the network never "
               "learns): a ~ N(0, 1), w ~ N(0, I/D)", _untrained,
               catches=("atoms holding 90% of the mass <= S* = 2",)),
    WrongModel("output x1.25", "every output weight 25 % too large (the atoms' coefficients "
               "a |w| off by that factor)",
               table_edit(_ATOMS, lambda df: df.assign(a=1.25 * df["a"])),
               catches=("identifiability: atom coefficient a|w| - lasso-shrunk teacher's "
                        "(largest)",)),
)

# --------------------------------------------------------------------------
# error-budget
# --------------------------------------------------------------------------


_BUDGET = "error-budget.parquet"


def _budget_part(part: str, change: Any) -> Any:
    """A wrong model rewriting the ``value`` of one part's rows by ``change(rows)``."""
    def edit(df: pd.DataFrame) -> pd.DataFrame:
        rows = df["part"] == part
        df.loc[rows, "value"] = change(df[rows])
        return df
    return table_edit(_BUDGET, edit)


def _init_kept(df: pd.DataFrame) -> pd.DataFrame:
    """The init scale is never forgotten: the t_end test error of each init scale is its
    error at t_early."""
    init = df["part"] == "init scale"
    early = df[init & (df["knob"] == INIT_EARLY)].set_index("x")["value"]
    end = init & (df["knob"] == INIT_END)
    df.loc[end, "value"] = df.loc[end, "x"].map(early).to_numpy()
    return df


BUDGET_WRONG = (
    WrongModel("particle rate N^-1/2", "the particle error falls as N^(-1/2), not N^(-1)",
               _budget_part("particle",
                            lambda r: r["value"] * np.sqrt(r["x"] / r["x"].min())),
               catches=("particle part: slope against N",)),
    WrongModel("init never forgotten", "an initialisation-only residual: the test error at "
               "t_end of each init scale stays what it was at t_early",
               table_edit(_BUDGET, _init_kept),
               catches=("init forgotten: spread of the t_end test error over init scales "
                        "((max - min) / mean)",)),
    WrongModel("optimisation stalls", "the optimisation error stops falling after the first "
               "checkpoint (a run that stalls)",
               _budget_part("optimisation",
                            lambda r: np.full(len(r), float(r.sort_values("x")["value"]
                                                            .iloc[0]))),
               catches=("optimisation part falls with t (Spearman)",)),
)
