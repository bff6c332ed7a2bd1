"""Two GD steps in the linear-width regime: the outlier count and its lines.

The second related work (``docs/related-works.md``, section 2): a
two-layer network takes two large GD steps with step sizes ``N^alpha1`` and
``N^alpha2`` (exponents in ``[0, 1/2)``). The ``k``-th step-2 outlier of the
first-layer weights is a spike along ``a^(k+1)`` of strength
``C_k N^(alpha2 - k (1/2 - alpha1))``: it separates from the bulk as ``N``
grows iff its exponent is positive, so the count of step-2 outliers is
``floor(alpha2 / (1/2 - alpha1))`` and it steps on the lines
``alpha2 = k (1/2 - alpha1)``, ``k >= 1``. Pure Python/numpy, float64.
"""

from __future__ import annotations

import math

from specdyn import _validate as v

__all__ = ["formula_count", "line_gap", "near_line", "near_line_ratio", "spike_exponent"]


def _exponents(alpha1: float, alpha2: float) -> tuple[float, float]:
    a1 = v.in_range("alpha1", alpha1, 0.0, 0.5, hi_open=True)
    a2 = v.nonnegative("alpha2", alpha2)
    return a1, a2


def spike_exponent(alpha1: float, alpha2: float, k: int) -> float:
    """Exponent ``alpha2 - k (1/2 - alpha1)`` of the ``k``-th step-2 spike's strength in ``N``."""
    a1, a2 = _exponents(alpha1, alpha2)
    kk = v.positive_int("k", k)
    return a2 - kk * (0.5 - a1)


def formula_count(alpha1: float, alpha2: float) -> int:
    """The abstract's outlier count ``floor(alpha2 / (1/2 - alpha1))``.

    A cell exactly on a line counts that line's spike (``1e-12`` absorbs the
    rounding of the ratio).
    """
    a1, a2 = _exponents(alpha1, alpha2)
    return int(math.floor(a2 / (0.5 - a1) + 1e-12))


def line_gap(alpha1: float, alpha2: float) -> float:
    """Exponent distance ``min_k |alpha2 - k (1/2 - alpha1)|`` (``k >= 1``) to the nearest line.

    The ``k``-th step-2 spike has strength ``~ C_k N^(alpha2 - k (1/2 - alpha1))``,
    so a cell at gap ``g`` has its nearest spike a factor ``N^g`` from the
    line's strength.
    """
    a1, a2 = _exponents(alpha1, alpha2)
    step = 0.5 - a1
    k = max(1, round(a2 / step))
    return min(abs(a2 - j * step) for j in (k - 1, k, k + 1) if j >= 1)


def near_line(alpha1: float, alpha2: float, margin: float) -> bool:
    """Whether the cell is within ``margin`` (an exponent gap, :func:`line_gap`) of a line."""
    return line_gap(alpha1, alpha2) < v.nonnegative("margin", margin)


def near_line_ratio(alpha1: float, alpha2: float, margin: float) -> bool:
    """Whether ``alpha2 / (1/2 - alpha1)`` is within ``margin`` of a positive integer.

    A margin on the ratio shrinks to nothing in exponent units as ``alpha1 -> 1/2``;
    :func:`near_line` is the exponent-gap version.
    """
    a1, a2 = _exponents(alpha1, alpha2)
    rho = a2 / (0.5 - a1)
    k = round(rho)
    return k >= 1 and abs(rho - k) < v.nonnegative("margin", margin)
