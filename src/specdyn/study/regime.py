"""The default regimes of a study of a user's data: ``sigma_w``, ``sigma_a`` and ``gamma0``
in units of the data's own top-mode strength (a :class:`specdyn.settings.Regime`)."""

from __future__ import annotations

from specdyn.settings import FEATURE_LEARNING, Regime

__all__ = ["REGIMES"]

#: The default regimes: the paper's feature-learning setting (Fig. 2) and a lazy one well
#: below the Eq. (33) bound (``gamma0 theta0 = 0.05 S``; the paper's own lazy setting,
#: ``0.5 S``, is only mildly lazy: its exponent departs from alpha by up to 0.37).
REGIMES: dict[str, Regime] = {"feature-learning": FEATURE_LEARNING, "lazy": Regime(1.0, 0.05)}
