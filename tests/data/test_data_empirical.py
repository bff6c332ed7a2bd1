"""From data to the aligned theory: decomposition, misalignment, the data teacher."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import ortho_group

from specdyn.data.empirical import DataTeacher, aligned_setting, decompose_data


def exact_data(lam: np.ndarray, theta: np.ndarray, M: int, seed: int, P: int | None = None,
               rotate_teacher: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``X`` whose covariance is exactly ``B diag(lam) B^T`` (random basis ``B``) and
    ``Y = X Theta`` with ``Theta = B diag(theta) By^T`` (or a teacher in another random
    basis when ``rotate_teacher``)."""
    rng = np.random.default_rng(seed)
    D = lam.size
    P = D if P is None else P
    q, _ = np.linalg.qr(rng.standard_normal((M, D)))
    q = q - q.mean(axis=0)  # centred columns, then orthonormalised again
    q, _ = np.linalg.qr(q)
    B = ortho_group.rvs(D, random_state=seed)
    X = np.sqrt(M) * (q * np.sqrt(lam)) @ B.T
    By = ortho_group.rvs(P, random_state=seed + 1)
    Bt = ortho_group.rvs(D, random_state=seed + 2) if rotate_teacher else B
    r = min(D, P)
    diag = np.zeros((D, P))
    diag[np.arange(r), np.arange(r)] = theta[:r]
    return X, X @ (Bt @ diag @ By.T), B


def test_aligned_data_give_back_their_spectra_and_zero_misalignment() -> None:
    k = np.arange(1, 21, dtype=float)
    lam, theta = k**-1.2, 0.7 * k**-0.4
    X, Y, B = exact_data(lam, theta, M=400, seed=0)
    dec = decompose_data(X, Y)
    np.testing.assert_allclose(dec.lam, lam, rtol=1e-10)
    np.testing.assert_allclose(dec.mu, theta**2, rtol=1e-8)
    assert dec.total_misalignment < 1e-12 and dec.misalignment.max() < 1e-10
    # the eigenvectors are B's columns (up to sign)
    np.testing.assert_allclose(np.abs(np.sum(dec.U * B, axis=0)), 1.0, atol=1e-8)
    # U^T C V is diagonal in the Gram-Schmidt output basis
    cv = dec.coeffs @ dec.V
    np.testing.assert_allclose(cv - np.diag(np.diag(cv)), 0.0, atol=1e-12)


def test_a_rotated_teacher_is_misaligned() -> None:
    k = np.arange(1, 21, dtype=float)
    X, Y, _ = exact_data(k**-1.0, k**-0.5, M=400, seed=1, rotate_teacher=True)
    dec = decompose_data(X, Y)
    assert dec.total_misalignment > 0.05
    assert dec.misalignment[0] == pytest.approx(0.0, abs=1e-12)  # the first mode owns its row
    assert np.median(dec.misalignment[1:]) > 0.1


def test_a_low_rank_target_is_fully_misaligned_beyond_its_rank() -> None:
    k = np.arange(1, 13, dtype=float)
    X, Y, _ = exact_data(k**-1.0, k**-0.5, M=200, seed=2, P=3)
    dec = decompose_data(X, Y)
    assert dec.P == 3
    np.testing.assert_allclose(dec.misalignment[:3], 0.0, atol=1e-10)
    np.testing.assert_allclose(dec.misalignment[3:], 1.0)  # no output direction left


def test_zero_variance_modes_are_dropped() -> None:
    rng = np.random.default_rng(3)
    X = np.c_[rng.standard_normal((50, 4)), np.zeros((50, 2))]
    dec = decompose_data(X - X.mean(0), rng.standard_normal((50, 2)))
    assert dec.D == 4 and dec.U.shape == (6, 4)


