"""Effective linear theory of nonlinear students (specdyn.theory.effective).

Oracles: closed forms of ``c1 = E[phi'(h)]`` (ReLU and GELU 1/2, identity 1,
erf ``2 / sqrt(pi (1 + 2 var))``) and adaptive quadrature (scipy.integrate.quad)
for tanh; the quadrature inside the module is Gauss-Hermite on ``phi`` itself.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import quad

from specdyn import theory
from specdyn.settings import AlignedSetting, PowerLawSetting


@pytest.mark.parametrize("var", [0.01, 0.37, 4.7])
def test_linear_coefficient_closed_forms(var: float) -> None:
    assert abs(theory.linear_coefficient("relu", var) - 0.5) < 1e-12
    assert abs(theory.linear_coefficient("gelu", var) - 0.5) < 1e-10
    assert abs(theory.linear_coefficient("linear", var) - 1.0) < 1e-12
    want_erf = 2.0 / np.sqrt(np.pi * (1.0 + 2.0 * var))
    assert abs(theory.linear_coefficient("erf", var) - want_erf) < 1e-10


@pytest.mark.parametrize("var", [0.05, 4.7])
def test_tanh_coefficient_matches_adaptive_quadrature(var: float) -> None:
    sd = np.sqrt(var)
    want, _ = quad(lambda h: np.exp(-h * h / (2 * var)) / (sd * np.sqrt(2 * np.pi))
                   / np.cosh(h) ** 2, -40 * sd, 40 * sd, limit=400, epsabs=1e-14,
                   epsrel=1e-13)
    # 200 Gauss-Hermite nodes: tanh(sd z) has complex poles, so ~1e-8 at var = 4.7
    assert abs(theory.linear_coefficient("tanh", var) - want) < 1e-8


def test_effective_setting_divides_gamma0_by_c1() -> None:
    s = PowerLawSetting.paper(1.0, 0.5, D=64)
    assert abs(theory.effective_setting(s, "relu").gamma0 - 2 * s.gamma0) < 1e-12 * s.gamma0
    q = s.sigma_w**2 * s.spectra()[0].sum()
    eff = theory.effective_setting(s, "tanh")
    assert abs(eff.gamma0 - s.gamma0 / theory.linear_coefficient("tanh", q)) < 1e-12
    assert (eff.alpha, eff.sigma_w, eff.D) == (s.alpha, s.sigma_w, s.D)
    a = AlignedSetting([1.0, 0.5], [1.0, 0.2], 0.3, 1.0, 2.0)
    assert isinstance(theory.effective_setting(a, "relu"), AlignedSetting)
    # a numpy callable works like its name
    s2 = theory.effective_setting(s, lambda z: np.maximum(z, 0.0))
    assert abs(s2.gamma0 - 2 * s.gamma0) < 1e-12 * s.gamma0


def test_activation_without_coefficient_is_named() -> None:
    s = PowerLawSetting.paper(0.1, 2.0, D=16)
    with pytest.raises(ValueError, match="'quadratic'.*no usable linear part"):
        theory.effective_setting(s, "quadratic")
    with pytest.raises(ValueError, match="'swish'"):
        theory.effective_setting(s, "swish")
    with pytest.raises(ValueError, match="D must be set"):
        theory.effective_setting(PowerLawSetting.paper(0.1, 2.0), "relu")
    with pytest.raises(ValueError, match="var"):
        theory.linear_coefficient("relu", 0.0)
