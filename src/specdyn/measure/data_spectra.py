"""The one estimator of a data set's exponents and of a network's: mode order, one window.

The theory of :mod:`specdyn.data.empirical` uses a data set's own ``lambda_k`` and
``mu_k``; the exponents fitted here are reported beside it, never fed to it. Every
exponent, the data's and the network's, is the same fit: weighted least squares of
``log v_k`` on ``log k`` over the modes ``kmin..kmax`` in **mode order** (``k`` is the
input mode, never a rank after sorting), weights ``1/k``
(:func:`specdyn.measure.exponents.fit_power_law` with ``sort=False``):

- ``alpha``: ``lambda_k ~ k^-alpha`` (Eq. 6; ``lambda_k`` is decreasing, so mode
  order and rank order agree);
- ``alpha + beta``: ``lambda_k mu_k ~ k^-(alpha+beta)``, the exponent of the learned
  component in Region IIIa (Eq. 26), fitted directly because ``mu_k`` of real data is
  noisy and not monotone in ``k`` while ``lambda_k mu_k`` nearly is. Sorting
  ``lambda_k mu_k`` first (the estimator before) fits another quantity: on the
  digits it gave ``beta = -0.007`` against ``+0.037`` in mode order;
- ``beta``: their difference. This is the **per-mode** ``beta``, of ``mu_k``, the
  teacher's strength along each input mode: the one that drives the representation.
  The teacher's *own* spectrum (eigenvalues of ``Theta Theta^T``) has another exponent
  when the teacher is not aligned with the inputs (:func:`rank_exponent` of
  ``DataDecomposition.teacher_spectrum``);
- a network's exponent at a checkpoint: :func:`mode_exponents` of its per-mode
  ``rho_k(t) = lambda_k (U^T G^w U)_kk`` (the same weights and window, vectorised
  over checkpoints; no interval), and :func:`rank_exponent` of its eigenvalue
  spectrum (the eigenvalues of ``Sigma^1/2 G^w Sigma^1/2``, what a
  :class:`~specdyn.measure.SpectrumTracker` measures; rank order).

The intervals (95 %) are sampling intervals: the estimate plus or minus 1.96 standard
errors from the sampling covariance of the per-mode logs
(:func:`specdyn.data.sampling.log_spectra_covariance`, the delta method; measured
coverage in its docstring). Without that covariance, the interval is the fit's own
(a wild bootstrap of the residuals about the line), which measures how well the
window's values pin down the slope, not how they vary with the sample: it covered the
planted ``alpha`` of the documented example in 12 of 20 seeds.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike

from specdyn.measure.exponents import PowerLawFit, fit_exponents, fit_power_law

__all__ = ["Z95", "DataExponents", "data_exponents", "mode_exponents", "rank_exponent",
           "window_weights"]

#: The two-sided 95 % point of the standard normal distribution.
Z95 = 1.959963984540054


@dataclass(frozen=True)
class DataExponents:
    """``alpha``, ``alpha + beta`` (fits) and ``beta`` (their difference), with intervals."""

    alpha: PowerLawFit
    alpha_plus_beta: PowerLawFit
    beta: float
    beta_low: float
    beta_high: float

    def rows(self) -> list[dict[str, float | str]]:
        """Tidy rows ``quantity, value, ci_low, ci_high, kmin, kmax``."""
        a, ab = self.alpha, self.alpha_plus_beta
        return [
            {"quantity": "alpha", "value": a.exponent, "ci_low": a.ci_low,
             "ci_high": a.ci_high, "kmin": a.kmin, "kmax": a.kmax},
            {"quantity": "alpha_plus_beta", "value": ab.exponent, "ci_low": ab.ci_low,
             "ci_high": ab.ci_high, "kmin": ab.kmin, "kmax": ab.kmax},
            {"quantity": "beta", "value": self.beta, "ci_low": self.beta_low,
             "ci_high": self.beta_high, "kmin": a.kmin, "kmax": a.kmax},
        ]


def window_weights(kmin: int, kmax: int) -> np.ndarray:
    """``g`` with ``exponent = g . log(v[kmin-1:kmax])``: the weighted least-squares slope
    (weights ``1/k``) of this module's fits, negated, as a linear functional."""
    k = np.arange(kmin, kmax + 1, dtype=np.float64)
    x, w = np.log(k), 1.0 / k
    dx = x - (w * x).sum() / w.sum()
    return -(w * dx) / (w * dx * dx).sum()


