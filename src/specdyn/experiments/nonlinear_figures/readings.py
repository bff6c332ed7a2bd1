"""fig4's readings: the linear theory's slopes at a setting, fitted as the students' are.

Shared by the run (its tables and figure), the wrong models and finite-size-theory's
effective-theory part.
"""

from __future__ import annotations

import numpy as np

from specdyn import theory
from specdyn.measure.exponents import fit_exponents
from specdyn.settings import PowerLawSetting


def theory_slopes(s: PowerLawSetting, times: np.ndarray, kmin: int, kmax: int) -> np.ndarray:
    """The same fit applied to the linear network's exact spectrum ``rho_k(t)``, ``k = 1..D``."""
    assert s.D is not None
    k = np.arange(1, s.D + 1, dtype=np.float64)
    rho = theory.rho(s, k[None, :], np.asarray(times, dtype=np.float64)[:, None])
    return fit_exponents(rho, kmin, kmax)
