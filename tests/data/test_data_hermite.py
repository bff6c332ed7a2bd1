"""Hermite expansions and single-index targets (specdyn.data.hermite)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.polynomial import hermite_e

from specdyn.data import HermiteTarget, hermite_coefficients, hermite_eval


def _orthonormal_to_he(c: np.ndarray) -> np.ndarray:
    """Orthonormal coefficients -> numpy's probabilists' Hermite series (He_k)."""
    return np.array([ck / math.sqrt(math.factorial(k)) for k, ck in enumerate(c)])


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-3, 3), min_size=1, max_size=8))
def test_hermite_eval_matches_numpy_hermeval(c: list[float]) -> None:
    z = np.linspace(-4, 4, 41)
    expected = hermite_e.hermeval(z, _orthonormal_to_he(np.array(c)))
    np.testing.assert_allclose(hermite_eval(c, z), expected, rtol=1e-10, atol=1e-10)


def test_coefficients_of_polynomial_match_poly2herme() -> None:
    # f(z) = 2 - z + 0.5 z^3 + z^4: numpy converts the monomial series exactly
    poly = np.array([2.0, -1.0, 0.0, 0.5, 1.0])
    he = hermite_e.poly2herme(poly)
    expected = np.array([hk * math.sqrt(math.factorial(k)) for k, hk in enumerate(he)])
    got = hermite_coefficients(lambda z: np.polynomial.polynomial.polyval(z, poly), 6)
    np.testing.assert_allclose(got[:5], expected, atol=1e-12)
    np.testing.assert_allclose(got[5:], 0.0, atol=1e-12)


def test_tanh_expansion_parseval_and_parity() -> None:
    c = hermite_coefficients(np.tanh, 40)
    # E[tanh(z)^2] by a dense Riemann sum, an independent oracle
    z = np.linspace(-12, 12, 200001)
    gauss = np.exp(-z * z / 2) * (z[1] - z[0]) / math.sqrt(2 * math.pi)
    m2 = float(np.sum(np.tanh(z) ** 2 * gauss))
    assert abs(float(c @ c) - m2) < 1e-5
    np.testing.assert_allclose(c[0::2], 0.0, atol=1e-14)  # tanh is odd
    # mu_1 = E[tanh'(z)] equals c_1 (Stein's lemma)
    mu1 = float(np.sum((1 - np.tanh(z) ** 2) * gauss))
    assert abs(c[1] - mu1) < 1e-8


@pytest.mark.parametrize(("name", "ie"), [("He1", 1), ("He2", 2), ("He3", 3),
                                          ("He2+He3", 2), ("tanh", 1)])
def test_named_targets_exponent_and_unit_variance(name: str, ie: int) -> None:
    t = HermiteTarget.named(name, D=50, seed=3)
    assert t.information_exponent == ie
    assert abs(t.second_moment - 1.0) < 1e-5  # tanh: Hermite tail past degree 25 ~1e-6
    X, y = t.sample(20000, seed=1)
    # Monte Carlo: 5 standard errors of the sample mean of y^2
    assert abs(float(np.mean(y * y)) - 1.0) < 5 * float(np.std(y * y)) / math.sqrt(len(y))


def _reuse_oracle(c: np.ndarray, k: int) -> float:
    """E[z p(z)^(k+1)] by exact He-series multiplication: the He_0 coefficient."""
    p = _orthonormal_to_he(c)
    prod = np.array([1.0])
    for _ in range(k + 1):
        prod = hermite_e.hermemul(prod, p)
    prod = hermite_e.hermemulx(prod)
    return float(prod[0])


@pytest.mark.parametrize("name", ["He1", "He2", "He3", "He2+He3"])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_reuse_quantity_matches_series_product(name: str, k: int) -> None:
    t = HermiteTarget.named(name)
    expected = _reuse_oracle(np.asarray(t.coeffs), k)
    assert t.reuse_quantity(k) == pytest.approx(expected, rel=1e-9, abs=1e-9)


def test_reuse_quantity_he2_vanishes_he2_he3_does_not() -> None:
    he2, mix = HermiteTarget.named("He2"), HermiteTarget.named("He2+He3")
    assert all(abs(he2.reuse_quantity(k)) < 1e-12 for k in (1, 2, 3, 4))
    assert abs(mix.reuse_quantity(1)) > 1.0  # = sqrt(3) (series product oracle above)


def test_call_numpy_and_torch_agree() -> None:
    torch = pytest.importorskip("torch")
    t = HermiteTarget.named("He2+He3", D=7, seed=0)
    X, y = t.sample(11, seed=2)
    yt = t(torch.from_numpy(X))
    assert isinstance(yt, torch.Tensor)
    np.testing.assert_allclose(yt.numpy(), y, rtol=1e-12)
    # direct formula: (h2 + h3)/sqrt 2 at z = X beta
    z = X @ np.asarray(t.direction)
    direct = ((z**2 - 1) / math.sqrt(2) + (z**3 - 3 * z) / math.sqrt(6)) / math.sqrt(2)
    np.testing.assert_allclose(y, direct, rtol=1e-12)


def test_direction_none_uses_first_coordinate() -> None:
    t = HermiteTarget([0.0, 0.0, 1.0])
    X = np.random.default_rng(0).standard_normal((5, 3))
    np.testing.assert_allclose(t(X), (X[:, 0] ** 2 - 1) / math.sqrt(2))


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="coeffs"):
        HermiteTarget([])
    with pytest.raises(ValueError, match="coeffs"):
        hermite_eval([], np.zeros(3))
    with pytest.raises(ValueError, match="coeffs"):
        HermiteTarget([0.0, np.nan])
    with pytest.raises(ValueError, match="direction"):
        HermiteTarget([0.0, 1.0], direction=np.zeros(4))
    with pytest.raises(ValueError, match="degree"):
        hermite_coefficients(np.tanh, -1)
    with pytest.raises(ValueError, match="name"):
        HermiteTarget.named("He9")
    with pytest.raises(ValueError, match="x must have last dimension"):
        HermiteTarget([0.0, 1.0], direction=np.ones(3))(np.ones((2, 4)))
