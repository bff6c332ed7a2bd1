"""The outlier-escape experiments' claims: ``bbp-escape``'s here, pure functions of its
tables and config; ``trainability``'s in :mod:`~specdyn.experiments.outlier_escape.trainability`
and ``lr-transfer``'s in :mod:`~specdyn.experiments.outlier_escape.transfer` (imported here:
the topic's claims, which the registry reads).

Every tolerance, dispute and revision record is fixed before the run;
:func:`bbp_claims` checks them on ``bbp-escape.parquet`` (``bbp_claims_of`` reads a run's
folder, for the registry).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn.experiments.outlier_escape.config import BBPEscapeConfig
from specdyn.experiments.outlier_escape.readings import nonlinear_reading, sgd_reading
from specdyn.experiments.outlier_escape.replicas import TABLE as REPLICA_TABLE
from specdyn.experiments.outlier_escape.replicas import (
    predicted_level,
    replica_claims,
    replica_level,
)
from specdyn.experiments.outlier_escape.trainability import (
    catapult_rows,
    measured_status,
    trainability_claims,
    trainability_claims_of,
)
from specdyn.experiments.outlier_escape.transfer import (
    ESCAPE_WIDTH_TOL,
    best_lr_grid_shift,
    best_lr_index,
    escape_by_width,
    lr_transfer_claims,
    lr_transfer_claims_of,
)
from specdyn.runs.claims import Claim, sized, within
from specdyn.theory import outlier_escape as oe

__all__ = ["ESCAPE_WIDTH_TOL", "bbp_claims", "bbp_claims_of", "best_lr_grid_shift",
           "best_lr_index", "catapult_rows", "escape_by_width", "lr_transfer_claims",
           "lr_transfer_claims_of", "measured_status", "stochastic_claims",
           "trainability_claims", "trainability_claims_of"]

# --------------------------------------------------------------------------
# bbp-escape
# --------------------------------------------------------------------------


# Claim tolerances of ``bbp-escape`` (fixed before any run).
#: Largest ``measured escape / t* - 1``: detection needs the outlier a
#: Tracy-Widom fluctuation beyond the edge, so it lags the crossing a little.
ESCAPE_LAG_MAX = 0.25
#: Largest relative error of the top singular value against the BBP outlier
#: path once the outlier is clear of the edge (``> CLEAR_FACTOR`` x edge).
OUTLIER_LOCATION_TOL = 0.05
CLEAR_FACTOR = 1.1
#: Smallest rise of the squared overlap of the top singular vectors with the
#: teacher's (left and right), from its largest value before ``ALIGN_BEFORE x t*``
#: to the last step: from a random direction's ``~1/D`` to the rectangular-spike
#: overlap, which the path reaches above 0.99 by the quick horizon (1.6 t*).
ALIGNMENT_RISE_MIN = 0.85
ALIGN_BEFORE = 0.9
#: Largest difference of a measured squared overlap from the rectangular-spike
#: prediction once the outlier is clear (the same steps as the location claim):
#: the overlaps' finite-size fluctuations are ``O(D^(-1/2))``, 0.04 at D = 600.
OVERLAP_TOL = 0.1
#: The deviations of the measured outliers from their predictions, once clear, have the size
#: seeds 1-3 of the quick size (not the judged seed 0) showed, scaled to the run's size like
#: an outlier's fluctuations, ``D^(-1/2)`` (Paul 2007; Bai & Yao 2008). Four deviations:
#: population GD's top singular value (RMS relative) and squared overlaps (RMS, left and
#: right), SGD's and the nonlinear layer's top singular value (RMS relative). Each divided by
#: its pilot size, their RMS is 1 within :data:`DEVIATION_FACTOR` (two-sided: runs equal to
#: their theories fail, and so do deviations several times too large). One run's
#: population deviation is a single draw of ``W0`` (seeds 1-3: 0.0010-0.0098), too loose
#: alone for a factor; pooled over the four, seeds 1-3 give 0.85, 0.97, 1.47.
DEVIATION_PILOT: dict[str, tuple[float, ...]] = {
    "location": (0.00271, 0.00102, 0.00979), "overlaps": (0.00578, 0.00680, 0.01327),
    "sgd location": (0.01724, 0.00875, 0.00629),
    "nonlinear location": (0.01278, 0.02504, 0.02278)}
DEVIATION_FACTOR = 2.5
#: The deviations' names and the quick size each pilot was measured at.
_PILOT_SIZES = {"location": 600, "overlaps": 600, "sgd location": 600,
                "nonlinear location": 400}
#: Largest relative difference between the rectangular-spike location along the path and
#: the root of the D-transform equation ``D(s) = 1 / theta^2`` by quadrature over the
#: Marchenko-Pastur law (Benaych-Georges & Nadakuditi 2012, Thm 2.9): an independent
#: evaluation of the formula the claims and the figure call.
DTRANSFORM_TOL = 1e-8
#: Smallest of the four deviations over its pilot size: each run off its own prediction, so
#: that one run equal to its theory fails though the pooled RMS holds. Seeds 1-3's smallest
#: ratio to the pilot mean: location 0.23 (seed 2), overlaps 0.67, SGD 0.58, nonlinear
#: 0.63; 0.1 is 2.3 times below the least of them.
DEVIATION_FLOOR = 0.1
FLOOR_REVISED = ("added after a referee's wrong model (issue 47: population GD returning "
                 "its path, the SGD and nonlinear runs real) passed the pooled claim; floor "
                 "from seeds 1-3's pilot values, seed 0's not read for it")
POOLED_REVISED = ("issue 47 (seed scan): population GD's location term, its one run's RMS "
                  "deviation (one draw of W0: 3.5 times its pilot on seed 0, the pooled RMS "
                  "2.92 against 2.5 on seed 24), is its 32 replicas' level over that level's "
                  "pilot where the replicas are recorded")
#: |t* / the root of the population GD map's strength at the BBP threshold - 1|: the closed
#: form ln(1 + x) / -ln|1 - lr| against a root found numerically (brentq, xtol 1e-14).
CROSSING_TOL = 1e-9
CROSSING_REVISED = ("added after a referee's wrong model (issue 47: t* with the spiked-"
                    "covariance threshold c^(1/2) for the rectangular c^(1/4)) passed every "
                    "claim")


def _pilot(name: str, D: int, D_pilot: int) -> float:
    """The mean of seeds 1-3's deviation ``name`` at the quick size ``D_pilot``, scaled to
    ``D`` by ``sqrt(D_pilot / D)``."""
    vals = DEVIATION_PILOT.get(name, ())
    return float(np.mean(vals)) * math.sqrt(D_pilot / D) if vals else float("nan")


def _rms(x: np.ndarray) -> float:
    x = np.asarray(x, dtype=np.float64)
    return float(np.sqrt(np.mean(x * x))) if x.size and np.all(np.isfinite(x)) \
        else float("nan")


def _location_rms(r: Any) -> float:
    """RMS relative deviation of a stochastic run's top singular value from its prediction,
    over the steps where the predicted outlier is clear."""
    cl = r.clear(CLEAR_FACTOR)
    return _rms(r.measured["sv1"].to_numpy()[cl] / r.outlier[cl] - 1.0) if cl.any() \
        else float("nan")


def dtransform_location(theta: float, c: float, n_quad: int = 400) -> float:
    """The outlier singular value of ``G / sqrt(m) + theta u v^T`` (``n x m``, ``c = n / m``
    <= 1) as the root above the edge of ``D(s) = 1 / theta^2``, with the D-transform
    ``D(s) = phi(s) (c phi(s) + (1 - c) / s)``, ``phi(s) = int s / (s^2 - t^2) dmu(t)``
    over the singular values of the noise (Marchenko-Pastur, by Gauss-Legendre quadrature
    after ``lambda = a + (b - a)(1 - cos u) / 2``); NaN below the threshold."""
    from scipy.optimize import brentq

    from specdyn.theory.rmt import mp_density, mp_edges, rectangular_bulk_edge

    a, b = (float(x) for x in mp_edges(c))
    x, w = np.polynomial.legendre.leggauss(n_quad)
    u = 0.5 * np.pi * (x + 1)
    lam = a + (b - a) * (1 - np.cos(u)) / 2
    weight = np.asarray(mp_density(lam, c)) * (b - a) * np.sin(u) / 2 * 0.5 * np.pi * w
    t2 = lam

    def dt(z: float) -> float:
        phi = float(np.sum(weight * z / (z * z - t2)))
        return phi * (c * phi + (1 - c) / z) - 1.0 / theta ** 2

    edge = float(rectangular_bulk_edge(c))
    lo = edge * (1 + 1e-12)
    if not dt(lo) > 0:  # D(edge) = 1 / c^(1/2) at the threshold: no outlier below it
        return float("nan")
    return float(brentq(dt, lo, max(10.0 * theta + 10.0, 2 * edge), xtol=1e-14, rtol=1e-14))


def crossing_root(theta: float, sigma0: float, c: float, lr: float) -> float:
    """The BBP crossing time of population GD found numerically, not by
    :func:`~specdyn.theory.outlier_escape.bbp_crossing_time`: ``W_t = a_t W0 + (1 - a_t)
    W*`` with ``a_t = (1 - lr)^t`` (``0 < lr < 1``) carries a spike of strength ``(1 - a_t)
    theta / (a_t sigma0)`` on a bulk of scale ``a_t sigma0``, and an outlier once that
    passes the rectangular threshold ``c^(1/4)`` (Benaych-Georges & Nadakuditi 2012,
    ``c = P / D <= 1``); NaN outside ``0 < lr < 1``."""
    from scipy.optimize import brentq

    if not 0.0 < lr < 1.0 or theta <= 0.0:
        return float("nan")

    def gap(t: float) -> float:
        a = (1.0 - lr) ** t
        return (1.0 - a) * theta / (a * sigma0) - c ** 0.25

    hi = 1.0
    while gap(hi) < 0.0:
        hi *= 2.0
    return float(brentq(gap, 0.0, hi, xtol=1e-14, rtol=1e-15))


def _measured_series(df: pd.DataFrame, quantity: str) -> pd.Series:
    """One measured quantity of the ``bbp-escape`` table, indexed by step (sorted)."""
    sel = df[(df["quantity"] == quantity) & (df["source"] == "measured")]
    return sel.set_index("step")["value"].sort_index()


def bbp_claims(df: pd.DataFrame, cfg: BBPEscapeConfig,
               stochastic: pd.DataFrame | None = None,
               replicas: pd.DataFrame | None = None) -> list[Claim]:
    """The claims of ``bbp-escape``, a pure function of its long table and config (and,
    when given, the SGD and nonlinear runs' table and the population run's replicas').

    ``df`` has one row per (step, quantity, source): measured ``sv1..``,
    ``left_overlap2`` and ``right_overlap2`` with the per-step Tracy-Widom
    ``flagged`` count. The theory (bulk edge, outlier, overlaps) is computed here
    from the config (:func:`~specdyn.theory.outlier_escape.population_gd_path`),
    not read back from the table.
    """
    needed = {"step", "flagged", "quantity", "source", "value"}
    if not needed <= set(df.columns):
        raise ValueError(f"df must have the columns {sorted(needed)}")
    c = cfg.P / cfg.D
    t_star = oe.bbp_crossing_time(cfg.theta, cfg.sigma0, c, cfg.lr)
    sv1_rows = df[(df["quantity"] == "sv1") & (df["source"] == "measured")]
    flags = sv1_rows.groupby("step")["flagged"].first().sort_index()
    steps = flags.index.to_numpy()
    flagged_before = float(flags[steps < t_star].sum())
    hit = steps[flags.to_numpy() > 0]
    lag = float(hit[0] / t_star - 1.0) if hit.size else float("nan")

    sv1 = _measured_series(df, "sv1")
    path = oe.population_gd_path(cfg.theta, cfg.sigma0, c, cfg.lr, sv1.index.to_numpy())
    clear = path.singular_value > CLEAR_FACTOR * path.bulk_edge
    loc_err = (float(np.max(np.abs(sv1.to_numpy()[clear] / path.singular_value[clear] - 1.0)))
               if clear.any() else float("nan"))
    loc_rms = (_rms(sv1.to_numpy()[clear] / path.singular_value[clear] - 1.0)
               if clear.any() else float("nan"))
    # the path's location against the D-transform root, independently of rectangular_spike
    scale = np.abs(path.a) * cfg.sigma0
    oracle = [abs(path.singular_value[i] / (scale[i] * dtransform_location(
        float(path.strength[i]), c)) - 1.0) for i in np.flatnonzero(clear)]
    oracle_err = float(np.max(oracle)) if oracle else float("nan")
    rises, gaps, devs = [], [], []
    for side in ("left", "right"):
        o = _measured_series(df, f"{side}_overlap2")
        if o.empty:  # no overlaps recorded: nothing aligned
            rises.append(float("nan"))
            gaps.append(float("nan"))
            continue
        st = o.index.to_numpy()
        before = o.to_numpy()[st < ALIGN_BEFORE * t_star]
        rises.append(float(o.iloc[-1] - before.max()) if before.size else float("nan"))
        pth = oe.population_gd_path(cfg.theta, cfg.sigma0, c, cfg.lr, st)
        th = pth.left_overlap2 if side == "left" else pth.right_overlap2
        cl = pth.singular_value > CLEAR_FACTOR * pth.bulk_edge
        gaps.append(float(np.max(np.abs(o.to_numpy()[cl] - th[cl]))) if cl.any()
                    else float("nan"))
        devs.append(o.to_numpy()[cl] - th[cl])
    ov_rms = _rms(np.concatenate(devs)) if len(devs) == 2 else float("nan")
    loc_name = "top singular value / BBP outlier path - 1, once clear"
    pooled: list[Claim] = []
    if stochastic is not None:
        sgd, nl = sgd_reading(stochastic, cfg), nonlinear_reading(stochastic, cfg)
        measured = {"location": (loc_rms, cfg.D), "overlaps": (ov_rms, cfg.D),
                    "sgd location": (_location_rms(sgd), cfg.sgd_D),
                    "nonlinear location": (_location_rms(nl), cfg.nonlinear_D)}
        sizes = {k: (m, _pilot(k, d, _PILOT_SIZES[k])) for k, (m, d) in measured.items()}
        ratios = {k: m / p for k, (m, p) in sizes.items()}
        pilots = {k: f"{m:.3g} / {p:.3g}" for k, (m, p) in sizes.items()}
        if replicas is not None and len(replicas):
            # one run's location is one draw of W0 (seeds 0-3, 24: 0.23-3.5 of its pilot);
            # its replicas' level is the location's size, resolved
            level, (pred, _) = replica_level(replicas, cfg), predicted_level(cfg)
            ratios["location"] = level / pred
            pilots["location"] = f"{level:.3g} / {pred:.3g} (the replicas' level)"
        least = min(ratios, key=lambda k: ratios[k])
        pooled.append(sized(
            "outliers - predictions, once clear: RMS deviation / its pilot size (pooled)",
            _rms(np.array(list(ratios.values()))), 1.0, DEVIATION_FACTOR,
            source="Benaych-Georges & Nadakuditi 2012 (rectangular spike); own",
            predicted_by="seeds 1-3 of the quick size, scaled by sqrt(D_quick / D)",
            revised=POOLED_REVISED, revised_how="restated",
            note="population GD's location (its replicas' level where recorded) and "
                 "overlaps, SGD's and the nonlinear layer's locations, each over the steps "
                 f"where its predicted outlier exceeds {CLEAR_FACTOR:g} x the edge, divided "
                 "by its pilot size: " + ", ".join(f"{k} {v}" for k, v in pilots.items())))
        pooled.append(within(
            "outliers - predictions, once clear: smallest RMS deviation / its pilot size",
            float(ratios[least]), DEVIATION_FLOOR, np.inf,
            source="Benaych-Georges & Nadakuditi 2012 (rectangular spike); own",
            revised=FLOOR_REVISED, revised_how="tighter", partner=pooled[0].name,
            note=f"the least of the four ratios above ({least}): each run is off its own "
                 "prediction by a finite-size amount, so one run equal to its theory fails "
                 "though the pooled RMS of the four holds; floor from seeds 1-3 (their least "
                 "ratio 0.23); a table scrambled in time keeps its floor: its partner is the "
                 "pooled RMS"))
    root = crossing_root(cfg.theta, cfg.sigma0, c, cfg.lr)
    return pooled + [
        within("t*: closed form = the root of the GD map's strength at c^(1/4)",
               abs(t_star / root - 1.0), 0.0, CROSSING_TOL,
               source="Benaych-Georges & Nadakuditi 2012 (rectangular threshold c^(1/4)); own",
               aspect="oracle", partner="measured escape / t* - 1",
               revised=CROSSING_REVISED, revised_how="tighter",
               note=f"theory.outlier_escape.bbp_crossing_time ({t_star:.6g}, which the escape "
                    f"claim and the figure read) against the root ({root:.6g}) of (1 - a_t) "
                    "theta / (a_t sigma0) = c^(1/4), a_t = (1 - lr)^t, found by brentq: a "
                    "threshold or rate convention inside the closed form fails here; it reads "
                    "no measured value: its partner is the escape time"),
        within("outliers flagged before t*", flagged_before, 0.0, 0.0,
               source='abstract 1: "isolated eigenvalues detach from the random bulk"; own',
               partner="measured escape / t* - 1",
               note="Tracy-Widom test at level alpha on the bulk before the BBP crossing t* "
                    "(own: related works sec. 1, population GD, exact [D]); "
                    "a table never flagged also has none before t*: its partner, the escape "
                    "time, is NaN there"),
        within("measured escape / t* - 1", lag, 0.0, ESCAPE_LAG_MAX,
               source='abstract 1: "induces a Baik-Ben Arous-Peche (BBP) transition during '
                      'training"; own',
               note="first flagged step against the predicted BBP crossing time t* (own: "
                    "related works sec. 1, population GD, exact [D]); "
                    "detection needs the outlier a fluctuation beyond the edge"),
        within("top singular value / BBP outlier path - 1, once clear", loc_err,
               0.0, OUTLIER_LOCATION_TOL,
               source="Benaych-Georges & Nadakuditi 2012 (rectangular spike); own",
               note="along the population GD path (own: related works sec. 1 [D]); "
                    f"max over the steps where the predicted outlier exceeds "
                    f"{CLEAR_FACTOR:g} x the bulk edge"),
        within("spectral alignment: rise of the squared overlap with the teacher "
               "(smaller of left, right)", float(np.min(rises)), ALIGNMENT_RISE_MIN, 1.0,
               source='abstract 1: "robust emergence of spectral alignment during training"',
               note=f"last step's squared overlap of the top singular vector with u (left) "
                    f"and v (right) minus its largest value before {ALIGN_BEFORE:g} t*; "
                    f"left {rises[0]:.3f}, right {rises[1]:.3f}"),
        within("squared overlaps - rectangular-spike prediction, once clear (largest)",
               float(np.max(gaps)), 0.0, OVERLAP_TOL,
               source="Benaych-Georges & Nadakuditi 2012 (spike overlaps); own",
               note="along the population GD path (own: related works sec. 1 [D]); "
                    f"max |measured - predicted| over the steps where the predicted outlier "
                    f"exceeds {CLEAR_FACTOR:g} x the bulk edge; left {gaps[0]:.3f}, "
                    f"right {gaps[1]:.3f}"),
        within("BBP path: rectangular-spike location - D-transform root (largest relative)",
               oracle_err, 0.0, DTRANSFORM_TOL, source="Benaych-Georges & Nadakuditi 2012, "
               "Thm 2.9 (the D-transform); own", aspect="oracle", partner=loc_name,
               note="theory.outlier_escape.population_gd_path (the claims and the figure "
                    "call it) against the root of D(s) = 1/theta_eff^2 by quadrature over "
                    "the Marchenko-Pastur law, at the clear steps; it reads no measured "
                    "value: its partner is the location claim"),
    ]


#: SGD and nonlinear runs (:mod:`~.stochastic`), tolerances from seeds 1-3 (not the judged
#: seed 0) of the quick size (every other step recorded). SGD's top bulk singular value
#: against the edge of its second-moment recursion, every recorded step: 0.031, 0.035, 0.029
#: (population GD's edge, the wrong model, is off by a factor 30 late).
SGD_BULK_TOL = 0.08
#: Top singular value against the predicted outlier once clear, SGD and nonlinear: SGD
#: 0.031, 0.018, 0.011; nonlinear 0.022, 0.038, 0.033.
STOCHASTIC_LOCATION_TOL = 0.06
#: Squared overlaps against the prediction once clear: SGD 0.046, 0.043, 0.086; nonlinear
#: (right with beta, left with a) 0.044, 0.100, 0.010.
STOCHASTIC_OVERLAP_TOL = 0.15
#: The nonlinear layer's first Tracy-Widom flag against the predicted crossing step: seeds
#: 1-3 0, 0.11, 0.22 (detection needs the outlier a fluctuation beyond the edge, which
#: near the threshold grows as (theta - c^(1/4))^2: a few steps; recorded every 2 steps).
NONLINEAR_LAG_MAX = 0.4
_SGD_BULK = ("SGD: top bulk singular value / its second-moment edge - 1, every checkpoint "
             "(largest |.|)")
_SGD_SOURCE = ('abstract 1: "driven by stochastic gradient descent (SGD) updates that '
               'reshape the spectral bulk while amplifying signal strength"; own')
_NONLINEAR_SOURCE = ('abstract 1: "extend our formalism beyond the linear regime to '
                     'nonlinear and stochastic settings"; own')


def stochastic_claims(df: pd.DataFrame, cfg: BBPEscapeConfig) -> list[Claim]:
    """The SGD and nonlinear claims of ``bbp-escape``, on ``bbp-escape_stochastic.parquet``
    (:mod:`~specdyn.experiments.outlier_escape.readings` has the predictions)."""
    sgd, nl = sgd_reading(df, cfg), nonlinear_reading(df, cfg)

    def worst(x: np.ndarray) -> float:
        x = np.abs(np.asarray(x, dtype=float))
        return float(x.max()) if x.size and np.all(np.isfinite(x)) else float("nan")

    def location(r: Any) -> float:
        cl = r.clear(CLEAR_FACTOR)
        return worst(r.measured["sv1"].to_numpy()[cl] / r.outlier[cl] - 1.0)

    def overlaps(r: Any) -> float:
        cl = r.clear(CLEAR_FACTOR)
        return max(worst(r.measured["left_overlap2"].to_numpy()[cl] - r.left2[cl]),
                   worst(r.measured["right_overlap2"].to_numpy()[cl] - r.right2[cl]))

    flags = nl.measured["flagged"].to_numpy()
    hit = nl.steps[flags > 0]
    lag = float(hit[0] / nl.crossing - 1.0) if hit.size and nl.crossing > 0 else float("nan")
    sgd_note = (f"online SGD, batch {cfg.sgd_B}, label noise {cfg.sgd_noise:g}, lr "
                f"{cfg.sgd_lr:g}, P x D = {cfg.sgd_P} x {cfg.sgd_D}: the init part decays at "
                "the mean-square rate rho = 1 - 2 lr + lr^2 (1 + (D + 1)/B), not (1 - lr)^2, "
                "and label noise keeps a bulk of variance lr s^2 / (2B - lr (B + D + 1)) "
                "(theory.outlier_escape.online_sgd_path)")
    nl_note = (f"online SGD on the first layer of N^(-1/2) a^T {cfg.nonlinear_activation}"
               f"(W x), N = {cfg.nonlinear_N}, D = {cfg.nonlinear_D}, a fresh batch of "
               f"{cfg.nonlinear_B} He1 samples a step: the updates' rank-one parts lr mu1 a "
               "g^T add up to a spike of strength lr |mu1| ||a|| sqrt(t^2 + t D / B) on W0's "
               "bulk (experiments.outlier_escape.readings)")
    return [
        within(_SGD_BULK, worst(sgd.measured["sv2"].to_numpy() / sgd.edge - 1.0), 0.0,
               SGD_BULK_TOL, source=_SGD_SOURCE,
               note=f"{sgd_note}; the second singular value against sqrt(m_t D)(1 + sqrt c) at "
                    f"every recorded step; tolerance from seeds 1-3 (0.029-0.035)"),
        within("SGD: top singular value / outlier path on the SGD bulk - 1, once clear",
               location(sgd), 0.0, STOCHASTIC_LOCATION_TOL, source=_SGD_SOURCE,
               partner=_SGD_BULK,
               note=f"{sgd_note}; max over the steps where the predicted outlier exceeds "
                    f"{CLEAR_FACTOR:g} x the edge; tolerance from seeds 1-3 (0.011-0.031); the "
                    "late path is flat, so a constant series passes: its partner is the bulk"),
        within("SGD: squared overlaps - rectangular-spike prediction on the SGD bulk, once "
               "clear (largest)", overlaps(sgd), 0.0, STOCHASTIC_OVERLAP_TOL,
               source=_SGD_SOURCE, partner=_SGD_BULK,
               note=f"{sgd_note}; left with u, right with v, the same steps; tolerance from "
                    "seeds 1-3 (0.043-0.086)"),
        within(f"{cfg.nonlinear_activation} layer: first flagged step / predicted BBP "
               "crossing - 1", lag, 0.0, NONLINEAR_LAG_MAX, source=_NONLINEAR_SOURCE,
               key="nonlinear layer: escape step / predicted crossing - 1",
               note=f"{nl_note}; Tracy-Widom test at level {cfg.alpha:g} on W's spectrum, "
                    f"against the first step with theta_t > c^(1/4) ({nl.crossing:g}); "
                    "tolerance from seeds 1-3 (0, 0.11, 0.22)"),
        within(f"{cfg.nonlinear_activation} layer: top singular value / accumulated-spike "
               "path - 1, once clear", location(nl), 0.0, STOCHASTIC_LOCATION_TOL,
               source=_NONLINEAR_SOURCE, key="nonlinear layer: outlier location",
               note=f"{nl_note}; tolerance from seeds 1-3 (0.022-0.038)"),
        within(f"{cfg.nonlinear_activation} layer: squared overlaps - prediction, once clear "
               "(largest)", overlaps(nl), 0.0, STOCHASTIC_OVERLAP_TOL,
               source=_NONLINEAR_SOURCE, key="nonlinear layer: overlaps",
               note=f"{nl_note}; left with a / ||a||, right with beta (the spike's direction "
                    "t beta + xi_t); tolerance from seeds 1-3 (0.010-0.100)"),
    ]


def bbp_claims_of(cfg: BBPEscapeConfig, folder: Path) -> list[Claim]:
    """The claims of ``bbp-escape`` on the tables in a run's ``folder`` (for the registry):
    population GD's, its replicas', then the SGD and nonlinear runs' (a folder written
    before the replicas or those runs were recorded has only the first)."""
    extra, reps = folder / "bbp-escape_stochastic.parquet", folder / REPLICA_TABLE
    stoch = pd.read_parquet(extra) if extra.exists() else None
    rep = pd.read_parquet(reps) if reps.exists() else None
    claims = bbp_claims(pd.read_parquet(folder / "bbp-escape.parquet"), cfg, stoch, rep)
    claims += replica_claims(rep, cfg) if rep is not None else []
    return claims + (stochastic_claims(stoch, cfg) if stoch is not None else [])
