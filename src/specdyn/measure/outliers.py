"""Outliers against the Marchenko-Pastur bulk, with Tracy-Widom p-values.

Conventions
-----------
``eigs``, ``ratio`` and the sizes ``n``, ``p`` as in :mod:`specdyn.measure.mp_bulk`
(whose noise-variance fit the test uses).

Test (Kritchman & Nadler 2008, with Johnstone's edge scaling): the ``k``-th
largest eigenvalue ``l`` is tested under "exactly ``k - 1`` spikes". The
noise variance ``sigma2`` is estimated from the trace of the remaining
eigenvalues (``l`` included), corrected for the bulk mass that the ``k - 1``
spikes took (BBP), and ``s = (n l / sigma2 - mu_{n, p-k+1}) / sigma_{n, p-k+1}``
is compared with Tracy-Widom (beta = 1), with the half-integer corrections of
``specdyn.theory.rmt.wishart_edge_scaling``. For Gaussian noise the trace is
independent of ``l / trace``, so ``TW1 = s + c Z`` with ``c = (mu/sigma)
sqrt(2 / (n (p - k + 1)))`` and an independent standard normal ``Z``: the
p-value is the deconvolved tail (without it the test is conservative, about
3.5 % instead of 5 % at n = 120, p = 60). Testing stops at the first
eigenvalue that is not significant, so under pure noise the family-wise false
positive rate is ``alpha`` (measured: 4-6 % at n, p of 60-200 for alpha = 5 %).
With a known ``sigma2`` the plain Tracy-Widom tail is used.

Edge fitted to the bulk (``find_outliers(..., edge="fit")``): for bulks that
are not Marchenko-Pastur but keep a square-root edge (e.g. the weights after a
large second GD step, whose edge inflates), the top ``window`` bulk singular
values ``s_j = sqrt(l_j)`` are fitted to the Airy counting law
``s_j ~ E - tau (3 pi (j - 1/2) / 2)^(2/3)``, and every ``s > E + tau
q_TW1(1 - alpha)`` is an outlier. The noise variance is then the same
Kritchman-Nadler trace fit as above, under "exactly that many spikes".
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from numpy.polynomial import Chebyshev
from numpy.typing import ArrayLike
from scipy.interpolate import CubicSpline

from specdyn import _validate as v
from specdyn.measure.mp_bulk import MPFit as MPFit
from specdyn.measure.mp_bulk import _as_eigs, _canonical, _sigma2, _sizes
from specdyn.measure.mp_bulk import fit_mp_bulk as fit_mp_bulk
from specdyn.theory import rmt

__all__ = ["EDGE_MODELS", "OutlierReport", "find_outliers"]

_TW_FAST_DOMAIN = (-8.0, 12.0)
#: The bulk-edge models of :func:`find_outliers`: ``"mp"`` (Marchenko-Pastur, sequential
#: Tracy-Widom test) and ``"fit"`` (square-root edge fitted to the top of the bulk).
EDGE_MODELS = ("mp", "fit")
# (3 pi / 2)^(2/3): the k-th largest point of the Airy point process sits near
# -(3 pi (k - 1/2) / 2)^(2/3) in Tracy-Widom units (its counting function).
_AIRY_RANK = (1.5 * math.pi) ** (2.0 / 3.0)


@functools.lru_cache(maxsize=1)
def _tw1_log_sf_interpolant() -> Chebyshev:
    """Chebyshev interpolant (degree 80) of ``log(1 - F1)`` on [-8, 12].

    Built once from ``rmt.tw_sf`` (about 1 s); relative error of the survival
    function below 1e-10 there (checked in the tests). Many p-values then cost
    microseconds instead of milliseconds each.
    """
    return Chebyshev.interpolate(lambda s: np.log(rmt.tw_sf(s, 1)), 80, domain=_TW_FAST_DOMAIN)


@functools.lru_cache(maxsize=1)
def _tw1_log_sf_tables() -> tuple[CubicSpline, ...]:
    """Cubic splines of ``log sf`` and its first four derivatives on a 0.005 grid.

    Sampled from the Chebyshev interpolant (spline error ~1e-11 at this
    spacing); evaluating splines is compiled code, ~100x faster than Clenshaw.
    """
    f = _tw1_log_sf_interpolant()
    grid = np.linspace(*_TW_FAST_DOMAIN, 4001)
    return tuple(CubicSpline(grid, g(grid)) for g in
                 (f, *(f.deriv(j) for j in (1, 2, 3, 4))))


def _tw1_sf_deconvolved(t: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``P(T > t)`` where ``TW1 = T + c Z`` with ``Z ~ N(0, 1)`` independent of ``T``.

    ``sf_T = sf - a D2 + (a**2 / 2) D4`` with ``a = c**2 / 2`` and ``Dj`` the
    j-th derivative of ``sf`` (the operator ``exp(-a D^2)`` to second order;
    the next term, ``a**3/6`` times the sixth derivative, is below 1e-4 for
    the ``c <~ 0.5`` met at n, p >~ 50). Derivatives come from the Chebyshev
    interpolant of ``log sf``; outside its domain, ``sf`` itself. Vectorised.
    """
    t = np.atleast_1d(np.asarray(t, dtype=np.float64))
    c = np.broadcast_to(np.asarray(c, dtype=np.float64), t.shape)
    out = _tw1_sf(t)
    lo, hi = _TW_FAST_DOMAIN
    use = (c > 0) & (t >= lo) & (t <= hi)
    if use.any():
        tt = t[use]
        d1, d2, d3, d4 = (spl(tt) for spl in _tw1_log_sf_tables()[1:])
        sf = out[use]
        sf2 = sf * (d2 + d1**2)
        sf4 = sf * (d4 + 4 * d3 * d1 + 3 * d2**2 + 6 * d2 * d1**2 + d1**4)
        a = 0.5 * c[use] ** 2
        out[use] = np.clip(sf - a * sf2 + 0.5 * a * a * sf4, 0.0, 1.0)
    return out


