"""Configs as TOML: round trips, and errors that name the file, the line and the key.

Line numbers are checked against the line on which each test itself placed
the key in the text it wrote (an oracle independent of the line scanner).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pytest
import sweep_probe  # noqa: F401  (registers "sweep-probe")

from specdyn.experiments.simulate.config import SimulateConfig
from specdyn.runs import get
from specdyn.runs.config import config_from_dict, config_to_toml, load_config, read_toml
from specdyn.runs.spec import load_run, load_sweep, make_sweep, run_id


@dataclass(frozen=True)
class _Odd:
    name: str = 'say "hi"\\ and \x7f'
    big: float = math.inf
    small: float = 1e-300
    n: int = -3
    opt: int | None = None
    flag: bool = False
    kind: Literal["a", "b"] = "b"
    shape: tuple[int, ...] = (2, 3)


def _write(tmp_path: Path, text: str, name: str = "c.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize("cfg", [
    SimulateConfig(),
    SimulateConfig(N=None, M=300, sigma_w=0.3, method="flow", dtype="float32"),
    _Odd(),
    _Odd(name="", big=-math.inf, small=0.1 + 0.2, opt=7, flag=True, kind="a", shape=()),
])
def test_toml_round_trip_gives_equal_config(tmp_path: Path, cfg: object) -> None:
    path = _write(tmp_path, config_to_toml(cfg, experiment="x"))
    back = load_config(path, type(cfg))
    assert back == cfg
    assert read_toml(path).data["experiment"] == "x"


def test_toml_without_experiment_is_a_flat_config(tmp_path: Path) -> None:
    text = config_to_toml(SimulateConfig(D=48))
    assert "experiment" not in text and "[" not in text.split("\n", 1)[0]
    assert load_config(_write(tmp_path, text), SimulateConfig).D == 48


def test_none_string_field_with_non_none_default_cannot_be_written() -> None:
    @dataclass(frozen=True)
    class C:
        x: str | None = "a"

    with pytest.raises(ValueError, match="'x'"):
        config_to_toml(C(x=None))


def test_config_from_dict_still_names_source() -> None:
    with pytest.raises(ValueError, match=r"^here: unknown key 'zz'"):
        config_from_dict(SimulateConfig, {"zz": 1}, source="here")


RUN = """\
experiment = "simulate"
steps = 100
D = 16
{bad}
kmax = 8
"""


@pytest.mark.parametrize("bad, key, match", [
    ("nosuch = 3", "nosuch", "unknown key 'nosuch'"),
    ('N = "wide"', "N", "must be an integer"),
    ("sigma_w = -1.0", "sigma_w", "sigma_w must be > 0"),
    ('method = "adam"', "method", "must be one of"),
    ("[extra]\nx = 1", "[extra]", "not a config field"),
])
def test_run_file_errors_name_file_line_and_key(tmp_path: Path, bad: str, key: str,
                                                match: str) -> None:
    text = RUN.format(bad=bad)
    if key == "[extra]":
        # tables must come last in TOML; put the bad table at the end
        text = RUN.format(bad="") + bad + "\n"
    path = _write(tmp_path, text)
    line = _line_of(text, key if key != "[extra]" else "[extra]")
    with pytest.raises(ValueError, match=match) as err:
        load_run(path)
    assert f"{path}, line {line}" in str(err.value)


def test_toml_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    path = _write(tmp_path, 'experiment = "simulate"\nsteps = = 3\n')
    with pytest.raises(ValueError, match=r"c\.toml: invalid TOML.*line 2"):
        load_run(path)


def test_unknown_experiment_named_at_its_line(tmp_path: Path) -> None:
    path = _write(tmp_path, '\n\nexperiment = "nope"\n')
    with pytest.raises(ValueError, match=r"line 3, key 'experiment'.*unknown experiment 'nope'"):
        load_run(path)


SWEEP = """\
experiment = "sweep-probe"
module = "sweep_probe"
n = 3

[sweep]
seeds = {seeds}

