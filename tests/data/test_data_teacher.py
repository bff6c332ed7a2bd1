"""PowerLawTeacher and Trajectory: moments, bases, reproducibility, bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from specdyn.data import PowerLawTeacher
from specdyn.settings import AlignedSetting, PowerLawSetting
from specdyn.sim import Trajectory
from specdyn.sim.protocol import record_meta

SETTING = PowerLawSetting.paper(0.1, 2.0, D=12)


@pytest.mark.parametrize("rotation", [None, "random", "misaligned"])
def test_sample_moments_match_population(rotation: str | None) -> None:
    # Oracle: the law of large numbers. Entries of X^T X / M have standard error
    # ~ lambda_max / sqrt(M) = 1/sqrt(2e5) ~ 2.2e-3; allow 5 standard errors.
    t = PowerLawTeacher(SETTING, rotation=rotation, seed=4)
    X, Y = t.sample(200_000, seed=1)
    sigma, c = t.population()
    tol = 5 / np.sqrt(200_000)
    assert np.abs(X.T @ X / len(X) - sigma).max() < tol
    assert np.abs(X.T @ Y / len(X) - c).max() < tol
    assert np.abs(Y.T @ Y / len(X) - t.output_second_moment()).max() < tol


@pytest.mark.parametrize("rotation", [None, "random", "misaligned"])
def test_bases_orthonormal_and_spectrum(rotation: str | None) -> None:
    t = PowerLawTeacher(SETTING, P=8, rotation=rotation, seed=2)
    for b in (t.basis_x, t.basis_y, t.basis_theta):
        np.testing.assert_allclose(b.T @ b, np.eye(b.shape[0]), atol=1e-12)
    sigma, _ = t.population()
    np.testing.assert_allclose(t.basis_x.T @ sigma @ t.basis_x, np.diag(t.lam), atol=1e-12)
    assert t.theta.shape == (12, 8)
    # singular values of Theta are sqrt(mu_k), k = 1..P
    np.testing.assert_allclose(np.linalg.svd(t.theta, compute_uv=False),
                               np.sqrt(SETTING.spectra()[1][:8]), rtol=1e-12)


def test_aligned_rotation_commutes_misaligned_does_not() -> None:
    for rotation, commutes in (("random", True), ("misaligned", False)):
        t = PowerLawTeacher(SETTING, rotation=rotation, seed=3)
        sigma, _ = t.population()
        tt = t.theta @ t.theta.T
        comm = np.abs(sigma @ tt - tt @ sigma).max()
        assert (comm < 1e-12) == commutes, (rotation, comm)


def test_sample_reproducible_and_torch_identical() -> None:
    t = PowerLawTeacher(SETTING, rotation="random", noise_std=0.1, seed=0)
    x1, y1 = t.sample(50, seed=7)
    x2, y2 = t.sample(50, seed=7)
    x3, _ = t.sample(50, seed=8)
    np.testing.assert_array_equal(x1, x2)
    np.testing.assert_array_equal(y1, y2)
    assert not np.allclose(x1, x3)
    xt, yt = t.sample_torch(50, seed=7, dtype="float64", device="cpu")
    np.testing.assert_array_equal(xt.numpy(), x1)
    np.testing.assert_array_equal(yt.numpy(), y1)
    # noise: residual of the noiseless teacher has the requested std
    _, yn = t.sample(20_000, seed=9)
    xn, _ = t.sample(20_000, seed=9)
    assert abs(np.std(yn - xn @ t.theta) - 0.1) < 0.005


def test_aligned_setting_teacher() -> None:
    s = AlignedSetting([1.0, 0.5, 0.25], [0.3, 0.2, 0.0], 0.5, 1.0, 1.0)
    t = PowerLawTeacher(s)
    assert (t.D, t.P) == (3, 3)
    np.testing.assert_allclose(t.theta, np.diag(np.sqrt([0.3, 0.2, 0.0])))


@pytest.mark.parametrize("kwargs, match", [
    ({"setting": PowerLawSetting.paper(0.1, 2.0)}, "D"),
    ({"rotation": "spin"}, "rotation"),
    ({"P": 0}, "P"),
    ({"noise_std": -1.0}, "noise_std"),
    ({"seed": -1}, "seed"),
])
def test_teacher_bad_input(kwargs: dict, match: str) -> None:
    args = {"setting": SETTING, **kwargs}
    with pytest.raises(ValueError, match=match):
        PowerLawTeacher(**args)
    with pytest.raises(ValueError, match="M"):
        PowerLawTeacher(SETTING).sample(0)


def test_trajectory_frame_and_shapes() -> None:
    n, D = 3, 4
    spec = np.sort(np.random.default_rng(0).random((n, D)), axis=1)[:, ::-1]
    tr = Trajectory(times=np.arange(n) * 0.5, steps=np.arange(n), loss=np.ones(n),
                    series={"preact": spec}, diagonals={"eta": np.zeros((n, D))},
                    meta=record_meta("test", seed=0, dtype="float64", device="cpu",
                                     start=0.0, steps=2))
    assert tr.spectra is tr.series["preact"] and tr.D == D and len(tr) == n
    df = tr.to_frame()
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == ["step", "t", "quantity", "k", "value"]
    assert len(df) == 2 * n * D + n
    sub = df[(df.quantity == "preact") & (df.step == 2)].sort_values("k")
    np.testing.assert_array_equal(sub.value.to_numpy(), spec[2])
    with pytest.raises(ValueError, match="preact"):
        Trajectory(times=np.zeros(2), steps=np.zeros(2), loss=np.zeros(2),
                   series={"preact": np.zeros((3, 4))}, meta=tr.meta)
    with pytest.raises(ValueError, match="wall_time_s"):
        Trajectory(times=np.zeros(2), steps=np.zeros(2), loss=np.zeros(2),
                   series={"preact": np.zeros((2, 4))}, meta={"engine": "test"})


def test_random_bases_are_haar_distributed() -> None:
    # Oracle: moments of a Haar orthogonal n x n matrix Q: E[Q_ij^2] = 1/n,
    # E[tr Q] = 0, E[(tr Q)^2] = 1, and det Q = +-1 with probability 1/2 each.
    # 1500 draws at n = 4: standard errors 0.0065 (Q_11^2), 0.026 (tr Q),
    # 0.037 ((tr Q)^2, variance 2), 0.013 (det); allowed: 4 of them.
    s = PowerLawSetting.paper(0.1, 2.0, D=4)
    qs = np.stack([PowerLawTeacher(s, P=1, rotation="misaligned", seed=i).basis_theta
                   for i in range(1500)])
    tr = np.trace(qs, axis1=1, axis2=2)
    assert abs(np.mean(qs[:, 0, 0] ** 2) - 0.25) < 4 * 0.0065
    assert abs(np.mean(qs[:, 2, 1] ** 2) - 0.25) < 4 * 0.0065
    assert abs(np.mean(tr)) < 4 * 0.026
    assert abs(np.mean(tr**2) - 1.0) < 4 * 0.037
    assert abs(np.mean(np.linalg.det(qs) > 0) - 0.5) < 4 * 0.013
    # P = 1: the output "basis" is a sign, both signs drawn
    signs = {float(PowerLawTeacher(s, P=1, rotation="random", seed=i).basis_y[0, 0])
             for i in range(20)}
    assert signs == {-1.0, 1.0}