def _tw1_sf(s: np.ndarray) -> np.ndarray:
    """``1 - F1(s)``: interpolant on [-8, 12], exact Fredholm determinant to the left.

    Right of 12 (p-values below 2e-14) the tail asymptote
    ``exp(-2/3 s^1.5) / (4 sqrt(pi) s^0.75)`` is used, scaled to be continuous
    at 12 (relative error under 2 %).
    """
    s = np.asarray(s, dtype=np.float64)
    lo, hi = _TW_FAST_DOMAIN
    out = np.empty_like(s)
    inside = (s >= lo) & (s <= hi)
    if inside.any():
        out[inside] = np.exp(_tw1_log_sf_tables()[0](s[inside]))
    left = s < lo
    if left.any():
        out[left] = np.asarray(rmt.tw_sf(s[left], 1))
    right = s > hi
    if right.any():
        def log_asym(x: np.ndarray | float) -> np.ndarray:
            return np.asarray(-2.0 / 3.0 * np.power(x, 1.5) - 0.75 * np.log(x))

        out[right] = np.exp(_tw1_log_sf_interpolant()(hi) + log_asym(s[right]) - log_asym(hi))
    return out


@dataclass(frozen=True)
class OutlierReport:
    """Candidates above the bulk with Tracy-Widom p-values.

    Attributes
    ----------
    eigenvalues
        Candidate eigenvalues, decreasing: every eigenvalue above the fitted
        bulk edge and always at least the largest one.
    p_values
        Tracy-Widom p-value of each candidate under "the candidates above it
        are the only spikes".
    statistics
        The edge-scaled statistics ``(n l / sigma2 - mu) / sigma``.
    is_outlier
        Significant at level ``alpha`` in the sequential test (a leading run).
    spike_strength
        BBP estimate of the population spike ``theta`` (covariance
        ``sigma2 (I + theta v v^T)``) for each candidate; NaN inside the bulk.
    n_outliers
        Number of outliers (``is_outlier.sum()``).
    sigma2, edge
        Noise variance fitted without the outliers and the bulk top edge
        ``sigma2 (1 + sqrt(ratio))**2``.
    n_samples, n_features
        The sizes used for the edge scaling.
    alpha
        The level.
    max_candidates
        The cap on the number of candidates tested (``min(n, p) // 2`` unless
        given).
    cap_reached
        Every candidate up to the cap was significant: there may be more
        outliers than ``n_outliers``, which is then a lower bound. (``edge="fit"``:
        the fit's own count reached the cap.)
    threshold
        The eigenvalue an outlier exceeds: ``edge="fit"``, ``(E + tau q)^2`` with
        ``q = q_TW1(1 - alpha)``; ``edge="mp"``, the known-noise Tracy-Widom level
        ``sigma2 (mu + sigma q) / n`` at the first non-outlier's rank.
    edge_scale
        Tracy-Widom scale ``tau`` of the largest bulk *singular* value ``sqrt(l)``
        (``edge="fit"``; NaN for ``"mp"``).
    edge_model
        ``"mp"`` or ``"fit"`` (:data:`EDGE_MODELS`): ``edge`` is then
        ``sigma2 (1 + sqrt(ratio))**2`` or the fitted ``E**2``.
    """

    eigenvalues: np.ndarray
    p_values: np.ndarray
    statistics: np.ndarray
    is_outlier: np.ndarray
    spike_strength: np.ndarray
    n_outliers: int
    sigma2: float
    edge: float
    n_samples: float
    n_features: float
    alpha: float
    max_candidates: int = 0
    cap_reached: bool = False
    threshold: float = float("nan")
    edge_scale: float = float("nan")
    edge_model: str = "mp"


