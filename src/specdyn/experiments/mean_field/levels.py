"""The levels the mean-field prefactor claims compare with: exact, from the initial law and
the data, computed without the particle engine.

* :func:`initial_function_gap`: ``E (f_N - f_ref)^2`` at ``t = 0`` between two independent
  draws of ``N`` and ``N_ref`` i.i.d. initial particles (closed form up to a one-dimensional
  Gauss-Hermite quadrature);
* :func:`first_step_distance`: the synchronously coupled per-particle squared distance after
  one step, ``dt^2`` times the mean squared difference of the two drifts at the common start;
* :func:`initial_rate`: ``dE/dt`` of the test error at ``t = 0`` of the mean-field flow (the
  initial law's neural tangent kernel fitting the labels): the clock of a run;
* :func:`configurational_temperature`: ``E[theta . grad V(theta)] / (D + 1)`` over the particles,
  which equals the temperature ``tau`` for the Gibbs measure ``exp(-N F(mu_N) / tau)`` of the
  ``N``-particle system (integration by parts: equipartition), at every ``N``;
* :func:`step_noise_temperature`: the temperature one step injected, read off the particles
  before and after it less the drift.

Notation as :mod:`specdyn.sim.langevin`: particles ``theta = (a, w)``, initial law
``a ~ N(0, s_a^2)``, ``w ~ N(0, s_w^2 I_D / D)``, ``V(theta) = dF/dmu(mu, theta) =
(1/M) sum_m r_m a sigma(w . x_m) + (lambda'/2) |theta|^2`` with ``r = f_mu - y``. The
expectations over the initial law are Monte-Carlo averages over ``samples`` particles of a
fixed generator (not the run's), or quadrature where one dimension suffices; the activation
is :func:`specdyn.models.get_activation`'s (its value and derivative), nothing of the engine.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from specdyn.models import numpy_activation

#: The seed of the levels' own Monte-Carlo draws of the initial law (fixed, not the run's).
LEVELS_SEED = 20261206
#: Monte-Carlo particles of the initial law: the relative error of the levels is about
#: ``1 / sqrt(samples)``, 1 %.
SAMPLES = 8192
#: The initial rate's: a mean over the test set of a mean over the weights, its relative
#: error is smaller (0.4 % between 2048 and 8192 samples on the quick budget), and it is the
#: costliest (the samples times the training and test sets).
RATE_SAMPLES = 2048
_CHUNK = 1024


def _weights(D: int, s_w: float, samples: int, key: str) -> np.ndarray:
    """``samples`` first-layer weights ``w ~ N(0, s_w^2 I_D / D)`` of a fixed generator."""
    from specdyn.sim import derive_seed

    rng = np.random.default_rng(derive_seed(LEVELS_SEED, key))
    return rng.standard_normal((samples, D)) * (s_w / math.sqrt(D))


def initial_function_gap(activation: str, x: np.ndarray, init_scale: tuple[float, float],
                         N_values: Any, reference_N: int) -> np.ndarray:
    """``mean_m E (f_N(x_m) - f_ref(x_m))^2`` at ``t = 0``: ``(1/N + 1/N_ref) s_a^2 mean_m
    E_z sigma(s_w |x_m| z / sqrt(D))^2`` (``E a = 0``: both functions have mean zero, and
    ``w . x ~ N(0, s_w^2 |x|^2 / D)``), by 64-point Gauss-Hermite quadrature in ``z``; one
    value per ``N`` of ``N_values``."""
    sigma, _ = numpy_activation(activation)
    s_a, s_w = init_scale
    z, wq = np.polynomial.hermite_e.hermegauss(64)
    wq = wq / wq.sum()
    scale = s_w * np.linalg.norm(x, axis=1) / math.sqrt(x.shape[1])
    second = (sigma(scale[:, None] * z[None, :]) ** 2) @ wq
    N = np.asarray(N_values, dtype=np.float64)
    return (1.0 / N + 1.0 / reference_N) * s_a ** 2 * float(second.mean())


def first_step_distance(activation: str, x: np.ndarray, init_scale: tuple[float, float],
                        N_values: Any, reference_N: int, dt: float,
                        samples: int = SAMPLES) -> np.ndarray:
    """Expected ``(1/N) sum_i |theta_i(dt) - bar theta_i(dt)|^2`` after one step of the
    synchronous coupling of an ``N``-particle system to copies driven by an independent
    ``N_ref``-particle reference, from the same i.i.d. start and the same noise; one value
    per ``N`` of ``N_values``.

    The noise and the weight decay cancel; the drifts differ by ``d_i = (1/M) sum_m Delta_m
    g_m(theta_i)``, ``g_m = grad_theta [a sigma(w . x_m)]``, ``Delta = f_N - f_ref``. Over the
    initial law, ``Delta`` without particle ``i``'s own term has covariance
    ``((N-1)/N^2 + 1/N_ref) K``, ``K_mm' = s_a^2 E[sigma_m sigma_m']``, independent of
    ``theta_i``, and ``E[g_m . g_m'] = J_mm' = E[sigma_m sigma_m'] + s_a^2 E[sigma'_m sigma'_m']
    x_m . x_m'``; particle ``i``'s own term adds ``E |(1/M) sum_m a sigma_m g_m|^2 / N^2``. So
    the distance is ``dt^2 [((N-1)/N^2 + 1/N_ref) sum K J / M^2 + own / N^2]``, with the
    expectations over ``w`` by Monte Carlo (two independent halves of ``samples`` for ``K``
    and ``J``, so that their product is unbiased).
    """
    sigma, dsigma = numpy_activation(activation)
    s_a, s_w = init_scale
    M, D = x.shape
    half = max(samples // 2, 1)
    W = _weights(D, s_w, 2 * half, "first step")
    mats = []
    for part in (W[:half], W[half:]):
        S = np.zeros((M, M))
        Sd = np.zeros((M, M))
        for lo in range(0, half, _CHUNK):
            Z = x @ part[lo:lo + _CHUNK].T
            s, ds = sigma(Z), dsigma(Z)
            S += s @ s.T
            Sd += ds @ ds.T
        mats.append((S / half, Sd / half))
    (S1, _), (S2, Sd2) = mats
    K = s_a ** 2 * S1
    J = S2 + s_a ** 2 * Sd2 * (x @ x.T)
    cross = float(np.sum(K * J)) / M ** 2
    # particle i's own term: E a^2 = s_a^2, E a^4 = 3 s_a^4
    own = 0.0
    for lo in range(0, 2 * half, _CHUNK):
        Z = x @ W[lo:lo + _CHUNK].T
        s, ds = sigma(Z), dsigma(Z)
        q = np.mean(s * s, axis=0)  # (1/M) sum_m sigma_m^2, per sample
        v = (s * ds).T @ x / M  # (1/M) sum_m sigma_m sigma'_m x_m
        own += float(np.sum(s_a ** 2 * q * q + 3 * s_a ** 4 * np.sum(v * v, axis=1)))
    own /= 2 * half
    N = np.asarray(N_values, dtype=np.float64)
    return dt ** 2 * (((N - 1) / N ** 2 + 1.0 / reference_N) * cross + own / N ** 2)


def initial_gap_scatter(activation: str, x: np.ndarray, init_scale: tuple[float, float],
                        N_values: Any, reference_N: int, pool: int,
                        samples: int = SAMPLES) -> np.ndarray:
    """``Var g_N / (E g_N)^2`` of the measured function gap at ``t = 0``, one value per ``N``.

    ``g_N = (1/R) sum_r |e_r - u|^2 / M`` over the ``R = pool / N`` systems partitioning
    ``pool`` i.i.d. initial particles, ``e_r = (1/N) sum_i xi_i`` with ``xi_i = a_i
    sigma(w_i . x)`` (mean zero, covariance ``K``), against one reference ``u`` of
    ``reference_N`` particles shared by every system. The three terms' cross moments vanish
    (odd in ``a``), so ``M^2 Var g_N = V(N) / R + 4 tr(K^2) / (pool N_ref) + V(N_ref)``, with
    ``V(n) = Var |e|^2 = [E|xi|^4 - (tr K)^2 + 2 (n - 1) tr(K^2)] / n^3`` (exact, not
    Gaussian: ``E|xi|^4 = 3 s_a^4 E (sum_m sigma_m^2)^2``), and ``M E g_N = (1/N + 1/N_ref)
    tr K``. Monte Carlo over ``w`` as :func:`first_step_distance` (``tr(K^2)`` from two
    independent halves, unbiased).
    """
    sigma, _ = numpy_activation(activation)
    s_a, s_w = init_scale
    M, D = x.shape
    half = max(samples // 2, 1)
    W = _weights(D, s_w, 2 * half, "gap scatter")
    Ks, q2 = [], 0.0
    for part in (W[:half], W[half:]):
        S = np.zeros((M, M))
        for lo in range(0, half, _CHUNK):
            s = sigma(x @ part[lo:lo + _CHUNK].T)
            S += s @ s.T
            q2 += float(np.sum(np.sum(s * s, axis=0) ** 2))
        Ks.append(s_a ** 2 * S / half)
    tr = 0.5 * float(np.trace(Ks[0]) + np.trace(Ks[1]))
    tr2 = float(np.sum(Ks[0] * Ks[1]))
    xi4 = 3 * s_a ** 4 * q2 / (2 * half)
    N = np.asarray(N_values, dtype=np.float64)

    def V(n: Any) -> Any:
        return (xi4 - tr ** 2 + 2 * (n - 1) * tr2) / n ** 3

    var = V(N) * N / pool + 4 * tr2 / (pool * reference_N) + V(float(reference_N))
    return var / ((1.0 / N + 1.0 / reference_N) * tr) ** 2


def initial_rate(activation: str, x: np.ndarray, y: np.ndarray, x_test: np.ndarray,
                 y_test: np.ndarray, init_scale: tuple[float, float],
                 samples: int = RATE_SAMPLES) -> float:
    """``dE/dt`` at ``t = 0`` of the test error ``E = mean_test (f - y)^2`` of the mean-field
    flow from the initial law, trained on ``(x, y)``.

    At ``t = 0`` ``f = 0`` (``E a = 0``), the weight decay and the temperature move ``f`` by
    ``E[theta . grad g] = E[a Delta g] = 0``, and ``d f(x) / dt = (1/M) sum_m y_m
    K(x, x_m)`` with the tangent kernel ``K(x, x') = E[sigma sigma' + s_a^2 sigma' sigma'
    x . x']`` (over ``w``); so ``dE/dt = -2 mean_test y(x) df(x)/dt``. Monte Carlo over
    ``samples`` weights; the ``N``-particle run's own rate differs by its tangent kernel's
    ``O(1/sqrt(N))`` fluctuation.
    """
    sigma, dsigma = numpy_activation(activation)
    s_a, s_w = init_scale
    M, D = x.shape
    W = _weights(D, s_w, samples, "initial rate")
    dfdt = np.zeros(len(x_test))
    for lo in range(0, samples, _CHUNK):
        w = W[lo:lo + _CHUNK]
        Z, Zt = x @ w.T, x_test @ w.T
        alpha = sigma(Z).T @ y / M  # (S,)
        beta = (dsigma(Z) * y[:, None]).T @ x / M  # (S, D)
        dfdt += sigma(Zt) @ alpha + s_a ** 2 * np.sum(dsigma(Zt) * (x_test @ beta.T), axis=1)
    dfdt /= samples
    return float(-2.0 * np.mean(y_test * dfdt))


def grad_V(p: np.ndarray, x: np.ndarray, y: np.ndarray, activation: str,
            weight_decay: float) -> np.ndarray:
    """``grad V(theta_i)`` of the ``(N, D+1)`` particles on ``(x, y)``, rows ``(d/da,
    d/dw)``, in numpy (not the engine's): ``V = (1/M) sum_m r_m a sigma(w . x_m) +
    (lambda'/2) |theta|^2``, ``r = f_mu - y`` of the particles' own measure."""
    sigma, dsigma = numpy_activation(activation)
    a, w = p[:, 0], p[:, 1:]
    Z = x @ w.T
    s = sigma(Z)
    r = s @ a / len(p) - y
    grad_a = s.T @ r / len(x) + weight_decay * a
    grad_w = (dsigma(Z) * r[:, None]).T @ x / len(x) * a[:, None] + weight_decay * w
    return np.column_stack([grad_a, grad_w])


def configurational_temperature(particles: np.ndarray, x: np.ndarray, y: np.ndarray,
                                activation: str, weight_decay: float) -> float:
    """``(1/N) sum_i theta_i . grad V(theta_i) / (D + 1)`` of the ``(N, D+1)`` particles on
    the training data ``(x, y)``: the temperature ``tau`` at the ``N``-particle Gibbs measure
    ``exp(-N F(mu_N) / tau)`` (``grad_i N F(mu_N) = grad V(theta_i)``; integrating
    ``div(theta e^{-U/tau})`` gives ``E theta . grad U = tau`` per coordinate), up to the
    ``O(dt)`` bias of the Euler-Maruyama step; 0 at a zero-temperature stationary point.
    The gradient is written here again, in numpy, not taken from the engine."""
    p = np.asarray(particles, dtype=np.float64)
    return float(np.mean(np.sum(p * grad_V(p, x, y, activation, weight_decay), axis=1))
                 / p.shape[1])


def step_noise_temperature(before: np.ndarray, after: np.ndarray, x: np.ndarray,
                           y: np.ndarray, activation: str, weight_decay: float,
                           dt: float) -> float:
    """The temperature one Euler-Maruyama step ``theta' = theta - dt grad V(theta) +
    sqrt(2 tau dt) xi`` injected: ``mean |theta' - theta + dt grad V(theta)|^2 / (2 dt)`` per
    coordinate, over the ``(N, D+1)`` particles ``before`` and ``after`` the step, with the
    drift of :func:`grad_V` (the particles' own measure: a subset of a population gives its
    drift to ``O(1/sqrt(N))`` of ``r``, which moves the result by ``O(dt^2 / N)``). Exact in
    expectation; its relative sd is ``sqrt(2 / (N (D+1)))`` (a chi-square mean)."""
    p0 = np.asarray(before, dtype=np.float64)
    xi = np.asarray(after, dtype=np.float64) - p0 + dt * grad_V(p0, x, y, activation,
                                                                 weight_decay)
    return float(np.mean(xi * xi) / (2.0 * dt))
