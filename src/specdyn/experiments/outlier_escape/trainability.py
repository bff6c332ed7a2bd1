"""The claims of ``trainability``: a pure function of its table and config, with what they
read off it (each cell's status by the one trainability rule, the two-layer rows' catapult
boundaries) and the tolerances and revision records fixed before the runs they judge.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from specdyn.experiments.outlier_escape.config import TrainabilityConfig
from specdyn.runs.claims import Claim, sized, within
from specdyn.theory import outlier_escape as oe
from specdyn.theory.rmt import TW1_MEAN

# Claim tolerances of ``trainability`` (fixed before any run).
#: Smallest fraction of single-layer cells whose status matches the exact theory. Seeds 1-3
#: (not the judged seed 0) missed 1, 0 and 0 of the 60 quick cells; 0.95 allows 3 misses,
#: while a status boundary one lr step off moves 4 cells and a missing divergence 6-7.
THEORY_AGREEMENT_MIN = 0.95
AGREEMENT_REVISED = ("issue 40: >= 0.8 -> >= 0.95, after the quick (0.983) and --full (1.0) "
                     "runs: 0.8 let a boundary one lr step off (0.933) and a learner that "
                     "never diverges (0.88-0.9) pass; 0.95 from seeds 1-3 (1, 0, 0 of 60 cells "
                     "missed)")
#: Fewest two-layer rows (one init variance) that converge past the naive
#: ``2 / sharpness`` line up to a boundary, and not beyond it.
CATAPULT_MIN = 1
#: The single layer's final error against the exact mean-square theory
#: (``predict_trainability``'s ``rel_error``) on the cells where neither diverges: the RMS of
#: ``log(measured / theory)`` has the size seeds 1-40 (not the judged seed 0) showed, within
#: :data:`LEVEL_DEV_FACTOR` (two-sided: a table equal to the theory fails, and so do
#: fluctuations too large), and their mean (the level: a label noise, a temperature, or a
#: clock off by a constant factor moves it) lies within :data:`LEVEL_BIAS_TOL` of 0. Seeds
#: 1-40 at the quick size: LEVEL_PILOT (RMS, mean), 54 cells each. The RMS is scaled to a
#: run's size like the relative fluctuation of a squared error summed over ``P D`` entries
#: and ``replicas`` runs, ``(P D replicas)^(-1/2)``; the level's tolerance is 4 standard
#: errors of a mean of 54 such values, ``4 x 0.055 / sqrt(54) = 0.03`` (from seeds 1-3;
#: seeds 1-40's means are at most 0.016 from 0).
LEVEL_PILOT = {1: (0.0533, -0.0062), 2: (0.0647, 0.0027), 3: (0.0471, 0.0032),
               4: (0.0412, -0.0013), 5: (0.0466, -0.0076), 6: (0.0437, 0.0092),
               7: (0.0461, 0.0005), 8: (0.0445, -0.0017), 9: (0.0607, 0.0026),
               10: (0.0412, -0.0039), 11: (0.0632, 0.0010), 12: (0.0486, -0.0055),
               13: (0.0325, 0.0012), 14: (0.0567, -0.0043), 15: (0.0534, -0.0023),
               16: (0.0621, -0.0104), 17: (0.0537, 0.0051), 18: (0.0397, -0.0010),
               19: (0.0338, -0.0093), 20: (0.0623, -0.0161), 21: (0.0414, 0.0014),
               22: (0.0520, 0.0021), 23: (0.0469, -0.0055), 24: (0.0428, -0.0128),
               25: (0.0517, 0.0111), 26: (0.0632, -0.0003), 27: (0.0560, -0.0010),
               28: (0.0354, 0.0013), 29: (0.0662, 0.0005), 30: (0.0468, 0.0114),
               31: (0.0365, 0.0013), 32: (0.0577, 0.0118), 33: (0.0402, -0.0005),
               34: (0.0612, 0.0082), 35: (0.0496, 0.0041), 36: (0.0531, -0.0008),
               37: (0.0497, -0.0015), 38: (0.0423, -0.0134), 39: (0.0489, 0.0049),
               40: (0.0538, -0.0087)}
LEVEL_DEV_PILOT_SIZE = 32 * 32 * 4  # P D replicas of the quick size
#: The RMS band, a factor either way: 2.5 standard deviations of one seed's ``log RMS``
#: about the pilot mean, ``exp(2.5 x 0.187 x sqrt(1 + 1/40)) = 1.6``. 0.187 is seeds
#: 1-40's sd, as the cells' fourth moment predicts (0.19): Gaussian cells would give
#: ``1/sqrt(2 x 54) = 0.096``, but the cells at the largest converging lr fluctuate 3-4
#: times as much as the rest and carry most of it. Seeds 1-40 lie at 0.65-1.33 of the mean;
#: the same runs with one replica for four at 1.29-2.79 (mean 1.94), 34 of the 40 beyond
#: 1.6 (3 sd, 1.76, would catch 26): no band on this RMS separates the two on every seed.
#: --full: 0.99 (the record, seed 0), 1.11 and 1.07 (seeds 1, 2).
LEVEL_DEV_FACTOR = 1.6
LEVEL_DEV_REVISED = ("issue 47: factor 2 -> 1.6, after a referee's wrong model (one replica "
                     "for four, about twice the RMS) passed at 2; seed 0's value had been "
                     "seen; the band is 2.5 sd of seeds 1-40's spread, the pilot extended "
                     "to them")
LEVEL_BIAS_TOL = 0.03
#: The two-layer rows' naive line ``2 / sharpness`` at initialisation against the same line
#: from the Marchenko-Pastur edges of the initial weights (standard parameterisation:
#: ``W1`` ``N x D`` of entries ``var / D``, ``W2`` ``D x N`` of ``var / N``; the Gauss-Newton
#: operator ``E -> W2 W2^T E + E W1^T W1`` has top eigenvalue ``lmax(W2 W2^T) + lmax(W1^T
#: W1)``, each at the Tracy-Widom mean of :func:`~specdyn.theory.rmt.wishart_edge_scaling`):
#: the largest ``|log(line / predicted line)|`` over the rows. At the quick N = 64, D = 16
#: each top eigenvalue has a Tracy-Widom sd of about 8 %; log 1.5 is 5 of them. A line
#: halved or doubled (a loss's 1/2 lost or counted twice) is off by log 2, one read off the
#: final sharpness by a factor 2-9.
NAIVE_TOL = math.log(1.5)
NAIVE_REVISED = ("added after a referee's wrong models (issue 47: the naive line halved, "
                 "doubled or read off the final sharpness) passed the one-sided catapult "
                 "claim; seed 0's lines were seen in that test; the band is derived")
#: Largest relative difference between ``predict_trainability``'s closed form and the
#: mean-square recursion iterated step by step (``E_(t+1) = rho E_t + q``).
RECURSION_TOL = 1e-9


def theory_rel_error(single: pd.DataFrame, cfg: TrainabilityConfig) -> np.ndarray:
    """The exact theory's final-over-initial error of each single-layer row (its ``lr`` and
    ``init_var``), from the config: :func:`~specdyn.theory.outlier_escape.predict_trainability`."""
    pred = oe.predict_trainability(single["lr"].to_numpy(np.float64),
                                   np.sqrt(single["init_var"].to_numpy(np.float64)),
                                   P=cfg.P, D=cfg.D, theta=cfg.theta, steps=cfg.steps,
                                   B=cfg.B, noise_std=cfg.noise_std, tol=cfg.tol)
    return np.asarray(pred.rel_error, dtype=np.float64)


def recursion_rel_error(lr: np.ndarray, sigma0: np.ndarray, cfg: TrainabilityConfig
                        ) -> np.ndarray:
    """The same quantity by iterating the online-SGD mean-square recursion
    ``E_(t+1) = rho E_t + lr^2 s^2 P D / B`` from ``E_0 = sigma0^2 P + theta^2`` for
    ``cfg.steps`` steps (``rho = 1 - 2 lr + lr^2 (1 + (D + 1) / B)``): a second evaluation,
    written here, of the closed form the claims and the figure call."""
    rho = 1.0 - 2.0 * lr + lr * lr * (1.0 + (cfg.D + 1.0) / cfg.B)
    q = lr * lr * cfg.noise_std ** 2 * cfg.P * cfg.D / cfg.B
    e0 = sigma0 ** 2 * cfg.P + cfg.theta ** 2
    e = e0.copy()
    for _ in range(cfg.steps):
        e = rho * e + q
    return e / e0


def naive_line_error(two: pd.DataFrame, N: int, D: int) -> float:
    """Largest ``|log(naive_lr / predicted)|`` over the two-layer rows' init variances, the
    predicted line ``2 / (var (lmax(Z1^T Z1) / D + lmax(Z2 Z2^T) / N))`` with both ``Z``
    ``N x D`` standard Gaussian at their Tracy-Widom means (NaN without rows)."""
    from specdyn.theory.rmt import wishart_edge_scaling

    mu, sig = wishart_edge_scaling(float(N), float(D))
    edge = float(mu) + TW1_MEAN * float(sig)  # E lmax of Z^T Z (= of Z Z^T's top)
    rows = two.groupby("init_var")["naive_lr"].first()
    if not len(rows):
        return float("nan")
    var = rows.index.to_numpy(np.float64)
    pred = 2.0 / (var * edge * (1.0 / D + 1.0 / N))
    err = np.abs(np.log(rows.to_numpy(np.float64) / pred))
    return float(err.max()) if np.all(np.isfinite(err)) else float("nan")


def measured_status(table: pd.DataFrame, tol: float) -> np.ndarray:
    """Each row's status from its measured ``rel_error`` (NaN: diverged), by the one rule
    :func:`~specdyn.theory.outlier_escape.trainability_status`."""
    return oe.trainability_status(table["rel_error"].to_numpy(np.float64), tol)


def catapult_rows(two: pd.DataFrame, tol: float) -> pd.DataFrame:
    """Per init variance of the two-layer grid: the boundary and whether it is a catapult.

    A row is *bounded* when, along increasing ``lr``, its cells converge up to a
    boundary lr and none converges beyond it, with at least one cell on each side;
    ``boundary`` is then its largest converged lr (NaN otherwise) and ``catapult``
    whether it exceeds the row's ``naive_lr = 2 / sharpness`` at initialisation.
    """
    rows = []
    for var, g in two.assign(status=measured_status(two, tol)).groupby("init_var"):
        g = g.sort_values("lr")
        conv = (g["status"] == "converged").to_numpy()
        k = int(conv.sum())
        bounded = 0 < k < len(conv) and bool(conv[:k].all())
        boundary = float(g["lr"].iloc[k - 1]) if bounded else float("nan")
        naive = float(g["naive_lr"].iloc[0])
        rows.append({"init_var": var, "boundary": boundary, "naive_lr": naive,
                     "catapult": bool(bounded and boundary > naive)})
    return pd.DataFrame(rows)


def trainability_claims(table: pd.DataFrame, tol: float,
                        cfg: TrainabilityConfig | None = None) -> list[Claim]:
    """The claims of ``trainability``, a pure function of its table, the rule's ``tol`` and,
    for the claims against the exact theory's level, the config (``None``: those left out).

    A cell's status follows from its measured ``rel_error`` (final over initial
    squared error; NaN where the run diverged) by the one trainability rule.
    Single-layer rows carry the exact theory's ``theory_status``; two-layer rows
    the learning rate ``lr`` and the naive line ``naive_lr = 2 / sharpness`` at
    initialisation.
    """
    needed = {"model", "rel_error", "theory_status", "lr", "naive_lr", "init_var"}
    if not needed <= set(table.columns):
        raise ValueError(f"table must have the columns {sorted(needed)}")
    single = table[table["model"] == "single-layer"]
    two = table[table["model"] == "two-layer"]
    agree = (float(np.mean(measured_status(single, tol) == single["theory_status"].to_numpy()))
             if len(single) else float("nan"))
    rows = catapult_rows(two, tol) if len(two) else pd.DataFrame(columns=["catapult"])
    catapult = int(rows["catapult"].sum())
    claims = _level_claims(single, cfg) if cfg is not None else []
    if cfg is not None and len(two):
        claims.append(within(
            "two layers: the naive line 2/sharpness against the initial weights' edges "
            "(largest |log ratio|)", naive_line_error(two, cfg.two_layer_N, cfg.two_layer_D),
            0.0, NAIVE_TOL, source="Lewkowycz et al. 2020 (the naive line); own",
            aspect="oracle", key="naive line", revised=NAIVE_REVISED, revised_how="tighter",
            partner="two layers: rows converging up to a boundary beyond 2/sharpness",
            note=f"over the {rows.shape[0]} init variances: the table's naive_lr (2 / the "
                 "Gauss-Newton top eigenvalue at initialisation, by power iteration) against "
                 "2 / (var lmax / D + var lmax / N), the two layers' top eigenvalues at their "
                 f"Tracy-Widom means for N = {cfg.two_layer_N}, D = {cfg.two_layer_D}: the "
                 "line the catapult claim reads, evaluated a second way; a line halved, "
                 "doubled or read off the final sharpness fails"))
    return claims + [
        within("single layer: cells agreeing with the theory", agree,
               THEORY_AGREEMENT_MIN, 1.0,
               source='abstract 1: "a phase diagram of trainability governed by the step size '
                      '(or learning rate) and initial weight variance"; own',
               note="converged / stalled / diverged against the exact trainability boundary "
                    "(own: related works sec. 1, trainability [D]) "
                    f"over {len(single)} cells; tolerance from seeds 1-3 (1, 0, 0 cells "
                    "missed of 60)", revised=AGREEMENT_REVISED, revised_how="tighter"),
        within("two layers: rows converging up to a boundary beyond 2/sharpness",
               float(catapult), CATAPULT_MIN, np.inf,
               source="Lewkowycz et al. 2020 (the catapult phase)", revised_how="restated",
               revised="b1882fe (issue 30): "
                       "'cells converged beyond 2/sharpness >= 1' -> 'rows whose "
                       "converged lrs end at a boundary beyond 2/sharpness >= 1'; the cell "
                       "count held on a constant table and on every shuffled one",
               note=f"of {len(rows)} init variances: converged for every lr up to a boundary, "
                    "not converged above it, the boundary past the naive stability line "
                    "2/sharpness at initialisation (catapults)"),
    ]


def _level_claims(single: pd.DataFrame, cfg: TrainabilityConfig) -> list[Claim]:
    """The single layer's final error against the exact theory: the deviation's size, the
    level, and the closed form against its recursion."""
    theory = theory_rel_error(single, cfg)
    meas = single["rel_error"].to_numpy(np.float64)
    ok = np.isfinite(theory) & np.isfinite(meas) & (meas > 0) & (theory > 0)
    logr = np.log(meas[ok] / theory[ok])
    rms = float(np.sqrt(np.mean(logr ** 2))) if logr.size else float("nan")
    bias = float(np.mean(logr)) if logr.size else float("nan")
    lr = single["lr"].to_numpy(np.float64)
    s0 = np.sqrt(single["init_var"].to_numpy(np.float64))
    rec = recursion_rel_error(lr, s0, cfg)
    fin = np.isfinite(theory) & np.isfinite(rec)
    oracle = (float(np.max(np.abs(rec[fin] / theory[fin] - 1.0))) if fin.any()
              else float("nan"))
    src = ('abstract 1: "a phase diagram of trainability governed by the step size (or '
           'learning rate) and initial weight variance"; own (the exact mean-square theory)')
    seeds = f"seeds {min(LEVEL_PILOT)}-{max(LEVEL_PILOT)}"
    rms_p, mean_p = (np.array(v) for v in zip(*LEVEL_PILOT.values(), strict=True))
    pilot = (f"{seeds}: RMS {rms_p.mean():.3g} on average, {rms_p.min():.3g}-"
             f"{rms_p.max():.3g}; means {mean_p.min():.2g} to {mean_p.max():.2g}")
    predicted = float(rms_p.mean()) * math.sqrt(
        LEVEL_DEV_PILOT_SIZE / (cfg.P * cfg.D * cfg.replicas))
    dev_name = "single layer: RMS of log(final error / exact theory)"
    return [
        sized(dev_name, rms, predicted, LEVEL_DEV_FACTOR, source=src,
              predicted_by=f"{seeds} at the quick size, not the judged seed ({pilot}), "
                           "scaled by (P D replicas)^(-1/2)",
              revised=LEVEL_DEV_REVISED, revised_how="tighter",
              note=f"over the {logr.size} single-layer cells where neither the run nor the "
                   f"theory diverges; {cfg.replicas} replicas a cell; a table equal to the "
                   "theory fails, and so do fluctuations twice too large (a quarter of the "
                   "replicas); band: 2.5 sd of the pilot seeds' log RMS"),
        within("single layer: mean of log(final error / exact theory)", bias,
               -LEVEL_BIAS_TOL, LEVEL_BIAS_TOL, source=src, aspect="prefactor",
               partner=dev_name,
               note=f"the level over the same cells: label noise s (the stationary error "
                    f"lr s^2 / (2B - lr (B + D + 1)) per entry), the steps (the transient "
                    f"rho^t) and the start sigma0^2 P + theta^2 all set it; tolerance 4 "
                    f"standard errors of seeds 1-3's cells, checked on {pilot}"),
        within("trainability theory: closed form - step-by-step recursion (largest relative)",
               oracle, 0.0, RECURSION_TOL, source="own", aspect="oracle", partner=dev_name,
               note="predict_trainability (the claims and the figure's boundary call it) "
                    "against the mean-square recursion iterated here, over the single-layer "
                    "cells where both are finite; it reads no measured number: its partner "
                    "is the deviation's size"),
    ]


def trainability_claims_of(cfg: TrainabilityConfig, folder: Path) -> list[Claim]:
    """The claims of ``trainability`` on the table in a run's ``folder`` (for the registry)."""
    return trainability_claims(pd.read_parquet(folder / "trainability.parquet"), cfg.tol, cfg)