def test_data_teacher_population_is_the_data_set() -> None:
    k = np.arange(1, 9, dtype=float)
    X, Y, _ = exact_data(k**-1.0, k**-0.5, M=64, seed=4)
    dec = decompose_data(X, Y)
    s = aligned_setting(dec, 0.5, 1.0, 1.0)
    t = DataTeacher(s, dec, X, Y)
    sigma, c = t.population()
    np.testing.assert_allclose(sigma, np.diag(dec.lam), atol=1e-12)
    np.testing.assert_allclose(c, dec.coeffs, atol=1e-12)
    x, y = t.sample(64)
    np.testing.assert_allclose(x, (X - X.mean(axis=0)) @ dec.U)
    np.testing.assert_array_equal(y, Y - Y.mean(axis=0))  # centred, as decompose_data saw them
    with pytest.raises(ValueError, match="^M must be <= 64"):
        t.sample(65)


@pytest.mark.parametrize(("X", "Y", "name"), [
    (np.ones(5), np.ones((5, 1)), "X and Y must be 2-D"),
    (np.ones((5, 2)), np.ones((4, 1)), "X and Y must have the same number of rows"),
    (np.full((5, 2), np.nan), np.ones((5, 1)), "X"),
    (np.zeros((5, 2)), np.ones((5, 1)), "X must have nonzero variance"),
])
def test_bad_data_is_refused_with_one_line(X: np.ndarray, Y: np.ndarray, name: str) -> None:
    with pytest.raises(ValueError, match=rf"^{name}") as info:
        decompose_data(X, Y)
    assert "\n" not in str(info.value)


def test_bad_rtol() -> None:
    with pytest.raises(ValueError, match="^rtol"):
        decompose_data(np.eye(3), np.eye(3), rtol=1.0)


def test_decompose_centres_the_data() -> None:
    """A mean offset is no mode: the decomposition of X + 3 (and Y - 1) is that of X, Y.
    Uncentred, the offset became a top mode lambda_1 = 450 and hid the misalignment."""
    k = np.arange(1, 13, dtype=float)
    X, Y, _ = exact_data(k**-1.0, k**-0.5, M=300, seed=5, rotate_teacher=True)
    a, b = decompose_data(X, Y), decompose_data(X + 3.0, Y - 1.0)
    np.testing.assert_allclose(b.lam, a.lam, rtol=1e-9)
    np.testing.assert_allclose(b.mu, a.mu, rtol=1e-7)
    assert b.total_misalignment == pytest.approx(a.total_misalignment, rel=1e-7)
    np.testing.assert_allclose(b.x_mean, X.mean(axis=0) + 3.0, atol=1e-12)
    np.testing.assert_allclose(b.project(X + 3.0), a.project(X), atol=1e-9)
    assert b.lam[0] < 2.0  # the offset's 9 D would be the top eigenvalue uncentred


def test_output_overlap_is_zero_for_an_aligned_teacher_and_not_for_a_rotated_one() -> None:
    k = np.arange(1, 21, dtype=float)
    X, Y, _ = exact_data(k**-1.2, 0.7 * k**-0.4, M=400, seed=0)
    aligned = decompose_data(X, Y)
    assert aligned.output_overlap() < 1e-10 and aligned.offdiagonal_share() < 1e-12
    assert aligned.mode_overlap(10).shape == (10,)
    X, Y, _ = exact_data(k**-1.2, 0.7 * k**-0.4, M=400, seed=0, rotate_teacher=True)
    rotated = decompose_data(X, Y)
    # random unit rows in 20 dimensions: |cos| about 1/sqrt(20) = 0.22 on average
    assert 0.1 < rotated.output_overlap(10) < 0.5
    assert rotated.offdiagonal_share() > 0.1
    with pytest.raises(ValueError, match=r"^kmax must be in \[2, 20\]"):
        rotated.output_overlap(21)


def test_output_overlap_is_the_rms_cosine_of_the_target_rows() -> None:
    """Oracle: the cosines computed directly from the target rows (``U^T C``)."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((500, 6)) * np.arange(6, 0, -1)
    Y = X @ rng.standard_normal((6, 4))
    dec = decompose_data(X, Y)
    c = dec.coeffs[:5]
    cos = [c[i] @ c[j] / np.linalg.norm(c[i]) / np.linalg.norm(c[j])
           for i in range(5) for j in range(5) if i != j]
    assert dec.output_overlap(5) == pytest.approx(np.sqrt(np.mean(np.square(cos))), rel=1e-12)
