"""``specdyn reproduce``: counter, closing claims table, results on its folder; and the
claims of every quick experiment, checked on the data each one writes."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from specdyn import io
from specdyn._threads import THREAD_ENV
from specdyn.cli import main
from specdyn.cli.reproduce import format_summary
from specdyn.runs import builtin_names, get, recheck_claims, run_experiment
from specdyn.runs.claims import Claim, within


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
    assert main(["reproduce", "fig5", "fig6", "--out", str(out), "--threads", "1"]) == 0
    text = capsys.readouterr().out
    assert "[1/2] fig5" in text and "[2/2] fig6" in text and "elapsed" in text
    assert "1 thread(s)" in text
    summary = text[text.index("experiment "):]
    # fig6: 10 of 11 held, the Fig. 6 setting's 3alpha + beta plateau NOT HELD (disputed)
    assert "fig5" in summary and "2/2" in summary and "10/11" in summary
    assert "Region III plateau" in summary and "NOT HELD (disputed)" in summary
    df = pd.read_parquet(out / "claims.parquet")
    assert set(df["experiment"]) == {"fig5", "fig6"}
    assert (df["held"] | (df["disputed"] != "")).all()
    rec = io.read_json(out / "claims.json")
    assert [r["experiment"] for r in rec["experiments"]] == ["fig5", "fig6"]

    # results on the reproduce folder: one row per experiment with its claims
    assert main(["results", str(out)]) == 0
    text = capsys.readouterr().out
    assert "2 runs (2 finished)" in text
    rows = [ln for ln in text.splitlines() if ln.strip().startswith(("fig5", "fig6"))]
    assert len(rows) == 2 and "2/2" in rows[0] and "10/11" in rows[1]
    # ... and on one experiment folder: nested settings one per line, never one wide line
    assert main(["results", str(out / "fig6")]) == 0
    text = capsys.readouterr().out
    assert "summary:" in text and "  setting:" in text and "claims:" in text
    assert max(len(ln) for ln in text.splitlines()) < 200


def test_a_claim_not_held_is_shown(tmp_path: Path) -> None:
    rows = [{"experiment": "x", "status": "finished", "wall_time_s": 3.0, "claims": [
        {"name": "slope", "expected": "in [-1.2, -0.8]", "measured": -0.5, "held": False,
         "full_only": False, "note": "", "source": "own"},
        {"name": "count varies", "expected": "in [2, inf]", "measured": 1.0, "held": False,
         "full_only": True, "note": "", "source": "abstract 2"},
        {"name": "final slope", "expected": "in [1.9, 2.1]", "measured": 1.68, "held": False,
         "full_only": False, "note": "", "source": "core Sec. 3.3",
         "disputed": "c1 != 1 for ReLU"}]}]
    text = format_summary(rows)
    assert "0/3" in text
    assert "measured       -0.5" in text and "NOT HELD" in text
    assert "NOT HELD (quick size)" in text and "NOT HELD (disputed)" in text
    assert "[core Sec. 3.3]" in text and "expected at --full" not in text


def test_claim_needs_a_source_and_nan_is_never_held() -> None:
    with pytest.raises(ValueError, match="source"):
        Claim("x", "in [0, 1]", 0.5, True, source=" ")
    with pytest.raises(ValueError, match="non-finite"):
        Claim("x", "in [0, 1]", float("nan"), True, source="own")
    c = within("x", float("nan"), 0.0, 1.0, source="own", note="why")
    assert not c.held and "nan" in c.note and "why" in c.note
    assert c.to_dict()["measured"] is None
    assert within("x", 1.0, 0.0, 1.0, source="own").held


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
def test_quick_experiment_claims_hold(tmp_path: Path, name: str) -> None:
    """Every claim of every quick default holds on its own output, except those marked
    ``full_only`` (not expected at the quick size) or ``disputed`` (a seed claim the
    project does not expect to hold), which must say why; every claim names its source."""
    res = run_experiment(name, tmp_path)
    assert res.claims, f"{name} declares no claims"
    full = _full_record().get(name, {"status": "not run yet", "claims": []})
    full_held = {c["name"]: c["held"] for c in full["claims"]}
    for c in res.claims:
        assert c.source.strip(), c
        if c.disputed:
            continue
        if c.full_only:
            assert c.note, c
            # "not expected at the quick size" only where the --full run showed it held,
            # or where that run has not been made (the record says why)
            assert full_held.get(c.name, full["status"] != "finished"), (name, c.name, full)
            continue
        assert c.held, (name, c)
    rec = io.read_json(tmp_path / name / "record.json")
    assert len(rec["claims"]) == len(res.claims)
    # the claims are a function of the written folder: checked again, the same claims
    assert ([c.to_dict() for c in recheck_claims(tmp_path / name)]
            == [c.to_dict() for c in res.claims])
    # docs/claims.md has a row for every claim, with the same source and tolerance
    rows = _doc_rows(name)
    for c in res.claims:
        assert (c.name, c.source, c.expected) in rows, (
            f"docs/claims.md lacks {c.name!r} ({c.source}, {c.expected}) of {name}: "
            "regenerate it with scripts/claims_doc.py")
    assert len(rows) == len(res.claims), (name, sorted(rows))


ROOT = Path(__file__).resolve().parents[2]


def _full_record() -> dict:
    return io.read_json(ROOT / "benchmarks" / "full_claims.json")


def _doc_rows(name: str) -> set[tuple[str, str, str]]:
    """(claim, source, tolerance) of every row of ``## name`` in docs/claims.md."""
    text = (ROOT / "docs" / "claims.md").read_text()
    section = text.split(f"\n## {name}\n", 1)[1].split("\n## ", 1)[0]
    rows = set()
    for line in section.splitlines():
        if line.startswith("| ") and not line.startswith(("| claim |", "|---")):
            cells = [x.strip().replace("\\|", "|")
                     for x in re.split(r"(?<!\\)\|", line)[1:-1]]
            rows.add((cells[0], cells[1], cells[2]))
    return rows