def find_outliers(eigs: ArrayLike, ratio: float, alpha: float = 0.05, *,
                  n_samples: float | None = None, sigma2: float | None = None,
                  max_candidates: int | None = None, bulk: MPFit | None = None,
                  edge: str = "mp", window: int | None = None) -> OutlierReport:
    """Eigenvalues above the Marchenko-Pastur bulk, each with a Tracy-Widom p-value.

    Parameters
    ----------
    eigs, ratio
        As for :func:`fit_mp_bulk`: eigenvalues of ``F^T F / n`` (any order, at
        least 3) and ``p / n`` in (0, inf).
    alpha
        Level of the sequential test, in (0, 1).
    n_samples
        Samples (degrees of freedom); see the module docstring.
    sigma2
        Known noise variance; fitted from the bulk (per hypothesis) when ``None``.
    max_candidates
        At most this many candidates are tested (default ``min(n, p) // 2``,
        and never more than ``min(n, p) - 3`` so that a bulk is left, but at
        least 1). When all of them are significant ``cap_reached`` says so.
    bulk
        ``fit_mp_bulk(eigs, ratio, n_samples=n_samples)`` if the caller has it
        already (its ``sigma2`` sets the first candidate edge), so that a
        spectrum is fitted once; fitted here when ``None``. Its ``ratio`` must
        be ``ratio``. (``edge="mp"`` only.)
    edge
        ``"mp"`` (default): the Marchenko-Pastur edge and the sequential test;
        ``"fit"``: a square-root edge fitted to the top ``window`` bulk values
        (module docstring), for a deformed bulk; ``alpha`` is then the
        false-positive level of the one threshold, ``sigma2`` is not allowed,
        ``p_values`` are plain Tracy-Widom tails at the fitted edge.
    window
        Bulk values fitted by ``edge="fit"`` (>= 5; default
        ``max(24, min(n, p) // 25)``).

    Returns
    -------
    OutlierReport
    """
    e = _as_eigs(eigs)
    g = v.in_range("ratio", ratio, 0.0, np.inf, lo_open=True, hi_open=True)
    a = v.in_range("alpha", alpha, 0.0, 1.0, lo_open=True, hi_open=True)
    known = None if sigma2 is None else v.positive("sigma2", sigma2)
    n, p = _sizes(e.size, g, n_samples)
    m = _canonical(e, g, n, p)[0].size
    e = e[:m]
    kmax = m // 2 if max_candidates is None else v.positive_int("max_candidates", max_candidates)
    kmax = min(kmax, max(1, m - 3))
    model = v.choice("edge", edge, EDGE_MODELS)
    if window is not None:
        window = v.positive_int("window", window, minimum=5)
        if model != "fit":
            raise ValueError("window is the fitted edge's: give edge='fit' with it")
    if model == "fit":
        if known is not None or bulk is not None:
            raise ValueError("edge='fit' fits the edge: give neither sigma2 nor bulk")
        return _fitted_edge_outliers(e, g, a, n, p, kmax, window)

    if bulk is None:
        bulk = fit_mp_bulk(e, g, n_samples=n)
    elif not isinstance(bulk, MPFit) or bulk.ratio != g:
        got = f"ratio {bulk.ratio:g}" if isinstance(bulk, MPFit) else type(bulk).__name__
        raise ValueError(f"bulk must be fit_mp_bulk(eigs, ratio={g:g}, ...) of these "
                         f"eigenvalues, got {got}")
    unit_edge = rmt.mp_edges(g)[1]  # the MP edge at sigma2 = 1
    edge0 = (known if known is not None else bulk.sigma2) * unit_edge
    n_cand = int(np.clip(np.sum(e > edge0), 1, kmax))

    k = np.arange(n_cand)
    s2_all = _sigma2(e, g, p, np.arange(n_cand + 1))
    s2k = np.full(n_cand, known) if known is not None else s2_all[:n_cand]
    mu, sd = (np.asarray(x, dtype=np.float64) for x in rmt.wishart_edge_scaling(n, p - k))
    stats = (n * e[:n_cand] / s2k - mu) / sd
    # With a fitted sigma2 the statistic is T with TW1 = T + c Z, Z ~ N(0, 1) independent:
    # for Gaussian noise the trace (chi-square, relative variance 2 / (n p)) is
    # independent of l_max / trace. Deconvolve: sf_T = exp(-(c^2/2) D^2) sf_TW1.
    c = np.zeros(n_cand) if known is not None else (mu / sd) * np.sqrt(2.0 / (n * (p - k)))
    pv_arr = _tw1_sf_deconvolved(stats, c)
    sig = pv_arr < a
    # Sequential: only a leading run of significant eigenvalues counts.
    lead = sig.size if sig.all() else int(np.argmin(sig))
    is_out = np.zeros(sig.size, dtype=bool)
    is_out[:lead] = True
    s2_final = known if known is not None else float(s2_all[lead])
    theta = np.asarray(rmt.spike_strength_from_eigenvalue(e[:n_cand], g, sigma2=s2_final),
                       dtype=np.float64).reshape(-1)
    return OutlierReport(
        eigenvalues=e[:n_cand].copy(),
        p_values=pv_arr,
        statistics=stats,
        is_outlier=is_out,
        spike_strength=theta,
        n_outliers=lead,
        sigma2=float(s2_final),
        edge=float(s2_final * unit_edge),
        n_samples=float(n),
        n_features=float(p),
        alpha=a,
        max_candidates=kmax,
        cap_reached=bool(lead >= kmax),
        threshold=_known_noise_level(s2_final, n, p - lead, a),
    )


