"""``specdyn reproduce``: counter, closing claims table, results on its folder; and the
claims of every quick experiment, checked on the data each one writes."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from quick_runs import QuickRuns

from specdyn import io
from specdyn._threads import THREAD_ENV
from specdyn.cli import main
from specdyn.cli.reproduce import format_summary
from specdyn.runs import builtin_names, get, recheck_claims, run_experiment
from specdyn.runs.claims import Claim, claim_key, definition, within


@pytest.fixture()
def one_thread(monkeypatch: pytest.MonkeyPatch):
    """Run reproduce with --threads 1 without leaking its thread settings into other tests."""
    import torch

    for name in (*THREAD_ENV, "OMP_WAIT_POLICY"):
        monkeypatch.setenv(name, "1" if name != "OMP_WAIT_POLICY" else "PASSIVE")
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


def test_reproduce_counts_and_ends_with_the_claims_table(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], one_thread: None) -> None:
    out = tmp_path / "o"
    assert main(["reproduce", "fig3", "fig5", "--out", str(out), "--threads", "1",
                 "--jobs", "1"]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    # one line per experiment (a log: no "running" line, no carriage return), in the given order
    assert [ln.split()[:2] for ln in lines if ln.startswith("[")] == [
        ["[specdyn]", "2"], ["[1/2]", "fig3"], ["[2/2]", "fig5"], ["[specdyn]", "2"]]
    assert "\r" not in text and "1 thread(s)" in text
    counts = dict(zip(("fig3", "fig5"), (lines[1], lines[2]), strict=True))
    assert counts["fig3"].endswith(" held, 2 not held as expected")
    assert counts["fig5"].endswith(" held") and "not held" not in counts["fig5"]
    # fig3: the two claims disputed by the theory at the premise, each with its reason
    i = lines.index(next(ln for ln in lines if ln.startswith("Not held, as expected (2")))
    assert lines[i + 1].startswith("  fig3: (a) where l << 1, u >> 1")
    assert lines[i + 2].startswith("      disputed: ")
    assert "Region I plateau" not in text  # a held claim: only with --verbose
    df = pd.read_parquet(out / "claims.parquet")
    assert set(df["experiment"]) == {"fig3", "fig5"}
    assert (df["held"] | (df["disputed"] != "")).all()
    rec = io.read_json(out / "claims.json")
    assert [r["experiment"] for r in rec["experiments"]] == ["fig3", "fig5"]
    held5 = re.search(r"  (\d+) held$", counts["fig5"])
    assert held5 is not None and int(held5.group(1)) >= 4

    # --verbose: every claim, held ones included, and each experiment's files
    assert main(["reproduce", "fig3", "--out", str(out), "--threads", "1", "--verbose"]) == 0
    text = capsys.readouterr().out
    assert "Region I plateau" in text and "NOT HELD (disputed)" in text
    assert "fig3.png" in text and "experiment " in text

    # results on the reproduce folder: one row per experiment with its claims
    assert main(["results", str(out)]) == 0
    text = capsys.readouterr().out
    assert "2 runs (2 finished)" in text
    rows = [ln for ln in text.splitlines() if ln.strip().startswith(("fig3", "fig5"))]
    assert len(rows) == 2 and "2 not held as expected" in rows[0]
    assert f"{held5.group(1)} held" in rows[1] and "not held" not in rows[1]
    # ... and on one experiment folder: nested settings one per line, never one wide line
    assert main(["results", str(out / "fig5")]) == 0
    text = capsys.readouterr().out
    assert "summary:" in text and "  setting:" in text and "claims:" in text
    assert max(len(ln) for ln in text.splitlines()) < 200


def _shown_rows() -> list[dict[str, Any]]:
    return [{"experiment": "x", "status": "finished", "wall_time_s": 3.0, "claims": [
        {"name": "slope", "expected": "in [-1.2, -0.8]", "measured": -0.5, "held": False,
         "full_only": False, "note": "", "source": "own"},
        {"name": "count varies", "expected": "in [2, inf]", "measured": 1.0, "held": False,
         "full_only": True, "note": "one outlier at this width", "source": "abstract 2"},
        {"name": "final slope", "expected": "in [1.9, 2.1]", "measured": 1.68, "held": False,
         "full_only": False, "source": "core Sec. 3.3",
         "disputed": "c1 != 1 for ReLU", "revised": "abc1234: 0.2 -> 0.35, after a miss",
         "revised_how": "looser"},
        {"name": "other slope", "expected": "in [1.9, 2.1]", "measured": 1.6, "held": False,
         "full_only": False, "source": "core Sec. 3.3", "disputed": "c1 != 1 for ReLU"},
        {"name": "identity", "expected": "in [0, 0]", "measured": 0.0, "held": True,
         "source": "own", "sanity": True}]}]


def test_a_claim_not_held_is_shown() -> None:
    rows = _shown_rows()
    text = format_summary(rows, width=200)
    lines = text.splitlines()
    # a FAILED claim in full: numbers, source, why it was expected
    assert "x: slope: measured -0.5, expected in [-1.2, -0.8] [own]" in text
    assert "FAILED: expected to hold" in text
    # those not held as expected: one line each, their reason once (two share one)
    assert "  x: count varies" in lines and "      quick size: one outlier at this width" in lines
    assert "  x: final slope (revised)" in lines and "  x: other slope" in lines
    assert text.count("disputed: c1 != 1 for ReLU") == 1
    # the revision is project history: marked, never printed
    assert "abc1234" not in text and "0.2 -> 0.35" not in text
    assert "held" not in " ".join(ln for ln in lines if ln.startswith("  x: identity"))
    assert lines[-2] == ("claims: 0 held; 3 not held as expected (2 disputed, "
                         "1 quick size); 1 FAILED")
    assert lines[-1] == "sanity checks (not counted as claims): 1 passed (listed with --verbose)"
    # at --full a full_only claim is expected to hold: its miss is a failure
    assert "2 FAILED" in format_summary(rows, full=True, width=200)
    # --verbose: every claim with its numbers, and every sanity check
    verbose = format_summary(rows, width=200, verbose=True)
    assert "NOT HELD (quick size)" in verbose and "NOT HELD (disputed) (revised)" in verbose
    assert "count varies: measured 1, expected in [2, inf] [abstract 2]" in verbose
    assert "sanity ok" in verbose and "identity: measured 0, expected in [0, 0]" in verbose
    assert "; 1 FAILED; 1 revised after their number was seen (1 looser)" in verbose
    assert "abc1234" not in verbose


def test_a_failed_sanity_check_is_failed_and_shown() -> None:
    rows = _shown_rows()
    rows[0]["claims"][-1] = {**rows[0]["claims"][-1], "held": False, "measured": 1.0}
    text = format_summary(rows, width=200)
    assert "x: identity: measured 1, expected in [0, 0] [own]" in text
    assert "FAILED: a sanity check" in text and "0 passed, 1 FAILED" in text
    assert "; 2 FAILED" in text


def test_the_claims_table_fits_a_narrow_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    long = "a reason long enough to need several lines at eighty columns, " * 4
    rows = [{"experiment": "finite-size-theory", "status": "finished", "wall_time_s": 90.0,
             "claims": [
                 {"name": "tanh: effective theory breaks down beyond the validity ratio " * 2,
                  "expected": "in [0.1, inf]", "measured": None, "held": False,
                  "full_only": True, "note": long, "source": "own (notes [D3])",
                  "revised": long},
                 {"name": "mode sequence", "expected": "4 -> 2 -> 1",
                  "measured": float("nan"), "held": False, "disputed": long,
                  "source": "core Eq. (32)"},
                 {"name": "a slope", "expected": "in [0, 1]", "measured": float("nan"),
                  "held": False, "note": long, "source": "own"}]},
            {"experiment": "fig5", "status": "failed", "wall_time_s": 1.0, "claims": []}]
    monkeypatch.setenv("COLUMNS", "80")
    for verbose in (False, True):
        text = format_summary(rows, verbose=verbose)
        assert max(len(ln) for ln in text.splitlines()) <= 80
        # a missing number says why, never a bare "nan" or "-"
        assert "measured not finite" in text
        assert not re.search(r"\bnan\b|measured -", text)
        assert "crashed" in text
    # one line for a claim not held as expected, cut where it is too long
    short = format_summary(rows).splitlines()
    expected = short[short.index(next(ln for ln in short if ln.startswith("Not held"))):]
    assert sum(ln.startswith("  finite-size-theory: ") for ln in expected) == 2
    assert any(ln.endswith("...") for ln in expected)


@pytest.fixture()
def probe_experiment(monkeypatch: pytest.MonkeyPatch):
    """A throwaway experiment ``claims-probe`` whose claims are what the test sets."""
    from specdyn.runs import registry

    @dataclass(frozen=True)
    class ProbeConfig:
        seed: int = 0

    made: list[Claim] = []

    def run(cfg: ProbeConfig, out: Path) -> registry.ExperimentResult:
        return registry.ExperimentResult("claims-probe", out)

    registry.names()  # load the built-in experiments first
    monkeypatch.setitem(registry._REGISTRY, "claims-probe", registry.Experiment(
        "claims-probe", "test probe", ProbeConfig, run, full=ProbeConfig,
        claims=lambda cfg, folder: list(made)))
    return made


def test_a_failed_claim_exits_1_with_its_reason_and_the_total(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], probe_experiment: list[Claim],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    probe_experiment += [
        within("held one", 0.5, 0, 1, source="own"),
        within("disputed one", 2.0, 0, 1, source="core Sec. 3.3",
               disputed="the seed's constant assumes a linear activation"),
        within("quick one", 2.0, 0, 1, source="own", full_only=True,
               note="needs N >= 4096")]
    args = ["reproduce", "claims-probe", "--out", str(tmp_path / "o"), "--threads", "1"]
    assert main(args) == 0  # not held, but as expected: exit 0 with the reasons shown
    text = " ".join(capsys.readouterr().out.split())  # the lines are wrapped at 80
    assert "disputed: the seed's constant assumes a linear activation" in text
    assert "quick size: needs N >= 4096" in text
    assert "claims: 1 held; 2 not held as expected (1 disputed, 1 quick size); 0 FAILED" in text

    probe_experiment.append(within("expected one", 3.0, 0, 1, source="own",
                                   note="the slope of the fit"))
    assert main(args) == 1
    out = capsys.readouterr().out
    summary = out[out.index("1 held, 2 not held as expected, 1 FAILED"):
                  out.rindex("[specdyn] 1 experiment(s) in")]
    assert max(len(ln) for ln in summary.splitlines()) <= 80  # the table; paths may be longer
    assert "1 held, 2 not held as expected, 1 FAILED" in out
    text = " ".join(out.split())
    assert "FAILED: expected to hold; the slope of the fit" in text
    assert "; 1 FAILED" in text and "exit status 1: 1 claim(s) expected to hold FAILED" in text
    df = pd.read_parquet(tmp_path / "o" / "claims.parquet")
    assert list(df["verdict"]) == ["held", "disputed", "quick size", "FAILED"]
    # at --full the full_only claim is expected to hold too
    probe_experiment.pop()
    assert main([*args, "--full"]) == 1
    assert "; 1 FAILED" in capsys.readouterr().out


def test_run_shows_the_claims_as_reproduce_does(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str],
                                                probe_experiment: list[Claim],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """`specdyn run my.toml` (the README's other way to run an edited config) printed the
    summary but not one claim."""
    monkeypatch.setenv("COLUMNS", "80")
    probe_experiment += [within("held one", 0.5, 0, 1, source="own"),
                         within("expected one", 3.0, 0, 1, source="own",
                                note="the slope of the fit")]
    cfg = tmp_path / "probe.toml"
    cfg.write_text('experiment = "claims-probe"\n')
    assert main(["run", str(cfg), "--out", str(tmp_path / "o")]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "claims: 1 held, 1 FAILED:" in text
    assert "held held one: measured 0.5, expected in [0, 1] [own]" in text
    assert "FAILED: expected to hold; the slope of the fit" in text


def test_a_crash_still_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                               probe_experiment: list[Claim],
                               monkeypatch: pytest.MonkeyPatch) -> None:
    from specdyn.runs import registry

    def boom(cfg: object, out: Path) -> registry.ExperimentResult:
        raise RuntimeError("probe crash")

    monkeypatch.setitem(registry._REGISTRY, "claims-probe", dataclasses.replace(
        registry._REGISTRY["claims-probe"], run=boom))
    assert main(["reproduce", "claims-probe", "--out", str(tmp_path / "o"),
                 "--threads", "1"]) == 1
    text = capsys.readouterr().out
    assert "FAILED: RuntimeError: probe crash" in text and "1 experiment(s) crashed" in text
    assert "crashed (no claims checked): claims-probe" in text


def test_claim_needs_a_source_and_nan_is_never_held() -> None:
    with pytest.raises(ValueError, match="source"):
        Claim("x", "in [0, 1]", 0.5, True, source=" ")
    with pytest.raises(ValueError, match="non-finite"):
        Claim("x", "in [0, 1]", float("nan"), True, source="own")
    c = within("x", float("nan"), 0.0, 1.0, source="own", note="why")
    assert not c.held and "nan" in c.note and "why" in c.note
    assert c.to_dict()["measured"] is None
    assert within("x", 1.0, 0.0, 1.0, source="own").held


def test_rank_correlation_is_scipys_spearman_bit_for_bit() -> None:
    """The claims' Spearman (pandas ranks, no scipy.stats import) against scipy's, ties
    included; NaN where it means nothing."""
    from scipy.stats import spearmanr

    from specdyn.runs.claims import rank_correlation

    rng = np.random.default_rng(3)
    for n in (3, 4, 7, 20, 101):
        for ties in (False, True):
            x = rng.standard_normal(n)
            y = x + rng.standard_normal(n)
            if ties:
                x, y = np.round(x), np.round(2 * y) / 2
            if np.ptp(x) == 0 or np.ptp(y) == 0:
                continue
            assert rank_correlation(x, y) == float(spearmanr(x, y).statistic)
    assert rank_correlation([1, 2, 3], [3, 2, 1]) == -1.0
    assert np.isnan(rank_correlation([1, 2], [1, 2]))
    assert np.isnan(rank_correlation([1, 1, 1], [1, 2, 3]))
    assert np.isnan(rank_correlation([1, np.nan, 3], [1, 2, 3]))


def test_bad_name_and_empty_folder_are_one_line_errors(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reproduce", "nosuch", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "nosuch" in err
    assert all(n in err for n in builtin_names())
    assert not (tmp_path / "o").exists()
    (tmp_path / "empty").mkdir()
    assert main(["results", str(tmp_path / "empty")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "expected" in err and "record.json" in err


def test_every_experiment_computes_its_claims_from_its_folder() -> None:
    assert [n for n in builtin_names() if get(n).claims is None] == []


@pytest.mark.slow
@pytest.mark.parametrize("name", builtin_names())
def test_quick_experiment_claims_hold(quick_run: QuickRuns, name: str) -> None:
    """Every claim of every quick default holds on its own output, except those marked
    ``full_only`` (not expected at the quick size) or ``disputed`` (a seed claim the
    project does not expect to hold), which must say why; every claim names its source.
    The run is the session's one quick run of ``name`` (``conftest.py``)."""
    folder = quick_run(name).folder
    # the claims are a function of the written folder: checked again, the same claims as
    # the run computed and recorded
    claims = recheck_claims(folder)
    assert claims, f"{name} declares no claims"
    rec = io.read_json(folder / "record.json")
    assert rec["claims"] == [c.to_dict() for c in claims]
    full = _full_record().get(name, {"status": "not run yet", "claims": []})
    full_held = {claim_key(c): c["held"] for c in full["claims"]}
    for c in claims:
        assert c.source.strip(), c
        # a claim changed after its number was seen says which way (docs/claims.md counts)
        assert not c.revised or c.revised_how, (name, c.name, "revised without revised_how")
        if c.disputed:
            continue
        if c.full_only:
            assert c.note, c
            # "not expected at the quick size" only where the --full run showed it held,
            # or where that run has not been made (the record says why), or where the
            # record holds no value of today's definition and NOT_RECHECKED says why
            if _full_value_current(c, full) or name not in _not_rechecked():
                assert full_held.get(c.key, full["status"] != "finished"), (name, c.name, full)
            continue
        assert c.held, (name, c)
    _assert_full_record_current(name, claims, full)
    # docs/claims.md has a row for every claim, with the same source and tolerance
    rows = _doc_rows(name)
    for c in claims:
        assert (c.name, c.source, c.expected) in rows, (
            f"docs/claims.md lacks {c.name!r} ({c.source}, {c.expected}) of {name}: "
            "regenerate it with scripts/claims_doc.py")
    assert len(rows) == len(claims), (name, sorted(rows))


ROOT = Path(__file__).resolve().parents[2]


def _not_rechecked() -> dict[str, str]:
    """``full_claims.NOT_RECHECKED``: the --full entries today's code has not checked, and why."""
    return dict(_script("benchmarks/full_claims.py").NOT_RECHECKED)


def _full_value_current(c: Claim, full: dict) -> bool:
    """Whether the --full record holds a value of ``c`` under today's definition."""
    rec = {claim_key(r): r for r in full["claims"]}.get(c.key)
    return rec is not None and definition(rec) == definition(c)


def _assert_full_record_current(name: str, claims: list[Claim], full: dict) -> None:
    """The --full record of ``name`` against today's claims.

    Every claim has a --full value (found by its stable key) or a stated reason (the
    experiment not run at --full here, or an entry the current code has not checked:
    ``NOT_RECHECKED``); a claim whose tolerance or reading differs from the record's copy
    (:func:`~specdyn.runs.claims.definition`) says so in a ``revised`` the record's copy
    lacks, so that no change after a run goes unmarked; and the record is then checked
    again by today's code (``full_claims.py --from``), unless ``NOT_RECHECKED`` says why not.
    """
    fc = _script("benchmarks/full_claims.py")
    why = fc.NOT_RECHECKED.get(name) or fc.NOT_RUN.get(name) or (
        fc.GPU_ONLY.get(name) if full["status"] != "finished" else None)
    copies = {claim_key(c): c for c in full["claims"]} if full["status"] == "finished" else {}
    for c in claims:
        rec = copies.get(c.key)
        if rec is None:
            assert why, (f"{name} / {c.name!r} (key {c.key!r}) has no --full value and no "
                         "stated reason: record it (benchmarks/full_claims.py --from) or say "
                         "why in full_claims.NOT_RECHECKED")
            continue
        if definition(rec) != definition(c):
            assert c.revised and c.revised != (rec.get("revised") or ""), (
                f"{name} / {c.name!r} changed after its --full run ({definition(rec)} -> "
                f"{definition(c)}) without a revision mark: say what changed and why in "
                "revised")
            assert why, (f"{name} / {c.name!r}: the --full record holds an earlier definition "
                         "(checked by older claims code): check it again with "
                         "benchmarks/full_claims.py --from, or say why not in NOT_RECHECKED")


#: Commit hashes (7+ hex digits, at least one a letter and one a digit) and issue numbers:
#: history, which the ``revised`` text keeps (docs/claims.md lists it); the texts the console
#: prints of every claim (its name, tolerance, note and dispute) carry none.
_HISTORY = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b"
                      r"|\bissue\s*#?\d+", re.IGNORECASE)


