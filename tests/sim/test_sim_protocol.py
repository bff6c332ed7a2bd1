"""The run protocol of every simulator: schedules, seeds, the driver, divergence, metadata."""

from __future__ import annotations

import re
import zlib

import numpy as np
import pytest
import torch

from specdyn import Schedule
from specdyn.models.activations import get_activation
from specdyn.settings import PowerLawSetting
from specdyn.sim import (
    META_KEYS,
    Block,
    DivergenceError,
    GramEngine,
    LangevinUpdate,
    ParticleEngine,
    Record,
    derive_seed,
    entry_points,
    gd_steps,
    gram,
    mean_field_langevin,
    propagation_of_chaos,
    seed_streams,
    train_deep_linear,
    train_linear,
    train_linear_student,
    train_two_layer,
)
from specdyn.sim.protocol import (
    Divergence,
    EngineDefaults,
    RunOptions,
    StreamLayout,
    record_meta,
)

S = PowerLawSetting.paper(0.1, 2.0, D=8)


def test_an_int_is_a_log_spaced_count_everywhere() -> None:
    # geomspace(1, 100, 4) = 1, 4.64, 21.5, 100, rounded, with 0 and steps added
    assert Schedule.of(5).resolve(100).tolist() == [0, 1, 5, 22, 100]
    assert Schedule.log(5) == Schedule.of(5)
    assert Schedule.of(None).resolve(3).tolist() == [0, 1, 2, 3]  # default: log(60)
    assert Schedule.even(5).resolve(100).tolist() == [0, 25, 50, 75, 100]
    assert Schedule.every(30).resolve(100).tolist() == [0, 30, 60, 90, 100]
    assert Schedule.of([5, 0, 5]).resolve(10).tolist() == [0, 5]
    assert Schedule.of(np.array([3])).resolve(3).tolist() == [3]


@pytest.mark.parametrize("bad", [True, 0, [], [1.5], [[1, 2]], ["a"]])
def test_bad_schedules_name_checkpoints(bad: object) -> None:
    with pytest.raises(ValueError, match="checkpoints"):
        Schedule.of(bad).resolve(10)  # type: ignore[arg-type]


def test_explicit_steps_outside_the_run_are_refused() -> None:
    with pytest.raises(ValueError, match=r"checkpoints.*\[0, steps=10\]"):
        Schedule.at([0, 11]).resolve(10)
    with pytest.raises(ValueError, match="^count "):
        Schedule.even(1)


def test_seed_streams_keep_the_recorded_streams() -> None:
    # the linear and two-layer engines' streams since their first tables (the former
    # _run.run_seeds(7)): child i of SeedSequence(7).spawn(n), one 32-bit word
    assert seed_streams(7, 2) == [1201125462, 3618983171]
    for seed in (0, 7, 2**40 + 12345):
        assert seed_streams(seed, 3) == [int(c.generate_state(1)[0]) for c in
                                         np.random.SeedSequence(seed).spawn(3)]
    assert seed_streams(8, 2) != seed_streams(7, 2)


def test_derive_seed_is_a_node_of_the_spawn_tree() -> None:
    assert derive_seed(7, 0) == seed_streams(7, 1)[0]
    assert derive_seed(7, 3, 1) == int(np.random.SeedSequence(7).spawn(4)[3].spawn(2)[1]
                                       .generate_state(1)[0])
    # a name is its CRC-32 word, so keys read as what they are
    assert derive_seed(7, "cell", 2) == derive_seed(7, zlib.crc32(b"cell"), 2)
    # distinct keys, distinct seeds: the cells of a grid, the repeats, the root
    keys = [(), ("rep", 0), ("rep", 1), ("cell", 0, 1), ("cell", 1, 0), ("row", 0), (0,), (1,)]
    assert len({derive_seed(5, *k) for k in keys}) == len(keys)
    assert all(0 <= derive_seed(5, *k) < 2**32 for k in keys)


@pytest.mark.parametrize(("args", "match"), [((-1,), "^seed "), ((3, -1), "^key "),
                                             ((3, 2**32), "^key "), ((3, 1.5), "^key ")])
