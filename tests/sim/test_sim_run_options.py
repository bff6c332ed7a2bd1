"""Runtime options come through ``RunOptions``: one path, one progress default, no repeats."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import numpy as np
import pytest

from specdyn import sim
from specdyn.settings import PowerLawSetting
from specdyn.sim import (
    DivergenceError,
    RunOptions,
    Sampling,
    SimConfig,
    rank_one_teacher,
    train_linear,
    train_linear_student,
)
from specdyn.sim.options import SHORTHANDS, run_options

#: every entry point's config, from the registry (no list to edit)
CONFIGS = sorted({e.config for e in sim.entry_points()}, key=lambda c: c.__name__)


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: c.__name__)
def test_every_config_takes_the_options_and_no_loop_knobs(cfg: type) -> None:
    fields = {f.name: f for f in dataclasses.fields(cfg)}
    assert issubclass(cfg, SimConfig) and fields["options"].default_factory is RunOptions
    # the loop's knobs and the shorthands have one way in: RunOptions
    assert not set(fields) & {"divergence_factor", "check_every", *SHORTHANDS}


@pytest.mark.parametrize("entry", sim.entry_points(), ids=lambda e: e.name)
def test_entry_points_show_every_parameter_and_take_the_run_options_as_typed_keywords(
        entry: sim.EntryPoint) -> None:
    # its config's fields and its system's arguments are named parameters (an editor and
    # help() show them); the run options' five shorthands come as typed keywords
    # (**shorthands: Unpack[RunKeywords]), documented once
    params = inspect.signature(entry.function).parameters
    own = {p.name for p in params.values() if p.kind is not inspect.Parameter.VAR_KEYWORD}
    fields = {f.name for f in dataclasses.fields(entry.config)}
    # the rest is the run's system, not options: a setting, a teacher or target, given data
    system = own - fields
    assert "options" in own and len(system) <= 5, (entry.name, sorted(system))
    var = [p for p in params.values() if p.kind is inspect.Parameter.VAR_KEYWORD]
    assert [p.name for p in var] == ["shorthands"]
    assert set(sim.RunKeywords.__annotations__) == set(SHORTHANDS)


@pytest.mark.parametrize("entry", sim.entry_points(), ids=lambda e: e.name)
def test_entry_points_show_at_most_twelve_parameters(entry: sim.EntryPoint) -> None:
    # help() stays readable: a concept of several parameters is one object (the students'
    # Sampling, the deep student's DeepLinearRecording, the particle runs' LangevinUpdate);
    # options and shorthands not counted
    params = inspect.signature(entry.function).parameters.values()
    named = [p.name for p in params
             if p.kind is not inspect.Parameter.VAR_KEYWORD and p.name != "options"]
    assert len(named) <= 12, (entry.name, named)


def test_one_progress_default() -> None:
    opts = run_options()
    assert (opts.progress, opts.seed, opts.check_every, opts.divergence_factor) == (
        False, 0, None, None)


def test_keywords_and_options_merge_but_never_set_one_field_twice() -> None:
    opts = run_options(RunOptions(divergence_factor=10.0), seed=4, progress=True)
    assert (opts.seed, opts.progress, opts.divergence_factor) == (4, True, 10.0)
    with pytest.raises(ValueError, match="seed given both in options and as a keyword"):
        run_options(RunOptions(seed=1), seed=2)
    with pytest.raises(ValueError, match="checkpoints"):
        run_options(RunOptions(checkpoints=np.array([0, 5])), checkpoints=3)
    with pytest.raises(ValueError, match="seed"):  # the entry points' range, however given
        run_options(RunOptions(seed=-1))
    with pytest.raises(ValueError, match="options must be a RunOptions"):
        run_options({"seed": 1})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="^check_every is not a run option"):
        run_options(check_every=3)


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
    kw: dict[str, Any] = dict(sampling=Sampling("online", B=1), lr=0.5, steps=2000,
                              checkpoints=[0], overlaps=False, seed=1, device="cpu")
    steps = []
    for options in (None, RunOptions(divergence_factor=1e2, check_every=1)):
        with pytest.raises(DivergenceError) as info:
            train_linear_student(W_star, options=options, **kw)
        steps.append(info.value.step)
    assert steps[1] < steps[0]
    assert "above 100 x its start" in str(info.value)
