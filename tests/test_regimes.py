"""The core paper's two regimes (Appendix G), their one home ``specdyn.settings``.

The oracle is the paper's own arithmetic, written out here: ``mu0 = 1/zeta(2) = 6/pi^2``
for ``alpha = beta = 1``, so ``theta0 = sqrt(6)/pi`` and ``gamma0 = ratio * S / theta0``.
"""

from __future__ import annotations

import math

import pytest

from specdyn.settings import FEATURE_LEARNING, LAZY, PAPER_REGIMES, PowerLawSetting, Regime

THETA0 = math.sqrt(6.0) / math.pi


@pytest.mark.parametrize(("regime", "sigma_w", "ratio"), [
    (FEATURE_LEARNING, 0.1, 2.0),
    (LAZY, 1.0, 0.5),
])
def test_the_paper_regimes_are_appendix_g(regime: Regime, sigma_w: float, ratio: float) -> None:
    s = regime.setting(D=512)
    S = sigma_w**2 + 1.0
    assert (s.sigma_w, s.sigma_a, s.alpha, s.beta, s.D) == (sigma_w, 1.0, 1.0, 1.0, 512)
    assert s.theta0 == pytest.approx(THETA0, rel=1e-14)
    assert s.gamma0 == pytest.approx(ratio * S / THETA0, rel=1e-14)


def test_the_named_regimes_are_the_two_constants() -> None:
    assert PAPER_REGIMES == {"feature-learning": FEATURE_LEARNING, "lazy": LAZY}
    # the feature-learning one learns features: gamma0 theta0 above S (ratio > 1)
    assert FEATURE_LEARNING.gamma0_ratio > 1 > LAZY.gamma0_ratio


def test_a_regime_setting_is_the_paper_setting_of_its_numbers() -> None:
    r = Regime(0.3, 1.5, sigma_a=0.7)
    assert r.setting(alpha=1.2, beta=0.4, D=8) == PowerLawSetting.paper(
        0.3, 1.5, alpha=1.2, beta=0.4, sigma_a=0.7, D=8)


@pytest.mark.parametrize(("args", "name"), [
    ((0.0, 1.0), "sigma_w"), ((0.1, -1.0), "gamma0_ratio"),
    ((0.1, 1.0, float("nan")), "sigma_a"), ((float("inf"), 1.0), "sigma_w"),
])
def test_a_bad_regime_names_its_field(args: tuple[float, ...], name: str) -> None:
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        Regime(*args)
