"""Outliers of rectangular weight matrices (specdyn.measure.weight_outliers).

Oracles: planted spikes in ``G/sqrt(d)`` against the Benaych-Georges-Nadakuditi
formulas (``specdyn.theory.rmt.rectangular_spike``, written and tested
independently), pure-noise matrices (no outliers), exact orthogonality.
"""

from __future__ import annotations

import numpy as np
import pytest

from specdyn.measure.weight_outliers import orthonormal_powers, weight_outliers
from specdyn.theory.rmt import rectangular_spike


def _noise(N: int, d: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((N, d)) / np.sqrt(d)


@pytest.mark.parametrize(("N", "d"), [(300, 300), (240, 480), (480, 240)])
def test_pure_noise_has_no_outliers(N: int, d: int) -> None:
    # threshold at the 1% Tracy-Widom level: over 10 seeds expect ~0.1 false positives;
    # allow 1 (the fitted edge adds a little noise to the threshold)
    false = sum(weight_outliers(_noise(N, d, s)).count for s in range(10))
    assert false <= 1


def test_fitted_edge_matches_marchenko_pastur_on_noise() -> None:
    # edge of G/sqrt(d) is 1 + sqrt(N/d); finite-size shift is O(N^(-2/3)) ~ 0.01 here
    o = weight_outliers(_noise(400, 800, 0))
    assert o.edge == pytest.approx(1 + np.sqrt(0.5), abs=0.03)
    assert o.mp_edge == pytest.approx(1 + np.sqrt(0.5), abs=0.01)
    assert o.noise_level == pytest.approx(1.0, abs=0.02)


def test_fitted_edge_follows_a_deformed_bulk() -> None:
    # rows with a variance profile: not MP; the fitted edge must sit at the top of
    # the bulk (no false outliers) while the MP edge of the fitted level underestimates it
    rng = np.random.default_rng(1)
    N, d = 500, 500
    prof = np.where(np.arange(N) < N // 10, 2.0, 1.0)  # 10% of the rows twice as large
    W = prof[:, None] * rng.standard_normal((N, d)) / np.sqrt(d)
    o = weight_outliers(W)
    assert o.count == 0
    assert abs(o.edge - o.singular_values[0]) < 0.05 * o.singular_values[0]
    assert o.mp_edge < 0.95 * o.singular_values[0]
    assert weight_outliers(W, edge_method="mp").count > 0


@pytest.mark.parametrize(("N", "d"), [(600, 600), (400, 800), (800, 400)])
def test_planted_spikes_match_rectangular_formulas(N: int, d: int) -> None:
    rng = np.random.default_rng(2)
    a = rng.standard_normal(N) / np.sqrt(N)
    Q = orthonormal_powers(a, 2)
    beta = rng.standard_normal(d)
    beta /= np.linalg.norm(beta)
    other = rng.standard_normal(d)
    other -= (other @ beta) * beta
    other /= np.linalg.norm(other)
    c = N / d
    th1, th2 = 3.0, 1.8
    W = _noise(N, d, 3) + th1 * np.outer(Q[:, 0], beta) + th2 * np.outer(Q[:, 1], other)
    o = weight_outliers(W, a, beta)
    assert o.count == 2
    for i, th in enumerate((th1, th2)):
        p = rectangular_spike(th, c)
        # finite-size fluctuations of outliers are O(N^(-1/2)) ~ 4%: 3% on values, 0.07 on overlaps
        assert o.values[i] == pytest.approx(p.singular_value, rel=0.03)
        assert o.left_overlap2[i, i] == pytest.approx(p.left_overlap2, abs=0.07)
    np.testing.assert_array_equal(o.identity, [0, 1])
    assert o.right_alignment[0] == pytest.approx(rectangular_spike(th1, c).right_overlap2,
                                                 abs=0.07)
    assert o.right_alignment[1] < 0.05  # the second spike is orthogonal to beta
    dirs = o.direction_alignment()
    assert dirs[0] == pytest.approx(np.sqrt(o.right_alignment[0]))
    assert np.isnan(dirs[2:]).all()  # a^3, a^4: no outlier carries them


def test_singular_vectors_are_orthonormal_and_consistent() -> None:
    rng = np.random.default_rng(4)
    N, d = 300, 200
    u, w = rng.standard_normal(N), rng.standard_normal(d)
    W = _noise(N, d, 5) + 4 * np.outer(u / np.linalg.norm(u), w / np.linalg.norm(w))
    o = weight_outliers(W)
    assert o.count == 1
    np.testing.assert_allclose(o.left.T @ o.left, np.eye(1), atol=1e-10)
    np.testing.assert_allclose(W @ o.right[:, 0], o.values[0] * o.left[:, 0], atol=1e-10)
    np.testing.assert_allclose(o.singular_values, np.linalg.svd(W, compute_uv=False),
                               rtol=1e-9)


def test_orthonormal_powers() -> None:
    a = np.random.default_rng(0).standard_normal(500) / np.sqrt(500)
    Q = orthonormal_powers(a, 4)
    np.testing.assert_allclose(Q.T @ Q, np.eye(4), atol=1e-12)
    # column j lies in span(a, ..., a^(j+1)) and is orthogonal to the previous powers
    assert abs(Q[:, 0] @ a / np.linalg.norm(a)) == pytest.approx(1.0)
    assert abs(Q[:, 1] @ a) < 1e-12


def test_torch_input_equals_numpy() -> None:
    torch = pytest.importorskip("torch")
    W = _noise(200, 150, 6)
    W[:, 0] += 0.5
    o_np = weight_outliers(W)
    o_t = weight_outliers(torch.from_numpy(W))
    np.testing.assert_allclose(o_t.singular_values, o_np.singular_values)
    assert o_t.count == o_np.count


def test_bad_input() -> None:
    W = _noise(50, 40, 0)
    with pytest.raises(ValueError, match="W"):
        weight_outliers(np.zeros(5))
    with pytest.raises(ValueError, match="pvalue"):
        weight_outliers(W, pvalue=1.5)
    with pytest.raises(ValueError, match="reference"):
        weight_outliers(W, reference=np.ones(7))
    with pytest.raises(ValueError, match="target_direction"):
        weight_outliers(W, target_direction=np.ones(3))
    with pytest.raises(ValueError, match="edge_method"):
        weight_outliers(W, edge_method="guess")
    with pytest.raises(ValueError, match="reference"):
        orthonormal_powers(np.zeros(10), 2)
    with pytest.raises(ValueError, match="W"):
        weight_outliers(np.full((4, 4), np.nan))


def test_count_edge_and_threshold_are_find_outliers_fitted_edge() -> None:
    # one outlier test: weight_outliers' numbers are find_outliers(edge="fit") on the
    # squared singular values (N samples, d features), in singular-value units
    from specdyn.measure.outliers import find_outliers

    rng = np.random.default_rng(7)
    N, d = 300, 450
    W = _noise(N, d, 8) + 3.0 * np.outer(rng.standard_normal(N) / np.sqrt(N),
                                         rng.standard_normal(d) / np.sqrt(d))
    o = weight_outliers(W)
    rep = find_outliers(np.linalg.svd(W, compute_uv=False) ** 2, d / N, 0.01,
                        n_samples=N, max_candidates=20, edge="fit")
    assert o.count == rep.n_outliers == 1
    assert o.edge == pytest.approx(np.sqrt(rep.edge), rel=1e-10)
    assert o.threshold == pytest.approx(np.sqrt(rep.threshold), rel=1e-10)
    assert o.noise_level == pytest.approx(rep.sigma2 * d / N, rel=1e-10)
