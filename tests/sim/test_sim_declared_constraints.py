"""Bad input to every public sim entry point and engine, generated from the declared constraints.

Each public entry point of :mod:`specdyn.sim` declares its parameters' allowed values
once, on the fields of its config (:func:`specdyn._validate.constrained_fields`; the
shorthand ``seed`` on :class:`~specdyn.sim.RunOptions`'), each engine on its
constructor (:func:`specdyn._validate.constrained`); for every declared parameter,
each value of :meth:`~specdyn._validate.Constraint.bad_values` (just outside each
bound, a wrong type, NaN and infinities, ``None`` where not optional) must be refused
with one ``ValueError`` line that starts with the parameter's name, before any work:
through the entry point as a user calls it (the calls below would run for a while if
a bad value got through). Cross-parameter rules (``B <= M``, ``precision`` needs
CUDA, schedules) keep their hand-written tests beside the entry points.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

from specdyn import _validate as v
from specdyn import sim
from specdyn.settings import PowerLawSetting
from specdyn.sim import gram
from specdyn.sim.parameterization import get_parameterization

S = PowerLawSetting.paper(0.1, 2.0, D=6)
W_STAR = np.eye(3, 4)
CPU = {"device": "cpu"}
F64 = {"dtype": torch.float64}


def _tanh1(x: np.ndarray) -> np.ndarray:
    return np.tanh(x[:, 0])


def _stats() -> gram.Stats:
    return gram.Stats.build(np.eye(3), np.eye(3, 2), np.eye(2))


#: A valid call of each constrained callable that is neither a registered entry point nor a
#: registered engine (those come from the registries, below): (callable, args, kwargs).
HELPERS: dict[str, Callable[[], tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]]] = {
    "scaling": lambda: (sim.scaling, ("mup",), {"depth": 2, "N": 4, "D": 3, "P": 2, "lr": 0.1}),
    "escape_step": lambda: (sim.escape_step, ([0, 1], [1.0, 2.0], 1.0), {}),
    "rank_one_teacher": lambda: (sim.rank_one_teacher, (3, 4, 1.0), {}),
    "seed_streams": lambda: (sim.seed_streams, (1, 2), {}),
    "activation_mu1": lambda: (sim.activation_mu1, ("tanh",), {}),
    "init_weights": lambda: (sim.init_weights, (4, 3, 2, 1.0, 1.0,
                                                get_parameterization("mup", 4, 1.0),
                                                torch.Generator(), torch.float64, "cpu"), {}),
    "layer_scales": lambda: (sim.layer_scales, (get_parameterization("mup", 4, 1.0),),
                             {"depth": 2, "N": 4, "sigma_w": 1.0, "sigma_a": 1.0}),
    "get_parameterization": lambda: (get_parameterization, ("mup", 4, 1.0), {}),
    # dataclasses declaring their fields (constrained_fields): the options of every run,
    # the concepts an entry point takes as one object, and the setting shared with the theory
    "RunOptions": lambda: (sim.RunOptions, (), {"seed": 3, "check_every": 5}),
    # the particle runs' update (their ``update``): a bad field is refused where it is made
    "LangevinUpdate": lambda: (sim.LangevinUpdate, (), {"steps": 3}),
    "Sampling": lambda: (sim.Sampling, ("sgd",), {"M": 10, "B": 2, "noise_std": 0.1}),
    "DeepLinearRecording": lambda: (sim.DeepLinearRecording, (),
                                    {"layers": [0], "top_k": 2, "sharpness": [0]}),
    "PowerLawSetting": lambda: (PowerLawSetting, (1.0, 1.0, 0.5, 1.0, 1.0), {"D": 4}),
}


def _entry(e: sim.EntryPoint) -> Callable[[], tuple[Callable[..., Any], tuple[Any, ...],
                                                     dict[str, Any]]]:
    def make() -> tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]:
        args, kwargs = e.example()
        # steps long enough that a bad value getting through would be noticed
        return e.function, args, {**kwargs, **({"steps": 400} if "steps" in kwargs else {})}
    return make


def _engine(e: sim.EngineEntry) -> Callable[[], tuple[Callable[..., Any], tuple[Any, ...],
                                                      dict[str, Any]]]:
    def make() -> tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]:
        args, kwargs = next(iter(e.examples.values()))()
        return e.cls, args, kwargs
    return make


#: every constrained callable: the registered entry points and engines, and the helpers
BASE = {**{e.name: _entry(e) for e in sim.entry_points()},
        **{e.cls.__name__: _engine(e) for e in sim.engines()}, **HELPERS}

#: Each entry point's config: where its parameters are declared (from the registry).
CONFIGS: dict[Callable[..., Any], type] = {e.function: e.config for e in sim.entry_points()}


def _rules(fn: Callable[..., Any]) -> dict[str, v.Constraint]:
    """The declared constraints of a callable: its own, or (an entry point) its config's and
    the run options' (the shorthand ``seed``; ``options`` may be left ``None``)."""
    rules = v.constraints_of(fn)
    if fn in CONFIGS:  # the shorthand seed: None is "not given" (RunOptions' default)
        rules = {**v.constraints_of(CONFIGS[fn]), **rules, "seed": v.Int(0, optional=True),
                 "options": v.Instance(sim.RunOptions, optional=True)}
    return rules


