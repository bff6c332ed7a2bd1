"""The ReLU Gram and the lasso-shrunk atom coefficients (specdyn.theory.mean_field), with
the directions fixed and free."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize

from specdyn.theory.mean_field import (
    lasso_atom_coefficients,
    lasso_certificate,
    lasso_free_directions,
    lasso_threshold_coefficients,
    relu_gram,
)


def test_relu_gram_limits() -> None:
    # same direction: E[relu(z)^2] = 1/2; orthogonal: E[relu(z1)] E[relu(z2)] = 1/(2 pi);
    # opposite: relu(z) relu(-z) = 0
    G = relu_gram(np.array([[1.0, 0.0], [0.0, 2.0], [-1.0, 0.0]]))
    np.testing.assert_allclose(np.diag(G), 0.5)
    assert G[0, 1] == pytest.approx(1 / (2 * np.pi))
    assert G[0, 2] == pytest.approx(0.0, abs=1e-15)


def test_relu_gram_matches_monte_carlo() -> None:
    U = np.array([[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.0, -0.6, 0.8]])
    x = np.random.default_rng(0).standard_normal((400_000, 3))
    r = np.maximum(x @ U.T, 0.0)
    # Monte Carlo error of a mean of 4e5 terms of variance <= 1: about 2e-3
    np.testing.assert_allclose(r.T @ r / len(x), relu_gram(U), atol=6e-3)


def test_lasso_coefficients_minimise_the_lasso_objective() -> None:
    # independent oracle: minimise 1/2 (c - c*)^T G (c - c*) + lam |c|_1 numerically
    U = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    c_star, lam = np.array([1.0, -1.0]), 0.1
    G = relu_gram(U)

    def obj(c: np.ndarray) -> float:
        d = c - c_star
        return 0.5 * d @ G @ d + lam * np.abs(c).sum()

    best = scipy.optimize.minimize(obj, c_star, method="Nelder-Mead",
                                   options={"xatol": 1e-10, "fatol": 1e-14}).x
    np.testing.assert_allclose(lasso_atom_coefficients(c_star, U, lam), best, atol=1e-6)
    # no weight decay, no shrinkage
    np.testing.assert_allclose(lasso_atom_coefficients(c_star, U, 0.0), c_star)


def test_lasso_coefficient_switched_off_is_nan() -> None:
    out = lasso_atom_coefficients([1.0, 0.01], np.eye(2), 0.1)
    assert np.isfinite(out[0]) and np.isnan(out[1])


@pytest.mark.parametrize(("coeffs", "dirs", "lam"), [
    ([1.0, 0.0], np.eye(2), 0.1),  # a zero coefficient has no sign
    ([1.0], np.eye(2), 0.1),  # one coefficient for two directions
    ([1.0, 1.0], np.eye(2), -0.1),  # negative weight decay
    ([1.0, 1.0], np.array([[1.0, 0.0], [0.0, 0.0]]), 0.1),  # a zero direction
])
def test_bad_input_is_a_value_error(coeffs: list[float], dirs: np.ndarray, lam: float) -> None:
    with pytest.raises(ValueError):
        lasso_atom_coefficients(coeffs, dirs, lam)


def test_thresholded_lasso_minimises_the_objective_and_switches_weak_atoms_off() -> None:
    # independent oracle, as above, with a weak third atom below the threshold (~2 lam)
    U, lam = np.eye(3), 0.1
    G = relu_gram(U)
    for c_star, n_on in ((np.array([1.0, -1.0, 0.1]), 2), (np.array([1.0, -1.0, 0.6]), 3)):
        def obj(c: np.ndarray, c_star: np.ndarray = c_star) -> float:
            d = c - c_star
            return 0.5 * d @ G @ d + lam * np.abs(c).sum()

        got = lasso_threshold_coefficients(c_star, U, lam)
        best = scipy.optimize.minimize(obj, c_star, method="Powell",
                                       options={"xtol": 1e-10, "ftol": 1e-14}).x
        assert obj(got) <= obj(best) + 1e-10, (c_star, got, best)
        assert np.count_nonzero(got) == n_on, got
    # every atom on: the closed form of lasso_atom_coefficients
    np.testing.assert_allclose(lasso_threshold_coefficients([1.0, -1.0], U[:2], lam),
                               lasso_atom_coefficients([1.0, -1.0], U[:2], lam), atol=1e-10)


def test_relu_gram_matches_quadrature_over_the_angle() -> None:
    from specdyn.theory.oracles import relu_kernel_quadrature

    t = np.linspace(0.0, np.pi, 13)
    U = np.stack([np.cos(t), np.sin(t)], axis=1)
    G = relu_gram(np.vstack([[1.0, 0.0], U]))[0, 1:]
    np.testing.assert_allclose(G, [relu_kernel_quadrature(a) for a in t], rtol=1e-10,
                               atol=1e-15)
    with pytest.raises(ValueError, match="angle"):
        relu_kernel_quadrature(4.0)


def test_free_lasso_without_weight_decay_is_the_teacher() -> None:
    U = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    c, V = lasso_free_directions(np.array([1.0, -1.0]), U, 0.0)
    np.testing.assert_allclose(c, [1.0, -1.0], atol=1e-6)
    np.testing.assert_allclose(np.abs(np.sum(V * U, axis=1)), 1.0, atol=1e-8)


def test_free_lasso_is_certified_and_below_the_fixed_directions() -> None:
    # orthogonal atoms c* = (1, -1) at lambda' = 0.1: the atoms tilt ~13 deg and shrink
    # further than with the teacher's directions fixed (0.707)
    U = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    c_star, lam = np.array([1.0, -1.0]), 0.1
    c, V = lasso_free_directions(c_star, U, lam)
    tilt = np.degrees(np.arccos(np.sum(V * U, axis=1)))
    assert np.all((tilt > 10) & (tilt < 16))
    fixed = lasso_atom_coefficients(c_star, U, lam)
    assert np.all(np.abs(c) < np.abs(fixed) - 0.03)
    probes = np.random.default_rng(1).standard_normal((20_000, 3))
    sup, gap = lasso_certificate(c, V, c_star, U, lam, probes)
    assert sup <= 1 + 1e-6 and gap <= 1e-6
    # the teacher's own directions with the fixed-direction coefficients are not optimal
    sup_fixed, _ = lasso_certificate(fixed, U, c_star, U, lam, probes)
    assert sup_fixed > 1.05


def test_free_lasso_on_a_large_sample_approaches_the_population() -> None:
    U = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    c_star, lam = np.array([1.0, -1.0, 0.1]), 0.1
    c_pop, V_pop = lasso_free_directions(c_star, U, lam)
    assert c_pop[2] == 0.0  # the weak atom is switched off
    x = np.random.default_rng(2).standard_normal((200_000, 3))
    y = np.maximum(x @ U.T, 0.0) @ c_star
    c_m, V_m = lasso_free_directions(c_star, U, lam, x=x, y=y)
    # sampling error of a mean of 2e5 terms: ~ 3e-3
    np.testing.assert_allclose(c_m, c_pop, atol=0.01)
    assert np.degrees(np.arccos(np.min(np.sum(V_m[:2] * V_pop[:2], axis=1)))) < 1.0
    with pytest.raises(ValueError, match="together"):
        lasso_free_directions(c_star, U, lam, x=x)
