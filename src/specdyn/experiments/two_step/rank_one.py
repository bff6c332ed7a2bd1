"""The step-1 update of ``two-step-phase``: how far from rank one it may be, and whether its
spike clears the bulk of ``W0`` (own derivations, written before the runs they judge).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from specdyn.data.hermite import HermiteTarget, gaussian_expectation
from specdyn.experiments.two_step.config import PhaseConfig
from specdyn.models import numpy_activation
from specdyn.sim.two_step import activation_mu1
from specdyn.theory.rmt import rectangular_bulk_edge, rectangular_spike

#: The step-1 update's s2/s1 is at most this many times its typical size (the i.i.d.
#: remainder of :func:`rank_one_ratio_bound`, ``predicted``): seeds 1-3 (not the judged seed
#: 0) measured 0.060, 0.054, 0.059 against a typical 0.026 (2.1-2.3 times; the --full run
#: 0.032 against 0.013, 2.5 times: the estimate leaves out the largest row weight and the
#: kernel's structure that the conservative bound keeps). 4 times leaves 1.6 times the
#: largest seed's; a rank-two update (s2/s1 of order 1: 0.6 in the wrong model) is 10 times
#: above it at the quick size. The conservative bound (0.69 quick, 0.29 --full) is 12 times
#: the measured value and let a rank-two update pass.
RANK_TYPICAL_FACTOR = 4.0
RANK_REVISED = ("issue 40: s2/s1 <= the conservative bound (Weyl, largest |a_i|, Schur; 0.691 "
                "quick, 0.289 --full) -> <= 4 times the typical size (0.104 quick, 0.052 "
                "--full), after the quick (0.057) and --full (0.032) runs: the bound let a "
                "rank-two update (s2/s1 = 0.6) pass; the factor 4 from seeds 1-3 (2.1-2.3 "
                "times the typical size)")


def rank_one_ratio_bound(cfg: PhaseConfig) -> tuple[float, float, float]:
    """``(bound, predicted, theta)``: how far from rank one the step-1 update may be.

    Own derivation (written before any run of the ``s*_dW1`` columns), from the model of
    :mod:`specdyn.sim.two_step`. Split ``sigma' = mu1 + sigma'_perp``: the update is
    ``lr1 G``, ``G = mu1 a g^T + Delta``, ``g = X^T r / M``,
    ``Delta = diag(a) R``, ``R_i = (1/M) sum_m sigma'_perp(w_i . x_m) r_m x_m``.

    * The spike: ``theta = |mu1| ||a|| ||g||`` with ``||a|| ~ 1`` and
      ``||g||^2 ~ c1^2 + (D/M) E[y^2]`` (mean ``c1 beta``, ``c1 = E[z sigma*(z)]``; each of
      the ``D`` coordinates has variance ``E[y^2] / M``; ``r = y - f``, ``f = O(N^-1/2)``).
    * Weyl: ``s2(G) <= ||Delta||`` and ``s1(G) >= theta - ||Delta||``, so
      ``s2/s1 <= delta / (theta - delta)`` for any ``delta >= ||Delta||``.
    * ``||Delta|| <= max_i |a_i| ||R||``, ``max_i |a_i| ~ sqrt(2 ln N / N)``. Given the
      batch, the rows of ``R`` are i.i.d. (``w_i`` are) with covariance
      ``C = (1/M^2) X^T diag(r) K diag(r) X``, ``K = E_w[sigma'_perp(Xw) sigma'_perp(Xw)^T]``;
      by the Schur product theorem on its Hermite series ``||K|| <= Var(sigma')
      (1 + sqrt(M/D))^2``, and ``||X^T diag(r^2) X / M|| ~ E[y^2] L`` with ``L`` the larger
      of the Marchenko-Pastur edge ``(1 + sqrt(D/M))^2`` and the location of its spike
      along ``beta``, ``kappa (1 + (D/M) / (kappa - 1))``, ``kappa = E[z^2 y^2] / E[y^2]``.
      So ``||R|| <= sqrt(||C||) (sqrt(N) + sqrt(D))`` and
      ``delta = sqrt(2 ln N) (1 + sqrt(D/N)) sqrt(Var(sigma') (1 + sqrt(M/D))^2 E[y^2] L / M)``.

    The bound is conservative (the largest ``|a_i|`` for every row, the Schur bound on
    ``K``): the typical size, ``predicted``, is the remainder as an i.i.d. matrix of
    entry variance ``Var(sigma') E[y^2] / (N M)``, ``sqrt(Var(sigma') E[y^2] / M)
    (1 + sqrt(D/N)) / theta``. Both fall like ``N^(-1/2)`` at fixed ``D/N, M/N`` and do not
    depend on ``lr1``: how rank one the update is has nothing to do with whether its
    spike clears the bulk of ``W0``. ``inf`` when ``delta >= theta``.
    """
    _, dsig = numpy_activation(cfg.activation)
    mu1 = activation_mu1(cfg.activation)
    var_d = gaussian_expectation(lambda z: dsig(z) ** 2) - mu1 ** 2
    tgt = HermiteTarget.named(cfg.target)
    y2 = tgt.second_moment
    c1 = gaussian_expectation(lambda z: z * tgt.link(z))
    kappa = gaussian_expectation(lambda z: z ** 2 * tgt.link(z) ** 2) / y2
    n, d, m = float(cfg.N), float(cfg.D), float(cfg.M)
    theta = abs(mu1) * math.sqrt(c1 ** 2 + d / m * y2)
    edge = float(rectangular_bulk_edge(d / m)) ** 2  # Marchenko-Pastur edge of X^T X / M
    spike = kappa * (1 + (d / m) / (kappa - 1)) if kappa > 1 else 0.0
    cov = var_d * float(rectangular_bulk_edge(m / d)) ** 2 * y2 * max(edge, spike) / m
    rows = float(rectangular_bulk_edge(d / n))  # ||Xi|| / sqrt(N), Xi N x D standard
    delta = math.sqrt(2 * math.log(n)) * rows * math.sqrt(cov)
    predicted = math.sqrt(var_d * y2 / m) * rows / theta
    bound = delta / (theta - delta) if theta > delta else math.inf
    return bound, predicted, theta


def rank_one_tolerance(cfg: PhaseConfig) -> float:
    """The rank-one claim's largest ``s2/s1``: :data:`RANK_TYPICAL_FACTOR` times the typical
    size of :func:`rank_one_ratio_bound` (what the figure draws as the claim's line)."""
    return RANK_TYPICAL_FACTOR * rank_one_ratio_bound(cfg)[1]


def step1_rank_ratio(df: pd.DataFrame) -> np.ndarray:
    """``s2/s1`` of the step-1 update ``W1 - W0`` in each row (empty without the columns,
    a table written before they were recorded)."""
    if not {"s1_dW1", "s2_dW1"} <= set(df.columns):
        return np.zeros(0)
    return (df["s2_dW1"] / df["s1_dW1"]).to_numpy(dtype=np.float64)


def step1_spike_detectable(cfg: PhaseConfig, alpha1: float) -> tuple[float, float]:
    """``(theta1, threshold)``: the step-1 spike strength ``lr1 theta`` in units of the bulk
    noise of ``W0`` (``G0 / sqrt(D)``) and the rectangular BBP threshold ``(N/D)^(1/4)``
    below which ``W1`` has no outlier (:func:`~specdyn.theory.rmt.rectangular_spike`;
    ``theta`` of :func:`rank_one_ratio_bound`)."""
    theta = rank_one_ratio_bound(cfg)[2]
    th1 = float(cfg.N) ** alpha1 * theta
    return th1, float(rectangular_spike(th1, cfg.N / cfg.D).threshold)
