"""The options of every run: :class:`RunOptions` and the one merge of its shorthand keywords.

An entry point takes the run-wide settings as one :class:`RunOptions` (``options=``)
or as the shorthand keywords :data:`SHORTHANDS` (``seed=3``), merged by
:func:`run_options`; the loop (:func:`specdyn.sim.loop.run`) fills the check interval
and divergence factor left ``None`` from the engine's
:class:`EngineDefaults`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, TypedDict

import numpy as np

from specdyn import _validate as v
from specdyn.schedule import Schedule, ScheduleLike
from specdyn.sim.divergence import DIVERGENCE_FACTOR

__all__ = ["SHORTHANDS", "EngineDefaults", "RunKeywords", "RunOptions", "run_options"]


@dataclass(frozen=True)
class EngineDefaults:
    """An engine's own run defaults, which :meth:`RunOptions.for_engine` fills in: steps
    between divergence checks (each one host sync) and the factor its watched quantity may
    grow by (:class:`~specdyn.sim.divergence.Watch`)."""

    check_every: int
    divergence_factor: float = DIVERGENCE_FACTOR


@dataclass(frozen=True)
@v.constrained_fields(seed=v.SEED,
                      dtype=v.Free("a torch dtype or its name ('float64', 'float32'); None: "
                                   "float64 (checked where run resolves it)"),
                      device=v.Free("a torch device or its name ('cpu', 'cuda'); None: CUDA "
                                    "when present (checked where run resolves it)"),
                      progress=v.Bool(), checkpoints=v.Free("a Schedule, an int count or "
                                                            "explicit steps; None: the run's"),
                      check_every=v.Int(1, optional=True),
                      divergence_factor=v.Real(1.0, math.inf, lo_open=True, hi_open=True,
                                               optional=True))
class RunOptions:
    """How a run is made, whatever the engine: the one options object of every entry point.

    Entry points take one as ``options=`` (or the shorthand keywords ``seed=...``,
    ``device=...``, never both; see :func:`run_options`); :meth:`for_engine` fills
    ``check_every`` and ``divergence_factor`` left ``None`` from an engine's
    :class:`EngineDefaults`.

    Attributes
    ----------
    seed
        The run seed (its streams: the engine's :class:`StreamLayout`).
    dtype, device
        Torch dtype (``None``: float64) and device (``None``: CUDA when present).
    progress
        Show a progress bar (off by default, the one default of every entry point; the bar
        shows for runs of :data:`PROGRESS_MIN_STEPS` steps or more).
    checkpoints
        When to record (:class:`~specdyn.schedule.Schedule` or what
        :meth:`Schedule.of <specdyn.schedule.Schedule.of>` accepts).
    check_every
        Steps between divergence checks (each one host sync), ``>= 1``.
    divergence_factor
        The watched quantity may grow to this times its scale, ``> 1``.
    """

    seed: int = 0
    dtype: Any = None
    device: Any = None
    progress: bool = False
    checkpoints: ScheduleLike = None
    check_every: int | None = None
    divergence_factor: float | None = None

    def for_engine(self, defaults: EngineDefaults) -> RunOptions:
        """These options with an engine's default check interval and factor filled in."""
        return replace(self, check_every=defaults.check_every if self.check_every is None
                       else self.check_every,
                       divergence_factor=defaults.divergence_factor
                       if self.divergence_factor is None else self.divergence_factor)

    def schedule(self, steps: int, default: Schedule | None = None) -> np.ndarray:
        """The checkpoint steps in ``[0, steps]`` (``default`` when ``checkpoints`` is ``None``)."""
        return Schedule.of(self.checkpoints, default).resolve(steps)

    @property
    def every(self) -> int:
        """``check_every`` once filled in (see :meth:`for_engine`)."""
        if self.check_every is None:
            raise ValueError("RunOptions.check_every is unset: call for_engine first")
        return self.check_every

    @property
    def factor(self) -> float:
        """``divergence_factor`` once filled in (see :meth:`for_engine`)."""
        if self.divergence_factor is None:
            raise ValueError("RunOptions.divergence_factor is unset: call for_engine first")
        return self.divergence_factor


class RunKeywords(TypedDict, total=False):
    """The fields of :class:`RunOptions` every entry point also takes as keywords (its
    ``**shorthands``): ``seed``, ``dtype``, ``device``, ``progress``, ``checkpoints``."""

    seed: int
    dtype: Any
    device: Any
    progress: bool
    checkpoints: ScheduleLike


#: The fields of :class:`RunOptions` an entry point also takes as keywords.
SHORTHANDS: tuple[str, ...] = tuple(RunKeywords.__annotations__)


def run_options(options: RunOptions | None = None, **given: Any) -> RunOptions:
    """``options`` (``None``: ``RunOptions()``) with the shorthand keywords it was given
    (:data:`SHORTHANDS`; ``None`` means not given) filled in: the one merge.

    A field set both ways (in ``options``, away from its default, and as a keyword) is an
    error. The loop's knobs (``check_every``, ``divergence_factor``) have no keyword: they
    come only through ``options``. A field set neither way keeps :class:`RunOptions`'
    default (``seed=0``, ``progress=False``: the one default of every entry point).
    """
    if options is None:
        options = RunOptions()
    elif not isinstance(options, RunOptions):
        raise ValueError(f"options must be a RunOptions, got {type(options).__name__}")
    unknown = sorted(set(given) - set(SHORTHANDS))
    if unknown:
        raise ValueError(f"{unknown[0]} is not a run option (those are {', '.join(SHORTHANDS)})")
    set_ = {k: x for k, x in given.items() if x is not None}
    both = sorted(k for k in set_ if not _is_default(options, k))
    if both:
        raise ValueError(f"{', '.join(both)} given both in options and as a keyword: "
                         f"give each once")
    return replace(options, **set_)


_DEFAULTS = RunOptions()


def _is_default(options: RunOptions, name: str) -> bool:
    # identity for the None defaults: a checkpoints array has no plain truth value
    value, default = getattr(options, name), getattr(_DEFAULTS, name)
    return value is None if default is None else bool(value == default)


