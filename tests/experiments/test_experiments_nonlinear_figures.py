"""fig4's independent evaluations: the effective theory's c1 by adaptive quadrature, and the
initial spectrum's spread drawn with numpy."""

from __future__ import annotations

import numpy as np
import pytest

from specdyn.experiments.linear_figures.readings import initial_deviation_draws
from specdyn.experiments.nonlinear_figures.claims import independent_c1
from specdyn.settings import PowerLawSetting
from specdyn.theory import linear_coefficient


@pytest.mark.parametrize("act, var", [("relu", 0.3), ("relu", 5.0), ("tanh", 0.02),
                                      ("tanh", 4.0), ("gelu", 1.0), ("erf", 2.0)])
def test_independent_c1_agrees_with_the_hermite_rule(act: str, var: float) -> None:
    """Two evaluations of c1 = E[h phi(h)] / var: adaptive quadrature against the
    Gauss-Hermite rule of theory.linear_coefficient; ReLU's is 1/2 at every variance."""
    got = independent_c1(act, var)
    assert got == pytest.approx(linear_coefficient(act, var), rel=1e-7)
    if act == "relu":
        assert got == pytest.approx(0.5, rel=1e-9)


def test_initial_draws_shrink_with_size_and_vanish_at_infinity() -> None:
    """The t = 0 spread of the spectrum: none at N = M = inf; at finite N alone it falls
    about as 1/sqrt(N) (first order: each rank's log fluctuates by sqrt(2/N))."""
    s = PowerLawSetting.paper(0.1, 2.0, D=8)
    assert np.all(initial_deviation_draws(s, None, None, 3, 0) < 1e-14)  # round-off
    small = initial_deviation_draws(s, 400, None, 64, 1).mean()
    large = initial_deviation_draws(s, 6400, None, 64, 1).mean()
    assert 3.0 < small / large < 5.0  # sqrt(16) = 4
    assert small == pytest.approx(np.sqrt(2 / 400), rel=0.35)
