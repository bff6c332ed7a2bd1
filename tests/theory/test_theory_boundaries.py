"""Boundary times against the quadrature of Eq. (181), inverses, regions and regimes."""

from __future__ import annotations

import numpy as np
import pytest

from specdyn import PowerLawSetting, theory
from specdyn.theory import oracles


def _settings() -> list[PowerLawSetting]:
    return [
        PowerLawSetting.paper(0.1, 2.0),
        PowerLawSetting(alpha=1.5, beta=0.5, sigma_w=0.01, sigma_a=2.0, gamma0=50.0),
        PowerLawSetting(alpha=0.4, beta=2.5, sigma_w=1.0, sigma_a=0.1, gamma0=300.0),
        PowerLawSetting(alpha=2.0, beta=1.0, sigma_w=1e-3, sigma_a=1e-2, gamma0=1e-2),
    ]


@pytest.mark.parametrize("s", _settings())
def test_boundary_times_match_quadrature(s: PowerLawSetting) -> None:
    for k in (1.0, 2.5, 30.0, 700.0):
        m = s.gamma0 * np.sqrt(s.mu(np.array(k)))
        for fn, C in ((theory.t_learn, 0.9 * m), (theory.t_cross, theory.cross_level(s)),
                      (theory.t_layer, s.S)):
            got = float(fn(s, k))
            ref = oracles.time_to_xi_quadrature(s, k, float(C))
            if np.isinf(ref):
                assert np.isinf(got)
            else:
                assert abs(got / ref - 1) <= 1e-8, (fn.__name__, k, got, ref)


def test_time_to_xi_inverts_xi() -> None:
    s = PowerLawSetting(alpha=1.0, beta=1.0, sigma_w=0.05, sigma_a=1.0, gamma0=20.0)
    k = np.array([1.0, 10.0, 100.0])
    t = np.array([0.3, 3.0, 300.0])
    np.testing.assert_allclose(theory.time_to_xi(s, k, theory.xi(s, k, t)), t, rtol=1e-9)
    assert np.all(np.isinf(theory.time_to_xi(s, k, 2 * s.gamma0 * np.sqrt(s.mu(k)))))


@pytest.mark.parametrize("s", _settings()[:3])
def test_inverse_boundaries_invert_the_times(s: PowerLawSetting) -> None:
    # t(k) -> inf as k -> k_u (or k_l): compare in k, where the inverse is well conditioned
    for k_of_t, t_of_k, k_max in ((theory.k_learn, theory.t_learn, 1e6),
                                  (theory.k_cross, theory.t_cross, theory.k_u(s)),
                                  (theory.k_layer, theory.t_layer, theory.k_l(s))):
        if k_max <= 1.0:
            continue
        k = np.logspace(0, np.log10(k_max) - 0.05, 20)
        np.testing.assert_allclose(k_of_t(s, t_of_k(s, k)), k, rtol=1e-9)
    assert theory.k_cross(s, np.inf) == pytest.approx(theory.k_u(s))
    assert theory.k_layer(s, np.inf) == pytest.approx(theory.k_l(s))
    assert theory.k_learn(s, 0.0) == 0.0 and np.isinf(theory.k_learn(s, np.inf))


def test_region_labels_follow_the_thresholds() -> None:
    s = PowerLawSetting.paper(0.1, 2.0)
    k = np.logspace(0, 4, 100)[:, None]
    t = np.logspace(-2, 7, 100)[None, :]
    q = theory.region_quantities(s, k, t)
    lab = theory.region(s, k, t)
    assert np.all((lab == "I") == (q["R"] < 1))
    assert np.all((lab == "IIIb") == ((q["R"] >= 1) & (q["l"] >= 0.9) & (q["u"] >= 1)))
    assert np.all((lab == "transition") == ((q["R"] >= 1) & (q["l"] < 0.9) & (q["u"] >= 1)))
    assert set(np.unique(lab)) <= {"I", "II", "IIIa", "IIIb", "transition"}


def test_regime_of_the_paper_settings() -> None:
    fl = theory.regime(PowerLawSetting.paper(0.1, 2.0))
    lazy = theory.regime(PowerLawSetting.paper(1.0, 0.5))
    assert fl.label == "feature-learning" and lazy.label == "lazy"
    # Appendix E: k_u and k_l from Eqs. (190), (193)
    assert fl.k_u == pytest.approx((2.0 * 1.01 / np.sqrt(0.01 * 1.02)) ** 2)
    assert fl.k_l == pytest.approx(4.0)
    assert fl.exists["II"] and fl.exists["IIIa"] and not fl.exists["IIIb"]
    assert theory.regime(PowerLawSetting(1, 1, 1.0, 0.5, 10.0)).label == "intermediate"


def test_asymptotic_exponents() -> None:
    s = PowerLawSetting(alpha=0.7, beta=1.3, sigma_w=0.1, sigma_a=1, gamma0=1)
    assert theory.asymptotic_exponents(s) == pytest.approx(
        {"I": 0.7, "II": 3 * 0.7 + 1.3, "IIIa": 2.0, "IIIb": 0.7 + 0.65})


@pytest.mark.parametrize("r", [0.05, 0.4, 1.0, 2.5])
def test_lazy_boundary_is_where_k_u_reaches_one(r: float) -> None:
    # oracle: k_u = (gamma0 theta0 / cross_level)^(2/beta) = 1 on the boundary (Eq. 190)
    for sa in (0.5, 2.0):
        g = float(theory.lazy_boundary(np.array([r]))[0])
        s = PowerLawSetting.paper(r * sa, g, alpha=1.0, beta=1.0, sigma_a=sa, D=16)
        assert theory.k_u(s) == pytest.approx(1.0, rel=1e-12)
        assert theory.regime(PowerLawSetting.paper(r * sa, g / 1.01, alpha=1.0, beta=1.0,
                                                   sigma_a=sa, D=16)).label == "lazy"
    assert np.isnan(theory.feature_boundary(np.array([r]))[0]) == (r >= 1)
    with pytest.raises(ValueError, match="r"):
        theory.lazy_boundary(-1.0)
