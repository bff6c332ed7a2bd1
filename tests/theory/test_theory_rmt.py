"""Random-matrix formulas (specdyn.theory.rmt) against independent oracles.

Oracles: scipy quadrature of the MP density; the Hastings-McLeod solution of
Painleve II integrated with scipy's ODE solver (Tracy-Widom's original
formulas); published Tracy-Widom moments (Bornemann 2010, Prahofer-Spohn)
and 95 % / 99 % quantiles (Tracy-Widom tables); Monte Carlo of spiked
matrices for the BBP and Benaych-Georges-Nadakuditi formulas.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, special

from specdyn.theory import rmt

# ---------------------------------------------------------------- Marchenko-Pastur


@pytest.mark.parametrize("ratio", [0.1, 0.5, 1.0, 2.5])
def test_mp_density_mass_matches_quadrature(ratio: float) -> None:
    lo, hi = rmt.mp_edges(ratio, 1.7)
    mass = integrate.quad(lambda x: rmt.mp_density(x, ratio, 1.7), lo, hi, limit=200)[0]
    assert mass == pytest.approx(min(1.0, 1.0 / ratio), abs=1e-7)


@pytest.mark.parametrize("ratio", [0.3, 1.0, 2.5])
def test_mp_cdf_closed_form_matches_quadrature(ratio: float) -> None:
    lo, hi = rmt.mp_edges(ratio, 0.8)
    for x in np.linspace(lo, hi, 7)[1:-1]:
        quad = integrate.quad(lambda t: rmt.mp_density(t, ratio, 0.8), lo, x, limit=200)[0]
        assert rmt.mp_cdf(x, ratio, 0.8) == pytest.approx(quad + max(0, 1 - 1 / ratio), abs=1e-7)
    assert rmt.mp_cdf(hi * 1.01, ratio, 0.8) == pytest.approx(1.0, abs=1e-14)
    assert rmt.mp_cdf(-1.0, ratio, 0.8) == 0.0


def test_mp_edges_formula_and_quantile_inverse() -> None:
    lo, hi = rmt.mp_edges(0.25, 2.0)
    assert (lo, hi) == pytest.approx((2.0 * 0.25, 2.0 * 2.25))
    q = np.linspace(0.01, 0.99, 9)
    assert rmt.mp_cdf(rmt.mp_quantile(q, 0.4, 1.3), 0.4, 1.3) == pytest.approx(q, abs=1e-12)


def test_mp_law_matches_wishart_sample() -> None:
    rng = np.random.default_rng(0)
    n, p = 1600, 400
    F = rng.standard_normal((n, p)) * np.sqrt(0.5)
    eigs = np.sort(np.linalg.eigvalsh(F.T @ F / n))
    ecdf = np.arange(1, p + 1) / p
    ks = np.max(np.abs(ecdf - rmt.mp_cdf(eigs, p / n, 0.5)))
    assert ks < 0.02  # KS of a rigid spectrum: O(log p / p), far below 1/sqrt(p)


# ---------------------------------------------------------------- Tracy-Widom


def _painleve_oracle(s_values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """F1, F2 from the Hastings-McLeod solution of q'' = s q + 2 q^3 (Tracy & Widom 1994/96).

    F2(s) = exp(-int_s^inf (x - s) q^2), F1(s) = exp(-1/2 int_s^inf q) sqrt(F2(s)).
    Integrated from s0 = 8 (q ~ Ai, error O(Ai^3)) down to min(s_values).
    """
    s0 = 8.0
    ai, aip, _, _ = special.airy(s0)
    u0 = integrate.quad(lambda x: special.airy(x)[0] ** 2, s0, np.inf)[0]
    v0 = integrate.quad(lambda x: (x - s0) * special.airy(x)[0] ** 2, s0, np.inf)[0]
    w0 = integrate.quad(lambda x: special.airy(x)[0], s0, np.inf)[0]

    def rhs(s: float, y: np.ndarray) -> list[float]:
        q, qp, u, v, w = y
        return [qp, s * q + 2 * q**3, -(q**2), -u, -q]

    sol = integrate.solve_ivp(rhs, (s0, float(np.min(s_values))), [ai, aip, u0, v0, w0],
                              method="DOP853", rtol=1e-13, atol=1e-16, dense_output=True)
    y = sol.sol(s_values)
    f2 = np.exp(-y[3])
    f1 = np.exp(-0.5 * y[4]) * np.sqrt(f2)
    return f1, f2


def test_tw_cdf_matches_painleve_oracle() -> None:
    s = np.linspace(-5.0, 4.0, 19)
    f1, f2 = _painleve_oracle(s)
    assert np.max(np.abs(rmt.tw_cdf(s, 1) - f1)) < 1e-8
    assert np.max(np.abs(rmt.tw_cdf(s, 2) - f2)) < 1e-8


# Published moments: Bornemann (2010), Table 4 / Prahofer & Spohn (2004).
_TW_MOMENTS = {1: (-1.2065335745820, 1.607781034581), 2: (-1.7710868074116, 0.8131947928329)}


@pytest.mark.parametrize("beta", [1, 2])
def test_tw_moments_match_published_values(beta: int) -> None:
    x, w = np.polynomial.legendre.leggauss(120)
    neg, wn = 7.0 * (x - 1), 7.0 * w  # [-14, 0]
    pos, wp = 7.0 * (x + 1), 7.0 * w  # [0, 14]
    F, S = np.asarray(rmt.tw_cdf(neg, beta)), np.asarray(rmt.tw_sf(pos, beta))
    mean = np.sum(wp * S) - np.sum(wn * F)
    second = np.sum(wp * 2 * pos * S) + np.sum(wn * 2 * np.abs(neg) * F)
    m_ref, var_ref = _TW_MOMENTS[beta]
    assert mean == pytest.approx(m_ref, abs=1e-9)
    assert second - mean**2 == pytest.approx(var_ref, abs=1e-9)


# Tracy & Widom (1996) / Johnstone (2001) Table 1, four decimals.
@pytest.mark.parametrize(("beta", "q", "s"), [(1, 0.95, 0.9793), (1, 0.99, 2.0234),
                                               (2, 0.95, -0.2325), (2, 0.99, 0.4776)])
def test_tw_quantiles_match_tables(beta: int, q: float, s: float) -> None:
    assert rmt.tw_quantile(q, beta) == pytest.approx(s, abs=6e-5)
    assert rmt.tw_cdf(rmt.tw_quantile(q, beta), beta) == pytest.approx(q, abs=1e-12)


def test_tw_sf_is_complement_and_accurate_in_tail() -> None:
    s = np.array([-3.0, 0.0, 2.0, 5.0])
    for beta in (1, 2):
        assert rmt.tw_sf(s, beta) + rmt.tw_cdf(s, beta) == pytest.approx(np.ones(4), abs=1e-14)
    # Far tail: the survival function keeps relative precision (asymptote oracle).
    s_far = 14.0
    asym = np.exp(-2 / 3 * s_far**1.5) / (4 * np.sqrt(np.pi) * s_far**0.75)
    assert rmt.tw_sf(s_far, 1) == pytest.approx(asym, rel=0.03)
    assert rmt.tw_cdf(np.inf, 1) == 1.0 and rmt.tw_cdf(-np.inf, 2) == 0.0


def test_tw1_moments_are_the_laws() -> None:
    """TW1_MEAN and TW1_SD against the law itself: E[s] = int_0^inf sf - int_-inf^0 cdf and
    E[s^2] = 2 (int_0^inf s sf + int_-inf^0 |s| cdf), by quadrature of the Fredholm
    determinant (the constants are Bornemann's tables, typed in)."""
    def sf(s: float) -> float:
        return float(rmt.tw_sf(s, 1))

    def cdf(s: float) -> float:
        return float(rmt.tw_cdf(s, 1))

    pos = integrate.quad(sf, 0.0, 15.0, epsabs=1e-12)[0]
    neg = integrate.quad(cdf, -12.0, 0.0, epsabs=1e-12)[0]
    m2 = 2 * (integrate.quad(lambda s: s * sf(s), 0.0, 15.0, epsabs=1e-12)[0]
              + integrate.quad(lambda s: -s * cdf(s), -12.0, 0.0, epsabs=1e-12)[0])
    mean = pos - neg
    assert mean == pytest.approx(rmt.TW1_MEAN, abs=1e-8)
    assert np.sqrt(m2 - mean**2) == pytest.approx(rmt.TW1_SD, abs=1e-8)


def test_tw_bad_input() -> None:
    with pytest.raises(ValueError, match="beta"):
        rmt.tw_cdf(0.0, beta=4)
    with pytest.raises(ValueError, match="q"):
        rmt.tw_quantile(1.0)
    with pytest.raises(ValueError, match="s"):
        rmt.tw_cdf(np.nan)


def test_wishart_edge_scaling_calibrates_largest_eigenvalue() -> None:
    """Known variance: (l - mu)/sigma of real Wishart matrices exceeds q_TW1(0.95) ~ 5 %."""
    rng = np.random.default_rng(7)
    n, p, trials = 120, 60, 600
    mu, sd = rmt.wishart_edge_scaling(n, p)
    q95 = rmt.tw_quantile(0.95, 1)
    hits = 0
    for _ in range(trials):
        X = rng.standard_normal((n, p))
        hits += (np.linalg.eigvalsh(X.T @ X)[-1] - mu) / sd > q95
    # Binomial sd at 600 trials is 0.9 points; the TW approximation error at this
    # size is below one point (Ma 2012).
    assert abs(hits / trials - 0.05) < 0.02
    assert rmt.wishart_edge_scaling(n, p) == rmt.wishart_edge_scaling(p, n)


# ---------------------------------------------------------------- BBP, spiked covariance


def test_spiked_covariance_threshold_continuity() -> None:
    g = 0.3
    at = rmt.spiked_covariance(np.sqrt(g) * (1 + 1e-9), g)
    assert at.detected
    assert at.location == pytest.approx((1 + np.sqrt(g)) ** 2, rel=1e-8)
    assert at.overlap2 == pytest.approx(0.0, abs=1e-8)
    below = rmt.spiked_covariance(0.5 * np.sqrt(g), g, sigma2=2.0)
    assert not below.detected and below.overlap2 == 0.0
    assert below.location == pytest.approx(2.0 * (1 + np.sqrt(g)) ** 2)


def test_spiked_covariance_matches_monte_carlo() -> None:
    rng = np.random.default_rng(3)
    n, p = 2000, 500
    g = p / n
    for theta in (1.0, 3.0):
        F = rng.standard_normal((n, p))
        F[:, 0] *= np.sqrt(1 + theta)
        lam, vec = np.linalg.eigh(F.T @ F / n)
        pred = rmt.spiked_covariance(theta, g)
        assert lam[-1] == pytest.approx(pred.location, rel=0.03)
        assert vec[0, -1] ** 2 == pytest.approx(pred.overlap2, abs=0.05)


@settings(max_examples=60, deadline=None)
@given(theta=st.floats(0.05, 50.0), gamma=st.floats(0.01, 10.0), s2=st.floats(0.1, 10.0))
def test_spike_strength_inverts_location(theta: float, gamma: float, s2: float) -> None:
    pred = rmt.spiked_covariance(theta, gamma, sigma2=s2)
    back = rmt.spike_strength_from_eigenvalue(pred.location, gamma, sigma2=s2)
    if theta > np.sqrt(gamma) * 1.001:
        assert back == pytest.approx(theta, rel=1e-6)
    elif theta < np.sqrt(gamma):
        assert np.isnan(back)


# ---------------------------------------------------------------- rectangular spike


def test_rectangular_threshold_continuity_and_edge() -> None:
    c = 0.4
    t = c**0.25 * (1 + 1e-9)
    pred = rmt.rectangular_spike(t, c)
    assert pred.detected
    assert pred.singular_value == pytest.approx(rmt.rectangular_bulk_edge(c), rel=1e-8)
    assert pred.left_overlap2 == pytest.approx(0.0, abs=1e-8)
    assert pred.right_overlap2 == pytest.approx(0.0, abs=1e-8)
    below = rmt.rectangular_spike(0.5 * c**0.25, c)
    assert not below.detected and below.left_overlap2 == 0.0


def test_rectangular_spike_matches_monte_carlo() -> None:
    rng = np.random.default_rng(5)
    n, m = 400, 1600
    c = n / m
    G = rng.standard_normal((n, m))
    u = rng.standard_normal(n)
    u /= np.linalg.norm(u)
    vv = rng.standard_normal(m)
    vv /= np.linalg.norm(vv)
    noise_top = np.linalg.svd(G / np.sqrt(m), compute_uv=False)[0]
    assert noise_top == pytest.approx(rmt.rectangular_bulk_edge(c), rel=0.02)
    for theta in (1.2, 2.5):
        U, S, Vt = np.linalg.svd(G / np.sqrt(m) + theta * np.outer(u, vv), full_matrices=False)
        pred = rmt.rectangular_spike(theta, c)
        assert S[0] == pytest.approx(pred.singular_value, rel=0.02)
        assert (U[:, 0] @ u) ** 2 == pytest.approx(pred.left_overlap2, abs=0.05)
        assert (Vt[0] @ vv) ** 2 == pytest.approx(pred.right_overlap2, abs=0.05)


@settings(max_examples=60, deadline=None)
@given(theta=st.floats(0.05, 50.0), c=st.floats(0.01, 10.0))
def test_spike_strength_inverts_singular_value(theta: float, c: float) -> None:
    pred = rmt.rectangular_spike(theta, c)
    back = rmt.spike_strength_from_singular_value(pred.singular_value, c)
    if theta > c**0.25 * 1.001:
        assert back == pytest.approx(theta, rel=1e-6)
    elif theta < c**0.25:
        assert np.isnan(back)


def test_vectorised_over_theta_and_c() -> None:
    pred = rmt.rectangular_spike(np.array([0.1, 1.0, 3.0])[:, None], np.array([0.25, 1.0]))
    assert np.shape(pred.singular_value) == (3, 2)
    assert np.shape(rmt.spiked_covariance(np.array([0.1, 2.0]), 0.5).location) == (2,)


@pytest.mark.parametrize("bad", [0.0, -1.0, np.inf, np.nan])
def test_ratio_outside_open_interval_is_rejected(bad: float) -> None:
    with pytest.raises(ValueError, match="ratio"):
        rmt.mp_edges(bad)
    with pytest.raises(ValueError, match="ratio"):
        rmt.mp_density(1.0, bad)
    with pytest.raises(ValueError, match="ratio"):
        rmt.spiked_covariance(1.0, bad)
    with pytest.raises(ValueError, match="ratio"):
        rmt.rectangular_spike(1.0, bad)


def test_negative_or_complex_theta_rejected() -> None:
    with pytest.raises(ValueError, match="theta"):
        rmt.spiked_covariance(-1.0, 0.5)
    with pytest.raises(ValueError, match="theta"):
        rmt.rectangular_spike(np.array([1 + 1j]), 0.5)
