"""Continuous broken power laws of a spectrum: breakpoints and the exponent of each segment.

The fit is weighted (``1/k``) least squares of ``log lambda_k`` on ``log k``, as every
rank fit of :mod:`specdyn.measure.exponents`, by a continuous piecewise-linear function.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize

from specdyn import _validate as v
from specdyn.measure.eigen import rank_tolerance
from specdyn.measure.slopes import _spectrum

__all__ = ["BrokenPowerLawFit", "fit_broken_power_law"]


@dataclass(frozen=True)
class BrokenPowerLawFit:
    """Continuous broken power law in log-log coordinates.

    Attributes
    ----------
    breakpoints
        Ranks where the exponent changes (increasing, real-valued).
    exponents
        Rank exponent of each of the ``len(breakpoints) + 1`` segments, from
        low to high rank.
    amplitude
        ``lambda`` of the fitted curve at ``k = 1``.
    r2
        Weighted coefficient of determination.
    kmin, kmax
        Ranks used.
    """

    breakpoints: np.ndarray
    exponents: np.ndarray
    amplitude: float
    r2: float
    kmin: int
    kmax: int

    def predict(self, k: ArrayLike) -> np.ndarray:
        """The fitted ``lambda_k`` at ranks ``k``."""
        x = np.log(v.real_array("k", k, lo=1e-300))
        b = np.log(self.breakpoints)
        slopes = -self.exponents
        y = np.log(self.amplitude) + slopes[0] * x
        for j, bj in enumerate(b):
            y = y + (slopes[j + 1] - slopes[j]) * np.maximum(x - bj, 0.0)
        return np.asarray(np.exp(y))



def _hinge_fit(x: np.ndarray, y: np.ndarray, w: np.ndarray, b: np.ndarray
               ) -> tuple[float, np.ndarray]:
    """Weighted LS of a continuous piecewise-linear function with knots ``b``."""
    cols = [np.ones_like(x), x] + [np.maximum(x - bj, 0.0) for bj in b]
    A = np.stack(cols, axis=1)
    sw = np.sqrt(w)
    coef, *_ = np.linalg.lstsq(A * sw[:, None], y * sw, rcond=None)
    res = float(np.sum(w * (y - A @ coef) ** 2))
    return res, coef


def _log_bins(x: np.ndarray, y: np.ndarray, w: np.ndarray, nbins: int = 200
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weighted means of (x, y) in ``nbins`` equal bins of ``x`` (for the coarse grid search)."""
    if x.size <= nbins:
        return x, y, w
    idx = np.minimum(((x - x[0]) / (x[-1] - x[0]) * nbins).astype(np.int64), nbins - 1)
    W = np.bincount(idx, weights=w, minlength=nbins)
    keep = W > 0
    X = np.bincount(idx, weights=w * x, minlength=nbins)[keep] / W[keep]
    Y = np.bincount(idx, weights=w * y, minlength=nbins)[keep] / W[keep]
    return X, Y, W[keep]


def fit_broken_power_law(eigs: ArrayLike, n_breaks: int, *, kmin: int = 1,
                         kmax: int | None = None, min_points: int = 3) -> BrokenPowerLawFit:
    """Fit a continuous broken power law with ``n_breaks`` breakpoints.

    Weighted (``1/k``) least squares of ``log lambda_k`` on ``log k`` by a
    continuous piecewise-linear function: a grid search of the breakpoints
    over up to 40 log-spaced ranks (at most ~3000 combinations, on
    log-binned points), refined by Nelder-Mead on all points. Each segment must hold
    at least ``min_points`` eigenvalues.

    Parameters
    ----------
    eigs
        Eigenvalues (any order).
    n_breaks
        Number of breakpoints (>= 1; the core paper's four regimes need 3).
    kmin, kmax
        Ranks used (default: every eigenvalue above ``rank_tolerance``).
    min_points
        Minimum eigenvalues per segment (>= 3).
    """
    lam = _spectrum(eigs)
    nbk = v.positive_int("n_breaks", n_breaks)
    mp = v.positive_int("min_points", min_points, minimum=3)
    k_lo = v.positive_int("kmin", kmin)
    k_eff = max(3, int(np.sum(lam > rank_tolerance(lam[0], lam.size))))
    k_hi = k_eff if kmax is None else v.positive_int("kmax", kmax)
    if k_hi > lam.size:
        raise ValueError(f"kmax must be <= {lam.size}, got {k_hi}")
    if k_hi - k_lo + 1 < mp * (nbk + 1):
        raise ValueError(f"n_breaks={nbk} needs at least {mp * (nbk + 1)} eigenvalues in "
                         f"kmin..kmax, got {k_hi - k_lo + 1}")
    k = np.arange(k_lo, k_hi + 1, dtype=np.float64)
    x, y, w = np.log(k), np.log(lam[k_lo - 1:k_hi]), 1.0 / k

    def feasible(b: np.ndarray) -> bool:
        edges = np.concatenate([[x[0] - 1e-12], np.sort(b), [x[-1] + 1e-12]])
        counts = np.histogram(x, bins=edges)[0]
        return bool(np.all(counts >= mp)) and bool(np.all(np.diff(edges) > 0))

    # Interior grid of G points with at most ~3000 combinations to try.
    G = 40
    while G > nbk + 2 and math.comb(G, nbk) > 3000:
        G -= 1
    grid = np.linspace(x[0], x[-1], G + 2)[1:-1]
    xg, yg, wg = _log_bins(x, y, w)  # coarse search on binned points, refined on all
    best: tuple[float, np.ndarray] | None = None
    for combo in itertools.combinations(grid, nbk):
        b = np.array(combo)
        if not feasible(b):
            continue
        res = _hinge_fit(xg, yg, wg, b)[0]
        if best is None or res < best[0]:
            best = (res, b)
    if best is None:
        raise ValueError(f"n_breaks={nbk}: no breakpoints leave {mp} eigenvalues per segment")

    def objective(b: np.ndarray) -> float:
        bs = np.sort(b)
        return _hinge_fit(x, y, w, bs)[0] if feasible(bs) else np.inf

    opt = optimize.minimize(objective, best[1], method="Nelder-Mead",
                            options={"xatol": 1e-6, "fatol": 1e-14, "maxiter": 2000})
    start_res = objective(best[1])
    b = np.sort(opt.x) if opt.fun < start_res else best[1]
    res, coef = _hinge_fit(x, y, w, b)
    slopes = np.cumsum(coef[1:])
    ybar = np.sum(w * y) / np.sum(w)
    ss_tot = float(np.sum(w * (y - ybar) ** 2))
    r2 = 1.0 - res / ss_tot if ss_tot > 0 else 1.0
    return BrokenPowerLawFit(breakpoints=np.exp(b), exponents=-slopes,
                             amplitude=float(np.exp(coef[0])), r2=float(r2),
                             kmin=k_lo, kmax=k_hi)