def test_derive_seed_refuses_what_is_not_a_seed_or_key(args: tuple, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        derive_seed(*args)


def test_all_steps_run_whatever_the_checkpoints() -> None:
    # issue 17: steps=210 with checkpoints=[0] used to run 0 steps and say nothing
    tr = train_linear(S, None, None, 210, checkpoints=[0], progress=False)
    assert tr.steps.tolist() == [0] and tr.meta["steps"] == 210
    # a run that diverges after its last checkpoint is caught, with that checkpoint kept
    with pytest.raises(DivergenceError) as info:
        train_linear(S, None, None, 1000, dt=60.0, checkpoints=[0], progress=False)
    assert info.value.step > 0 and info.value.record.steps.tolist() == [0]
    with pytest.raises(DivergenceError):
        train_two_layer(S, "relu", N=16, M=16, steps=400, dt=40.0, checkpoints=[0],
                        progress=False, device="cpu")


def test_every_record_is_a_record_with_the_fixed_metadata_keys() -> None:
    # every registered entry point's example (and train_linear's flow, which solves an ODE
    # instead of running the loop): a Record whose meta starts with the loop's fixed keys
    records = {}
    for e in entry_points():
        args, kwargs = e.example()
        out = e.function(*args, **kwargs)
        records[e.name] = next(iter(out)) if e.name == "gd_steps_row" else out
    records["flow"] = train_linear(S, None, None, 5, method="flow", progress=False)
    fixed = ["engine", "seed", "steps", "dtype", "device", "wall_time_s"]
    assert list(META_KEYS) == fixed
    for name, rec in records.items():
        assert isinstance(rec, Record), (name, type(rec))
        meta = rec.meta
        assert list(meta)[:6] == fixed, name
        assert meta["dtype"] == "float64" and meta["wall_time_s"] >= 0, name
    # the run's name: train_linear's Gram GD and its gradient flow share "gram"; a row of
    # gd_steps is gd_steps'
    assert records["flow"].meta["engine"] == records["train_linear"].meta["engine"] == "gram"
    assert records["gd_steps_row"].meta["engine"] == records["gd_steps"].meta["engine"]


def test_a_record_refuses_meta_without_the_fixed_keys() -> None:
    good = record_meta("probe", seed=1, dtype="torch.float64", device="cpu", start=0.0,
                       steps=3, extra=1)
    assert good["dtype"] == "float64" and list(good)[-1] == "extra"
    with pytest.raises(ValueError, match="wall_time_s"):
        Record(meta={k: good[k] for k in META_KEYS if k != "wall_time_s"})
    with pytest.raises(ValueError, match="start with"):
        Record(meta={"extra": 1, **good})
    with pytest.raises(ValueError, match="fixed keys"):
        record_meta("probe", seed=1, dtype="float64", device="cpu", start=0.0, steps=3,
                    seed_x=0, dtype_x=0, wall_time_s=5.0)


def test_engine_steps_return_new_states_and_leave_the_old_ones() -> None:
    # the protocol's states are values: stepping the same state twice gives the same
    # new state, bit for bit, and the old one is unchanged (WeightEngine is the
    # documented in-place exception)
    g = torch.Generator().manual_seed(0)
    X = torch.randn(12, 3, generator=g, dtype=torch.float64)
    Y = torch.tanh(X[:, :1]).squeeze(1)
    pe = ParticleEngine(get_activation("tanh"), X, Y, [Block(1, 6)], 0.1, 0.01, 0.05)
    th = pe.state_of(torch.randn(6, 4, generator=g, dtype=torch.float64))
    xi = torch.randn(6, 4, generator=g, dtype=torch.float64)
    before = th.theta.clone()
    new = pe.step(th, xi)
    assert torch.equal(th.theta, before) and not torch.equal(new.theta, th.theta)
    assert torch.equal(pe.step(th, xi).theta, new.theta)
    assert th.loss_before is None and new.loss_before is not None  # the loss lives in the state

    xs = X.numpy()
    stats = gram.Stats.build(xs.T @ xs / 12, xs.T @ xs[:, :2] / 12, np.eye(2))
    ge = GramEngine(stats, 1.0, 0.05, device="cpu", N=8, sigma_w=0.5, sigma_a=1.0)
    st = ge.init(gram.weight_generator(derive_seed(1)))
    fields = ("Gw", "Ga", "Gwa")
    copies = [getattr(st, f).clone() for f in fields]
    new3 = ge.step(st)
    assert all(torch.equal(getattr(st, f), b) for f, b in zip(fields, copies, strict=True))
    assert not torch.equal(new3.Gwa, st.Gwa)
    again = ge.step(st)
    assert all(torch.equal(getattr(again, f), getattr(new3, f)) for f in fields)


def test_run_options_fill_an_engines_numbers_and_keep_given_ones() -> None:
    # each engine carries its own check interval and factor (kept from its first tables)
    assert RunOptions().for_engine(EngineDefaults(256)).every == 256
    assert RunOptions().for_engine(EngineDefaults(50, 1e8)).factor == 1e8
    given = RunOptions(check_every=3, divergence_factor=10.0).for_engine(EngineDefaults(20))
    assert (given.every, given.factor) == (3, 10.0)
    with pytest.raises(ValueError, match="unset: call for_engine"):
        _ = RunOptions().every
    with pytest.raises(ValueError, match=r"^divergence_factor must lie in \(1.0, inf\)"):
        RunOptions(divergence_factor=1.0)


def test_a_stream_layout_never_shares_the_batches_with_recording() -> None:
    assert StreamLayout(init=0, record=0, batch=1).seeds(5, "record") == (derive_seed(5, 0),)
    assert StreamLayout(init=0, batch=(3, 4)).seeds(5, "batch") == (derive_seed(5, 3),
                                                                    derive_seed(5, 4))
    assert StreamLayout(init=0).seeds(5, "record") == ()
    with pytest.raises(ValueError, match="^batch and record must draw from different"):
        StreamLayout(init=0, batch=1, record=1)


_T = np.eye(3, 4) * 2.0
DIVERGING = {
    "linear": lambda: train_linear(S, 16, 24, 400, dt=60.0, progress=False, device="cpu"),
    "weights": lambda: train_linear(S, 16, 24, 400, dt=60.0, engine="weights", progress=False,
                                    device="cpu"),
    "two_layer": lambda: train_two_layer(S, "relu", N=32, M=32, steps=400, dt=40.0,
                                         progress=False, device="cpu"),
    "linear_student": lambda: train_linear_student(_T, lr=3.5, steps=200, device="cpu"),
    "deep_linear": lambda: train_deep_linear(_T, depth=2, N=8, parameterization="standard",
                                             lr=3.0, steps=200, device="cpu"),
    "langevin": lambda: mean_field_langevin("quadratic", lambda x: 5 * x[:, 0] ** 2, 20, 3, 50,
                                            update=LangevinUpdate(dt=5.0, steps=100),
                                            device="cpu"),
    "chaos": lambda: propagation_of_chaos("quadratic", lambda x: 5 * x[:, 0] ** 2, [4], 3, 30,
                                          update=LangevinUpdate(dt=5.0, steps=100),
                                          reference_N=32, device="cpu"),
    "two_step": lambda: gd_steps(5, 5, 5, lrs=(1e200, 1e200), activation="quadratic",
                                 device="cpu"),
}


@pytest.mark.parametrize("engine", list(DIVERGING))
def test_every_engine_reports_divergence_in_the_one_message(engine: str) -> None:
    # "<run> diverged at step k (t = ...): <seen>; <advice>", from divergence_error
    with pytest.raises(DivergenceError) as info:
        DIVERGING[engine]()
    msg = str(info.value)
    assert re.fullmatch(r"[\w -]+ diverged at step (\d+)( \(t = [^)]+\))?: [^;]+; .+", msg), msg
    assert f"step {info.value.step}" in msg and "\n" not in msg


def test_one_divergence_says_each_runs_name_and_advice_as_data() -> None:
    # the engines differ only in the Divergence they state (run name, advice, dt, watches)
    err = Divergence("probe run", "lower lr", dt=0.5).error(2, "loss 2e+07 above 1e+06 x its "
                                                             "start")
    assert str(err) == ("probe run diverged at step 2 (t = 1): loss 2e+07 above 1e+06 x its "
                        "start; lower lr")
    err = Divergence("other", "reduce dt").error(4, "the weights are not finite")
    assert str(err) == "other diverged at step 4: the weights are not finite; reduce dt"
    assert err.record is None  # the run loop's recorder fills it
