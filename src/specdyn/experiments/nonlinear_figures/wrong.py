"""fig4's wrong models: what the run would have written under a plausible mistake
(:class:`~specdyn.runs.WrongModel`), built from its own tables ``fig4_slopes.parquet`` and
``fig4.parquet``."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn import theory
from specdyn.experiments.linear_figures.wrong import THETA0_PATCH, slowed
from specdyn.experiments.nonlinear_figures.readings import theory_slopes
from specdyn.measure.exponents import fit_exponents
from specdyn.runs.registry import WrongModel
from specdyn.runs.wrong import edit_table, table_edit
from specdyn.theory.effective import effective_setting


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


FIG4_WRONG: tuple[WrongModel, ...] = (
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


def _spectra_and_slopes(change: Any) -> Any:
    """A wrong model rewriting each run's preactivation spectrum by ``change(cfg, regime,
    t, spectrum, theory)`` (``(times, D)`` arrays, ``theory`` Eq. (12) at gamma0/c1), then
    its fitted slope from it, as the run fits it."""
    def apply(cfg: Any, folder: Path) -> None:
        settings = cfg.settings()
        fits: dict[str, dict[float, float]] = {}

        def spectra(df: pd.DataFrame) -> pd.DataFrame:
            for regime, s in settings.items():
                m = (df["regime"] == regime) & (df["quantity"] == "preact")
                w = df[m].pivot(index="t", columns="k", values="value").sort_index()
                t, k = w.index.to_numpy(dtype=float), w.columns.to_numpy(dtype=float)
                th = theory.rho(effective_setting(s, cfg.activation), k[None, :], t[:, None])
                new = change(cfg, regime, t, w.to_numpy(dtype=float), th)
                long = pd.DataFrame(new, index=w.index, columns=w.columns).stack()
                df.loc[m, "value"] = long.reindex(pd.MultiIndex.from_arrays(
                    [df.loc[m, "t"], df.loc[m, "k"]])).to_numpy()
                fits[regime] = dict(zip(t, fit_exponents(new, cfg.kmin, cfg.kmax),
                                        strict=True))
            return df

        def slopes(df: pd.DataFrame) -> pd.DataFrame:
            for regime, fit in fits.items():
                m = df["regime"] == regime
                df.loc[m, "slope_sim"] = df.loc[m, "t"].map(fit).to_numpy()
            return df

        edit_table(folder, "fig4.parquet", spectra)
        edit_table(folder, "fig4_slopes.parquet", slopes)
    return apply


def effective_setting_c1_squared(s: Any, activation: Any) -> Any:
    """:func:`~specdyn.theory.effective_setting` with a convention slip: ``gamma0 / c1^2``
    (the linear part's coefficient counted in both layers) for ``gamma0 / c1``."""
    c1 = s.gamma0 / effective_setting(s, activation).gamma0
    return dataclasses.replace(s, gamma0=s.gamma0 / c1**2)


def _theory_column(setting_of: Any, *, plain_of: Any = None) -> Any:
    """A wrong model whose linear theory at gamma0/c1 is that of ``setting_of(s, activation)``
    (``s`` each run's setting, as ``cfg.settings()`` gives it under the model's patch); with
    ``plain_of`` the student's slope keeps its distance from it (a network of the same wrong
    inputs) and the theory at gamma0 is that of ``plain_of(s)``."""
    def apply(cfg: Any, folder: Path) -> None:
        settings = cfg.settings()

        def change(df: pd.DataFrame) -> pd.DataFrame:
            for regime, s in settings.items():
                m = df["regime"] == regime
                t = df.loc[m, "t"].to_numpy(dtype=float)
                new = theory_slopes(setting_of(s, cfg.activation), t, cfg.kmin, cfg.kmax)
                if plain_of is not None:
                    old = df.loc[m, "slope_linear_theory_effective_gamma0"].to_numpy()
                    df.loc[m, "slope_sim"] = df.loc[m, "slope_sim"].to_numpy() + new - old
                    df.loc[m, "slope_linear_theory"] = theory_slopes(plain_of(s), t, cfg.kmin,
                                                                     cfg.kmax)
                df.loc[m, "slope_linear_theory_effective_gamma0"] = new
            return df

        edit_table(folder, "fig4_slopes.parquet", change)
    return apply


def _swapped(df: pd.DataFrame) -> pd.DataFrame:
    """The two runs' regime labels exchanged."""
    fl = df["regime"] == "feature-learning"
    return df.assign(regime=np.where(fl, "lazy", "feature-learning"))


FIG4_WRONG = FIG4_WRONG + (
    WrongModel("is its theory", "the student returns the linear theory at gamma0/c1: its "
               "spectrum is Eq. (12) there, its slope that spectrum's",
               _spectra_and_slopes(lambda cfg, regime, t, rho, th: th.copy()),
               catches=("t = 0 deviation: finite-size size",), kind="is-theory"),
    WrongModel("fluctuations x1.5", "the student's finite-size deviations from the theory 1.5 "
               "times their size (log spectrum - log theory scaled by 1.5 at every time)",
               _spectra_and_slopes(lambda cfg, regime, t, rho, th: th * (rho / th) ** 1.5),
               catches=("t = 0 deviation: finite-size size",), kind="fluctuation-size"),
    WrongModel("half speed", "both students learn at half the speed (a time unit off by 2): "
               "spectrum and slope at t are the real ones at t / 2",
               _spectra_and_slopes(lambda cfg, regime, t, rho, th: slowed(2.0)(t, rho)),
               catches=("clock: slope peak",), kind="clock"),
    WrongModel("gamma0 / c1^2", "the effective theory with gamma0 / c1^2 (the linear part "
               "counted in both layers), in the function the figure draws and the claims read "
               "(patched)", _theory_column(effective_setting_c1_squared),
               catches=("effective theory: oracle",), kind="convention",
               patch={"specdyn.theory.effective_setting": effective_setting_c1_squared,
                      "specdyn.experiments.nonlinear_figures.run.effective_setting":
                          effective_setting_c1_squared}),
    WrongModel("regimes swapped", "each run's tables labelled with the other regime",
               table_edit(("fig4.parquet", "fig4_slopes.parquet"), _swapped),
               kind="attribution"),
    WrongModel("mu0 = 1", "theories and students of a teacher spectrum that lost its "
               "normalisation 1/zeta(alpha + beta): the student keeps its distance from the "
               "(wrong) effective theory",
               _theory_column(lambda s, act: effective_setting(
                   dataclasses.replace(s, mu0=1.0), act),
                   plain_of=lambda s: dataclasses.replace(s, mu0=1.0)),
               catches=("effective theory: oracle",), kind="wrong-inputs"),
    WrongModel("theta0 = mu0", "gamma0 = ratio S / mu0, not S / sqrt(mu0), in the setting the "
               "students, the theories and the claims all build (PowerLawSetting.paper, "
               "patched)", _theory_column(effective_setting, plain_of=lambda s: s),
               catches=("effective theory: oracle",),
               kind="convention", patch=THETA0_PATCH),
)
