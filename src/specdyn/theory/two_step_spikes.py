"""The spikes of the weights after two GD steps, at finite width (fresh second batch).

Second related abstract: after two large GD steps (``lr_k = N^alpha_k``) the first-layer
weights are a spiked random matrix whose ``k``-th step-2 spike, along ``a^(k+1)``, grows
like ``N^(alpha2 - k (1/2 - alpha1))`` (:mod:`specdyn.theory.two_step`). At the widths a
computer reaches those exponents are far from the whole story: the expansion parameter
of the second step, ``lr1 a_i ~ N^(alpha1 - 1/2)``, is 0.4-0.7 at ``alpha1`` near 1/2 and
``N = 10^3``, and the spikes' right vectors are far from orthogonal, so the strengths
along the (orthonormalised) powers of ``a`` are not the spikes' singular values. This
module resums both (own derivation, checked against the simulation of
:func:`specdyn.sim.gd_steps` in ``tests/theory/test_theory_two_step_spikes.py``).

The model is :mod:`specdyn.sim.two_step`'s: ``f(x) = N^(-1/2) a^T sigma(W x)``,
``a_i = g_i / sqrt(N)`` (``g_i`` standard), rows of ``W0`` ``N(0, I/D)``, batches of ``M``
standard Gaussian inputs, a single-index target ``y = sigma*(beta . x)``. Step 1 moves
row ``i`` by ``lr1 a_i (mu1 g1 + R_i)``, ``g1 = X1^T y / M`` (``mu1 = E sigma'``) and
``R_i`` a row of its own of squared norm ``rho^2 = (D/M) Var(sigma'(z)) E[y^2]``. On a
fresh input ``x`` the preactivation of row ``i`` after step 1 is therefore
``z + s_i (delta + xi)`` with ``s_i = lr1 a_i``, ``delta = mu1 g1 . x`` shared by all
rows and ``z``, ``xi`` independent Gaussians of variances 1 and ``rho^2``. Averaged
over the row's own randomness, the second step's gradient row is
``a_i (1/M) sum_m Phi(s_i, delta_m) r_m x_m`` with

    Phi(s, delta) = E_u sigma'(s delta + sqrt(1 + s^2 rho^2) u),

and the residual ``r = y - f1(delta)``, ``f1(delta) = E_g[g Psi(lr1 g / sqrt(N), delta)]``
(``Psi`` the same average of ``sigma``): nothing is expanded in ``s``. Projected on the
``j``-th orthonormalised power ``q_j`` of ``a`` (``q_j = p_j(g) / sqrt(N)``, ``p_j`` the
polynomials Gram-Schmidt-orthonormalised from ``g, g^2, ...`` under the Gaussian
measure, as :func:`specdyn.measure.weight_outliers.orthonormal_powers` does on the
sample), the update's low-rank part is ``lr2 v_j``,
``v_j = (1/M) sum_m psi_j(delta_m) r_m x_m`` with ``psi_j(delta) = E_g[p_j(g) g
Phi(lr1 g / sqrt(N), delta)]``. Its Gram matrix over ``j`` is
``lr2^2 (m_j . m_k + (D/M) E[psi_j psi_k r^2])``, ``m_j = E[psi_j r x]`` (a vector in the
plane of ``beta`` and ``g1``), plus the step-1 spike ``lr1 mu1 ||g1||`` along ``q_1``:
the square roots of its eigenvalues are the spikes' strengths ``theta`` in units of
``W0``'s noise (``W0 = G / sqrt(D)``, the rectangular model of
:func:`specdyn.theory.rmt.rectangular_spike` with ``c = N / D``). The bulk of ``W2`` is
``W0`` plus the fluctuating parts of both updates, of per-entry variance
``(noise^2 - 1) / D`` (:attr:`StepTwoSpikes.noise`).

Every expectation is Gauss-Hermite quadrature (float64); the cost does not depend on
``N``, so the theory reaches widths no simulation does.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.polynomial.hermite_e import hermegauss

from specdyn import _validate as v
from specdyn.theory.reference import _symmetric_eig
from specdyn.theory.rmt import rectangular_bulk_edge, rectangular_spike, wishart_edge_scaling

__all__ = ["StepTwoSpikes", "row_spread", "step_two_spikes"]

#: A numpy function of a float64 array, elementwise (``sigma``, ``sigma'``, the link).
Elementwise = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class StepTwoSpikes:
    """The spikes of ``W2`` (and of the update ``W2 - W1``) at one finite size.

    Attributes
    ----------
    theta
        ``(K,)`` the spikes' strengths, decreasing: singular values of the low-rank part
        of ``W2`` (the step-1 spike first), in units of ``W0``'s noise.
    rows
        ``(K,)`` norm of the low-rank part of ``W2 - W1`` along ``q_j`` (``a^(j+1)``
        orthonormalised): the ``strength_a<j+1>`` a simulation measures, without the bulk.
    bulk
        ``(K,)`` the norm the fluctuating part of ``W2 - W1`` adds along ``q_j``; a measured
        strength is about ``sqrt(rows^2 + bulk^2)`` (:attr:`measured_rows`).
    noise
        Noise level of ``W2``'s bulk in units of ``W0``'s (``sqrt`` of the per-entry
        variance times ``D``): 1 plus the two updates' fluctuations.
    ratio
        ``c = N / D``.
    N
        The width.
    """

    theta: np.ndarray
    rows: np.ndarray
    bulk: np.ndarray
    noise: float
    ratio: float
    N: int

    @property
    def measured_rows(self) -> np.ndarray:
        """``sqrt(rows^2 + bulk^2)``: what the projection of ``W2 - W1`` on ``q_j`` reads."""
        return np.sqrt(self.rows ** 2 + self.bulk ** 2)

    def locations(self, noise: float | None = None) -> np.ndarray:
        """``(K,)`` predicted singular values of ``W2``: each spike's rectangular-BBP location
        on a bulk of level ``noise`` (the theory's own by default); the bulk edge
        ``noise (1 + sqrt(c))`` where a spike does not separate."""
        sn = self.noise if noise is None else v.positive("noise", noise)
        return sn * np.asarray(rectangular_spike(self.theta / sn, self.ratio).singular_value,
                               dtype=np.float64)

    def edge_margin(self, sigmas: float = 3.0) -> float:
        """``sigmas`` Tracy-Widom scales of the top bulk singular value at this size, in the
        units of :meth:`locations` (the bulk's fluctuation: an outlier closer to the edge
        than this is not resolved)."""
        d = float(self.N) / self.ratio
        mu, sig = wishart_edge_scaling(float(self.N), d)  # largest eigenvalue of G^T G
        # s = sqrt(lambda / D): a change d(lambda) moves s by d(lambda) / (2 sqrt(lambda D))
        return sigmas * self.noise * float(sig) / (2.0 * math.sqrt(float(mu) * d))

    def resolved(self, sigmas: float = 3.0) -> np.ndarray:
        """``(K,)`` whether each spike's predicted outlier clears the bulk edge by
        :meth:`edge_margin` (``sigmas`` Tracy-Widom scales)."""
        edge = self.noise * float(rectangular_bulk_edge(self.ratio))
        return self.locations() > edge + self.edge_margin(sigmas)

    def step2_count(self, sigmas: float = 3.0) -> int:
        """Resolved spikes besides the step-1 one (the largest, along ``a``)."""
        return int(np.sum(self.resolved(sigmas)[1:]))


def row_spread(s: np.ndarray, rho2: float) -> np.ndarray:
    """The sd ``sqrt(1 + s^2 rho^2)`` of a row's preactivation on a fresh input after step 1,
    beyond its shared shift ``s delta``: ``W0``'s part (1) and the row's own step-1 part
    ``s xi`` (variance ``s^2 rho^2``), independent. Dropping the second is an 8 % error in
    the ``a^2`` strength at ``alpha1 = 0.44`` and ``N`` of 10^3."""
    return np.sqrt(1.0 + np.asarray(s, dtype=np.float64) ** 2 * rho2)


def _orthonormal_polynomials(K: int, n_quad: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Nodes ``g``, weights and the values ``(n, K)`` of ``p_1..p_K``: ``g, ..., g^K``
    Gram-Schmidt-orthonormalised under ``N(0, 1)`` (the population of
    ``orthonormal_powers``)."""
    g, w = hermegauss(n_quad)
    w = w / w.sum()
    P = np.stack([g ** (j + 1) for j in range(K)], axis=1)
    out = np.empty_like(P)
    for j in range(K):
        p = P[:, j].copy()
        for i in range(j):
            p -= np.sum(w * p * out[:, i]) * out[:, i]
        out[:, j] = p / math.sqrt(np.sum(w * p * p))
    return g, w, out


def _sample_polynomials(a: np.ndarray, K: int, N: int) -> tuple[np.ndarray, np.ndarray,
                                                                  np.ndarray]:
    """``g = sqrt(N) a``, equal weights ``1/N`` and the sample's orthonormalised powers
    ``sqrt(N) q_j`` (Gram-Schmidt of ``a, a^2, ...`` in order, as ``orthonormal_powers``)."""
    if a.shape != (N,):
        raise ValueError(f"a must have shape (N,) = ({N},), got {a.shape}")
    g = math.sqrt(N) * a
    base = g / np.max(np.abs(g))  # the same directions, no overflow
    q, _ = np.linalg.qr(np.stack([base ** (j + 1) for j in range(K)], axis=1))
    return g, np.full(N, 1.0 / N), math.sqrt(N) * q


@v.constrained(N=v.SIZE, D=v.SIZE, M=v.SIZE, alpha1=v.Real(0.0, 0.5, hi_open=True),
               alpha2=v.Real(0.0, 0.5, hi_open=True), K=v.Int(2, 8), n_quad=v.Int(20, 400))
def step_two_spikes(N: int, D: int, M: int, alpha1: float, alpha2: float, *,
                    sigma: Elementwise, dsigma: Elementwise, link: Elementwise, K: int = 4,
                    n_quad: int = 60, a: np.ndarray | None = None) -> StepTwoSpikes:
    """The spikes of ``W2`` after steps ``N^alpha1``, ``N^alpha2`` with a fresh second batch.

    Parameters
    ----------
    N, D, M
        Width, input dimension, samples per batch.
    alpha1, alpha2
        Step-size exponents in ``[0, 1/2)``.
    sigma, dsigma
        The activation and its derivative, numpy functions (elementwise).
    link
        The target's link ``sigma*`` (a single-index target of unit direction).
    K
        Powers of ``a`` kept (``q_1..q_K``); the spikes beyond fall off like
        ``N^(-(1/2 - alpha1))`` each.
    n_quad
        Gauss-Hermite nodes per dimension.
    a
        Optional ``(N,)`` second-layer weights of one draw: the averages over ``g`` become
        averages over its entries ``sqrt(N) a_i``, the polynomials the sample's
        orthonormalised powers (the theory given ``a``; its sample moments, the fourth
        above all, move the ``a^2`` strength by several percent at ``N`` of 10^3).
        ``None``: the population (``a_i`` i.i.d. ``N(0, 1/N)``).

    Returns
    -------
    StepTwoSpikes
        The strengths (module docstring), finite for every valid input.
    """
    lr1, lr2 = float(N) ** alpha1, float(N) ** alpha2
    z, wz = hermegauss(n_quad)
    wz = wz / wz.sum()

    def mean(fn: Elementwise) -> float:
        return float(np.sum(wz * fn(z)))

    mu1 = mean(dsigma)
    y2 = mean(lambda t: link(t) ** 2)
    c1 = mean(lambda t: t * link(t))
    # g1 = X1^T y / M: mean c1 beta, and (D - 1) noise coordinates of variance E[y^2] / M
    # (the beta coordinate's variance is E[z^2 y^2] - c1^2, over M)
    g1_norm = math.sqrt(c1 ** 2 + ((D - 1) * y2 + mean(lambda t: t * t * link(t) ** 2)
                                   - c1 ** 2) / M)
    cos_b = c1 / g1_norm  # g1's direction against beta
    rho2 = D / M * (mean(lambda t: dsigma(t) ** 2) - mu1 ** 2) * y2
    if a is None:
        g, wg, p = _orthonormal_polynomials(K, 2 * n_quad)
    else:
        g, wg, p = _sample_polynomials(v.real_array("a", a), K, int(N))
    s = lr1 * g / math.sqrt(N)  # (ng,) the step-1 shift per unit of delta, row by row
    # a fresh input in the plane of g1 and beta: u1 along g1 (delta = mu1 |g1| u1), u2
    # completing beta = cos_b u1 + sin_b u2
    u1, u2 = np.meshgrid(z, z, indexing="ij")
    w12 = np.outer(wz, wz)
    zstar = cos_b * u1 + math.sqrt(max(1.0 - cos_b ** 2, 0.0)) * u2
    delta = mu1 * g1_norm * z  # (nq,) on the u1 nodes
    spread = row_spread(s, rho2)  # (ng,)
    arg = s[:, None, None] * delta[None, :, None] + spread[:, None, None] * z[None, None, :]
    phi = np.tensordot(dsigma(arg), wz, axes=([2], [0]))  # (ng, nq): Phi(s_g, delta_u1)
    phi2 = np.tensordot(dsigma(arg) ** 2, wz, axes=([2], [0]))
    psi_f = np.tensordot(sigma(arg), wz, axes=([2], [0]))
    f1 = (wg * g) @ psi_f  # (nq,) the network after step 1, as a function of u1
    r = link(zstar) - f1[:, None]  # (nq, nq) residual on the second batch
    psi = (p * (wg * g)[:, None]).T @ phi  # (K, nq): psi_j(delta_u1)
    pr = psi[:, :, None] * r[None]  # (K, nq, nq)
    m = np.stack([np.einsum("ab,jab->j", w12, pr * u1[None]),
                  np.einsum("ab,jab->j", w12, pr * u2[None])], axis=1)  # (K, 2)
    noise_jk = D / M * np.einsum("ab,jab,kab->jk", w12, pr, pr)
    step2 = lr2 ** 2 * (m @ m.T + noise_jk)
    gram = step2.copy()
    s1 = np.array([lr1 * mu1 * g1_norm, 0.0])  # the step-1 row lr1 mu1 g1, along u1
    gram[0, 0] += s1 @ s1 + 2.0 * lr2 * (s1 @ m[0])
    gram[0, 1:] += lr2 * (m[1:] @ s1)
    gram[1:, 0] += lr2 * (m[1:] @ s1)
    theta = np.sqrt(np.clip(_symmetric_eig(gram)[0], 0.0, None))  # decreasing
    rows = np.sqrt(np.clip(np.diag(step2), 0.0, None))
    # the fluctuating part: row i of W2 - W1 is lr2 a_i times a vector of squared norm
    # (D/M) E[(sigma' - Phi)^2 r^2]; its projection on q_j weighs row i by q_ji a_i
    var = (phi2 - phi ** 2)[:, :, None] * r[None] ** 2  # (ng, nq, nq)
    per_row = np.einsum("ab,gab->g", w12, var)  # (ng,)
    bulk = lr2 * np.sqrt(D / M / N * ((p ** 2 * (wg * g * g)[:, None]).T @ per_row))
    noise2 = 1.0 + lr1 ** 2 * rho2 / N + lr2 ** 2 * D / (N * M) * float((wg * g * g) @ per_row)
    return StepTwoSpikes(theta=theta, rows=rows, bulk=bulk, noise=math.sqrt(noise2),
                         ratio=N / D, N=int(N))
