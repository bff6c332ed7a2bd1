"""Random-matrix baselines: Marchenko-Pastur, Tracy-Widom, BBP spikes.

Pure numpy/scipy, float64, vectorised where natural. No torch.

Conventions
-----------
Sample covariance
    ``F`` is an ``n x p`` matrix (n samples, p features) with i.i.d. entries of
    variance ``sigma2``; its sample covariance is ``F^T F / n`` and the aspect
    ratio is ``ratio = gamma = p / n`` (features per sample).
Marchenko-Pastur
    The spectrum of ``F^T F / n`` fills ``[sigma2 (1 - sqrt(ratio))**2,
    sigma2 (1 + sqrt(ratio))**2]``; for ``ratio > 1`` a fraction
    ``1 - 1/ratio`` of the p eigenvalues sits at zero. ``mp_density`` is the
    density of the continuous part (it integrates to ``min(1, 1/ratio)``),
    ``mp_cdf`` the full distribution function including the atom at zero.
Spiked covariance (BBP)
    Population covariance ``sigma2 (I + theta v v^T)``; outlier iff
    ``theta > sqrt(gamma)``, at ``sigma2 (1 + theta)(1 + gamma/theta)``,
    squared overlap ``(1 - gamma/theta**2) / (1 + gamma/theta)``.
Rectangular signal plus noise (Benaych-Georges & Nadakuditi 2012)
    ``X = G / sqrt(m) + theta u v^T`` with ``G`` an ``n x m`` standard Gaussian
    matrix, unit ``u`` (length n) and ``v`` (length m), ``c = n / m``. Bulk
    edge of the singular values ``1 + sqrt(c)``; outlier iff
    ``theta > c**(1/4)``, at ``sqrt((1 + theta**2)(c + theta**2)) / theta``;
    squared overlaps with ``u`` (left) ``1 - c (1 + theta**2) /
    (theta**2 (theta**2 + c))`` and with ``v`` (right) ``1 - (c + theta**2) /
    (theta**2 (theta**2 + 1))``.
Tracy-Widom
    ``tw_cdf(s, beta)`` for beta = 1 (real, GOE/Wishart) and beta = 2
    (complex, GUE), computed as Fredholm determinants with Gauss-Legendre
    quadrature (Bornemann 2010): ``F2(s) = det(I - K_Airy)`` on
    ``L2(s, inf)`` and ``F1(s) = det(I - B_s)`` on ``L2(0, inf)`` with
    ``B_s(x, y) = Ai(x + y + s)`` (Ferrari-Spohn). Accurate to ~1e-14.
Wishart edge scaling (Johnstone 2001, with the half-integer corrections of Ma 2012)
    For ``X^T X`` with ``X`` ``n x p`` standard real Gaussian, the largest
    eigenvalue ``l`` satisfies ``(l - mu_np) / sigma_np -> TW1`` with
    ``mu_np = (sqrt(n - 1/2) + sqrt(p - 1/2))**2`` and ``sigma_np =
    (sqrt(n - 1/2) + sqrt(p - 1/2)) (1/sqrt(n - 1/2) + 1/sqrt(p - 1/2))**(1/3)``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize, special

from specdyn import _validate as v

__all__ = [
    "TW1_MEAN",
    "TW1_SD",
    "RectangularSpike",
    "SpikePrediction",
    "mp_cdf",
    "mp_density",
    "mp_edges",
    "mp_quantile",
    "rectangular_bulk_edge",
    "rectangular_spike",
    "spike_strength_from_eigenvalue",
    "spike_strength_from_singular_value",
    "spiked_covariance",
    "tw_cdf",
    "tw_quantile",
    "tw_sf",
    "wishart_edge_scaling",
]


#: The Tracy-Widom (beta = 1) law's mean and standard deviation (Bornemann 2010, Table 6:
#: mean -1.2065335745820, variance 1.6077810345810; tests integrate :func:`tw_sf`).
TW1_MEAN = -1.2065335745820
TW1_SD = math.sqrt(1.6077810345810)


def _scalar_or_array(x: np.ndarray) -> Any:
    """0-d results as Python scalars, others as arrays."""
    return x.item() if x.ndim == 0 else x


def _ratio_array(name: str, value: ArrayLike) -> np.ndarray:
    arr = v.real_array(name, value, allow_inf=True)
    if not (np.all(arr > 0) and np.all(np.isfinite(arr))):
        raise ValueError(f"{name} must lie in (0, inf), got {value!r}")
    return arr


def _positive_array(name: str, value: ArrayLike) -> np.ndarray:
    arr = v.real_array(name, value)
    if not np.all(arr > 0):
        raise ValueError(f"{name} must be > 0 (allowed range (0, inf)), got {value!r}")
    return arr


# --------------------------------------------------------------------------
# Marchenko-Pastur
# --------------------------------------------------------------------------


def mp_edges(ratio: ArrayLike, sigma2: ArrayLike = 1.0) -> tuple[Any, Any]:
    """Edges ``(lo, hi) = sigma2 (1 -+ sqrt(ratio))**2`` of the Marchenko-Pastur bulk.

    ``ratio = p / n`` (features per sample) in (0, inf); ``sigma2`` is the
    entry variance. Vectorised; scalars in, floats out.
    """
    g = _ratio_array("ratio", ratio)
    s2 = _positive_array("sigma2", sigma2)
    v.broadcastable(ratio=g, sigma2=s2)
    lo, hi = _mp_edges(g, s2)
    return _scalar_or_array(lo), _scalar_or_array(hi)


def _mp_edges(g: Any, s2: Any) -> tuple[Any, Any]:
    """The one Marchenko-Pastur edge formula (``mp_edges`` without its checks)."""
    r = np.sqrt(g)
    return s2 * (1 - r) ** 2, s2 * (1 + r) ** 2


def mp_density(x: ArrayLike, ratio: float, sigma2: float = 1.0) -> Any:
    """Density of the continuous part of the Marchenko-Pastur law at ``x``.

    ``sqrt((b - x)(x - a)) / (2 pi sigma2 ratio x)`` on ``[a, b]`` and 0
    outside. It integrates to ``min(1, 1/ratio)``: for ``ratio > 1`` the rest
    is an atom at zero (see ``mp_cdf``).
    """
    g = v.in_range("ratio", ratio, 0.0, np.inf, lo_open=True, hi_open=True)
    s2 = v.positive("sigma2", sigma2)
    xs = v.real_array("x", x)
    a, b = _mp_edges(g, s2)
    inside = (xs > a) & (xs < b) & (xs > 0)
    xi = np.where(inside, xs, 0.5 * (a + b))
    dens = np.sqrt((b - xi) * (xi - a)) / (2 * np.pi * s2 * g * xi)
    return _scalar_or_array(np.where(inside, dens, 0.0))


def _mp_phi_integral(phi: np.ndarray, a: float, b: float) -> np.ndarray:
    """``int_a^{t(phi)} sqrt((b-t)(t-a))/t dt`` with ``t = m - h cos(phi)`` (closed form)."""
    m, h = 0.5 * (a + b), 0.5 * (b - a)
    half = 0.5 * phi
    # arctan2 keeps a = 0 (ratio = 1) finite: the term then vanishes.
    atan = np.arctan2(np.sqrt(b) * np.sin(half), np.sqrt(a) * np.cos(half))
    return m * phi + h * np.sin(phi) - 2 * np.sqrt(a * b) * atan


def mp_cdf(x: ArrayLike, ratio: float, sigma2: float = 1.0) -> Any:
    """Distribution function of the Marchenko-Pastur law (with the atom at 0 if ratio > 1).

    Closed form, exact to rounding: with ``t = m - h cos(phi)`` the integral
    of the density is ``m phi + h sin(phi) - 2 sqrt(ab) arctan(sqrt(b/a)
    tan(phi/2))`` divided by ``2 pi sigma2 ratio``.
    """
    g = v.in_range("ratio", ratio, 0.0, np.inf, lo_open=True, hi_open=True)
    s2 = v.positive("sigma2", sigma2)
    xs = v.real_array("x", x, allow_inf=True)
    a, b = _mp_edges(g, s2)
    m, h = 0.5 * (a + b), 0.5 * (b - a)
    phi = np.arccos(np.clip((m - np.clip(xs, a, b)) / h, -1.0, 1.0))
    cont = _mp_phi_integral(phi, a, b) / (2 * np.pi * s2 * g)
    atom = max(0.0, 1.0 - 1.0 / g)
    out = np.where(xs >= 0, atom, 0.0) + cont
    return _scalar_or_array(np.clip(out, 0.0, 1.0))


def mp_quantile(q: ArrayLike, ratio: float, sigma2: float = 1.0) -> Any:
    """Quantiles of the Marchenko-Pastur law (inverse of ``mp_cdf``), by bisection.

    ``q`` in [0, 1]; levels inside the atom at zero (ratio > 1) give 0.
    """
    g = v.in_range("ratio", ratio, 0.0, np.inf, lo_open=True, hi_open=True)
    s2 = v.positive("sigma2", sigma2)
    qs = v.real_array("q", q)
    if np.any((qs < 0) | (qs > 1)):
        raise ValueError(f"q must lie in [0, 1], got {q!r}")
    a, b = _mp_edges(g, s2)
    atom = max(0.0, 1.0 - 1.0 / g)
    target = (qs - atom) * (2 * np.pi * s2 * g)
    lo = np.zeros_like(qs)
    hi = np.full_like(qs, np.pi)
    for _ in range(60):  # bisection on phi: 2^-60 pi, below float64 resolution
        mid = 0.5 * (lo + hi)
        below = _mp_phi_integral(mid, a, b) < target
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    m, h = 0.5 * (a + b), 0.5 * (b - a)
    x = m - h * np.cos(0.5 * (lo + hi))
    return _scalar_or_array(np.where(qs <= atom, 0.0, x))


# --------------------------------------------------------------------------
# BBP: spiked covariance and rectangular signal plus noise
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class SpikePrediction:
    """BBP prediction for a spiked covariance ``sigma2 (I + theta v v^T)``.

    Attributes
    ----------
    detected
        Whether the spike produces an outlier (``theta > sqrt(gamma)``).
    location
        Predicted outlier eigenvalue of the sample covariance; the bulk edge
        ``sigma2 (1 + sqrt(gamma))**2`` where not detected.
    overlap2
        Predicted squared overlap ``<v_hat, v>**2`` of the top sample
        eigenvector with ``v``; 0 where not detected.
    threshold
        The spike strength ``sqrt(gamma)`` at the transition.
    """

    detected: Any
    location: Any
    overlap2: Any
    threshold: Any


def spiked_covariance(theta: ArrayLike, ratio: ArrayLike, *, sigma2: float = 1.0
                      ) -> SpikePrediction:
    """BBP transition for a spiked sample covariance (Baik, Ben Arous, Peche 2005).

    Parameters
    ----------
    theta
        Spike strength (>= 0): population covariance ``sigma2 (I + theta v v^T)``.
    ratio
        Aspect ratio ``gamma = p / n`` in (0, inf).
    sigma2
        Noise variance (> 0).
    """
    th = v.real_array("theta", theta, lo=0.0)
    g = _ratio_array("ratio", ratio)
    s2 = v.positive("sigma2", sigma2)
    v.broadcastable(theta=th, ratio=g)
    th, g = np.broadcast_arrays(th, g)
    thr = np.sqrt(g)
    det = th > thr
    ts = np.where(det, th, 1.0)  # safe value where the formula does not apply
    loc = np.where(det, s2 * (1 + ts) * (1 + g / ts), _mp_edges(g, s2)[1])
    ov = np.where(det, (1 - g / ts**2) / (1 + g / ts), 0.0)
    return SpikePrediction(_scalar_or_array(det), _scalar_or_array(loc),
                           _scalar_or_array(ov), _scalar_or_array(thr))


def spike_strength_from_eigenvalue(ell: ArrayLike, ratio: ArrayLike, *, sigma2: float = 1.0,
                                   check: bool = True) -> Any:
    """Invert the BBP location: the ``theta`` whose outlier sits at ``ell``.

    Solves ``ell / sigma2 = (1 + theta)(1 + gamma/theta)`` (``gamma = ratio``) for the root above
    ``sqrt(gamma)``. NaN where ``ell`` is at or below the bulk edge
    ``sigma2 (1 + sqrt(gamma))**2``: such an eigenvalue is consistent with any
    ``theta <= sqrt(gamma)``, so no strength is identifiable.

    ``check=False`` skips the argument checks, for callers that hold validated
    arrays and call it in a loop (``measure.outliers``' fixed points, where the
    checks cost more than the formula); it then returns an array.
    """
    if not check:
        return _bbp_inverse(np.asarray(ell, dtype=np.float64) / sigma2, ratio)
    e = v.real_array("ell", ell)
    g = _ratio_array("ratio", ratio)
    s2 = v.positive("sigma2", sigma2)
    v.broadcastable(ell=e, ratio=g)
    e, g = np.broadcast_arrays(e / s2, g)
    return _scalar_or_array(_bbp_inverse(e, g))


def _bbp_inverse(e: np.ndarray, g: Any) -> np.ndarray:
    """``spike_strength_from_eigenvalue`` at ``sigma2 = 1`` without its checks."""
    ok = e > _mp_edges(g, 1.0)[1] * (1 + 1e-12)  # at the edge up to rounding: not identifiable
    bq = e - 1 - g
    disc = np.where(ok, bq**2 - 4 * g, 0.0)
    th = 0.5 * (bq + np.sqrt(np.maximum(disc, 0.0)))
    return np.where(ok, th, np.nan)


@dataclass(frozen=True)
class RectangularSpike:
    """Prediction for ``X = G/sqrt(m) + theta u v^T`` (Benaych-Georges & Nadakuditi).

    Attributes
    ----------
    detected
        Whether the top singular value separates (``theta > c**(1/4)``).
    singular_value
        Predicted top singular value; the bulk edge ``1 + sqrt(c)`` where not detected.
    left_overlap2, right_overlap2
        Predicted squared overlaps of the top left singular vector with ``u``
        (length n) and of the top right singular vector with ``v`` (length m);
        0 where not detected.
    threshold
        ``c**(1/4)``.
    """

    detected: Any
    singular_value: Any
    left_overlap2: Any
    right_overlap2: Any
    threshold: Any


def rectangular_bulk_edge(ratio: ArrayLike) -> Any:
    """Top edge ``1 + sqrt(c)`` of the singular values of ``G / sqrt(m)``, ``c = ratio = n/m``."""
    cc = _ratio_array("ratio", ratio)
    return _scalar_or_array(_rectangular_edge(cc))


def _rectangular_edge(cc: Any) -> Any:
    """The one rectangular (singular-value) edge formula, ``rectangular_bulk_edge`` unchecked."""
    return 1 + np.sqrt(cc)


def rectangular_spike(theta: ArrayLike, ratio: ArrayLike) -> RectangularSpike:
    """Rank-one signal plus noise: outlier singular value and overlaps.

    Parameters
    ----------
    theta
        Signal strength (>= 0) in ``X = G/sqrt(m) + theta u v^T``.
    ratio
        Aspect ratio ``c = n / m`` in (0, inf) of the ``n x m`` matrix ``X``.
    """
    th = v.real_array("theta", theta, lo=0.0)
    cc = _ratio_array("ratio", ratio)
    v.broadcastable(theta=th, ratio=cc)
    th, cc = np.broadcast_arrays(th, cc)
    thr = cc**0.25
    det = th > thr
    t2 = np.where(det, th, 1.0) ** 2
    sv = np.where(det, np.sqrt((1 + t2) * (cc + t2) / t2), _rectangular_edge(cc))
    left = np.where(det, 1 - cc * (1 + t2) / (t2 * (t2 + cc)), 0.0)
    right = np.where(det, 1 - (cc + t2) / (t2 * (t2 + 1)), 0.0)
    return RectangularSpike(_scalar_or_array(det), _scalar_or_array(sv),
                            _scalar_or_array(left), _scalar_or_array(right),
                            _scalar_or_array(thr))


def spike_strength_from_singular_value(s: ArrayLike, ratio: ArrayLike) -> Any:
    """Invert ``rectangular_spike``: the ``theta`` whose outlier is at singular value ``s``.

    Solves ``s**2 theta**2 = (1 + theta**2)(c + theta**2)`` for the root with
    ``theta > c**(1/4)`` (``c = ratio``). NaN where ``s <= 1 + sqrt(c)`` (inside the bulk: not
    identifiable).
    """
    ss = v.real_array("s", s)
    cc = _ratio_array("ratio", ratio)
    v.broadcastable(s=ss, ratio=cc)
    ss, cc = np.broadcast_arrays(ss, cc)
    ok = ss > _rectangular_edge(cc) * (1 + 1e-12)  # at the edge up to rounding: not identifiable
    bq = ss**2 - 1 - cc
    disc = np.where(ok, bq**2 - 4 * cc, 0.0)
    t2 = 0.5 * (bq + np.sqrt(np.maximum(disc, 0.0)))
    return _scalar_or_array(np.where(ok, np.sqrt(np.maximum(t2, 0.0)), np.nan))


# --------------------------------------------------------------------------
# Tracy-Widom via Fredholm determinants (Bornemann 2010)
# --------------------------------------------------------------------------

_TW_NODES = 40  # Gauss-Legendre nodes; entire kernels: 40 agree with 120 to 1e-14 on [-8, 8]


@functools.lru_cache(maxsize=4)
def _gauss_legendre01(m: int) -> tuple[np.ndarray, np.ndarray]:
    x, w = np.polynomial.legendre.leggauss(m)
    return 0.5 * (x + 1), 0.5 * w


def _tw_log_det(s: float, beta: int) -> float:
    """``log det(I - K)`` of the Nystrom discretisation, summed from the eigenvalues."""
    # Far left the kernels oscillate (Ai wavelength ~ 2 pi / sqrt(-s)): add nodes there.
    u, w = _gauss_legendre01(_TW_NODES + 6 * int(max(0.0, -s - 5.0)))
    if beta == 2:
        # Airy kernel on (s, inf); Ai(x)^2 < 1e-18 beyond x ~ 11, so truncate there.
        hi = max(s, 0.0) + 12.0
        x = s + (hi - s) * u
        wx = (hi - s) * w
        ai, aip, _, _ = special.airy(x)
        dx = x[:, None] - x[None, :]
        same = np.abs(dx) < 1e-300
        num = ai[:, None] * aip[None, :] - aip[:, None] * ai[None, :]
        k = np.where(same, 0.0, num / np.where(same, 1.0, dx))
        k[np.diag_indices_from(k)] = aip**2 - x * ai**2
    else:
        # F1(s) = det(I - B_s) on L2(0, inf), B_s(x, y) = Ai(x + y + s) (Ferrari-Spohn).
        hi = max(4.0, 0.5 * (18.0 - s))
        x = hi * u
        wx = hi * w
        k = special.airy(x[:, None] + x[None, :] + s)[0]
        # Airy can return tiny noise for huge arguments; it is harmless.
    sw = np.sqrt(wx)
    lam = np.linalg.eigvalsh(sw[:, None] * k * sw[None, :])
    if np.any(lam >= 1.0):
        return -np.inf
    return float(np.sum(np.log1p(-lam)))


def _tw_beta(beta: int) -> int:
    if beta not in (1, 2) or isinstance(beta, bool):
        raise ValueError(f"beta must be 1 or 2, got {beta!r}")
    return int(beta)


def _tw_log_cdf(s: ArrayLike, beta: int) -> np.ndarray:
    """``log F_beta(s)`` elementwise (validated ``s``; ``-inf`` where ``F < 1e-300``)."""
    b = _tw_beta(beta)
    ss = v.real_array("s", s, allow_inf=True)
    out = np.empty(ss.shape)
    for i, si in np.ndenumerate(ss):
        if si == np.inf:
            out[i] = 0.0
        elif si == -np.inf or si < -40.0:  # F < 1e-300 there
            out[i] = -np.inf
        else:
            out[i] = _tw_log_det(float(si), b)
    return out


def tw_cdf(s: ArrayLike, beta: int = 1) -> Any:
    """Tracy-Widom distribution function ``F_beta(s)`` for beta = 1 or 2.

    Bornemann's method: Gauss-Legendre (40 nodes) Nystrom discretisation of
    the Fredholm determinant; absolute error ~1e-14 on the real line.
    """
    return _scalar_or_array(np.exp(_tw_log_cdf(s, beta)))


def tw_sf(s: ArrayLike, beta: int = 1) -> Any:
    """Survival function ``1 - F_beta(s)``, accurate in the right tail (p-values).

    Computed as ``-expm1(log det(I - K))`` so small tail probabilities keep
    their relative precision instead of cancelling against 1.
    """
    return _scalar_or_array(0.0 - np.expm1(_tw_log_cdf(s, beta)))  # 0 - x: no -0.0 at s = inf


@functools.lru_cache(maxsize=256)
def _tw_quantile_scalar(q: float, beta: int) -> float:
    return float(optimize.brentq(lambda s: _tw_log_det(s, beta) - np.log(q), -12.0, 15.0,
                                 xtol=1e-13, rtol=1e-14))


def tw_quantile(q: ArrayLike, beta: int = 1) -> Any:
    """Quantiles of the Tracy-Widom law: the ``s`` with ``F_beta(s) = q``, q in (0, 1).

    Root of ``log F_beta(s) = log q`` by Brent's method (cached per level);
    levels are limited to ``F`` between about 1e-20 and 1 - 1e-13.
    """
    b = _tw_beta(beta)
    qs = v.real_array("q", q)
    if np.any((qs <= 0) | (qs >= 1)):
        raise ValueError(f"q must lie in (0, 1), got {q!r}")
    out = np.array([_tw_quantile_scalar(float(qi), b) for qi in qs.ravel()]).reshape(qs.shape)
    return _scalar_or_array(out)


def wishart_edge_scaling(n: ArrayLike, p: ArrayLike) -> tuple[Any, Any]:
    """Centering and scaling ``(mu_np, sigma_np)`` of the largest eigenvalue of ``X^T X``.

    ``X`` is ``n x p`` with i.i.d. N(0, 1) entries (real Wishart, n degrees
    of freedom). ``(l_max - mu_np) / sigma_np`` is approximately TW1, with the
    half-integer corrections (Johnstone 2001, Ma 2012) that make the error
    ``O(min(n, p)**(-2/3))``:
    ``mu_np = (sqrt(n - 1/2) + sqrt(p - 1/2))**2``,
    ``sigma_np = (sqrt(n - 1/2) + sqrt(p - 1/2)) (1/sqrt(n - 1/2) + 1/sqrt(p - 1/2))**(1/3)``.
    Symmetric in ``n`` and ``p``; both must be >= 1.
    """
    nn = v.real_array("n", n, lo=1.0)
    pp = v.real_array("p", p, lo=1.0)
    v.broadcastable(n=nn, p=pp)
    a, b = np.sqrt(nn - 0.5), np.sqrt(pp - 0.5)
    mu = (a + b) ** 2
    sig = (a + b) * (1 / a + 1 / b) ** (1.0 / 3.0)
    return _scalar_or_array(mu), _scalar_or_array(sig)
