"""Squared 2-Wasserstein distance between particle measures: exact small cases."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdyn.measure.transport import paired_sq_distance, wasserstein2_squared


def _quantile_w2_1d(x: np.ndarray, p: np.ndarray, y: np.ndarray, q: np.ndarray) -> float:
    """Oracle on the line: int_0^1 |F^-1(t) - G^-1(t)|^2 dt (monotone coupling)."""
    ix, iy = np.argsort(x), np.argsort(y)
    xs, ps, ys, qs = x[ix], p[ix] / p.sum(), y[iy], q[iy] / q.sum()
    cuts = np.unique(np.concatenate([[0.0], np.cumsum(ps), np.cumsum(qs)]).clip(0, 1))
    total = 0.0
    for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
        mid = 0.5 * (lo + hi)
        a = xs[min(np.searchsorted(np.cumsum(ps), mid), len(xs) - 1)]
        b = ys[min(np.searchsorted(np.cumsum(qs), mid), len(ys) - 1)]
        total += (hi - lo) * (a - b) ** 2
    return total


@pytest.mark.parametrize("method", ["auto", "assignment", "pot", "lp"])
def test_point_masses(method: str) -> None:
    x = np.array([[1.0, 2.0, -1.0]])
    y = np.array([[0.0, 0.5, 3.0]])
    assert wasserstein2_squared(x, y, method=method) == pytest.approx(1 + 2.25 + 16, rel=1e-12)


@pytest.mark.parametrize("method", ["assignment", "pot", "lp"])
def test_one_dimensional_sorted_matching(method: str) -> None:
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(40), rng.standard_normal(40) * 2 + 1
    expected = np.mean((np.sort(x) - np.sort(y)) ** 2)
    assert wasserstein2_squared(x, y, method=method) == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("method", ["pot", "lp"])
def test_one_dimensional_unequal_weights_match_quantile_oracle(method: str) -> None:
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(13), rng.standard_normal(7) + 0.5
    p, q = rng.random(13) + 0.1, rng.random(7) + 0.1
    expected = _quantile_w2_1d(x, p, y, q)
    assert wasserstein2_squared(x, y, p, q, method=method) == pytest.approx(expected,
                                                                            rel=1e-9)


def test_translation_and_split_mass() -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((25, 3))
    c = np.array([0.3, -1.0, 2.0])
    # W2^2(mu, mu + c) = |c|^2 (the identity coupling is optimal for a translation)
    assert wasserstein2_squared(x, x + c) == pytest.approx(c @ c, rel=1e-12)
    # a point mass against any measure: the mean squared distance to the point
    assert wasserstein2_squared(x, c[None, :]) == pytest.approx(
        np.mean(((x - c) ** 2).sum(1)), rel=1e-12)
    # duplicated particles are the same measure
    assert wasserstein2_squared(x, np.vstack([x, x])) == pytest.approx(0.0, abs=1e-12)


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 9), m=st.integers(1, 9), seed=st.integers(0, 10_000))
def test_pot_and_lp_agree_and_bound_the_paired_distance(n: int, m: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal((n, 2)), rng.standard_normal((m, 2))
    p, q = rng.random(n) + 0.05, rng.random(m) + 0.05
    a = wasserstein2_squared(x, y, p, q, method="pot")
    b = wasserstein2_squared(x, y, p, q, method="lp")
    assert a == pytest.approx(b, rel=1e-7, abs=1e-10)
    if n == m:
        w = wasserstein2_squared(x, y)
        assert w <= paired_sq_distance(x, y) + 1e-12
        assert w == pytest.approx(wasserstein2_squared(x, y, method="pot"), rel=1e-9,
                                  abs=1e-12)


def test_accepts_torch_and_checks_input() -> None:
    import torch

    x = torch.randn(5, 2, dtype=torch.float64)
    assert wasserstein2_squared(x, x) == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="dimension"):
        wasserstein2_squared(np.zeros((3, 2)), np.zeros((3, 3)))
    with pytest.raises(ValueError, match="method"):
        wasserstein2_squared(np.zeros((3, 2)), np.zeros((3, 2)), method="sinkhorn")
    with pytest.raises(ValueError, match="assignment"):
        wasserstein2_squared(np.zeros((3, 2)), np.zeros((4, 2)), method="assignment")
    with pytest.raises(ValueError, match="p"):
        wasserstein2_squared(np.zeros((3, 2)), np.zeros((3, 2)), p=[1.0, -1.0, 1.0])
    with pytest.raises(ValueError, match="q"):
        wasserstein2_squared(np.zeros((3, 2)), np.zeros((3, 2)), q=[1.0, 1.0])
    with pytest.raises(ValueError, match="NaN"):
        wasserstein2_squared(np.array([np.nan]), np.zeros(1))
