"""Outlier escape during training: BBP crossing, trainability thresholds, SGD noise bulk.

Pure numpy, float64. The first related work (``docs/related-works.md``,
section 1): a linear student ``W`` (``P x D``) learns a low-rank teacher
``W* = theta u v^T`` (unit ``u`` in R^P, ``v`` in R^D) from inputs
``x ~ N(0, I_D)``, labels ``y = W* x + noise_std * eps``, loss
``(1/2) ||W x - y||^2`` averaged over a batch of ``B``. ``W0`` has i.i.d.
``N(0, sigma0^2 / D)`` entries and ``c = P / D``. (Its notes write ``N x M``
for ``P x D``, ``eta`` for the step size ``lr`` and ``n`` for the sample
count ``M``; the signatures here use the vocabulary of ``docs/concepts.md``.)

Population gradient descent (step ``lr``, ``Sigma = I``) is exactly
``W_t = a_t W0 + b_t W*`` with ``a_t = (1 - lr)^t``, ``b_t = 1 - a_t``, so
``W_t / (|a_t| sigma0)`` is the rectangular signal-plus-noise matrix of
Benaych-Georges & Nadakuditi with strength ``theta_eff = |b_t| theta / (|a_t| sigma0)``
(``specdyn.theory.rmt.rectangular_spike``): bulk edge ``|a_t| sigma0 (1 + sqrt c)``,
an outlier iff ``theta_eff > c^(1/4)``, located at ``|a_t| sigma0 s(theta_eff)``.

Status of the project's [D] hypotheses, as checked by ``tests/test_outlier_escape_*``:

* crossing time ``t* = ln(1 + x) / (-ln|1 - lr|)``, ``x = sigma0 c^(1/4) / theta``:
  exact for ``0 < lr < 1``. **Corrected** for ``1 < lr < 2``: ``a_t`` alternates
  in sign, ``|b_t| = 1 + |a_t|`` on odd steps, which escape earlier, at
  ``t > ln(x - 1) / (-ln|1 - lr|)`` (every odd step when ``x <= 1``); the
  formula above is only the even-step envelope. :func:`bbp_escape_step` gives the
  exact first step for both parities.
* online SGD, batch ``B``: mean-square contraction
  ``rho = 1 - 2 lr + lr^2 (1 + (D + 1)/B)`` and ``lr_c = 2B/(B + D + 1)``: exact
  for Gaussian inputs (``E[Sigma_B^2] = (1 + (D + 1)/B) I``); stationary per-entry
  variance ``v = lr s^2 / (2B - lr (B + D + 1))``: exact.
* SGD noise bulk edge ``sqrt(v D)(1 + sqrt c)``: the Marchenko-Pastur edge of an
  i.i.d. matrix with the right variance. **Only approximate**: the rows of
  ``W - W*`` share the same random input products, so they are Gaussian with a
  random, non-white column covariance whose spread grows as ``lr -> lr_c``.
  Measured (P = 150, D = 300, B = 16): within 1.5 % for ``lr <= 0.6 lr_c`` but
  about 24 % above it at ``lr = 0.9 lr_c``. Use it well below ``lr_c``.
* full-batch GD on ``M`` samples diverges iff ``lr > 2 / lambda_max(Sigma_hat)``
  (exact: the error evolves as ``(W - W_ls)(I - lr Sigma_hat)``); for Gaussian
  inputs ``lambda_max -> (1 + sqrt(D/M))^2``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from specdyn import _validate as v
from specdyn.theory import rmt

__all__ = [
    "OutlierPath",
    "TrainabilityPrediction",
    "bbp_crossing_time",
    "bbp_escape_step",
    "full_batch_critical_lr",
    "full_batch_critical_lr_asymptotic",
    "online_sgd_contraction",
    "online_sgd_critical_lr",
    "online_sgd_noise_edge",
    "online_sgd_path",
    "online_sgd_sq_error",
    "online_sgd_stationary_variance",
    "population_gd_path",
    "predict_trainability",
    "trainability_status",
]

# Above this effective strength W_t is the teacher to float64 precision (a_t ~ 0).
_HUGE = 1e100


@dataclass(frozen=True)
class OutlierPath:
    """Population-GD prediction for the top singular value of ``W_t``, at times ``t``.

    Attributes
    ----------
    t
        Steps (float64; integer steps are the physical ones).
    a, b
        ``a_t = (1 - lr)^t`` (``|1 - lr|^t`` with the sign of even/odd ``t``
        when ``lr > 1``) and ``b_t = 1 - a_t``.
    bulk_edge
        Top edge of the noise bulk, ``|a_t| sigma0 (1 + sqrt c)``.
    strength
        Effective rectangular spike strength ``|b_t| theta / (|a_t| sigma0)``
        (``inf`` where ``a_t = 0``).
    detected
        Whether an outlier exists (``strength > c^(1/4)``).
    singular_value
        Predicted top singular value: the outlier where detected, else the edge.
    left_overlap2, right_overlap2
        Predicted squared overlaps of the top left/right singular vectors with
        ``u`` and ``v``; 0 where not detected.
    """

    t: np.ndarray
    a: np.ndarray
    b: np.ndarray
    bulk_edge: np.ndarray
    strength: np.ndarray
    detected: np.ndarray
    singular_value: np.ndarray
    left_overlap2: np.ndarray
    right_overlap2: np.ndarray


def _check_common(theta: Any, sigma0: Any, c: Any, lr: Any) -> tuple[float, float, float, float]:
    th = v.nonnegative("theta", theta)
    s0 = v.positive("sigma0", sigma0)
    cc = v.positive("c", c)
    lr = v.in_range("lr", lr, 0.0, 2.0, lo_open=True, hi_open=True)
    return th, s0, cc, lr


def _a_t(lr: float, t: np.ndarray) -> np.ndarray:
    """``(1 - lr)^t`` for real ``t >= 0``; for ``lr > 1`` the sign follows the parity of
    ``round(t)`` (only integer steps are physical)."""
    s = 1.0 - lr
    if s == 0.0:
        return np.where(t == 0, 1.0, 0.0)
    mag = np.exp(t * np.log(abs(s)))  # t = inf gives 0 (|s| < 1)
    if s < 0:
        odd = np.isfinite(t) & (np.round(np.where(np.isfinite(t), t, 0.0)) % 2 == 1)
        mag = np.where(odd, -mag, mag)
    return mag


def population_gd_path(theta: float, sigma0: float, c: float, lr: float,
                       t: ArrayLike) -> OutlierPath:
    """Bulk edge, outlier location and overlaps of ``W_t`` under population GD.

    Parameters
    ----------
    theta
        Teacher strength (>= 0), ``W* = theta u v^T``.
    sigma0
        Init scale (> 0): ``W0`` entries ``N(0, sigma0^2 / D)``.
    c
        Aspect ratio ``P / D`` (> 0).
    lr
        Step size in (0, 2) (population GD diverges for ``lr >= 2``).
    t
        Steps (>= 0), any shape.

    Notes
    -----
    Exact in the limit ``P, D -> inf`` at fixed ``c`` (finite-size corrections to
    the edge are ``O(D^(-2/3))``); the dynamics themselves are exact at any size.
    """
    th, s0, cc, lr = _check_common(theta, sigma0, c, lr)
    tt = v.real_array("t", t, lo=0.0, allow_inf=True)
    a = _a_t(lr, tt)
    b = 1.0 - a
    scale = np.abs(a) * s0
    with np.errstate(divide="ignore", invalid="ignore"):
        strength = np.where(scale > 0, np.abs(b) * th / np.where(scale > 0, scale, 1.0), np.inf)
    huge = strength > _HUGE
    spike = rmt.rectangular_spike(np.where(huge, 1.0, strength), cc)
    edge = scale * float(rmt.rectangular_bulk_edge(cc))
    det = np.asarray(spike.detected) | huge
    sv = np.where(huge, np.abs(b) * th, scale * np.asarray(spike.singular_value))
    left = np.where(huge, 1.0, np.asarray(spike.left_overlap2))
    right = np.where(huge, 1.0, np.asarray(spike.right_overlap2))
    return OutlierPath(tt, a, b, edge, strength, det, sv, left, right)


def bbp_crossing_time(theta: float, sigma0: float, c: float, lr: float) -> float:
    """Continuous BBP crossing time ``ln(1 + x) / (-ln|1 - lr|)``, ``x = sigma0 c^(1/4)/theta``.

    Exact for ``0 < lr < 1`` (the outlier exists for every step ``t > t*``);
    0 for ``lr = 1`` (one step lands on the teacher). For ``1 < lr < 2`` it is
    the crossing of the even steps only; odd steps cross earlier (see
    :func:`bbp_escape_step`). ``inf`` when ``theta = 0``.
    """
    th, s0, cc, lr = _check_common(theta, sigma0, c, lr)
    if th == 0.0:
        return float("inf")
    if lr == 1.0:
        return 0.0
    x = s0 * cc**0.25 / th
    return float(np.log1p(x) / -np.log(abs(1.0 - lr)))


def bbp_escape_step(theta: float, sigma0: float, c: float, lr: float) -> int | None:
    """First integer step at which population GD has an outlier (``None``: never).

    Exact for every ``lr`` in (0, 2), including the oscillating range
    ``1 < lr < 2`` where ``|b_t| / |a_t| = |1 - lr|^(-t) - (-1)^t``.
    """
    th, s0, cc, lr = _check_common(theta, sigma0, c, lr)
    if th == 0.0:
        return None
    if lr == 1.0:
        return 1
    x = s0 * cc**0.25 / th
    lam = -np.log(abs(1.0 - lr))
    # strict inequality: exactly at threshold is not yet an outlier
    first = int(np.floor(np.log1p(x) / lam)) + 1
    if lr > 1.0:
        if x <= 1.0:
            odd = 1
        else:
            t_odd = np.log(x - 1.0) / lam
            odd = max(int(np.floor(t_odd)) + 1, 1)
            odd += 1 - odd % 2  # round up to odd
        even = first + first % 2
        return min(odd, even)
    return max(first, 1)


# --------------------------------------------------------------------------
# online SGD (fresh Gaussian batch of size B every step)
# --------------------------------------------------------------------------


def _sgd_args(lr: Any, B: Any, D: Any) -> tuple[float, int, int]:
    return (v.positive("lr", lr), v.positive_int("B", B),
            v.positive_int("D", D))


def online_sgd_contraction(lr: float, B: int, D: int) -> float:
    """Per-step mean-square factor ``rho = 1 - 2 lr + lr^2 (1 + (D + 1)/B)``.

    Noise-free, ``E ||W_{t+1} - W*||_F^2 = rho E ||W_t - W*||_F^2`` exactly for
    ``x ~ N(0, I_D)``: ``E[(I - lr Sigma_B)^2] = rho I``.
    """
    lr, B, d = _sgd_args(lr, B, D)
    return float(_contraction(lr, B, d))


def _contraction(lr: Any, B: int, D: int) -> Any:
    """``1 - 2 lr + lr^2 (1 + (D + 1)/B)`` elementwise, unvalidated (``online_sgd_contraction``)."""
    return 1.0 - 2.0 * lr + lr * lr * (1.0 + (D + 1.0) / B)


def online_sgd_critical_lr(B: int, D: int) -> float:
    """Mean-square stability threshold ``lr_c = 2B / (B + D + 1)`` (``rho = 1``)."""
    B = v.positive_int("B", B)
    d = v.positive_int("D", D)
    return 2.0 * B / (B + d + 1.0)


def online_sgd_stationary_variance(lr: float, B: int, D: int,
                                   noise_std: float) -> float:
    """Stationary per-entry variance of ``W - W*``: ``lr s^2 / (2B - lr (B + D + 1))``.

    ``inf`` at and above ``lr_c`` (no stationary state). Depends on ``lr`` and
    ``B`` only through ``lr / B`` when ``B`` is small against ``D``.
    """
    lr, B, d = _sgd_args(lr, B, D)
    s = v.nonnegative("noise_std", noise_std)
    den = 2.0 * B - lr * (B + d + 1.0)
    if den <= 0:
        return float("inf")
    return lr * s * s / den


def online_sgd_noise_edge(lr: float, B: int, P: int, D: int,
                          noise_std: float) -> float:
    """Marchenko-Pastur edge ``sqrt(v D)(1 + sqrt(P/D))`` of the SGD noise in ``W - W*``.

    Approximate (see the module notes): accurate to about 1.5 % for
    ``lr <= 0.6 lr_c``; underestimates near ``lr_c``.
    """
    p = v.positive_int("P", P)
    var = online_sgd_stationary_variance(lr, B, D, noise_std)
    d = int(D)
    return float(np.sqrt(var * d) * rmt.rectangular_bulk_edge(p / d))


def online_sgd_sq_error(lr: float, B: int, P: int, D: int, noise_std: float,
                        initial_sq_error: float, t: ArrayLike) -> np.ndarray:
    """Exact ``E ||W_t - W*||_F^2`` under online SGD.

    ``rho^t e0 + (lr^2 s^2 P D / B) (1 - rho^t) / (1 - rho)``. Overflows to
    ``inf`` (without warnings) for diverging ``lr``.
    """
    lr, B, d = _sgd_args(lr, B, D)
    p = v.positive_int("P", P)
    s = v.nonnegative("noise_std", noise_std)
    e0 = v.nonnegative("initial_sq_error", initial_sq_error)
    tt = v.real_array("t", t, lo=0.0)
    rho = online_sgd_contraction(lr, B, d)
    q = lr * lr * s * s * p * d / B
    with np.errstate(over="ignore", invalid="ignore"):
        rt = np.power(rho, tt)
        geo = tt if rho == 1.0 else -np.expm1(tt * np.log(rho)) / (1.0 - rho)
        return rt * e0 + q * geo


def online_sgd_path(theta: float, sigma0: float, P: int, D: int, lr: float, B: int,
                    noise_std: float, t: ArrayLike) -> OutlierPath:
    """Bulk edge, outlier location and overlaps of ``W_t`` under online SGD: population
    GD's path (:func:`population_gd_path`) with SGD's bulk.

    The mean of ``W_t`` is population GD's, ``b_t W* + a_t W0`` (a fresh batch is unbiased);
    the rest, ``W_t - b_t W*``, is taken as an i.i.d. matrix whose per-entry second moment
    follows the exact mean-square recursion, ``m_t = rho^t sigma0^2 / D + v (1 - rho^t)``
    (:func:`online_sgd_contraction` ``rho``, :func:`online_sgd_stationary_variance` ``v``):
    the init part decays at ``rho`` (slower than population GD's ``(1 - lr)^2``) and label
    noise keeps a bulk of variance ``v``. The rectangular spike of strength ``b_t theta /
    sqrt(m_t D)`` on that bulk gives the outlier and the overlaps; its edge is
    ``sqrt(m_t D) (1 + sqrt c)``. Approximate as :func:`online_sgd_noise_edge` is (the rows
    share the input products): for ``lr`` well below ``lr_c``. ``a``, ``b`` are the mean's.
    """
    th, s0, _, lr = _check_common(theta, sigma0, 1.0, lr)
    p, d, bb = v.positive_int("P", P), v.positive_int("D", D), v.positive_int("B", B)
    s = v.nonnegative("noise_std", noise_std)
    tt = v.real_array("t", t, lo=0.0)
    rho = _contraction(lr, bb, d)
    var = online_sgd_stationary_variance(lr, bb, d, s)
    if not (rho < 1.0 and np.isfinite(var)):
        raise ValueError(f"lr = {lr:g} is not below the online-SGD threshold "
                         f"lr_c = {online_sgd_critical_lr(bb, d):g} (B = {bb}, D = {d})")
    c = p / d
    decay = np.power(rho, tt)
    scale = np.sqrt((decay * s0 * s0 / d + var * (1.0 - decay)) * d)
    a = _a_t(lr, tt)
    b = 1.0 - a
    strength = np.abs(b) * th / scale
    spike = rmt.rectangular_spike(strength, c)
    edge = scale * float(rmt.rectangular_bulk_edge(c))
    return OutlierPath(tt, a, b, edge, strength, np.asarray(spike.detected),
                       scale * np.asarray(spike.singular_value),
                       np.asarray(spike.left_overlap2), np.asarray(spike.right_overlap2))


# --------------------------------------------------------------------------
# full-batch GD on M samples
# --------------------------------------------------------------------------


def full_batch_critical_lr(X: ArrayLike) -> float:
    """``2 / lambda_max(X^T X / M)`` for data ``X`` (``M x D``, one sample per row).

    Full-batch GD on the empirical loss diverges above it (for a start with a
    component along the top eigenvector) and converges below it.
    """
    x = v.real_array("X", X)
    if x.ndim != 2:
        raise ValueError(f"X must be a 2-D array (M samples x D features), got shape {x.shape}")
    n = x.shape[0]
    lam = np.linalg.eigvalsh(x.T @ x / n)[-1] if x.shape[1] <= n else \
        np.linalg.eigvalsh(x @ x.T / n)[-1]
    return float(2.0 / lam)


def full_batch_critical_lr_asymptotic(D: int, M: int) -> float:
    """Large-size limit ``2 / (1 + sqrt(D / M))^2`` of :func:`full_batch_critical_lr`."""
    d = v.positive_int("D", D)
    m = v.positive_int("M", M)
    return float(2.0 / rmt.mp_edges(d / m)[1])


# --------------------------------------------------------------------------
# trainability phase diagram (single layer)
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class TrainabilityPrediction:
    """Predicted outcome of ``steps`` online-SGD steps on a grid of (lr, sigma0).

    Attributes
    ----------
    lr, sigma0
        The broadcast grid.
    rel_error
        Predicted ``E||W_T - W*||^2 / E||W_0 - W*||^2`` (``inf`` when diverging).
    status
        ``"converged"`` (``rel_error <= tol``), ``"diverged"`` (``rho > 1``) or
        ``"stalled"`` (neither), as a string array.
    lr_c
        The critical learning rate.
    """

    lr: np.ndarray
    sigma0: np.ndarray
    rel_error: np.ndarray
    status: np.ndarray
    lr_c: float


def predict_trainability(lr: ArrayLike, sigma0: ArrayLike, *, P: int, D: int, theta: float,
                         steps: int, B: int | None = None, noise_std: float = 0.0,
                         tol: float = 1e-2) -> TrainabilityPrediction:
    """Theory boundary of the (learning rate, init scale) phase diagram of a linear student.

    ``B=None`` means population GD (``rho = (1 - lr)^2``,
    ``lr_c = 2``, no noise); otherwise online SGD with that batch. The initial
    error is ``E||W0 - W*||^2 = sigma0^2 P + theta^2``.
    """
    lr = v.real_array("lr", lr, positive=True)
    s0 = v.real_array("sigma0", sigma0, positive=True)
    v.broadcastable(lr=lr, sigma0=s0)
    p = v.positive_int("P", P)
    d = v.positive_int("D", D)
    th = v.nonnegative("theta", theta)
    T = v.positive_int("steps", steps)
    s = v.nonnegative("noise_std", noise_std)
    tl = v.positive("tol", tol)
    lr, s0 = np.broadcast_arrays(lr, s0)
    if B is None:
        rho = (1.0 - lr) ** 2
        q = np.zeros_like(lr)
        lr_c = 2.0
    else:
        B = v.positive_int("B", B)
        rho = _contraction(lr, B, d)
        q = lr * lr * s * s * p * d / B
        lr_c = online_sgd_critical_lr(B, d)
    e0 = s0**2 * p + th**2
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        rt = np.power(rho, T)
        geo = np.where(rho == 1.0, float(T), -np.expm1(T * np.log(np.where(rho > 0, rho, 1.0)))
                       / np.where(rho == 1.0, 1.0, 1.0 - rho))
        geo = np.where(rho > 0, geo, 1.0)  # rho = 0 (lr = 1, population): one step of noise
        rel = (rt * e0 + q * geo) / e0
    rel = np.where(rho > 1.0, np.inf, rel)
    return TrainabilityPrediction(lr, s0, rel, trainability_status(rel, tl, diverged=rho > 1.0),
                                  lr_c)


def trainability_status(rel_error: ArrayLike, tol: float, *, diverged: ArrayLike = False
                        ) -> np.ndarray:
    """The trainability rule: ``"diverged"``, ``"converged"`` or ``"stalled"``, elementwise.

    ``"diverged"`` where ``diverged`` is true or ``rel_error`` (final over initial
    squared error) is not finite; else ``"converged"`` where ``rel_error <= tol``;
    else ``"stalled"``. One rule for the theory (:func:`predict_trainability`,
    ``diverged = rho > 1``) and for measured runs (a run's divergence flag).
    """
    rel = np.asarray(rel_error, dtype=np.float64)
    tl = v.positive("tol", tol)
    with np.errstate(invalid="ignore"):
        bad = np.asarray(diverged, dtype=bool) | ~np.isfinite(rel)
        return np.where(bad, "diverged", np.where(rel <= tl, "converged", "stalled"))
