"""The both-layers closed form against independent oracles, exact limits and invariants."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdyn import AlignedSetting, PowerLawSetting, theory
from specdyn.theory import oracles


def _random_setting(rng: np.random.Generator) -> PowerLawSetting:
    """Log-uniform over the ranges the issue names."""

    def lu(lo: float, hi: float) -> float:
        return float(np.exp(rng.uniform(np.log(lo), np.log(hi))))

    return PowerLawSetting(alpha=rng.uniform(0.2, 3), beta=rng.uniform(0.2, 3),
                           sigma_w=lu(1e-3, 2), sigma_a=lu(1e-2, 3), gamma0=lu(1e-2, 1e3))


def test_rho_matches_ode_oracle_on_200_random_settings() -> None:
    # Eqs. (144)-(145) integrated by an implicit solver at rtol 1e-12: the closed
    # form must agree to 1e-7 relative for xi, eta, zeta and rho.
    rng = np.random.default_rng(20261202)
    worst = 0.0
    for _ in range(200):
        s = _random_setting(rng)
        k = float(np.exp(rng.uniform(0, np.log(1e4))))
        t = np.concatenate([[0.0], np.exp(rng.uniform(np.log(1e-3), np.log(1e6), 3))])
        ref = oracles.gram_ode(s, k, t)
        for name, fn in (("rho", theory.rho), ("eta", theory.eta), ("zeta", theory.zeta)):
            got = fn(s, k, t)
            worst = max(worst, float(np.max(np.abs(got / ref[name] - 1))))
        # xi starts at 0: compare it relative to its final value gamma0 theta_k
        m = s.gamma0 * np.sqrt(s.mu(np.array(k)))
        worst = max(worst, float(np.max(np.abs(theory.xi(s, k, t) - ref["xi"]) / m)))
    assert worst <= 1e-7


def test_initial_value_is_the_input_spectrum() -> None:
    s = PowerLawSetting.paper(0.3, 2.0, alpha=1.3, beta=0.7)
    k = np.arange(1, 200.0)
    np.testing.assert_allclose(theory.rho(s, k, 0.0), s.sigma_w**2 * s.lam(k), rtol=1e-15)
    assert np.all(theory.xi(s, k, 0.0) == 0)


@pytest.mark.parametrize("gamma0", [1e-2, 1.0, 1e3])
def test_infinite_time_is_the_fixed_point_of_eq_156(gamma0: float) -> None:
    # Fixed point: xi = gamma0 theta_k; eta from the invariant (eta+zeta)^2 - 4 xi^2 = S^2.
    s = PowerLawSetting(alpha=1.0, beta=1.5, sigma_w=0.2, sigma_a=1.1, gamma0=gamma0)
    k = np.logspace(0, 4, 50)
    m = gamma0 * np.sqrt(s.mu(k))
    np.testing.assert_allclose(theory.xi(s, k, np.inf), m, rtol=1e-13)
    eta_inf = s.sigma_w**2 + (np.sqrt(s.S**2 + 4 * m**2) - s.S) / 2
    np.testing.assert_allclose(theory.eta(s, k, np.inf), eta_inf, rtol=1e-12)
    np.testing.assert_allclose(theory.mode_loss(s, k, np.inf), 0.0, atol=0)


def test_finite_at_extreme_times() -> None:
    rng = np.random.default_rng(1)
    for _ in range(50):
        s = _random_setting(rng)
        k = np.logspace(0, 6, 40)
        for t in (1e-300, 1e300, np.inf):
            for fn in (theory.rho, theory.xi, theory.alpha_eff, theory.mode_loss):
                assert np.all(np.isfinite(fn(s, k, t))), (fn.__name__, t, s)
        np.testing.assert_allclose(theory.rho(s, k, 1e300), theory.rho(s, k, np.inf), rtol=1e-14)


def test_conserved_quantities_along_closed_form_and_ode() -> None:
    s = PowerLawSetting(alpha=0.8, beta=1.2, sigma_w=0.05, sigma_a=0.7, gamma0=30.0)
    t = np.logspace(-3, 4, 40)
    for k in (1.0, 13.0, 400.0):
        ode = oracles.gram_ode(s, k, t)
        for src in (ode, {"xi": theory.xi(s, k, t), "eta": theory.eta(s, k, t),
                          "zeta": theory.zeta(s, k, t)}):
            np.testing.assert_allclose(src["eta"] - src["zeta"], s.sigma_w**2 - s.sigma_a**2,
                                       rtol=1e-9)
            inv = (src["eta"] + src["zeta"]) ** 2 - 4 * src["xi"] ** 2
            np.testing.assert_allclose(inv, s.S**2, rtol=1e-9)


def test_alpha_eff_matches_numerical_derivative() -> None:
    # central difference in log k with h = 1e-4: truncation error ~1e-8 relative
    rng = np.random.default_rng(7)
    h = 1e-4
    for _ in range(100):
        s = _random_setting(rng)
        k = np.exp(rng.uniform(0.1, np.log(1e4), 8))
        t = np.exp(rng.uniform(np.log(1e-2), np.log(1e6), 8))
        fd = -(np.log(theory.rho(s, k * np.exp(h), t)) - np.log(theory.rho(s, k * np.exp(-h), t)))
        fd /= 2 * h
        np.testing.assert_allclose(theory.alpha_eff(s, k, t), fd, rtol=1e-5, atol=1e-7)


def test_alpha_eff_limits() -> None:
    s = PowerLawSetting.paper(0.1, 2.0)
    k = np.logspace(0, 5, 30)
    np.testing.assert_allclose(theory.alpha_eff(s, k, 0.0), s.alpha, rtol=1e-12)


@settings(max_examples=60, deadline=None)
@given(alpha=st.floats(0.2, 3), beta=st.floats(0.2, 3), lsw=st.floats(-3, np.log10(2)),
       lsa=st.floats(-2, np.log10(3)), lg=st.floats(-2, 3), lt=st.floats(-3, 8))
def test_spectrum_ordering_is_preserved(alpha: float, beta: float, lsw: float, lsa: float,
                                        lg: float, lt: float) -> None:
    # Appendix F: rho_k(t) is non-increasing in k at every time
    s = PowerLawSetting(alpha, beta, 10**lsw, 10**lsa, 10**lg)
    k = np.logspace(0, 5, 400)
    r = theory.rho(s, k, 10**lt)
    assert np.all(np.diff(r) <= 1e-13 * r[:-1])


def test_aligned_setting_equals_power_law_at_integer_modes() -> None:
    p = PowerLawSetting.paper(0.1, 2.0, D=64)
    lam, mu = p.spectra()
    a = AlignedSetting(lam, mu, p.sigma_w, p.sigma_a, p.gamma0)
    k = np.arange(1, 65)
    t = np.array([0.0, 1.0, 100.0, np.inf])[:, None]
    np.testing.assert_allclose(theory.rho(a, k, t), theory.rho(p, k, t), rtol=1e-14)
    with pytest.raises(ValueError, match="PowerLawSetting"):
        theory.alpha_eff(a, k, t)


def test_deep_feature_learning_shows_all_four_exponents() -> None:
    # sigma_a >> sigma_w and gamma0 theta0 >> S: k_l = 1e8, k_u = 1e14
    s = PowerLawSetting(alpha=1.0, beta=1.0, sigma_w=1e-3, sigma_a=1.0,
                        gamma0=1e4 * (1 + 1e-6), lambda0=1.0, mu0=1.0)
    assert theory.regime(s).label == "feature-learning"
    k = np.logspace(0, 14, 600)
    t = np.logspace(-4, 18, 600)
    K, T = np.meshgrid(k, t, indexing="ij")
    labels = theory.region(s, K, T)
    aeff = theory.alpha_eff(s, K, T)
    for name, expo in theory.asymptotic_exponents(s).items():
        inside = labels == name
        assert inside.any(), name
        assert np.min(np.abs(aeff[inside] - expo)) <= 0.02, name


def test_lazy_setting_keeps_alpha_everywhere() -> None:
    s = PowerLawSetting.paper(1.0, 0.05)
    assert theory.regime(s).label == "lazy"
    k = np.logspace(0, 4, 200)
    t = np.concatenate([[0.0], np.logspace(-3, 8, 200), [np.inf]])
    aeff = theory.alpha_eff(s, k[:, None], t[None, :])
    assert np.max(np.abs(aeff - s.alpha)) <= 0.02
    assert np.all(theory.region(s, k[:, None], t[None, :]) == "I")


def test_paper_lazy_setting_is_only_mildly_lazy() -> None:
    # design.md: at gamma0 = 0.5 S/theta0 alpha_eff departs from alpha by ~0.37 near k = 1
    s = PowerLawSetting.paper(1.0, 0.5)
    dev = np.abs(theory.alpha_eff(s, np.logspace(0, 3, 100)[:, None],
                                  np.logspace(-2, 6, 200)[None, :]) - 1.0).max()
    assert 0.3 < dev < 0.45


def test_mode_loss_decays_and_sums_to_loss() -> None:
    s = PowerLawSetting.paper(0.1, 2.0, D=32)
    t = np.logspace(-2, 4, 50)
    per = theory.mode_loss(s, np.arange(1, 33)[None, :], t[:, None])
    assert np.all(np.diff(per, axis=0) <= 0)
    np.testing.assert_allclose(theory.loss(s, t), per.sum(axis=1), rtol=1e-14)
    # relative accuracy at late times, against the ODE residual gamma0 theta - xi
    ode = oracles.gram_ode(s, 3.0, np.array([5.0, 20.0]))
    lam, theta = s.lam(np.array(3.0)), np.sqrt(s.mu(np.array(3.0)))
    ref = 0.5 * lam * (theta - ode["xi"] / s.gamma0) ** 2
    np.testing.assert_allclose(theory.mode_loss(s, 3.0, np.array([5.0, 20.0])), ref, rtol=1e-5)


@pytest.mark.parametrize(("sigma_w", "ratio"), [(0.1, 2.0), (1.0, 0.5), (0.3, 30.0)])
def test_mode_rate_is_the_relaxation_rate_of_xi(sigma_w: float, ratio: float) -> None:
    s = PowerLawSetting.paper(sigma_w, ratio, alpha=1.2, beta=0.8, sigma_a=1.0, D=64)
    k = np.array([1.0, 3.0, 10.0])
    b = theory.mode_rate(s, k)
    # oracle 1: the paper's rate written out, lambda_k sqrt(S^2 + 4 gamma0^2 mu_k) / gamma0^2
    lam, mu = s.lambda0 * k**-s.alpha, s.mu0 * k**-s.beta  # theta_k^2 = mu_k
    np.testing.assert_allclose(b, lam * np.sqrt(s.S**2 + 4 * s.gamma0**2 * mu) / s.gamma0**2,
                               rtol=1e-14)
    # oracle 2: late in the flow xi_k approaches gamma0 theta_k as exp(-b_k t); the next
    # term is smaller by about exp(-b_k t) / (1 - r_k), below 1e-3 here
    t = 12.0 / b
    gap = lambda tt: theory.xi(s, k, np.inf) - theory.xi(s, k, tt)  # noqa: E731
    np.testing.assert_allclose(np.log(gap(t) / gap(t + 1.0 / b)), 1.0, rtol=1e-3)
