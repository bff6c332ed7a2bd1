"""The run protocol shared by every simulator: schedules, seeds, divergence, records, the driver.

Every engine of :mod:`specdyn.sim` has the same shape (the jax-md one)::

    state = engine.init(...)              # the initial state
    state = engine.step(state, batch)     # one update: no I/O, no host sync

(``TwoLayerEngine.step`` and ``ParticleEngine.step`` return ``(state, loss)``
instead: the loss of the weights *before* the update, a by-product of their
gradient pass; the engines are listed in ``docs/concepts.md``.)

and its entry point (``train_linear``, ``train_two_layer``, ...) hands the
engine to :func:`drive`, the one loop: it runs *all* ``steps`` updates, checks
for divergence every ``check_every`` steps and at every checkpoint, records the
checkpoints of a :class:`~specdyn.schedule.Schedule`, and shows the progress bar.
This module holds the pieces every entry point shares:

- when to record is a :class:`specdyn.Schedule` (its own module,
  :mod:`specdyn.schedule`, shared with :class:`specdyn.measure.SpectrumTracker`):
  an ``int`` is a *count* of log-spaced checkpoints everywhere. Checkpoints never
  change how many steps run: ``steps`` are always run.
- :func:`seed_streams`: independent seeds derived from one run seed.
- :class:`DivergenceError`: the one divergence policy. A run whose watched
  quantity (loss or parameter size) stops being finite or exceeds its engine's
  limit raises it, carrying the first bad ``step`` and the partial ``record``
  (the checkpoints recorded before it).
- :class:`Record`: the one record type. Every entry point returns a frozen
  dataclass that subclasses it (its payload: spectra, losses, particles...);
  :class:`Record` holds ``meta`` and checks, in one place, that it has the
  fixed keys :data:`META_KEYS` that :func:`record_meta` writes (``engine``,
  ``seed``, ``steps``, ``dtype`` as ``"float64"``, ``device``, ``wall_time_s``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from specdyn import _validate as v
from specdyn._progress import progress as _progress

__all__ = [
    "META_KEYS",
    "DivergenceError",
    "Record",
    "drive",
    "first_divergent",
    "record_meta",
    "scan_check",
    "seed_streams",
]

S = TypeVar("S")


# ---------------------------------------------------------------------------- seeds


_OFFSET = 7919  # a prime, the two-step engine's target-seed offset since its first tables
_TAG = 0x5D  # the two-layer engine's batch-stream tag word since its first tables


def _tagged(seed: int, tag: int) -> int:
    # SeedSequence([seed, tag]) as one integer: the seed's 32-bit words, then the tag word
    words = max(1, -(-seed.bit_length() // 32))
    return seed + (tag << (32 * words))


def seed_streams(seed: int, count: int, *, scheme: str = "spawn") -> list[int]:
    """``count`` independent integer seeds derived from one run ``seed``.

    Four schemes, kept so that recorded runs stay bit-reproducible:

    - ``"spawn"`` (the default, used by the linear and two-layer engines, which
      draw the same data and weights from one seed so that their runs match step
      for step): ``SeedSequence(seed).spawn(count)``, one 32-bit word of each child.
    - ``"words"`` (the particle engines): the first ``count`` 64-bit words of
      ``SeedSequence(seed)``, masked to 63 bits.
    - ``"offset"`` (the two-step engine): ``seed + 7919 i`` for ``i < count``, the
      run seed itself first.
    - ``"tagged"`` (the two-layer engine's batch stream, ``seed >= 0``): stream
      ``i`` is the integer whose ``SeedSequence`` words are the seed's words
      followed by the tag word ``0x5D + i``, so ``default_rng(stream)`` is
      ``default_rng([seed, 0x5D + i])``.

    ``"spawn"``, ``"words"`` and ``"tagged"`` are independent streams in the sense
    of :class:`numpy.random.SeedSequence`; ``"offset"`` gives distinct seeds, each
    a stream of its own through ``default_rng``.
    """
    count = v.positive_int("count", count)
    scheme = v.choice("scheme", scheme, ("spawn", "words", "offset", "tagged"))
    if scheme == "offset":
        return [seed + _OFFSET * i for i in range(count)]
    if scheme == "tagged":
        seed = v.positive_int("seed", seed, minimum=0)
        return [_tagged(seed, _TAG + i) for i in range(count)]
    if scheme == "spawn":
        return [int(ss.generate_state(1)[0]) for ss in np.random.SeedSequence(seed).spawn(count)]
    state = np.random.SeedSequence(seed).generate_state(count, dtype=np.uint64)
    return [int(s) & ((1 << 63) - 1) for s in state]


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
               error: Callable[[int], DivergenceError]) -> Callable[[S, int], S]:
    """A ``check`` for :func:`drive` that watches a history the engine fills as it runs.

    At step ``k`` it tests ``history(last, k)`` (entries ``last, last + 1, ...`` of
    the watched quantity, entry ``j`` being its value after ``j`` updates: one host
    sync for all the steps since the last check ``last``) with
    :func:`first_divergent` against ``limit``, and raises ``error(j)`` for the first
    bad entry ``j``.
    """
    last = [0]

    def check(state: S, k: int) -> S:
        bad = first_divergent(history(last[0], k), limit)
        if bad is not None:
            raise error(last[0] + bad)
        last[0] = k
        return state

    return check


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
          observe: Callable[[S, int], None], check: Callable[[S, int], S] | None = None,
          check_every: int = 100, partial: Callable[[], Any] | None = None,
          progress: bool = False, desc: str = "") -> S:
    """The one training loop: run ``steps`` updates, check, record at ``checkpoints``.

    ``step(state, k)`` makes update ``k`` (``1..steps``) and returns the state
    after ``k`` updates. ``check(state, k)`` (at ``k = 0``, every
    ``check_every`` steps, at every checkpoint and at ``steps``) raises
    :class:`DivergenceError` naming the first bad step and may return a
    cleaned-up state (e.g. re-symmetrised Grams); a state is always checked
    before it is recorded. ``observe(state, k)`` records checkpoint ``k``. On
    divergence the error's ``record`` is set from ``partial()`` (the checkpoints
    taken so far). All ``steps`` are run whatever the checkpoints are.
    """
    ck = set(int(c) for c in checkpoints)
    try:
        if check is not None:
            state = check(state, 0)
        if 0 in ck:
            observe(state, 0)
        for k in _progress(range(1, steps + 1), total=steps, desc=desc, enabled=progress):
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
