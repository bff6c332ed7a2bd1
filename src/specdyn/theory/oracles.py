"""Reference solvers used as independent test oracles for the closed forms.

Slow by design: they integrate the paper's ODEs (Eqs. 144-145, and Eq. 69 with
Eq. 76 for the first layer) and the time-to-reach quadrature of Eq. (181)
with tight tolerances, one mode at a time; and the ReLU kernel of the mean-field
lasso (:func:`relu_kernel_quadrature`) by quadrature over the angle.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.integrate import quad, solve_ivp

from specdyn.settings import Setting, as_modes, as_times


def _scalar_mode(s: Setting, k: float) -> tuple[float, float]:
    kk = as_modes(s, np.array([k], dtype=np.float64))
    return float(s.lam(kk)[0]), float(np.sqrt(s.mu(kk)[0]))


def gram_ode(s: Setting, k: float, t: ArrayLike, rtol: float = 1e-12) -> dict[str, np.ndarray]:
    """Integrate ``(xi, eta, zeta)`` of mode ``k`` through Eqs. (144)-(145).

    Returns a dict of arrays at the (finite) times ``t``. Uses LSODA (switching
    to BDF with the analytic Jacobian) because the approach to the fixed point
    is stiff for fast modes.
    """
    lam, theta = _scalar_mode(s, k)
    tt = as_times(t)
    if np.isinf(tt).any():
        raise ValueError("t must be finite for the ODE oracle")
    g = s.gamma0

    def f(_: float, y: np.ndarray) -> np.ndarray:
        xi, eta, zeta = y
        drive = lam / g * (theta - xi / g)
        d_eta = 2.0 * xi * drive
        return np.array([drive * (eta + zeta), d_eta, d_eta])

    def jac(_: float, y: np.ndarray) -> np.ndarray:
        xi, eta, zeta = y
        drive = lam / g * (theta - xi / g)
        dd = -lam / g**2
        return np.array([
            [dd * (eta + zeta), drive, drive],
            [2.0 * (drive + xi * dd), 0.0, 0.0],
            [2.0 * (drive + xi * dd), 0.0, 0.0],
        ])

    order = np.argsort(tt.ravel())
    ts = tt.ravel()[order]
    y0 = np.array([0.0, s.sigma_w**2, s.sigma_a**2])
    scale = max(g * theta, s.sigma_w**2, s.sigma_a**2)
    out = np.empty((3, ts.size))
    if ts[-1] == 0:
        out[:] = y0[:, None]
    else:
        sol = solve_ivp(f, (0.0, float(ts[-1])), y0, method="LSODA", jac=jac, t_eval=ts,
                        rtol=rtol, atol=rtol * 1e-3 * scale)
        if not sol.success:  # pragma: no cover - diagnostic
            raise RuntimeError(f"ODE oracle failed: {sol.message}")
        out = sol.y
    res = np.empty_like(out)
    res[:, order] = out
    shape = tt.shape
    return {"xi": res[0].reshape(shape), "eta": res[1].reshape(shape),
            "zeta": res[2].reshape(shape), "rho": lam * res[1].reshape(shape)}


def time_to_xi_quadrature(s: Setting, k: float, C: float) -> float:
    """Eq. (181) by quadrature.

    ``t*_k(C) = gamma0/lambda_k int_0^C dxi / ((theta_k - xi/gamma0) sqrt(4 xi^2 + S^2))``.
    """
    lam, theta = _scalar_mode(s, k)
    g, S = s.gamma0, s.S
    if C >= g * theta:
        return float("inf")

    def integrand(x: float) -> float:
        return 1.0 / ((theta - x / g) * np.sqrt(4.0 * x * x + S * S))

    val, _ = quad(integrand, 0.0, C, epsabs=0.0, epsrel=1e-13, limit=500)
    return float(g / lam * val)


def first_layer_ode(s: Setting, k: float, t: ArrayLike, rtol: float = 1e-12) -> np.ndarray:
    """``rho_k(t)`` with the second layer frozen, by integrating Eq. (69) for ``xi``.

    ``d xi/dt = (sigma_a^2/gamma0) lambda (theta - xi/gamma0)`` and, from Eq. (76),
    ``eta = sigma_w^2 + xi^2 / sigma_a^2``; returns ``lambda eta``.
    """
    lam, theta = _scalar_mode(s, k)
    tt = as_times(t)
    g, sa2 = s.gamma0, s.sigma_a**2
    order = np.argsort(tt.ravel())
    ts = tt.ravel()[order]
    if ts[-1] == 0:
        xi = np.zeros_like(ts)
    else:
        sol = solve_ivp(lambda _, y: sa2 / g * lam * (theta - y / g), (0.0, float(ts[-1])),
                        [0.0], method="LSODA", t_eval=ts, rtol=rtol,
                        atol=rtol * 1e-3 * g * theta, jac=lambda *_: [[-sa2 * lam / g**2]])
        xi = sol.y[0]
    res = np.empty_like(xi)
    res[order] = lam * (s.sigma_w**2 + xi**2 / sa2)
    return res.reshape(tt.shape)


def relu_kernel_quadrature(angle: float) -> float:
    """``E[relu(u . x) relu(v . x)]`` for unit ``u, v`` at ``angle`` (radians), ``x ~ N(0, I)``,
    by quadrature in the plane of ``u`` and ``v``: in polar coordinates ``(r, phi)`` the radial
    integral of ``r^3 exp(-r^2/2) / (2 pi)`` gives ``1/pi``, leaving ``(1/pi) int cos(phi)
    cos(phi - angle) dphi`` over the arc where both are positive. The oracle of
    :func:`specdyn.theory.mean_field.relu_gram` (closed form, Cho & Saul 2009).
    """
    t = float(angle)
    if not 0.0 <= t <= np.pi:
        raise ValueError(f"angle must be in [0, pi], got {angle}")
    val, _ = quad(lambda phi: np.cos(phi) * np.cos(phi - t), t - np.pi / 2, np.pi / 2,
                  epsabs=1e-14, epsrel=1e-13)
    return float(val / np.pi)
