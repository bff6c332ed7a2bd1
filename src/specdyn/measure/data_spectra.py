"""The one estimator of a data set's exponents and of a network's: mode order, one window.

The theory of :mod:`specdyn.data.empirical` uses a data set's own ``lambda_k`` and
``mu_k``; the exponents fitted here are reported beside it, never fed to it. Every
exponent, the data's and the network's, is the same fit: weighted least squares of
``log v_k`` on ``log k`` over the modes ``kmin..kmax`` in **mode order** (``k`` is the
input mode, never a rank after sorting), weights ``1/k``, wild-bootstrap interval
(:func:`specdyn.measure.exponents.fit_power_law` with ``sort=False``):

- ``alpha``: ``lambda_k ~ k^-alpha`` (Eq. 6; ``lambda_k`` is decreasing, so mode
  order and rank order agree);
- ``alpha + beta``: ``lambda_k mu_k ~ k^-(alpha+beta)``, the exponent of the learned
  component in Region IIIa (Eq. 26), fitted directly because ``mu_k`` of real data is
  noisy and not monotone in ``k`` while ``lambda_k mu_k`` nearly is. Sorting
  ``lambda_k mu_k`` first (the estimator before) fits another quantity: on the
  digits it gave ``beta = -0.007`` against ``+0.037`` in mode order;
- ``beta``: their difference, with the conservative interval
  ``[ab_low - a_high, ab_high - a_low]``;
- a network's exponent at a checkpoint: :func:`mode_exponents` of its per-mode
  ``rho_k(t) = lambda_k (U^T G^w U)_kk`` (the same weights and window, vectorised
  over checkpoints; no interval). Before, the data's ``alpha`` was a ``1/k``-weighted
  fit and the network's an unweighted slope: that mismatch made most of the
  "initial exponent = data alpha" gap (0.035 of -0.05 on the quick patches).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from specdyn.measure.exponents import PowerLawFit, fit_exponents, fit_power_law

__all__ = ["DataExponents", "data_exponents", "mode_exponents"]


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


def data_exponents(lam: ArrayLike, mu: ArrayLike, kmin: int, kmax: int,
                   seed: int = 0) -> DataExponents:
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
        Seed of the bootstrap intervals.
    """
    lam_a = np.asarray(lam, dtype=np.float64)
    mu_a = np.asarray(mu, dtype=np.float64)
    if lam_a.shape != mu_a.shape or lam_a.ndim != 1:
        raise ValueError(f"lam and mu must be 1-D of the same length, got {lam_a.shape} "
                         f"and {mu_a.shape}")
    a = fit_power_law(lam_a, kmin, kmax, seed=seed, sort=False)
    ab = fit_power_law(lam_a * mu_a, kmin, kmax, seed=seed, sort=False)
    return DataExponents(a, ab, ab.exponent - a.exponent, ab.ci_low - a.ci_high,
                         ab.ci_high - a.ci_low)


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
