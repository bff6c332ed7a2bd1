"""The two-step experiments' wrong models: what two-step-phase and batch-reuse would have
written under a plausible mistake (:class:`~specdyn.runs.WrongModel`), built from a run's
own table."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pandas as pd
from numpy.polynomial.hermite_e import hermegauss, hermeval

from specdyn.experiments.two_step import oracle_cell, spikes
from specdyn.experiments.two_step.fresh_replicas import FRESH_TABLE
from specdyn.runs.registry import WrongModel
from specdyn.runs.wrong import edit_table, table_edit
from specdyn.theory.two_step_spikes import StepTwoSpikes

# --------------------------------------------------------------------------
# two-step-phase
# --------------------------------------------------------------------------

_PHASE = "two-step-phase.parquet"
_CELLS = "two-step-phase_cells.parquet"
_BOTH = (_PHASE, _CELLS)


def _on_both(change: Any) -> Any:
    """A wrong model's ``apply`` that rewrites the grid and, where there is one, the chosen
    cells' table by ``change(df, cfg)``."""
    def apply(cfg: Any, folder: Path) -> None:
        for name in _BOTH:
            if (folder / name).exists():
                edit_table(folder, name, lambda df: change(df, cfg))
    return apply


def _theory(df: pd.DataFrame, cfg: Any) -> pd.DataFrame:
    return spikes.theory_columns(df, activation=cfg.activation, target=cfg.target, N=cfg.N,
                                 D=cfg.D, M=cfg.M)


def _strengths_are_theory(df: pd.DataFrame, cfg: Any) -> pd.DataFrame:
    """The simulation returns its theory: the strengths along ``a^2``, ``a^3`` are the
    finite-N theory's."""
    th = _theory(df, cfg)
    return df.assign(strength_a2=th["theory_a2"], strength_a3=th["theory_a3"])


def _deviations_tripled(df: pd.DataFrame, cfg: Any) -> pd.DataFrame:
    """Finite-size deviations of the right law, three times too large: each strength three
    times as far from the theory as the run's."""
    th = _theory(df, cfg)
    return df.assign(strength_a2=th["theory_a2"] + 3.0 * (df["strength_a2"] - th["theory_a2"]),
                     strength_a3=th["theory_a3"] + 3.0 * (df["strength_a3"] - th["theory_a3"]))


def _step2_faster(df: pd.DataFrame, cfg: Any) -> pd.DataFrame:
    """Step 2 at 1.5 times its size (``lr2 = 1.5 N^alpha2``: a clock off by a constant
    factor): the step-2 update's strengths 1.5 times the run's."""
    cols = [c for c in df.columns if c.startswith("strength_a")]
    return df.assign(**{c: 1.5 * df[c] for c in cols})


def _step1_counted_at_step2(df: pd.DataFrame, cfg: Any) -> pd.DataFrame:
    """The step-1 spike (left vector on ``a``) counted among the second step's outliers."""
    return df.assign(count_W2_step2=df["count_W2_identified"])


