"""Independent evaluations that the theory figures' claims hold their tables against.

The tables are written by the closed forms of :mod:`specdyn.theory` (``alpha_eff``,
``rho``, the boundaries, Eq. 84), which the figures draw. A convention error inside one
of them, or a clock off by a factor, would pass every claim that reads the same
function; these evaluations share none of that code:

- their own inputs: the setting of App. G written out (:func:`app_g_setting`: ``lambda0
  = 1``, ``mu0 = 1/zeta(alpha + beta)``, ``gamma0 = ratio S / theta0``), not through
  ``PowerLawSetting.paper``;
- the ODE oracles of :mod:`specdyn.theory.oracles` (Eqs. 144-145, Eq. 69), integrated
  at the table's own times, with central differences in ``log k`` for the exponents;
- the quadrature of Eq. (181) for the time a mode reaches a level (the boundaries);
- a second formula: ``alpha_eff`` at the fixed point ``t = inf`` (:func:`alpha_eff_inf`).

The ODE solves are cached: they depend on the setting, the mode and the times only.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.special import zeta as riemann_zeta

from specdyn.settings import PowerLawSetting
from specdyn.theory import oracles

#: Step in ``log k`` of the differences, and the ODE's relative tolerance. The exponent is
#: the Richardson combination of the steps ``h`` and ``2h`` (truncation ``O(h^4)``); the
#: oracle's own error, dominated by the ODE's ``~rtol / h`` where ``alpha_eff`` swings
#: fastest (the sinh phase of the deep feature-learning setting), was measured at 2.5e-5 at
#: most (k = 1 there), below 4e-6 at the other modes the claims use, when it was built.
FD_STEP, ODE_RTOL = 3e-3, 1e-13


def app_g_setting(alpha: float, beta: float, sigma_w: float, sigma_a: float,
                  gamma0_ratio: float) -> PowerLawSetting:
    """App. G's setting with the constructor: ``lambda_k = k^-alpha``, ``mu_k = k^-beta /
    zeta(alpha + beta)`` (so that ``sum_k lambda_k mu_k = 1``), ``gamma0 = gamma0_ratio
    (sigma_w^2 + sigma_a^2) / sqrt(mu0)``: the oracle's inputs, written out here."""
    mu0 = 1.0 / float(riemann_zeta(alpha + beta))
    gamma0 = gamma0_ratio * (sigma_w**2 + sigma_a**2) / np.sqrt(mu0)
    return PowerLawSetting(alpha=alpha, beta=beta, sigma_w=sigma_w, sigma_a=sigma_a,
                           gamma0=float(gamma0), lambda0=1.0, mu0=mu0)


@lru_cache(maxsize=256)
def _gram(s: PowerLawSetting, k: float, t: tuple[float, ...]) -> dict[str, np.ndarray]:
    return oracles.gram_ode(s, k, np.asarray(t), rtol=ODE_RTOL)


@lru_cache(maxsize=256)
def _first_layer(s: PowerLawSetting, k: float, t: tuple[float, ...]) -> np.ndarray:
    return oracles.first_layer_ode(s, k, np.asarray(t), rtol=ODE_RTOL)


def gram(s: PowerLawSetting, k: float, t: np.ndarray) -> dict[str, np.ndarray]:
    """``xi, eta, zeta, rho`` of mode ``k`` at the finite times ``t`` (Eqs. 144-145, ODE)."""
    return _gram(s, float(k), tuple(float(x) for x in t))


def rho_first_layer(s: PowerLawSetting, k: float, t: np.ndarray) -> np.ndarray:
    """``rho_k(t)`` with the second layer frozen at the finite times ``t`` (Eq. 69, ODE)."""
    return _first_layer(s, float(k), tuple(float(x) for x in t))


def _log_derivative(f: object, k: float, h: float) -> np.ndarray:
    """``-d log f(k) / d log k``: second-order differences in ``log k`` at steps ``h`` and
    ``2h`` combined by Richardson extrapolation; central where ``k e^-2h >= 1`` (the
    oracles take modes >= 1), one-sided (three points) below."""
    g = lambda kk: np.log(f(kk))  # type: ignore[operator]  # noqa: E731
    central = k * np.exp(-2.0 * h) >= 1.0

    def diff(step: float) -> np.ndarray:
        if central:
            return -(g(k * np.exp(step)) - g(k * np.exp(-step))) / (2.0 * step)
        return -(-3.0 * g(k) + 4.0 * g(k * np.exp(step)) - g(k * np.exp(2.0 * step))) / (
            2.0 * step)

    return (4.0 * diff(h) - diff(2.0 * h)) / 3.0


