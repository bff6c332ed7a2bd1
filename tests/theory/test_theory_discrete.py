"""The discrete-time theory (GD at N = M = inf) against the Gram engine, the flow limit and
its own invariant law."""

from __future__ import annotations

import numpy as np
import pytest

from specdyn import theory
from specdyn.settings import PowerLawSetting
from specdyn.theory.discrete import grams_gd, rho_gd

FIG2 = PowerLawSetting.paper(0.1, 2.0, D=12)  # the paper's Fig. 2 setting
LAZY = PowerLawSetting.paper(1.0, 0.5, D=12)


@pytest.mark.parametrize("s", [FIG2, LAZY])
def test_rho_gd_equals_the_gram_engine_at_infinite_width(s: PowerLawSetting) -> None:
    """Oracle: the Gram engine's GD (torch, full D x D matrices) at N = M = None, a second
    implementation of the same map; equal to round-off."""
    from specdyn.sim import train_linear

    dt = 0.8 / float(theory.mode_rate(s, 1))
    steps = np.array([0, 1, 3, 10, 40, 200])
    tr = train_linear(s, None, None, int(steps.max()), dt=dt, checkpoints=steps, seed=0)
    got = rho_gd(s, np.arange(1, 13.0), steps, dt)
    np.testing.assert_allclose(got, tr.spectra, rtol=1e-12)
    g = grams_gd(s, np.arange(1, 13.0), steps, dt)
    np.testing.assert_allclose(g["eta"], tr.diagonals["eta"], rtol=1e-12)
    np.testing.assert_allclose(g["xi"], tr.diagonals["xi"], rtol=1e-10, atol=1e-14)


def test_rho_gd_tends_to_the_flow_at_first_order_in_dt() -> None:
    """At fixed t, halving dt halves the distance from Eq. (12) (first order), and t = 0 is
    the initialisation."""
    k = np.array([1.0, 2.0, 5.0])
    t = np.array([0.0, 2.0, 6.0, 30.0])
    exact = theory.rho(FIG2, k[None, :], t[:, None])
    errs = []
    for dt in (0.2, 0.1, 0.05):
        got = rho_gd(FIG2, k, np.round(t / dt), dt)
        assert np.array_equal(got[0], FIG2.sigma_w**2 * FIG2.lam(k))
        errs.append(float(np.max(np.abs(np.log(got / exact)))))
    assert errs[2] < 1e-2
    for a, b in zip(errs, errs[1:], strict=False):
        assert 1.8 < a / b < 2.2  # first order


def test_eta_minus_zeta_shrinks_by_the_step_factor() -> None:
    """Eq. (148) is conserved by the flow; one GD step multiplies eta - zeta by 1 - c^2 g^2
    (c = dt/gamma0, g = lambda (theta - xi/gamma0)), checked step by step."""
    k = np.array([1.0, 3.0])
    dt = 0.5
    g = grams_gd(FIG2, k, np.arange(0, 6), dt)
    lam, theta = FIG2.lam(k), np.sqrt(FIG2.mu(k))
    c = dt / FIG2.gamma0
    for n in range(5):
        cg = c * lam * (theta - g["xi"][n] / FIG2.gamma0)
        np.testing.assert_allclose(g["eta"][n + 1] - g["zeta"][n + 1],
                                   (g["eta"][n] - g["zeta"][n]) * (1 - cg**2), rtol=1e-12)


@pytest.mark.parametrize("steps, dt, match", [([1.5], 1.0, "steps"), ([-1], 1.0, "steps"),
                                              ([[1, 2]], 1.0, "steps"), ([1], 0.0, "dt"),
                                              ([1], float("nan"), "dt")])
def test_bad_input_names_the_argument(steps: list, dt: float, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        rho_gd(FIG2, 1.0, steps, dt)
