"""Ranges of values: the one reader of ``log:LO:HI:N`` / ``lin:LO:HI:N`` and the one grid.

A range is ``N`` values from ``LO`` to ``HI``, both ends included: log-spaced
(``log``, ends > 0) or evenly spaced (``lin``); the ends are finite and
``N >= 1``. The command line (``specdyn theory --k log:1:1e4:50``) and sweep
files (an axis ``"log:16:256:5"`` or ``{log = [16, 256], num = 5}``) both read
their ranges here, so a range means the same values everywhere.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["RANGE_KINDS", "is_range", "parse_range", "range_values"]

#: The spacings of a range: log-spaced or evenly spaced.
RANGE_KINDS = ("log", "lin")


def is_range(text: object) -> bool:
    """Whether ``text`` is meant as a range: a string starting with ``log:`` or ``lin:``."""
    return isinstance(text, str) and text.strip().startswith(tuple(f"{k}:" for k in RANGE_KINDS))


def parse_range(text: str) -> tuple[str, float, float, int]:
    """``(kind, lo, hi, num)`` of ``"log:LO:HI:N"`` or ``"lin:LO:HI:N"``.

    Only the form is checked here (four fields, numbers, an integer ``N``);
    ``range_values`` checks the values. Raises ``ValueError`` otherwise.
    """
    parts = text.strip().split(":")
    usage = f"a range must read log:LO:HI:N or lin:LO:HI:N, got {text!r}"
    if len(parts) != 4 or parts[0] not in RANGE_KINDS:
        raise ValueError(usage)
    try:
        return parts[0], float(parts[1]), float(parts[2]), int(parts[3])
    except ValueError:
        raise ValueError(usage) from None


def range_values(kind: str, lo: float, hi: float, num: int) -> np.ndarray:
    """The ``num`` values of a range from ``lo`` to ``hi``, ends included, float64.

    ``kind="log"``: ``numpy.logspace(log10(lo), log10(hi), num)``, ends > 0;
    ``kind="lin"``: ``numpy.linspace(lo, hi, num)``. Ends finite, ``num >= 1``;
    anything else is a ``ValueError`` naming the part.
    """
    if kind not in RANGE_KINDS:
        raise ValueError(f"kind must be one of {', '.join(RANGE_KINDS)}, got {kind!r}")
    if isinstance(num, bool) or not isinstance(num, (int, np.integer)) or num < 1:
        raise ValueError(f"the N of a {kind} range must be an integer >= 1, got {num!r}")
    lo, hi = float(lo), float(hi)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"a {kind} range needs finite LO, HI, got LO = {lo:g}, HI = {hi:g}")
    if kind == "log":
        if not (lo > 0 and hi > 0):
            raise ValueError(f"a log range needs LO, HI > 0, got LO = {lo:g}, HI = {hi:g}")
        return np.logspace(np.log10(lo), np.log10(hi), int(num))
    return np.linspace(lo, hi, int(num))
