"""Claims an experiment makes about its own output, checked on that output.

Every experiment returns, beside its data, a list of :class:`Claim`: what the
paper (or the related work) says should be seen, the number measured on this
run, and whether it held. ``specdyn reproduce`` prints them; ``record.json``
stores them; tests assert them on the data, never on pixels.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Claim:
    """One checked statement about an experiment's output.

    Parameters
    ----------
    name
        Short identifier, e.g. ``"plateau 3alpha+beta"``.
    expected
        What should be seen, in words a reader can check, e.g. ``"4 +- 0.05"``.
    measured
        The number (or short text) measured on this run's data.
    held
        Whether the measured value meets the expectation.
    note
        Why it may fail at this size, or what separates theory and simulation.
    full_only
        True when the claim is only expected to hold at the ``--full`` size; a
        quick run that misses it is reported as such, never hidden.
    """

    name: str
    expected: str
    measured: float | str | None
    held: bool
    note: str = ""
    full_only: bool = False

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict (non-finite measured numbers become ``None``)."""
        d = asdict(self)
        m = d["measured"]
        if isinstance(m, float) and not math.isfinite(m):
            d["measured"] = None
        return d


def within(name: str, measured: float, lo: float, hi: float, *, note: str = "",
           full_only: bool = False) -> Claim:
    """A claim that ``measured`` lies in the closed interval ``[lo, hi]``."""
    m = float(measured)
    held = bool(math.isfinite(m) and lo <= m <= hi)
    return Claim(name, f"in [{lo:g}, {hi:g}]", m, held, note, full_only)
