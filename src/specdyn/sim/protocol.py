"""The run protocol shared by every simulator: options, seeds, divergence, records, the driver.

Every engine of :mod:`specdyn.sim` has the same shape (the jax-md one)::

    state = engine.init(generator)        # the initial state, a frozen dataclass
    batch = engine.sample(state, generator)   # (engines that draw their batches)
    state = engine.step(state, batch)     # one update: a new state, no I/O, no host sync

``step`` returns the state and nothing else; a loss lives in the state (the
convention of ``docs/concepts.md``: ``loss`` is the loss of the state's own
parameters, ``loss_before`` that of the parameters the update was made from,
when the gradient pass gives it for free). Each entry point (``train_linear``,
``train_two_layer``, ...) validates its declared parameters, gathers the
run-wide settings into one :class:`RunOptions` and hands the engine to
:func:`drive`, the one loop: it runs *all* ``steps`` updates, checks for
divergence every ``options.check_every`` steps and at every checkpoint,
records the checkpoints of a :class:`~specdyn.schedule.Schedule`, and shows
the progress bar. This module holds the pieces every entry point shares:

- :class:`RunOptions`: seed, dtype, device, progress, checkpoints, check
  interval and divergence factor; :data:`ENGINE_DEFAULTS` holds each engine's
  check interval and factor, the one home of these numbers.
- when to record is a :class:`specdyn.Schedule` (its own module,
  :mod:`specdyn.schedule`, shared with :class:`specdyn.measure.SpectrumTracker`):
  an ``int`` is a *count* of log-spaced checkpoints everywhere. Checkpoints never
  change how many steps run: ``steps`` are always run.
- :func:`derive_seed` and :func:`seed_streams`: every stream, repeat and cell seed
  derived from one run seed, the one derivation (:data:`DerivedSeed`, its type).
- :class:`DivergenceError`: the one divergence policy. A run whose watched
  quantity (loss or parameter size) stops being finite or exceeds
  :func:`divergence_limit` raises it (built by :func:`divergence_error`, the one
  message), carrying the first bad ``step`` and the partial ``record`` (the
  checkpoints recorded before it).
- :class:`Record`: the one record type. Every entry point returns a frozen
  dataclass that subclasses it (its payload: spectra, losses, particles...);
  :class:`Record` holds ``meta`` and checks, in one place, that it has the
  fixed keys :data:`META_KEYS` that :func:`record_meta` writes (``engine``,
  ``seed``, ``steps``, ``dtype`` as ``"float64"``, ``device``, ``wall_time_s``).
"""

from __future__ import annotations

import math
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, ClassVar, NewType, Protocol, TypeVar, runtime_checkable

import numpy as np

from specdyn import _validate as v
from specdyn._progress import progress as _progress
from specdyn.schedule import Schedule, ScheduleLike

__all__ = [
    "DIVERGENCE_FACTOR",
    "ENGINE_DEFAULTS",
    "DerivedSeed",
    "META_KEYS",
    "PROGRESS_MIN_STEPS",
    "Divergence",
    "DivergenceError",
    "Engine",
    "Record",
    "RunOptions",
    "divergence_error",
    "divergence_limit",
    "derive_seed",
    "drive",
    "dt_advice",
    "first_divergent",
    "record_meta",
    "run_options",
    "scan_check",
    "seed_streams",
    "watched",
]

S = TypeVar("S")


# ---------------------------------------------------------------------------- the engine


