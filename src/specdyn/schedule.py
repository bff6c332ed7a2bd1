"""When to record: the one schedule type of simulators and trackers.

A :class:`Schedule` says at which steps of a run something is recorded: the
checkpoints of a simulator (``checkpoints=`` of :func:`specdyn.sim.train_linear`
and the other entry points) and the measured steps of
:class:`specdyn.measure.SpectrumTracker`. One spelling, one meaning:

- ``Schedule.log(count)`` -- and a bare ``int`` everywhere -- is a **count** of
  log-spaced steps over a run of known length (``0``, about ``count`` steps in
  ``[1, steps]``, always ``steps``);
- ``Schedule.even(count)``: ``count`` evenly spaced steps from ``0`` to ``steps``;
- ``Schedule.every(period)``: every ``period`` steps from ``0`` (and ``steps``
  when the length is known);
- ``Schedule.per_decade(count)``: ``0`` and ``round(10**(j / count))``,
  ``j = 0, 1, ...``, i.e. ``count`` steps a decade with no end (the tracker's
  default, ``per_decade(10)``). "Log" always means ``Schedule.log``, a count:
  no entry point takes the string ``"log"`` for another spacing;
- ``Schedule.at(steps)`` -- and a list of integers everywhere -- explicit steps.

``log`` and ``even`` need the run length (:meth:`Schedule.resolve` takes it);
``every``, ``per_decade`` and ``at`` also work without one
(:meth:`Schedule.due` / :meth:`Schedule.predicate` with ``steps=None``), which
is what a training loop of unknown length needs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from specdyn import _validate as v

__all__ = ["Schedule", "ScheduleLike"]

#: The kinds that are counts over a run, so need its length.
_NEEDS_LENGTH = ("log", "even")


@dataclass(frozen=True)
class Schedule:
    """The steps of a run at which a record is taken.

    Build one with :meth:`log`, :meth:`even`, :meth:`every`, :meth:`per_decade`
    or :meth:`at`; entry points also accept the shorthands of :meth:`of` (an
    ``int`` is a log-spaced count, a sequence is explicit steps).
    :meth:`resolve` turns it into the sorted unique integer steps of a run of
    ``steps`` updates; :meth:`due` / :meth:`predicate` test one step at a time,
    without the run length where the kind allows it.
    """

    kind: str  # "log" | "even" | "every" | "per_decade" | "at"
    value: int | tuple[int, ...]

    @classmethod
    def log(cls, count: int = 60) -> Schedule:
        """``0`` and about ``count`` log-spaced steps in ``[1, steps]``, always ``steps``."""
        return cls("log", v.positive_int("count", count))

    @classmethod
    def even(cls, count: int) -> Schedule:
        """``count`` (>= 2) evenly spaced steps from ``0`` to ``steps`` (rounded)."""
        return cls("even", v.positive_int("count", count, minimum=2))

    @classmethod
    def every(cls, period: int) -> Schedule:
        """Every ``period`` steps from ``0``, and ``steps`` when the run length is known."""
        return cls("every", v.positive_int("period", period))

    @classmethod
    def per_decade(cls, count: int = 10) -> Schedule:
        """``0`` and ``round(10**(j / count))``, ``j = 0, 1, ...``: ``count`` steps a decade.

        Unbounded. With ``count = 10``: 0, 1, 2, 3, 4, 5, 6, 8, 10, 13, 16, 20, 25, 32, 40, ...,
        so ``T`` steps record about ``10 log10(T)`` times. With the run length
        known (:meth:`resolve`, or ``steps=`` given), ``steps`` is added.
        """
        return cls("per_decade", v.positive_int("count", count))

    @classmethod
    def at(cls, steps: Sequence[int] | np.ndarray, *, name: str = "checkpoints") -> Schedule:
        """Explicit integer steps (each >= 0; within the run, checked by :meth:`resolve`)."""
        arr = np.asarray(steps)
        if arr.ndim != 1 or arr.size == 0 or not np.issubdtype(arr.dtype, np.number) \
                or not np.all(arr == np.round(arr)) or np.any(arr < 0):
            raise ValueError(f"{name} must be a Schedule, an int count, or a non-empty "
                             "1-D list of integer steps >= 0")
        return cls("at", tuple(int(s) for s in np.unique(arr.astype(np.int64))))

    @classmethod
    def of(cls, spec: ScheduleLike, default: Schedule | None = None, *,
           name: str = "checkpoints") -> Schedule:
        """A :class:`Schedule` from a schedule, an ``int`` (a log-spaced count, see
        :meth:`log`), a sequence of explicit steps, or ``None`` (``default``;
        ``Schedule.log()`` without one). ``name`` is the argument errors name."""
        if isinstance(spec, Schedule):
            return spec
        if spec is None:
            return cls.log() if default is None else default
        if isinstance(spec, bool) or isinstance(spec, str):
            raise ValueError(f"{name} must be a Schedule, an int count or a list of "
                             f"steps, got {spec!r}")
        if isinstance(spec, (int, np.integer)):
            return cls("log", v.positive_int(name, spec))
        return cls.at(spec, name=name)

    @property
    def needs_length(self) -> bool:
        """Whether the steps depend on the run length (a count: :meth:`log`, :meth:`even`)."""
        return self.kind in _NEEDS_LENGTH

    def resolve(self, steps: int) -> np.ndarray:
        """The checkpoint steps of a run of ``steps`` updates (sorted, unique, int64)."""
        if self.kind == "at":
            arr = np.asarray(self.value, dtype=np.int64)
            if arr.min() < 0 or arr.max() > steps:
                raise ValueError(f"checkpoints must be integer steps in [0, steps={steps}], "
                                 f"got {arr.tolist()}")
            return arr
        n = int(self.value)  # type: ignore[arg-type]
        if self.kind == "log":
            ck = np.unique(np.round(np.geomspace(1, max(steps, 1), max(n - 1, 1)))
                           .astype(np.int64))
            out = np.unique(np.concatenate([[0], ck, [steps]]))
            return out[out <= steps]
        if self.kind == "even":
            return np.unique(np.rint(np.linspace(0, steps, n)).astype(np.int64))
        if self.kind == "per_decade":
            top = math.floor(n * math.log10(steps)) + 2 if steps >= 1 else 0
            pts = {round(10 ** (j / n)) for j in range(top)}
            return np.array(sorted({0, steps} | {p for p in pts if p <= steps}), dtype=np.int64)
        return np.unique(np.r_[np.arange(0, steps + 1, n), steps]).astype(np.int64)

    def predicate(self, steps: int | None = None, *, name: str = "schedule"
                  ) -> Callable[[int], bool]:
        """``step -> bool``: whether ``step`` is scheduled.

        ``steps`` is the run length; ``None`` (unknown, e.g. a training loop)
        is allowed for :meth:`every`, :meth:`per_decade` and :meth:`at`, which
        then never add a last step. A count (:meth:`log`, :meth:`even`, a bare
        ``int``) needs it and raises one line naming ``name`` otherwise.
        """
        if steps is not None:
            chosen = {int(s) for s in self.resolve(v.positive_int("steps", steps, minimum=0))}
            return chosen.__contains__
        if self.needs_length:
            raise ValueError(
                f"{name}: an int (Schedule.{self.kind}) is a count of steps over a run and "
                "needs the run length: pass steps=, or use Schedule.every(n) for every n "
                "steps or Schedule.per_decade(n) for n steps a decade")
        if self.kind == "at":
            return set(self.value).__contains__  # type: ignore[arg-type]
        n = int(self.value)  # type: ignore[arg-type]
        if self.kind == "every":
            return lambda s: s >= 0 and s % n == 0

        def on_decade_grid(s: int) -> bool:
            if s <= 0:
                return s == 0
            j = round(n * math.log10(s))
            return any(round(10 ** (i / n)) == s for i in (j - 1, j, j + 1) if i >= 0)

        return on_decade_grid

    def due(self, step: int, steps: int | None = None) -> bool:
        """Whether ``step`` is scheduled in a run of ``steps`` updates (``None``: unknown)."""
        return self.predicate(steps)(int(step))


ScheduleLike = Schedule | int | Sequence[int] | np.ndarray | None
