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


def _log_c(s: Setting) -> float:
    """``log c = log(sigma_a^2 / gamma0^2)``: ``c`` itself can over- or underflow."""
    return 2.0 * (float(np.log(s.sigma_a)) - float(np.log(s.gamma0)))


def _log_lam_mu(s: Setting, kk: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(log lambda_k, log mu_k)``; ``log mu_k = -inf`` where an aligned ``mu_k`` is 0."""
    if isinstance(s, PowerLawSetting):
        log_k = np.log(kk)
        return np.log(s.lambda0) - s.alpha * log_k, np.log(s.mu0) - s.beta * log_k
    with np.errstate(divide="ignore"):
        return np.log(s.lam(kk)), np.log(s.mu(kk))


def _exp(x: ArrayLike) -> np.ndarray:
    """``exp`` that returns 0 / inf past the float64 range without a warning."""
    with np.errstate(over="ignore", under="ignore"):
        return np.exp(x)


def _z(s: Setting, k: ArrayLike, t: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(log lambda_k, log mu_k, z_k(t) = c lambda_k t)``, ``z`` in log space (0 at t = 0)."""
    kk = as_modes(s, k)
    tt = as_times(t)
    try:
        np.broadcast_shapes(kk.shape, tt.shape)
    except ValueError:
        raise ValueError(
            f"k and t have shapes that do not broadcast: k{kk.shape}, t{tt.shape}"
        ) from None
    log_lam, log_mu = _log_lam_mu(s, kk)
    with np.errstate(divide="ignore"):
        z = _exp(_log_c(s) + log_lam + np.log(tt))
    return log_lam, log_mu, z


def rho_first_layer(s: Setting, k: ArrayLike, t: ArrayLike) -> np.ndarray:
    """Spectrum with the second layer frozen, Eq. (84). Finite for t in [0, inf]."""
    log_lam, log_mu, z = _z(s, k, t)
    learned = _exp(log_lam + log_mu - _log_c(s))  # lambda_k mu_k / c, bounded by the setting
    return _exp(log_lam) * s.sigma_w**2 + learned * np.expm1(-z) ** 2


def xi_first_layer(s: Setting, k: ArrayLike, t: ArrayLike) -> np.ndarray:
    """``G^wa_kk(t) = gamma0 theta_k (1 - exp(-z_k))``, Eq. (71) with ``G^wa(0) = 0``."""
    _, log_mu, z = _z(s, k, t)
    return -_exp(np.log(s.gamma0) + 0.5 * log_mu) * np.expm1(-z)


def alpha_eff_first_layer(s: Setting, k: ArrayLike, t: ArrayLike) -> np.ndarray:
    """Local exponent with the second layer frozen, Eq. (98).

    ``alpha + Q/(1+Q) [beta + 2 alpha z/(e^z - 1)]`` with
    ``Q = mu_k (1 - e^-z)^2 / (c sigma_w^2)``; ``z/(e^z - 1)`` is taken as 1 at
    ``z = 0`` and 0 at ``z = inf``.
    """
    p = require_power_law(s, "alpha_eff_first_layer")
    _, log_mu, z = _z(p, k, t)
    # Q / (1 + Q) = 1 / (1 + 1/Q), with 1/Q in log space (Q itself may overflow)
    with np.errstate(divide="ignore"):
        log_inv_Q = _log_c(p) + 2.0 * np.log(p.sigma_w) - log_mu - 2.0 * np.log(-np.expm1(-z))
    frac = 1.0 / (1.0 + _exp(log_inv_Q))
    zc = np.minimum(z, 700.0)  # beyond this the ratio underflows to 0 anyway
    ratio = np.divide(zc, np.expm1(zc), out=np.ones_like(zc), where=zc > 0)
    return p.alpha + frac * (p.beta + 2.0 * p.alpha * ratio)


def k_learn_first_layer(s: PowerLawSetting, t: ArrayLike) -> np.ndarray:
    """``k_learn(t) = (c lambda0 t)^(1/alpha)``, Eq. (100); inf beyond float64."""
    p = require_power_law(s, "k_learn_first_layer")
    with np.errstate(divide="ignore"):
        return _exp((_log_c(p) + np.log(p.lambda0) + np.log(as_times(t))) / p.alpha)


def _log_k1(p: PowerLawSetting) -> float:
    return float((np.log(p.mu0) - _log_c(p) - 2.0 * np.log(p.sigma_w)) / p.beta)


def _power(base: float, log_base: float, exponent: float) -> float:
    """``base ** exponent`` in float64 (inf past its range); ``log_base`` where ``base``
    itself is not a normal float."""
    with np.errstate(over="ignore", under="ignore"):
        if np.isfinite(base) and base >= np.finfo(np.float64).tiny:
            return float(np.power(base, exponent))
        return float(np.exp(exponent * log_base))


def k1(s: PowerLawSetting) -> float:
    """``k1 = (mu0 / (c sigma_w^2))^(1/beta)``, Eq. (104): learned modes below go as alpha+beta.

    inf where it lies beyond float64.
    """
    p = require_power_law(s, "k1")
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):  # 0 * inf: NaN, logs
        base = np.float64(p.mu0) / p.sigma_w**2 * (np.float64(p.gamma0) / p.sigma_a) ** 2
    return _power(float(base), _log_k1(p) * p.beta, 1.0 / p.beta)


def k2(s: PowerLawSetting, t: ArrayLike) -> np.ndarray:
    """``k2(t) = (c lambda0^2 mu0 t^2 / sigma_w^2)^(1/(2 alpha + beta))``, Eq. (109)."""
    p = require_power_law(s, "k2")
    tt = as_times(t)
    with np.errstate(divide="ignore"):
        log_base = (_log_c(p) + 2.0 * np.log(p.lambda0) + np.log(p.mu0) + 2.0 * np.log(tt)
                    - 2.0 * np.log(p.sigma_w))
    return _exp(log_base / (2.0 * p.alpha + p.beta))


def t_star(s: PowerLawSetting) -> float:
    """Time where ``k1`` and ``k2(t)`` meet (on ``k_learn``), Eq. (111); inf beyond float64."""
    p = require_power_law(s, "t_star")
    return float(_exp(p.alpha * _log_k1(p) - _log_c(p) - np.log(p.lambda0)))


def k_cross_first_layer(s: PowerLawSetting, t: ArrayLike) -> np.ndarray:
    """``k_cross(t)``: ``k1`` after ``t*`` and ``k2(t)`` before, Eq. (112)."""
    tt = as_times(t)
    # t = inf is past t* even where t* itself lies beyond float64
    return np.where((tt > t_star(s)) | np.isinf(tt), k1(s), k2(s, tt))

def region_first_layer(s: PowerLawSetting, k: ArrayLike, t: ArrayLike) -> np.ndarray:
    """Region labels of Eq. (113): "I" (alpha), "II" (3 alpha + beta), "III" (alpha + beta)."""
    p = require_power_law(s, "region_first_layer")
    kk = as_modes(p, k)
    tt = as_times(t)
    kc = k_cross_first_layer(p, tt)
    kl = k_learn_first_layer(p, tt)
    return np.where(kk > kc, "I", np.where(kk > kl, "II", "III"))
