"""Exact dynamics of the two-layer linear network, both layers trained (Appendix D).

Infinite width, population gradient flow with learning rate ``nu = N``, aligned
input and teacher. Each mode ``k`` evolves on its own; the diagonal Gram
entries ``xi_k = G^wa_kk``, ``eta_k = G^w_kk``, ``zeta_k = G^a_kk`` obey
Eqs. (144)-(145) with ``xi(0) = 0``, ``eta(0) = sigma_w^2``, ``zeta(0) = sigma_a^2``,
and the representation spectrum is ``rho_k(t) = lambda_k eta_k(t)``, Eq. (12).

The paper's closed form (Eqs. 171-177) overflows at late times (``E_k(t)`` is
an exponential of ``t``). Here it is rewritten in ``e = exp(-b t)``:

    v  = r (1 - e) / (1 + r^2 e)
    xi = S v / (1 - v^2)
       = S r (1 - e)(1 + r^2 e) / ([(1 - r) + r e (1 + r)] [(1 + r) - r e (1 - r)])

and ``Delta eta = (sqrt(S^2 + 4 xi^2) - S) / 2 = 2 xi^2 / (S + sqrt(S^2 + 4 xi^2))``.
Every factor is a sum of non-negative terms, so the result is finite and
accurate for every ``t`` in ``[0, inf]``, including ``t = inf`` (``e = 0``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from specdyn.settings import Setting
from specdyn.theory._modes import Modes, blockwise, grid, modes, rate_time, require_power_law


def _xi_factors(md: Modes, t: np.ndarray) -> tuple[np.ndarray, ...]:
    """``(x, e, one_minus_e, A, P1, P2)`` with ``xi = S r (1-e) A / (P1 P2)``.

    Mode constants are combined first so that each grid-sized array costs one
    pass, and grid arrays are updated in place: this is the hot path.
    """
    x = rate_time(md, t)
    e = np.exp(-x)
    one_minus_e = np.expm1(-x)
    np.negative(one_minus_e, out=one_minus_e)
    r = md.r
    A = (r * r) * e
    A += 1.0
    P1 = (r * (1.0 + r)) * e
    P1 += md.one_minus_r
    P2 = (r * md.one_minus_r) * e
    np.subtract(1.0 + r, P2, out=P2)
    return x, e, one_minus_e, A, P1, P2


def _xi(md: Modes, t: np.ndarray) -> np.ndarray:
    _, _, out, A, P1, P2 = _xi_factors(md, t)
    out *= md.S * md.r
    out *= A
    P1 *= P2
    out /= P1
    return out


def _safe_squares(S: float, x: np.ndarray) -> bool:
    """Whether ``S^2 + x^2`` (``x >= 0``) can be formed directly: no square over- or
    underflows where it matters."""
    return 1e-150 <= S <= 1e150 and (x.size == 0 or float(np.max(x)) <= 1e150)


def _hypot_S(S: float, x: np.ndarray) -> np.ndarray:
    """``sqrt(S^2 + x^2)``: the plain formula where the squares are safe, else ``hypot``."""
    if _safe_squares(S, x):
        out = x * x
        out += S * S
        return np.sqrt(out, out=out)
    return np.hypot(S, x)


def _delta_eta(xi: np.ndarray, S: float) -> np.ndarray:
    """Rationalised ``(sqrt(S^2 + 4 xi^2) - S) / 2 = xi * 2 xi / (S + sqrt(S^2 + 4 xi^2))``.

    The second factor lies in [0, 1), so nothing overflows even where ``xi^2`` would;
    ``hypot`` takes over where the squares themselves would leave float64.
    """
    if _safe_squares(S, 2.0 * xi.max(initial=0.0)):
        den = xi * xi  # in place: this is the hot path of rho
        den *= 4.0
        den += S * S
        np.sqrt(den, out=den)
    else:
        den = np.hypot(S, 2.0 * xi)
    den += S
    out = 2.0 * xi
    out /= den
    out *= xi
    return out


def mode_rate(s: Setting, k: ArrayLike) -> np.ndarray:
    """Rate ``b_k = lambda_k sqrt(S^2 + 4 gamma0^2 theta_k^2) / gamma0^2`` of mode ``k``.

    The rate in ``E_k(t) = exp(b_k t)`` of Eq. (12), i.e. the relaxation rate of
    mode ``k`` near its fixed point; it decreases with ``k`` for a power law, so
    ``mode_rate(s, 1)`` is the fastest. Full-batch GD with step ``dt`` is stable
    for ``dt b_1 < 2``.
    """
    return np.asarray(modes(s, k).b, dtype=np.float64)


def xi(s: Setting, k: ArrayLike, t: ArrayLike) -> np.ndarray:
    """``xi_k(t) = G^wa_kk(t)``, the learned input-output overlap, Eq. (174).

    Rises monotonically from 0 to ``gamma0 theta_k``; finite for all t in [0, inf].
    """
    md, tt = grid(s, k, t)
    return blockwise(_xi, md, tt)


def delta_eta(s: Setting, k: ArrayLike, t: ArrayLike) -> np.ndarray:
    """``eta_k(t) - sigma_w^2``, the teacher-derived part of ``G^w_kk``, Eq. (12)."""
    md, tt = grid(s, k, t)
    return blockwise(lambda m, tb: _delta_eta(_xi(m, tb), m.S), md, tt)


def eta(s: Setting, k: ArrayLike, t: ArrayLike) -> np.ndarray:
    """``eta_k(t) = G^w_kk(t)``, Eq. (173)."""
    return s.sigma_w**2 + delta_eta(s, k, t)


def zeta(s: Setting, k: ArrayLike, t: ArrayLike) -> np.ndarray:
    """``zeta_k(t) = G^a_kk(t) = eta_k(t) - sigma_w^2 + sigma_a^2`` (``eta - zeta`` conserved)."""
    return s.sigma_a**2 + delta_eta(s, k, t)


def rho(s: Setting, k: ArrayLike, t: ArrayLike) -> np.ndarray:
    """Eigenvalues of the hidden-representation kernel, Eq. (12).

    ``rho_k(t) = lambda_k (sigma_w^2 + Delta eta_k(t))``. Broadcasts over ``k`` and
    ``t``; finite for every t in [0, inf]; ``rho(s, k, 0) == sigma_w**2 * lambda_k``.
    """
    md, tt = grid(s, k, t)
    sw2 = s.sigma_w**2

    def f(m: Modes, tb: np.ndarray) -> np.ndarray:
        out = _delta_eta(_xi(m, tb), m.S)
        out += sw2
        out *= m.lam
        return out

    return blockwise(f, md, tt)


def mode_loss(s: Setting, k: ArrayLike, t: ArrayLike) -> np.ndarray:
    """Per-mode population loss ``lambda_k (theta_k - xi_k/gamma0)^2 / 2`` (Eq. 118).

    The residual ``gamma0 theta_k - xi_k`` is computed in closed form,
    ``S r e (1 + r^2)(1 + r v) / ((1 + r^2 e)(1 - r^2)(1 - v^2))``, so the loss
    keeps full relative accuracy as it decays like ``exp(-2 b t)``.
    """
    md, tt = grid(s, k, t)

    def f(m: Modes, tb: np.ndarray) -> np.ndarray:
        _, e, ome, A, P1, P2 = _xi_factors(m, tb)
        r = m.r
        v = r * ome / A
        # gap = S r e (1 + r^2)(1 + r v) A / ((1 - r)(1 + r) P1 P2), grouped into factors
        # that stay bounded (e / P1 <= 1 / (r (1 + r)), S r / (1 - r) ~ 2 gamma0 theta_k)
        gap = (m.S * r / m.one_minus_r) * (e / P1) * (A / P2) * (1.0 + r * r) * (
            (1.0 + r * v) / (1.0 + r))
        return 0.5 * m.lam * (gap / s.gamma0) ** 2

    return blockwise(f, md, tt)


def loss(s: Setting, t: ArrayLike, D: int | None = None) -> np.ndarray:
    """Total population loss ``sum_k mode_loss`` over modes ``1..D`` at times ``t``."""
    lam, _ = s.spectra(D)
    k = np.arange(1, lam.size + 1, dtype=np.float64)
    tt = np.asarray(t, dtype=np.float64)
    return mode_loss(s, k, tt[..., None]).sum(axis=-1)


def alpha_eff(s: Setting, k: ArrayLike, t: ArrayLike) -> np.ndarray:
    """Local exponent ``-d log rho_k(t) / d log k``, Eq. (14), exact.

    Differentiates the closed form analytically with respect to ``log k``
    (``lambda_k = lambda0 k^-alpha``, ``theta_k = theta0 k^-beta/2``); needs a
    :class:`~specdyn.PowerLawSetting`. Finite for every t in [0, inf]; equals
    ``alpha`` at ``t = 0``.
    """
    p = require_power_law(s, "alpha_eff")
    md, tt = grid(p, k, t)
    sw2 = p.sigma_w**2

    def f(m: Modes, tb: np.ndarray) -> np.ndarray:
        x, e, ome, A, P1, P2 = _xi_factors(m, tb)
        r, S = m.r, m.S
        # log-derivatives of the mode constants with respect to log k
        dlog_r = -0.5 * p.beta * S / m.q
        dlog_b = -p.alpha - 2.0 * p.beta * (m.m / m.q) ** 2
        # x e^-x (0 at x = inf: e is exactly 0 there, so clip x) and
        # x / (e^x - 1) = x e^-x / (1 - e^-x) (1 at x = 0)
        xe = np.minimum(x, 1e3) * e
        x_over_expm1 = np.divide(xe, ome, out=np.ones_like(xe), where=ome > 0)
        rr = r * r
        dA = rr * (2.0 * dlog_r) * e - (rr * dlog_b) * xe
        dP1 = (r * dlog_r) * ((1.0 + 2.0 * r) * e - 1.0) - (r * (1.0 + r) * dlog_b) * xe
        dP2 = (r * dlog_r) * (1.0 - (1.0 - 2.0 * r) * e) + (r * m.one_minus_r * dlog_b) * xe
        dlog_xi = dA / A
        dlog_xi -= dP1 / P1
        dlog_xi -= dP2 / P2
        dlog_xi += dlog_r + dlog_b * x_over_expm1
        xi_ = (S * r) * ome * A / (P1 * P2)
        d_delta_eta = xi_ * (2.0 * xi_ / _hypot_S(S, 2.0 * xi_)) * dlog_xi
        d_delta_eta /= sw2 + _delta_eta(xi_, S)
        return p.alpha - d_delta_eta

    return blockwise(f, md, tt)
