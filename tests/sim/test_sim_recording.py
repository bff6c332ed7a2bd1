"""Recording never changes a run: every engine takes bit-identical steps with recording on
and off.

Oracle: the same run made twice through the one loop (:func:`specdyn.sim.loop.run`), once
with its entry point's own recorder, every recording option on (spectra at every step,
subspace iterations, sharpness, overlaps, kept particles, W2 distances...), and once with a
recorder that records nothing, built afresh from the same seed (fresh generators): the last
state (every value field, bit for bit) and the history of every watched quantity must be
the same. The entry point is called as a user calls it; the test swaps the module's ``run``
for one that makes both runs (the former deep-linear recorder drew its subspace starts
from the batches' generator: with SGD this test failed there).

A second comparison runs with no checkpoint at all: the same steps too, except for the
Gram engine, which re-symmetrises its Grams at every check (and a checkpoint is a check):
the schedule moves its states by roundoff only (bounded here), never the recorder.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import torch

from specdyn import Schedule
from specdyn.models import AtomTeacher
from specdyn.settings import PowerLawSetting
from specdyn.sim import (
    DeepLinearRecording,
    EntryPoint,
    GramState,
    LangevinUpdate,
    Outcome,
    Sampling,
    Setup,
    entry_points,
    gd_steps,
    loop,
    mean_field_langevin,
    propagation_of_chaos,
    rank_one_teacher,
    train_deep_linear,
    train_deep_network,
    train_linear,
    train_linear_student,
    train_two_layer,
)

S = PowerLawSetting.paper(0.1, 2.0, D=8)
CPU: dict[str, Any] = {"device": "cpu"}
EVERY = Schedule.every(1)
W_STAR = rank_one_teacher(5, 7, 2.0, seed=3)[0]
ATOMS = AtomTeacher("tanh", [[1.0, 1.0, 0.0, 0.0]])

#: name -> (module whose ``run`` the entry point calls, the call with recording all on)
RUNS: dict[str, tuple[str, Callable[[], Any]]] = {
    "gram": ("linear", lambda: train_linear(S, 16, 24, 40, checkpoints=EVERY, **CPU)),
    "weights": ("linear", lambda: train_linear(S, 16, 24, 40, engine="weights",
                                               checkpoints=EVERY, **CPU)),
    **{f"two-layer-{opt}": ("two_layer", lambda opt=opt, B=B: train_two_layer(
        S, "tanh", N=16, M=20, steps=25, optimizer=opt, B=B, checkpoints=EVERY,
        record=("preact", "postact", "weights"), **CPU))
       for opt, B in (("gd", None), ("sgd", 6), ("online", 7))},
    "deep-network": ("deep_network", lambda: train_deep_network(
        S, "tanh", depth=2, N=12, M=16, steps=25, checkpoints=EVERY, **CPU)),
    **{f"student-{m}": ("linear_student", lambda m=m: train_linear_student(
        W_STAR, lr=0.2, steps=25, sampling=Sampling(m, M=30, B=4, noise_std=0.1), replicas=2,
        checkpoints=EVERY, **CPU)) for m in ("population", "gd", "sgd", "online")},
    **{f"deep-linear-{m}": ("deep_linear", lambda m=m: train_deep_linear(
        W_STAR, depth=3, N=9, parameterization="mup", lr=0.05, steps=25,
        sampling=Sampling(m, M=30, B=4, noise_std=0.1), checkpoints=EVERY,
        recording=DeepLinearRecording(spectra="subspace", top_k=2, sharpness=EVERY), **CPU))
       for m in ("population", "gd", "sgd", "online")},
    "langevin": ("langevin", lambda: mean_field_langevin(
        "tanh", ATOMS, 12, 3, 20, update=LangevinUpdate(steps=25), checkpoints=EVERY, **CPU)),
    "chaos": ("chaos", lambda: propagation_of_chaos(
        "tanh", ATOMS, [2, 4], 3, 20, update=LangevinUpdate(steps=20), reference_N=16,
        record=("w2_distance", "reference_particles", "system_particles"), checkpoints=EVERY,
        **CPU)),
    "two-step": ("two_step", lambda: gd_steps(6, 9, 5, alphas=(0.2, 0.3), **CPU)),
}


class _Nothing:
    """A recorder that records nothing and hands back what the loop saw."""

    def snapshot(self, state: Any, step: int) -> None:
        pass

    def finish(self, outcome: Outcome[Any]) -> Outcome[Any]:
        return outcome


class _Keep:
    """The entry point's recorder, and what the loop saw (its last state, its histories)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.snapshots = inner, 0

    def snapshot(self, state: Any, step: int) -> None:
        self.snapshots += 1
        self.inner.snapshot(state, step)

    def finish(self, outcome: Outcome[Any]) -> Any:
        self.outcome = outcome
        return self.inner.finish(outcome)


