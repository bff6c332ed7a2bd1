"""The one run loop: every engine of :mod:`specdyn.sim` runs through :func:`run`.

``run(setup, steps=..., options=...)`` resolves the run's inputs from its options (seed,
dtype, device, every stream: :class:`~specdyn.sim.inputs.RunInputs`), builds the engine
and recorder of the :class:`~specdyn.sim.inputs.Setup`, draws the engine's first state
(:meth:`~specdyn.sim.protocol.Engine.init`, from the run's ``init`` generator), then for
``k = 1..steps`` samples the batch (:meth:`~specdyn.sim.protocol.Engine.sample`, from the
``batch`` generator) and steps (:meth:`~specdyn.sim.protocol.Engine.step`); after each
update it writes the engine's watched quantities (:class:`~specdyn.sim.divergence.Watch`)
into their device histories (no host sync), checks them every ``check_every`` steps, at
every checkpoint and at the end (one host sync for the steps since the last check), and
hands each checkpoint's state to the recorder. All ``steps`` are run whatever the
checkpoints are. On divergence the :class:`~specdyn.sim.divergence.DivergenceError`
carries the recorder's partial record. Generic over the engine's state and batch types:
a type checker ties ``init``'s output to ``step``'s input and to the recorder's input.
An engine built before the run (``run(engine, recorder, ...)``) runs too; its dtype and
device are its own, so the options may not set them.
"""

from __future__ import annotations

from typing import Any, TypeVar, overload

import numpy as np

from specdyn._progress import progress as _progress
from specdyn.sim.divergence import Divergence, DivergenceError, Watch, divergence_limit
from specdyn.sim.divergence import first_divergent as _first_bad
from specdyn.sim.inputs import RunInputs, Setup
from specdyn.sim.options import RunOptions
from specdyn.sim.protocol import PROGRESS_MIN_STEPS, Engine, Outcome, Recorder, Streams

__all__ = ["run"]

StateT = TypeVar("StateT")
BatchT = TypeVar("BatchT")
RecordT = TypeVar("RecordT")


@overload
def run(engine: Setup[StateT, BatchT, RecordT], recorder: None = None, *, steps: int,
        options: RunOptions, checkpoints: Any = None, streams: Streams | None = None,
        start: StateT | None = None, desc: str = "") -> RecordT: ...


@overload
def run(engine: Engine[StateT, BatchT], recorder: Recorder[StateT, RecordT], *, steps: int,
        options: RunOptions, checkpoints: Any = None, streams: Streams | None = None,
        start: StateT | None = None, desc: str = "") -> RecordT: ...


def run(engine: Any, recorder: Any = None, *, steps: int, options: RunOptions,
        checkpoints: Any = None, streams: Streams | None = None, start: Any = None,
        desc: str = "") -> Any:
    """Run ``steps`` updates of an engine, recording at the checkpoints: the one loop.

    Parameters
    ----------
    engine
        A :class:`~specdyn.sim.inputs.Setup` (its name, its streams, and ``build(inputs)
        -> (engine, recorder)``, called with the inputs resolved from ``options``: the
        engine gets the run's dtype, device and data stream), or an
        :class:`~specdyn.sim.protocol.Engine` built before the run (then ``recorder`` is
        its recorder, and ``options.dtype`` and ``options.device`` must be ``None``: they
        cannot be applied to it).
    recorder
        With an engine: a :class:`~specdyn.sim.protocol.Recorder`
        (``snapshot(state, step)`` at each checkpoint, ``finish(outcome)`` for the record,
        partial on divergence); ``None`` with a setup.
    steps
        Updates to make (``>= 0``); all are run and checked.
    options
        The run's :class:`~specdyn.sim.options.RunOptions` (seed, dtype, device, progress,
        checkpoints, the check's ``check_every`` and ``divergence_factor``: ``None`` takes
        the engine's).
    checkpoints
        The checkpoint steps (an array in ``[0, steps]``); ``None``:
        ``options.schedule(steps)``.
    streams
        Generators of the caller's (a test, a replay); ``None``: the run's own, one per
        role of the setup's stream layout (:meth:`RunInputs.generators
        <specdyn.sim.inputs.RunInputs.generators>`).
    start
        A first state of the caller's (``engine.init`` is then not called).
    desc
        The progress bar's label.

    Returns
    -------
    RecordT
        ``recorder.finish(outcome)``; ``outcome.meta`` holds the record's fixed metadata.

    Raises
    ------
    ValueError
        A dtype or device asked for an engine built before the run; a bad dtype or device.
    DivergenceError
        The first bad step and, as ``.record``, the recorder's partial record.
    """
    if isinstance(engine, Setup):
        if recorder is not None:
            raise ValueError("recorder must be None with a Setup (its build makes the "
                             "recorder)")
        inputs = RunInputs.of(options, engine.streams)
        name = engine.name
        engine, recorder = engine.build(inputs)
    else:
        if options.dtype is not None or options.device is not None:
            raise ValueError("dtype and device are applied where run builds the engine: give "
                             "run a Setup, or leave them None for an engine built before the "
                             "run (its own are used)")
        inputs, name = RunInputs(options.seed, None, None, engine.streams), \
            type(engine).__name__
    opts = options.for_engine(engine.defaults)
    gens = inputs.generators(engine) if streams is None else streams
    state = engine.init(gens.init) if start is None else start
    ck = set(int(c) for c in (opts.schedule(steps) if checkpoints is None else checkpoints))
    watcher = _Watcher(engine.divergence(state), state, steps, opts.factor)
    every = opts.every

    def outcome(last: Any, diverged: int | None) -> Outcome[Any]:
        return watcher.outcome(last, diverged, inputs.meta(name, steps))

    try:
        watcher.check(state, 0)
        if 0 in ck:
            recorder.snapshot(state, 0)
        for k in _progress(range(1, steps + 1), total=steps, desc=desc,
                           enabled=opts.progress and steps >= PROGRESS_MIN_STEPS):
            state = engine.step(state, engine.sample(state, gens.batch))
            watcher.fill(state, k)
            if k % every == 0 or k in ck or k == steps:
                watcher.check(state, k)
                state = engine.settle(state)
            if k in ck:
                recorder.snapshot(state, k)
    except DivergenceError as err:
        if err.record is None:
            err.record = recorder.finish(outcome(None, err.step))
        raise
    return recorder.finish(outcome(state, None))


