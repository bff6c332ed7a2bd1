"""The run protocol shared by every simulator: engines, recorders, seeds, divergence, records.

Every engine of :mod:`specdyn.sim` has the same shape (the jax-md one)::

    state = engine.init(generator)              # the initial state, a frozen dataclass
    batch = engine.sample(state, generator)     # the next update's batch (None: full batch)
    state = engine.step(state, batch)           # one update: a new state, no I/O, no host sync

and every run goes through one loop, :func:`specdyn.sim.loop.run`, generic over the
engine's state and batch types (:class:`Engine` ``[StateT, BatchT]``): it draws the
first state, runs *all* ``steps`` updates, fills the device histories of the
quantities the engine watches, checks them for divergence every
``check_every`` steps and at every checkpoint, hands each checkpoint's state to
a :class:`Recorder` and asks it for the record at the end (or, on divergence,
for the partial record the error carries). This module holds what the loop and
the engines share:

- :class:`Engine` and :class:`Recorder`, the two protocols; an engine carries its
  own :class:`~specdyn.sim.options.EngineDefaults` (check interval, divergence factor),
  its :class:`StreamLayout` (which node of the seed tree each of its random roles draws
  from) and states what it watches (``Engine.divergence``: a
  :class:`~specdyn.sim.divergence.Divergence` of :class:`~specdyn.sim.divergence.Watch`
  es).
- :class:`Streams`: the generators of one run, one per role (init, batch, record),
  all from the run seed by :func:`derive_seed` (the one seed derivation;
  :func:`seed_streams`, :data:`DerivedSeed`). Batches and recording never share a
  generator, so recording can never change a run.
- :class:`Outcome`: how a run ended, as the loop hands it to the recorder.
- Re-exported from their modules: :class:`~specdyn.sim.options.RunOptions` (seed, dtype,
  device, progress, checkpoints, the check's knobs), the divergence pieces
  (:class:`~specdyn.sim.divergence.DivergenceError`, built by
  :func:`~specdyn.sim.divergence.divergence_error`, the one message).
- :class:`Record`: the one record type; its ``meta`` starts with :data:`META_KEYS`
  (:func:`record_meta`).
"""

from __future__ import annotations

import time
import zlib
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, NewType, Protocol, TypeVar, runtime_checkable

import numpy as np

from specdyn import _validate as v

# re-exported: the protocol's divergence and options pieces, defined in their own modules
from specdyn.sim.divergence import (
    DIVERGENCE_FACTOR,
    Divergence,
    DivergenceError,
    Watch,
    divergence_error,
    divergence_limit,
    dt_advice,
    first_divergent,
    watched,
)
from specdyn.sim.options import EngineDefaults, RunOptions, run_options

__all__ = [
    "DIVERGENCE_FACTOR",
    "DerivedSeed",
    "META_KEYS",
    "PROGRESS_MIN_STEPS",
    "Divergence",
    "DivergenceError",
    "Engine",
    "EngineDefaults",
    "Outcome",
    "Record",
    "Recorder",
    "RunOptions",
    "StreamLayout",
    "Streams",
    "Watch",
    "divergence_error",
    "divergence_limit",
    "derive_seed",
    "dt_advice",
    "first_divergent",
    "record_meta",
    "run_options",
    "seed_streams",
    "watched",
]

StateT = TypeVar("StateT")
BatchT = TypeVar("BatchT")
RecordT = TypeVar("RecordT", covariant=True)

PROGRESS_MIN_STEPS = 500
"""The one progress policy: the loop shows a bar when asked and the run has at least
this many steps (a shorter run ends before a bar says anything)."""


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

    Stream ``i`` is child ``i`` of ``SeedSequence(seed).spawn(count)``; an engine's
    :class:`StreamLayout` names the streams of its roles by these indices.
    """
    return [derive_seed(seed, i) for i in range(count)]


#: A node of the seed tree (an index, see :func:`seed_streams`, or a name: the key of
#: :func:`derive_seed`), or several indices: a role that draws from more than one generator
#: (``propagation_of_chaos``' reference and systems).
Node = int | str | tuple[int, ...]

ROLES = ("init", "batch", "record")


@dataclass(frozen=True)
class StreamLayout:
    """Which stream of the run seed each random role of an engine draws from.

    ``data`` (drawn by a setup's build before the engine exists, from
    :meth:`RunInputs.seed_of <specdyn.sim.inputs.RunInputs.seed_of>`), ``init``
    (:meth:`Engine.init`), ``batch`` (:meth:`Engine.sample`: batches, noise) and
    ``record`` (a recorder's own draws, e.g. a power iteration's start), each a stream
    index of :func:`seed_streams` (or a tuple of them), ``None`` when the engine draws
    nothing for that role. Two roles on one stream share one generator, drawn in the
    run's order (``init`` first, so a role that shares ``init``'s stream continues it);
    ``batch`` and ``record`` never share one: recording can never change a run.
    """

    init: Node
    batch: Node | None = None
    record: Node | None = None
    data: Node | None = None

    def __post_init__(self) -> None:
        if self.batch is not None and self.batch == self.record:
            raise ValueError("batch and record must draw from different streams (recording "
                             "may never change the batches)")

    def seeds(self, seed: int, role: str) -> tuple[DerivedSeed, ...]:
        """The derived seeds of ``role``'s stream(s) for run ``seed`` (empty if none)."""
        node = getattr(self, v.choice("role", role, (*ROLES, "data")))
        nodes = () if node is None else node if isinstance(node, tuple) else (node,)
        return tuple(derive_seed(seed, i) for i in nodes)

    def seed(self, seed: int, role: str) -> DerivedSeed:
        """The one derived seed of ``role`` (a role on a single stream)."""
        (one,) = self.seeds(seed, role)
        return one