def _known_noise_level(sigma2: float, n: float, p: float, alpha: float) -> float:
    """The eigenvalue whose Tracy-Widom p-value at known ``sigma2`` is ``alpha``:
    ``sigma2 (mu + sigma q_TW1(1 - alpha)) / n`` (Johnstone's scaling at ``n, p``)."""
    mu, sd = (float(x) for x in rmt.wishart_edge_scaling(n, p))
    return float(sigma2 * (mu + sd * _tw1_quantile(alpha)) / n)


@functools.lru_cache(maxsize=64)
def _tw1_quantile(alpha: float) -> float:
    """``q_TW1(1 - alpha)``: the Tracy-Widom (beta = 1) level of a one-sided test."""
    return float(rmt.tw_quantile(1.0 - alpha, beta=1))


def _fitted_edge_outliers(e: np.ndarray, ratio: float, alpha: float, n: float, p: float,
                          kmax: int, window: int | None) -> OutlierReport:
    """``find_outliers(edge="fit")`` on the ``min(n, p)`` decreasing eigenvalues ``e``."""
    s = np.sqrt(np.clip(e, 0.0, None))
    q = _tw1_quantile(alpha)
    capped, edge, scale = _fit_edge(s, q, window, kmax)
    threshold = edge + scale * q
    count = int(np.sum(s > threshold))
    n_cand = max(count, 1)
    stats = (s[:n_cand] - edge) / scale if scale > 0 else np.full(n_cand, np.inf)
    # the noise under "exactly count spikes" (the trace fit of the MP model, for the
    # report and the spike strengths; the count does not use it)
    s2 = float(_sigma2(e, ratio, p, np.array([min(count, e.size - 1)]))[0])
    theta = np.asarray(rmt.spike_strength_from_eigenvalue(e[:n_cand], ratio, sigma2=s2),
                       dtype=np.float64).reshape(-1)
    return OutlierReport(
        eigenvalues=e[:n_cand].copy(), p_values=_tw1_sf(stats), statistics=stats,
        is_outlier=s[:n_cand] > threshold, spike_strength=theta, n_outliers=count,
        sigma2=s2, edge=edge * edge, n_samples=float(n), n_features=float(p), alpha=alpha,
        max_candidates=kmax, cap_reached=capped >= kmax, threshold=threshold * threshold,
        edge_scale=scale, edge_model="fit")