[sweep.axes]
x = {x}
{extra}
"""


@pytest.mark.parametrize("seeds, x, extra, needle, match", [
    ("2", "[]", "", "x = []", "axis 'x' is empty"),
    ("2", "[1.0]", "nothere = [1, 2]", "nothere", "has no field 'nothere'"),
    ("2", '[1.0, "two"]', "", "x = [1.0", "must be a number"),
    ("2", "[1.0]", "n = [1, 2]", "n = [1, 2]", "both an axis and a fixed field"),
    ("2", "[1.0]", "sleep = [0.0, -1.0]", "sleep = [", "sleep must be >= 0"),
    ("[]", "[1.0]", "", "seeds = []", "seeds is empty"),
    ("[0, -1]", "[1.0]", "", "seeds = [0, -1]", "integers >= 0"),
    ("2", "{log = [0, 1], num = 3}", "", "x = {log", "needs LO, HI > 0"),
    ("2", "{log = [1, 10]}", "", "x = {log", "a range is"),
    ("2", "[1.0]", "seed = [1, 2]", "seed = [1, 2]", "not an axis"),
])
def test_sweep_errors_name_line_and_key_before_running(tmp_path: Path, seeds: str, x: str,
                                                       extra: str, needle: str,
                                                       match: str) -> None:
    log = tmp_path / "calls.log"
    text = SWEEP.format(seeds=seeds, x=x, extra=extra).replace(
        "n = 3", f"n = 3\nlog = {str(log)!r}")
    path = _write(tmp_path, text)
    with pytest.raises(ValueError, match=match) as err:
        load_sweep(path)
    assert f"{path}, line {_line_of(text, needle)}" in str(err.value)
    assert not log.exists()  # nothing ran


def test_sweep_file_unknown_sweep_key_and_fixed_field(tmp_path: Path) -> None:
    text = SWEEP.format(seeds="2", x="[1.0]", extra="").replace("seeds = 2", "seeds = 2\nfoo = 1")
    path = _write(tmp_path, text)
    with pytest.raises(ValueError, match=rf"line {_line_of(text, 'foo')}.*unknown key 'foo'"):
        load_sweep(path)
    text = SWEEP.format(seeds="2", x="[1.0]", extra="").replace("n = 3", "n = 3\nzz = 1")
    path = _write(tmp_path, text)
    with pytest.raises(ValueError, match=rf"line {_line_of(text, 'zz')}, key 'zz'.*unknown key"):
        load_sweep(path)


def test_sweep_points_are_product_of_axes_and_seeds(tmp_path: Path) -> None:
    text = SWEEP.format(seeds="3", x="{log = [0.1, 10.0], num = 3}", extra='n = "lin:2:4:3"')
    text = text.replace("n = 3\n", "")
    spec = load_sweep(_write(tmp_path, text))
    assert [a.name for a in spec.axes] == ["x", "n"]
    assert spec.axes[0].values == (0.1, 1.0, 10.0)
    assert spec.axes[1].values == (2, 3, 4)
    assert len(spec.points) == 3 * 3 * 3
    settings = {(p.config["x"], p.config["n"], p.config["seed"]) for p in spec.points}
    assert settings == {(x, n, s) for x in (0.1, 1.0, 10.0) for n in (2, 3, 4) for s in range(3)}


def test_run_ids_stable_and_independent_of_axis_order() -> None:
    a = make_sweep("sweep-probe", {"x": [1.0, 2.0], "n": [2, 3]}, seeds=[0, 1],
                   module="sweep_probe")
    b = make_sweep("sweep-probe", {"n": [3, 2], "x": [2.0, 1.0]}, seeds=[1, 0],
                   module="sweep_probe")
    assert {p.run_id for p in a.points} == {p.run_id for p in b.points}
    assert len({p.run_id for p in a.points}) == 8
    # the id is a function of the full config only
    cfg = get("sweep-probe").config_cls(x=2.0, n=3, seed=1)
    from specdyn.runs.config import config_to_dict

    assert run_id("sweep-probe", config_to_dict(cfg)) in {p.run_id for p in a.points}


def test_integer_axis_from_log_range_is_rounded_and_deduplicated() -> None:
    spec = make_sweep("sweep-probe", {"n": {"log": [1, 4], "num": 5}}, module="sweep_probe")
    assert spec.axes[0].values == (1, 2, 3, 4)  # 1, 1.41, 2, 2.83, 4 rounded
    assert all(isinstance(x, int) for x in spec.axes[0].values)


def test_none_is_written_as_none_text_for_optional_numbers(tmp_path: Path) -> None:
    text = config_to_toml(SimulateConfig(N=None))
    assert 'N = "none"' in text.splitlines()
    assert load_config(_write(tmp_path, text), SimulateConfig).N is None
    path = _write(tmp_path, 'N = "nine"\n', "bad.toml")
    with pytest.raises(ValueError, match=r"line 1, key 'N'.*must be an integer"):
        load_config(path, SimulateConfig)


@pytest.mark.parametrize("text, hint", [
    # the case: a typo in a sweep axis
    ('experiment = "simulate"\n[sweep]\nseeds = 2\n[sweep.axes]\ngama0_ratio = [1.0, 2.0]\n',
     "no field 'gama0_ratio' to sweep (did you mean 'gamma0_ratio'?); its fields: "),
    ('experiment = "simulate"\nsigmaw = 0.1\n[sweep]\nseeds = 2\n',
     "unknown key 'sigmaw' for SimulateConfig (did you mean 'sigma_w'?); valid keys: "),
    ('experiment = "simulate"\n[sweep]\nseed = 2\n',
     "unknown key 'seed' in [sweep] (did you mean 'seeds'?); valid keys: "),
])
def test_a_misspelt_key_gets_did_you_mean(tmp_path: Path, text: str, hint: str) -> None:
    with pytest.raises(ValueError) as err:
        load_sweep(_write(tmp_path, text))
    assert hint in str(err.value) and "line " in str(err.value)


def test_did_you_mean_only_when_a_name_is_close(tmp_path: Path) -> None:
    from specdyn.runs import get

    # case and - / _ do not count
    with pytest.raises(ValueError, match=r"unknown experiment 'Regime_Map' \(did you mean "
                                         r"'regime-map'\?\)"):
        get("Regime_Map")
    with pytest.raises(ValueError) as err:
        load_run(_write(tmp_path, 'experiment = "simulate"\nmomentum = 0.9\n'))
    assert "unknown key 'momentum'" in str(err.value) and "did you mean" not in str(err.value)
    with pytest.raises(ValueError, match=r"unknown experiment 'fig33' \(did you mean 'fig3'\?\)"):
        get("fig33")
