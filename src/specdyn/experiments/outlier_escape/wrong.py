"""The outlier-escape experiments' wrong models: what bbp-escape, trainability and
lr-transfer would have written under a plausible mistake
(:class:`~specdyn.runs.WrongModel`), built from a run's own tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn.runs.registry import WrongModel
from specdyn.runs.wrong import edit_table, table_edit

# --------------------------------------------------------------------------
# bbp-escape
# --------------------------------------------------------------------------

_BBP = "bbp-escape.parquet"
_STOCHASTIC = "bbp-escape_stochastic.parquet"


def _bbp_late(factor: float) -> Any:
    """Every measured row at step ``s`` shows what the real run measured at ``s / factor``
    (the nearest recorded step at or below it): the escape ``factor`` times late."""
    def late(df: pd.DataFrame) -> pd.DataFrame:
        meas = df[df["source"] == "measured"]
        steps = np.sort(meas["step"].unique())
        src = {int(st): int(steps[max(int(np.searchsorted(steps, st / factor, "right")) - 1,
                                      0)]) for st in steps}
        by = meas.set_index(["step", "quantity"])
        rows = df["source"] == "measured"
        key = pd.MultiIndex.from_arrays([df.loc[rows, "step"].map(src),
                                         df.loc[rows, "quantity"]])
        df.loc[rows, "value"] = by["value"].reindex(key).to_numpy()
        df.loc[rows, "flagged"] = by["flagged"].reindex(key).to_numpy()
        return df
    return table_edit(_BBP, late)


def _bbp_unaligned(df: pd.DataFrame) -> pd.DataFrame:
    """The outlier escapes along a direction unrelated to the teacher's: the top singular
    vectors' overlaps keep their t = 0 (random) values."""
    for side in ("left", "right"):
        rows = (df["source"] == "measured") & (df["quantity"] == f"{side}_overlap2")
        first = df[rows].sort_values("step")["value"].iloc[0]
        df.loc[rows, "value"] = first
    return df


def _bbp_outlier_high(df: pd.DataFrame) -> pd.DataFrame:
    """The top singular value 10 % above the measured one once it is an outlier (the
    spike's location formula off by 10 %, e.g. s(theta) read with c = D/P for P/D)."""
    rows = (df["source"] == "measured") & (df["quantity"] == "sv1") & (df["flagged"] > 0)
    df.loc[rows, "value"] *= 1.1
    return df


def _sgd_bulk_as_population(cfg: Any, folder: Path) -> None:
    """The SGD run's bulk shrinks as population GD's does, (1 - lr)^t: SGD's noise and
    slower mean-square decay left out (its singular values below the top one rescaled)."""
    def shrink(df: pd.DataFrame) -> pd.DataFrame:
        rows = (df["run"] == "sgd") & df["quantity"].str.match(r"sv[2-9]")
        df.loc[rows, "value"] *= (1.0 - cfg.sgd_lr) ** df.loc[rows, "step"]
        return df

    edit_table(folder, _STOCHASTIC, shrink)


def _nonlinear_high(df: pd.DataFrame) -> pd.DataFrame:
    """The nonlinear layer's top singular value 10 % above the run's once flagged."""
    rows = ((df["run"] == "nonlinear") & (df["quantity"] == "sv1")
            & (df["flagged"] > 0))
    df.loc[rows, "value"] *= 1.1
    return df


BBP_WRONG = (
    WrongModel("escape 30 % late", "the outlier leaves the bulk 30 % later than the run's "
               "(every measured row at step s is the run's at s / 1.3: a crossing time read "
               "off the wrong edge)", _bbp_late(1.3),
               catches=("measured escape / t* - 1",)),
    WrongModel("no alignment", "the outlier escapes along a random direction: the top "
               "singular vectors' overlaps with the teacher stay at their t = 0 values",
               table_edit(_BBP, _bbp_unaligned)),
    WrongModel("outlier 10 % high", "the top singular value 10 % above the run's once it "
               "is flagged (a location formula 10 % off)", table_edit(_BBP, _bbp_outlier_high),
               catches=("top singular value / BBP outlier path - 1, once clear",)),
    WrongModel("SGD bulk as population GD's", "the SGD run's bulk shrinks as (1 - lr)^t, as "
               "under population GD (SGD's noise and slower mean-square decay left out)",
               _sgd_bulk_as_population,
               catches=("SGD: top bulk singular value / its second-moment edge - 1, every "
                        "checkpoint (largest |.|)",)),
    WrongModel("nonlinear outlier 10 % high", "the nonlinear layer's top singular value 10 % "
               "above the run's once flagged (its spike strength off: e.g. mu1 of another "
               "activation)", table_edit(_STOCHASTIC, _nonlinear_high),
               catches=("nonlinear layer: outlier location",)),
)

