"""Bad input to every builtin experiment's config, generated from the declared constraints.

Each config dataclass of :mod:`specdyn.experiments` declares its fields' allowed
values once (:func:`specdyn._validate.constrained_fields`, inherited from
``PaperSettingConfig`` / ``TheoryGrid`` where it shares them); for every declared
field, each value of :meth:`~specdyn._validate.Constraint.bad_values` (just outside
each bound, a wrong type, NaN and infinities, a bad choice, a too short or too long
tuple, a tuple with one bad entry) must be refused with one ``ValueError`` line that
starts with the field's name (``sizes[1]`` for an entry), before the run. Rules that
link fields (``kmax <= D``, ``t_max > t_min``) keep their hand-written tests beside
the experiments; so do the hand tables of ``tests/cli/test_cli_bad_input.py``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from specdyn import _validate as v
from specdyn import runs
from specdyn.cli import main
from specdyn.runs.config import coerce_value, field_types

#: One name per config class (``fig5`` and ``fig6`` share theirs), in registration order.
CLASSES: dict[str, type] = {}
for _name in runs.builtin_names():
    _cls = runs.get(_name).config_cls
    if _cls not in CLASSES.values():
        CLASSES[_name] = _cls

#: Config fields that are not declared, each with the reason.
UNDECLARED: dict[tuple[str, str], str] = {
    ("Fig4Config", "device"): "a free-form torch device string ('cpu', 'cuda:1', None: the "
                              "default), checked where the run resolves it (specdyn._torch)",
}


def _cases() -> list[tuple[str, str, Any]]:
    cases = []
    for exp, cls in CLASSES.items():
        for name, rule in v.constraints_of(cls).items():
            cases += [(exp, name, bad) for bad in rule.bad_values()]
    return cases


CASES = _cases()


def _assert_names(message: str, name: str) -> None:
    assert re.match(rf"{re.escape(name)}\b", message), message  # the field, first
    assert "\n" not in message and "np.float64(" not in message, message
    assert "got" in message or "one of" in message, message  # says what it got or allows


@pytest.mark.parametrize(("exp", "name", "bad"), CASES,
                         ids=[f"{e}-{n}-{b!r}" for e, n, b in CASES])
def test_a_declared_field_refuses_its_bad_values(exp: str, name: str, bad: Any) -> None:
    cls = CLASSES[exp]
    with pytest.raises(ValueError) as info:
        dataclasses.replace(cls(), **{name: bad})
    _assert_names(str(info.value), name)


@pytest.mark.parametrize("exp", runs.builtin_names())
def test_quick_and_full_configs_satisfy_the_declarations_unchanged(exp: str) -> None:
    # configs only validate: checking a built config again changes no value and no type
    # (the quick defaults and the --full config of every experiment still construct)
    e = runs.get(exp)
    rules = v.constraints_of(e.config_cls)
    assert rules, f"{exp}: {e.config_cls.__name__} declares no constraints"
    for cfg in (e.config(), *([e.config(full=True)] if e.full is not None else [])):
        for name, rule in rules.items():
            value = getattr(cfg, name)
            checked = rule.check(name, value)
            assert checked == value and type(checked) is type(value), (exp, name)
            if isinstance(value, tuple):
                assert [type(x) for x in checked] == [type(x) for x in value], (exp, name)


def test_every_config_field_is_declared_or_listed_with_a_reason() -> None:
    missing, stale = [], []
    for cls in CLASSES.values():
        declared = set(v.constraints_of(cls))
        for f in dataclasses.fields(cls):
            listed = (cls.__name__, f.name) in UNDECLARED
            if f.name not in declared and not listed:
                missing.append(f"{cls.__name__}.{f.name}")
            if f.name in declared and listed:
                stale.append(f"{cls.__name__}.{f.name}")
    assert missing == [] and stale == []
    assert {c for c, _ in UNDECLARED} <= {c.__name__ for c in CLASSES.values()}


def test_generated_cases_outnumber_the_old_hand_cases() -> None:
    # hand-written bad config values before the declarations: 15 in
    # tests/cli/test_cli_bad_input.py (12 API rows, 3 run-file rows) and 35 in
    # tests/experiments (pytest.raises blocks and table rows); they stay
    assert len(CASES) >= 50
    assert set(e for e, _, _ in CASES) == set(CLASSES)


# ------------------------------------------------------------------------ through the CLI


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    return "[" + ", ".join(_toml(x) for x in value) + "]"


def _file_case(cls: type, name: str, rule: v.Constraint) -> Any | None:
    """The last bad value a TOML file can carry to the config (the bounds come last)."""
    hint = field_types(cls)[name]
    out = None
    for bad in rule.bad_values():
        if bad is None:
            continue
        try:
            coerce_value(name, bad, hint, "here")
        except ValueError:  # refused by the file's types already, before the declaration
            continue
        out = bad
    return out


def _cli_cases() -> list[tuple[str, str, str, Any]]:
    cases = []
    for k, (exp, cls) in enumerate(CLASSES.items()):
        usable = [(n, b) for n, r in v.constraints_of(cls).items()
                  if (b := _file_case(cls, n, r)) is not None]
        # two fields an experiment, taken in turn through `run`, and the last declared
        # through `reproduce NAME --config FILE`
        cases += [("run", exp, *usable[k % len(usable)]), ("reproduce", exp, *usable[-1])]
    return cases


CLI_CASES = _cli_cases()


@pytest.mark.parametrize(("cmd", "exp", "name", "bad"), CLI_CASES,
                         ids=[f"{c}-{e}-{n}" for c, e, n, _ in CLI_CASES])
def test_a_bad_config_file_value_is_one_line_exit_2(cmd: str, exp: str, name: str, bad: Any,
                                                   tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(f'experiment = "{exp}"\n{name} = {_toml(bad)}\n')
    out_dir = tmp_path / "o"
    argv = (["run", str(path), "--out", str(out_dir)] if cmd == "run" else
            ["reproduce", exp, "--config", str(path), "--out", str(out_dir), "--threads", "1"])
    try:
        code = main(argv)
    except SystemExit as stop:
        code = int(stop.code or 0)
    out, err = capsys.readouterr()
    assert code == 2, err
    assert out == "" and "Traceback" not in err
    assert err.count("\n") == 1 and err.startswith("specdyn") and ": error: " in err, err
    assert f"line 2, key '{name}'" in err, err  # the file's line and the key
    assert not out_dir.exists()  # refused before any work


def test_the_cli_cases_cover_every_experiment() -> None:
    assert {e for _, e, _, _ in CLI_CASES} == set(CLASSES)
    assert len(CLI_CASES) == 2 * len(CLASSES)


# ------------------------------------------------------------------------ the declarations


def test_a_subclass_keeps_its_bases_checks_and_may_narrow_them() -> None:
    @dataclasses.dataclass(frozen=True)
    @v.constrained_fields(D=v.SIZE, seed=v.SEED)
    class Base:
        D: int = 4
        seed: int = 0

    @dataclasses.dataclass(frozen=True)
    @v.constrained_fields(D=v.Int(3, why="three modes"), x=v.POSITIVE)
    class Child(Base):  # no __post_init__ of its own: the base's still runs
        x: float = 1.0

    assert v.constraints_of(Child) == {"D": v.Int(3, why="three modes"), "seed": v.SEED,
                                       "x": v.POSITIVE}
    with pytest.raises(ValueError, match=r"^seed must be an integer >= 0, got -1$"):
        Child(seed=-1)
    with pytest.raises(ValueError, match=r"^D must be an integer >= 3, got 2 \(three modes\)$"):
        Child(D=2)
    assert Child(D=np.int64(5), x=2).D == 5 and type(Child(x=2).x) is float


def test_a_constraint_on_an_unknown_field_is_a_declaration_error() -> None:
    with pytest.raises(TypeError, match="unknown fields"):
        @dataclasses.dataclass(frozen=True)
        @v.constrained_fields(nope=v.SIZE)
        class Bad:
            N: int = 1


@pytest.mark.parametrize(("rule", "good", "bad"), [
    (v.Tuple(v.SIZE, min_len=2), [(1, 2), [3, 3, 3], (4.0, 5)], [(1,), (1, 0), 5, "12", None]),
    (v.Tuple(v.POSITIVE, length=2, increasing=True), [(0.1, 2), [1, 3]],
     [(2.0, 1.0), (1.0, 1.0), (0.0, 1.0), (1.0, 2.0, 3.0)]),
    (v.Tuple(v.Choice("a", "b")), [(), ("a", "b"), ["b"]], ["a", ("c",), (None,)]),
    (v.Pattern(r"[a-z]+:[0-9]+", "'name:count'"), ["ab:3"], ["ab", "ab:", 3, None, "AB:3"]),
    (v.Bool(), [True, False], [1, 0, "true", None]),
])
def test_the_config_constraint_kinds(rule: v.Constraint, good: list[Any],
                                     bad: list[Any]) -> None:
    for value in good:
        rule.check("p", value)
    for value in [*bad, *rule.bad_values()]:  # its own bad values are refused too
        with pytest.raises(ValueError, match=r"^p\b"):
            rule.check("p", value)


def test_tuples_are_normalised_and_name_the_bad_entry() -> None:
    rule = v.Tuple(v.Real(0.0, 0.5, hi_open=True), min_len=1)
    out = rule.check("alpha1", [np.float64(0.1), 0])
    assert out == (0.1, 0.0) and [type(x) for x in out] == [float, float]
    with pytest.raises(ValueError, match=r"^alpha1\[1\] must lie in \[0.0, 0.5\), got 0.5$"):
        rule.check("alpha1", (0.1, 0.5))
    with pytest.raises(ValueError, match=r"^alpha1 must hold at least 1 values, got \(\)$"):
        rule.check("alpha1", ())


def test_escape_runs_pattern_reads_positive_numbers_only() -> None:
    from specdyn.experiments.outlier_escape.config import ESCAPE_RUN

    for good in ("mup:0.05:4", "ntk:1.0:64", "standard:1e-3:.5", "mup:2E2:10"):
        ESCAPE_RUN.check("escape_runs", good)
    for bad in ("mup:0:4", "mup:0.0:4", "mup:-0.1:4", "mup:0.1", "adam:0.1:4", "mup:nan:4",
                "mup:inf:4", "mup:1e999:4", "mup:0e5:4", "mup:0.1:4:5"):
        with pytest.raises(ValueError, match="^escape_runs must read"):
            ESCAPE_RUN.check("escape_runs", bad)

