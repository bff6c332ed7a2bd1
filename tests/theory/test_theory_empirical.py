"""The aligned setting built from data, where the answer is known: an exactly aligned
power-law teacher gives back the paper's setting and the same rho_k(t)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from specdyn import PowerLawSetting, theory
from specdyn.data.empirical import DataTeacher, aligned_setting, decompose_data

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "data"))
from test_data_empirical import exact_data  # noqa: E402


def _paper_data(D: int = 24, M: int = 300, seed: int = 0):
    p = PowerLawSetting.paper(0.1, 2.0, D=D)
    lam, mu = p.spectra()
    X, Y, _ = exact_data(lam, np.sqrt(mu), M=M, seed=seed)
    return p, X, Y


def test_empirical_setting_of_an_aligned_power_law_teacher_is_the_papers() -> None:
    p, X, Y = _paper_data()
    dec = decompose_data(X, Y)
    s = aligned_setting(dec, p.sigma_w, p.sigma_a, p.gamma0)
    lam, mu = p.spectra()
    np.testing.assert_allclose(s.lam_values, lam, rtol=1e-10)
    np.testing.assert_allclose(s.mu_values, mu, rtol=1e-8)
    np.testing.assert_allclose(s.theta0, p.theta0, rtol=1e-8)
    k = np.arange(1, p.D + 1, dtype=float)
    t = np.r_[0.0, np.geomspace(0.1, 1e5, 30), np.inf][:, None]
    np.testing.assert_allclose(theory.rho(s, k, t), theory.rho(p, k, t), rtol=1e-7)
    np.testing.assert_array_equal(theory.region(s, k, t), theory.region(p, k, t))


def test_gd_on_the_data_set_follows_the_theory_of_its_spectra() -> None:
    """Full-batch GD on the data set at infinite width, small dt: the Gram engine against
    the closed form of the data's own setting (GD's O(dt) error only)."""
    from specdyn.sim import train_linear

    p, X, Y = _paper_data(D=16, M=200, seed=1)
    dec = decompose_data(X, Y)
    s = aligned_setting(dec, p.sigma_w, p.sigma_a, p.gamma0)
    dt = 0.02 / float(theory.mode_rate(s, 1))
    steps = 4000
    traj = train_linear(s, None, None, steps, dt=dt, teacher=DataTeacher(s, dec, X, Y),
                        checkpoints=8, progress=False)
    k = np.arange(1, dec.D + 1)
    rho_th = theory.rho(s, k, traj.times[:, None])
    rho_sim = dec.lam * traj.diagonals["eta"]
    np.testing.assert_allclose(rho_sim, rho_th, rtol=0.02)
    # the sorted spectrum of the network is the theory's (Appendix F: order preserved)
    np.testing.assert_allclose(traj.series["preact"], rho_th, rtol=0.02)
