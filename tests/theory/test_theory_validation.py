"""Bad input is refused before any work, with the argument and range named."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from specdyn import AlignedSetting, PowerLawSetting, theory


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(sigma_w=0.0), "sigma_w"),
        (dict(sigma_a=-1.0), "sigma_a"),
        (dict(gamma0=0.0), "gamma0"),
        (dict(alpha=float("nan")), "alpha"),
        (dict(beta=-2.0), "beta"),
        (dict(D=0), "D"),
    ],
)
def test_setting_rejects_bad_fields(kwargs: dict, name: str) -> None:
    base = dict(alpha=1.0, beta=1.0, sigma_w=0.1, sigma_a=1.0, gamma0=1.0)
    base.update(kwargs)
    with pytest.raises(ValueError, match=name):
        PowerLawSetting(**base)


def test_aligned_setting_rejects_bad_arrays() -> None:
    with pytest.raises(ValueError, match="same length"):
        AlignedSetting([1.0, 0.5], [1.0], 0.1, 1.0, 1.0)
    with pytest.raises(ValueError, match="lam"):
        AlignedSetting([1.0, -0.5], [1.0, 1.0], 0.1, 1.0, 1.0)


@pytest.mark.parametrize(
    "k, t, name",
    [(0.5, 1.0, "k"), (1.0, -1.0, "t"), (np.nan, 1.0, "k"), (1.0, np.nan, "t"),
     ([1.0, 2.0], [1.0, 2.0, 3.0], "broadcast")],
)
def test_theory_rejects_bad_coordinates(k: object, t: object, name: str) -> None:
    s = PowerLawSetting.paper(0.1, 2.0)
    for fn in (theory.rho, theory.alpha_eff, theory.region, theory.rho_first_layer):
        with pytest.raises(ValueError, match=name):
            fn(s, k, t)


def test_modes_beyond_D_are_refused() -> None:
    s = PowerLawSetting.paper(0.1, 2.0, D=10)
    with pytest.raises(ValueError, match="D = 10"):
        theory.rho(s, 11, 1.0)


def test_theory_imports_without_torch() -> None:
    code = ("import sys, specdyn, specdyn.theory, specdyn.experiments; "
            "assert 'torch' not in sys.modules, 'torch imported'")
    subprocess.run([sys.executable, "-c", code], check=True)
