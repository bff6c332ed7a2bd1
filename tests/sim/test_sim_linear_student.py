"""Single-layer linear students (specdyn.sim.linear_student) against the escape theory."""

from __future__ import annotations

import math

import numpy as np
import pytest

from specdyn import Schedule
from specdyn.measure.outliers import find_outliers
from specdyn.sim import (
    DivergenceError,
    RunOptions,
    Sampling,
    rank_one_teacher,
    train_linear_student,
)
from specdyn.theory import outlier_escape as oe


def _n_flagged(sv: np.ndarray, N: int, M: int, alpha: float = 0.01) -> int:
    """Outliers of W by the Tracy-Widom test: eigenvalues of W W^T / N, ratio M / N."""
    return find_outliers(sv**2 / N, M / N, alpha=alpha).n_outliers


@pytest.mark.slow
def test_population_gd_escape_time_location_and_overlaps() -> None:
    """Escape time within 5 % of t*, nothing flagged before it, location within 5 %.

    Tolerance: at finite N the outlier must exceed the edge by a few Tracy-Widom
    widths (O(N^(-1/3)) in strength) before it is detectable, which delays the
    measured escape by about Delta / ln(1 + x); a weak teacher (x ~ 1700) keeps
    that near 3 % at N = 400.
    """
    N, M, theta, sigma0, eta = 400, 800, 0.0005, 1.0, 0.05
    c = N / M
    W_star, _, _ = rank_one_teacher(N, M, theta, seed=1)
    ts = oe.bbp_crossing_time(theta, sigma0, c, eta)
    steps = int(1.5 * ts)
    rec = np.unique(np.r_[np.arange(0, int(0.95 * ts), 20), np.arange(int(0.95 * ts),
                          int(1.07 * ts) + 1), np.arange(int(1.07 * ts), steps + 1, 8)])
    run = train_linear_student(W_star, lr=eta, steps=steps, sigma0=sigma0,
                               checkpoints=rec, top_k=None, seed=3)  # population GD
    flags = np.array([_n_flagged(sv, N, M) for sv in run.singular_values])
    before = run.steps < ts
    assert flags[before].sum() == 0, "an outlier was flagged before the BBP time"
    first = run.steps[np.argmax(flags > 0)]
    assert flags.any() and ts <= first <= 1.05 * ts

    path = oe.population_gd_path(theta, sigma0, c, eta, run.steps)
    clear = path.singular_value > 1.1 * path.bulk_edge
    assert clear.sum() >= 5
    np.testing.assert_allclose(run.singular_values[clear, 0], path.singular_value[clear],
                               rtol=0.05)
    # bulk edge (second singular value) tracks |a_t| sigma0 (1 + sqrt c)
    np.testing.assert_allclose(run.singular_values[:, 1], path.bulk_edge, rtol=0.05)
    good = clear & (path.left_overlap2 > 0.5)
    np.testing.assert_allclose(run.left_overlap2[good], path.left_overlap2[good], atol=0.06)
    np.testing.assert_allclose(run.right_overlap2[good], path.right_overlap2[good], atol=0.06)


def test_oscillating_gd_escapes_on_odd_steps_first() -> None:
    """eta = 1.9: the [D] crossing formula (13.2 steps) misses the odd-step outliers."""
    N, M, sigma0, eta = 300, 600, 1.0, 1.9
    c = N / M
    theta = sigma0 * c**0.25 / 3.0  # x = 3
    W_star, _, _ = rank_one_teacher(N, M, theta, seed=2)
    run = train_linear_student(W_star, lr=eta, steps=16, sigma0=sigma0,
                               checkpoints=Schedule.every(1), top_k=None, overlaps=False,
                               seed=4)  # population GD
    path = oe.population_gd_path(theta, sigma0, c, eta, run.steps)
    thr = c**0.25
    checked = 0
    for i, t in enumerate(run.steps):
        if abs(path.strength[i] - thr) < 0.3 * thr:
            continue  # inside the finite-size window: no claim
        assert (_n_flagged(run.singular_values[i], N, M) > 0) == bool(path.detected[i]), t
        checked += 1
    assert checked >= 8
    ts = oe.bbp_crossing_time(theta, sigma0, c, eta)
    assert any(path.detected[(run.steps < ts - 2)])


@pytest.mark.parametrize("frac", [0.5, 0.9])
def test_online_sgd_mean_square_rate(frac: float) -> None:
    """Log-slope of the replica-averaged ||W - W*||^2 within 5 % of ln(rho)."""
    N = M = 64
    B = 8
    eta = frac * oe.online_sgd_critical_lr(B, M)
    rho = oe.online_sgd_contraction(eta, B, M)
    steps = int(20 / -math.log(rho))
    W_star, _, _ = rank_one_teacher(N, M, 1.0, seed=0)
    run = train_linear_student(W_star, sampling=Sampling("online", B=B), lr=eta, steps=steps,
                               replicas=16, checkpoints=[0], overlaps=False, seed=5)
    y = np.log(run.mean_sq_error / run.mean_sq_error[0])
    t = np.arange(y.size)
    slope = float(t @ y / (t @ t))  # exact theory passes through the origin
    assert slope == pytest.approx(math.log(rho), rel=0.05)


