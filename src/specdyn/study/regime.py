"""The regimes of a network relative to a data set: ``sigma_w``, ``sigma_a`` and ``gamma0``
in units of the data's own top-mode strength."""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["REGIMES", "Regime"]


@dataclass(frozen=True)
class Regime:
    """A setting of the network relative to the data: ``sigma_w``, ``sigma_a`` and
    ``gamma0 = gamma0_ratio * (sigma_w^2 + sigma_a^2) / theta_1`` (``theta_1 = sqrt(mu_1)``,
    the strength of the top-variance mode: the paper's ``theta0``)."""

    sigma_w: float
    gamma0_ratio: float
    sigma_a: float = 1.0

    def __post_init__(self) -> None:
        for name in ("sigma_w", "gamma0_ratio", "sigma_a"):
            x = getattr(self, name)
            if not (isinstance(x, (int, float)) and math.isfinite(x) and x > 0):
                raise ValueError(f"{name} must be a finite number > 0, got {x!r}")


#: The default regimes: the paper's feature-learning setting (Fig. 2) and a lazy one well
#: below the Eq. (33) bound (``gamma0 theta0 = 0.05 S``; the paper's own lazy setting,
#: ``0.5 S``, is only mildly lazy: its exponent departs from alpha by up to 0.37).
REGIMES: dict[str, Regime] = {"feature-learning": Regime(0.1, 2.0), "lazy": Regime(1.0, 0.05)}
