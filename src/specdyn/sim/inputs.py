"""The run's inputs: what :func:`~specdyn.sim.loop.run` makes of its options before any work.

A run's inputs are its seed, its dtype and device and the generators of its streams.
:func:`~specdyn.sim.loop.run` resolves them once from the
:class:`~specdyn.sim.options.RunOptions` (:meth:`RunInputs.of`) and hands them to a
:class:`Setup`: the run before its inputs are known, whose ``build(inputs)`` makes the
engine (its tensors in ``inputs.dtype`` on ``inputs.device``, its data drawn from
``inputs.seed_of("data")``) and the recorder. No entry point resolves a device, a dtype
or a stream itself::

    def build(inputs: RunInputs) -> tuple[RidgeEngine, Recorder]:
        X = torch.as_tensor(x, dtype=inputs.dtype, device=inputs.device)
        return RidgeEngine(X, ...), SpectrumRecorder({...})

    record = run(Setup("ridge", RidgeEngine.streams, build), steps=200,
                 options=RunOptions(seed=3, dtype="float32"))
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from specdyn.sim.options import RunOptions
from specdyn.sim.protocol import (
    DerivedSeed,
    Engine,
    Recorder,
    StreamLayout,
    Streams,
    record_meta,
)

__all__ = ["RunInputs", "Setup"]

StateT = TypeVar("StateT")
BatchT = TypeVar("BatchT")
RecordT = TypeVar("RecordT")


@dataclass(frozen=True)
class RunInputs:
    """Every input of one run, resolved once by :func:`~specdyn.sim.loop.run`.

    Attributes
    ----------
    seed
        The run seed (the root of its streams).
    dtype, device
        The resolved torch dtype (``RunOptions.dtype``; ``None`` there: float64) and
        device (``RunOptions.device``; ``None`` there: CUDA when present, else the CPU).
    streams
        Which stream each role draws from (:class:`~specdyn.sim.protocol.StreamLayout`):
        the ``data`` the setup draws, then the engine's ``init``, ``batch`` and ``record``.
    start
        :func:`time.perf_counter` when resolved: the record's ``wall_time_s`` counts from
        here.
    """

    seed: int
    dtype: Any
    device: Any
    streams: StreamLayout
    start: float = field(default_factory=time.perf_counter, compare=False)
    #: the generators made, by engine (one set a run: a recorder drawing from the ``record``
    #: generator continues the stream the loop's ``init`` drew from, when they share it)
    _made: dict[int, tuple[Any, Streams]] = field(default_factory=dict, compare=False,
                                                  repr=False)

    @classmethod
    def of(cls, options: RunOptions, streams: StreamLayout) -> RunInputs:
        """The inputs of ``options`` (dtype and device resolved: a bad one is one
        ``ValueError`` line, before any work) on the stream layout ``streams``."""
        from specdyn._torch import resolve_device, resolve_dtype

        return cls(options.seed, resolve_dtype(options.dtype), resolve_device(options.device),
                   streams)

    def seed_of(self, role: str) -> DerivedSeed:
        """The derived seed of ``role``'s stream (``"data"``: the data a setup draws)."""
        return self.streams.seed(self.seed, role)

    def generators(self, engine: Engine[Any, Any]) -> Streams:
        """The run's generators of ``engine``'s roles (of its kind,
        :meth:`Engine.generator`) on these streams: made at the first call, the same
        objects after (the loop's and a recorder's are one set)."""
        if id(engine) not in self._made:
            self._made[id(engine)] = (engine, Streams.derive(engine, self.seed, self.streams))
        return self._made[id(engine)][1]

    def meta(self, engine: str, steps: int | None, **extra: Any) -> dict[str, Any]:
        """A record's metadata: the fixed keys of this run (its seed, dtype, device and
        the wall time since :attr:`start`), then ``extra``
        (:func:`~specdyn.sim.protocol.record_meta`)."""
        return record_meta(engine, seed=self.seed, dtype=self.dtype, device=self.device,
                           start=self.start, steps=steps, **extra)


@dataclass(frozen=True)
class Setup(Generic[StateT, BatchT, RecordT]):
    """One run before its inputs are known: what :func:`~specdyn.sim.loop.run` builds.

    Attributes
    ----------
    name
        The run's name, its record's ``meta["engine"]``.
    streams
        Its stream layout (usually its engine class's ``streams``).
    build
        ``build(inputs) -> (engine, recorder)``: the engine of the run's dtype, device and
        data (:class:`RunInputs`) and its recorder.
    """

    name: str
    streams: StreamLayout
    build: Callable[[RunInputs], tuple[Engine[StateT, BatchT], Recorder[StateT, RecordT]]]