def test_online_sgd_diverges_five_percent_above_threshold() -> None:
    N = M = 64
    B = 8
    eta = 1.05 * oe.online_sgd_critical_lr(B, M)
    W_star, _, _ = rank_one_teacher(N, M, 1.0, seed=0)
    with pytest.raises(DivergenceError, match="diverged at step") as info:
        train_linear_student(W_star, sampling=Sampling("online", B=B), lr=eta, steps=3000,
                             replicas=4, checkpoints=[0], overlaps=False,
                             options=RunOptions(divergence_factor=1e4), seed=6)
    run = info.value.record
    assert 0 < info.value.step < 3000 and len(run.sq_error) == info.value.step + 1
    assert np.isfinite(run.sq_error).all()
    # and 5 % below converges over the same budget
    ok = train_linear_student(W_star, sampling=Sampling("online", B=B), lr=eta / 1.05 * 0.95,
                              steps=3000, replicas=4, checkpoints=[0], overlaps=False,
                              options=RunOptions(divergence_factor=1e4), seed=6)
    assert ok.mean_sq_error[-1] < 1e-3 * ok.mean_sq_error[0]


@pytest.mark.slow
@pytest.mark.parametrize("frac", [0.3, 0.6])
def test_online_sgd_stationary_noise_edge(frac: float) -> None:
    """Second singular value of W (top of the noise bulk) within 3 % of sqrt(vM)(1+sqrt c)."""
    N, M, B, s = 150, 300, 16, 1.0
    eta = frac * oe.online_sgd_critical_lr(B, M)
    rho = oe.online_sgd_contraction(eta, B, M)
    tau = 1.0 / (1.0 - rho)
    burn, steps = int(8 * tau), int(28 * tau)
    W_star, _, _ = rank_one_teacher(N, M, 3.0, seed=7)
    rec = np.arange(burn, steps + 1, max(int(tau), 1))
    run = train_linear_student(W_star, sampling=Sampling("online", B=B, noise_std=s), lr=eta,
                               steps=steps, checkpoints=rec, overlaps=False, top_k=2, seed=8)
    edge = oe.online_sgd_noise_edge(eta, B, N, M, s)
    assert run.singular_values[:, 1].mean() == pytest.approx(edge, rel=0.03)
    var = oe.online_sgd_stationary_variance(eta, B, M, s)
    assert run.mean_sq_error[burn:].mean() / (N * M) == pytest.approx(var, rel=0.05)


@pytest.mark.slow
def test_noise_edge_hypothesis_fails_near_critical_lr() -> None:
    """Documents where the [D] noise-edge formula breaks: at 0.9 eta_c it is >10 % low."""
    N, M, B, s = 150, 300, 16, 1.0
    eta = 0.9 * oe.online_sgd_critical_lr(B, M)
    rho = oe.online_sgd_contraction(eta, B, M)
    tau = 1.0 / (1.0 - rho)
    burn, steps = int(6 * tau), int(16 * tau)
    run = train_linear_student(np.zeros((N, M)), sampling=Sampling("online", B=B, noise_std=s),
                               lr=eta, steps=steps, checkpoints=np.arange(burn, steps + 1,
                               int(tau)), overlaps=False, top_k=1, seed=9)
    edge = oe.online_sgd_noise_edge(eta, B, N, M, s)
    assert run.singular_values[:, 0].mean() > 1.10 * edge


def test_full_batch_gd_threshold_from_sample_covariance() -> None:
    rng = np.random.default_rng(10)
    n, N, M = 120, 20, 60
    X = rng.standard_normal((n, M))
    eta_c = oe.full_batch_critical_lr(X)
    W_star, _, _ = rank_one_teacher(N, M, 1.0, seed=1)
    below = train_linear_student(W_star, sampling=Sampling("gd"), lr=0.97 * eta_c, steps=1500,
                                 inputs=X, checkpoints=[0], overlaps=False, seed=11)
    assert below.sq_error[-1, 0] < 1e-6 * below.sq_error[0, 0]
    with pytest.raises(DivergenceError):
        train_linear_student(W_star, sampling=Sampling("gd"), lr=1.03 * eta_c, steps=1500,
                             inputs=X, checkpoints=[0], overlaps=False, seed=11)


def test_sgd_on_a_data_set_and_replicas_are_reproducible() -> None:
    W_star, _, _ = rank_one_teacher(10, 20, 1.0, seed=1)
    kw = dict(sampling=Sampling("sgd", M=40, B=5), lr=0.05, steps=30, replicas=2,
              checkpoints=Schedule.every(10), seed=3)
    a = train_linear_student(W_star, **kw)
    b = train_linear_student(W_star, **kw)
    np.testing.assert_array_equal(a.sq_error, b.sq_error)
    assert a.sq_error[-1].max() < a.sq_error[0].min()
    assert list(a.steps) == [0, 10, 20, 30]


@pytest.mark.parametrize("kwargs, name", [
    (dict(lr=0.0, steps=5), "^lr "),
    (dict(lr=-1.0, steps=5), "^lr "),
    (dict(lr=0.1, steps=5, sampling=Sampling("sgd", M=10, B=11)), "^B "),  # B <= M: at the run
    (dict(lr=0.1, steps=5, sampling=Sampling("gd")), "^M "),  # M or inputs: at the run
    (dict(lr=0.1, steps=0), "^steps "),
    (dict(lr=0.1, steps=5, sigma0=0.0), "^sigma0 "),
    (dict(lr=0.1, steps=5, sampling="online"), "^sampling "),
])
def test_bad_input_raises_naming_argument(kwargs, name) -> None:
    with pytest.raises(ValueError, match=name):
        train_linear_student(np.ones((4, 6)), **kwargs)


@pytest.mark.parametrize("kwargs, name", [
    (dict(method="sgd", M=10, B=0), "^B "),
    (dict(method="online"), "^B "),  # a batch method without its batch
    (dict(method="sgd", M=10), "^B "),
    (dict(method="newton"), "^method "),
    (dict(method="gd", M=0), "^M "),
    (dict(noise_std=-0.1), "^noise_std "),
])
def test_bad_sampling_is_refused_when_made_naming_the_field(kwargs, name) -> None:
    with pytest.raises(ValueError, match=name):
        Sampling(**kwargs)
