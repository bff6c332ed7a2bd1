"""Divergence: what a run watches, the one test, the one error and its one message.

An engine states what its run watches (:meth:`specdyn.sim.protocol.Engine.divergence`):
a :class:`Divergence` (the run's name, the advice, the flow step) of :class:`Watch` es,
each a quantity of the state (loss, parameter size) with its scale. The run loop
(:func:`specdyn.sim.loop.run`) fills their device histories as it goes and scans them at
each check with :func:`first_divergent`, the one test; a run whose watched quantity stops
being finite or exceeds ``divergence_factor`` times its scale (:func:`divergence_limit`)
raises :class:`DivergenceError`, built by :func:`divergence_error` (the one message),
carrying the first bad ``step`` and the partial ``record``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np

__all__ = ["DIVERGENCE_FACTOR", "Divergence", "DivergenceError", "Watch", "divergence_error",
           "divergence_limit", "dt_advice", "first_divergent", "watched"]

StateT = TypeVar("StateT")

DIVERGENCE_FACTOR = 1e6
"""The divergence threshold of most engines: a watched quantity above this times its scale."""

_LIMIT_FLOOR = 1e-12  # a start scale below this counts as this (a run starting at ~0 loss)

class DivergenceError(RuntimeError):
    """A run diverged: its watched quantity became non-finite or exceeded the engine's limit.

    Attributes
    ----------
    step
        The first bad step (the state after ``step`` updates).
    record
        The partial record: the entry point's record type holding what was recorded
        before the divergence (possibly no checkpoint), set by the run loop.
    """

    def __init__(self, message: str, step: int, record: Any = None) -> None:
        super().__init__(message)
        self.step = int(step)
        self.record = record


def divergence_limit(start: float, factor: float) -> float:
    """The limit of a watched quantity: ``factor`` times its start scale (at least 1e-12)."""
    return factor * max(float(start), _LIMIT_FLOOR)


def dt_advice(dt: float) -> str:
    """The advice of a run whose flow step ``dt`` is too large."""
    return f"the step is too large for this setting: reduce dt (now {dt:g}, try dt={dt / 4:g})"


def watched(name: str, value: float, factor: float, scale: str | None = "its start") -> str:
    """What a divergence check saw: ``"loss nan (not finite)"`` or
    ``"loss 3.2e+07 above 1e+06 x its start"`` (``scale=None``: an absolute limit)."""
    if not math.isfinite(value):
        return f"{name} {value:.3g} (not finite)"
    return f"{name} {value:.3g} above {factor:g}" + ("" if scale is None else f" x {scale}")


def divergence_error(run: str, step: int, what: str, advice: str, *, dt: float | None = None,
                     record: Any = None) -> DivergenceError:
    """The one divergence message: ``"<run> diverged at step k (t = ...): <what>; <advice>"``.

    ``what`` says what was seen (``"loss 3.2e+07 above 1e+06 x its start"``),
    ``advice`` what to change; the time is shown when the run has a flow step ``dt``.
    """
    when = "" if dt is None else f" (t = {step * dt:g})"
    return DivergenceError(f"{run} diverged at step {step}{when}: {what}; {advice}", step,
                           record)


def first_divergent(values: Any, limit: float = math.inf) -> int | None:
    """Index of the first entry of ``values`` (numpy or torch, 1-D) that is not finite or
    exceeds ``limit`` in absolute value, or ``None``. The one divergence test
    (``limit = inf``, the default: the first non-finite entry)."""
    mag = abs(values)
    bad = ~(mag <= limit)  # NaN-safe: NaN <= x is False
    if limit == math.inf:  # inf <= inf holds: an infinite entry is bad too
        bad = bad | (mag == math.inf)
    if not bool(bad.any()):
        return None
    if isinstance(bad, np.ndarray):
        return int(np.flatnonzero(bad)[0])
    return int(bad.nonzero()[0, 0])


@dataclass(frozen=True)
class Watch(Generic[StateT]):
    """One quantity a run watches for divergence, as its engine states it.

    Attributes
    ----------
    name
        Its name in the message (``"loss"``, ``"max |theta|"``).
    value
        ``state -> tensor`` on the device (no host sync): a 0-d value, or a vector whose
        mean is watched (the replicas of ``train_linear_student``).
    scale
        The limit is ``divergence_factor * scale`` (:func:`divergence_limit`); ``None``
        watches finiteness only.
    scale_name
        How the message names the scale (``"its start"``; ``None``: an absolute limit).
    lag
        ``1`` when ``value`` of the state after update ``k`` is the quantity of the state
        before it (a ``loss_before``); ``final`` then gives the last state's own.
    final
        With ``lag=1``: the last state's own value (``None``: left unknown).
    each_step
        ``True``: a history filled after every update (the loop hands it to the
        recorder, :attr:`Outcome.history`); ``False``: read at each check only.
    says
        What the message says when the value is not finite (default: :func:`watched`).
    """

    name: str
    value: Callable[[StateT], Any]
    scale: float | None = None
    scale_name: str | None = "its start"
    lag: int = 0
    final: Callable[[StateT], Any] | None = None
    each_step: bool = True
    says: str | None = None

    def what(self, value: float, factor: float) -> str:
        """What the check saw at a bad entry ``value``."""
        if self.says is not None and not math.isfinite(value):
            return self.says
        return watched(self.name, value, factor, self.scale_name)


@dataclass(frozen=True)
class Divergence(Generic[StateT]):
    """What a run's divergence check watches and what its error says: the engine's statement.

    ``run`` names the run and ``advice`` what to change in the one message
    (:func:`divergence_error`; the time shown when the run has a flow step ``dt``);
    ``watch`` lists the quantities (:class:`Watch`), the earliest bad one reported (a
    tie: the first listed).
    """

    run: str
    advice: str
    dt: float | None = None
    watch: tuple[Watch[StateT], ...] = ()

    def error(self, step: int, what: str, record: Any = None) -> DivergenceError:
        """The divergence error at ``step``, having seen ``what`` (see :func:`watched`)."""
        return divergence_error(self.run, step, what, self.advice, dt=self.dt, record=record)


