"""Every experiment's expected claims catch the plausible wrong answers it registers.

A constant or shuffled table is the first bar (``test_claims_mutation_all.py``); this is
the one a referee applies. Each experiment registers at least ``MIN_WRONG_MODELS``
:class:`~specdyn.runs.WrongModel` (a neighbouring equation, a scale error the size of a
real mistake, a transient at the wrong height, a shifted boundary, a network that never
learns...), each built from its own quick folder; fed to the claims
(:func:`specdyn.runs.wrong.judge`), each must fail at least one claim expected to hold
that held on the real run, and every claim its ``catches`` names. The claims that caught
each one are printed, with the measured value on the run and on the wrong model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from quick_runs import QuickRuns

from specdyn.runs import Claim, WrongModel, builtin_names, get, register
from specdyn.runs import wrong as wrongmod

#: Wrong models each experiment registers, at least.
MIN_WRONG_MODELS = 2


@pytest.mark.slow
@pytest.mark.parametrize("name", builtin_names())
def test_every_wrong_model_fails_an_expected_claim(
        tmp_path: Path, quick_run: QuickRuns, name: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    exp = get(name)
    assert len(exp.wrong_models) >= MIN_WRONG_MODELS, (
        f"{name} registers {len(exp.wrong_models)} wrong model(s), at least "
        f"{MIN_WRONG_MODELS} are needed: register(..., wrong_models=[WrongModel(...), ...])")
    verdicts = wrongmod.judge_all(quick_run(name).folder, scratch=tmp_path)
    assert verdicts and verdicts[0].judged, f"{name}: no expected claim held on the quick run"
    bad = []
    with capsys.disabled():
        print(f"\n{name}:")
        for v in verdicts:
            caught = v.caught
            print(f"  {v.model.name} ({v.model.what}): "
                  + ("; ".join(c.line() for c in caught) if caught else "NOT CAUGHT"))
            if not caught:
                bad.append(f"{name} / {v.model.name}: no expected claim fails on it")
            elif v.missed:
                bad.append(f"{name} / {v.model.name}: named in catches but held: {v.missed}")
    assert not bad, "wrong models the claims accept:\n  " + "\n  ".join(bad)


def test_judge_reports_the_claims_that_catch_a_wrong_model(tmp_path: Path) -> None:
    """The machinery on a toy experiment: a model that moves the number out of the band is
    caught by name, one that leaves it inside is not; sanity checks never catch."""
    from specdyn import io

    def claims(cfg: Any, folder: Path) -> list[Claim]:
        x = float(pd.read_parquet(folder / "t.parquet").x.mean())
        from specdyn.runs.claims import within
        return [within("mean x", x, 0.9, 1.1, source="own", key="mean-x"),
                within("finite", x, -1e300, 1e300, source="own", sanity=True)]

    def scale(f: float) -> WrongModel:
        return WrongModel(f"x{f}", f"x times {f}", wrongmod.table_edit(
            "t.parquet", lambda df: df.assign(x=df.x * f)), catches=("mean-x",))

    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Cfg:
        seed: int = 0

    name = "toy-wrong-model-test"
    from specdyn.runs import registry
    try:
        register(name, "toy", Cfg, claims=claims,
                 wrong_models=[scale(1.25), scale(1.01)])(lambda cfg, out: None)  # type: ignore
        folder = tmp_path / name
        folder.mkdir()
        pd.DataFrame({"x": [1.0, 1.0]}).to_parquet(folder / "t.parquet")
        io.write_json({"status": "finished", "config": {"experiment": name, "seed": 0}},
                      folder / "record.json")
        v_big, v_small = wrongmod.judge_all(folder, scratch=tmp_path)
        assert [c.key for c in v_big.caught] == ["mean-x"] and not v_big.missed
        assert v_big.caught[0].wrong == pytest.approx(1.25)
        assert v_small.caught == [] and v_small.missed == ["mean-x"]
        assert [c.key for c in v_big.judged] == ["mean-x"]  # the sanity check is not judged
    finally:
        registry._REGISTRY.pop(name, None)
    with pytest.raises(ValueError, match="named twice"):
        register("x", "x", Cfg, wrong_models=[scale(2.0), scale(2.0)])
    with pytest.raises(ValueError, match="what"):
        WrongModel("x", " ", lambda cfg, folder: None)


def test_table_edit_rewrites_each_named_table_and_only_those(tmp_path: Path) -> None:
    for name in ("a.parquet", "b.parquet", "c.parquet"):
        pd.DataFrame({"x": [1.0, 2.0]}).to_parquet(tmp_path / name)
    wrongmod.table_edit(("a.parquet", "b.parquet"), lambda df: df.assign(x=-df.x))(None, tmp_path)
    wrongmod.table_edit("c.parquet", lambda df: df.assign(x=df.x + 1))(None, tmp_path)
    got = {n: pd.read_parquet(tmp_path / n).x.tolist() for n in ("a.parquet", "b.parquet",
                                                                "c.parquet")}
    assert got == {"a.parquet": [-1.0, -2.0], "b.parquet": [-1.0, -2.0], "c.parquet": [2.0, 3.0]}
    with pytest.raises(TypeError, match="must return a DataFrame"):
        wrongmod.table_edit("a.parquet", lambda df: None)(None, tmp_path)


def _toy_claims_module() -> Any:
    """A module whose claims read a theory function by name, as an experiment's do."""
    import types

    mod = types.ModuleType("specdyn_toy_theory_claims")
    mod.theory = lambda x: 2.0 * x  # type: ignore[attr-defined]
    return mod


