"""The theory figures' wrong models: what fig3, fig5 and fig6 would have written under a
plausible mistake (:class:`~specdyn.runs.WrongModel`), built from a run's own table.

Theory figures have no seed to get wrong; their wrong models are the mistakes of a theory:
a neighbouring equation of the paper (Eq. 84, the second layer frozen, for Eq. 12, and
back), a boundary or a whole panel shifted along ``k`` by a few tenths of a decade, a
region whose exponent stops short, a transient replaced by noise.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn import theory
from specdyn.runs.registry import WrongModel
from specdyn.runs.wrong import edit_table, table_edit
from specdyn.sim.protocol import derive_seed


def _shift_k(k: np.ndarray, values: np.ndarray, decades: float) -> np.ndarray:
    """``values`` (along ``k``, axis 0) moved ``decades`` up in ``k``: at ``k`` the value the
    real table has at ``k / 10^decades`` (the end values held beyond the grid)."""
    lk = np.log10(k)
    vals = np.asarray(values, dtype=float)
    if vals.ndim == 1:
        return np.interp(lk - decades, lk, vals)
    return np.stack([np.interp(lk - decades, lk, col) for col in vals.T], axis=1)


def _edit_grid(folder: Path, table: str, rows: Callable[[pd.DataFrame], pd.Series],
               change: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]) -> None:
    """Rewrite the ``value`` of the rows ``rows(df)`` (a ``k`` x ``t`` grid) by
    ``change(k, t, grid)``."""
    def edit(df: pd.DataFrame) -> pd.DataFrame:
        sel = rows(df)
        wide = df[sel].pivot(index="k", columns="t", values="value")
        new = change(wide.index.to_numpy(dtype=float), wide.columns.to_numpy(dtype=float),
                     wide.to_numpy(dtype=float))
        long = pd.DataFrame(new, index=wide.index, columns=wide.columns).stack()
        key = pd.MultiIndex.from_arrays([df.loc[sel, "k"], df.loc[sel, "t"]])
        df.loc[sel, "value"] = long.reindex(key).to_numpy()
        return df

    edit_table(folder, table, edit)


def _deep(quantity: str) -> Callable[[pd.DataFrame], pd.Series]:
    return lambda df: (df["panel"] == "deep-feature-learning") & (df["quantity"] == quantity)


def _fig3_shifted(cfg: Any, folder: Path) -> None:
    for q in ("alpha_eff", "alpha_eff_t_inf"):
        _edit_grid(folder, "fig3.parquet", _deep(q),
                   lambda k, t, v: _shift_k(k, v, 0.4))


def _fig3_first_layer(cfg: Any, folder: Path) -> None:
    s = cfg.settings()["deep-feature-learning"]
    _edit_grid(folder, "fig3.parquet", _deep("alpha_eff"),
               lambda k, t, v: theory.alpha_eff_first_layer(s, k[:, None], t[None, :]))
    _edit_grid(folder, "fig3.parquet", _deep("alpha_eff_t_inf"),
               lambda k, t, v: theory.alpha_eff_first_layer(s, k, np.inf)[:, None])


FIG3_WRONG = (
    WrongModel("deep panel shifted 0.4 decade", "the deep panel's exponent shifted 0.4 decade "
               "up in k (every boundary 2.5 times too high: e.g. a lambda_k off by that "
               "factor)", _fig3_shifted,
               catches=("(a) k_cross(t)", "(a) k_learn(t)", "(a) k_layer(t)")),
    WrongModel("Eq. (84) for Eq. (12)", "the deep panel computed with the second layer frozen "
               "(Eq. 84, the neighbouring equation) instead of both layers trained (Eq. 12)",
               _fig3_first_layer),
)


def _fig5_noise(cfg: Any, folder: Path) -> None:
    rng = np.random.default_rng(derive_seed(20261205, "fig5 noise"))  # the wrong model's own

    def noisy(df: pd.DataFrame) -> pd.DataFrame:
        early = df["t"] < df["t"].max()
        df.loc[early, "value"] *= np.exp(0.5 * rng.standard_normal(int(early.sum())))
        return df

    edit_table(folder, "fig5.parquet", noisy)


def _fig5_both_layers(cfg: Any, folder: Path) -> None:
    s = cfg.setting()
    edit_table(folder, "fig5.parquet", lambda df: df.assign(
        value=theory.rho(s, df["k"].to_numpy(dtype=float), df["t"].to_numpy(dtype=float))))


FIG5_WRONG = (
    WrongModel("noise before the last time", "every time before the last replaced by "
               "noise (the spectrum times a log-normal factor, sd 0.5 in log)", _fig5_noise,
               catches=("every time: R_k = 1 at Eq. (112)'s k_cross(t) (max decades off)",)),
    WrongModel("Eq. (12) for Eq. (84)", "both layers trained (Eq. 12, the neighbouring "
               "equation) instead of the second layer frozen (Eq. 84)", _fig5_both_layers,
               catches=("last time: local exponent at k = 1",)),
)


def _fig6_grid(change: Callable[[Any, np.ndarray, np.ndarray, np.ndarray], np.ndarray]) -> Any:
    def apply(cfg: Any, folder: Path) -> None:
        _edit_grid(folder, "fig6.parquet", lambda df: df["quantity"] == "alpha_eff_first_layer",
                   lambda k, t, v: change(cfg, k, t, v))
    return apply


def _fig6_capped(df: pd.DataFrame) -> pd.DataFrame:
    sel = (df["quantity"] == "alpha_eff_first_layer") & (df["region"] == "II")
    df.loc[sel, "value"] = np.minimum(df.loc[sel, "value"], 2.6)
    return df


FIG6_WRONG = (
    WrongModel("Region II capped at 2.6", "Region II's local exponent capped at 2.6 (the "
               "paper: 3 alpha + beta = 4)",
               table_edit("fig6.parquet", _fig6_capped),
               catches=("Region II: peak alpha_eff nearer 3alpha + beta than alpha + beta",)),
    WrongModel("k shifted 0.3 decade", "the exponent map shifted 0.3 decade up in k (every "
               "boundary a factor 2 too high)",
               _fig6_grid(lambda cfg, k, t, v: _shift_k(k, v, 0.3))),
    WrongModel("Eq. (12) for Eq. (84)", "the exponent of both layers trained (Eq. 12, the "
               "neighbouring equation) in place of the second layer frozen (Eq. 84)",
               _fig6_grid(lambda cfg, k, t, v: theory.alpha_eff(cfg.setting(), k[:, None],
                                                                t[None, :]))),
)
