"""Power-law exponents of spectra: local, global (with a bootstrap CI) and broken.

Conventions
-----------
Rank exponent
    ``a`` in ``lambda_k ~ C k^-a`` for eigenvalues in decreasing order,
    ``k = 1, 2, ...`` (the core paper's ``alpha``; alpha-ReQ's ``alpha``).
Density exponent
    ``1 + 1/a``: the exponent of the eigenvalue density
    ``rho(lambda) ~ lambda^-(1 + 1/a)`` implied by the rank law; this is what
    WeightWatcher and the ``powerlaw`` package call ``alpha``.
Fits
    Least squares of ``log lambda_k`` on ``log k`` with weights ``1/k``, so
    that every decade of rank counts the same (unweighted fits are dominated
    by the many high ranks). Zeros are left out, negative values are an
    error; automatic windows (and ``fit_broken_power_law``'s default range)
    also leave out numerical zeros (at most
    ``specdyn.measure.spectra.rank_tolerance``: round-off of a rank-deficient
    matrix).
Log-log slopes
    ``loglog_fit(x, y)`` is the one least-squares line of ``log y`` on
    ``log x`` (slope and intercept, unweighted: every point counts the same),
    for a quantity against a size (error against width ``N``, distance
    against samples ``M``); the rank fits above are the same line fit,
    weighted.
Mode order
    ``fit_power_law(values, kmin, kmax, sort=False)`` and ``fit_exponents(...,
    sort=False)`` fit the values in the order given (a per-mode quantity such as
    ``lambda_k mu_k`` or ``rho_k(t)`` indexed by the input mode ``k``), with the
    same weights and interval: the one estimator of a data set's exponents and
    of a network's per-mode ones (:mod:`specdyn.measure.data_spectra`). Sorting
    first would turn a quantity that is not monotone in ``k`` into another one.
Short windows
    A window spanning less than ``MIN_DECADES`` (one decade of rank) pins
    the exponent down poorly whatever its bootstrap says: ``fit_power_law``
    flags it (``short_window``) and widens the interval to cover the
    exponents of every window of one decade that contains it.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize

from specdyn import _validate as v
from specdyn.measure.spectra import rank_tolerance

__all__ = [
    "BrokenPowerLawFit",
    "LocalExponent",
    "PowerLawFit",
    "fit_broken_power_law",
    "fit_exponents",
    "fit_power_law",
    "local_exponent",
    "loglog_fit",
    "two_point_exponent",
]

# A window shorter than this (decades of rank) gets the "short window" flag.
MIN_DECADES = 1.0
#: The fewest ranks an automatic window spans (the plateau search's candidate ranges need
#: this many): ``fit_power_law`` chooses no window in a spectrum with fewer positive
#: eigenvalues (numerical zeros left out), and ``summarize_spectrum`` fits no exponent.
MIN_WINDOW_RANKS = 5


class LocalExponent(NamedTuple):
    """Local rank exponent ``alpha_eff(k) = -d log lambda_k / d log k``."""

    rank: np.ndarray
    exponent: np.ndarray


@dataclass(frozen=True)
class PowerLawFit:
    """Power-law fit ``lambda_k = amplitude * k^-exponent`` on ``kmin <= k <= kmax``.

    Attributes
    ----------
    exponent
        Rank exponent ``a``.
    ci_low, ci_high
        Percentile bootstrap interval for ``a`` (level ``ci_level``): wild
        bootstrap of the weighted residuals about the fitted line, with signs
        shared within blocks of 0.05 decades of rank. It measures how well the
        window's eigenvalues pin down the slope, not the sampling variability
        of the matrix or the bias of a finite sample (resample the data, e.g.
        the rows of ``F``, for that).
    r2
        Weighted coefficient of determination of the log-log fit.
    kmin, kmax
        The window (ranks, inclusive), given or chosen automatically.
    density_exponent
        ``1 + 1/a``, comparable with WeightWatcher's ``alpha``.
    amplitude
        ``C`` in ``lambda_k = C k^-a``.
    n_points
        Number of eigenvalues in the window.
    ci_level
        Level of the interval (0.95).
    short_window
        The window spans less than ``MIN_DECADES`` (one decade): the interval
        then also covers the exponents fitted on every one-decade window
        containing it (window-to-window spread), so it is wider.
    """

    exponent: float
    ci_low: float
    ci_high: float
    r2: float
    kmin: int
    kmax: int
    density_exponent: float
    amplitude: float
    n_points: int
    ci_level: float = 0.95
    short_window: bool = False

    @property
    def decades(self) -> float:
        """Span of the window in decades of rank, ``log10(kmax / kmin)``."""
        return float(np.log10(self.kmax / self.kmin))


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


def _spectrum(eigs: ArrayLike) -> np.ndarray:
    """Positive eigenvalues, decreasing; validated."""
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


def local_exponent(eigs: ArrayLike, window: float = 0.5) -> LocalExponent:
    """Local rank exponent from weighted least squares over sliding log-rank windows.

    At each rank ``k`` the slope of ``log lambda`` on ``log j`` is fitted over
    the ranks ``j`` with ``|log10 j - log10 k| <= window / 2`` (clipped to the
    spectrum), weights ``1/j``. Ranks whose window holds fewer than 3
    eigenvalues are left out.

    Parameters
    ----------
    eigs
        Eigenvalues (any order; sorted decreasing here).
    window
        Window width in decades of rank (> 0).

    Returns
    -------
    LocalExponent
        ``(rank, exponent)`` arrays; ``exponent = -slope``.
    """
    lam = _spectrum(eigs)
    win = v.positive("window", window)
    K = lam.size
    k = np.arange(1, K + 1, dtype=np.float64)
    x, y, w = np.log(k), np.log(lam), 1.0 / k
    r = 10.0 ** (win / 2)
    lo = np.clip(np.ceil(k / r - 1e-9).astype(int), 1, K)
    hi = np.clip(np.floor(k * r + 1e-9).astype(int), 1, K)
    count = hi - lo + 1
    ok = count >= 3
    if not ok.any():
        raise ValueError(f"window must cover at least 3 ranks somewhere; window={win:g} "
                         f"decades covers fewer for all {K} eigenvalues")
    # Prefix sums give every window's weighted moments in O(K); centre x for conditioning.
    xc = x - x.mean()
    yc = y - y.mean()
    P = [np.concatenate([[0.0], np.cumsum(a)]) for a in (w, w * xc, w * yc, w * xc * xc,
                                                           w * xc * yc)]
    S = [p[hi] - p[lo - 1] for p in P]
    sw, sx, sy, sxx, sxy = S
    var = sxx - sx * sx / sw
    cov = sxy - sx * sy / sw
    with np.errstate(invalid="ignore", divide="ignore"):
        slope = cov / var
    return LocalExponent(rank=k[ok].astype(np.int64), exponent=-slope[ok])


def _auto_window(lam: np.ndarray, tol: float, window: float) -> tuple[int, int]:
    """Longest range of ranks on which the local exponent is flat to within ``tol``.

    Candidates are ranges between points of a log-spaced rank grid (41 points)
    spanning at least half a decade (or half the spectrum's span if shorter)
    and 5 ranks. A range qualifies when its local exponents lie within
    ``tol * max(1, |mid|)`` of their mid-range value ``mid``; the longest (in
    decades) wins, ties going to the flatter. If none qualifies, the flattest
    range spanning a decade (or the whole spectrum if shorter) is used.
    """
    K = lam.size
    if K < 10 ** window:  # too few ranks for a local exponent anywhere: the whole spectrum
        return 1, K
    le = local_exponent(lam, window=window)
    grid = np.unique(np.round(np.logspace(0, np.log10(K), 41)).astype(int))
    grid = grid[np.isin(grid, le.rank)]
    if grid.size < 2:
        return 1, K
    ex = np.interp(grid, le.rank, le.exponent)
    lg = np.log10(grid)
    G = grid.size
    # spread[i, j] over ex[i..j] via running max/min along j for every start i.
    hi_ = np.full((G, G), np.nan)
    lo_ = np.full((G, G), np.nan)
    for i in range(G):
        hi_[i, i:] = np.maximum.accumulate(ex[i:])
        lo_[i, i:] = np.minimum.accumulate(ex[i:])
    half = 0.5 * (hi_ - lo_)
    mid = 0.5 * (hi_ + lo_)
    span = lg[None, :] - lg[:, None]
    npts = grid[None, :] - grid[:, None] + 1
    min_span = min(0.5, 0.5 * (lg[-1] - lg[0]))
    valid = np.triu(np.ones((G, G), dtype=bool), 1) & (span >= min_span) & (
        npts >= MIN_WINDOW_RANKS)
    if not valid.any():
        return 1, K
    ok = valid & (half <= tol * np.maximum(1.0, np.abs(mid)))
    if ok.any():
        # Longest first, then flattest (lexsort: last key is primary).
        ii, jj = np.nonzero(ok)
        order = np.lexsort((half[ii, jj], -np.round(span[ii, jj], 12)))
        i, j = ii[order[0]], jj[order[0]]
        return int(grid[i]), int(grid[j])
    long_enough = valid & (span >= min(1.0, lg[-1] - lg[0]) - 1e-12)
    pool = long_enough if long_enough.any() else valid
    ii, jj = np.nonzero(pool)
    best = int(np.argmin(half[ii, jj]))
    return int(grid[ii[best]]), int(grid[jj[best]])


def fit_power_law(eigs: ArrayLike, kmin: int | None = None, kmax: int | None = None, *,
                  n_boot: int = 200, seed: int = 0, plateau_tol: float = 0.1,
                  window: float = 0.5, sort: bool = True) -> PowerLawFit:
    """Fit ``lambda_k = C k^-a`` by weighted least squares in log-log coordinates.

    Parameters
    ----------
    eigs
        Eigenvalues (any order), or with ``sort=False`` values in mode order.
    kmin, kmax
        Window of ranks (1-based, inclusive). Either left ``None`` is chosen
        from the plateau of ``local_exponent``: the longest log-rank range on
        which the local exponent stays within ``plateau_tol`` (relative to
        ``max(1, |a|)``) of its median. Choosing needs ``MIN_WINDOW_RANKS`` (5)
        eigenvalues above the rank tolerance: with fewer, a ``ValueError`` says
        "too few eigenvalues" (given ``kmin`` and ``kmax``, 3 ranks suffice).
        Required with ``sort=False``.
    n_boot
        Bootstrap resamples for the interval (0 gives ``ci = (a, a)``).
    seed
        Seed of the bootstrap.
    plateau_tol, window
        Plateau tolerance and the ``local_exponent`` window (decades) for the
        automatic window.
    sort
        ``True``: sort decreasing and drop zeros first (a spectrum by rank).
        ``False``: fit ``eigs[kmin-1:kmax]`` against ``k`` as given (mode order,
        see the module docstring); every value in the window must be > 0.

    Returns
    -------
    PowerLawFit
    """
    if not sort:
        return _fit_in_mode_order(eigs, kmin, kmax, n_boot, seed)
    lam = _spectrum(eigs)
    K = lam.size
    nb = v.positive_int("n_boot", n_boot, minimum=0)
    sd = v.positive_int("seed", seed, minimum=0)
    tol = v.positive("plateau_tol", plateau_tol)
    if kmin is None or kmax is None:
        # Round-off "zeros" of a rank-deficient matrix are not part of any power law.
        n_pos = int(np.sum(lam > rank_tolerance(lam[0], K)))
        if n_pos < MIN_WINDOW_RANKS:
            raise ValueError(f"too few eigenvalues: {n_pos} above the rank tolerance, an "
                             f"automatic window needs at least {MIN_WINDOW_RANKS}; pass kmin "
                             "and kmax to fit fewer")
        k_eff = n_pos
        auto_lo, auto_hi = _auto_window(lam[:k_eff], tol, window)
        kmin = auto_lo if kmin is None else kmin
        kmax = auto_hi if kmax is None else kmax
    k_lo = v.positive_int("kmin", kmin)
    k_hi = v.positive_int("kmax", kmax)
    if k_hi > K:
        raise ValueError(f"kmax must be <= {K} (the number of positive eigenvalues), got {k_hi}")
    if k_hi - k_lo + 1 < 3:
        raise ValueError(f"the window kmin..kmax must hold at least 3 ranks, got {k_lo}..{k_hi}")
    a, c, r2, lo_ci, hi_ci = _fit_window(lam, k_lo, k_hi, nb, sd)
    short = bool(np.log10(k_hi / k_lo) < MIN_DECADES - 1e-12)
    if short:
        # windows reaching into round-off "zeros" would measure noise, not the spectrum
        k_res = max(k_hi, int(np.sum(lam > rank_tolerance(lam[0], K))))
        spread = _window_spread(lam[:k_res], k_lo, k_hi)
        lo_ci, hi_ci = min(lo_ci, float(spread.min())), max(hi_ci, float(spread.max()))
    return _power_law_fit(a, c, r2, lo_ci, hi_ci, k_lo, k_hi, short)


def _power_law_fit(a: float, c: float, r2: float, lo_ci: float, hi_ci: float, k_lo: int,
                   k_hi: int, short: bool) -> PowerLawFit:
    dens = 1.0 + 1.0 / a if a != 0 else np.inf
    return PowerLawFit(exponent=a, ci_low=lo_ci, ci_high=hi_ci, r2=r2, kmin=k_lo, kmax=k_hi,
                       density_exponent=float(dens), amplitude=float(np.exp(c)),
                       n_points=int(k_hi - k_lo + 1), short_window=short)


def _fit_in_mode_order(values: ArrayLike, kmin: int | None, kmax: int | None, n_boot: int,
                       seed: int) -> PowerLawFit:
    """:func:`fit_power_law` with ``sort=False``: the values as given, in mode order."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"eigs must be a 1-D array of per-mode values, got shape {arr.shape}")
    arr = v.real_array("eigs", arr)
    if kmin is None or kmax is None:
        raise ValueError("kmin and kmax must be given with sort=False (mode order has no "
                         "automatic window)")
    nb = v.positive_int("n_boot", n_boot, minimum=0)
    sd = v.positive_int("seed", seed, minimum=0)
    k_lo = v.positive_int("kmin", kmin)
    k_hi = v.positive_int("kmax", kmax)
    if k_hi > arr.size:
        raise ValueError(f"kmax must be <= {arr.size} (the number of modes), got {k_hi}")
    if k_hi - k_lo + 1 < 3:
        raise ValueError(f"the window kmin..kmax must hold at least 3 modes, got {k_lo}..{k_hi}")
    if not np.all(arr[k_lo - 1:k_hi] > 0):
        raise ValueError(f"eigs must be > 0 on the modes {k_lo}..{k_hi} (log-log fit), got "
                         f"{float(arr[k_lo - 1:k_hi].min()):g}")
    a, c, r2, lo_ci, hi_ci = _fit_window(arr, k_lo, k_hi, nb, sd)
    short = bool(np.log10(k_hi / k_lo) < MIN_DECADES - 1e-12)
    if short:  # the one-decade windows around it, as far as the values stay positive
        pos = int(np.argmin(arr > 0)) if not np.all(arr > 0) else arr.size
        spread = _window_spread(arr[:max(pos, k_hi)], k_lo, k_hi)
        lo_ci, hi_ci = min(lo_ci, float(spread.min())), max(hi_ci, float(spread.max()))
    return _power_law_fit(a, c, r2, lo_ci, hi_ci, k_lo, k_hi, short)


def _fit_window(lam: np.ndarray, k_lo: int, k_hi: int, nb: int, sd: int
                ) -> tuple[float, float, float, float, float]:
    """Weighted fit of ``lam[k_lo-1:k_hi]`` against ``k``: ``(a, c, r2, ci_low, ci_high)``."""
    k = np.arange(k_lo, k_hi + 1, dtype=np.float64)
    x, y, w = np.log(k), np.log(lam[k_lo - 1:k_hi]), 1.0 / k
    s, c, r2 = _wls(x, y, w)
    a = -s
    lo_ci = hi_ci = a
    if nb > 0:
        rng = np.random.default_rng(sd)
        # Wild bootstrap of the weighted residuals: Rademacher signs shared within
        # blocks of 0.05 decades of rank, so that correlated neighbouring
        # eigenvalues move together; valid for independent residuals too.
        resid = y - (c + s * x)
        block = np.floor((x - x[0]) / (0.05 * np.log(10.0))).astype(np.int64)
        signs = rng.choice(np.array([-1.0, 1.0]), size=(nb, int(block[-1]) + 1))
        yb = (c + s * x)[None, :] + signs[:, block] * resid[None, :]
        sw = w.sum()
        mx = (w * x).sum() / sw
        dx = x - mx
        boots = -(yb * (w * dx)[None, :]).sum(axis=1) / (w * dx * dx).sum()
        lo_ci, hi_ci = (float(q) for q in np.quantile(boots, [0.025, 0.975]))
        lo_ci, hi_ci = min(lo_ci, a), max(hi_ci, a)
    return a, c, r2, lo_ci, hi_ci


def _window_spread(lam: np.ndarray, k_lo: int, k_hi: int) -> np.ndarray:
    """Exponents fitted on the windows of ``MIN_DECADES`` that contain ``k_lo..k_hi``.

    Left ends run (log-spaced, up to 9 of them) from ``k_hi / 10`` to ``k_lo``,
    right ends are ten times the left end, both clipped to the spectrum. When the
    whole spectrum spans less than a decade, every sub-window of at least 3 ranks.
    """
    K = lam.size
    width = 10.0**MIN_DECADES
    if K < width:
        wins = [(i, j) for i in range(1, K - 1) for j in range(i + 2, K + 1)]
    else:
        lefts = np.unique(np.round(np.geomspace(max(1.0, k_hi / width), k_lo, 9)).astype(int))
        wins = [(int(lo), int(min(K, max(k_hi, round(lo * width))))) for lo in lefts]
    out = []
    for lo, hi in wins:
        k = np.arange(lo, hi + 1, dtype=np.float64)
        if k.size >= 3:
            out.append(-_wls(np.log(k), np.log(lam[lo - 1:hi]), 1.0 / k)[0])
    return np.asarray(out)


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
