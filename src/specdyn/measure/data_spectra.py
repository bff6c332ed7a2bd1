"""Fitted exponents of a data set's spectra: ``alpha``, ``alpha + beta``, ``beta``, intervals.

The theory of :mod:`specdyn.data.empirical` uses a data set's own ``lambda_k`` and
``mu_k``; these fits are reported beside it, never fed to it. Both fits are
:func:`specdyn.measure.exponents.fit_power_law` (weights ``1/k``, wild-bootstrap
interval) over the same window of modes:

- ``alpha``: ``lambda_k ~ k^-alpha`` (Eq. 6);
- ``alpha + beta``: ``lambda_k mu_k ~ k^-(alpha+beta)``, the exponent of the
  learned component in Region IIIa (Eq. 26), fitted directly because ``mu_k`` of
  real data is noisy and not monotone in ``k`` while ``lambda_k mu_k`` nearly is;
- ``beta``: their difference, with the conservative interval
  ``[ab_low - a_high, ab_high - a_low]``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from specdyn.measure.exponents import PowerLawFit, fit_power_law

__all__ = ["DataExponents", "data_exponents"]


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
    """Fit ``alpha`` on ``lam`` and ``alpha + beta`` on ``lam * mu`` over modes ``kmin..kmax``.

    Parameters
    ----------
    lam, mu
        ``lambda_k`` (decreasing) and ``mu_k`` per mode, the same length.
    kmin, kmax
        The window of modes (1-based, inclusive).
    seed
        Seed of the bootstrap intervals.
    """
    lam_a = np.asarray(lam, dtype=np.float64)
    mu_a = np.asarray(mu, dtype=np.float64)
    if lam_a.shape != mu_a.shape or lam_a.ndim != 1:
        raise ValueError(f"lam and mu must be 1-D of the same length, got {lam_a.shape} "
                         f"and {mu_a.shape}")
    a = fit_power_law(lam_a, kmin, kmax, seed=seed)
    ab = fit_power_law(lam_a * mu_a, kmin, kmax, seed=seed)
    return DataExponents(a, ab, ab.exponent - a.exponent, ab.ci_low - a.ci_high,
                         ab.ci_high - a.ci_low)
