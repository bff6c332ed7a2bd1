"""The one run loop, :func:`specdyn.sim.loop.run`: what it calls, when, and what it watches.

Oracle: a toy engine whose state is a step counter and a value the test chooses, so every
call the loop makes (init, sample, step, check, settle, snapshot, finish) can be logged and
compared with the documented order, and every watched history with the values written.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pytest
import torch

from specdyn.sim import (
    DivergenceError,
    Engine,
    EngineDefaults,
    Outcome,
    RunInputs,
    RunOptions,
    Setup,
    derive_seed,
    run,
)
from specdyn.sim.divergence import Divergence, Watch
from specdyn.sim.protocol import StreamLayout, Streams


@dataclass(frozen=True)
class Count:
    k: int
    x: torch.Tensor  # a 0-d value the test makes blow up when it wants


class Toy(Engine[Count, int]):
    """A counter: ``x`` after update ``k`` is ``values[k]``; the batch is drawn as an int."""

    defaults: ClassVar[EngineDefaults] = EngineDefaults(check_every=4, divergence_factor=10.0)
    streams: ClassVar[StreamLayout] = StreamLayout(init=0, batch=1, record=2)

    def __init__(self, values: list[float], log: list[Any], watch: tuple[Watch, ...] = ()
                 ) -> None:
        self.values, self.log, self.watch = values, log, watch

    def init(self, generator: Any) -> Count:
        self.log.append(("init",))
        return Count(0, torch.tensor(self.values[0]))

    def sample(self, state: Count, generator: Any) -> int:
        return int(torch.randint(0, 100, (1,), generator=generator))

    def step(self, state: Count, batch: int) -> Count:
        self.log.append(("step", state.k + 1, batch))
        return Count(state.k + 1, torch.tensor(self.values[state.k + 1]))

    def settle(self, state: Count) -> Count:
        self.log.append(("settle", state.k))
        return state

    def divergence(self, state0: Count) -> Divergence[Count]:
        return Divergence("toy", "be gentle", 0.5, self.watch or (
            Watch("x", lambda s: s.x, scale=float(state0.x)),))


class Log:
    def __init__(self, log: list[Any]) -> None:
        self.log = log

    def snapshot(self, state: Count, step: int) -> None:
        self.log.append(("snap", step, state.k))

    def finish(self, outcome: Outcome[Count]) -> Outcome[Count]:
        self.log.append(("finish", outcome.diverged))
        return outcome


def _run(values: list[float], steps: int, ck: list[int], **kw: Any) -> tuple[Any, list[Any]]:
    log: list[Any] = []
    out = run(Toy(values, log, kw.pop("watch", ())), Log(log), steps=steps,
              options=RunOptions(seed=1), checkpoints=np.array(ck), **kw)
    return out, log


def test_the_loop_calls_in_the_documented_order() -> None:
    out, log = _run([1.0] * 11, 10, [0, 3, 10])
    kinds = [e[0] for e in log]
    assert kinds[:2] == ["init", "snap"] and kinds[-1] == "finish"
    assert [e[1] for e in log if e[0] == "step"] == list(range(1, 11))  # every step runs
    # a check (and the state the loop keeps after it) every check_every=4 steps, at every
    # checkpoint and at the end; each checkpoint is recorded after its check
    assert [e[1] for e in log if e[0] == "settle"] == [3, 4, 8, 10]
    assert [e[1] for e in log if e[0] == "snap"] == [0, 3, 10]
    i3 = log.index(("settle", 3))
    assert log[i3 + 1] == ("snap", 3, 3)
    assert out.state.k == 10 and out.diverged is None
    np.testing.assert_array_equal(out.history["x"].numpy(), np.ones(11))
    assert out.known["x"] == 11


def test_the_batches_come_from_the_batch_stream_only() -> None:
    # the batch generator is the layout's stream 1 of the run seed, whatever the recorder
    _, log = _run([1.0] * 6, 5, [0, 5])
    g = Streams.derive(Toy([1.0], []), 1).batch
    want = [int(torch.randint(0, 100, (1,), generator=g)) for _ in range(5)]
    assert [e[2] for e in log if e[0] == "step"] == want


def test_a_divergence_names_the_first_bad_step_and_carries_the_partial_record() -> None:
    values = [1.0, 2.0, 3.0, 50.0, 4.0, float("nan"), 1.0, 1.0, 1.0]
    with pytest.raises(DivergenceError) as info:
        _run(values, 8, [0, 2])
    err = info.value
    # the scale is x at the start (1), the factor 10: step 3 (50) is the first bad entry,
    # seen at the check of step 4
    assert err.step == 3
    assert str(err) == "toy diverged at step 3 (t = 1.5): x 50 above 10 x its start; be gentle"
    out = err.record
    assert isinstance(out, Outcome) and out.diverged == 3 and out.state is None
    assert out.known["x"] == 5  # filled up to the check that caught it


def test_lagged_final_and_per_check_watches() -> None:
    # a lag-1 watch: the state after update k gives the value of state k - 1; the last
    # state's own comes from final. A per-check watch is read on the checked state only.
    reads: list[int] = []

    def at_check(s: Count) -> torch.Tensor:
        reads.append(s.k)
        return s.x

    watch = (Watch("before", lambda s: s.x - 1, lag=1, final=lambda s: s.x + 100),
             Watch("now", at_check, scale=1.0, each_step=False))
    out, _ = _run([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 5, [0], watch=watch)
    np.testing.assert_array_equal(out.history["before"].numpy(), [1, 2, 3, 4, 5, 106])
    assert "now" not in out.history and reads == [0, 4, 5]


def test_the_earliest_bad_watch_wins_and_a_tie_goes_to_the_first_listed() -> None:
    # "b" is lagged: the state after update k gives it the quantity of state k - 1 (here
    # values[k - 1]), so both watches read values[j] at entry j
    def watches(values: list[float], scale: float) -> tuple[Watch, ...]:
        return (Watch("a", lambda s: s.x, scale=scale, scale_name=None),
                Watch("b", lambda s: torch.tensor(values[s.k - 1]), lag=1, says="b went away"))

    vals = [1.0, 1.0, float("inf"), 1.0, 1.0]
    with pytest.raises(DivergenceError) as info:
        _run(vals, 4, [0], watch=watches(vals, 1.0))
    assert info.value.step == 2 and ": a inf (not finite);" in str(info.value)  # a tie: "a"
    vals = [1.0, 1.0, 1.0, 1e12, float("nan")]
    with pytest.raises(DivergenceError) as info:
        _run(vals, 4, [0], watch=watches(vals, 1.0))
    assert info.value.step == 3 and ": a 1e+12 above 10;" in str(info.value)  # "a" earlier
    vals = [1.0, float("nan"), 1e12, 1.0, 1.0]
    watch = (Watch("a", lambda s: torch.tensor(1.0), scale=1.0), watches(vals, 1.0)[1])
    with pytest.raises(DivergenceError) as info:
        _run(vals, 4, [0], watch=watch)
    assert info.value.step == 1 and ": b went away;" in str(info.value)  # "b" earlier


def test_a_vector_value_is_watched_by_its_mean() -> None:
    # two replicas: one blows up past the limit only on average with the other
    watch = (Watch("err", lambda s: torch.stack([s.x, 0 * s.x]), scale=1.0),)
    with pytest.raises(DivergenceError) as info:
        _run([1.0, 15.0, 25.0, 1.0], 3, [0], watch=watch)
    assert info.value.step == 2  # mean 12.5 > 10 at step 2; 7.5 at step 1 is fine
    out, _ = _run([1.0, 15.0, 1.0, 1.0], 3, [0], watch=watch)
    assert out.history["err"].shape == (4, 2)


def test_options_and_given_starts() -> None:
    # the options' knobs replace the engine's; a given start skips init
    log: list[Any] = []
    eng = Toy([1.0] * 8, log)
    run(eng, Log(log), steps=7, options=RunOptions(check_every=2), checkpoints=np.array([7]),
        start=Count(0, torch.tensor(1.0)))
    assert ("init",) not in log
    assert [e[1] for e in log if e[0] == "settle"] == [2, 4, 6, 7]
    with pytest.raises(DivergenceError, match="x 3 above 2 x its start"):
        run(Toy([1.0, 3.0], []), Log([]), steps=1,
            options=RunOptions(divergence_factor=2.0), checkpoints=np.array([0]))


def test_zero_steps_record_and_check_the_first_state() -> None:
    watch = (Watch("before", lambda s: s.x, lag=1, final=lambda s: s.x * 2),)
    out, log = _run([3.0], 0, [0], watch=watch)
    assert [e[0] for e in log] == ["init", "snap", "finish"]
    np.testing.assert_array_equal(out.history["before"].numpy(), [6.0])
    assert math.isfinite(float(out.history["before"][0]))


def test_run_applies_the_options_dtype_and_device_to_the_engine_it_builds() -> None:
    # the loop resolves the inputs once and hands them to the setup's build: a user's engine
    # built there gets the run's dtype and device; an engine built before the run cannot,
    # so a dtype or device asked for it is refused, not ignored
    seen: list[RunInputs] = []

    def build(inputs: RunInputs) -> tuple[Any, Any]:
        seen.append(inputs)
        eng = Toy([1.0] * 4, [])
        return eng, Log([])

    out = run(Setup("toy", Toy.streams, build), steps=3,
              options=RunOptions(seed=5, dtype="float32", device="cpu"))
    (inputs,) = seen
    assert (inputs.seed, inputs.dtype, str(inputs.device)) == (5, torch.float32, "cpu")
    assert out.meta["dtype"] == "float32" and out.meta["engine"] == "toy"
    assert inputs.seed_of("batch") == derive_seed(5, 1)  # Toy's batch stream
    with pytest.raises(ValueError, match="^dtype and device are applied where run builds"):
        run(Toy([1.0], []), Log([]), steps=1, options=RunOptions(dtype="float32"))
    # and the run's generators are one set: a recorder continues the loop's streams
    eng = Toy([1.0], [])
    assert inputs.generators(eng) is inputs.generators(eng)
