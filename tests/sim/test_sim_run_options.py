"""Runtime options come through ``RunOptions``: one path, one progress default, no repeats."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest

from specdyn.settings import PowerLawSetting
from specdyn.sim import (
    DivergenceError,
    RunOptions,
    mean_field_langevin,
    propagation_of_chaos,
    rank_one_teacher,
    train_deep_linear,
    train_linear,
    train_linear_student,
    train_two_layer,
)
from specdyn.sim.protocol import ENGINE_DEFAULTS, run_options

ENTRY_POINTS = [train_linear, train_two_layer, train_linear_student, train_deep_linear,
                mean_field_langevin, propagation_of_chaos]
SHORTHANDS = ("seed", "dtype", "device", "progress", "checkpoints")


@pytest.mark.parametrize("fn", ENTRY_POINTS, ids=lambda f: f.__name__)
def test_entry_points_take_options_and_no_driver_knobs(fn) -> None:
    params = inspect.signature(fn).parameters
    assert "options" in params and params["options"].default is None
    # the driver's knobs have one way in: RunOptions
    assert "divergence_factor" not in params and "check_every" not in params
    # the shorthands default to "not given", so RunOptions holds the one default of each
    for name in SHORTHANDS:
        assert params[name].default is None, (fn.__name__, name)


def test_one_progress_default_and_engine_defaults() -> None:
    for engine, (every, factor) in ENGINE_DEFAULTS.items():
        opts = run_options(engine)
        assert (opts.progress, opts.seed, opts.every, opts.factor) == (False, 0, every, factor)


def test_keywords_and_options_merge_but_never_set_one_field_twice() -> None:
    opts = run_options("deep_linear", RunOptions(divergence_factor=10.0), seed=4, progress=True)
    assert (opts.seed, opts.progress, opts.factor, opts.every) == (4, True, 10.0, 20)
    with pytest.raises(ValueError, match="seed given both in options and as a keyword"):
        run_options("linear", RunOptions(seed=1), seed=2)
    with pytest.raises(ValueError, match="checkpoints"):
        run_options("linear", RunOptions(checkpoints=np.array([0, 5])), checkpoints=3)
    with pytest.raises(ValueError, match="seed"):  # the entry points' range, however given
        run_options("particles", RunOptions(seed=-1))
    with pytest.raises(ValueError, match="options must be a RunOptions"):
        run_options("linear", {"seed": 1})


def test_options_give_the_same_run_as_the_keywords() -> None:
    s = PowerLawSetting.paper(0.1, 2.0).with_D(8)
    kw = train_linear(s, 16, 16, 30, checkpoints=4, seed=3, device="cpu")
    op = train_linear(s, 16, 16, 30, options=RunOptions(checkpoints=4, seed=3, device="cpu"))
    np.testing.assert_array_equal(kw.spectra, op.spectra)
    np.testing.assert_array_equal(kw.loss, op.loss)
    assert op.meta["seed"] == 3
    with pytest.raises(ValueError, match="seed given both"):
        train_linear(s, 16, 16, 30, seed=1, options=RunOptions(seed=3))


def test_divergence_factor_through_options_changes_the_boundary() -> None:
    # online SGD just above its critical rate: the student's own factor (1e8) and a smaller
    # one through RunOptions; the smaller limit is crossed first
    W_star, _, _ = rank_one_teacher(32, 32, 1.0, seed=0)
    kw: dict[str, Any] = dict(method="online", lr=0.5, steps=2000, B=1, checkpoints=[0],
                              overlaps=False, seed=1, device="cpu")
    steps = []
    for options in (None, RunOptions(divergence_factor=1e2, check_every=1)):
        with pytest.raises(DivergenceError) as info:
            train_linear_student(W_star, options=options, **kw)
        steps.append(info.value.step)
    assert steps[1] < steps[0]
    assert "above 100 x its start" in str(info.value)