def test_patch_replaces_the_theory_only_while_the_wrong_model_is_judged(tmp_path: Path) -> None:
    """A convention error inside a theory function: the table is written by the wrong
    function and the claims read it through the same (patched) name, so a claim against
    that name holds, and only the claim against an independent evaluation catches it; the
    function is restored afterwards."""
    import sys
    from dataclasses import dataclass

    from specdyn import io
    from specdyn.runs import registry

    mod = _toy_claims_module()
    sys.modules[mod.__name__] = mod

    def claims(cfg: Any, folder: Path) -> list[Claim]:
        df = pd.read_parquet(folder / "t.parquet")
        from specdyn.runs.claims import within
        same = float((df.theory - mod.theory(df.x)).abs().max())
        oracle = float((df.theory - 2.0 * df.x).abs().max())  # the independent evaluation
        return [within("table = theory()", same, 0, 1e-12, source="own", key="same"),
                within("table = oracle", oracle, 0, 1e-12, source="own", key="oracle",
                       aspect="oracle")]

    def write_wrong(cfg: Any, folder: Path) -> None:
        df = pd.read_parquet(folder / "t.parquet")
        df.assign(theory=mod.theory(df.x)).to_parquet(folder / "t.parquet")

    @dataclass(frozen=True)
    class Cfg:
        seed: int = 0

    name = "toy-patched-wrong-model"
    wrong = WrongModel("factor 2 dropped", "theory() without its factor 2", write_wrong,
                       catches=("oracle",), kind="convention",
                       patch={f"{mod.__name__}.theory": lambda x: x})
    try:
        register(name, "toy", Cfg, claims=claims, wrong_models=[wrong],
                 wrong_na={"temperature": "no noise"})(lambda cfg, out: None)  # type: ignore
        folder = tmp_path / name
        folder.mkdir()
        x = pd.Series([1.0, 2.0, 3.0])
        pd.DataFrame({"x": x, "theory": 2.0 * x}).to_parquet(folder / "t.parquet")
        io.write_json({"status": "finished", "config": {"experiment": name, "seed": 0}},
                      folder / "record.json")
        (v,) = wrongmod.judge_all(folder, scratch=tmp_path)
        assert [c.key for c in v.caught] == ["oracle"] and not v.missed
        assert mod.theory(1.0) == 2.0  # restored after judging
        assert registry.get(name).wrong_na == {"temperature": "no noise"}
    finally:
        registry._REGISTRY.pop(name, None)
        sys.modules.pop(mod.__name__, None)


def test_wrong_kinds_and_not_applicable_are_validated() -> None:
    from dataclasses import dataclass

    from specdyn.runs import WRONG_KINDS

    @dataclass(frozen=True)
    class Cfg:
        seed: int = 0

    def noop(cfg: Any, folder: Path) -> None:
        return None

    assert {"is-theory", "fluctuation-size", "temperature", "clock", "convention",
            "attribution", "wrong-inputs"} == set(WRONG_KINDS)
    with pytest.raises(ValueError, match="kind 'typo'"):
        WrongModel("x", "x", noop, kind="typo")
    with pytest.raises(ValueError, match="wrong_na"):
        register("x", "x", Cfg, wrong_na={"typo": "why"})
    with pytest.raises(ValueError, match="wrong_na"):
        register("x", "x", Cfg, wrong_na={"clock": " "})
    with pytest.raises(ValueError, match="both registered and not applicable"):
        register("x", "x", Cfg, wrong_models=[WrongModel("c", "c", noop, kind="clock")],
                 wrong_na={"clock": "no time"})
