"""What the finite-N theory of the step-2 spikes (:mod:`specdyn.theory.two_step_spikes`)
says about each row of a ``two-step-phase`` table: the spikes' strengths, the predicted
count of step-2 outliers, and whether the abstract's ``floor`` is testable at that size.

The theory is evaluated from the config alone (sizes, exponents, activation, target):
nothing here reads a measured number, so the claims can set the table against it.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from specdyn.data.hermite import HermiteTarget
from specdyn.models import numpy_activation
from specdyn.theory.two_step import formula_count
from specdyn.theory.two_step_spikes import StepTwoSpikes, step_two_spikes

#: Tracy-Widom scales by which a predicted outlier must clear the bulk edge to count as
#: resolved (the detection threshold of ``weight_outliers`` is ``q_TW1(0.99) = 2.02`` scales
#: above its fitted edge; 3 leaves a margin for the theory's few-percent error).
RESOLVED_SIGMAS = 3.0
#: A spike the count leaves out must sit this far below the BBP threshold
#: (``theta / noise <= UNRESOLVED_BELOW x c^(1/4)``) for ``floor`` to be testable.
UNRESOLVED_BELOW = 0.85
#: Powers of ``a`` the theory keeps (one more than the table records).
THEORY_POWERS = 5


@functools.lru_cache(maxsize=512)
def cell_spikes(N: int, D: int, M: int, alpha1: float, alpha2: float, activation: str,
                target: str) -> StepTwoSpikes:
    """The theory's spikes of one cell at one size (cached: the claims, the figure and the
    summary ask for the same cells)."""
    sigma, dsigma = numpy_activation(activation)
    tgt = HermiteTarget.named(target)
    return step_two_spikes(int(N), int(D), int(M), float(alpha1), float(alpha2), sigma=sigma,
                           dsigma=dsigma, link=lambda z: np.asarray(tgt.link(z)),
                           K=THEORY_POWERS)


def floor_testable(spikes: StepTwoSpikes, floor: int) -> bool:
    """Whether the abstract's count can be seen at this size: the theory resolves exactly
    the ``floor`` step-2 spikes (by :data:`RESOLVED_SIGMAS`) and the next one lies well
    below the BBP threshold (:data:`UNRESOLVED_BELOW`)."""
    if spikes.step2_count(RESOLVED_SIGMAS) != floor:
        return False
    nxt = floor + 1  # index of the first spike the count leaves out (0 is the step-1 one)
    if nxt >= spikes.theta.size:
        return True
    return bool(spikes.theta[nxt] / spikes.noise <= UNRESOLVED_BELOW * spikes.ratio ** 0.25)


def theory_columns(df: pd.DataFrame, *, activation: str, target: str, N: int | None = None,
                   D: int | None = None, M: int | None = None) -> pd.DataFrame:
    """Per row of a phase table: the theory's step-2 count (``theory_step2``), whether
    ``floor`` is testable there (``testable``), the predicted measured strengths along
    ``a^2`` and ``a^3`` (``theory_a2``, ``theory_a3``) and the predicted location of the
    first step-2 outlier (``theory_s2``, on the theory's own bulk).

    Sizes from the table's ``N``, ``D``, ``M`` columns where it has them (the chosen
    cells' table), else the arguments (the grid's config).
    """
    out = []
    for row in df.itertuples(index=False):
        n = int(getattr(row, "N", N or 0))
        d = int(getattr(row, "D", D or 0))
        m = int(getattr(row, "M", M or 0))
        sp = cell_spikes(n, d, m, float(row.alpha1), float(row.alpha2), activation, target)
        f = formula_count(float(row.alpha1), float(row.alpha2))
        loc = sp.locations()
        out.append({"theory_step2": sp.step2_count(RESOLVED_SIGMAS),
                    "testable": floor_testable(sp, f),
                    "theory_a2": float(sp.measured_rows[1]),
                    "theory_a3": float(sp.measured_rows[2]),
                    "theory_s2": float(loc[1])})
    return pd.DataFrame(out, index=df.index)


def width_resolving(alpha1: float, alpha2: float, k: int, *, activation: str, target: str,
                    ratio: tuple[float, float] = (1.0, 1.0), upto: float = 1e9) -> float:
    """The smallest width (a power of 2 from 256, up to ``upto``) at which the theory
    resolves ``k`` step-2 spikes of the cell, ``D = N / ratio[0]``, ``M = N / ratio[1]``;
    ``inf`` beyond ``upto``."""
    n = 256.0
    while n <= upto:
        N = int(n)
        sp = cell_spikes(N, max(1, round(N / ratio[0])), max(1, round(N / ratio[1])),
                         float(alpha1), float(alpha2), activation, target)
        if sp.step2_count(RESOLVED_SIGMAS) >= k:
            return float(N)
        n *= 2.0
    return float("inf")
