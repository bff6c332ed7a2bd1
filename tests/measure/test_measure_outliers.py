"""Outlier tests against the Marchenko-Pastur bulk: calibration, power, BBP locations.

Oracles: Monte Carlo of pure-noise and spiked Wishart matrices (fixed seeds)
and the BBP formulas of specdyn.theory.rmt (themselves checked against
simulation in test_measure_rmt.py); Tracy-Widom values from the Fredholm
determinant (rmt.tw_sf) for the fast interpolant.
"""

from __future__ import annotations

import numpy as np
import pytest

from specdyn.measure import find_outliers, fit_mp_bulk, rank_tolerance
from specdyn.measure import outliers as outl
from specdyn.theory import rmt


def _noise_eigs(rng: np.random.Generator, n: int, p: int, s2: float = 1.0,
                theta: float = 0.0) -> np.ndarray:
    F = rng.standard_normal((n, p)) * np.sqrt(s2)
    if theta:
        F[:, 0] *= np.sqrt(1.0 + theta)
    G = F.T @ F / n if p <= n else F @ F.T / n
    return np.linalg.eigvalsh(G)


@pytest.mark.parametrize(("n", "p", "seed"), [(120, 60, 11), (60, 120, 12)])
def test_false_positive_rate_is_nominal_on_pure_noise(n: int, p: int, seed: int) -> None:
    """Pure MP matrices: family-wise false-positive rate within 2 points of 5 %.

    500 trials: the binomial standard deviation is 1 point, so the 2-point band
    is a 2-sigma check of calibration (unknown noise variance, fitted).
    """
    rng = np.random.default_rng(seed)
    trials = 500
    flagged = sum(find_outliers(_noise_eigs(rng, n, p, s2=2.3), p / n).n_outliers > 0
                  for _ in range(trials))
    assert abs(flagged / trials - 0.05) <= 0.02


def test_known_variance_false_positive_rate() -> None:
    rng = np.random.default_rng(21)
    n, p, trials = 150, 50, 400
    flagged = sum(find_outliers(_noise_eigs(rng, n, p), p / n, sigma2=1.0).n_outliers > 0
                  for _ in range(trials))
    assert abs(flagged / trials - 0.05) <= 0.025


@pytest.mark.parametrize("theta", [1.5, 4.0])
def test_planted_spike_found_at_bbp_location(theta: float) -> None:
    """Above threshold (sqrt(gamma) = 0.5): always found; at the BBP location within 3 %.

    The BBP location is the large-size limit; one outlier fluctuates by about
    sqrt(2/n) = 4 % here, so the 3 % check is on the mean of 20 trials
    (standard error ~0.9 %) and each trial is only required within 15 %.
    """
    rng = np.random.default_rng(31)
    n, p = 1200, 300
    pred = rmt.spiked_covariance(theta, p / n, sigma2=1.7)
    locs, strengths, exactly_one = [], [], 0
    for _ in range(20):
        rep = find_outliers(_noise_eigs(rng, n, p, s2=1.7, theta=theta), p / n)
        assert rep.n_outliers >= 1
        exactly_one += rep.n_outliers == 1  # a second one is a 5 %-level false positive
        assert rep.p_values[0] < 1e-6
        assert rep.eigenvalues[0] == pytest.approx(pred.location, rel=0.15)
        assert rep.sigma2 == pytest.approx(1.7, rel=0.02)
        locs.append(rep.eigenvalues[0])
        strengths.append(rep.spike_strength[0])
    assert exactly_one >= 17
    assert np.mean(locs) == pytest.approx(pred.location, rel=0.03)
    assert np.mean(strengths) == pytest.approx(theta, rel=0.05)


def test_two_spikes_found_sequentially() -> None:
    rng = np.random.default_rng(41)
    n, p = 1000, 250
    F = rng.standard_normal((n, p))
    F[:, 0] *= np.sqrt(1 + 6.0)
    F[:, 1] *= np.sqrt(1 + 2.0)
    rep = find_outliers(np.linalg.eigvalsh(F.T @ F / n), p / n)
    assert rep.n_outliers == 2
    locs = rmt.spiked_covariance(np.array([6.0, 2.0]), p / n).location
    assert rep.eigenvalues[:2] == pytest.approx(locs, rel=0.12)


