"""Exponent estimators: exact power laws, sampled power-law covariances, broken laws.

Oracles: spectra constructed with a known exponent (exact), Monte Carlo sample
covariances of a power-law population, and the counting function of the
eigenvalues for the density-exponent convention.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdyn.measure import (
    covariance_spectrum,
    fit_broken_power_law,
    fit_exponents,
    fit_power_law,
    local_exponent,
    two_point_exponent,
)


@settings(max_examples=30, deadline=None)
@given(a=st.floats(0.2, 4.0), C=st.floats(1e-3, 1e3), K=st.integers(20, 3000))
def test_exact_power_law_exponent_to_1e6(a: float, C: float, K: int) -> None:
    lam = C * np.arange(1, K + 1, dtype=np.float64) ** -a
    rng = np.random.default_rng(0)
    fit = fit_power_law(rng.permutation(lam))  # any order, automatic window
    assert abs(fit.exponent - a) < 1e-6
    assert fit.amplitude == pytest.approx(C, rel=1e-6)
    assert fit.r2 == pytest.approx(1.0, abs=1e-9)
    assert fit.ci_low <= fit.exponent <= fit.ci_high
    assert fit.ci_high - fit.ci_low < 1e-6
    given_window = fit_power_law(lam, kmin=2, kmax=K // 2 + 3)
    assert abs(given_window.exponent - a) < 1e-6
    le = local_exponent(lam)
    assert np.max(np.abs(le.exponent - a)) < 1e-6


@pytest.mark.parametrize(("alpha", "seed"), [(1.0, 0), (1.5, 1), (0.8, 2)])
def test_sample_covariance_of_power_law_population(alpha: float, seed: int) -> None:
    """D = 512, M = 4096 samples: automatic window gives alpha within 0.05."""
    rng = np.random.default_rng(seed)
    D, M = 512, 4096
    X = rng.standard_normal((M, D)) * np.arange(1, D + 1) ** (-alpha / 2)
    fit = fit_power_law(covariance_spectrum(X))
    assert abs(fit.exponent - alpha) < 0.05
    assert fit.kmax / fit.kmin >= 10  # a real window, not a couple of points


def test_density_exponent_convention_matches_counting_function() -> None:
    """For lambda_k = k^-a the count N(>x) ~ x^(-1/a): density exponent 1 + 1/a."""
    a = 1.7
    lam = np.arange(1, 20001, dtype=np.float64) ** -a
    fit = fit_power_law(lam, n_boot=0)
    x = np.logspace(np.log10(lam[15000]), np.log10(lam[100]), 20)
    counts = np.array([(lam > xi).sum() for xi in x])
    slope = np.polyfit(np.log(x), np.log(counts), 1)[0]
    assert fit.density_exponent == pytest.approx(1 - slope, abs=3e-3)
    assert fit.density_exponent == pytest.approx(1 + 1 / a)


def test_bootstrap_interval_covers_noise_and_is_reproducible() -> None:
    rng = np.random.default_rng(3)
    k = np.arange(1, 2001, dtype=np.float64)
    lam = k**-1.2 * np.exp(0.05 * rng.standard_normal(k.size))
    f1 = fit_power_law(lam, kmin=1, kmax=2000, seed=5)
    f2 = fit_power_law(lam, kmin=1, kmax=2000, seed=5)
    assert f1 == f2
    assert f1.ci_low < 1.2 < f1.ci_high
    assert f1.ci_high - f1.ci_low < 0.05


@settings(max_examples=30, deadline=None)
@given(a=st.floats(-3.0, 4.0), C=st.floats(1e-3, 1e3), k1=st.integers(1, 40),
       k2=st.integers(1, 40))
def test_two_point_exponent_of_exact_power_law_is_its_exponent(a: float, C: float, k1: int,
                                                                k2: int) -> None:
    if k1 == k2:
        k2 = k1 + 1
    lam = C * np.arange(1, 42, dtype=np.float64) ** -a
    assert two_point_exponent(lam, (k1, k2)) == pytest.approx(a, abs=1e-9)
    assert two_point_exponent(lam, (k2, k1)) == pytest.approx(a, abs=1e-9)


def test_two_point_exponent_rowwise_unsorted() -> None:
    k = np.arange(1, 9, dtype=np.float64)
    rows = np.stack([k**-0.5, 3.0 * k**-2.0, k**1.5])  # the last row increases: kept as given
    got = two_point_exponent(rows.reshape(3, 1, 8))
    assert got.shape == (3, 1)
    assert got[:, 0] == pytest.approx([0.5, 2.0, -1.5], abs=1e-12)
    assert two_point_exponent(np.array([4.0, 1.0])) == pytest.approx(2.0, abs=1e-12)  # log 4/log 2


@pytest.mark.parametrize(("spectra", "ranks", "match"), [
    (np.float64(1.0), (1, 2), "last axis"),
    (np.ones(4), (2, 2), "distinct ranks in 1..4"),
    (np.ones(4), (1, 5), "distinct ranks in 1..4"),
    (np.ones(4), (0, 2), "ranks"),
    (np.ones(4), (1, 2, 3), "two ranks"),
    (np.array([1.0, 0.0, 1.0]), (1, 2), "spectra"),
    (np.array([1.0, np.nan]), (1, 2), "spectra must not contain NaN"),
])
def test_two_point_exponent_bad_input(spectra: np.ndarray, ranks: tuple[int, ...],
                                      match: str) -> None:
    with pytest.raises(ValueError, match=match):
        two_point_exponent(spectra, ranks)  # type: ignore[arg-type]


def test_local_exponent_of_broken_law_follows_segments() -> None:
    k = np.arange(1, 5001, dtype=np.float64)
    lam = np.where(k < 100, k**-1.0, 100.0**-1.0 * (k / 100) ** -2.5)
    le = local_exponent(lam, window=0.3)
    assert np.allclose(le.exponent[(le.rank > 3) & (le.rank < 60)], 1.0, atol=1e-9)
    assert np.allclose(le.exponent[le.rank > 200], 2.5, atol=1e-9)


def test_broken_power_law_recovers_four_regimes() -> None:
    k = np.arange(1, 4001, dtype=np.float64)
    breaks, exps = [20.0, 150.0, 900.0], [0.5, 2.0, 1.0, 3.0]
    logl = -exps[0] * np.log(k)
    for b, e0, e1 in zip(breaks, exps[:-1], exps[1:], strict=True):
        logl -= (e1 - e0) * np.maximum(np.log(k) - np.log(b), 0.0)
    lam = 2.0 * np.exp(logl)
    fit = fit_broken_power_law(lam, 3)
    assert fit.breakpoints == pytest.approx(breaks, rel=1e-3)
    assert fit.exponents == pytest.approx(exps, abs=1e-3)
    assert fit.r2 == pytest.approx(1.0, abs=1e-9)
    assert fit.predict(k) == pytest.approx(lam, rel=1e-3)


@pytest.mark.parametrize(("eigs", "match"), [
    (np.array([]), "eigs"),
    (np.ones((4, 4)), "eigs must be a 1-D"),
    (np.array([3.0, np.nan, 1.0]), "eigs"),
    (np.array([3.0, np.inf, 1.0]), "eigs"),
    (np.array([3.0 + 1j, 2.0, 1.0]), "eigs must be real"),
    (np.array([3.0, -2.0, 1.0]), "eigs must be >= 0"),
    (np.array([1.0, 0.0, 0.0, 0.0]), "at least 3 positive"),
])
def test_bad_eigs_rejected(eigs: np.ndarray, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        fit_power_law(eigs)
    with pytest.raises(ValueError, match=match):
        local_exponent(eigs)


def test_bad_windows_rejected() -> None:
    lam = np.arange(1, 11, dtype=np.float64) ** -1.0
    with pytest.raises(ValueError, match="window"):
        local_exponent(lam, window=0.05)  # 0.05 decades never holds 3 ranks here
    with pytest.raises(ValueError, match="window"):
        local_exponent(lam, window=-1.0)
    with pytest.raises(ValueError, match="at least 3 ranks"):
        fit_power_law(lam, kmin=4, kmax=5)
    with pytest.raises(ValueError, match="kmax"):
        fit_power_law(lam, kmin=1, kmax=50)
    with pytest.raises(ValueError, match="n_breaks"):
        fit_broken_power_law(lam, 4)


@pytest.mark.parametrize("weights", ["log-rank", "uniform"])
@pytest.mark.parametrize("a", [0.5, 1.0, 2.3])
def test_fit_exponents_recovers_exact_power_laws_rowwise(a: float, weights: str) -> None:
    k = np.arange(1, 33, dtype=np.float64)
    spectra = np.stack([3.0 * k**-a, 0.1 * k ** -(a + 1)])
    np.testing.assert_allclose(fit_exponents(spectra, 2, 16, weights=weights), [a, a + 1],
                               rtol=1e-12)
    # any leading shape, any order along the rank axis (rows are sorted decreasing)
    stack = np.stack([spectra, spectra[:, ::-1]])
    np.testing.assert_allclose(fit_exponents(stack, 2, 16, weights=weights),
                               [[a, a + 1], [a, a + 1]], rtol=1e-12)


def test_fit_exponents_uniform_is_ordinary_least_squares() -> None:
    # oracle: the textbook OLS slope cov(x, y) / var(x), written out
    rng = np.random.default_rng(3)
    k = np.arange(1, 41, dtype=np.float64)
    spectra = k**-1.3 * np.exp(0.2 * rng.standard_normal((5, k.size)))
    spectra = -np.sort(-spectra, axis=1)
    x = np.log(k[2:30])
    y = np.log(spectra[:, 2:30])
    xc = x - x.mean()
    ols = -((y - y.mean(axis=1, keepdims=True)) @ xc) / (xc @ xc)
    np.testing.assert_allclose(fit_exponents(spectra, 3, 30, weights="uniform"), ols,
                               rtol=1e-12)


def test_fit_exponents_log_rank_weights_match_fit_power_law() -> None:
    rng = np.random.default_rng(4)
    k = np.arange(1, 65, dtype=np.float64)
    spectra = -np.sort(-(k**-0.9 * np.exp(0.3 * rng.standard_normal((4, k.size)))), axis=1)
    # oracle: weighted normal equations with weights 1/k, written out
    x, y, w = np.log(k[1:48]), np.log(spectra[:, 1:48]), 1.0 / k[1:48]
    mx = (w * x).sum() / w.sum()
    wls = -(((y - (y * w).sum(axis=1, keepdims=True) / w.sum()) * (w * (x - mx))).sum(axis=1)
            / (w * (x - mx) ** 2).sum())
    got = fit_exponents(spectra, 2, 48)
    np.testing.assert_allclose(got, wls, rtol=1e-12)
    np.testing.assert_allclose([fit_power_law(r, 2, 48, n_boot=0).exponent for r in spectra],
                               wls, rtol=1e-12)


def test_fit_exponents_bad_input_names_the_argument() -> None:
    k = np.arange(1, 9, dtype=np.float64)
    with pytest.raises(ValueError, match="kmax must be <= 8"):
        fit_exponents(k**-1.0, 1, 9)
    with pytest.raises(ValueError, match="kmax"):
        fit_exponents(k**-1.0, 2, 3)  # two ranks: no fit
    with pytest.raises(ValueError, match="spectra must be > 0"):
        fit_exponents(np.r_[k[:6] ** -1.0, 0.0, 0.0], 2, 8)
    with pytest.raises(ValueError, match="weights"):
        fit_exponents(k**-1.0, 1, 8, weights="1/k")
    with pytest.raises(ValueError, match="spectra"):
        fit_exponents(np.r_[k[:7] ** -1.0, np.nan], 1, 8)


def test_three_eigenvalues_fit_over_a_given_window_and_five_over_a_chosen_one() -> None:
    """3 ranks are the minimum of a window given by kmin and kmax: an exact power law on 3
    ranks is recovered. Choosing a window needs MIN_WINDOW_RANKS = 5 (the plateau search's
    candidates): with 4 eigenvalues (a 4 x 128 layer) the fit refuses, "too few
    eigenvalues", where it fitted the whole spectrum."""
    from specdyn.measure import fit_power_law
    from specdyn.measure.exponents import MIN_WINDOW_RANKS

    fit = fit_power_law(np.arange(1, 4, dtype=np.float64) ** -1.5, kmin=1, kmax=3)
    assert (fit.kmin, fit.kmax) == (1, 3)
    assert fit.exponent == pytest.approx(1.5, abs=1e-12)
    assert fit.short_window
    assert MIN_WINDOW_RANKS == 5
    for n in (3, 4):
        with pytest.raises(ValueError, match=f"too few eigenvalues: {n} above"):
            fit_power_law(np.arange(1, n + 1, dtype=np.float64) ** -1.5)
    # numerical zeros do not count: 4 positive eigenvalues and 60 round-off zeros
    with pytest.raises(ValueError, match="too few eigenvalues: 4 above"):
        fit_power_law(np.concatenate([np.arange(1, 5.0) ** -1.5, np.full(60, 1e-18)]))
    fit = fit_power_law(np.arange(1, 6, dtype=np.float64) ** -1.5)
    assert (fit.kmin, fit.kmax) == (1, 5) and fit.exponent == pytest.approx(1.5, abs=1e-12)