@dataclass(frozen=True)
class Streams:
    """The generators of one run, one per role: ``init``, ``batch``, ``record``.

    :meth:`derive` makes them from the run seed and the engine's :class:`StreamLayout`
    (each by :meth:`Engine.generator`, of the kind the engine has always drawn with; the
    loop makes a run's through :meth:`RunInputs.generators
    <specdyn.sim.inputs.RunInputs.generators>`); a caller holding generators of its own (a
    test, a hand-written loop) builds one directly. A role drawing from several streams
    gets a tuple of generators.
    """

    init: Any = None
    batch: Any = None
    record: Any = None

    @classmethod
    def derive(cls, engine: Engine[Any, Any], seed: int,
               layout: StreamLayout | None = None) -> Streams:
        """The generators of ``engine``'s roles for run ``seed`` (shared where the layout
        puts two roles on one stream); ``layout`` (default ``engine.streams``) for a run
        whose streams are not its engine's usual ones."""
        layout = engine.streams if layout is None else layout
        made: dict[Node, Any] = {}
        gens: dict[str, Any] = {}
        for role in ROLES:
            node = getattr(layout, role)
            if node is None:
                gens[role] = None
            elif node in made:
                gens[role] = made[node]
            else:
                one = tuple(engine.generator(role, s) for s in layout.seeds(seed, role))
                gens[role] = made[node] = one if isinstance(node, tuple) else one[0]
        return cls(**gens)


# ---------------------------------------------------------------------------- the protocols


@runtime_checkable
class Engine(Protocol[StateT, BatchT]):
    """What every simulator of :mod:`specdyn.sim` is: an ``init``/``step`` pair on values.

    - ``init(generator) -> StateT``: the first state, a frozen dataclass, drawn from
      ``generator`` (the run's ``init`` generator: :class:`Streams`; no engine holds
      one; ``tests/sim/test_sim_engine_protocol.py``: equal generators, bit-identical
      states).
    - ``sample(state, generator) -> BatchT``: the batch of the next update, drawn from
      the run's ``batch`` generator (``None``: a full-batch engine, the default).
    - ``step(state, batch) -> StateT``: one update, **pure**: a new state, the given one
      left bit for bit as it was. Scratch buffers belong to the state (a field
      excluded from its value, e.g. ``TwoLayerState.work``), never to the engine.
    - ``divergence(state0) -> Divergence``: what the run loop watches (its scales may
      read the first state) and what its error says.
    - ``defaults``: the engine's :class:`~specdyn.sim.options.EngineDefaults`;
      ``streams``: its :class:`StreamLayout`; ``generator(role, seed)`` makes a role's
      generator of the kind the engine draws with (default: a CPU ``torch.Generator``).
    - ``settle(state) -> StateT``: the state the loop keeps after a check (default: the
      same; the Gram engine re-symmetrises its Grams there).

    An engine class subclasses ``Engine[StateT, BatchT]`` to take the defaults (a type
    checker then ties ``init``'s output to ``step``'s input, and ``run``'s recorder to
    the state type).
    """

    defaults: ClassVar[EngineDefaults]
    streams: ClassVar[StreamLayout]

    def init(self, generator: Any, /) -> StateT:
        """The first state, drawn from ``generator``."""
        ...

    def step(self, state: StateT, batch: BatchT, /) -> StateT:
        """One pure update on ``batch``: the state after it."""
        ...

    def divergence(self, state0: StateT, /) -> Divergence[StateT]:
        """What the run watches from ``state0`` on, and what its error says."""
        ...

    def sample(self, state: StateT, generator: Any, /) -> BatchT:
        """The batch of the next update (default ``None``: the full batch)."""
        return None  # type: ignore[return-value]

    def generator(self, role: str, seed: DerivedSeed, /) -> Any:
        """A generator for ``role`` (default: a CPU ``torch.Generator``)."""
        from specdyn._torch import torch

        return torch().Generator().manual_seed(seed)

    def settle(self, state: StateT, /) -> StateT:
        """The state the loop keeps after a check (default: ``state`` itself)."""
        return state


@dataclass(frozen=True)
class Outcome(Generic[StateT]):
    """How a run ended, as the loop hands it to :meth:`Recorder.finish`.

    Attributes
    ----------
    state
        The last state (``None`` when the run diverged).
    steps
        The updates asked for.
    history
        The device history of each per-step :class:`~specdyn.sim.divergence.Watch`, by
        name: entry ``j`` is the quantity of the state after ``j`` updates (a vector per
        entry for a vector value); the entries ``[0, known[name])`` are filled.
    known
        How many entries of each history are filled.
    diverged
        The first bad step, or ``None``.
    meta
        The fixed keys of the record's metadata (:data:`META_KEYS`: the run's name, seed,
        steps, dtype, device and wall time so far), made by the loop; a recorder adds its
        own after them.
    """

    state: StateT | None
    steps: int
    history: dict[str, Any] = field(default_factory=dict)
    known: dict[str, int] = field(default_factory=dict)
    diverged: int | None = None
    meta: dict[str, Any] = field(default_factory=dict)


class Recorder(Protocol[StateT, RecordT]):
    """What the loop hands checkpoints to: ``snapshot(state, step)`` at each checkpoint
    (after the state passed its divergence check), ``finish(outcome)`` at the end, or at a
    divergence for the partial record. A recorder's own random draws come from the run's
    ``record`` generator (:class:`Streams`), never from the batches'."""

    def snapshot(self, state: StateT, step: int, /) -> None:
        """Record checkpoint ``step``."""
        ...

    def finish(self, outcome: Outcome[StateT], /) -> RecordT:
        """The record of the run (partial when ``outcome.diverged`` is set)."""
        ...


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