def test_spike_below_threshold_is_not_flagged() -> None:
    """theta = 0.5 sqrt(gamma): no outlier exists, flagged in at most 10 % of trials."""
    rng = np.random.default_rng(51)
    n, p, trials = 200, 100, 200
    theta = 0.5 * np.sqrt(p / n)
    flagged = sum(find_outliers(_noise_eigs(rng, n, p, theta=theta), p / n).n_outliers > 0
                  for _ in range(trials))
    assert flagged / trials <= 0.10


def test_p_greater_than_n_zeros_are_ignored() -> None:
    rng = np.random.default_rng(61)
    n, p = 150, 450
    F = rng.standard_normal((n, p))
    F[:, 0] *= np.sqrt(1 + 8.0)
    nonzero = np.linalg.eigvalsh(F @ F.T / n)
    full = np.concatenate([nonzero, np.zeros(p - n)])
    a = find_outliers(nonzero, p / n)
    b = find_outliers(full, p / n, n_samples=n)
    assert a.n_outliers == b.n_outliers == 1
    assert a.p_values == pytest.approx(b.p_values)
    assert a.eigenvalues[0] == pytest.approx(
        rmt.spiked_covariance(8.0, p / n).location, rel=0.15)


def test_fit_mp_bulk_recovers_variance_with_and_without_spikes() -> None:
    rng = np.random.default_rng(71)
    n, p = 800, 400
    fit = fit_mp_bulk(_noise_eigs(rng, n, p, s2=0.6), p / n)
    assert fit.sigma2 == pytest.approx(0.6, rel=0.01)
    assert (fit.lo, fit.hi) == pytest.approx(rmt.mp_edges(p / n, fit.sigma2))
    assert fit.ks_distance < 0.05
    spiked = _noise_eigs(rng, n, p, s2=0.6, theta=50.0)
    fit_s = fit_mp_bulk(spiked, p / n)
    assert fit_s.n_excluded >= 1
    assert fit_s.sigma2 == pytest.approx(0.6, rel=0.01)
    naive = spiked.sum() / p  # the trace would be biased by the spike
    assert abs(naive / 0.6 - 1) > 0.1


def test_fast_tw_survival_matches_fredholm() -> None:
    s = np.linspace(-7.5, 11.5, 23)
    fast = outl._tw1_sf(s)
    exact = np.asarray(rmt.tw_sf(s, 1))
    assert np.max(np.abs(fast / exact - 1)) < 1e-9


def test_deconvolved_tail_reduces_to_tw_without_noise() -> None:
    for t in (-2.0, 0.5, 3.0):
        assert outl._tw1_sf_deconvolved(t, 0.0)[0] == pytest.approx(float(rmt.tw_sf(t, 1)),
                                                              rel=1e-9)
    # Convolving the deconvolved tail with N(0, c^2) gives back TW1 (to O(c^6)).
    c, t = 0.4, 1.0
    z, w = np.polynomial.hermite_e.hermegauss(40)
    w = w / w.sum()
    back = float(np.dot(w, outl._tw1_sf_deconvolved(t - c * z, np.full(z.size, c))))
    assert back == pytest.approx(float(rmt.tw_sf(t, 1)), rel=2e-3)