@runtime_checkable
class Engine(Protocol):
    """What every simulator of :mod:`specdyn.sim` is: an ``init``/``step`` pair on values.

    - ``init(generator) -> State``: the first state, a frozen dataclass, drawn from
      ``generator`` (a ``torch.Generator`` for the engines that draw with torch, numpy's
      ``Generator`` for the particles and the two-step engine, which draw on the host;
      sizes and scales are the engine's constructor arguments). Randomness enters one
      way: the generator is the caller's, no engine holds one
      (``tests/sim/test_sim_engine_protocol.py``, for every engine: equal generators,
      bit-identical states).
    - ``step(state, batch) -> State``: one update, **pure**: a new state, the
      given one left bit for bit as it was (``tests/sim/test_sim_protocol.py``
      runs every engine's step twice on the same state). Scratch buffers belong
      to the state (a field excluded from its value, e.g.
      :class:`~specdyn.sim.two_layer_engine.TwoLayerState`'s ``work``), never to
      the engine or the caller. Full-batch engines take ``batch=None``.
    - optional ``sample(state, generator) -> Batch``: the batch of the next update,
      for the engines that draw their own (from the caller's generator).

    Everything else -- the history, the checkpoints, the divergence checks and
    their one error -- is :func:`drive`'s; each engine states its check interval
    and divergence factor as ``defaults``, the name of its row of
    :data:`ENGINE_DEFAULTS` (``RunOptions.for_engine(engine.defaults)``).
    """

    defaults: ClassVar[str]

    def init(self, generator: Any, /) -> Any:
        """The first state, drawn from ``generator``."""

    def step(self, state: Any, batch: Any, /) -> Any:
        """One pure update on ``batch``: the state after it."""


# ---------------------------------------------------------------------------- options


DIVERGENCE_FACTOR = 1e6
"""The one divergence threshold: a watched quantity above this times its start scale."""

_LIMIT_FLOOR = 1e-12  # a start scale below this counts as this (a run starting at ~0 loss)

PROGRESS_MIN_STEPS = 500
"""The one progress policy: :func:`drive` shows a bar when asked and the run has at least
this many steps (a shorter run ends before a bar says anything)."""

ENGINE_DEFAULTS: dict[str, tuple[int, float]] = {
    # engine: (check_every, divergence_factor), the numbers each engine has always used
    "linear": (100, DIVERGENCE_FACTOR),  # train_linear, both engines: loss vs its start
    "two_layer": (256, DIVERGENCE_FACTOR),  # batch loss vs 0.5 tr(Syy), the zero-output loss
    "linear_student": (50, 1e8),  # mean squared error vs its start
    "deep_linear": (20, DIVERGENCE_FACTOR),  # loss vs its start
    "particles": (50, DIVERGENCE_FACTOR),  # max |theta| vs 1 (mean-field units)
    # two updates, each checked; it watches finiteness only (no scale), so no factor is used
    "two_step": (1, DIVERGENCE_FACTOR),
}
"""Each engine's check interval (steps between host syncs) and divergence factor."""


@dataclass(frozen=True)
@v.constrained_fields(seed=v.SEED, check_every=v.Int(1, optional=True),
                      divergence_factor=v.Real(1.0, math.inf, lo_open=True, hi_open=True,
                                               optional=True))
class RunOptions:
    """How a run is made, whatever the engine: the one options object of every entry point.

    Entry points take one as ``options=`` (or the shorthand keywords ``seed=...``,
    ``device=...``, never both; see :func:`run_options`); :meth:`for_engine` fills
    ``check_every`` and ``divergence_factor`` left ``None`` with the engine's
    :data:`ENGINE_DEFAULTS`.

    Attributes
    ----------
    seed
        The run seed (streams derived by :func:`seed_streams`).
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
        The watched quantity may grow to this times its start scale, ``> 1``.
    """

    seed: int = 0
    dtype: Any = None
    device: Any = None
    progress: bool = False
    checkpoints: ScheduleLike = None
    check_every: int | None = None
    divergence_factor: float | None = None

    def for_engine(self, engine: str) -> RunOptions:
        """These options with the engine's default check interval and factor filled in."""
        every, factor = ENGINE_DEFAULTS[v.choice("engine", engine, ENGINE_DEFAULTS)]
        return replace(self, check_every=every if self.check_every is None else self.check_every,
                       divergence_factor=factor if self.divergence_factor is None
                       else self.divergence_factor)

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