@pytest.mark.slow
@pytest.mark.parametrize("name", builtin_names())
def test_claim_texts_carry_no_commits_or_issue_numbers(quick_run: QuickRuns,
                                                       name: str) -> None:
    for c in recheck_claims(quick_run(name).folder):
        for field in ("name", "expected", "note", "disputed"):
            hit = _HISTORY.search(str(getattr(c, field)))
            assert hit is None, (name, c.name, field, hit.group(0) if hit else None)


def test_a_changed_claim_is_told_from_the_record() -> None:
    """The definition the record test compares: the tolerance (its rule where it depends on
    the size), sanity and disputed; not the measured value, the note or the source's
    wording."""
    base = within("x", 0.5, 0.0, 1.0, source="own", note="a", key="k").to_dict()
    assert definition(base) == definition(within("x", 0.7, 0.0, 1.0, source="own",
                                                 note="b").to_dict())
    assert definition(base) != definition(within("x", 0.5, 0.0, 2.0, source="own"))
    assert definition(base) != definition(within("x", 0.5, 0.0, 1.0, source="own",
                                                 sanity=True))
    sized = [within("x", 0.5, 0.0, 1.0 / n, source="own", rule="in [0, 1/N]") for n in (2, 4)]
    assert definition(sized[0]) == definition(sized[1])  # the rule, not the number
    old = {k: v for k, v in base.items() if k not in ("key", "rule", "sanity")}
    assert definition(old) == definition(base)  # a record written before the keys existed