# --------------------------------------------------------------------------
# trainability
# --------------------------------------------------------------------------


def _single_layer_step(df: pd.DataFrame) -> pd.DataFrame:
    """Each single-layer cell shows the next larger learning rate's outcome (a status
    boundary one lr step low: a step size read off the wrong grid point)."""
    df = df.sort_values(["model", "init_var", "lr"]).copy()
    one = df["model"] == "single-layer"
    nxt = df[one].groupby("init_var")["rel_error"].shift(-1)
    df.loc[nxt.index, "rel_error"] = nxt.fillna(df.loc[nxt.index, "rel_error"])
    return df


def _naive_two_layer(df: pd.DataFrame) -> pd.DataFrame:
    """The two-layer network diverges wherever lr exceeds 2 / sharpness at initialisation
    (the naive stability line, no catapult)."""
    rows = (df["model"] == "two-layer") & (df["lr"] > df["naive_lr"])
    df.loc[rows, "rel_error"] = np.nan
    return df


TRAINABILITY_WRONG = (
    WrongModel("boundary one lr step low", "every single-layer cell shows the outcome of "
               "the next larger learning rate (the boundary one grid step off)",
               table_edit("trainability.parquet", _single_layer_step),
               catches=("single layer: cells agreeing with the theory",)),
    WrongModel("naive 2/sharpness", "the two-layer network diverges past the naive line "
               "2 / sharpness at initialisation (no catapult phase)",
               table_edit("trainability.parquet", _naive_two_layer),
               catches=("two layers: rows converging up to a boundary beyond 2/sharpness",)),
)

# --------------------------------------------------------------------------
# lr-transfer
# --------------------------------------------------------------------------


def _ntk_as_mup(df: pd.DataFrame) -> pd.DataFrame:
    """NTK behaves as muP: its escape steps are muP's (the parameterisation's width scaling
    lost), width by width and seed by seed."""
    mup = df[df["parameterization"].str.startswith("mup")]
    first = mup["parameterization"].iloc[0]
    ref = mup[mup["parameterization"] == first].set_index(["width", "seed"])["escape_step"]
    ntk = df["parameterization"].str.startswith("ntk")
    key = pd.MultiIndex.from_arrays([df.loc[ntk, "width"], df.loc[ntk, "seed"]])
    df.loc[ntk, "escape_step"] = ref.reindex(key).to_numpy()
    return df


def _mup_lr_drifts(df: pd.DataFrame) -> pd.DataFrame:
    """muP's best lr falls one grid step per doubling of the width (lr not scaled with
    gamma0^2 N): the loss of width N at lr_i is the real one's at lr_(i + log2(N / N0))."""
    mup = df["parameterization"] == "mup"
    grid = np.sort(df.loc[mup, "lr"].unique())
    n0 = df.loc[mup, "width"].min()
    by = df[mup].set_index(["width", "seed", "lr"])["loss"]
    idx = np.searchsorted(grid, df.loc[mup, "lr"].to_numpy())
    shift = np.round(np.log2(df.loc[mup, "width"].to_numpy() / n0)).astype(int)
    src = idx + shift
    ok = src < grid.size
    key = pd.MultiIndex.from_arrays([df.loc[mup, "width"], df.loc[mup, "seed"],
                                     grid[np.minimum(src, grid.size - 1)]])
    df.loc[mup, "loss"] = np.where(ok, by.reindex(key).to_numpy(), np.nan)
    return df


LR_TRANSFER_WRONG = (
    WrongModel("NTK as muP", "the NTK runs escape as the muP ones do (the width scaling of "
               "the parameterisation lost)", table_edit("lr-transfer_escape.parquet", _ntk_as_mup),
               catches=("NTK: escape step growth, widest / narrowest - 1 (smallest over "
                        "runs)",)),
    WrongModel("muP lr drifts", "muP's best learning rate falls one grid step per doubling "
               "of the width (lr not scaled with gamma0^2 N)",
               table_edit("lr-transfer.parquet", _mup_lr_drifts),
               catches=("muP: best lr moves across widths (grid steps)",)),
)