def _hermite_polynomials(K: int, n_quad: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The convention error: ``He_j(g) / sqrt(j!)``, orthogonal to the constant too, for the
    powers of ``a`` orthogonalised against the lower powers only (as the measurement's
    ``orthonormal_powers`` does)."""
    g, w = hermegauss(n_quad)
    w = w / w.sum()
    p = np.stack([hermeval(g, [0.0] * j + [1.0]) / math.sqrt(math.factorial(j))
                  for j in range(1, K + 1)], axis=1)
    return g, w, p


#: The theory's cell function without its cache (taken at import: while the wrong model is
#: judged, the module's name points at the wrong function).
_CELL_SPIKES = spikes.cell_spikes.__wrapped__


def _cell_spikes_hermite(*args: Any) -> StepTwoSpikes:
    """:func:`~specdyn.experiments.two_step.spikes.cell_spikes` under that convention
    (uncached: the real cache is never touched)."""
    with mock.patch("specdyn.theory.two_step_spikes._orthonormal_polynomials",
                    _hermite_polynomials):
        return _CELL_SPIKES(*args)


_DEV = "a^2 strength: RMS relative deviation from the finite-N theory"
_EDGE_MARGIN = StepTwoSpikes.edge_margin


def _margin_doubled(self: StepTwoSpikes, sigmas: float = 3.0) -> float:
    """The count's Tracy-Widom margin twice its size (the 1/2 of ``ds = d(lambda) / (2
    sqrt(lambda D))`` lost)."""
    return 2.0 * _EDGE_MARGIN(self, sigmas)


def _without_row_spread(s: Any, rho2: float) -> np.ndarray:
    """A row's preactivation spread without its own step-1 part: ``W0``'s 1 alone."""
    return np.ones_like(np.asarray(s, dtype=np.float64))


def _a2_deviations_scaled(factor: float) -> Any:
    """A wrong model's ``apply``: every run's ``a^2`` strength ``factor`` times as far from
    the finite-N theory as the run's (a simulation whose fluctuations have the wrong size:
    the grid, the chosen cells and the oracle cell alike, each against its own theory)."""
    def apply(cfg: Any, folder: Path) -> None:
        def scaled(df: pd.DataFrame, th: Any) -> pd.DataFrame:
            return df.assign(strength_a2=th + factor * (df["strength_a2"] - th))

        _on_both(lambda df, c: scaled(df, _theory(df, c)["theory_a2"]))(cfg, folder)
        if (folder / oracle_cell.ORACLE_TABLE).exists():
            edit_table(folder, oracle_cell.ORACLE_TABLE,
                       lambda df: scaled(df, oracle_cell.theory_given_a(df, cfg)))
    return apply


def _oracle_is_theory(cfg: Any, folder: Path) -> None:
    """The oracle cell's strengths written as the theory given each draw's ``a``."""
    edit_table(folder, oracle_cell.ORACLE_TABLE,
               lambda df: df.assign(strength_a2=oracle_cell.theory_given_a(df, cfg)))


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
    WrongModel("strengths are the theory", "the simulation returns its theory: the strengths "
               "along a^2, a^3 are the finite-N theory's", _on_both(_strengths_are_theory),
               catches=(_DEV,), kind="is-theory"),
    WrongModel("deviations x3", "the strengths' deviations from the theory three times the "
               "run's (finite-size errors of the right law, the wrong level)",
               _on_both(_deviations_tripled), catches=(_DEV,), kind="fluctuation-size"),
    WrongModel("step 2 x1.5", "the second step 1.5 times its size (lr2 = 1.5 N^alpha2: a "
               "clock off by a constant factor)", _on_both(_step2_faster), catches=(_DEV,),
               kind="clock"),
    WrongModel("Hermite powers", "the theory projects on He_j(g) / sqrt(j!) (orthogonal to "
               "the constant) where the measurement's a^(j+1) is orthogonalised against the "
               "lower powers only: a convention error inside the function the claims and "
               "the figure call", lambda cfg, folder: None, catches=(_DEV,),
               kind="convention",
               patch={"specdyn.experiments.two_step.spikes.cell_spikes": _cell_spikes_hermite,
                      "specdyn.experiments.two_step.claims.cell_spikes":
                          _cell_spikes_hermite}),
    WrongModel("step-1 spike counted at step 2", "the outlier along a, made by step 1, counted "
               "among the second step's outliers", _on_both(_step1_counted_at_step2),
               catches=("step-2 count = the finite-N theory's count",), kind="attribution"),
    WrongModel("step 1 at lr1 / 2", "the first step half its size (lr1 = N^alpha1 / 2, a clock "
               "off by 2 in step 1): the update as rank one as before, its spike half as strong",
               table_edit(_PHASE, lambda df: df.assign(s1_dW1=0.5 * df["s1_dW1"],
                                                       s2_dW1=0.5 * df["s2_dW1"])),
               catches=("step-1 spike strength",), kind="clock"),
    WrongModel("TW margin x2", "the Tracy-Widom margin by which the theory counts a spike "
               "as resolved twice its size: a convention error inside the theory function "
               "the count claims and the figure call", lambda cfg, folder: None,
               catches=("Tracy-Widom margin against sampled W0",), kind="convention",
               patch={"specdyn.theory.two_step_spikes.StepTwoSpikes.edge_margin":
                      _margin_doubled}),
    WrongModel("spikes without their own spread", "the theory's step-2 spikes with each "
               "row's preactivation spread sqrt(1 + s^2 rho^2) taken as 1 (the row's own "
               "step-1 part dropped): a convention error inside the theory function the "
               "count and strength claims and the figure call", lambda cfg, folder: None,
               catches=("spikes' theory against a Monte-Carlo cell",), kind="convention",
               patch={"specdyn.theory.two_step_spikes.row_spread": _without_row_spread}),
    WrongModel("a^2 deviations x1.8", "every run's a^2 strength 1.8 times as far from the "
               "finite-N theory as the run's (fluctuations of the right law, the wrong size)",
               _a2_deviations_scaled(1.8), catches=("spikes' oracle spread",),
               kind="fluctuation-size"),
    WrongModel("a^2 deviations x0.6", "every run's a^2 strength 0.6 times as far from the "
               "finite-N theory as the run's", _a2_deviations_scaled(0.6),
               catches=("spikes' oracle spread",), kind="fluctuation-size"),
    WrongModel("oracle cell is its theory", "the Monte-Carlo oracle's strengths written as "
               "the theory given each draw's a", _oracle_is_theory,
               catches=("spikes' oracle spread",), kind="is-theory"),
)

#: The classes of mistake that cannot occur in ``two-step-phase``, and why.
PHASE_WRONG_NA = {
    "temperature": "two deterministic GD steps on clean labels: no temperature and no label "
                   "noise; the one noise level, the bulk of W0, is measured by the outlier "
                   "test's own fitted edge and predicted by the theory's noise level",
    "wrong-inputs": "the finite-N theory takes no measured spectrum: its inputs are the "
                    "config's sizes, exponents, activation and target",
}

# --------------------------------------------------------------------------
# batch-reuse
# --------------------------------------------------------------------------

_REUSE = "batch-reuse.parquet"
_FRESH = "fresh batch, information exponent >= 2: learned directions' overlap / noise level, RMS"


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


def _fresh_rows(df: pd.DataFrame) -> pd.Series:
    """The fresh runs of the targets of information exponent >= 2."""
    return (df["batch"] == "fresh") & (df["information_exponent"] >= 2)


def _fresh_learns_nothing(df: pd.DataFrame) -> pd.DataFrame:
    """The theory's "nothing learned" returned for the simulation: a fresh batch's learned
    directions have overlap 0 with the target (information exponent >= 2)."""
    df.loc[_fresh_rows(df), "max_overlap_identified"] = 0.0
    return df


def _fresh_at_level(cfg: Any, folder: Path) -> None:
    """The fresh batch's learned overlaps (information exponent >= 2) written at their
    predicted noise level (a stub that returns the theory's size, not a draw)."""
    from specdyn.experiments.two_step.reuse_claims import fresh_noise_level

    def change(df: pd.DataFrame) -> pd.DataFrame:
        rows = _fresh_rows(df)
        df.loc[rows, "max_overlap_identified"] = [
            fresh_noise_level(str(t), cfg.D) for t in df.loc[rows, "target"]]
        return df

    edit_table(folder, _REUSE, change)


def _fresh_noise_tripled(df: pd.DataFrame) -> pd.DataFrame:
    """The fresh batch's noise overlaps three times the run's (the right law, the wrong
    level)."""
    rows = _fresh_rows(df)
    df.loc[rows, "max_overlap_identified"] = np.minimum(
        3.0 * df.loc[rows, "max_overlap_identified"], 1.0)
    return df


def _fresh_noise_scaled(cfg: Any, folder: Path) -> None:
    """The fresh batch's noise overlaps (information exponent >= 2) 0.7 times the run's, in
    the run's table and in its fresh replicas alike (the right law, a modest factor off)."""
    def main(df: pd.DataFrame) -> pd.DataFrame:
        df.loc[_fresh_rows(df), "max_overlap_identified"] *= 0.7
        return df

    edit_table(folder, _REUSE, main)
    if (folder / FRESH_TABLE).exists():
        edit_table(folder, FRESH_TABLE, lambda df: df.assign(overlap_a2=0.7 * df["overlap_a2"]))


def _batches_swapped(df: pd.DataFrame) -> pd.DataFrame:
    """Each run's overlap read from the other batch mode of its seed (the fresh runs'
    attributed to reuse and back)."""
    out = df.copy()
    for target in df["target"].unique():
        for batch, other in (("fresh", "reused"), ("reused", "fresh")):
            rows = (df["target"] == target) & (df["batch"] == batch)
            out.loc[rows, "max_overlap_identified"] = _overlaps_from(df, rows, target, other)
    return out


def _z2_moment_as_second(target: Any) -> float:
    """The same convention error inside the moment: ``E[sigma*^2]`` for ``E[z^2 sigma*^2]``."""
    return float(target.second_moment)


def _steps_halved(cfg: Any, folder: Path) -> None:
    """``batch-reuse``'s table written again with both GD steps at half their size: ``lr =
    N^alpha / 2`` is ``N^alpha'`` with ``alpha' = alpha - log 2 / log N`` (the quick grid is
    a few seconds)."""
    from specdyn.experiments.two_step import tables

    shift = math.log(2.0) / math.log(cfg.N)
    df = tables.reuse_table(replace(cfg, alpha1=cfg.alpha1 - shift, alpha2=cfg.alpha2 - shift))
    edit_table(folder, _REUSE, lambda old: df[old.columns])


REUSE_WRONG = (
    WrongModel("both steps at half size", "both GD steps at half their size (lr = N^alpha / "
               "2): the directions a step captures depend on its size", _steps_halved,
               catches=("He3: reused mean overlap - fresh mean overlap",), kind="clock"),
    WrongModel("reuse changes nothing", "a reused batch learns what a fresh one does (the "
               "second step's correlation with the first batch lost)",
               table_edit("batch-reuse.parquet", _reuse_useless),
               catches=("He3: reused mean overlap - fresh mean overlap",)),
    WrongModel("He2 helped by reuse", "reuse helps He2 as it helps He3 (the reuse quantity "
               "E[z sigma*(z)^(k+1)] = 0 of He2 ignored)",
               table_edit("batch-reuse.parquet", _he2_helped),
               catches=("He2: reused mean overlap - fresh max overlap",)),
    WrongModel("fresh learns nothing", "the theory's 'nothing learned' returned for the "
               "simulation: the fresh batch's learned directions at overlap 0 (information "
               "exponent >= 2)", table_edit(_REUSE, _fresh_learns_nothing),
               catches=(_FRESH,), kind="is-theory"),
    WrongModel("fresh overlaps at their level", "the fresh batch's learned directions' "
               "overlaps (information exponent >= 2) written at their predicted noise level, "
               "not drawn", _fresh_at_level, catches=("fresh overlaps' scatter",),
               kind="is-theory"),
    WrongModel("fresh noise x3", "the fresh batch's noise overlaps three times the run's",
               table_edit(_REUSE, _fresh_noise_tripled), catches=(_FRESH,),
               kind="fluctuation-size"),
    WrongModel("fresh noise x0.7", "the fresh batch's noise overlaps 0.7 times their size, "
               "in the run's table and its fresh replicas", _fresh_noise_scaled,
               catches=("fresh replicas' noise level",), kind="fluctuation-size"),
    WrongModel("batches swapped", "each run's overlap read from the other batch mode (fresh "
               "attributed to reuse and back)", table_edit(_REUSE, _batches_swapped),
               catches=("He3: reused mean overlap - fresh mean overlap",), kind="attribution"),
    WrongModel("noise level 1/sqrt(D)", "the fresh noise level's moment E[z^2 sigma*^2] / "
               "E[sigma*^2] taken as 1 (a random direction's 1/sqrt(D)), inside the "
               "function the claim calls", lambda cfg, folder: None,
               catches=("fresh noise level: E[z^2 sigma*^2], quadrature - Hermite "
                        "recursion",), kind="convention",
               patch={"specdyn.experiments.two_step.reuse_claims.z2_moment":
                      _z2_moment_as_second}),
)

#: The classes of mistake that cannot occur in ``batch-reuse``, and why.
REUSE_WRONG_NA = {
    "temperature": "two deterministic GD steps on clean labels: no temperature and no label "
                   "noise",
    "wrong-inputs": "no theory is built from a measured spectrum: the noise level comes from "
                    "the target's Hermite coefficients and D",
}