def _call(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], name: str,
          bad: Any) -> Any:
    """``fn(*args, **kwargs)`` with ``name`` set to ``bad``, as a user would give it: in its
    place where the signature names it, else as a keyword."""
    sig = inspect.signature(fn)
    param = sig.parameters.get(name)
    if param is None or param.kind is inspect.Parameter.VAR_KEYWORD:
        return fn(*args, **{**kwargs, name: bad})
    bound = sig.bind(*args, **kwargs)
    bound.arguments[name] = bad
    return fn(*bound.args, **bound.kwargs)


def _cases() -> list[tuple[str, str, Any]]:
    cases = []
    for key, make in BASE.items():
        fn = make()[0]
        for name, rule in _rules(fn).items():
            cases += [(key, name, bad) for bad in rule.bad_values()]
    return cases


CASES = _cases()


@pytest.mark.parametrize(("key", "name", "bad"), CASES,
                         ids=[f"{k}-{n}-{b!r}" for k, n, b in CASES])
def test_a_declared_constraint_refuses_its_bad_values(key: str, name: str, bad: Any) -> None:
    fn, args, kwargs = BASE[key]()
    with pytest.raises(ValueError) as info:
        _call(fn, args, kwargs, name, bad)
    message = str(info.value)
    # names the argument first (a sequence's bad item as name[i], e.g. gd_steps_row's alpha2)
    assert re.match(rf"{name}(\[\d+\])? ", message), message
    assert "\n" not in message and "np.float64(" not in message
    assert "got" in message or "one of" in message, message  # says what it got or allows


@pytest.mark.parametrize("key", list(BASE))
def test_defaults_and_the_base_calls_satisfy_the_declarations(key: str) -> None:
    # the declaration is not stricter than the documented defaults and a valid call
    fn, args, kwargs = BASE[key]()
    rules = _rules(fn)
    assert rules, f"{key} declares no constraints"
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    values = dict(bound.arguments)
    values.update(values.pop("shorthands", {}))  # an entry point's run-option keywords
    if fn in CONFIGS:
        values.setdefault("seed", None)
    for name, rule in rules.items():
        rule.check(name, values[name])


def test_every_public_entry_point_and_engine_is_registered_and_declares_its_constraints(
        ) -> None:
    # the registries are the lists: every public engine class and every public function
    # that runs an engine is registered, with its config declaring its fields
    public = [getattr(sim, n) for n in sim.__all__]
    engines = {c for c in public if inspect.isclass(c) and sim.Engine in c.__mro__
               and c is not sim.Engine}
    assert engines == {e.cls for e in sim.engines()}
    for e in sim.entry_points():
        assert getattr(sim, e.name) is e.function and e.name in sim.__all__
        assert issubclass(e.config, sim.SimConfig) and v.constraints_of(e.config)
        # every field of the config is declared (a free one explicitly, v.Free)
        fields = {f.name for f in dataclasses.fields(e.config)}
        assert fields == set(v.constraints_of(e.config)), e.name
    undeclared = [e.cls.__name__ for e in sim.engines() if not v.constraints_of(e.cls)]
    assert undeclared == []


