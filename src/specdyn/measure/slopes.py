"""Log-log line fits: the one line fit, slopes against a size, rank exponents row by row.

Conventions
-----------
Log-log slopes
    ``loglog_fit(x, y)`` is the one least-squares line of ``log y`` on
    ``log x`` (slope and intercept, unweighted: every point counts the same),
    for a quantity against a size (error against width ``N``, distance
    against samples ``M``); the rank fits (here and in
    :mod:`specdyn.measure.exponents`) are the same line fit, weighted.
Rank exponents of many spectra
    ``fit_exponents(spectra, kmin, kmax)`` fits every row of a stack of spectra
    over one window of ranks (the line fit of :func:`specdyn.measure.fit_power_law`
    without its bootstrap); ``two_point_exponent`` is the chord through two
    ranks. Rank exponent ``a`` in ``lambda_k ~ C k^-a``, as in
    :mod:`specdyn.measure.exponents`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from specdyn import _validate as v

__all__ = ["fit_exponents", "loglog_fit", "two_point_exponent"]


def _spectrum(eigs: ArrayLike) -> np.ndarray:
    """Positive eigenvalues, decreasing, validated: what every rank fit reads."""
    arr = np.asarray(eigs)
    if arr.ndim != 1:
        raise ValueError(f"eigs must be a 1-D array of eigenvalues, got shape {arr.shape}")
    arr = v.real_array("eigs", arr)
    if np.any(arr < 0):
        raise ValueError(f"eigs must be >= 0 (eigenvalues of a PSD matrix), got {arr.min():g}")
    lam = np.sort(arr)[::-1]
    lam = lam[lam > 0]
    if lam.size < 3:
        raise ValueError(f"eigs must hold at least 3 positive eigenvalues, got {lam.size}")
    return lam


def _line(x: np.ndarray, y: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
    """Least-squares line ``y = c + s x``: ``[s, c]`` (per column of a 2-D ``y``).

    The one line fit of this module; ``w`` multiplies the unsquared residuals
    (``numpy.polyfit``'s convention).
    """
    return np.polyfit(x, y, 1, w=w)


def loglog_fit(x: ArrayLike, y: ArrayLike) -> tuple[float, float]:
    """Slope and intercept of the least-squares line ``log y = c + s log x`` (unweighted).

    The one log-log slope estimator for a quantity against a size, e.g. an
    error that should fall as ``N^-1``: ``loglog_fit(Ns, errors)[0]`` is ``s``.

    Parameters
    ----------
    x, y
        Positive, finite, 1-D, the same length, at least 2 points.

    Returns
    -------
    (float, float)
        ``(s, c)``; the fitted curve is ``y = exp(c) x^s``.
    """
    xa = v.real_array("x", x)
    ya = v.real_array("y", y)
    if xa.ndim != 1 or ya.shape != xa.shape or xa.size < 2:
        raise ValueError(f"x and y must be 1-D of the same length >= 2, got shapes "
                         f"{xa.shape} and {ya.shape}")
    for name, arr in (("x", xa), ("y", ya)):
        if not np.all(arr > 0):
            raise ValueError(f"{name} must be > 0 (log-log fit), got {arr.min():g}")
    s, c = _line(np.log(xa), np.log(ya))
    return float(s), float(c)


def _wls(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[float, float, float]:
    """Weighted LS line ``y = c + s x`` (``w`` weighs squared residuals): slope, intercept, R^2."""
    s, c = _line(x, y, np.sqrt(w))  # polyfit weights the unsquared residuals
    my = (w * y).sum() / w.sum()
    ss_tot = (w * (y - my) ** 2).sum()
    ss_res = (w * (y - (c + s * x)) ** 2).sum()
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0
    return float(s), float(c), float(r2)


def fit_exponents(spectra: ArrayLike, kmin: int, kmax: int, *,
                  weights: str = "log-rank", sort: bool = True) -> np.ndarray:
    """Rank exponent of every row of ``spectra`` over the ranks ``kmin..kmax``.

    The row-wise estimator behind :func:`fit_power_law` (without the bootstrap):
    least squares of ``log lambda_k`` on ``log k``, each row sorted decreasing
    (unless ``sort=False``).

    Parameters
    ----------
    spectra
        ``(..., K)`` eigenvalues, rank along the last axis (any order); the
        window must hold positive values.
    kmin, kmax
        Window of ranks (1-based, inclusive), at least 3 ranks, ``kmax <= K``.
    weights
        ``"log-rank"`` (``1/k``, every decade of rank counts the same; as
        :func:`fit_power_law`) or ``"uniform"``.
    sort
        ``True``: each row sorted decreasing first (spectra by rank); ``False``:
        the values in the order given (per-mode quantities, mode order).

    Returns
    -------
    numpy.ndarray
        ``(...)`` exponents ``a`` in ``lambda_k ~ k^-a``.
    """
    arr = v.real_array("spectra", spectra)
    if arr.ndim < 1:
        raise ValueError("spectra must have the rank along its last axis, got a scalar")
    K = arr.shape[-1]
    k_lo = v.positive_int("kmin", kmin)
    k_hi = v.positive_int("kmax", kmax, minimum=k_lo + 2)  # 3 ranks, as fit_power_law
    if k_hi > K:
        raise ValueError(f"kmax must be <= {K} (the number of ranks), got {k_hi}")
    v.choice("weights", weights, ("log-rank", "uniform"))
    lam = (-np.sort(-arr, axis=-1) if sort else arr)[..., k_lo - 1:k_hi]
    if not np.all(lam > 0):
        raise ValueError(f"spectra must be > 0 on the ranks {k_lo}..{k_hi} (log-log fit)")
    k = np.arange(k_lo, k_hi + 1, dtype=np.float64)
    w = 1.0 / np.sqrt(k) if weights == "log-rank" else None  # sqrt: polyfit's convention
    y = np.log(lam).reshape(-1, k.size).T
    slope = _line(np.log(k), y, w)[0]
    return -slope.reshape(arr.shape[:-1])


def two_point_exponent(spectra: ArrayLike, ranks: tuple[int, int] = (1, 2)) -> np.ndarray:
    """Rank exponent from two ranks: ``log(lambda_k1 / lambda_k2) / log(k2 / k1)``.

    The slope of the chord through two points of the log-log spectrum; with the
    default ``ranks = (1, 2)`` it is ``log(lambda_1 / lambda_2) / log 2``, the
    local exponent at ``k = 1`` that needs no window (so it applies to a
    theory's ``rho_k(t)`` and to a measured spectrum alike). Unlike
    :func:`local_exponent` (least squares over a window of ranks, one spectrum),
    it takes the two entries as given, **without sorting**: rank ``k`` is
    index ``k - 1`` of the last axis (a mode-indexed theory spectrum stays in
    mode order), and it works row-wise on a stack of spectra.

    Parameters
    ----------
    spectra
        ``(..., K)`` values, rank ``k`` at index ``k - 1``; the two used
        entries must be > 0.
    ranks
        Two distinct ranks ``(k1, k2)``, each in ``1..K``.

    Returns
    -------
    numpy.ndarray
        ``(...)`` exponents ``a``: exactly ``a`` for ``lambda_k = C k^-a``.
    """
    arr = np.asarray(spectra)
    if arr.ndim < 1:
        raise ValueError("spectra must have the rank along its last axis, got a scalar")
    if len(ranks) != 2:
        raise ValueError(f"ranks must be two ranks (k1, k2), got {ranks!r}")
    k1, k2 = (v.positive_int("ranks", k) for k in ranks)
    if k1 == k2 or max(k1, k2) > arr.shape[-1]:
        raise ValueError(f"ranks must be two distinct ranks in 1..{arr.shape[-1]} (the last "
                         f"axis of spectra), got {ranks!r}")
    a = v.real_array("spectra", arr[..., k1 - 1], positive=True)
    b = v.real_array("spectra", arr[..., k2 - 1], positive=True)
    return np.log(a / b) / np.log(k2 / k1)
