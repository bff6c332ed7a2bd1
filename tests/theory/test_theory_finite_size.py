"""Finite-size theory (specdyn.theory.finite_size) against independent oracles.

Oracle: finite differences of the full Gram gradient flow, integrated here with
scipy from deterministically perturbed initial Grams and data covariance (no
code shared with the theory). For independent Gaussian fluctuations with
variances ``v_i`` (Wishart entries are uncorrelated), the first-order variance
of ``f = log rho_k`` is ``sum_i v_i f_i^2`` and the second-order mean shift is
``sum_i v_i f_ii / 2``: central first and second differences give both.
A small Monte Carlo through the public ``train_linear`` checks the std.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from specdyn import theory
from specdyn.settings import PowerLawSetting
from specdyn.sim import train_linear

S5 = PowerLawSetting.paper(0.1, 2.0, D=5)
TIMES = np.array([0.0, 10.0, 50.0])


def _log_rho(s: PowerLawSetting, gw0: np.ndarray, ga0: np.ndarray, gwa0: np.ndarray,
             sigma: np.ndarray) -> np.ndarray:
    """``log`` of the decreasing eigenvalues of ``Sigma^1/2 Gw Sigma^1/2`` at ``TIMES``."""
    D = sigma.shape[0]
    theta = np.diag(np.sqrt(s.spectra()[1]))
    g = s.gamma0

    def rhs(_t: float, y: np.ndarray) -> np.ndarray:
        gw, ga, gwa = y[:D * D].reshape(D, D), y[D * D:2 * D * D].reshape(D, D), \
            y[2 * D * D:].reshape(D, D)
        G = sigma @ (theta - gwa / g)
        return np.concatenate([((G @ gwa.T + gwa @ G.T) / g).ravel(),
                               ((G.T @ gwa + gwa.T @ G) / g).ravel(),
                               ((gw @ G + G @ ga) / g).ravel()])

    y0 = np.concatenate([gw0.ravel(), ga0.ravel(), gwa0.ravel()])
    sol = solve_ivp(rhs, (0, TIMES[-1]), y0, t_eval=TIMES, method="DOP853", rtol=1e-12,
                    atol=1e-15)
    w, u = np.linalg.eigh(sigma)
    half = (u * np.sqrt(w)) @ u.T
    out = []
    for y in sol.y.T:
        gw = y[:D * D].reshape(D, D)
        out.append(np.log(np.linalg.eigvalsh(half @ gw @ half)[::-1]))
    return np.array(out)


def _fd_moments(s: PowerLawSetting, eps: float = 2e-3) -> dict[str, np.ndarray]:
    """Per-unit (N = 1 or M = 1) mean shift and variance from finite differences."""
    D = s.D
    assert D is not None
    lam = s.spectra()[0]
    sw2, sa2 = s.sigma_w**2, s.sigma_a**2
    base = (sw2 * np.eye(D), sa2 * np.eye(D), np.zeros((D, D)), np.diag(lam))
    f0 = _log_rho(s, *base)
    res = {key: np.zeros_like(f0) for key in ("mean_n", "var_n", "mean_m", "var_m")}
    for which in range(4):  # Gw, Ga, Gwa, Sigma
        for i in range(D):
            for j in range(D):
                if which != 2 and j < i:
                    continue
                if which == 0:
                    var = (2 if i == j else 1) * sw2 * sw2
                elif which == 1:
                    var = (2 if i == j else 1) * sa2 * sa2
                elif which == 2:
                    var = sw2 * sa2
                else:
                    var = (2 if i == j else 1) * lam[i] * lam[j]
                step = eps * np.sqrt(var)
                e = np.zeros((D, D))
                e[i, j] = step
                if which != 2:
                    e[j, i] = step
                fs = []
                for sign in (1.0, -1.0):
                    args = [a.copy() for a in base]
                    args[which] = args[which] + sign * e
                    fs.append(_log_rho(s, *args))
                d1 = (fs[0] - fs[1]) / (2 * eps)  # derivative in units of one std
                d2 = (fs[0] - 2 * f0 + fs[1]) / eps**2
                tag = "m" if which == 3 else "n"
                res["var_" + tag] += d1 * d1
                res["mean_" + tag] += 0.5 * d2
    return res


@pytest.fixture(scope="module")
def fd() -> dict[str, np.ndarray]:
    return _fd_moments(S5)


def _theory_units(s: PowerLawSetting, which: str) -> tuple[np.ndarray, np.ndarray]:
    big = 10**8
    kw = {"N": big} if which == "n" else {"M": big}
    k = np.arange(1, s.D + 1)[None, :]
    m = theory.finite_size_moments(s, k, TIMES[:, None], **kw)
    return m.mean_shift * big, m.std**2 * big


@pytest.mark.parametrize("which", ["n", "m"])
def test_moments_match_finite_differences_of_gram_flow(fd: dict[str, np.ndarray],
                                                       which: str) -> None:
    mean, var = _theory_units(S5, which)
    # FD truncation (eps^2) and the 1e-12 ODE tolerance leave ~1e-4 relative error.
    np.testing.assert_allclose(var, fd["var_" + which], rtol=2e-3, atol=1e-6)
    np.testing.assert_allclose(mean, fd["mean_" + which], rtol=5e-3,
                               atol=2e-3 * np.abs(fd["mean_" + which]).max())


def test_infinite_sizes_give_zero_and_rho_matches_closed_form() -> None:
    s = PowerLawSetting.paper(0.1, 2.0, D=8)
    k, t = np.arange(1, 9)[None, :], TIMES[:, None]
    m = theory.finite_size_moments(s, k, t)
    assert np.all(m.mean_shift == 0) and np.all(m.std == 0) and m.valid.all()
    np.testing.assert_allclose(m.rho, theory.rho(s, k, t), rtol=1e-6)


def test_moments_scale_as_inverse_size_and_flags_small_sizes() -> None:
    s = PowerLawSetting.paper(0.1, 2.0, D=8)
    a = theory.finite_size_moments(s, [1, 2, 8], 10.0, N=1000, M=4000)
    b = theory.finite_size_moments(s, [1, 2, 8], 10.0, N=2000, M=8000)
    np.testing.assert_allclose(b.mean_shift, a.mean_shift / 2, rtol=1e-12)
    np.testing.assert_allclose(b.std, a.std / np.sqrt(2), rtol=1e-12)
    small = theory.finite_size_moments(s, np.arange(1, 9), 0.0, N=4)
    assert not small.valid.all() and np.isfinite(small.ratio).all()
    assert small.valid.shape == (8,)


@pytest.mark.parametrize("kwargs, match", [
    ({"N": 1}, "N"), ({"M": 0}, "M"), ({"t": -1.0}, "t"), ({"t": np.inf}, "t"),
    ({"k": 1.5}, "k"), ({"k": 9}, "k"),
])
def test_bad_input_names_the_argument(kwargs: dict, match: str) -> None:
    s = PowerLawSetting.paper(0.1, 2.0, D=8)
    args = {"k": 1, "t": 1.0, **kwargs}
    with pytest.raises(ValueError, match=match):
        theory.finite_size_moments(s, **args)
    with pytest.raises(ValueError, match="D must be set"):
        theory.finite_size_moments(PowerLawSetting.paper(0.1, 2.0), 1, 1.0, N=100)


def test_std_matches_gram_engine_over_seeds() -> None:
    # 48 seeds: the sample std has ~10 % relative error (1/sqrt(2 * 47)); 3.5 sigma bound.
    s = PowerLawSetting.paper(0.1, 2.0, D=8)
    N, seeds, k = 1024, 48, np.arange(1, 5)
    logs = np.array([np.log(train_linear(s, N, None, steps=50, dt=1.0, method="flow",
                                         checkpoints=[10, 50], seed=i, progress=False)
                            .series["preact"][:, :4]) for i in range(seeds)])
    m = theory.finite_size_moments(s, k[None, :], np.array([10.0, 50.0])[:, None], N=N)
    assert m.valid.all()
    ratio = logs.std(axis=0, ddof=1) / m.std
    assert np.all(np.abs(ratio - 1) < 3.5 / np.sqrt(2 * (seeds - 1))), ratio


def test_finite_m_validity_is_level_spacing_against_relative_fluctuation() -> None:
    # At t = 0 a finite M moves level d_k = sigma_w^2 lambda_k by Var = 2 d_k^2 / M and
    # couples neighbours by E K_kj K_jk = d_k d_j / M (sample-covariance Wishart), so the
    # documented ratio is max_j sqrt(2 d_k^2 + 2 d_j^2 + d_k d_j) / (sqrt(M) |d_k - d_j|),
    # and with alpha = 1 (ratio = sqrt(2 (k+1)^2 + 2 k^2 + k (k+1) / M) ~ sqrt(5/M) (k + 0.6))
    # the valid range ends near k = VALID_RATIO sqrt(M / 5) - 0.6.
    from specdyn.theory.finite_size import VALID_RATIO

    s = PowerLawSetting.paper(0.1, 2.0, D=16)
    d = s.spectra()[0] * s.sigma_w**2
    k = np.arange(1, 17)
    for M in (256, 1024, 4096):
        m = theory.finite_size_moments(s, k, 0.0, M=M)
        dk, dj = d[:, None], d[None, :]
        with np.errstate(divide="ignore"):
            r = np.sqrt(2 * dk**2 + 2 * dj**2 + dk * dj) / (np.sqrt(M) * np.abs(dk - dj))
        np.fill_diagonal(r, 0.0)
        np.testing.assert_allclose(m.ratio, r.max(axis=1), rtol=1e-6)
        last = int(k[m.valid].max())
        assert abs(last - (VALID_RATIO * np.sqrt(M / 5) - 0.6)) <= 1.0, (M, last)
