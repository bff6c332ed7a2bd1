"""Alignment of top eigen/singular vectors with planted directions vs the BBP predictions."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from specdyn.measure import (
    covariance_alignment,
    overlaps,
    singular_alignment,
    top_eigenvectors,
)
from specdyn.theory import rmt


def test_overlaps_of_basis_vectors() -> None:
    V = np.eye(4)[:, :2]
    D = np.array([[1.0, 1.0], [0.0, 1.0], [0.0, 0.0], [0.0, 0.0]])
    assert overlaps(V, D) == pytest.approx(np.array([[1.0, 0.5], [0.0, 0.5]]))
    assert overlaps(V, D[:, 0]).shape == (2, 1)


def test_covariance_alignment_matches_bbp_overlap() -> None:
    rng = np.random.default_rng(0)
    n, p, theta = 2000, 500, 2.0
    v = rng.standard_normal(p)
    v /= np.linalg.norm(v)
    F = rng.standard_normal((n, p))
    F += (np.sqrt(1 + theta) - 1) * np.outer(F @ v, v)  # covariance I + theta v v^T
    al = covariance_alignment(F, v, k=5)
    pred = rmt.spiked_covariance(theta, p / n)
    assert al.overlap2[0, 0] == pytest.approx(pred.overlap2, abs=0.05)
    assert al.overlap2[1:, 0].sum() < 0.05
    assert 0 <= al.captured[0] <= 1


def test_top_eigenvectors_gram_side_equals_feature_side() -> None:
    rng = np.random.default_rng(1)
    F = rng.standard_normal((30, 80)) * np.linspace(2, 0.1, 80)
    lam, vec = top_eigenvectors(F, 4)
    Fc = F - F.mean(axis=0)
    ref_l, ref_v = np.linalg.eigh(Fc.T @ Fc / 30)
    assert lam == pytest.approx(ref_l[::-1][:4], rel=1e-10)
    assert np.abs(np.sum(vec * ref_v[:, ::-1][:, :4], axis=0)) == pytest.approx(np.ones(4),
                                                                               abs=1e-8)


def test_singular_alignment_matches_rectangular_prediction() -> None:
    rng = np.random.default_rng(2)
    n, m, theta = 400, 1600, 2.0
    u = rng.standard_normal(n)
    u /= np.linalg.norm(u)
    vv = rng.standard_normal(m)
    vv /= np.linalg.norm(vv)
    X = rng.standard_normal((n, m)) / np.sqrt(m) + theta * np.outer(u, vv)
    al = singular_alignment(torch.tensor(X), left=u, right=vv, k=3)
    pred = rmt.rectangular_spike(theta, n / m)
    assert al.singular_values[0] == pytest.approx(pred.singular_value, rel=0.02)
    assert al.left_overlap2[0, 0] == pytest.approx(pred.left_overlap2, abs=0.05)
    assert al.right_overlap2[0, 0] == pytest.approx(pred.right_overlap2, abs=0.05)


def test_bad_directions_rejected() -> None:
    with pytest.raises(ValueError, match="directions"):
        overlaps(np.eye(3), np.zeros(3))
    with pytest.raises(ValueError, match="directions"):
        overlaps(np.eye(3), np.ones(4))
    with pytest.raises(ValueError, match="k"):
        covariance_alignment(np.ones((5, 3)), np.ones(3), k=0)
