"""The Marchenko-Pastur bulk of a spectrum: its noise variance, edges and goodness of fit.

Conventions
-----------
``eigs`` are eigenvalues of a sample covariance ``F^T F / n`` (``n`` samples
or degrees of freedom, ``p`` features, ``ratio = p / n``), e.g. the output of
``covariance_spectrum`` or of ``weight_spectrum(W, normalize="rows")`` (then
``n`` is the number of rows of ``W``). Only the ``min(n, p)`` largest
eigenvalues carry information; when ``p > n`` the zeros are ignored.

The sizes are taken from ``n_samples`` when given; otherwise from the number of
eigenvalues: ``p = len(eigs)`` when ``ratio <= 1`` and ``n = len(eigs)`` when
``ratio > 1``. For a centred covariance pass ``n_samples = n - 1`` (the
degrees of freedom); the overall normalisation does not matter because the
noise variance is fitted.

Noise variance (Kritchman & Nadler 2008): under "exactly ``k`` spikes" the
trace of the eigenvalues below the ``k`` largest, over ``p - k``, corrected for
the bulk mass the ``k`` spikes took (BBP), solved as a fixed point
(``_sigma2``); :func:`fit_mp_bulk` chooses ``k`` itself, robust to outliers, and
:func:`specdyn.measure.find_outliers` tests each candidate with it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from specdyn import _validate as v
from specdyn.measure.eigen import rank_tolerance
from specdyn.theory import rmt

__all__ = ["MPFit", "fit_mp_bulk"]


@dataclass(frozen=True)
class MPFit:
    """Marchenko-Pastur fit of a spectrum's bulk.

    Attributes
    ----------
    sigma2
        Fitted noise (entry) variance.
    ratio
        The aspect ratio ``p / n`` used.
    lo, hi
        Bulk edges ``sigma2 (1 -+ sqrt(ratio))**2``.
    n_excluded
        Number of top eigenvalues treated as outliers in the fit.
    ks_distance
        Kolmogorov-Smirnov distance between the empirical distribution of the
        bulk eigenvalues and the fitted Marchenko-Pastur law (a goodness of
        fit; below ``1/sqrt(min(n, p))`` for pure noise, whose eigenvalues
        are more regular than independent draws).
    cap_reached
        The automatic choice wanted to exclude more than ``min(n, p) // 2``
        eigenvalues and was capped there: the "bulk" is the lower half of
        the spectrum at most, and most of the spectrum is above the edge.
    n_bulk
        Number of eigenvalues the KS distance was computed on.
    """

    sigma2: float
    ratio: float
    lo: float
    hi: float
    n_excluded: int
    ks_distance: float
    cap_reached: bool = False
    n_bulk: int = 0


def _as_eigs(eigs: ArrayLike) -> np.ndarray:
    arr = np.asarray(eigs)
    if arr.ndim != 1:
        raise ValueError(f"eigs must be a 1-D array of eigenvalues, got shape {arr.shape}")
    arr = v.real_array("eigs", arr)
    if arr.size < 3:
        raise ValueError(f"eigs must hold at least 3 eigenvalues, got {arr.size}")
    return np.sort(arr)[::-1]


def _sizes(m: int, ratio: float, n_samples: float | None) -> tuple[float, float]:
    if n_samples is not None:
        n = v.positive("n_samples", n_samples)
        return n, ratio * n
    if ratio <= 1:
        return m / ratio, float(m)
    return float(m), ratio * m


def _canonical(eigs: np.ndarray, ratio: float, n: float, p: float
               ) -> tuple[np.ndarray, float, float, float]:
    """Keep the ``min(n, p)`` informative eigenvalues and map ``p > n`` to ``p < n``.

    For ``p > n`` the nonzero eigenvalues of ``F^T F / n`` are ``ratio`` times
    those of ``F F^T / p``, a Marchenko-Pastur matrix with ratio ``n / p``.
    Returns (eigenvalues, ratio, samples, features) in the frame with ratio <= 1;
    the eigenvalues are to be multiplied by the returned scale to go back.
    """
    m = int(round(min(n, p)))
    if m < 3:
        raise ValueError(f"need min(n_samples, n_features) >= 3, got n={n:g}, p={p:g}")
    e = eigs[:m]
    tol = rank_tolerance(float(e[0]), (n, p))
    zeros = int(np.sum(e <= tol))
    # At a hard edge (the bulk's lower edge below the tolerance: a square matrix) the smallest
    # eigenvalue is O(sigma2 / m^2) and rounds to zero by chance when spikes set lambda_1;
    # eigenvalues repel there, so two such values still mean a rank-deficient matrix.
    if zeros > 1 or (zeros == 1
                     and float(rmt.mp_edges(ratio, float(np.median(e)))[0]) > tol):
        raise ValueError(
            f"eigs: {zeros} of the {m} informative eigenvalues (min(n, p) with n={n:g}, "
            f"p={p:g}) are numerically zero (at most lambda_1 * max(n, p) * eps), so the "
            "matrix is rank deficient and no Marchenko-Pastur bulk applies; check ratio "
            "and n_samples")
    if ratio > 1:
        return e / ratio, 1.0 / ratio, p, n
    return e, ratio, n, p


@functools.lru_cache(maxsize=256)
def _mp_median(ratio: float) -> float:
    return float(rmt.mp_quantile(0.5, ratio))


def _sigma2(e: np.ndarray, ratio: float, p: float, ks: np.ndarray) -> np.ndarray:
    """Noise variance under "exactly ``k`` spikes" for each ``k`` of ``ks`` (Kritchman-Nadler).

    ``e``: the nonzero eigenvalues of ``F^T F / n``, decreasing (caller's frame).
    Under pure noise ``sum(e) / p`` is unbiased. With spikes, each outlier
    ``l_j = sigma2 (1 + theta_j)(1 + ratio/theta_j)`` carries
    ``sigma2 (ratio + ratio/theta_j)`` more than its population share
    ``sigma2 (1 + theta_j)``, taken from the bulk, so
    ``sum_{j>k} l_j ~= sigma2 (p - k - ratio sum_{j<=k} (1 + 1/theta_j))``;
    solved by fixed-point iteration (at most 8 sweeps, fewer once every row is
    exactly stationary) with ``theta_j`` from the BBP inverse.

    The one fixed point of this module: ``fit_mp_bulk`` asks for one ``k`` at a
    time (``O(k)`` a sweep), ``find_outliers`` for ``k = 0..K`` at once. Row ``k``
    depends on no other row and its sum over ``j < k`` is sequential
    (``cumsum``), so a ``k`` gives the same bits whichever ``ks`` it comes with.
    """
    ks = np.asarray(ks, dtype=np.int64)
    # rest[k] = sum_{j >= k} e_j, summed from the smallest (as the trace of a bulk)
    tail = np.concatenate([np.cumsum(e[::-1])[::-1], [0.0]])
    rest = tail[ks]
    s2 = rest / (p - ks)
    width = int(ks.max(initial=0))
    if width == 0:
        return s2
    top = e[:width]
    rows = np.flatnonzero(ks > 0)
    last = ks[rows] - 1
    for _ in range(8):
        # at or inside the edge a spike is at most sqrt(ratio) strong: use that bound
        th = rmt.spike_strength_from_eigenvalue(top[None, :] / s2[rows, None], ratio,
                                                check=False)
        th[np.isnan(th)] = np.sqrt(ratio)
        corr = ratio * np.cumsum(1.0 + 1.0 / th, axis=1)[np.arange(rows.size), last]
        kr = ks[rows]
        new = rest[rows] / np.maximum(p - kr - corr, 0.5 * (p - kr))
        if (new == s2[rows]).all():  # exactly stationary: further sweeps change nothing
            break
        s2[rows] = new
    return s2


def _sigma2_given_k(e: np.ndarray, ratio: float, p: float, k: int) -> float:
    """``_sigma2`` for one ``k`` (the bulk fit's loop)."""
    return float(_sigma2(e, ratio, p, np.array([k]))[0])


def fit_mp_bulk(eigs: ArrayLike, ratio: float, *, n_excluded: int | None = None,
                n_samples: float | None = None) -> MPFit:
    """Fit a Marchenko-Pastur bulk to a spectrum, robust to outliers.

    Parameters
    ----------
    eigs
        Eigenvalues of ``F^T F / n`` (any order), at least 3.
    ratio
        ``p / n`` in (0, inf).
    n_excluded
        Number of top eigenvalues to leave out. ``None`` chooses it: start
        from the median match (robust to up to half outliers), then iterate
        "exclude everything above the fitted edge, refit" until stable.
    n_samples
        Samples (degrees of freedom) if not implied by ``len(eigs)``; see the
        module docstring.

    Returns
    -------
    MPFit
        ``sigma2`` is the trace of the eigenvalues below the ``k`` excluded
        ones over ``p - k``, corrected for the bulk mass taken by the ``k``
        spikes (BBP); the KS distance is computed on those eigenvalues.
    """
    e = _as_eigs(eigs)
    g = v.in_range("ratio", ratio, 0.0, np.inf, lo_open=True, hi_open=True)
    n, p = _sizes(e.size, g, n_samples)
    ec, gc, _, _ = _canonical(e, g, n, p)
    m = ec.size
    e = e[:m]
    capped = False
    if n_excluded is not None:
        k = v.positive_int("n_excluded", n_excluded, minimum=0)
        if k > m - 3:
            raise ValueError(f"n_excluded must be <= {m - 3} (leave 3 eigenvalues), got {k}")
        s2 = _sigma2_given_k(e, g, p, k)
    else:
        seen: dict[int, float] = {}  # the iteration may revisit a k: solve each k once

        def s2_of(k: int) -> float:
            if k not in seen:
                seen[k] = _sigma2_given_k(e, g, p, k)
            return seen[k]

        med = float(np.median(ec))
        s2 = med / _mp_median(gc) if med > 0 else s2_of(0)
        k = -1
        cap = min(m // 2, m - 3)
        unit_edge = rmt.mp_edges(g)[1]  # the edge at sigma2 = 1 (s2 may be <= 0 here)
        for _ in range(50):
            edge = s2 * unit_edge
            above = int(np.sum(e > edge))
            capped = above > cap
            k_new = min(above, cap)
            s2 = s2_of(k_new)
            if k_new == k:
                break
            k = k_new
        s2 = s2_of(k)  # (the loop ends with k_new == k unless it ran out of sweeps)
    if not s2 > 0:
        raise ValueError("eigs: the bulk fit gave a non-positive noise variance "
                         "(are the eigenvalues all zero?)")
    lo, hi = rmt.mp_edges(g, s2)
    g_bulk = gc * (m - k) / m
    # Only the statistic is used: the asymptotic p-value spares scipy's exact one (most
    # of kstest's time at these sizes); the statistic is the same.
    from scipy.stats import kstest  # here: scipy.stats takes a second to import

    ks = float(kstest(ec[k:], lambda x: rmt.mp_cdf(x, g_bulk, s2), method="asymp").statistic)
    return MPFit(sigma2=s2, ratio=g, lo=float(lo), hi=float(hi), n_excluded=k, ks_distance=ks,
                 cap_reached=capped, n_bulk=int(m - k))
