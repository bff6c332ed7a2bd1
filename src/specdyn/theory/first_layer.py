"""Second layer frozen, first layer trained (Appendices B and C).

With ``c = sigma_a^2 / gamma0^2`` and ``z_k(t) = c lambda_k t`` the spectrum is
Eq. (84): ``rho_k = lambda_k sigma_w^2 + lambda_k mu_k (1 - exp(-z_k))^2 / c``.
The local exponent is Eq. (98); the boundaries ``k_learn``, ``k1``, ``k2(t)``,
``t*`` and the three regions of Eq. (113) follow Appendix C.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from specdyn.settings import PowerLawSetting, Setting, as_modes, as_times
from specdyn.theory._modes import require_power_law


def _c(s: Setting) -> float:
    return s.sigma_a**2 / s.gamma0**2


def _z(s: Setting, k: ArrayLike, t: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    kk = as_modes(s, k)
    tt = as_times(t)
    try:
        np.broadcast_shapes(kk.shape, tt.shape)
    except ValueError:
        raise ValueError(
            f"k and t have shapes that do not broadcast: k{kk.shape}, t{tt.shape}"
        ) from None
    return kk, _c(s) * s.lam(kk) * tt


def rho_first_layer(s: Setting, k: ArrayLike, t: ArrayLike) -> np.ndarray:
    """Spectrum with the second layer frozen, Eq. (84). Finite for t in [0, inf]."""
    kk, z = _z(s, k, t)
    lam = s.lam(kk)
    return lam * s.sigma_w**2 + lam * s.mu(kk) * np.expm1(-z) ** 2 / _c(s)


def xi_first_layer(s: Setting, k: ArrayLike, t: ArrayLike) -> np.ndarray:
    """``G^wa_kk(t) = gamma0 theta_k (1 - exp(-z_k))``, Eq. (71) with ``G^wa(0) = 0``."""
    kk, z = _z(s, k, t)
    return -s.gamma0 * np.sqrt(s.mu(kk)) * np.expm1(-z)


def alpha_eff_first_layer(s: Setting, k: ArrayLike, t: ArrayLike) -> np.ndarray:
    """Local exponent with the second layer frozen, Eq. (98).

    ``alpha + Q/(1+Q) [beta + 2 alpha z/(e^z - 1)]`` with
    ``Q = mu_k (1 - e^-z)^2 / (c sigma_w^2)``; ``z/(e^z - 1)`` is taken as 1 at
    ``z = 0`` and 0 at ``z = inf``.
    """
    p = require_power_law(s, "alpha_eff_first_layer")
    kk, z = _z(p, k, t)
    Q = p.mu(kk) * np.expm1(-z) ** 2 / (_c(p) * p.sigma_w**2)
    zc = np.minimum(z, 700.0)  # beyond this the ratio underflows to 0 anyway
    ratio = np.divide(zc, np.expm1(zc), out=np.ones_like(zc), where=zc > 0)
    return p.alpha + Q / (1.0 + Q) * (p.beta + 2.0 * p.alpha * ratio)


def k_learn_first_layer(s: PowerLawSetting, t: ArrayLike) -> np.ndarray:
    """``k_learn(t) = (c lambda0 t)^(1/alpha)``, Eq. (100)."""
    p = require_power_law(s, "k_learn_first_layer")
    return (_c(p) * p.lambda0 * as_times(t)) ** (1.0 / p.alpha)


def k1(s: PowerLawSetting) -> float:
    """``k1 = (mu0 / (c sigma_w^2))^(1/beta)``, Eq. (104): learned modes below go as alpha+beta."""
    p = require_power_law(s, "k1")
    return float((p.mu0 / (_c(p) * p.sigma_w**2)) ** (1.0 / p.beta))


def k2(s: PowerLawSetting, t: ArrayLike) -> np.ndarray:
    """``k2(t) = (c lambda0^2 mu0 t^2 / sigma_w^2)^(1/(2 alpha + beta))``, Eq. (109)."""
    p = require_power_law(s, "k2")
    tt = as_times(t)
    return (_c(p) * p.lambda0**2 * p.mu0 * tt**2 / p.sigma_w**2) ** (
        1.0 / (2.0 * p.alpha + p.beta)
    )


def t_star(s: PowerLawSetting) -> float:
    """Time where ``k1`` and ``k2(t)`` meet (on ``k_learn``), Eq. (111)."""
    p = require_power_law(s, "t_star")
    c = _c(p)
    return float((p.mu0 / (c * p.sigma_w**2)) ** (p.alpha / p.beta) / (c * p.lambda0))


def k_cross_first_layer(s: PowerLawSetting, t: ArrayLike) -> np.ndarray:
    """``k_cross(t)``: ``k1`` after ``t*`` and ``k2(t)`` before, Eq. (112)."""
    tt = as_times(t)
    return np.where(tt > t_star(s), k1(s), k2(s, tt))


def region_first_layer(s: PowerLawSetting, k: ArrayLike, t: ArrayLike) -> np.ndarray:
    """Region labels of Eq. (113): "I" (alpha), "II" (3 alpha + beta), "III" (alpha + beta)."""
    p = require_power_law(s, "region_first_layer")
    kk = as_modes(p, k)
    tt = as_times(t)
    kc = k_cross_first_layer(p, tt)
    kl = k_learn_first_layer(p, tt)
    return np.where(kk > kc, "I", np.where(kk > kl, "II", "III"))
