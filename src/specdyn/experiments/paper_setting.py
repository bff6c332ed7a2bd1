"""The config fields of the paper's power-law setting, one home for the experiments on it.

``fig2``, ``finite-size``, ``finite-size-theory`` and ``simulate`` all train on
:meth:`specdyn.settings.PowerLawSetting.paper` (``lambda0 = 1``,
``mu0 = 1/zeta(alpha+beta)``, ``gamma0 = gamma0_ratio * S / theta0``) with the
paper's Fig. 2 defaults. Their configs inherit these fields, their check and
:meth:`PaperSettingConfig.setting` from here; the TOML file stays flat (one key
a field), so ``specdyn sweep`` can put an axis on any of them.
"""

from __future__ import annotations

from dataclasses import dataclass

from specdyn import _validate as v
from specdyn.settings import FEATURE_LEARNING, PowerLawSetting

__all__ = ["PaperSettingConfig"]


@dataclass(frozen=True)
@v.constrained_fields(alpha=v.POSITIVE, beta=v.POSITIVE, sigma_w=v.POSITIVE, sigma_a=v.POSITIVE,
                      gamma0_ratio=v.POSITIVE, D=v.SIZE, seed=v.SEED)
class PaperSettingConfig:
    """Exponents, initial scales, ``gamma0 / (S / theta0)``, input dimension ``D`` and seed.

    Defaults are the paper's Fig. 2 feature-learning setting
    (:data:`specdyn.settings.FEATURE_LEARNING`); a subclass sets its own ``D`` default.
    """

    alpha: float = 1.0
    beta: float = 1.0
    sigma_w: float = FEATURE_LEARNING.sigma_w
    sigma_a: float = 1.0
    gamma0_ratio: float = FEATURE_LEARNING.gamma0_ratio
    D: int = 32
    seed: int = 0

    def __post_init__(self) -> None:
        # the fields together: alpha + beta > 1, sigma_w, sigma_a and gamma0 representable
        self.setting()

    def setting(self) -> PowerLawSetting:
        """The system simulated, in the paper's units."""
        return PowerLawSetting.paper(self.sigma_w, self.gamma0_ratio, alpha=self.alpha,
                                     beta=self.beta, sigma_a=self.sigma_a,
                                     D=self.D)