def run_options(engine: str, options: RunOptions | None = None, **given: Any) -> RunOptions:
    """The one way an entry point makes its :class:`RunOptions`: ``options`` (``None``:
    ``RunOptions()``) with the shorthand keywords it was given (``seed``, ``dtype``,
    ``device``, ``progress``, ``checkpoints``; ``None`` means not given) filled in, then the
    ``engine``'s check interval and divergence factor (:meth:`RunOptions.for_engine`).

    A field set both ways (in ``options``, away from its default, and as a keyword) is an
    error. The driver's knobs (``check_every``, ``divergence_factor``) have no keyword:
    they come only through ``options``. A field set neither way keeps :class:`RunOptions`'
    default (``seed=0``, ``progress=False``: the one default of every entry point).
    """
    if options is None:
        options = RunOptions()
    elif not isinstance(options, RunOptions):
        raise ValueError(f"options must be a RunOptions, got {type(options).__name__}")
    set_ = {k: x for k, x in given.items() if x is not None}
    both = sorted(k for k in set_ if not _is_default(options, k))
    if both:
        raise ValueError(f"{', '.join(both)} given both in options and as a keyword: "
                         f"give each once")
    opts = replace(options, **set_).for_engine(engine)
    v.SEED.check("seed", opts.seed)  # every entry point's seeds are >= 0, however given
    return opts


_DEFAULTS = RunOptions()


def _is_default(options: RunOptions, name: str) -> bool:
    # identity for the None defaults: a checkpoints array has no plain truth value
    value, default = getattr(options, name), getattr(_DEFAULTS, name)
    return value is None if default is None else bool(value == default)


# ---------------------------------------------------------------------------- seeds


# One derivation (tests/project/test_seed_derivation.py checks every generator of the
# package is seeded through it). A run seed is the root of a tree and a key names a node:
#     derive_seed(cfg.seed, "cell", i, j)    the seed of cell (i, j) of a grid
#     derive_seed(cfg.seed, "rep", r)        the r-th repeat of an experiment
#     seed_streams(seed, 3)                  an engine's streams 0, 1, 2 (data, init, noise)
# A relation between runs is kept by the choice of key: engines that must see the same
# data take the same stream index; cells of a row that must start alike leave the
# column out. No seed is made by arithmetic (seed + 1000 i + j made neighbouring cells
# of different experiments share seeds).

DerivedSeed = NewType("DerivedSeed", int)
"""A seed made by :func:`derive_seed` (a 32-bit integer), ready for a generator."""

_WORD = 1 << 32


def _key_word(part: int | str) -> int:
    """One 32-bit word of a key: an index in ``[0, 2**32)`` or a name (its CRC-32)."""
    if isinstance(part, str):
        return zlib.crc32(part.encode())
    if isinstance(part, bool) or not isinstance(part, (int, np.integer)) \
            or not 0 <= int(part) < _WORD:
        raise ValueError(f"key must hold names and integers in [0, 2**32), got {part!r}")
    return int(part)


@v.constrained(seed=v.SEED)
def derive_seed(seed: int, *key: int | str) -> DerivedSeed:
    """The seed of node ``key`` of the tree rooted at run ``seed``: the one seed derivation.

    Node ``key`` of numpy's spawn tree, so ``seed_streams(seed, n)[i]`` (here
    ``derive_seed(seed, i)``) is child ``i`` of ``SeedSequence(seed).spawn(n)``,
    the linear and two-layer engines' streams since their first tables. Distinct
    keys give independent streams in numpy's sense. Every generator of the package
    (``default_rng``, ``SeedSequence``, ``torch.Generator().manual_seed``) is
    seeded by a :data:`DerivedSeed`: a result of this function or of
    :func:`seed_streams`, or a parameter typed ``DerivedSeed`` (mypy then refuses
    a raw seed there).

    Parameters
    ----------
    seed
        The run seed, an integer ``>= 0``.
    *key
        The node: names (``"cell"``, ``"rep"``) and indices in ``[0, 2**32)``.
        An empty key is the root's own derived seed.

    Returns
    -------
    DerivedSeed
        The first 32-bit word of ``SeedSequence(seed, spawn_key=key)`` (names
        enter as their CRC-32), an ``int`` in ``[0, 2**32)``.
    """
    words = tuple(_key_word(k) for k in key)
    return DerivedSeed(int(np.random.SeedSequence(seed, spawn_key=words).generate_state(1)[0]))


