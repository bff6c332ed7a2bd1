"""The two-step experiments' configs: two-step-phase and batch-reuse, and their ``--full``
sizes, with the constants their tables are recorded with.

Each config declares its fields' allowed values (``constrained_fields``); the defaults
are the quick size, :func:`full_phase` and :func:`full_reuse` the larger one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from specdyn import _validate as v
from specdyn.data.hermite import NAMED_TARGETS
from specdyn.models.activations import ACTIVATIONS

#: A step-size exponent of ``gd_steps`` (the steps grow as ``N^alpha``), in ``[0, 1/2)``.
_EXPONENT = v.Real(0.0, 0.5, hi_open=True)
#: The declared fields both experiments share (the settings of ``gd_steps``).
_COMMON: dict[str, v.Constraint] = dict(
    N=v.SIZE, D=v.SIZE, M=v.SIZE, seeds=v.SIZE, seed=v.SEED,
    activation=v.Choice(*ACTIVATIONS), pvalue=v.Real(0.0, 1.0, lo_open=True, hi_open=True))


#: Ratio margin of the score reported beside the exponent-margin one.
RATIO_MARGIN = 0.15
#: Squared overlap of an outlier's left vector with a power of ``a`` that identifies it.
IDENTIFIED_OVERLAP2 = 0.1
#: Number of step-2 strengths recorded (along ``a, a^2, ..., a^STRENGTH_POWERS``).
STRENGTH_POWERS = 4
#: Top singular values of ``W2`` recorded (``s1_W2``, ``s2_W2``, ...).
TOP_SINGULAR_VALUES = 4

#: One entry of ``PhaseConfig.cells``: ``"alpha1:alpha2"``, both in ``[0, 1/2)``.
_CELL = v.Pattern(r"0?\.[0-9]+:0?\.[0-9]+", "'alpha1:alpha2' (decimals in [0, 1/2), e.g. "
                  "'0.2:0.49')")


def parse_cells(cells: tuple[str, ...]) -> list[tuple[float, float]]:
    """``"alpha1:alpha2"`` strings (checked by the config) -> ``(alpha1, alpha2)`` pairs, each
    exponent in ``[0, 1/2)``."""
    out = []
    for c in cells:
        a1, a2 = (float(x) for x in c.split(":"))
        if not (0.0 <= a1 < 0.5 and 0.0 <= a2 < 0.5):
            raise ValueError(f"cells: {c!r} has an exponent outside [0, 1/2)")
        out.append((a1, a2))
    return out


@dataclass(frozen=True)
@v.constrained_fields(**_COMMON, alpha1=v.Tuple(_EXPONENT, min_len=1),
                      alpha2=v.Tuple(_EXPONENT, min_len=1), target=v.Choice(*NAMED_TARGETS),
                      reuse_batch=v.Bool(), line_margin=v.Real(0.0, 0.25),
                      cells=v.Tuple(_CELL), cells_N=v.Tuple(v.Int(2), min_len=1))
class PhaseConfig:
    """``two-step-phase``: grid of step-size exponents; quick default ~20 s of CPU.

    ``alpha1`` and ``alpha2`` sit on different lattices so that few cells fall
    on the lines ``alpha2 = k (1/2 - alpha1)``. ``line_margin`` is an exponent
    gap (see :func:`specdyn.theory.two_step.line_gap`), in ``[0, 0.25]``.

    The quick grid is the small ``N`` at which the step-2 count can vary: the
    step-2 spikes resolve only for ``alpha2`` near 1/2 and ``alpha1 >= 0.36``
    at ``N = 1000`` (a pilot run, seed 1, ``alpha1 in (0.12, 0.36, 0.44)``,
    ``alpha2 in (0.05, 0.45, 0.49)``: step-2 counts 0, 1, 2, Spearman with
    ``floor`` 0.93), beside cells where ``floor`` is 0 (the old quick default,
    ``N = 600`` on a 6 x 6 grid, counted 1 in every cell).

    The chosen cells run at six widths (``cells_N``): each width is an independent draw,
    and the ``a^2`` strength's deviation from the theory needs several (with two, that
    claim's RMS spanned a factor 4.5 over seeds; ``claims.STRENGTH_DEV_REVISED``).
    """

    N: int = 1000
    D: int = 1000
    M: int = 1000
    alpha1: tuple[float, ...] = (0.12, 0.33, 0.36, 0.44)
    alpha2: tuple[float, ...] = (0.05, 0.45, 0.49)
    target: str = "He1"
    activation: str = "tanh-shift"
    reuse_batch: bool = False
    seeds: int = 1
    seed: int = 0
    line_margin: float = 0.05
    pvalue: float = 0.01
    cells: tuple[str, ...] = ("0.2:0.49", "0.32:0.49")
    cells_N: tuple[int, ...] = (500, 600, 700, 800, 900, 1000)

    def __post_init__(self) -> None:
        parse_cells(self.cells)


def full_phase() -> PhaseConfig:
    """The ``--full`` size of ``two-step-phase``: a 10 x 10 grid at N = 4000, 3 seeds; the
    chosen cells at N = 1000 to 8000."""
    grid1 = tuple(round(x, 3) for x in np.arange(0.02, 0.5, 0.05))
    grid2 = tuple(round(x, 3) for x in np.arange(0.03, 0.5, 0.05))
    return PhaseConfig(N=4000, D=4000, M=4000, alpha1=grid1, alpha2=grid2, seeds=3,
                       cells_N=(1000, 2000, 4000, 8000))


@dataclass(frozen=True)
@v.constrained_fields(**_COMMON, alpha1=_EXPONENT, alpha2=_EXPONENT,
                      targets=v.Tuple(v.Choice(*NAMED_TARGETS), min_len=1))
class ReuseConfig:
    """``batch-reuse``: alignment with the target, fresh versus reused batch.

    The quick default (``N = 1000``, 3 seeds, ~45 s) shows the reuse effect; the
    fresh-batch overlaps of learned directions are noise of order
    ``sqrt(E[z^2 sigma*^2] / D)`` and reach 0.10-0.16 there for He2. ``--full``
    (``N = 4000``) is the size at which fresh batches stay below 0.1. Three seeds, not
    two: the "every reused seed above every fresh one" claims must not hold on a table
    shuffled across targets, which orders 2 against 2 by chance in about 1 shuffle of 8
    (``claims.QUICK_SEEDS_REVISED``).
    """

    N: int = 1000
    D: int = 1000
    M: int = 1000
    alpha1: float = 0.35
    alpha2: float = 0.45
    targets: tuple[str, ...] = ("He1", "He2", "He2+He3", "He3")
    activation: str = "tanh-shift"
    seeds: int = 3
    seed: int = 0
    pvalue: float = 0.01


def full_reuse() -> ReuseConfig:
    """The ``--full`` size of ``batch-reuse``."""
    return ReuseConfig(N=4000, D=4000, M=4000, seeds=5)
