"""The two-step experiments' wrong models: what two-step-phase and batch-reuse would have
written under a plausible mistake (:class:`~specdyn.runs.WrongModel`), built from a run's
own table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn.runs.registry import WrongModel
from specdyn.runs.wrong import edit_table

# --------------------------------------------------------------------------
# two-step-phase
# --------------------------------------------------------------------------


def _rank_two(cfg: Any, folder: Path) -> None:
    """The step-1 update has a second direction of 0.6 times the first's strength."""
    edit_table(folder, "two-step-phase.parquet",
               lambda df: df.assign(s2_dW1=0.6 * df["s1_dW1"]))


def _one_step_picture(cfg: Any, folder: Path) -> None:
    """Step 2 adds no spike (the one-step picture): W2 keeps only W1's outliers."""
    edit_table(folder, "two-step-phase.parquet", lambda df: df.assign(
        count_W2=df["count_W1"], count_W2_step2=0, count_W2_identified=df["count_W1"]))


def _extra_outlier(cfg: Any, folder: Path) -> None:
    """One outlier more than measured in every run (a bulk edge placed too low)."""
    edit_table(folder, "two-step-phase.parquet",
               lambda df: df.assign(count_W2=df["count_W2"] + 1))


PHASE_WRONG = (
    WrongModel("rank-two step 1", "a rank-two step-1 update, s2/s1 = 0.6 (the first step "
               "learns two directions)", _rank_two,
               catches=("abstract's rank-one step: s2/s1 of the step-1 update W1 - W0, "
                        "largest run",)),
    WrongModel("no step-2 spikes", "the second step adds no outlier (the one-step picture: "
               "W2 keeps only the step-1 spike)", _one_step_picture,
               catches=("step-2 count rises with floor (Spearman over all cells)",)),
    WrongModel("one outlier too many", "every run counts one outlier more (a bulk edge "
               "estimated too low)", _extra_outlier,
               catches=("count <= 1 + floor(alpha2/(1/2 - alpha1))",)),
)

# --------------------------------------------------------------------------
# batch-reuse
# --------------------------------------------------------------------------


def _overlaps_from(df: pd.DataFrame, rows: pd.Series, target: str, batch: str) -> np.ndarray:
    """``max_overlap_identified`` of ``target``'s ``batch`` runs, seed by seed, for ``rows``."""
    src = df[(df["target"] == target) & (df["batch"] == batch)].set_index("seed")
    return src["max_overlap_identified"].reindex(df.loc[rows, "seed"]).to_numpy()


def _reuse_useless(cfg: Any, folder: Path) -> None:
    """Reusing the batch changes nothing: every reused run learns what the fresh run of its
    seed learned."""
    def same(df: pd.DataFrame) -> pd.DataFrame:
        for target in df["target"].unique():
            rows = (df["target"] == target) & (df["batch"] == "reused")
            df.loc[rows, "max_overlap_identified"] = _overlaps_from(df, rows, target, "fresh")
        return df

    edit_table(folder, "batch-reuse.parquet", same)


def _he2_helped(cfg: Any, folder: Path) -> None:
    """Reuse helps He2 as it helps He3 (the reuse quantity E[z sigma*^(k+1)] ignored): He2's
    reused runs learn what He3's reused runs learned."""
    def helped(df: pd.DataFrame) -> pd.DataFrame:
        rows = (df["target"] == "He2") & (df["batch"] == "reused")
        df.loc[rows, "max_overlap_identified"] = _overlaps_from(df, rows, "He3", "reused")
        return df

    edit_table(folder, "batch-reuse.parquet", helped)


REUSE_WRONG = (
    WrongModel("reuse changes nothing", "a reused batch learns what a fresh one does (the "
               "second step's correlation with the first batch lost)", _reuse_useless,
               catches=("He3: reused min overlap - fresh max overlap",)),
    WrongModel("He2 helped by reuse", "reuse helps He2 as it helps He3 (the reuse quantity "
               "E[z sigma*(z)^(k+1)] = 0 of He2 ignored)", _he2_helped,
               catches=("He2: reused mean overlap - fresh max overlap",)),
)
