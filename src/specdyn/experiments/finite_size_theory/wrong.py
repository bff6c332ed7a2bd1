"""finite-size-theory's wrong models: a theory of the finite-size corrections that a
referee would fear, or simulated moments a wrong simulation would give
(:class:`~specdyn.runs.WrongModel`), written into a run's own tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn import theory
from specdyn.runs.registry import WrongModel
from specdyn.runs.wrong import edit_table, table_edit
from specdyn.theory.finite_size import FiniteSizeMoments, finite_size_moments

_TABLE = "finite-size-theory.parquet"


def _plain_linear(cfg: Any, folder: Path) -> None:
    """The nonlinear students compared with the plain linear theory: c1 = E[phi'(h)] not
    folded into gamma0."""
    eff = folder / "finite-size-theory_effective.parquet"
    if eff.exists():
        edit_table(folder, eff.name,
                   lambda df: df.assign(slope_effective=df["slope_linear"]))


def _is_theory(df: pd.DataFrame) -> pd.DataFrame:
    """The simulated moments are the theory's: bias = shift, std = the theory's std."""
    return df.assign(bias_sim=df["shift_theory"], std_sim=df["std_theory"],
                     se_sim=df["std_theory"] / np.sqrt(df["seeds"]))


def _fluctuations(factor: float) -> Any:
    """Every seed's ``log rho_k - log rho_k^inf`` scaled by ``factor``: bias, std and SE
    with it."""
    return lambda df: df.assign(bias_sim=factor * df["bias_sim"], std_sim=factor * df["std_sim"],
                                se_sim=factor * df["se_sim"])


def _half_speed(cfg: Any, folder: Path) -> None:
    """The simulations run at half the speed: ``log rho_k`` at t is the real one's at t / 2,
    measured against Eq. (12) at t (the infinite-size part of the clock error; the
    finite-size parts kept)."""
    s = cfg.setting()

    def change(df: pd.DataFrame) -> pd.DataFrame:
        k, t = df["k"].to_numpy(dtype=float), df["t"].to_numpy(dtype=float)
        lag = np.log(theory.rho(s, k, t / 2.0)) - np.log(theory.rho(s, k, t))
        return df.assign(bias_sim=df["bias_sim"] + lag)

    edit_table(folder, _TABLE, change)


def wishart_variance_halved(s: Any, k: Any, t: Any, N: int | None = None,
                            M: int | None = None) -> FiniteSizeMoments:
    """:func:`~specdyn.theory.finite_size_moments` with a convention slip: the variance of a
    Wishart Gram's diagonal taken as ``sigma^4 / N`` (an off-diagonal entry's) instead of
    ``2 sigma^4 / N``, so the finite-N variance is halved."""
    full = finite_size_moments(s, k, t, N=N, M=M)
    if N is None:
        return full
    by_n = finite_size_moments(s, k, t, N=N)
    by_m = finite_size_moments(s, k, t, M=M) if M is not None else None
    var = by_n.std**2 / 2.0 + (by_m.std**2 if by_m is not None else 0.0)
    return FiniteSizeMoments(full.mean_shift, np.sqrt(var), full.valid, full.ratio,
                             full.node_ratio, full.rho)


def _theory_with(moments: Any) -> Any:
    """Rewrite the theory columns with ``moments(s, k, t, N=, M=)``."""
    def apply(cfg: Any, folder: Path) -> None:
        s = cfg.setting()

        def change(df: pd.DataFrame) -> pd.DataFrame:
            out = []
            for (n, m), g in df.groupby(["N", "M"], dropna=False, sort=False):
                kw = {"N": None if pd.isna(n) else int(n), "M": None if pd.isna(m) else int(m)}
                p = moments(s, g["k"].to_numpy(dtype=float), g["t"].to_numpy(dtype=float), **kw)
                out.append(g.assign(shift_theory=p.mean_shift, std_theory=p.std))
            return pd.concat(out).loc[df.index]

        edit_table(folder, _TABLE, change)
    return apply


def _modes_reversed(df: pd.DataFrame) -> pd.DataFrame:
    """The theory's moments of mode ``D + 1 - k`` given to mode ``k`` (a spectrum taken in
    increasing order): per size and time, the theory columns reversed in ``k``."""
    out = []
    for _, g in df.groupby(["N", "M", "t"], dropna=False, sort=False):
        g = g.sort_values("k")
        out.append(g.assign(shift_theory=g["shift_theory"].to_numpy()[::-1],
                            std_theory=g["std_theory"].to_numpy()[::-1]))
    return pd.concat(out).loc[df.index]


FINITE_SIZE_THEORY_WRONG = (
    WrongModel("no finite-size shift", "the infinite-size theory: no finite-N or finite-M "
               "shift of log rho_k", table_edit(_TABLE, lambda df: df.assign(shift_theory=0.0)),
               catches=("where bias > 5 SE: |bias - shift| in SE",)),
    WrongModel("std x1.25", "the predicted std of log rho_k 25 % too large",
               table_edit(_TABLE, lambda df: df.assign(std_theory=1.25 * df["std_theory"])),
               catches=("std of log rho_k within 3 sampling SE (fraction of valid cells)",)),
    WrongModel("plain linear theory", "the nonlinear students against the plain linear "
               "theory (c1 = E[phi'(h)] not folded into gamma0)", _plain_linear),
    WrongModel("is its theory", "the simulated moments are the theory's (bias = predicted "
               "shift, std = predicted std at every cell)", table_edit(_TABLE, _is_theory),
               catches=("residual size", "std-ratio size"), kind="is-theory"),
    WrongModel("fluctuations x1.5", "every seed's deviation of log rho_k from Eq. (12) 1.5 "
               "times its size (bias, std and SE with it)",
               table_edit(_TABLE, _fluctuations(1.5)), catches=("std level",),
               kind="fluctuation-size"),
    WrongModel("half speed", "the simulations run at half the speed (log rho_k at t is the "
               "real one's at t / 2)", _half_speed,
               catches=("where bias > 5 SE: |bias - shift| in SE",), kind="clock"),
    WrongModel("Wishart diagonal variance sigma^4/N", "the finite-size theory with Var Gw_kk "
               "= sigma_w^4 / N (an off-diagonal entry's) for 2 sigma_w^4 / N, in the function "
               "the figure draws and the claims read (patched)",
               _theory_with(wishart_variance_halved), catches=("t = 0 std oracle",),
               kind="convention",
               patch={"specdyn.theory.finite_size_moments": wishart_variance_halved}),
    WrongModel("std read off the SE", "the std of the seeds' mean (SE) recorded as their std",
               table_edit(_TABLE, lambda df: df.assign(std_sim=df["se_sim"])),
               catches=("std level",), kind="attribution"),
    WrongModel("modes reversed", "the theory's moments of mode D + 1 - k given to mode k (a "
               "spectrum taken in increasing order)", table_edit(_TABLE, _modes_reversed),
               kind="wrong-inputs"),
    WrongModel("no log correction", "the mean shift of log rho_k without the logarithm's "
               "-Var / (2 rho^2) (the shift of rho_k taken for that of its log): every "
               "predicted shift std^2 / 2 higher",
               table_edit(_TABLE, lambda df: df.assign(
                   shift_theory=df["shift_theory"] + 0.5 * df["std_theory"] ** 2)),
               catches=("t = 0 mean-shift oracle",), kind="convention"),
)
