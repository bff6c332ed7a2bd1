"""Hypothesis fuzz of every public theory function over the issue-17 ranges.

alpha, beta in [1e-3, 10]; sigma_w, sigma_a, lambda0, mu0 in [1e-150, 1e150];
gamma0 in [1e-300, 1e300]; k in [1, 1e300]; t in [0, inf]. A setting is either
refused at construction with a ``ValueError`` (its spectra would leave float64:
the documented refusal) or every function returns without an exception or a
floating-point warning, with no NaN; spectra, Gram entries, losses, exponents
and region ratios are finite; boundaries in k and t are >= 0 and may be ``inf``
(beyond float64, or never). ``benchmarks/fuzz_theory.py`` runs the same checks
over 20,000 settings.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specdyn import PowerLawSetting, theory


def log_uniform(lo: float, hi: float) -> st.SearchStrategy[float]:
    return st.floats(np.log10(lo), np.log10(hi)).map(lambda e: float(min(max(10.0**e, lo), hi)))


SETTING = st.fixed_dictionaries({
    "alpha": log_uniform(1e-3, 10.0), "beta": log_uniform(1e-3, 10.0),
    "sigma_w": log_uniform(1e-150, 1e150), "sigma_a": log_uniform(1e-150, 1e150),
    "lambda0": log_uniform(1e-150, 1e150), "mu0": log_uniform(1e-150, 1e150),
    "gamma0": log_uniform(1e-300, 1e300)})
MODES = st.lists(st.one_of(st.just(1.0), st.just(1e300), log_uniform(1.0, 1e300)),
                 min_size=1, max_size=3)
TIMES = st.lists(st.one_of(st.just(0.0), st.just(np.inf), log_uniform(1e-300, 1e300)),
                 min_size=1, max_size=3)

Fn = Callable[[PowerLawSetting, np.ndarray, np.ndarray], Any]
FINITE: dict[str, Fn] = {
    "rho": theory.rho, "xi": theory.xi, "eta": theory.eta, "zeta": theory.zeta,
    "delta_eta": theory.delta_eta, "alpha_eff": theory.alpha_eff,
    "mode_loss": theory.mode_loss,
    "loss": lambda s, k, t: theory.loss(s, t[0], D=4),
    "region_quantities": lambda s, k, t: np.stack(list(
        theory.region_quantities(s, k, t).values())),
    "rho_first_layer": theory.rho_first_layer, "xi_first_layer": theory.xi_first_layer,
    "alpha_eff_first_layer": theory.alpha_eff_first_layer,
    "cross_level": lambda s, k, t: theory.cross_level(s),
    "asymptotic_exponents": lambda s, k, t: list(theory.asymptotic_exponents(s).values()),
}
LABELS: dict[str, Fn] = {"region": theory.region,
                         "region_first_layer": theory.region_first_layer}
BOUNDS: dict[str, Fn] = {
    "t_learn": lambda s, k, t: theory.t_learn(s, k),
    "t_cross": lambda s, k, t: theory.t_cross(s, k),
    "t_layer": lambda s, k, t: theory.t_layer(s, k),
    "time_to_xi": lambda s, k, t: theory.time_to_xi(s, k, theory.cross_level(s)),
    "k_u": lambda s, k, t: theory.k_u(s), "k_l": lambda s, k, t: theory.k_l(s),
    "k_region_ii": lambda s, k, t: theory.k_region_ii(s),
    "regime": lambda s, k, t: [theory.regime(s).k_u, *(
        x for lo_hi in theory.regime(s).ranges.values() for x in lo_hi)],
    "k_learn_first_layer": lambda s, k, t: theory.k_learn_first_layer(s, t),
    "k1": lambda s, k, t: theory.k1(s), "k2": lambda s, k, t: theory.k2(s, t),
    "t_star": lambda s, k, t: theory.t_star(s),
    "k_cross_first_layer": lambda s, k, t: theory.k_cross_first_layer(s, t),
}
INVERSES: dict[str, Fn] = {
    "k_learn": lambda s, k, t: theory.k_learn(s, t),
    "k_cross": lambda s, k, t: theory.k_cross(s, t),
    "k_layer": lambda s, k, t: theory.k_layer(s, t),
}


def evaluate(kw: dict[str, float], k: list[float], t: list[float],
             groups: list[tuple[str, dict[str, Fn]]]) -> PowerLawSetting | None:
    try:
        s = PowerLawSetting(**kw)
    except ValueError as err:  # the documented refusal, and only that
        assert "beyond float64" in str(err) or "normal float64" in str(err), str(err)
        return None
    kk = np.array(k)[:, None]
    tt = np.array(t)[None, :]
    for kind, fns in groups:
        for name, fn in fns.items():
            with np.errstate(over="raise", divide="raise", invalid="raise", under="ignore"):
                out = fn(s, kk, tt)
            if kind == "label":
                continue
            arr = np.asarray(out, dtype=np.float64)
            assert not np.isnan(arr).any(), (name, kw)
            if kind == "finite":
                assert np.isfinite(arr).all(), (name, kw)
            else:
                assert (arr >= 0).all(), (name, kw)
    return s


def fuzz(n: int) -> settings:
    return settings(max_examples=n, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


@fuzz(1000)
@given(SETTING, MODES, TIMES)
def test_every_theory_function_is_finite_or_refuses(kw: dict[str, float], k: list[float],
                                                    t: list[float]) -> None:
    evaluate(kw, k, t, [("finite", FINITE), ("label", LABELS), ("bound", BOUNDS)])


@fuzz(200)
@given(SETTING, TIMES)
def test_inverse_boundaries_are_finite_and_invert(kw: dict[str, float], t: list[float]) -> None:
    s = evaluate(kw, [1.0], t, [("bound", INVERSES)])
    if s is None:
        return
    tt = np.array([x for x in t if 0 < x < np.inf])
    if tt.size == 0:
        return
    k = theory.k_learn(s, tt)
    ok = np.isfinite(k) & (k >= 1)
    if ok.any():  # t_learn(k_learn(t)) == t to ~1e-10 over the whole range, t = 1e300 included
        np.testing.assert_allclose(theory.t_learn(s, k[ok]), tt[ok], rtol=1e-9)


def test_round_trip_at_t_1e300() -> None:
    # issue 17: off by 3.7e-5 before mode constants were taken from log k
    s = PowerLawSetting.paper(0.1, 2.0)
    for t in (1e3, 1e100, 1e300):
        assert theory.t_learn(s, theory.k_learn(s, t)) == pytest.approx(t, rel=1e-11)


@pytest.mark.parametrize("kw", [
    dict(alpha=1.0, beta=1e-3, sigma_w=0.1, sigma_a=1.0, gamma0=10.0),  # k_u = 10**(2000+)
    dict(alpha=10.0, beta=1e-3, sigma_w=1e-150, sigma_a=1e150, gamma0=1e-300),
])
def test_boundaries_beyond_float64_are_inf_not_overflow_error(kw: dict[str, float]) -> None:
    s = PowerLawSetting(**kw)
    for fn in (theory.k_u, theory.k_l, theory.k_region_ii, theory.k1, theory.t_star):
        value = fn(s)
        assert value >= 0 and not np.isnan(value)
    rep = theory.regime(s)
    assert all(lo <= hi for lo, hi in rep.ranges.values())


def test_gamma0_1e_minus_160_is_finite() -> None:
    s = PowerLawSetting(alpha=1.0, beta=1.0, sigma_w=0.1, sigma_a=1.0, gamma0=1e-160)
    k = np.array([[1.0], [10.0], [100.0]])
    t = np.array([[0.0, 1.0, 1e4, np.inf]])
    for fn in (theory.rho, theory.alpha_eff, theory.rho_first_layer,
               theory.alpha_eff_first_layer):
        assert np.isfinite(fn(s, k, t)).all()
    # the learned part is negligible: the spectrum stays at its start
    np.testing.assert_allclose(theory.rho(s, k, t), np.broadcast_to(0.01 * s.lam(k), (3, 4)),
                               rtol=1e-12)
