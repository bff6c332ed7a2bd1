"""Power-law exponents of a spectrum: local and global (with a bootstrap CI).

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
    ``specdyn.measure.eigen.rank_tolerance``: round-off of a rank-deficient
    matrix).
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

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from specdyn import _validate as v
from specdyn.measure.broken_power_law import BrokenPowerLawFit as BrokenPowerLawFit
from specdyn.measure.broken_power_law import fit_broken_power_law as fit_broken_power_law
from specdyn.measure.eigen import rank_tolerance
from specdyn.measure.slopes import _spectrum, _wls
from specdyn.measure.slopes import fit_exponents as fit_exponents
from specdyn.measure.slopes import loglog_fit as loglog_fit
from specdyn.measure.slopes import two_point_exponent as two_point_exponent

__all__ = ["LocalExponent", "PowerLawFit", "fit_power_law", "local_exponent"]

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