def _full_record() -> dict:
    return io.read_json(ROOT / "benchmarks" / "full_claims.json")


def _doc_rows(name: str) -> set[tuple[str, str, str]]:
    """(claim, source, tolerance) of every row of ``## name`` in docs/claims.md."""
    text = (ROOT / "docs" / "claims.md").read_text()
    section = text.split(f"\n## {name}\n", 1)[1].split("\n## ", 1)[0]
    rows = set()
    for line in section.splitlines():
        if line.startswith("| ") and not line.startswith(("| claim |", "|---")):
            cells = [x.strip().replace("\\|", "|").replace("\\*", "*")
                     for x in re.split(r"(?<!\\)\|", line)[1:-1]]
            rows.add((cells[0], cells[1], cells[2]))
    return rows


def test_no_claim_cites_the_project_notes() -> None:
    # the seeds are the core paper and the related works' abstracts; the project's notes on
    # them (docs/related-works.md) are its own reading, so a claim resting on them is `own`
    # (the quick-claims test above ties every
    # row of docs/claims.md to the code's claim, source included)
    for name in builtin_names():
        for claim, source, _ in _doc_rows(name):
            assert "notes" not in source.lower(), (name, claim, source)
            assert source, (name, claim)


def _script(path: str):
    """A script of the repository (scripts/, benchmarks/) as a module."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(Path(path).stem, ROOT / path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _claim(name: str, measured: object, held: bool, **kw: object) -> dict:
    return {"name": name, "expected": "in [0, 1]", "measured": measured, "held": held,
            "source": "own", "note": "", "full_only": False, "disputed": "", "revised": "",
            **kw}


def test_claims_doc_lists_revisions_flags_quick_size_misses_and_variants() -> None:
    doc = _script("scripts/claims_doc.py")
    quick = {"full": False, "experiments": [{"experiment": "fig4", "claims": [
        _claim("a", 0.5, True, revised="abc1234: 0.2 -> 0.35, after a miss",
               revised_how="looser", aspect="size"),
        _claim("b", None, False, full_only=True, note="needs N = 8192"),
        _claim("c", 2.0, False, full_only=True, note="needs N = 8192"),
        _claim("d", 2.0, False, disputed="c1 != 1")]}]}
    full = {"fig4": {"status": "finished", "wall_time_s": 83.0, "device": "one GPU, torch x",
                     "data_commit": "49cb59a5238f", "claims_commit": "6a7be2ce",
                     "claims": [_claim("a", 0.4, True), _claim("b", 1.5, False,
                                                               full_only=True),
                                _claim("c", 0.9, True, full_only=True),
                                _claim("d", 1.7, False, disputed="c1 != 1")]},
            "fig4 [activation=tanh]": {"status": "finished", "wall_time_s": 93.0,
                                       "claims": [_claim("a", 3.0, False)]}}
    page = doc.render(quick, full)
    assert doc.flagged(quick, full) == [("fig4", "b", "1.5, FAILED")]
    rows = {ln.split(" | ")[0][2:]: ln for ln in page.splitlines() if ln.startswith("| ")}
    assert "FLAG" in rows["b"] and "FLAG" not in rows["c"] and "FLAG" not in rows["d"]
    assert "not finite, NOT HELD (quick size)" in rows["b"]
    assert "0.9, held" in rows["c"]  # at --full a quick-size claim is expected to hold
    assert "0.5, held (revised)" in rows["a"] and "[activation=tanh] 3, FAILED" in rows["a"]
    assert "[activation=tanh] no --full value: claim added after the --full run" in rows["b"]
    revisions = page.split("## Revisions", 1)[1]
    assert "| fig4 | a | looser | abc1234: 0.2 -> 0.35, after a miss |" in revisions
    # the page says what is true of the revisions, and counts the aspects
    assert ("Of the 4 claims (sanity checks apart), 3 stand as first written; **1 were "
            "revised after their number was seen**: 1 made looser, 0 tighter, 0 restated"
            in page)
    assert "(1 size, 0 prefactor, 0 clock, 0 oracle)" in page
    assert "--full: on one GPU, torch x, 1.4 min, data commit 49cb59a" in page
    # the seed statements no claim checks are listed with their reason, before the revisions
    unchecked = page.split("## Not checked", 1)[1].split("## Revisions", 1)[0]
    assert all(f"| {doc.md_cell(st)} | {doc.md_cell(src)} | {doc.md_cell(why)} |" in unchecked
               for st, src, why, _ in doc.NOT_CHECKED) and doc.NOT_CHECKED
    assert not re.search(r"\bnan\b", page)


def test_claims_doc_matches_by_key_marks_old_definitions_and_lists_wrong_models() -> None:
    doc = _script("scripts/claims_doc.py")
    quick = {"full": False, "experiments": [{"experiment": "fig5", "claims": [
        _claim("t = 1e+07: exponent", 2.0, True, key="last time: exponent"),
        _claim("band", 0.5, True, expected="in [0, 0.5]", revised="x: 1 -> 0.5, why"),
        _claim("new", 0.1, True)]}]}
    full = {"fig5": {"status": "finished", "wall_time_s": 6.0, "claims": [
        _claim("t = 1e+08: exponent", 1.99, True, key="last time: exponent"),
        _claim("band", 0.7, True)]}}  # checked when the band was [0, 1]
    wrong = [{"experiment": "fig5", "model": "noise", "what": "noise before the last time",
              "caught": [{"name": "band", "real": 0.5, "wrong": 2.0,
                          "expected": "in [0, 0.5]"}]},
             {"experiment": "fig5", "model": "x1.01", "what": "1 % high", "caught": [],
              "kind": "fluctuation-size"},
             {"experiment": "fig5", "model": "", "what": "no noise here", "kind": "temperature",
              "caught": "n/a"},
             {"experiment": "fig6", "model": "", "what": "", "caught": None}]
    page = doc.render(quick, full, wrong, {"fig5": "not rechecked: why"})
    rows = {ln.split(" | ")[0][2:]: ln for ln in page.splitlines() if ln.startswith("| ")}
    assert "1.99, held" in rows["t = 1e+07: exponent"]  # the record's name differs, its key not
    # the --full record's own tolerance is shown where it differs from the quick one's
    assert ("0.7, held; tolerance at --full in [0, 1] (recorded under an earlier definition)"
            in rows["band"])
    assert "tolerance at --full" not in rows["t = 1e+07: exponent"]
    assert "no --full value (not rechecked: why)" in rows["new"]
    assert "Not checked by the current claims code: not rechecked: why." in page
    table = page.split("## What each experiment would catch", 1)[1].split("## ", 1)[0]
    assert ("| fig5 | - | noise: noise before the last time | band: 0.5 -> 2 (in [0, 0.5]) |"
            in table)
    assert "| fig5 | fluctuation-size | x1.01: 1 % high | **NOT CAUGHT** |" in table
    assert "| fig5 | temperature | n/a: no noise here | |" in table
    assert "| fig6 | | **none registered** (or no quick folder) | |" in table
    assert "| clock | a run, or a theory, at another speed" in table
    fc = _script("benchmarks/full_claims.py")
    assert fc.stale_claims("fig5", quick["experiments"][0]["claims"], full) == ["band", "new"]


def test_the_record_names_the_commit_the_run_started_from(
        tmp_path: Path, probe_experiment: list[Claim], monkeypatch: pytest.MonkeyPatch) -> None:
    """A commit made while a run goes on is not the code it ran: the record keeps the first."""
    import subprocess

    from specdyn import provenance

    head = ["a" * 40]

    def rev_parse(cmd: list[str], **_kw: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(cmd, 0, stdout=head[0] + "\n", stderr="")

    def moves_head() -> list[Claim]:  # the probe's claims run inside the run
        head[0] = "b" * 40
        return []

    monkeypatch.setattr(provenance.subprocess, "run", rev_parse)
    provenance.git_commit.cache_clear()
    try:
        from specdyn.runs import registry

        exp = registry._REGISTRY["claims-probe"]
        monkeypatch.setitem(registry._REGISTRY, "claims-probe",
                            dataclasses.replace(exp, claims=lambda cfg, folder: moves_head()))
        run_experiment("claims-probe", tmp_path)
        assert head[0] == "b" * 40  # HEAD moved during the run ...
        record = io.read_json(tmp_path / "claims-probe" / "record.json")
        assert record["git_commit"] == "a" * 40  # ... the record names where it started
    finally:
        provenance.git_commit.cache_clear()


def test_full_claims_records_variants_device_and_commit(
        tmp_path: Path, probe_experiment: list[Claim]) -> None:
    fc = _script("benchmarks/full_claims.py")
    from specdyn.runs.config import config_to_dict

    cfg = config_to_dict(get("fig4").config(True))
    assert fc.variant_of("fig4", {**cfg, "device": "cuda"}) == {}  # where it ran: the same
    variant = fc.variant_of("fig4", {**cfg, "activation": "gelu"})
    assert variant == {"activation": [cfg["activation"], "gelu"]}
    assert fc.key_of("fig4", variant) == "fig4 [activation=gelu]"

    probe_experiment.append(within("x", 0.5, 0, 1, source="own"))
    run_experiment("claims-probe", tmp_path)
    made = io.read_json(tmp_path / "claims-probe" / "record.json")["git_commit"]
    entry = fc.recheck_one(tmp_path / "claims-probe", device="one GPU")
    assert entry["device"] == "one GPU" and entry["data_commit"] == made
    assert [c["name"] for c in entry["claims"]] == ["x"]
    if made:  # a checkout: a commit that contradicts the record is refused
        with pytest.raises(ValueError, match="data-commit"):
            fc.recheck_one(tmp_path / "claims-probe", data_commit="0000000")
    table = fc.markdown({"fig4 [activation=gelu]": {**entry, "claims": [
        _claim("q", None, False, full_only=True)]}})
    assert "| fig4 [activation=gelu] | q | own | in [0, 1] | not finite | FAILED | 0.0 min " \
           "| one GPU |" in table
    assert "| fig4 | (not run yet) |" in table


def test_the_full_record_names_machine_and_commit_of_every_run() -> None:
    record = _full_record()
    for key, e in record.items():
        if e["status"] == "finished":
            assert e.get("device") and e.get("claims_commit"), key
    # fig4 --full was run on a GPU, ReLU (its config) and two variants
    assert "H200" in record["fig4"]["device"]
    assert record["fig4"]["data_commit"].startswith("49cb59a")
    assert record["fig4 [activation=gelu]"]["variant"] == {"activation": ["relu", "gelu"]}


def test_a_run_that_did_not_finish_never_hides_a_finished_one() -> None:
    fc = _script("benchmarks/full_claims.py")
    done: dict[str, Any] = {"status": "finished", "date": "2026-12-04",
                            "claims": [_claim("a", 0.5, True)]}
    record: dict[str, dict[str, Any]] = {"fig4": dict(done)}
    assert not fc.store(record, "fig4", {"status": "timeout", "claims": []})
    assert record["fig4"]["status"] == "finished"
    assert record["fig4"]["last_attempt"]["status"] == "timeout"
    assert fc.store(record, "fig4", dict(done, date="2026-12-05"))
    assert record["fig4"]["date"] == "2026-12-05" and "last_attempt" not in record["fig4"]
    assert fc.store(record, "fig2", {"status": "timeout", "claims": []})
    # fig4 --full needs a GPU: not among the experiments a plain run starts here
    assert "fig4" in fc.GPU_ONLY and "fig4" not in fc.NOT_RUN


def test_sized_claim_is_two_sided() -> None:
    """A deviation of the predicted size holds; zero (a simulation equal to its theory) and
    a deviation off by more than the factor either way fail; no prediction, no verdict."""
    from specdyn.runs import sized

    def held(measured: float, predicted: float = 0.1) -> bool:
        return sized("dev", measured, predicted, 1.5, source="own",
                     predicted_by="finite-size theory").held

    assert held(0.1) and held(0.067) and held(0.149)
    assert not held(0.0) and not held(0.06) and not held(0.16) and not held(float("nan"))
    assert not held(0.1, predicted=0.0) and not held(0.1, predicted=float("nan"))
    c = sized("dev", 0.1, 0.0, 1.5, source="own", predicted_by="seeds")
    assert c.measured == 0.1 and c.aspect == "size"
    with pytest.raises(ValueError, match="factor"):
        sized("dev", 0.1, 0.1, 1.0, source="own", predicted_by="x")


def test_revised_how_and_aspect_are_validated() -> None:
    from specdyn.runs import Claim

    Claim("c", "in [0, 1]", 0.5, True, source="own", revised="abc: 1 -> 2",
          revised_how="looser", aspect="clock")
    with pytest.raises(ValueError, match="revised_how"):
        Claim("c", "in [0, 1]", 0.5, True, source="own", revised_how="looser")
    with pytest.raises(ValueError, match="revised_how"):
        Claim("c", "in [0, 1]", 0.5, True, source="own", revised="x", revised_how="easier")
    with pytest.raises(ValueError, match="aspect"):
        Claim("c", "in [0, 1]", 0.5, True, source="own", aspect="speed")


def test_seed_scan_parses_seeds_and_the_page_lists_what_failed_where() -> None:
    scan = _script("scripts/seed_scan.py")
    assert scan.seed_list("21") == [21]
    assert scan.seed_list("22-24,30") == [22, 23, 24, 30]
    for bad in ("0", "x", "3-", ""):
        with pytest.raises(ValueError, match="--seeds"):
            scan.seed_list(bad)
    claims = [{"name": "a", "held": False, "measured": 0.5, "expected": "in [0, 0.1]"},
              {"name": "b", "held": False, "sanity": True},
              {"name": "c", "held": False, "disputed": "why"},
              {"name": "d", "held": False, "full_only": True},
              {"name": "e", "held": True}]
    assert scan.expected_failures(claims) == [["a", 0.5, "in [0, 0.1]"]]
    assert scan.seeded(get("bbp-escape").config(False), 21).seed == 21
    assert scan.seeded(get("propagation-of-chaos").config(False), 21).seeds == (63, 64, 65)
    assert scan.seeded(get("fig3").config(False), 21) is None
    doc = _script("scripts/claims_doc.py")
    record = {"x": {"21": {"commit": "c", "failed": []},
                    "22": {"commit": "c", "failed": [["a", 0.5, "in [0, 0.1]"]]},
                    "23": {"commit": "c", "failed": []}},
              "y": {"21": {"commit": "c", "failed": []}}}
    page = "\n".join(doc.seed_scan_section(record))
    assert "| x | 21-23 | a | 1 of 3: 22 (0.5; in [0, 0.1]) |" in page
    assert "| y | 21 | every claim held | - |" in page
    assert doc.seed_scan_section({}) == []
