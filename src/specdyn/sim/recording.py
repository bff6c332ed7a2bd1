"""Recording a run: observables of the state, measured at the checkpoints, driven by data.

The one recorder of :mod:`specdyn.sim`, :class:`SpectrumRecorder`, is configured by data:
a name -> :class:`Observable` map, each ``measure(of(state))``, where ``of`` is a plain
function of the state (``state -> matrix``) and ``measure`` a measurement of
:mod:`specdyn.measure` (:func:`eigenvalues`, :func:`low_rank_eigenvalues`,
:func:`gram_spectrum_of`, or any
``matrix -> array``). At each checkpoint it records every observable due, and at the end
it makes the record of what it recorded (:class:`Recorded`): a
:class:`~specdyn.sim.trajectory.Trajectory` by default (``"loss"`` its loss, the
teacher-basis diagonals ``xi``, ``eta``, ``zeta`` its diagonals, every other name a
spectrum series), or any record type through ``record=``. Observables that share work
(the host Grams of a state, a forward pass) share it through :class:`PerState`::

    grams = PerState(engine.host_grams)       # computed once per checkpoint
    recorder = SpectrumRecorder({
        "preact": Observable(lambda s: grams(s)[0], eigenvalues),
        "loss": lambda s: float(s.loss),
    }, dt=engine.dt, meta={"N": N})

The loop (:func:`~specdyn.sim.loop.run`) calls ``snapshot(state, step)`` at each
checkpoint and ``finish(outcome)`` at the end (or at a divergence: the partial record).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import numpy as np

from specdyn.measure import gram_eigenvalues, symmetric_eigenvalues
from specdyn.sim.protocol import Outcome
from specdyn.sim.trajectory import DIAGONALS, Trajectory, TrajectoryRows

__all__ = ["Observable", "PerState", "Recorded", "SpectrumRecorder", "eigenvalues",
           "gram_spectrum_of", "low_rank_eigenvalues"]

StateT = TypeVar("StateT")
RecordT = TypeVar("RecordT")
T = TypeVar("T")


def eigenvalues(matrix: Any) -> np.ndarray:
    """The spectrum of a symmetric matrix (numpy or torch, symmetrised first: a product is
    symmetric only to rounding), float64, decreasing, clipped at 0
    (:func:`~specdyn.measure.symmetric_eigenvalues`)."""
    return symmetric_eigenvalues(matrix, symmetrize=True)


def low_rank_eigenvalues(matrix: Any) -> np.ndarray:
    """:func:`eigenvalues` with those at or below the rank tolerance
    (:func:`~specdyn.measure.rank_tolerance`) set to exactly 0: round-off of a
    rank-deficient matrix (a data covariance of ``M < D`` samples)."""
    return symmetric_eigenvalues(matrix, symmetrize=True, zero_below_rank=True)


def gram_spectrum_of(divisor: Callable[[Any], float]) -> Callable[[Any], np.ndarray]:
    """The measurement ``Z -> eigenvalues of Z^T Z / divisor(Z)`` of an ``n x p`` matrix, via
    the smaller Gram (:func:`~specdyn.measure.gram_eigenvalues`; ``Z^T``'s Gram on a tie),
    float64, decreasing: the spectrum of a representation ``Z`` (rows: samples)."""
    def measure(Z: Any) -> np.ndarray:
        return gram_eigenvalues(Z.T, divisor=divisor(Z), symmetrize=True)
    return measure


@dataclass(frozen=True)
class Observable(Generic[StateT]):
    """One recorded quantity: ``measure(of(state))`` at the checkpoints in ``when``.

    Attributes
    ----------
    of
        A plain function of the state: the matrix (or value) to measure.
    measure
        A measurement of it (``None``: the value itself). It returns a host array or
        number, or a name -> array mapping (several quantities of one measurement,
        recorded under their own names).
    when
        The steps at which it is recorded (``None``: every checkpoint).
    """

    of: Callable[[StateT], Any]
    measure: Callable[[Any], Any] | None = None
    when: Collection[int] | None = None

    def __call__(self, state: StateT) -> Any:
        """The measurement of ``state``."""
        value = self.of(state)
        return value if self.measure is None else self.measure(value)


class PerState(Generic[StateT, T]):
    """``fn(state)`` computed once per state and shared by the observables that read it (the
    host Grams of a checkpoint, a forward pass): the last state's value is kept."""

    def __init__(self, fn: Callable[[StateT], T]) -> None:
        self.fn = fn
        self._state: Any = None
        self._value: Any = None

    def __call__(self, state: StateT) -> T:
        """``fn(state)``, computed at the first call for this state."""
        if state is not self._state:
            self._value, self._state = self.fn(state), state
        return self._value


@dataclass
class Recorded:
    """What a :class:`SpectrumRecorder` recorded: each name's values and the steps they
    were taken at (in checkpoint order), and the record's metadata.

    Attributes
    ----------
    steps
        Every checkpoint recorded.
    values
        Each name's recorded values (host arrays or numbers).
    at
        The steps of each name's values (those of its observable's ``when``).
    meta
        The record's metadata: the loop's fixed keys, then the recorder's own.
    """

    steps: list[int] = field(default_factory=list)
    values: dict[str, list[Any]] = field(default_factory=dict)
    at: dict[str, list[int]] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    def add(self, name: str, step: int, value: Any) -> None:
        """One value of ``name`` at ``step``."""
        self.values.setdefault(name, []).append(value)
        self.at.setdefault(name, []).append(step)

    def array(self, name: str, empty: tuple[int, ...] = (0, 0)) -> np.ndarray:
        """``name``'s values stacked along a new first axis (none: zeros of shape
        ``empty``)."""
        rows = self.values.get(name, [])
        return np.stack(rows) if rows else np.zeros(empty)

    def trajectory(self, dt: float) -> Trajectory:
        """The :class:`~specdyn.sim.trajectory.Trajectory` of every checkpoint: ``loss``
        (required), the diagonals ``xi``, ``eta``, ``zeta`` present, every other name a
        spectrum series; times ``step * dt``."""
        if self.steps and "loss" not in self.values:
            raise ValueError("a Trajectory records a loss: give an observable named 'loss'")
        names = [n for n in self.values if n != "loss"]
        rows = TrajectoryRows(dt, [n for n in names if n not in DIAGONALS], lambda: self.meta,
                              diagonals=[n for n in DIAGONALS if n in self.values])
        for j, step in enumerate(self.steps):
            rows.add(step, self.values["loss"][j], {n: self.values[n][j] for n in rows.series},
                     [self.values[n][j] for n in rows.diagonals])
        return rows.trajectory()


class SpectrumRecorder(Generic[StateT, RecordT]):
    """The one recorder of :mod:`specdyn.sim`: named observables at the checkpoints, and the
    record of them (module docstring).

    Parameters
    ----------
    observables
        Name -> :class:`Observable`, or a plain function ``state -> value`` (recorded as
        it is). Called in order at each checkpoint (an observable that draws from a
        generator draws in that order).
    record
        ``record(recorded, outcome) -> RecordT``: the record of the :class:`Recorded`
        values (with the run's outcome: its histories, its last state, whether it
        diverged); ``None``: :meth:`Recorded.trajectory` (then ``"loss"`` is required).
    dt
        The flow step of a trajectory's times, ``t = step * dt``.
    meta
        The recorder's own metadata, after the loop's fixed keys.
    """

    def __init__(self, observables: Mapping[str, Observable[StateT] | Callable[[StateT], Any]],
                 *, record: Callable[[Recorded, Outcome[StateT]], RecordT] | None = None,
                 dt: float = 1.0, meta: Mapping[str, Any] | None = None) -> None:
        self.observables = {name: obs if isinstance(obs, Observable) else Observable(obs)
                            for name, obs in observables.items()}
        self.record, self.dt, self.meta = record, dt, dict(meta or {})
        self.recorded = Recorded()

    def snapshot(self, state: StateT, step: int) -> None:
        """Record checkpoint ``step``: every observable due at it."""
        self.recorded.steps.append(int(step))
        for name, obs in self.observables.items():
            if obs.when is not None and step not in obs.when:
                continue
            value = obs(state)
            if isinstance(value, Mapping):
                for key, x in value.items():
                    self.recorded.add(key, int(step), x)
            else:
                self.recorded.add(name, int(step), value)

    def finish(self, outcome: Outcome[StateT]) -> RecordT:
        """The record of the checkpoints taken (all of them, or those before a divergence)."""
        self.recorded.meta = {**outcome.meta, **self.meta}
        if self.record is None:
            return self.recorded.trajectory(self.dt)  # type: ignore[return-value]
        return self.record(self.recorded, outcome)