def alpha_eff(s: PowerLawSetting, k: float, t: np.ndarray) -> np.ndarray:
    """Eq. (14) of both layers trained at the finite times ``t``: the ODE's ``rho`` (Eqs.
    144-145) differentiated in ``log k`` (step :data:`FD_STEP`)."""
    return _log_derivative(lambda kk: gram(s, kk, t)["rho"], k, FD_STEP)


def alpha_eff_first_layer(s: PowerLawSetting, k: float, t: np.ndarray) -> np.ndarray:
    """Eq. (85) with the second layer frozen at the finite times ``t``: the ODE's ``rho``
    (Eq. 69) differentiated in ``log k`` (step :data:`FD_STEP`)."""
    return _log_derivative(lambda kk: rho_first_layer(s, kk, t), k, FD_STEP)


def alpha_eff_inf(s: PowerLawSetting, k: np.ndarray) -> np.ndarray:
    """``alpha_eff(k, t = inf)`` by a second formula: at the fixed point ``xi_k = gamma0
    theta_k`` (Eq. 15), ``rho_k = lambda_k (sigma_w^2 + Delta eta(xi_k))`` with ``Delta eta
    = (sqrt(S^2 + 4 xi^2) - S) / 2`` and ``d xi_k / d log k = -beta xi_k / 2`` give
    ``alpha + beta xi^2 / (sqrt(S^2 + 4 xi^2) (sigma_w^2 + Delta eta))``."""
    kk = np.asarray(k, dtype=np.float64)
    xi = s.gamma0 * np.sqrt(s.mu0) * kk ** (-s.beta / 2.0)
    root = np.hypot(s.S, 2.0 * xi)
    delta_eta = 2.0 * xi * xi / (s.S + root)
    return s.alpha + s.beta * xi * xi / (root * (s.sigma_w**2 + delta_eta))


def time_to_level(s: PowerLawSetting, k: float, level: str) -> float:
    """The time mode ``k`` reaches a boundary's level by the quadrature of Eq. (181):
    ``"k_learn"`` ``xi = 0.9 gamma0 theta_k`` (Eq. 182), ``"k_cross"`` ``xi = sqrt(sigma_w^2
    (2 sigma_w^2 + sigma_a^2))`` (Eq. 187), ``"k_layer"`` ``xi = S`` (Eq. 192)."""
    C = {"k_learn": 0.9 * s.gamma0 * np.sqrt(s.mu0) * k ** (-s.beta / 2.0),
         "k_cross": s.sigma_w * np.sqrt(2.0 * s.sigma_w**2 + s.sigma_a**2),
         "k_layer": s.S}[level]
    return oracles.time_to_xi_quadrature(s, float(k), float(C))


def learned_fraction_first_layer(s: PowerLawSetting, k: float, t: np.ndarray) -> np.ndarray:
    """``xi_k(t) / (gamma0 theta_k)`` with the second layer frozen, from the ODE's ``rho``:
    ``xi^2 = sigma_a^2 (rho / lambda_k - sigma_w^2)`` (Eq. 76)."""
    lam = s.lambda0 * k ** -s.alpha
    xi2 = s.sigma_a**2 * (rho_first_layer(s, k, t) / lam - s.sigma_w**2)
    return np.sqrt(np.maximum(xi2, 0.0)) / (s.gamma0 * np.sqrt(s.mu0) * k ** (-s.beta / 2.0))


def time_to_xi_first_layer(s: PowerLawSetting, k: float, C: float) -> float:
    """The time ``xi_k`` reaches ``C`` with the second layer frozen, by quadrature of Eq.
    (69): ``t = int_0^C dxi / ((sigma_a^2 / gamma0) lambda_k (theta_k - xi / gamma0))``;
    inf if ``C >= gamma0 theta_k``."""
    from scipy.integrate import quad

    lam, theta = s.lambda0 * k ** -s.alpha, np.sqrt(s.mu0) * k ** (-s.beta / 2.0)
    g, sa2 = s.gamma0, s.sigma_a**2
    if C >= g * theta:
        return float("inf")
    val, _ = quad(lambda x: 1.0 / (sa2 / g * lam * (theta - x / g)), 0.0, C, epsabs=0.0,
                  epsrel=1e-13, limit=200)
    return float(val)