class _Watcher:
    """The divergence check of one run: the device histories of the engine's per-step
    watched quantities, filled after each update, and their scan at each check (from the
    last checked entry on)."""

    def __init__(self, says: Divergence[Any], state0: Any, steps: int, factor: float) -> None:
        self.says, self.steps, self.factor = says, steps, factor
        self.each = [w for w in says.watch if w.each_step]
        self.lag0 = [w for w in self.each if w.lag == 0]
        self.lag1 = [w for w in self.each if w.lag == 1]
        # the history of each per-step watch (allocated at its first value), in lag0, lag1
        # order; entries up to the last update filled (``done``)
        self.bufs: list[Any] = [None] * len(self.each)
        self.scanned = {w.name: 0 for w in self.each}  # entries checked
        self.done = 0
        for i, w in enumerate(self.lag0):
            self._put(i, w, 0, w.value(state0))
        self._finals(state0)

    def _put(self, i: int, w: Watch[Any], j: int, value: Any) -> None:
        buf = self.bufs[i]
        if buf is None:  # the first value gives the history its dtype, device and shape
            from specdyn._torch import torch

            buf = self.bufs[i] = torch().empty((self.steps + 1, *value.shape),
                                               dtype=value.dtype, device=value.device)
        buf[j] = value

    def _finals(self, state: Any) -> None:
        if self.done == self.steps:  # no later update gives the last state's own value
            n = len(self.lag0)
            for i, w in enumerate(self.lag1):
                if w.final is not None:
                    self._put(n + i, w, self.steps, w.final(state))

    def fill(self, state: Any, k: int) -> None:
        """Write the watched quantities the state after update ``k`` gives."""
        n = len(self.lag0)
        for i, w in enumerate(self.lag0):
            self._put(i, w, k, w.value(state))
        for i, w in enumerate(self.lag1):
            self._put(n + i, w, k - 1, w.value(state))
        self.done = k
        if k == self.steps:
            self._finals(state)

    def known(self) -> dict[str, int]:
        """How many entries of each history are filled."""
        end = self.done == self.steps
        out = {w.name: self.done + 1 for w in self.lag0}
        out.update({w.name: self.done + int(end and w.final is not None) for w in self.lag1})
        return out

    def history(self) -> dict[str, Any]:
        """Each per-step watch's history by name (``None``: no value yet)."""
        return {w.name: b for w, b in zip([*self.lag0, *self.lag1], self.bufs, strict=True)
                if b is not None}

    def check(self, state: Any, k: int) -> None:
        """Raise the error of the earliest bad entry since the last check (a tie: the first
        watch listed), the per-check watches read on ``state``."""
        bad: list[tuple[int, int, Watch[Any], float]] = []
        hist, known = self.history(), self.known()
        for i, w in enumerate(self.says.watch):
            limit = np.inf if w.scale is None else divergence_limit(w.scale, self.factor)
            if not w.each_step:
                value = w.value(state).reshape(1)
                if _first_bad(value, limit) is not None:
                    bad.append((k, i, w, float(value[0])))
                continue
            lo, hi = self.scanned[w.name], known[w.name]
            if hi <= lo:
                continue
            window = hist[w.name][lo:hi]
            if window.ndim > 1:  # a vector per entry: its mean is watched
                window = window.mean(dim=tuple(range(1, window.ndim)))
            j = _first_bad(window, limit)
            if j is not None:
                bad.append((lo + j, i, w, float(window[j])))
            self.scanned[w.name] = hi
        if bad:
            step, _, w, value = min(bad, key=lambda b: (b[0], b[1]))
            raise self.says.error(step, w.what(value, self.factor))

    def outcome(self, state: Any, diverged: int | None, meta: dict[str, Any]) -> Outcome[Any]:
        """What the recorder is given: the last state, the histories, the first bad step
        and the record's fixed metadata."""
        return Outcome(state, self.steps, self.history(), self.known(), diverged, meta)
