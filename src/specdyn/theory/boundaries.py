"""Region boundaries, region labels and the regime of a setting (Section 3.2, Appendix E).

Three dimensionless quantities split the (k, t) plane (Eq. 16):
``R = Delta eta / sigma_w^2`` (learned vs initial component), ``l = xi / (gamma0 theta)``
(learned fraction) and ``u = xi / S`` (allocation between layers). Their level
sets ``R = 1``, ``l = 0.9`` and ``u = 1`` are ``k_cross(t)``, ``k_learn(t)`` and
``k_layer(t)``. The times at which a mode reaches them have a closed form
(the inverse of the solution for ``xi``); the quadrature of Eq. (181) is kept in
:mod:`specdyn.theory.oracles` as the test oracle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from specdyn import _validate as v
from specdyn.settings import PowerLawSetting, Setting, as_times
from specdyn.theory._modes import (
    Modes,
    blockwise,
    grid,
    mode_constants_log,
    modes,
    require_power_law,
    time_at_rate,
)
from specdyn.theory.linear import _delta_eta, _xi

LEARNED_FRACTION = 0.9  # l = 0.9 defines k_learn (Appendix E.1)


def cross_level(s: Setting) -> float:
    """``xi`` at which the learned component equals the initial one, Eq. (187)."""
    return float(s.sigma_w * np.sqrt(2.0 * s.sigma_w**2 + s.sigma_a**2))


def _time_to(md: Modes, C: np.ndarray) -> np.ndarray:
    """Closed-form time for ``xi_k`` to reach ``C`` (inf if ``C >= gamma0 theta_k``).

    Inverts ``v = r (E - 1)/(r^2 + E)`` at ``v_C = 2C/(S + sqrt(S^2 + 4C^2))``:
    ``t = log1p(v_C (1 + r^2) / (r - v_C)) / b``, with ``r - v_C`` written as
    ``2 S (m - C)[1 + S (m + C)/(m p + C q)] / ((S + q)(S + p))`` to avoid cancellation.
    """
    S, m, q, r = md.S, md.m, md.q, md.r
    reachable = C < m
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        p = np.hypot(S, 2.0 * C)
        vC = 2.0 * C / (S + p)
        # the same gap as bounded factors: S (m + C)/(m p + C q) <= 1 and S/(S + q) <= 1
        gap = 2.0 * (m - C) * (S / (S + q)) / (S + p) * (
            1.0 + (m + C) / (m * (p / S) + C * (q / S)))
        t = time_at_rate(md, np.log1p(vC * (1.0 + r * r) / gap))
    t = np.where(reachable, t, np.inf)
    return np.where(C == 0, 0.0, t)


def _time_to_fraction(md: Modes, f: float) -> np.ndarray:
    """Closed-form time for ``xi_k`` to reach ``f gamma0 theta_k`` (``0 < f < 1``).

    :func:`_time_to` with ``C = f m`` and ``m`` divided out, so that it stays exact
    where ``m`` underflows (``-log(1 - f) / b`` in the linear limit ``m << S``).
    """
    S, m, q, r = md.S, md.m, md.q, md.r
    with np.errstate(over="ignore", under="ignore"):
        p = np.hypot(S, 2.0 * f * m)
        ratio = f * (1.0 + q / S) * (1.0 + r * r) / (
            (1.0 - f) * (1.0 + (1.0 + f) / (p / S + f * (q / S))))
    return time_at_rate(md, np.log1p(ratio))


def time_to_xi(s: Setting, k: ArrayLike, C: ArrayLike) -> np.ndarray:
    """Time ``t*_k(C)`` at which ``xi_k`` reaches ``C`` (Eq. 181, closed form); inf if never."""
    md = modes(s, k)
    CC = v.real_array("C", C, lo=0.0)
    return _time_to(md, np.broadcast_to(CC, np.broadcast_shapes(CC.shape, md.m.shape)))


def t_learn(s: Setting, k: ArrayLike) -> np.ndarray:
    """``t_learn(k)``: ``xi_k`` reaches 90 % of ``gamma0 theta_k``, Eq. (182)."""
    return _time_to_fraction(modes(s, k), LEARNED_FRACTION)


def t_cross(s: Setting, k: ArrayLike) -> np.ndarray:
    """``t_cross(k)``: learned part equals the initial one (``R = 1``), Eq. (189); inf if never."""
    md = modes(s, k)
    return _time_to(md, np.full_like(md.m, cross_level(s)))


def t_layer(s: Setting, k: ArrayLike) -> np.ndarray:
    """``t_layer(k)``: ``xi_k = S`` (``u = 1``), Eq. (192); inf if never."""
    md = modes(s, k)
    return _time_to(md, np.full_like(md.m, s.S))


def k_u(s: PowerLawSetting) -> float:
    """Modes ``k < k_u`` eventually cross (``R`` reaches 1), Eq. (190)."""
    p = require_power_law(s, "k_u")
    return _power(p.gamma0 * p.theta0 / cross_level(p), 2.0 / p.beta)


def k_l(s: PowerLawSetting) -> float:
    """Modes ``k < k_l`` eventually learn in both layers (``u`` reaches 1), Eq. (193)."""
    p = require_power_law(s, "k_l")
    return _power(p.gamma0 * p.theta0 / p.S, 2.0 / p.beta)


def k_region_ii(s: PowerLawSetting) -> float:
    """Upper end of Region II, where ``t_cross`` meets ``t_learn``, Eq. (195)."""
    p = require_power_law(s, "k_region_ii")
    return _power(LEARNED_FRACTION * p.gamma0 * p.theta0 / cross_level(p), 2.0 / p.beta)


def _power(base: float, exponent: float) -> float:
    """``base ** exponent`` in float64 log space: inf beyond float64, never ``OverflowError``.

    Boundaries in ``k`` and ``t`` can exceed float64 at the edges of the settings
    (a small ``beta`` raises them to a large power); ``inf`` then means "beyond
    every representable mode or time".
    """
    with np.errstate(over="ignore", under="ignore"):
        return float(np.power(np.float64(base), exponent))


_LOG_K_RANGE = 710.0  # |log k| beyond this is outside float64: k is 0 or inf


def _invert(p: PowerLawSetting, level: Callable[[Modes], np.ndarray], t: ArrayLike,
            k_max: float) -> np.ndarray:
    """Solve ``T(k) = t`` for ``k`` in ``(0, k_max)``, ``T`` increasing (bisection in log k).

    ``T(k) -> 0`` as ``k -> 0`` and ``T -> inf`` as ``k -> k_max``; ``t = 0`` gives
    ``k = 0`` and ``t = inf`` gives ``k_max``. Modes are continuous here, so the
    answer may lie below 1. The search runs in ``log k`` over the whole float64
    range (mode constants are built from ``log k``, so nothing overflows); an
    answer beyond it is 0 or inf.
    """
    tt = as_times(t)
    flat = tt.ravel()
    out = np.empty_like(flat)
    out[flat == 0] = 0.0
    out[np.isinf(flat)] = k_max
    todo = (flat > 0) & np.isfinite(flat)
    if k_max <= 0:
        out[todo] = 0.0
        return out.reshape(tt.shape)
    target = flat[todo]

    def T(logk: np.ndarray) -> np.ndarray:
        return level(mode_constants_log(p, logk))

    top = min(np.log(k_max), _LOG_K_RANGE) if np.isfinite(k_max) else _LOG_K_RANGE
    # below mode 1 lambda_k and theta_k grow: stop where they would leave float64
    bottom = max(-_LOG_K_RANGE, (np.log(p.lambda0) - 700.0) / p.alpha,
                 (2.0 * max(np.log(p.gamma0), 0.0) + np.log(p.mu0) - 1400.0) / p.beta)
    if top <= bottom:  # k_max itself is below the representable modes: so is the answer
        out[todo] = 0.0
        return out.reshape(tt.shape)
    lo = np.full(target.shape, bottom)
    hi = np.full(target.shape, top)
    beyond = T(hi) < target  # past the largest representable mode: inf (or k_max)
    below = T(lo) > target  # before the smallest: 0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        above = T(mid) > target
        hi = np.where(above, mid, hi)
        lo = np.where(above, lo, mid)
        if np.all(hi - lo <= 4.0 * np.finfo(np.float64).eps * np.maximum(1.0, np.abs(hi))):
            break
    with np.errstate(over="ignore"):
        k = np.exp(0.5 * (lo + hi))
    k[beyond] = k_max  # T(log k_max) is inf for a finite k_max, so only k_max = inf lands here
    k[below] = 0.0
    out[todo] = k
    return out.reshape(tt.shape)


def k_learn(s: PowerLawSetting, t: ArrayLike) -> np.ndarray:
    """Inverse of :func:`t_learn`: modes below ``k_learn(t)`` have learned 90 %."""
    p = require_power_law(s, "k_learn")
    return _invert(p, lambda md: _time_to_fraction(md, LEARNED_FRACTION), t, np.inf)


def k_cross(s: PowerLawSetting, t: ArrayLike) -> np.ndarray:
    """Inverse of :func:`t_cross`; tends to :func:`k_u` as ``t -> inf``."""
    p = require_power_law(s, "k_cross")
    C = cross_level(p)
    return _invert(p, lambda md: _time_to(md, np.full_like(md.m, C)), t, k_u(p))


def k_layer(s: PowerLawSetting, t: ArrayLike) -> np.ndarray:
    """Inverse of :func:`t_layer`; tends to :func:`k_l` as ``t -> inf``."""
    p = require_power_law(s, "k_layer")
    return _invert(p, lambda md: _time_to(md, np.full_like(md.m, p.S)), t, k_l(p))


def region_quantities(s: Setting, k: ArrayLike, t: ArrayLike) -> dict[str, np.ndarray]:
    """``R``, ``l`` and ``u`` of Eq. (16) at ``(k, t)``."""
    md, tt = grid(s, k, t)
    xi_ = blockwise(_xi, md, tt)
    m = np.broadcast_to(md.m, xi_.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        ell = np.where(m > 0, xi_ / m, 0.0)
    R = _delta_eta(np.atleast_1d(xi_), md.S).reshape(xi_.shape) / s.sigma_w**2
    return {"R": R, "l": ell, "u": xi_ / md.S}


def region(s: Setting, k: ArrayLike, t: ArrayLike) -> np.ndarray:
    """Region label at each ``(k, t)`` with the paper's thresholds R = 1, l = 0.9, u = 1.

    "I" (R < 1), "II" (R >= 1, l < 0.9, u < 1), "transition" (R >= 1, l < 0.9,
    u >= 1), "IIIa" (R >= 1, l >= 0.9, u < 1), "IIIb" (R >= 1, l >= 0.9, u >= 1).
    """
    q = region_quantities(s, k, t)
    R, ell, u = q["R"], q["l"], q["u"]
    learned = ell >= LEARNED_FRACTION
    return np.where(
        R < 1,
        "I",
        np.where(learned, np.where(u < 1, "IIIa", "IIIb"), np.where(u < 1, "II", "transition")),
    )


def asymptotic_exponents(s: PowerLawSetting) -> dict[str, float]:
    """The four asymptotic local exponents of Eq. (31), keyed by region."""
    p = require_power_law(s, "asymptotic_exponents")
    a, b = p.alpha, p.beta
    return {"I": a, "II": 3 * a + b, "IIIa": a + b, "IIIb": a + b / 2}


def lazy_boundary(r: ArrayLike) -> np.ndarray:
    """``g = gamma0 theta0 / S`` on the lazy boundary, Eq. (33) at equality (``k_u = 1``).

    ``r = sigma_w / sigma_a``; ``gamma0 theta0 = sqrt(sigma_w^2 (2 sigma_w^2 + sigma_a^2))``
    (:func:`cross_level`) divided by ``S`` is ``r sqrt(2 r^2 + 1) / (1 + r^2)``,
    whatever ``sigma_a``. Settings below it are lazy (:func:`regime`).
    """
    rr = v.real_array("r", r, lo=0.0)
    return rr * np.sqrt(2 * rr**2 + 1) / (1 + rr**2)


def feature_boundary(r: ArrayLike) -> np.ndarray:
    """``g = 1`` where ``r < 1`` (NaN elsewhere): the edge of the feature-learning corner.

    The strict forms of the paper's two conditions, ``sigma_a > sigma_w`` and
    ``gamma0 theta0 > S``, in the ratios ``r = sigma_w / sigma_a`` and
    ``g = gamma0 theta0 / S`` (:func:`regime`).
    """
    rr = v.real_array("r", r, lo=0.0)
    return np.where(rr < 1, 1.0, np.nan)


@dataclass(frozen=True)
class RegimeReport:
    """The regime of a setting and where each region can appear (Appendix E.4).

    ``label`` is "lazy" when no mode's learned component ever reaches the
    initial one (``gamma0 theta0 <= sqrt(sigma_w^2 (2 sigma_w^2 + sigma_a^2))``,
    Eq. 33, i.e. ``k_u <= 1``), "feature-learning" when the paper's two
    conditions hold (``sigma_a > sigma_w`` and ``gamma0 theta0 > S``, the strict
    forms of ``>>``), and "intermediate" otherwise. ``ranges`` gives, per region,
    the interval of modes in ``[1, D]`` where it can appear, and ``exists`` says
    whether that interval spans at least a factor ``margin``. A region whose
    interval would be empty (upper end below 1) has no entry in ``ranges``.
    Boundaries beyond float64 (a small ``beta`` raises them to a large power)
    are ``inf``.
    """

    label: str
    k_u: float
    k_l: float
    k_region_ii: float
    ranges: dict[str, tuple[float, float]] = field(default_factory=dict)
    exists: dict[str, bool] = field(default_factory=dict)
    margin: float = 10.0


def regime(s: PowerLawSetting, margin: float = 10.0) -> RegimeReport:
    """Classify ``s`` as lazy, feature-learning or intermediate, with region extents."""
    p = require_power_law(s, "regime")
    margin = v.in_range("margin", margin, 1.0, np.inf)
    ku, kl, k2 = k_u(p), k_l(p), k_region_ii(p)
    D = float(p.D) if p.D is not None else np.inf
    ranges = {
        "I": (1.0, D),
        "II": (1.0, min(k2, D)),
        "IIIa": (max(1.0, kl), min(D, ku)),
        "IIIb": (1.0, min(ku, kl, D)),
    }
    # an interval whose upper end lies below its lower end is empty: no mode, no range
    ranges = {name: (lo, hi) for name, (lo, hi) in ranges.items() if hi >= lo}
    with np.errstate(over="ignore", invalid="ignore"):
        exists = {name: bool(name in ranges and ranges[name][1] >= margin * ranges[name][0])
                  for name in ("I", "II", "IIIa", "IIIb")}
    exists["I"] = True  # at t = 0 every mode is in Region I
    if ku <= 1.0:
        label = "lazy"
    elif p.sigma_a > p.sigma_w and p.gamma0 * p.theta0 > p.S:
        label = "feature-learning"
    else:
        label = "intermediate"
    return RegimeReport(label, ku, kl, k2, ranges, exists, margin)




__all__ = [
    "RegimeReport",
    "asymptotic_exponents",
    "cross_level",
    "feature_boundary",
    "k_cross",
    "k_l",
    "k_layer",
    "k_learn",
    "k_region_ii",
    "k_u",
    "lazy_boundary",
    "region",
    "region_quantities",
    "regime",
    "t_cross",
    "t_layer",
    "t_learn",
    "time_to_xi",
]