def test_short_window_is_flagged_and_its_interval_covers_nearby_windows() -> None:
    """A window under a decade: flag set, interval at least as wide as the one-decade spread.

    Oracle: the exponent of each one-decade window containing 20..60, fitted
    independently with numpy.polyfit (weights 1/k).
    """
    from specdyn.measure import fit_power_law

    rng = np.random.default_rng(3)
    k = np.arange(1, 301, dtype=np.float64)
    lam = k ** -np.where(k < 40, 0.8, 1.4) * np.exp(0.02 * rng.standard_normal(k.size))
    lam = np.sort(lam)[::-1]
    fit = fit_power_law(lam, kmin=20, kmax=60)
    assert fit.short_window and fit.decades < 1
    for lo in (6, 10, 20):
        kk = np.arange(lo, lo * 10 + 1)
        slope = np.polyfit(np.log(kk), np.log(lam[kk - 1]), 1, w=np.sqrt(1.0 / kk))[0]
        assert fit.ci_low <= -slope <= fit.ci_high
    long = fit_power_law(lam, kmin=20, kmax=200)
    assert not long.short_window


def test_negative_eigenvalue_message_has_a_plain_number() -> None:
    from specdyn.measure import fit_power_law

    with pytest.raises(ValueError, match=r"got -0\.5$"):
        fit_power_law(np.array([1.0, 0.5, -0.5]))


