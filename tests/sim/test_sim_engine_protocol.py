"""Every public engine of :mod:`specdyn.sim` is an :class:`~specdyn.sim.protocol.Engine`
whose ``step`` is pure.

Oracle: the given state itself. Each engine's state is copied field by field
(tensors cloned) before a step; after the step every field of the given state
must be bit-identical to its copy, and stepping the same state again must give
the same new state bit for bit (a step that wrote into the state, its inputs or a
buffer the next step reads would fail one of the two). Scratch buffers carried by
a state (``TwoLayerState.work``) are not part of its value (``compare=False``).

Randomness enters one way: ``init(generator)`` and ``sample(state, generator)``, a
generator the caller holds (no engine keeps one). Oracle of the init test: two
inits from equal generators give bit-identical states, and a generator in another
state gives another state (so the first check cannot pass vacuously).
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

from specdyn.models.activations import get_activation
from specdyn.sim import (
    Block,
    Engine,
    EngineDefaults,
    ParticleEngine,
    RunOptions,
    StreamLayout,
    Streams,
    TwoLayerEngine,
    engines,
)
from specdyn.sim.divergence import Divergence
from specdyn.sim.parameterization import get_parameterization

F64: dict[str, Any] = {"dtype": torch.float64, "device": "cpu"}


def _gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _make(entry: Any, call: Callable[[], Any]) -> Callable[[], tuple[Any, Any, Any]]:
    """An engine of a registered example, its first state and the batch of its first update,
    from generators derived from one seed (the engine's own kinds and streams)."""
    def make() -> tuple[Any, Any, Any]:
        args, kwargs = call()
        eng = entry.cls(*args, **kwargs)
        gens = Streams.derive(eng, 3)
        state = eng.init(gens.init)
        return eng, state, eng.sample(state, gens.batch)
    return make


#: every registered engine, in each of its examples (from the registry: no list to edit)
ENGINES: dict[str, Callable[[], tuple[Any, Any, Any]]] = {
    f"{e.cls.__name__}-{name}": _make(e, call) for e in engines() for name, call in
    e.examples.items()}


def _value(state: Any) -> dict[str, Any]:
    """The state's value fields (``compare=True``), tensors cloned, sequences of tensors too."""
    def copy(x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            return x.clone()
        if isinstance(x, (list, tuple)):
            return type(x)(copy(y) for y in x)
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            return _value(x)
        return x
    return {f.name: copy(getattr(state, f.name)) for f in dataclasses.fields(state) if f.compare}


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor):
        return (isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape
                and bool(torch.equal(a.view(-1).view(torch.uint8) if a.is_floating_point()
                                     else a, b.view(-1).view(torch.uint8)
                                     if b.is_floating_point() else b)))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def test_the_registry_holds_every_public_engine() -> None:
    import specdyn.sim as sim

    public = {n for n in sim.__all__ if n.endswith("Engine")} - {"Engine"}
    assert {e.cls.__name__ for e in engines()} == public


@pytest.mark.parametrize("name", list(ENGINES))
def test_every_engine_satisfies_the_protocol(name: str) -> None:
    eng, state, batch = ENGINES[name]()
    assert isinstance(eng, Engine)
    # each engine carries its own check interval and divergence factor, its streams, and
    # states what a run watches (at least one quantity, each read from a state)
    assert isinstance(eng.defaults, EngineDefaults) and isinstance(eng.streams, StreamLayout)
    opts = RunOptions().for_engine(eng.defaults)
    assert (opts.every, opts.factor) == (eng.defaults.check_every,
                                         eng.defaults.divergence_factor)
    says = eng.divergence(state)
    assert isinstance(says, Divergence) and says.watch
    stepped = eng.step(state, batch)  # a lagged watch reads the state after an update
    for w in says.watch:
        value = w.value(stepped if w.lag else state)
        assert isinstance(value, torch.Tensor) and value.numel() >= 1, (name, w.name)


@pytest.mark.parametrize("name", list(ENGINES))
def test_every_engine_makes_its_streams_from_a_seed(name: str) -> None:
    # Streams.derive: one generator a role, from the engine's layout, of the engine's kind;
    # the same seed gives the same first state
    eng, _, _ = ENGINES[name]()
    a, b = Streams.derive(eng, 7), Streams.derive(eng, 7)
    assert _same(_value(eng.init(a.init)), _value(eng.init(b.init)))
    layout = eng.streams
    if layout.batch is not None and layout.batch == layout.init:  # one stream, drawn in turn
        assert a.batch is a.init
    assert a.record is None or a.record is not a.batch


@pytest.mark.parametrize("name", list(ENGINES))
def test_every_step_leaves_the_given_state_bit_identical(name: str) -> None:
    eng, state, batch = ENGINES[name]()
    before = _value(state)
    new = eng.step(state, batch)
    assert type(new) is type(state) and new is not state
    assert _same(_value(state), before), f"{name}: step changed the given state"
    # the same state stepped again gives the same new state, bit for bit
    assert _same(_value(eng.step(state, batch)), _value(new)), f"{name}: step is not a function"
    # and the new state differs from the given one (the check above cannot pass vacuously)
    assert not _same(_value(new), before)


@pytest.mark.parametrize("name", list(ENGINES))
def test_every_engine_init_takes_a_generator_and_is_a_function_of_it(name: str) -> None:
    eng, _, _ = ENGINES[name]()
    params = list(inspect.signature(eng.init).parameters)
    assert params == ["generator"], f"{name}: init{tuple(params)}"
    assert not any(isinstance(x, (torch.Generator, np.random.Generator))
                   for x in vars(eng).values()), f"{name} holds a generator"
    # each engine's generator kind is the one it has always drawn with (its own
    # ``generator``): numpy's for the particles and the two steps, torch's for the others

    def make(seed: int) -> Any:
        return eng.generator("init", seed)

    one, two, other = eng.init(make(5)), eng.init(make(5)), eng.init(make(6))
    assert _same(_value(one), _value(two)), f"{name}: equal generators, different states"
    assert not _same(_value(one), _value(other)), f"{name}: init ignores its generator"


def test_the_particle_engines_draw_is_the_entry_points() -> None:
    # ParticleEngine.init(default_rng(s)) is gaussian_particles(..., default_rng(s)), the
    # draw propagation_of_chaos makes per stream (so both entry points draw alike), block by
    # block
    from specdyn.sim.particles import gaussian_particles

    X = torch.randn(12, 3, generator=_gen(0), **F64)
    eng = ParticleEngine(get_activation("tanh"), X, torch.tanh(X[:, 0]),
                         [Block(1, 5), Block(2, 3)], 0.1, 0.0, 0.0, init_scale=(0.5, 2.0))
    want = gaussian_particles(11, 3, (0.5, 2.0), np.random.default_rng(7))  # 5 + 2 * 3 rows
    assert torch.equal(eng.init(np.random.default_rng(7)).theta, torch.as_tensor(want))
    with pytest.raises(ValueError, match="^init_scale must be given"):
        ParticleEngine(get_activation("tanh"), X, X[:, 0], [Block(1, 2)], 0.1, 0.0,
                       0.0).init(np.random.default_rng(0))


def test_the_two_layer_engines_draw_is_init_weights() -> None:
    # TwoLayerEngine.init(g) is init_weights(..., g): train_two_layer's and the linear
    # engines' weights (gram.weight_generator), in the engine's dtype and device
    from specdyn.sim import init_weights

    par = get_parameterization("mup", 10, 2.0)
    eng = TwoLayerEngine(get_activation("tanh"), par, dt=0.3, B=6, sizes=(10, 4, 3),
                         init_scale=(0.5, 2.0), **F64)
    W, A = init_weights(10, 4, 3, 0.5, 2.0, par, _gen(9), **F64)
    st = eng.init(_gen(9))
    assert torch.equal(st.W, W) and torch.equal(st.A, A)
    with pytest.raises(ValueError, match="^sizes must be given"):
        TwoLayerEngine(get_activation("tanh"), par, dt=0.3, B=6).init(_gen(0))