@pytest.mark.parametrize(("eigs", "match"), [
    (np.array([]), "eigs"),
    (np.ones((3, 3)), "eigs"),
    (np.array([1.0, np.nan, 2.0, 3.0]), "eigs"),
    (np.array([1.0, np.inf, 2.0, 3.0]), "eigs"),
    (np.array([1.0 + 1j, 2.0, 3.0, 4.0]), "eigs"),
])
def test_bad_eigs_rejected(eigs: np.ndarray, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        find_outliers(eigs, 0.5)
    with pytest.raises(ValueError, match=match):
        fit_mp_bulk(eigs, 0.5)


@pytest.mark.parametrize("ratio", [0.0, -0.5, np.inf, np.nan])
def test_bad_ratio_rejected(ratio: float) -> None:
    eigs = np.linspace(0.5, 2.0, 50)
    with pytest.raises(ValueError, match="ratio"):
        find_outliers(eigs, ratio)


def test_bad_alpha_and_rank_deficiency_rejected() -> None:
    eigs = np.linspace(0.5, 2.0, 50)
    with pytest.raises(ValueError, match="alpha"):
        find_outliers(eigs, 0.5, alpha=1.5)
    deficient = np.concatenate([np.linspace(0.5, 2.0, 30), np.zeros(20)])
    with pytest.raises(ValueError, match="rank deficient"):
        find_outliers(deficient, 0.5)


def test_centred_covariance_with_n_minus_one_degrees_of_freedom() -> None:
    """covariance_spectrum (centred) + n_samples = n - 1: still 5 % +- 2 points (400 trials)."""
    from specdyn.measure import covariance_spectrum

    rng = np.random.default_rng(5)
    n, p, trials = 100, 60, 400
    flagged = 0
    for _ in range(trials):
        eigs = covariance_spectrum(rng.standard_normal((n, p)) + 3.0)
        flagged += find_outliers(eigs, p / (n - 1), n_samples=n - 1).n_outliers > 0
    assert abs(flagged / trials - 0.05) <= 0.02


@pytest.mark.slow
def test_square_gaussian_never_called_rank_deficient() -> None:
    """0 false "rank deficient" errors in 1000 square 300 x 300 Gaussian matrices.

    The smallest eigenvalue of a square Gaussian Gram is often ~1e-11 of the
    largest (seed 95 gives 1.7e-11); the old fixed 1e-10 cut-off called such
    full-rank matrices rank deficient. The tolerance is now lambda_1 * 300 * eps.
    """
    from specdyn.measure import covariance_spectrum

    smallest = []
    for seed in range(1000):
        F = np.random.default_rng(seed).standard_normal((300, 300))
        eigs = covariance_spectrum(F, center=False)
        smallest.append(eigs[-1] / eigs[0])
        fit_mp_bulk(eigs, 1.0, n_samples=300)        # raises if called rank deficient
        find_outliers(eigs, 1.0, n_samples=300)
    assert min(smallest) < 1e-10  # the old cut-off would have failed on these


def test_issue_repro_seed_95_is_full_rank() -> None:
    from specdyn.measure import covariance_spectrum

    F = np.random.default_rng(95).standard_normal((300, 300))
    eigs = covariance_spectrum(F, center=False)
    assert eigs[-1] / eigs[0] < 1e-10
    rep = find_outliers(eigs, 1.0, n_samples=300)
    assert rep.n_outliers == 0 and not rep.cap_reached


def test_three_eigenvalues_are_enough() -> None:
    """3 is the documented minimum: the largest is tested, nothing is capped away."""
    rep = find_outliers([3.0, 2.0, 1.0], 0.5)
    assert rep.eigenvalues.tolist() == [3.0] and rep.max_candidates == 1
    assert fit_mp_bulk([3.0, 2.0, 1.0], 0.5).n_excluded == 0
    with pytest.raises(ValueError, match="at least 3 eigenvalues, got 2"):
        find_outliers([3.0, 2.0], 0.5)


def test_outlier_cap_is_reported() -> None:
    """25 strong spikes over a 15-value bulk fill the cap (20 = 40 // 2): cap_reached says so."""
    rng = np.random.default_rng(0)
    bulk = np.sort(rng.chisquare(80, 15) / 80)[::-1]
    eigs = np.concatenate([np.geomspace(100.0, 10.0, 25), bulk])
    rep = find_outliers(eigs, 0.5, n_samples=80, sigma2=1.0)
    assert rep.max_candidates == 20
    assert rep.n_outliers == 20 and rep.cap_reached
    small = find_outliers(eigs, 0.5, n_samples=80, max_candidates=5)
    assert small.n_outliers == 5 and small.cap_reached
    bad = fit_mp_bulk(eigs, 0.5, n_samples=80)  # the "bulk" it finds is not MP
    assert bad.ks_distance > 1.36 / np.sqrt(bad.n_bulk)
    two = np.concatenate([[100.0, 50.0], rng.chisquare(80, 38) / 80])
    rep2 = find_outliers(two, 0.5, n_samples=80)
    assert rep2.n_outliers == 2 and not rep2.cap_reached
    assert not fit_mp_bulk(two, 0.5, n_samples=80).cap_reached


def test_messages_show_plain_numbers() -> None:
    with pytest.raises(ValueError, match=r"got -1\.0$"):
        find_outliers(np.linspace(0.5, 2.0, 50), np.float64(-1.0))
    with pytest.raises(ValueError, match=r"got 1\.5$"):
        find_outliers(np.linspace(0.5, 2.0, 50), 0.5, alpha=np.float32(1.5))


def test_noise_variance_is_one_fixed_point_for_one_k_and_for_all_k() -> None:
    """``fit_mp_bulk`` (one k at a time) and ``find_outliers`` (k = 0..K at once) solve one
    fixed point: the report's sigma2 is the bulk fit's with the outliers excluded, to the
    bit, and each k's value is the root of the trace equation (oracle: brentq)."""
    from scipy.optimize import brentq

    rng = np.random.default_rng(3)
    n, p = 300, 120
    F = rng.standard_normal((n, p)) * np.sqrt(1.3)
    F[:, :3] *= np.sqrt(1.0 + np.array([8.0, 4.0, 2.5]))   # three spikes
    eigs = np.sort(np.linalg.eigvalsh(F.T @ F / n))[::-1]
    g = p / n
    rep = find_outliers(eigs, g, n_samples=n)
    assert rep.n_outliers == 3
    assert rep.sigma2 == fit_mp_bulk(eigs, g, n_samples=n, n_excluded=3).sigma2
    rest = np.cumsum(eigs[::-1])[::-1]

    def trace_eq(s2: float, k: int) -> float:
        th = rmt.spike_strength_from_eigenvalue(eigs[:k] / s2, g, check=False)
        th = np.where(np.isnan(th), np.sqrt(g), th)
        return s2 * max(p - k - g * np.sum(1 + 1 / th), 0.5 * (p - k)) - rest[k]

    for k in (0, 1, 2, 3, 5, 12):
        got = fit_mp_bulk(eigs, g, n_samples=n, n_excluded=k).sigma2
        root = brentq(trace_eq, 0.3 * got, 3 * got, args=(k,), xtol=1e-15)
        assert got == pytest.approx(root, rel=1e-10)


def test_find_outliers_uses_a_given_bulk_fit_instead_of_refitting(monkeypatch) -> None:
    rng = np.random.default_rng(4)
    n, p = 200, 80
    eigs = _noise_eigs(rng, n, p, s2=0.7, theta=6.0)
    fit = fit_mp_bulk(eigs, p / n, n_samples=n)
    ref = find_outliers(eigs, p / n, n_samples=n)
    calls = []
    monkeypatch.setattr(outl, "fit_mp_bulk", lambda *a, **k: calls.append(1))
    rep = find_outliers(eigs, p / n, n_samples=n, bulk=fit)
    assert calls == []                                       # not fitted again
    assert rep.n_outliers == ref.n_outliers == 1
    assert rep.sigma2 == ref.sigma2 and np.array_equal(rep.p_values, ref.p_values)
    with pytest.raises(ValueError, match=r"bulk must be fit_mp_bulk\(eigs, ratio=0.4"):
        find_outliers(eigs, p / n, n_samples=n, bulk=fit_mp_bulk(eigs, 0.5, n_samples=n))


# ------------------------------------------------------------- edge="fit" (fitted edge)


def test_fitted_edge_false_positives_on_pure_noise_are_rare() -> None:
    """Pure MP noise, level 5 %: the fitted threshold adds the fit's own noise, so the
    rate is checked loosely (at most 12 % of 100 trials; a threshold at the MP edge
    itself, no Tracy-Widom margin, flags about half of them)."""
    rng = np.random.default_rng(71)
    n, p, trials = 300, 150, 100
    flagged = sum(find_outliers(_noise_eigs(rng, n, p, s2=0.7), p / n, edge="fit")
                  .n_outliers > 0 for _ in range(trials))
    assert flagged / trials <= 0.12


def test_fitted_edge_finds_planted_spikes_and_fits_the_noise() -> None:
    rng = np.random.default_rng(41)
    n, p = 1000, 250
    F = rng.standard_normal((n, p)) * np.sqrt(1.7)
    F[:, 0] *= np.sqrt(1 + 6.0)
    F[:, 1] *= np.sqrt(1 + 2.0)
    eigs = np.linalg.eigvalsh(F.T @ F / n)
    rep = find_outliers(eigs, p / n, edge="fit")
    assert rep.edge_model == "fit" and rep.n_outliers == 2
    assert rep.sigma2 == pytest.approx(1.7, rel=0.03)
    # the fitted edge sits at the MP edge of that noise (finite size: ~n^(-2/3))
    assert rep.edge == pytest.approx(rmt.mp_edges(p / n, 1.7)[1], rel=0.03)
    assert rep.edge < rep.threshold < rep.eigenvalues[1]
    np.testing.assert_array_equal(rep.is_outlier, rep.eigenvalues > rep.threshold)
    assert (rep.p_values[rep.is_outlier] < 0.05).all()
    # the count does not depend on the scale of the eigenvalues; the edge scales with it
    scaled = find_outliers(3.0 * eigs, p / n, edge="fit")
    assert scaled.n_outliers == 2
    assert scaled.edge == pytest.approx(3.0 * rep.edge, rel=1e-12)


def test_fitted_edge_follows_a_deformed_bulk_where_mp_does_not() -> None:
    # 10 % of the features twice as large: not MP; the fitted edge follows the top of
    # the bulk (no outliers), the MP test calls the top of that bulk outliers
    rng = np.random.default_rng(1)
    n, p = 500, 500
    prof = np.where(np.arange(p) < p // 10, 2.0, 1.0)
    F = rng.standard_normal((n, p)) * prof[None, :]
    eigs = np.linalg.eigvalsh(F.T @ F / n)
    assert find_outliers(eigs, 1.0, edge="fit").n_outliers == 0
    assert find_outliers(eigs, 1.0).n_outliers > 0


def test_fitted_edge_bad_input() -> None:
    eigs = _noise_eigs(np.random.default_rng(0), 200, 100)
    with pytest.raises(ValueError, match="edge"):
        find_outliers(eigs, 0.5, edge="guess")
    with pytest.raises(ValueError, match="window"):
        find_outliers(eigs, 0.5, window=30)
    with pytest.raises(ValueError, match="window"):
        find_outliers(eigs, 0.5, edge="fit", window=3)
    with pytest.raises(ValueError, match="sigma2"):
        find_outliers(eigs, 0.5, edge="fit", sigma2=1.0)
    with pytest.raises(ValueError, match="too few"):
        find_outliers(eigs[-4:], 0.5, n_samples=8, edge="fit")


def test_square_matrix_with_strong_spikes_keeps_its_smallest_eigenvalue() -> None:
    """A square weight matrix (N = D) with large spikes: lambda_1 sets the rank tolerance,
    and the hard-edge bulk's smallest eigenvalue (O(sigma2 / m^2)) falls below it by chance
    (two-step-phase --full, cell (0.27, 0.33): 1.1e-10 under a tolerance of 2.3e-10). One
    such value is the bulk, not a rank deficiency; two are, and so is one off the hard edge."""
    from specdyn.measure import covariance_spectrum

    eigs = covariance_spectrum(np.random.default_rng(95).standard_normal((300, 300)),
                               center=False)
    spiked = eigs.copy()
    spiked[0] = 1e5 * eigs[0]                                 # tolerance 1e5 x larger
    assert np.sum(spiked <= rank_tolerance(spiked[0], (300, 300))) == 1
    report = find_outliers(spiked, 1.0, n_samples=300)
    assert report.n_outliers >= 1
    two = spiked.copy()
    two[-2] = two[-1]
    with pytest.raises(ValueError, match="rank deficient"):
        find_outliers(two, 1.0, n_samples=300)
    off_edge = np.concatenate([spiked[:150], spiked[-1:]])    # 151 values, ratio 0.5
    with pytest.raises(ValueError, match="rank deficient"):
        find_outliers(off_edge, 0.5, n_samples=302)
    mostly_zero = np.concatenate([np.linspace(0.5, 2.0, 20), np.zeros(30)])
    with pytest.raises(ValueError, match="rank deficient"):  # not a bulk-scale error
        find_outliers(mostly_zero, 1.0)
