"""Second layer frozen (Appendices B-C): Eq. (84) vs ODE, Eq. (98) vs a derivative, Eq. (113)."""

from __future__ import annotations

import numpy as np

from specdyn import PowerLawSetting, theory
from specdyn.theory import oracles


def test_rho_first_layer_matches_ode() -> None:
    rng = np.random.default_rng(3)
    for _ in range(40):
        s = PowerLawSetting(alpha=rng.uniform(0.2, 3), beta=rng.uniform(0.2, 3),
                            sigma_w=10 ** rng.uniform(-3, 0.3), sigma_a=10 ** rng.uniform(-2, 0.5),
                            gamma0=10 ** rng.uniform(-2, 3))
        k = 10 ** rng.uniform(0, 4)
        t = np.concatenate([[0.0], 10 ** rng.uniform(-3, 6, 4)])
        np.testing.assert_allclose(theory.rho_first_layer(s, k, t),
                                   oracles.first_layer_ode(s, k, t), rtol=1e-8)


def test_eq98_matches_numerical_derivative() -> None:
    s = PowerLawSetting(alpha=1.2, beta=0.8, sigma_w=0.05, sigma_a=1.0, gamma0=3.0)
    k = np.logspace(0.1, 4, 30)[:, None]
    t = np.logspace(-2, 6, 30)[None, :]
    h = 1e-4
    fd = -(np.log(theory.rho_first_layer(s, k * np.exp(h), t))
           - np.log(theory.rho_first_layer(s, k * np.exp(-h), t))) / (2 * h)
    np.testing.assert_allclose(theory.alpha_eff_first_layer(s, k, t), fd, rtol=1e-6)
    assert np.all(np.isfinite(theory.alpha_eff_first_layer(s, k, np.inf)))


def test_three_regions_of_eq113() -> None:
    # well separated scales: k1 = (mu0/(c sigma_w^2))^(1/beta) = 1e8 here
    s = PowerLawSetting(alpha=1.0, beta=1.0, sigma_w=1e-4, sigma_a=1.0, gamma0=1.0)
    assert theory.k1(s) == np.float64(1e8)
    k = np.logspace(0, 12, 300)[:, None]
    t = np.logspace(-2, 16, 300)[None, :]
    lab = theory.region_first_layer(s, k, t)
    aeff = theory.alpha_eff_first_layer(s, k, t)
    expo = {"I": 1.0, "II": 4.0, "III": 2.0}
    kc = theory.k_cross_first_layer(s, t)
    kl = theory.k_learn_first_layer(s, t)
    for name, val in expo.items():
        # deep inside each region (a factor 30 from every boundary) the exponent is the asymptote
        far = (np.abs(np.log(k / kc)) > np.log(30)) & (np.abs(np.log(k / kl)) > np.log(30))
        sel = (lab == name) & far
        assert sel.any(), name
        assert np.max(np.abs(aeff[sel] - val)) < 0.05, name
    # t* lies on k_learn and on both k1 and k2 (Eq. 111)
    ts = theory.t_star(s)
    assert theory.k_learn_first_layer(s, ts) == np.float64(theory.k1(s)) or np.isclose(
        theory.k_learn_first_layer(s, ts), theory.k1(s), rtol=1e-12)
    assert np.isclose(theory.k2(s, ts), theory.k1(s), rtol=1e-12)