@pytest.mark.parametrize("entry", sim.entry_points(), ids=lambda e: e.name)
def test_every_config_field_is_a_visible_parameter_with_its_default(entry: Any) -> None:
    # an editor and help() show every option: each field of the config is a named
    # parameter of the entry point, with the config's default (required where it has none)
    params = inspect.signature(entry.function).parameters
    for f in dataclasses.fields(entry.config):
        if f.name == "options":
            assert params["options"].default is None
            continue
        assert f.name in params, (entry.name, f.name)
        default = params[f.name].default
        if f.default is dataclasses.MISSING:
            assert default is inspect.Parameter.empty, (entry.name, f.name)
        else:
            assert default == f.default, (entry.name, f.name, default, f.default)
    kinds = [p.kind for p in params.values()]
    assert kinds.count(inspect.Parameter.VAR_KEYWORD) == 1  # the run options' shorthands
    assert "Unpack[RunKeywords]" in str(params["shorthands"].annotation)


def test_an_unknown_or_missing_parameter_is_one_line_naming_it() -> None:
    # the config's own check of the keywords (before any work): a typo is not swallowed;
    # a missing one is Python's own error, naming it (the signature shows every parameter)
    with pytest.raises(ValueError, match=r"^stepz is not a parameter of train_two_layer "):
        sim.train_two_layer(S, N=8, M=8, steps=3, stepz=3)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"missing a required argument: 'steps'"):
        sim.train_two_layer(S, N=8, M=8)  # type: ignore[call-arg]
    # a field of a concept object the entry point takes says where it lives
    with pytest.raises(ValueError, match=r"^top_k is not a parameter of train_deep_linear: "
                                         r"it is a field of recording, a DeepLinearRecording "):
        sim.train_deep_linear(W_STAR, depth=2, N=4, parameterization="mup", lr=0.1, steps=3,
                              top_k=2)  # type: ignore[call-arg]


def test_generated_cases_outnumber_the_old_hand_tables() -> None:
    # the hand-written bad-input cases of tests/sim counted 85 before the declarations
    # (pytest.raises(ValueError) blocks and table rows of the entry points and schedules;
    # they stay, for cross-parameter rules and message texts): the generated ones must
    # not be fewer
    assert len(CASES) >= 85
    assert {k for k, _, _ in CASES} == set(BASE)


@pytest.mark.parametrize(("rule", "good", "bad"), [
    (v.Int(1), [1, 3, 4.0, np.int64(7)], [0, 2.5, "1", True, None, float("nan")]),
    (v.Int(), [-3, 0, 4.0], [2.5, "1", float("inf")]),
    (v.Int(0, 10), [0, 10], [-1, 11]),
    (v.Int(1, power_of_two=True), [1, 2, 64], [3, 6, 0]),
    (v.Int(strict=True), [-5, 0, 2**70], [2.0, True, "3"]),
    (v.Real(0.0, lo_open=True), [1e-300, 5.0], [0.0, -1.0, float("inf"), float("nan")]),
    (v.Real(0.0, 1.0, hi_open=True), [0.0, 0.999], [1.0, -1e-300]),
    (v.Choice("a", None), ["a", None], ["b", 1]),
    (v.Subset("x", "y"), ["x", ("x", "y"), []], ["z", ("x", "z"), 5]),
    (v.Int(1, optional=True), [None, 2], [0]),
])
def test_constraint_kinds(rule: v.Constraint, good: list[Any], bad: list[Any]) -> None:
    for value in good:
        rule.check("p", value)
    for value in bad:
        with pytest.raises(ValueError, match=r"^p "):
            rule.check("p", value)
    for value in rule.bad_values():  # its own bad values are refused too
        with pytest.raises(ValueError, match=r"^p "):
            rule.check("p", value)


def test_a_constraint_on_an_unknown_parameter_is_a_declaration_error() -> None:
    with pytest.raises(TypeError, match="unknown parameters"):
        @v.constrained(nope=v.SIZE)
        def f(N: int) -> int:
            return N


def test_checked_values_are_normalised() -> None:
    @v.constrained(N=v.SIZE, dt=v.POSITIVE, names=v.Subset("a", "b"))
    def f(N: int, dt: float, names: Any = "a") -> tuple[Any, ...]:
        return N, dt, names

    out = f(np.int64(3), 1, names="b")
    assert out == (3, 1.0, ("b",))
    assert type(out[0]) is int and type(out[1]) is float
