"""The claims of ``two-step-phase``: pure functions of its tables and config.

Every tolerance, dispute and revision record is fixed here before the run;
:func:`phase_claims` checks them on ``two-step-phase.parquet`` (the grid) and
``two-step-phase_cells.parquet`` (the chosen cells at several widths);
:func:`phase_claims_of` reads those from a run's folder, for the registry. The step-1
update's bounds are in :mod:`~specdyn.experiments.two_step.rank_one`, ``batch-reuse``'s
claims in :mod:`~specdyn.experiments.two_step.reuse_claims` (both re-exported here: the
topic's claims).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from specdyn.experiments.two_step.config import (
    IDENTIFIED_OVERLAP2,
    PhaseConfig,
    ReuseConfig,
    full_phase,
)
from specdyn.experiments.two_step.edge import EDGE_TABLE, edge_claim
from specdyn.experiments.two_step.fresh_replicas import (
    FRESH_TABLE,
    fresh_replica_claim,
    pilot_applies,
)
from specdyn.experiments.two_step.oracle_cell import ORACLE_TABLE, oracle_claims
from specdyn.experiments.two_step.rank_one import (
    RANK_REVISED,
    RANK_TYPICAL_FACTOR,
    rank_one_ratio_bound,
    rank_one_tolerance,
    step1_rank_ratio,
    step1_spike_detectable,
)
from specdyn.experiments.two_step.readings import phase_cells, step2_rise
from specdyn.experiments.two_step.reuse_claims import reuse_claims
from specdyn.experiments.two_step.spikes import cell_spikes, theory_columns
from specdyn.runs.claims import OWN, Claim, sized, within

__all__ = ["phase_claims", "phase_claims_of", "rank_one_ratio_bound", "rank_one_tolerance",
           "reuse_claims", "reuse_claims_of", "step1_spike_detectable"]

# Claim tolerances of ``two-step-phase`` (fixed before any run).
#: Largest fraction of away-from-line cells allowed more outliers than ``1 + floor``.
ABOVE_TOTAL_MAX = 0.0
#: Smallest fraction of cells matching a count formula for the formula to be called held.
MATCH_MIN = 0.8
#: Smallest Spearman correlation between ``floor`` and the step-2 count ("rises with floor").
RISE_MIN = 0.5
#: Smallest fraction of runs whose identified step-2 count equals the finite-N theory's
#: (the former claim against the BBP-resolved measured strengths had the same bound).
THEORY_MATCH_MIN = 0.75
#: The ``a^2`` strength's relative deviation from the finite-N theory, RMS over a table's
#: independent runs (:func:`_strength_deviation`). Its size is calibrated on the quick
#: config at seeds 40-59 (not the judged seed 0, not the seeds 21-33 of the seed scan that
#: found the former band too narrow, which held it out): STRENGTH_DEV_CAL. The band is
#: their geometric mean times ``exp(+-k sd)`` of their logs, k = STRENGTH_DEV_K (sd with
#: ddof 1): [0.036, 0.116] (k = 2 would put the held-out seed 22, 0.0401, on its edge);
#: seeds 0 and 21-33 measured 0.040-0.093. Deviations 1.8 times the run's fail it on seed 0
#: (0.156) but on only 10 of these 20 seeds, 0.6 times on 7 (not on seed 0): no wrong model.
STRENGTH_DEV_CAL = {40: 0.0695, 41: 0.0906, 42: 0.0541, 43: 0.0672, 44: 0.0348,
                    45: 0.0502, 46: 0.0607, 47: 0.0777, 48: 0.0634, 49: 0.0541,
                    50: 0.0571, 51: 0.0735, 52: 0.0586, 53: 0.0734, 54: 0.0728,
                    55: 0.0669, 56: 0.0927, 57: 0.0915, 58: 0.0625, 59: 0.0497}
STRENGTH_DEV_K = 2.5
#: Why the claim changed (the seed scan).
STRENGTH_DEV_REVISED = (
    "issue 47, the seed scan: 'RMS over all runs within a factor 2 of 0.0304' (a 4 x 3 "
    "validation grid's seeds 1-2, not the quick grid) failed on 6 of seeds 21-33 of the "
    "quick config (0.024-0.109): a seed's deviations are one draw shared by every alpha2 of "
    "an alpha1 row (lr2 scales one G2) and, through the batches and a's sample moments, "
    "correlated across alpha1 (0.6-0.95), so that RMS rested on about 2 independent "
    "numbers and spanned a factor 4.5; a per-cell size from the finite-N theory (the "
    "second batch's chi-square and kurtosis, the first batch's g1, a's sample moments: "
    "0.04-0.06 a run at N = 1000, as the seeds show) evens the weights but not that. Now: "
    "the quick config's chosen cells at six widths (500-1000, each an independent draw, "
    "cells_N; the grid and --full unchanged), each (alpha1, seed, width) counted once, and "
    "a band calibrated on seeds 40-59, the scan's seeds held out")
#: Widths between which the theory's ``a^2`` and ``a^3`` rows must grow with the abstract's
#: exponents ``alpha2 - k (1/2 - alpha1)``, on the cells with ``alpha1 <= LIMIT_ALPHA1_MAX``,
#: and how closely: the terms the theory resums beyond the leading one are
#: ``O(N^(2 alpha1 - 1))`` relative, at most ``10^(-2)`` at alpha1 = 0.4 and N = 10^10, and
#: they bend a log-log slope by ``(1 - 2 alpha1)`` times a few of that. Above alpha1 = 0.4 the
#: approach, ``N^(-(1 - 2 alpha1))``, is too slow for any width to show the exponent to
#: 0.02 (at alpha1 = 0.47 the slope is still 0.03 off at 10^12).
LIMIT_WIDTHS = (1e10, 1e12)
LIMIT_ALPHA1_MAX = 0.4
LIMIT_SLOPE_TOL = 0.02
CELLS_TABLE = "two-step-phase_cells.parquet"


#: The step-1 update's top singular value against its spike's strength ``lr1 theta``
#: (:func:`~.rank_one.rank_one_ratio_bound`: ``theta = |mu1| ||a|| ||g||`` at unit step,
#: from the config): by Weyl, ``|s1 - lr1 theta| <= lr1 ||Delta||``, so the largest
#: ``|s1 / (lr1 theta) - 1|`` over the runs is at most ``delta / theta`` (the conservative
#: remainder bound, derived: 0.41 quick, 0.22 --full). An update read at the wrong step (W2 -
#: W0, which carries the step-2 spikes) is up to 13 times it at the quick size.
SPIKE1_REVISED = ("added after a referee's wrong model (issue 47: s*_dW1 computed from W2 - W0) "
                  "passed the rank-one claim; seed 0's ratios (1.08 in every run) were seen in "
                  "that test; the band is the derived Weyl bound, not fitted")


def _step1_spike_error(df: pd.DataFrame, cfg: PhaseConfig) -> float:
    """Largest ``|s1_dW1 / (N^alpha1 theta) - 1|`` over the runs (NaN without the columns)."""
    if "s1_dW1" not in df.columns or not len(df):
        return float("nan")
    theta = rank_one_ratio_bound(cfg)[2]
    spike = float(cfg.N) ** df["alpha1"].to_numpy(dtype=np.float64) * theta
    err = np.abs(df["s1_dW1"].to_numpy(dtype=np.float64) / spike - 1.0)
    return float(err.max()) if np.all(np.isfinite(err)) else float("nan")


def _step1_spike_tolerance(cfg: PhaseConfig) -> float:
    """``delta / theta`` of :func:`~.rank_one.rank_one_ratio_bound` (``bound = delta /
    (theta - delta)``); inf where the bound is."""
    bound = rank_one_ratio_bound(cfg)[0]
    return bound / (1.0 + bound) if np.isfinite(bound) else float("inf")


def _with_theory(df: pd.DataFrame, cfg: PhaseConfig) -> pd.DataFrame:
    """``df`` with the finite-N theory's columns (:func:`~.spikes.theory_columns`) and the
    sizes ``N`` (the grid's from the config where the table has none)."""
    if df.empty:
        return df
    th = theory_columns(df, activation=cfg.activation, target=cfg.target, N=cfg.N, D=cfg.D,
                        M=cfg.M)
    out = pd.concat([df, th], axis=1)
    return out if "N" in out.columns else out.assign(N=cfg.N, D=cfg.D, M=cfg.M)


def _testable_pairs(cfg: PhaseConfig, *, least: int = 1) -> list[tuple[float, float, int]]:
    """``(alpha1, alpha2, N)`` of the config's runs (grid and chosen cells) away from the
    lines whose ``floor >= least`` spikes the theory resolves (:func:`~.spikes.floor_testable`):
    from the config alone, so that whether a claim can be seen is fixed before the run."""
    from specdyn.experiments.two_step.config import parse_cells
    from specdyn.experiments.two_step.spikes import floor_testable
    from specdyn.theory.two_step import formula_count, near_line

    runs = [(a1, a2, cfg.N, cfg.D, cfg.M) for a1 in cfg.alpha1 for a2 in cfg.alpha2]
    runs += [(a1, a2, n, max(1, round(n * cfg.D / cfg.N)), max(1, round(n * cfg.M / cfg.N)))
             for n in cfg.cells_N for a1, a2 in parse_cells(cfg.cells)]
    out = []
    for a1, a2, n, d, m in runs:
        f = formula_count(a1, a2)
        if f < least or near_line(a1, a2, cfg.line_margin):
            continue
        if floor_testable(cell_spikes(n, d, m, a1, a2, cfg.activation, cfg.target), f):
            out.append((a1, a2, n))
    return out


def _limit_slope_error(cfg: PhaseConfig) -> tuple[float, str]:
    """Largest ``|slope - (alpha2 - k (1/2 - alpha1))|``, ``k = 1, 2``, of the theory's
    ``a^2`` and ``a^3`` rows between the widths :data:`LIMIT_WIDTHS`, over the grid's away
    cells and the chosen cells with ``alpha1 <= LIMIT_ALPHA1_MAX``, and where it is largest
    (``inf`` without such a cell)."""
    from specdyn.experiments.two_step.config import parse_cells
    from specdyn.theory.two_step import near_line, spike_exponent

    lo, hi = LIMIT_WIDTHS
    cells = {(a1, a2) for a1 in cfg.alpha1 for a2 in cfg.alpha2
             if not near_line(a1, a2, cfg.line_margin)} | set(parse_cells(cfg.cells))
    cells = {(a1, a2) for a1, a2 in cells if a1 <= LIMIT_ALPHA1_MAX}
    worst, where = (0.0, "") if cells else (np.inf, "no cell with alpha1 <= "
                                                     f"{LIMIT_ALPHA1_MAX:g}")
    for a1, a2 in sorted(cells):
        r = [cell_spikes(int(n), max(1, round(n * cfg.D / cfg.N)),
                         max(1, round(n * cfg.M / cfg.N)), a1, a2, cfg.activation,
                         cfg.target).rows for n in (lo, hi)]
        for k in (1, 2):
            slope = float(np.log(r[1][k] / r[0][k]) / np.log(hi / lo))
            err = abs(slope - spike_exponent(a1, a2, k))
            if not np.isfinite(err) or err > worst:
                worst, where = (err if np.isfinite(err) else np.inf), \
                    f"a^{k + 1} at ({a1:g}, {a2:g}): slope {slope:.3f}"
    return worst, where


def _strength_deviation(runs: pd.DataFrame) -> tuple[float, int]:
    """RMS relative deviation of ``strength_a2`` from the theory's ``theory_a2`` over the
    independent runs, and their number (NaN, 0 without runs).

    The runs of one ``(alpha1, seed, N)`` share their deviation (``lr2`` scales one ``G2``:
    every ``alpha2`` of a grid row reads the same number), so each such group counts once,
    by its mean square; the widths of the chosen cells are independent draws.
    """
    if runs.empty:
        return float("nan"), 0
    dev = runs["strength_a2"].to_numpy(np.float64) / runs["theory_a2"].to_numpy(np.float64) - 1
    keys = [runs["alpha1"], runs["seed"], runs["N"]] if "seed" in runs.columns else \
        [runs["alpha1"], runs["N"]]
    group = pd.Series(dev ** 2, index=runs.index).groupby(keys).mean()
    return float(np.sqrt(group.mean())), len(group)


def _strength_dev_band() -> tuple[float, float]:
    """``(predicted, factor)`` of the ``a^2`` deviation's band: the geometric mean of
    :data:`STRENGTH_DEV_CAL` and ``exp(STRENGTH_DEV_K sd)`` of their logs."""
    logs = np.log(np.array(list(STRENGTH_DEV_CAL.values()), dtype=np.float64))
    return float(np.exp(logs.mean())), float(np.exp(STRENGTH_DEV_K * logs.std(ddof=1)))


def _count_table(pairs: pd.DataFrame) -> str:
    """``(alpha1, alpha2) N: measured / floor`` of each run, for a claim's note."""
    return "; ".join(f"({r.alpha1:g}, {r.alpha2:g}) N = {int(r.N)}: {int(r.count_W2_step2)} "
                     f"/ {int(r.formula_abstract)}" for r in pairs.itertuples())


def phase_claims(df: pd.DataFrame, cfg: PhaseConfig,
                 cells: pd.DataFrame | None = None) -> list[Claim]:
    """The claims of ``two-step-phase``, a pure function of its tables and config.

    ``df`` is the grid (one row a run), ``cells`` the chosen cells at several widths (the
    same columns and ``N``; none: a folder written before they were recorded). Cells are
    ``(alpha1, alpha2)`` pairs, counts their median over seeds; "away" cells have an
    exponent gap >= ``cfg.line_margin`` to every line. The finite-N theory of the step-2
    spikes (:mod:`specdyn.theory.two_step_spikes`, via :mod:`~.spikes`) is evaluated from
    the config, never from the tables.

    * ``count <= 1 + floor`` (own, related works sec. 2 [D]): no away cell has more
      outliers than the abstract's count plus the step-1 spike.
    * The abstract's literal count: ``W2`` has ``floor`` outliers on ``MATCH_MIN`` of the
      away cells. Disputed, theory at the premise: the step-1 spike is an outlier too.
    * The abstract's count of the second step's outliers, where it can be seen: on the runs
      (grid and chosen cells, away from the lines, ``floor >= 1``) whose ``floor`` spikes
      the theory resolves at their width and whose next spike it puts well below the
      threshold, the identified step-2 count (left vector on ``a^2, a^3, ...``) equals
      ``floor`` on ``MATCH_MIN`` of them; the same on the runs with ``floor >= 2``. A size
      with no such run has the claim ``full_only``.
    * Own: the identified step-2 count equals the theory's count on ``THEORY_MATCH_MIN`` of
      all runs; the ``a^2`` strength deviates from the theory's by the size seeds other
      than the judged one showed (two-sided: a table that *is* the theory fails); the
      theory's ``a^2``, ``a^3`` rows grow with the abstract's exponents at large ``N`` (an
      independent evaluation of the function the claims and the figure call: its limit).
    * Over all cells the step-2 count rises with ``floor`` (Spearman >= ``RISE_MIN``;
      abstract 2); NaN, never held, when the count is constant.
    * The first step is rank one (abstract 2), as the abstract says it: ``s2/s1`` of
      the step-1 update ``W1 - W0`` is at most :func:`rank_one_tolerance` in every run.
    * Our earlier reading of it: ``W1`` has exactly one outlier in every run. Disputed:
      that needs the spike to clear the BBP threshold, which it does not at small
      ``alpha1`` (:func:`step1_spike_detectable`).

    The claims met by a grid that is the same everywhere (the bound, the oracle, rank one)
    name the rise as their ``partner``.
    """
    grid_cells = phase_cells(df)
    away = grid_cells[~grid_cells["near"]]

    def frac(mask: pd.Series) -> float:
        return float(mask.mean()) if len(mask) else float("nan")

    rise = step2_rise(grid_cells)
    margin = f"exponent gap >= {cfg.line_margin:g}"
    rise_name = "step-2 count rises with floor (Spearman over all cells)"
    w1 = df["count_W1"].to_numpy() if "count_W1" in df.columns else np.zeros(0)
    ratio = step1_rank_ratio(df)
    rank_bound, rank_pred, theta0 = rank_one_ratio_bound(cfg)
    dw_spike = step1_spike_detectable(cfg, min(cfg.alpha1))
    full = full_phase()
    full_a1 = min(full.alpha1)
    full_spike = step1_spike_detectable(full, full_a1)
    margin_rev = ("a19d34a: line margin 0.15 in the ratio alpha2/(1/2 - alpha1) -> 0.05 in "
                  "exponent gap, after the N = 2000 runs")
    runs = pd.concat([_with_theory(df, cfg),
                      _with_theory(cells if cells is not None else df.iloc[:0], cfg)],
                     ignore_index=True)
    away_runs = runs[~runs["near_line"].astype(bool)]
    seen = away_runs[away_runs["testable"].astype(bool) & (away_runs["formula_abstract"] >= 1)]
    seen2 = seen[seen["formula_abstract"] >= 2]
    expect1, expect2 = _testable_pairs(cfg), _testable_pairs(cfg, least=2)
    theory_match = frac(runs["count_W2_step2"] == runs["theory_step2"])
    rms, n_groups = _strength_deviation(runs)
    dev_pred, dev_factor = _strength_dev_band()
    limit_err, limit_where = _limit_slope_error(cfg)
    # the step-1 spike a W1 outlier needs: N^alpha1 theta0 > (N/D)^(1/4) once N^alpha1 >
    # (N/D)^(1/4) / theta0
    c4 = (cfg.N / cfg.D) ** 0.25
    away_a1 = [a1 for a1, _ in {(r.alpha1, r.alpha2) for r in away.itertuples()} if a1 > 0]
    spike_small = (float(cfg.N) ** min(away_a1) * theta0) if away_a1 else float("nan")
    headline_src = ('abstract 2: "the number of the outliers is determined by the parameters '
                    'alpha1, alpha2 through floor(alpha2/(1/2 - alpha1))"')
    seen_rev = ("this commit (issue 47): 'identified step-2 outliers = floor on every away "
                "cell with floor >= 1' (disputed: finite-size lag) -> the same on the runs "
                "where the finite-N theory of the step-2 spikes resolves the floor's spikes "
                "(grid and chosen cells at N up to 8000 at --full), no longer disputed: the "
                "dispute stood on no convergence study, and the theory's counts converge to "
                "floor (reading written after the N = 500-2000 validation runs)")
    theory_note = ("the finite-N theory of the step-2 spikes (theory.two_step_spikes: the "
                   "second step's gradient averaged over each row's own randomness, "
                   "resummed in lr1 a_i, its low-rank part's singular values on the "
                   "rectangular-BBP bulk), from the config alone")
    return [
        within("count <= 1 + floor(alpha2/(1/2 - alpha1))",
               frac(away["count"] > away["total"]), 0.0, ABOVE_TOTAL_MAX,
               source=OWN, partner=rise_name, revised=margin_rev, revised_how="restated",
               note="related works sec. 2 [D]: W2 keeps the step-1 spike beside the "
                    f"abstract's floor; fraction of the {len(away)} away cells ({margin}) "
                    "with more outliers "
                    "than the abstract's count plus the step-1 spike; a count that never "
                    "rises also meets it: its partner is the rise with floor"),
        within("abstract: count of W2 = floor(alpha2/(1/2 - alpha1))",
               frac(away["count"] == away["floor"]), MATCH_MIN, 1.0,
               source=headline_src,
               revised=f"{margin_rev}; 7749e0f: MATCH_MIN = 0.8 set on the score with the new "
                       "margin, which the N = 2000 run had put at 95 % (either formula); this "
                       "commit (issue 47): the dispute's reason restated with its evidence",
               revised_how="restated",
               note=f"fraction of the {len(away)} away cells ({margin}), every outlier of W2 "
                    "counted; the abstract's count of the second step's outliers is the "
                    "claim 'identified step-2 outliers = floor' below",
               disputed=f"theory at the premise: the step-1 spike lr1 |mu1| ||a|| ||g1|| = "
                        f"N^alpha1 x {theta0:.3g} (its strength at unit step, from the "
                        f"config) grows without bound at every alpha1 > 0 and clears the BBP "
                        f"threshold (N/D)^(1/4) = {c4:.3g} once N^alpha1 > {c4 / theta0:.3g}, "
                        f"so W2 carries it beside the floor(...) spikes of the second step "
                        f"(here {spike_small:.3g} at the smallest away alpha1): 1 + floor "
                        f"outliers where every spike is resolved; only at alpha1 = 0 "
                        f"({theta0:.3g} < {c4:.3g}) can W2 have exactly floor"),
        within("floor >= 1: identified step-2 outliers = floor",
               frac(seen["count_W2_step2"] == seen["formula_abstract"]), MATCH_MIN, 1.0,
               source=headline_src + '; "multiple outliers, each corresponding to a learned '
                                     'direction"',
               full_only=not expect1, revised=seen_rev, revised_how="restated",
               note=f"fraction of the {len(seen)} runs away from the lines with floor >= 1 "
                    "whose floor spikes the theory resolves at their width (>= 3 Tracy-Widom "
                    "scales above the edge) and whose next spike it puts at <= 0.85 x the BBP "
                    f"threshold ({_count_table(seen) or 'none'}); outliers whose left vector "
                    f"has squared overlap >= {IDENTIFIED_OVERLAP2:g} with a^2, a^3, ...; "
                    f"{theory_note}; this config has {len(expect1)} such runs"),
        within("floor >= 2: identified step-2 outliers = floor",
               frac(seen2["count_W2_step2"] == seen2["formula_abstract"]), MATCH_MIN, 1.0,
               source=headline_src, full_only=not expect2,
               note=f"the claim above on its runs with floor >= 2 "
                    f"({_count_table(seen2) or 'none'}): where two step-2 spikes are "
                    f"resolved; this config has {len(expect2)} such runs (the theory resolves "
                    "no floor >= 2 spike below N of about 8000 on any cell; floor >= 3 needs "
                    "N of 10^6 or more)"),
        within("step-2 count = the finite-N theory's count", theory_match,
               THEORY_MATCH_MIN, 1.0, source=OWN,
               note=f"fraction of all {len(runs)} runs (grid and chosen cells) whose "
                    f"identified step-2 count equals the theory's resolved spikes (>= 3 "
                    f"Tracy-Widom scales above its own edge); {theory_note}; the N = 500-2000 "
                    "validation grid (3 seeds, 36 runs a width) matched in 35 of 36 cells' "
                    "medians"),
        sized("a^2 strength: RMS relative deviation from the finite-N theory", rms,
              dev_pred, dev_factor, source=OWN,
              predicted_by=f"seeds {min(STRENGTH_DEV_CAL)}-{max(STRENGTH_DEV_CAL)} of the "
                           "quick config, not the judged seed (geometric mean; factor exp("
                           f"{STRENGTH_DEV_K:g} sd) of their logs; "
                           f"{min(STRENGTH_DEV_CAL.values()):.3g}-"
                           f"{max(STRENGTH_DEV_CAL.values()):.3g})",
              revised=STRENGTH_DEV_REVISED, revised_how="restated",
              note=f"over the {n_groups} independent runs of the {len(runs)} (each "
                   "(alpha1, seed, width) once: every alpha2 of a row shares the deviation): "
                   "strength_a2 (the projection of W2 - W1 on a^2 orthogonalised against a) "
                   "against the theory's sqrt(rows^2 + bulk^2); a table equal to the theory "
                   "fails, and so do deviations 3 times the run's or a step 1.5 times too "
                   "long; the band was set at the quick config's sizes (its chosen cells at "
                   "six widths)"),
        within("theory: a^2, a^3 strengths grow like N^(alpha2 - k(1/2 - alpha1)) at large N",
               limit_err, 0.0, LIMIT_SLOPE_TOL, source=headline_src + "; own (the limit)",
               partner="a^2 strength: RMS relative deviation from the finite-N theory",
               aspect="oracle",
               note=f"largest |log-log slope - exponent| of the theory's rows between N = "
                    f"{LIMIT_WIDTHS[0]:.0e} and {LIMIT_WIDTHS[1]:.0e}, k = 1, 2, over the "
                    f"grid's away cells and the chosen cells with alpha1 <= "
                    f"{LIMIT_ALPHA1_MAX:g} ({limit_where}); the limit that "
                    "gives the abstract's count, checked on the function the claims and the "
                    "figure call; it reads no table: its partner is the strengths' deviation"),
        within(rise_name, rise, RISE_MIN, 1.0,
               source='abstract 2: "the number of the outliers is determined by the '
                      'parameters alpha1, alpha2"',
               revised="b1882fe (issue 30): full_only -> expected at the quick size, whose config "
                       "changed (N 600 -> 1000, a 4 x 3 grid where step-2 spikes resolve; "
                       "chosen from a pilot run, seed 1, Spearman 0.93); the old quick grid "
                       "counted 0 step-2 outliers in every cell",
               revised_how="tighter",
               note=f"over all {len(grid_cells)} cells (a rise needs no line margin); NaN when "
                    "the count is constant. At N = 600 on the old 6 x 6 grid every cell "
                    "counted 0; the spikes grow like N^gap"),
        within("first step is rank one: cells where W1 has exactly one outlier",
               float(np.mean(w1 == 1)) if w1.size else float("nan"), 1.0, 1.0,
               source='abstract 2: "the update to the weights is approximately rank-one, '
                      'captures only a single direction"',
               partner=rise_name,
               revised="after the first --full run (N = D = M = 4000, benchmarks/"
                       "full_claims.json) measured 0.9: expected -> disputed, and the "
                       "abstract's statement read as its own claim (the step-1 update's "
                       "s2/s1, below); this one is our operationalisation, kept; this commit "
                       "(issue 47): the dispute's reason restated with its evidence kind",
               revised_how="looser",
               note=f"fraction of the {w1.size} runs whose W1 (after step 1) has one outlier "
                    "(the step-1 spike along a); a grid that is the same everywhere also "
                    "has it: its partner is the rise of the step-2 count",
               disputed=f"theory at the premise: an outlier of W1 needs the step-1 spike to "
                        f"clear the bulk of W0, not only a rank-one update: its strength lr1 "
                        f"|mu1| ||a|| ||g1|| (theory) is {full_spike[0]:.3g} at alpha1 = "
                        f"{full_a1:g}, N = "
                        f"{full.N} (--full), below the BBP threshold (N/D)^(1/4) = "
                        f"{full_spike[1]:.3g}; the --full run counted no W1 outlier in its "
                        f"30 runs there and one in each of the other 270 (step 1 of its "
                        f"three seeds re-run after it: s1 of W1 - W0 = 0.925-0.949, s2/s1 = "
                        f"0.030-0.032: rank one, not detectable; reason written after that "
                        f"run). Here the smallest "
                        f"alpha1 = {min(cfg.alpha1):g} gives {dw_spike[0]:.3g}"),
        within("step-1 update: s1 / its spike's strength lr1 |mu1| ||a|| ||g|| - 1 (largest "
               "|.|)", _step1_spike_error(df, cfg), 0.0, _step1_spike_tolerance(cfg),
               rule="in [0, delta / theta] (Weyl, the remainder bound of "
                    "claims.rank_one_ratio_bound)",
               source='abstract 2: "the update to the weights is approximately rank-one"; '
                      'own (the spike\'s strength)', aspect="prefactor",
               revised=SPIKE1_REVISED, revised_how="tighter", key="step-1 spike strength",
               partner=rise_name,
               note="over the grid's runs: the top singular value of W1 - W0 against lr1 "
                    "theta, theta = |mu1| sqrt(c1^2 + (D/M) E[y^2]) from the config (the "
                    "spike the abstract's count adds to): the level of the step-1 update, not "
                    "only its rank; an update read at another step (W2 - W0) or at another lr1 "
                    "fails"),
        within("abstract's rank-one step: s2/s1 of the step-1 update W1 - W0, largest run",
               float(np.max(ratio)) if ratio.size else float("nan"), 0.0,
               rank_one_tolerance(cfg),
               rule=f"in [0, {RANK_TYPICAL_FACTOR:g} x the typical size sqrt(Var(sigma') E[y^2] "
                    "/ M) (1 + sqrt(D/N)) / theta]",
               source='abstract 2: "the update to the weights is approximately rank-one, '
                      'captures only a single direction"; bound own '
                      '(claims.rank_one_ratio_bound)',
               partner=rise_name,
               revised="added after the --full run measured 0.9 on 'W1 has exactly one "
                       "outlier' (detection, not rank); the bound derived before any run "
                       "of the s*_dW1 columns; " + RANK_REVISED,
               revised_how="tighter",
               note=("NOT MEASURED: the table has no s1_dW1, s2_dW1 columns (written before "
                     "they were recorded; rerun it); " if not ratio.size else "")
                    + f"largest over the {ratio.size} runs of s2/s1 of W1 - W0 = lr1 G1; "
                    f"tolerance {RANK_TYPICAL_FACTOR:g} x the typical size {rank_pred:.3g} "
                    f"(the remainder as an i.i.d. matrix; seeds 1-3: 2.1-2.3 times it), below "
                    f"the conservative bound {rank_bound:.3g} (Weyl on G = mu1 a g^T + "
                    f"diag(a) R, largest |a_i|, Schur bound on the kernel), both ~ N^(-1/2) "
                    f"at N = {cfg.N} and free of lr1; a rank-two update has s2/s1 of order 1. "
                    "A grid that is the same everywhere also meets it: its partner is the rise "
                    "of the step-2 count"),
    ]


def phase_claims_of(cfg: PhaseConfig, folder: Path) -> list[Claim]:
    """The claims of ``two-step-phase`` on the tables in a run's ``folder`` (for the
    registry; a folder written before the chosen cells were recorded has only the grid)."""
    cells, edge, oracle = folder / CELLS_TABLE, folder / EDGE_TABLE, folder / ORACLE_TABLE
    claims = phase_claims(pd.read_parquet(folder / "two-step-phase.parquet"), cfg,
                          pd.read_parquet(cells) if cells.exists() else None)
    claims += [edge_claim(pd.read_parquet(edge))] if edge.exists() else []
    return claims + (oracle_claims(pd.read_parquet(oracle), cfg) if oracle.exists() else [])


def reuse_claims_of(cfg: ReuseConfig, folder: Path) -> list[Claim]:
    """The claims of ``batch-reuse`` on the tables in a run's ``folder`` (for the registry;
    a folder written before the fresh replicas were recorded has only the main table)."""
    claims = reuse_claims(pd.read_parquet(folder / "batch-reuse.parquet"), cfg)
    replicas = folder / FRESH_TABLE
    return claims + ([fresh_replica_claim(pd.read_parquet(replicas), cfg)]
                     if replicas.exists() and pilot_applies(cfg) else [])