def _value(state: Any) -> list[Any]:
    out = []
    for f in dataclasses.fields(state):
        if f.compare:
            x = getattr(state, f.name)
            out.extend(list(x) if isinstance(x, (list, tuple)) else [x])
    return out


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor):
        return a.dtype == b.dtype and bool(torch.equal(a.reshape(-1).view(torch.uint8),
                                                      b.reshape(-1).view(torch.uint8)))
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return all(_same(x, y) for x, y in zip(_value(a), _value(b), strict=True))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b) or (a is None and b is None)


def _twice(module: str, call: Callable[[], Any], monkeypatch: pytest.MonkeyPatch
           ) -> list[tuple[Outcome[Any], int]]:
    """Make the entry point's run with its recorder, then with no recorder and with no
    checkpoint, each built afresh by its setup (fresh inputs: fresh generators of the same
    seed): ``(outcome, snapshots)``."""
    import importlib

    mod = importlib.import_module(f"specdyn.sim.{module}")
    real = loop.run
    seen: list[tuple[Outcome[Any], int]] = []

    def both(setup: Setup[Any, Any, Any], recorder: None = None, **kw: Any) -> Any:
        assert isinstance(setup, Setup) and recorder is None
        keep: list[_Keep] = []

        def keeping(inputs: Any) -> Any:
            engine, inner = setup.build(inputs)
            keep.append(_Keep(inner))
            return engine, keep[-1]

        def bare(inputs: Any) -> Any:
            return setup.build(inputs)[0], _Nothing()

        result = real(Setup(setup.name, setup.streams, keeping), **kw)
        seen.append((keep[0].outcome, keep[0].snapshots))
        for ck in (kw.get("checkpoints"), np.zeros(0, dtype=np.int64)):
            out = real(Setup(setup.name, setup.streams, bare), **{**kw, "checkpoints": ck})
            seen.append((out, 0))
        return result

    monkeypatch.setattr(mod, "run", both)
    call()
    return seen


def _example_call(entry: EntryPoint) -> Callable[[], Any]:
    def call() -> Any:
        args, kwargs = entry.example()
        out = entry.function(*args, **{**kwargs, "checkpoints": EVERY})
        return list(out) if isinstance(out, Iterator) else out  # a row: every cell
    return call


# every registered entry point too, through its example (recording at every step): a new
# engine is covered as soon as it is registered
RUNS.update({f"example-{e.name}": (e.function.__module__.rsplit(".", 1)[1], _example_call(e))
             for e in entry_points()})


@pytest.mark.parametrize("name", list(RUNS))
def test_recording_on_and_off_take_bit_identical_steps(name: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    module, call = RUNS[name]
    (on, snaps), (off, _), (bare, _) = _twice(module, call, monkeypatch)[:3]
    assert snaps >= 3, "the recorder must have recorded (else the check is vacuous)"
    assert on.diverged is None and off.diverged is None
    assert _same(on.state, off.state), f"{name}: recording changed the last state"
    assert on.history.keys() == off.history.keys() and on.known == off.known
    for key, n in on.known.items():  # the entries filled (a lagged one ends one short)
        assert _same(on.history[key][:n], off.history[key][:n]), f"{name}: {key} history"
    # no checkpoint at all: the same run, but for the Gram engine's settle at each check
    if isinstance(on.state, GramState):
        a, b = (torch.cat([x.reshape(-1) for x in _value(o.state)]) for o in (on, bare))
        assert not torch.equal(a, b)  # the checks at checkpoints do re-symmetrise ...
        assert float((a - b).abs().max() / a.abs().max()) < 1e-13  # ... by roundoff only
    else:
        assert _same(on.state, bare.state), f"{name}: the schedule changed the run"