def _fit_edge(s: np.ndarray, tw_q: float, window: int | None, max_outliers: int
              ) -> tuple[int, float, float]:
    """Outlier count (at most ``max_outliers``), bulk edge and Tracy-Widom scale from
    the top of the bulk of the decreasing singular values ``s``.

    Any bulk with a square-root edge (Marchenko-Pastur or a deformation of it)
    has ``#{s_k > x} ~ (2 / 3 pi) ((E - x) / tau)^(3/2)`` near its edge ``E``,
    so the ``j``-th largest bulk value is ``s ~ E - tau (3 pi (j - 1/2) / 2)^(2/3)``.
    A least-squares line of ``s`` against ``(j - 1/2)^(2/3)`` over the top
    ``window`` bulk values gives ``E`` (intercept) and ``tau`` (slope / (3 pi/2)^(2/3)).
    Outliers shift the bulk ranks, so the count and the fit are iterated to a
    fixed point.
    """
    m = s.shape[0]
    K = window if window is not None else max(24, m // 25)
    count = 0
    edge = scale = float("nan")
    for _ in range(10):
        lo = count
        hi = min(m, count + K)
        if hi - lo < 5:
            raise ValueError(f"too few eigenvalues ({m}) to fit the bulk edge; use edge='mp'")
        j = np.arange(1, hi - lo + 1, dtype=np.float64)
        A = np.stack([np.ones_like(j), (j - 0.5) ** (2.0 / 3.0)], axis=1)
        (edge, slope), *_ = np.linalg.lstsq(A, s[lo:hi], rcond=None)
        edge = float(edge)
        scale = max(float(-slope), 0.0) / _AIRY_RANK
        new = min(int(np.sum(s > edge + scale * tw_q)), max_outliers)
        if new == count:
            break
        count = new
    return count, edge, scale
