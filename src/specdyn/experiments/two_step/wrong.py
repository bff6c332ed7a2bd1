"""The two-step experiments' wrong models: what two-step-phase and batch-reuse would have
written under a plausible mistake (:class:`~specdyn.runs.WrongModel`), built from a run's
own table."""

from __future__ import annotations

import numpy as np
import pandas as pd

from specdyn.runs.registry import WrongModel
from specdyn.runs.wrong import table_edit

# --------------------------------------------------------------------------
# two-step-phase
# --------------------------------------------------------------------------

_PHASE = "two-step-phase.parquet"

PHASE_WRONG = (
    WrongModel("rank-two step 1", "a rank-two step-1 update, s2/s1 = 0.6 (the first step "
               "learns two directions)",
               table_edit(_PHASE, lambda df: df.assign(s2_dW1=0.6 * df["s1_dW1"])),
               catches=("abstract's rank-one step: s2/s1 of the step-1 update W1 - W0, "
                        "largest run",)),
    WrongModel("no step-2 spikes", "the second step adds no outlier (the one-step picture: "
               "W2 keeps only the step-1 spike)",
               table_edit(_PHASE, lambda df: df.assign(count_W2=df["count_W1"],
                                                       count_W2_step2=0,
                                                       count_W2_identified=df["count_W1"])),
               catches=("step-2 count rises with floor (Spearman over all cells)",)),
    WrongModel("one outlier too many", "every run counts one outlier more (a bulk edge "
               "estimated too low)",
               table_edit(_PHASE, lambda df: df.assign(count_W2=df["count_W2"] + 1)),
               catches=("count <= 1 + floor(alpha2/(1/2 - alpha1))",)),
)

# --------------------------------------------------------------------------
# batch-reuse
# --------------------------------------------------------------------------


def _overlaps_from(df: pd.DataFrame, rows: pd.Series, target: str, batch: str) -> np.ndarray:
    """``max_overlap_identified`` of ``target``'s ``batch`` runs, seed by seed, for ``rows``."""
    src = df[(df["target"] == target) & (df["batch"] == batch)].set_index("seed")
    return src["max_overlap_identified"].reindex(df.loc[rows, "seed"]).to_numpy()


def _reuse_useless(df: pd.DataFrame) -> pd.DataFrame:
    """Reusing the batch changes nothing: every reused run learns what the fresh run of its
    seed learned."""
    for target in df["target"].unique():
        rows = (df["target"] == target) & (df["batch"] == "reused")
        df.loc[rows, "max_overlap_identified"] = _overlaps_from(df, rows, target, "fresh")
    return df


def _he2_helped(df: pd.DataFrame) -> pd.DataFrame:
    """Reuse helps He2 as it helps He3 (the reuse quantity E[z sigma*^(k+1)] ignored): He2's
    reused runs learn what He3's reused runs learned."""
    rows = (df["target"] == "He2") & (df["batch"] == "reused")
    df.loc[rows, "max_overlap_identified"] = _overlaps_from(df, rows, "He3", "reused")
    return df


REUSE_WRONG = (
    WrongModel("reuse changes nothing", "a reused batch learns what a fresh one does (the "
               "second step's correlation with the first batch lost)",
               table_edit("batch-reuse.parquet", _reuse_useless),
               catches=("He3: reused min overlap - fresh max overlap",)),
    WrongModel("He2 helped by reuse", "reuse helps He2 as it helps He3 (the reuse quantity "
               "E[z sigma*(z)^(k+1)] = 0 of He2 ignored)",
               table_edit("batch-reuse.parquet", _he2_helped),
               catches=("He2: reused mean overlap - fresh max overlap",)),
)
