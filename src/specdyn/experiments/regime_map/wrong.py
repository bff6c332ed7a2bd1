"""The regime map's wrong models: what its table would hold under a plausible mistake
(:class:`~specdyn.runs.WrongModel`), built from its own ``regime-map.parquet``, one of
each class of :data:`~specdyn.runs.WRONG_KINDS` that can occur here (the one that cannot
is in :data:`REGIME_MAP_WRONG_NA`)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn import theory
from specdyn.experiments.regime_map.readings import cell_labels
from specdyn.runs.registry import WrongModel
from specdyn.runs.wrong import edit_table, table_edit
from specdyn.settings import PowerLawSetting

#: The class of mistake that cannot occur here, and why.
REGIME_MAP_WRONG_NA = {
    "temperature": "full-batch GD on the population loss: no noise, no temperature, no label "
                   "noise; the only randomness is the initial draw (the fluctuation-size "
                   "model)",
}
_SIZE_SPECTRUM = "spectrum, log(simulation / theory): root mean square over the cells"
_SIZE_CHANGE = "exponent change, simulation - theory: root mean square over the cells"
_CLOCK = "exponent change's half time: simulation / theory (max decades off)"
_ORACLE = "cell labels against the ODE of the strongest mode (cells that disagree)"


def _gamma_step_low(df: pd.DataFrame) -> pd.DataFrame:
    """Each cell shows the simulated change of the cell one gamma0 step below it (the
    lowest keeps its own): gamma0 theta0 / S off by one grid factor (5.6 at the quick
    grid), e.g. gamma0 not rescaled by theta0 / S."""
    df = df.sort_values(["sigma_ratio", "gamma_ratio"]).copy()
    low = df.groupby("sigma_ratio")["delta_alpha"].shift(1)
    df["delta_alpha"] = low.fillna(df["delta_alpha"])
    return df


def _is_theory(df: pd.DataFrame) -> pd.DataFrame:
    """The simulation returns its theory: every simulated column is the theory's."""
    return df.assign(delta_alpha=df["delta_alpha_theory"], t_half=df["t_half_theory"],
                     R_max=df["R_max_theory"], spec_dev=0.0)


def _fluctuations_x3(df: pd.DataFrame) -> pd.DataFrame:
    """Finite-width deviations 3 times too large (a width 9 times too small): the spectrum's
    and the exponent change's deviation from the theory scaled by 3."""
    dev = df["delta_alpha"] - df["delta_alpha_theory"]
    return df.assign(delta_alpha=df["delta_alpha_theory"] + 3.0 * dev,
                     spec_dev=3.0 * df["spec_dev"])


_regime = theory.regime


def _regime_no_2sw2(s: PowerLawSetting, margin: float = 10.0) -> theory.RegimeReport:
    """:func:`specdyn.theory.regime` with Eq. (33)'s bound written ``gamma0 theta0 =
    sigma_w sigma_a`` (the ``2 sigma_w^2`` under the root dropped)."""
    rep = _regime(s, margin)
    ku = float(np.power(s.gamma0 * s.theta0 / (s.sigma_w * s.sigma_a), 2.0 / s.beta))
    # a cell lazy by the true bound has gamma0 theta0 below it, so below S: not feature
    # learning; the other labels do not depend on k_u
    label = "lazy" if ku <= 1.0 else ("intermediate" if rep.label == "lazy" else rep.label)
    return dataclasses.replace(rep, label=label, k_u=ku)


def _relabel(cfg: Any, folder: Path) -> None:
    """The table's labels written again by whatever ``theory.regime`` is patched in."""
    edit_table(folder, "regime-map.parquet",
               lambda df: df.assign(regime=cell_labels(cfg, df)))


REGIME_MAP_WRONG = (
    WrongModel("change x0.75", "every simulated exponent change 25 % too small (a scale "
               "error of the fitted exponent)",
               table_edit("regime-map.parquet",
                          lambda df: df.assign(delta_alpha=0.75 * df["delta_alpha"])),
               catches=("max |simulation - theory| exponent change",)),
    WrongModel("gamma0 one step low", "each cell simulated at the next smaller gamma0 "
               "theta0 / S of the grid (a factor 5.6: gamma0 not rescaled by theta0 / S, a "
               "mis-normalised input)",
               table_edit("regime-map.parquet", _gamma_step_low), kind="wrong-inputs",
               catches=("max |simulation - theory| exponent change",)),
    WrongModel("simulation is its theory", "every simulated number replaced by the "
               "theory's (a simulation that returns its own theory: zero deviation)",
               table_edit("regime-map.parquet", _is_theory), kind="is-theory",
               catches=(_SIZE_SPECTRUM, _SIZE_CHANGE)),
    WrongModel("fluctuations x3", "the finite-width deviations from the theory 3 times too "
               "large (a width 9 times too small)",
               table_edit("regime-map.parquet", _fluctuations_x3), kind="fluctuation-size",
               catches=(_SIZE_SPECTRUM,)),
    WrongModel("simulation clock x2", "the simulation's time axis off by 2 (t = steps x dt "
               "with dt counted twice): every half time doubled",
               table_edit("regime-map.parquet",
                          lambda df: df.assign(t_half=2.0 * df["t_half"])), kind="clock",
               catches=(_CLOCK,)),
    WrongModel("Eq. (33) without 2 sigma_w^2", "theory.regime (the label of panel (a) and of "
               "every claim) with Eq. (33)'s bound written gamma0 theta0 = sigma_w sigma_a",
               _relabel, kind="convention", patch={"specdyn.theory.regime": _regime_no_2sw2},
               catches=(_ORACLE,)),
    WrongModel("change read at the end", "the simulated exponent change read at the last "
               "checkpoint instead of its largest over time (a quantity read at the wrong "
               "step): the feature-learning cells' exponent has come back down by then",
               table_edit("regime-map.parquet",
                          lambda df: df.assign(delta_alpha=df["delta_alpha_end"])),
               kind="attribution", catches=("max |simulation - theory| exponent change",)),
)