def data_exponents(lam: ArrayLike, mu: ArrayLike, kmin: int, kmax: int, seed: int = 0,
                   cov: np.ndarray | None = None) -> DataExponents:
    """Fit ``alpha`` on ``lam`` and ``alpha + beta`` on ``lam * mu`` over modes
    ``kmin..kmax``, in mode order (the module docstring).

    Parameters
    ----------
    lam, mu
        ``lambda_k`` (decreasing) and ``mu_k`` per mode, the same length
        (``DataDecomposition.lam`` and ``.mu``).
    kmin, kmax
        The window of modes (1-based, inclusive, at least 3 modes).
    seed
        Seed of the bootstrap intervals (used only without ``cov``).
    cov
        The sampling covariance of ``(log lambda_k, log lambda_k mu_k)`` for ``k <= K``,
        ``K >= kmax`` (:func:`specdyn.data.sampling.log_spectra_covariance`): the
        intervals are then the estimate plus or minus ``Z95`` standard errors.
    """
    lam_a = np.asarray(lam, dtype=np.float64)
    mu_a = np.asarray(mu, dtype=np.float64)
    if lam_a.shape != mu_a.shape or lam_a.ndim != 1:
        raise ValueError(f"lam and mu must be 1-D of the same length, got {lam_a.shape} "
                         f"and {mu_a.shape}")
    n_boot = 200 if cov is None else 0
    a = fit_power_law(lam_a, kmin, kmax, seed=seed, sort=False, n_boot=n_boot)
    ab = fit_power_law(lam_a * mu_a, kmin, kmax, seed=seed, sort=False, n_boot=n_boot)
    if cov is None:
        return DataExponents(a, ab, ab.exponent - a.exponent, ab.ci_low - a.ci_high,
                             ab.ci_high - a.ci_low)
    K = cov.shape[0] // 2
    if cov.shape != (2 * K, 2 * K) or K < kmax:
        raise ValueError(f"cov must be (2K, 2K) with K >= kmax = {kmax}, got {cov.shape}")
    g = np.zeros(2 * K)
    g[kmin - 1:kmax] = window_weights(kmin, kmax)
    ga = g
    gab = np.roll(g, K)
    sd = [float(np.sqrt(max(q @ cov @ q, 0.0))) for q in (ga, gab, gab - ga)]
    b = ab.exponent - a.exponent
    return DataExponents(replace(a, ci_low=a.exponent - Z95 * sd[0],
                                 ci_high=a.exponent + Z95 * sd[0]),
                         replace(ab, ci_low=ab.exponent - Z95 * sd[1],
                                 ci_high=ab.exponent + Z95 * sd[1]),
                         b, b - Z95 * sd[2], b + Z95 * sd[2])


def rank_exponent(spectra: ArrayLike, kmin: int, kmax: int) -> np.ndarray:
    """The exponent of every row of ``spectra`` (``(..., K)``, eigenvalues by rank, any
    order) over the ranks ``kmin..kmax``: the estimator of :func:`mode_exponents` on the
    sorted values. NaN for a row with fewer than ``kmax`` positive finite values."""
    arr = -np.sort(-np.asarray(spectra, dtype=np.float64), axis=-1)
    return mode_exponents(arr, kmin, kmax)


def mode_exponents(values: ArrayLike, kmin: int, kmax: int) -> np.ndarray:
    """The exponent of every row of ``values`` (``(..., D)``, modes along the last axis) over
    the modes ``kmin..kmax`` in mode order: the estimator of :func:`data_exponents`
    (weights ``1/k``), without an interval. NaN for a row that is not positive and
    finite on the window (a wrong or diverged table), never an error.
    """
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim < 1 or arr.shape[-1] < kmax:
        return np.full(arr.shape[:-1] if arr.ndim else (), np.nan)
    win = arr[..., kmin - 1:kmax]
    ok = np.all(np.isfinite(win) & (win > 0), axis=-1)
    out = np.full(arr.shape[:-1], np.nan)
    if np.any(ok):
        out[ok] = fit_exponents(arr[ok], kmin, kmax, sort=False)
    return out