def test_loglog_fit_recovers_an_exact_power_law_and_refuses_bad_input() -> None:
    from specdyn.measure import loglog_fit

    N = np.array([64.0, 128.0, 256.0, 512.0])
    s, c = loglog_fit(N, 3.0 * N ** -0.5)  # oracle: the law it was built from
    assert s == pytest.approx(-0.5, abs=1e-12) and np.exp(c) == pytest.approx(3.0, rel=1e-12)
    for x, y, match in (([1.0], [1.0], "same length >= 2"), ([1.0, 2.0], [1.0], "same length"),
                        ([0.0, 2.0], [1.0, 2.0], "x must be > 0"),
                        ([1.0, 2.0], [1.0, -2.0], "y must be > 0"),
                        ([1.0, np.nan], [1.0, 2.0], "x must not contain NaN")):
        with pytest.raises(ValueError, match=match):
            loglog_fit(x, y)


def test_mode_order_fits_the_values_as_given() -> None:
    """A per-mode quantity that is not monotone is fitted in mode order, not sorted:
    the oracle is the weighted least-squares line by hand (weights 1/k)."""
    from specdyn.measure import fit_exponents, fit_power_law, mode_exponents

    k = np.arange(1, 41, dtype=float)
    v = k**-1.5 * np.exp(0.4 * np.sin(k))  # wiggles: sorting reorders it
    fit = fit_power_law(v, 2, 30, sort=False, n_boot=0)
    x, y, w = np.log(k[1:30]), np.log(v[1:30]), 1.0 / k[1:30]
    X = np.vstack([np.ones_like(x), x]).T
    beta = np.linalg.solve(X.T @ (w[:, None] * X), X.T @ (w * y))
    assert fit.exponent == pytest.approx(-beta[1], rel=1e-10)
    assert fit_power_law(v, 2, 30, n_boot=0).exponent != pytest.approx(fit.exponent, abs=0.01)
    rows = np.vstack([v, 2 * v])
    np.testing.assert_allclose(fit_exponents(rows, 2, 30, sort=False), fit.exponent,
                               rtol=1e-10)
    np.testing.assert_allclose(mode_exponents(rows, 2, 30), fit.exponent, rtol=1e-10)
    lo_hi = fit_power_law(v, 2, 30, sort=False, seed=1)
    assert lo_hi.ci_low <= fit.exponent <= lo_hi.ci_high


def test_mode_order_is_nan_on_a_wrong_row_and_refuses_bad_windows() -> None:
    from specdyn.measure import fit_power_law, mode_exponents

    v = np.arange(1, 11, dtype=float) ** -1.0
    bad = np.vstack([v, np.r_[v[:4], 0.0, v[5:]], np.full(10, np.nan)])
    out = mode_exponents(bad, 2, 8)
    assert out[0] == pytest.approx(1.0) and np.isnan(out[1:]).all()
    with pytest.raises(ValueError, match="^kmin and kmax must be given"):
        fit_power_law(v, sort=False)
    with pytest.raises(ValueError, match=r"^eigs must be > 0 on the modes 2\.\.8"):
        fit_power_law(bad[1], 2, 8, sort=False)