@v.constrained(seed=v.SEED, count=v.SIZE)
def seed_streams(seed: int, count: int) -> list[DerivedSeed]:
    """``count`` independent stream seeds of one run ``seed``: ``derive_seed(seed, i)``.

    An engine takes its streams by index (data first, then weights, noise...);
    engines that must draw the same data and weights from one seed (the linear
    and two-layer engines) take the same indices. Stream ``i`` is child ``i`` of
    ``SeedSequence(seed).spawn(count)``.
    """
    return [derive_seed(seed, i) for i in range(count)]


# ---------------------------------------------------------------------------- divergence


class DivergenceError(RuntimeError):
    """A run diverged: its watched quantity became non-finite or exceeded the engine's limit.

    Attributes
    ----------
    step
        The first bad step (the state after ``step`` updates).
    record
        The partial record: the entry point's record type holding the checkpoints
        taken before the divergence (``None`` when none was taken, or for
        :func:`specdyn.sim.gd_steps`, which has no checkpoints).
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


def scan_check(history: Callable[[int, int], Any], limit: float,
               error: Callable[[int, float], DivergenceError]) -> Callable[[S, int], S]:
    """A ``check`` for :func:`drive` that watches a history the engine fills as it runs.

    At step ``k`` it tests ``history(last, k)`` (entries ``last, last + 1, ...`` of
    the watched quantity, entry ``j`` being its value after ``j`` updates: one host
    sync for all the steps since the last check ``last``) with
    :func:`first_divergent` against ``limit``, and raises ``error(j, value)`` for the
    first bad entry ``j`` (``value``: that entry).
    """
    last = [0]

    def check(state: S, k: int) -> S:
        window = history(last[0], k)
        bad = first_divergent(window, limit)
        if bad is not None:
            raise error(last[0] + bad, float(window[bad]))
        last[0] = k
        return state

    return check


@dataclass(frozen=True)
class Divergence:
    """What a run's divergence error says, as data: the one error of every engine.

    Each entry point states its ``run`` name, its ``advice`` and its flow step ``dt``
    (``None``: no time shown); :meth:`error` builds the message
    (:func:`divergence_error`), :meth:`check` the driver's check of a watched history.
    """

    run: str
    advice: str
    dt: float | None = None

    def error(self, step: int, what: str, record: Any = None) -> DivergenceError:
        """The divergence error at ``step``, having seen ``what`` (see :func:`watched`)."""
        return divergence_error(self.run, step, what, self.advice, dt=self.dt, record=record)

    def check(self, history: Callable[[int, int], Any], start: float, factor: float,
              name: str, *, scale: str | None = "its start",
              record: Callable[[int], Any] | None = None) -> Callable[[S, int], S]:
        """The :func:`scan_check` of ``history`` (the watched quantity ``name``) against
        ``factor`` times ``start`` (:func:`divergence_limit`), raising :meth:`error`
        (with ``record(j)``, the partial record up to the bad step ``j``, when given;
        else the driver's ``partial``)."""
        return scan_check(history, divergence_limit(start, factor), lambda j, x: self.error(
            j, watched(name, x, factor, scale), None if record is None else record(j)))


# ---------------------------------------------------------------------------- records


def dtype_name(dtype: Any) -> str:
    """A torch or numpy dtype as its plain name (``"float64"``, not ``"torch.float64"``)."""
    return str(dtype).replace("torch.", "")


META_KEYS: tuple[str, ...] = ("engine", "seed", "steps", "dtype", "device", "wall_time_s")
"""The fixed metadata keys of every record, in order (see :func:`record_meta`)."""


@dataclass(frozen=True, kw_only=True)
class Record:
    """The one record type: what every entry point of :mod:`specdyn.sim` returns.

    Each entry point's record is a frozen dataclass subclassing this one, with
    its own payload fields (host numpy arrays); ``meta`` is keyword-only.

    Attributes
    ----------
    meta
        How the run was made: the fixed keys :data:`META_KEYS` first (written by
        :func:`record_meta`; checked here, the one place), then the engine's own.
    """

    meta: dict[str, Any]

    def __post_init__(self) -> None:
        missing = [k for k in META_KEYS if k not in self.meta]
        if missing:
            raise ValueError(f"a record's meta must have the keys {list(META_KEYS)} "
                             f"(build it with record_meta); missing {missing}")
        if list(self.meta)[:len(META_KEYS)] != list(META_KEYS):
            raise ValueError(f"a record's meta must start with the keys {list(META_KEYS)}, "
                             f"got {list(self.meta)[:len(META_KEYS)]}")
        if self.meta["dtype"].startswith("torch."):
            raise ValueError(f"meta dtype must be a plain name such as 'float64', "
                             f"got {self.meta['dtype']!r}")


def record_meta(engine: str, *, seed: int, dtype: Any, device: Any, start: float,
                steps: int | None, **extra: Any) -> dict[str, Any]:
    """The metadata of a record: the fixed keys first, then the engine's own.

    Fixed keys: ``engine``, ``seed``, ``steps``, ``dtype`` (``"float64"``),
    ``device`` (``"cpu"``, ``"cuda:0"``), ``wall_time_s`` (since ``start``, a
    :func:`time.perf_counter` value).
    """
    fixed = {"engine": engine, "seed": int(seed), "steps": steps, "dtype": dtype_name(dtype),
             "device": str(device), "wall_time_s": time.perf_counter() - start}
    clash = sorted(set(extra) & set(fixed))
    if clash:
        raise ValueError(f"record_meta: engine keys {clash} would replace fixed keys")
    return {**fixed, **extra}


# ---------------------------------------------------------------------------- the driver


def drive(state: S, step: Callable[[S, int], S], steps: int, checkpoints: np.ndarray, *,
          observe: Callable[[S, int], None], options: RunOptions,
          check: Callable[[S, int], S] | None = None,
          partial: Callable[[], Any] | None = None, desc: str = "") -> S:
    """The one training loop: run ``steps`` updates, check, record at ``checkpoints``.

    ``step(state, k)`` makes update ``k`` (``1..steps``) and returns the state
    after ``k`` updates. ``check(state, k)`` (at ``k = 0``, every
    ``options.check_every`` steps, at every checkpoint and at ``steps``) raises
    :class:`DivergenceError` naming the first bad step and may return a
    cleaned-up state (e.g. re-symmetrised Grams); a state is always checked
    before it is recorded. ``observe(state, k)`` records checkpoint ``k``. On
    divergence the error's ``record`` is set from ``partial()`` (the checkpoints
    taken so far). All ``steps`` are run whatever the checkpoints are;
    ``options.progress`` shows the bar for runs of :data:`PROGRESS_MIN_STEPS` steps or more.
    """
    ck = set(int(c) for c in checkpoints)
    check_every = options.every
    try:
        if check is not None:
            state = check(state, 0)
        if 0 in ck:
            observe(state, 0)
        for k in _progress(range(1, steps + 1), total=steps, desc=desc,
                               enabled=options.progress and steps >= PROGRESS_MIN_STEPS):
            state = step(state, k)
            if check is not None and (k % check_every == 0 or k in ck or k == steps):
                state = check(state, k)
            if k in ck:
                observe(state, k)
    except DivergenceError as err:
        if err.record is None and partial is not None:
            err.record = partial()
        raise
    return state
