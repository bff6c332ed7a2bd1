"""What ``specdyn reproduce`` prints, as a person reads it: no project history, about 80
lines for every quick experiment, one plain line per experiment in a log, progress bars
only on a terminal.

Project history is found by :func:`specdyn.plot.check.history_mentions` (a commit hash:
7 or more hex digits with a digit and a letter; an issue number: "issue 30", "#30"),
which the figure check uses too. The console of a whole quick reproduce is built from
the session's shared quick runs (``quick_runs.py``, parameter ``all``) with the
functions ``specdyn reproduce`` prints with (:func:`~specdyn.cli.reproduce.header_line`,
``progress_line``, ``closing_text``), at 80 columns, the narrowest terminal (a log,
which has no width, is written at 100).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
from quick_runs import ALL, QuickRuns

from specdyn import io
from specdyn.cli.reproduce import closing_text, header_line, progress_line
from specdyn.plot.check import history_mentions as history
from specdyn.runs import builtin_names

#: The lines a quick reproduce of every experiment may print where every expected claim
#: holds, the issue's "about 80": 7 lines of frame (header, blank lines, list heading,
#: total, sanity count, where every claim is), one an experiment (18), two a claim not
#: held as expected (a shared reason once). 67 for the 22 of today, 83 for 30.
MAX_LINES = 85
FRAME_LINES = 7


def console(rows: list[dict[str, Any]], *, verbose: bool = False, width: int = 80) -> str:
    """What ``specdyn reproduce`` prints for ``rows`` into a log (no terminal)."""
    out = Path("specdyn-out")
    lines = [header_line(len(rows), out, full=False, threads=2)]
    lines += [progress_line(i, len(rows), r) for i, r in enumerate(rows, 1)]
    lines.append(closing_text(rows, out, wall=150.0, verbose=verbose, width=width))
    return "\n".join(lines)


def _quick_rows(quick_run: QuickRuns) -> list[dict[str, Any]]:
    rows = []
    for name in builtin_names():
        rec = io.read_json(quick_run(name).folder / "record.json")
        rows.append({"experiment": name, "status": rec["status"],
                     "wall_time_s": rec["wall_time_s"], "claims": rec["claims"]})
    return rows


def test_the_history_check_finds_hashes_and_issue_numbers() -> None:
    assert history("revised: b6f669e (issue 30): the exponent")  # both
    assert len(history("data 49cb59a5238f")) == 1 and len(history("see #30")) == 1
    assert len(history("Issues 12 and 13")) == 1
    # numbers, words and names a claim may hold are not history
    assert not history("measured 1.255e+07, expected in [0.95, 1.05] at k = 1000000; "
                       "decade, facade, 4096, beef, Eq. (32), fig3 (a), He2+He3")


@pytest.mark.slow
@pytest.mark.parametrize("name", [ALL])
def test_quick_console_names_no_commit_or_issue(quick_run: QuickRuns, name: str) -> None:
    """Every claim of every quick run, as the console prints it by default and with
    ``--verbose``: project history (commits, issues) stays in docs/claims.md."""
    rows = _quick_rows(quick_run)
    found = {f"{verbose=}": history(console(rows, verbose=verbose)) for verbose in (False, True)}
    assert not any(found.values()), found


@pytest.mark.slow
@pytest.mark.parametrize("name", [ALL])
def test_quick_console_fits_80_lines(quick_run: QuickRuns, name: str) -> None:
    rows = _quick_rows(quick_run)
    text = console(rows)
    lines = text.splitlines()
    assert "; 0 FAILED" in text, text  # a run where every expected claim holds
    from specdyn.runs.claims import verdict

    not_held = sum(verdict(c) in ("disputed", "quick size") for r in rows for c in r["claims"])
    assert len(lines) <= FRAME_LINES + len(rows) + 2 * not_held, f"{len(lines)} lines:\n{text}"
    assert len(lines) <= MAX_LINES, f"{len(lines)} lines:\n{text}"
    # 80 columns, but for the header and the last line, which name the output folder
    assert max(len(ln) for ln in lines[1:-1]) <= 80, text
    # one line per experiment, every not-held claim named, the total last but two
    assert sum(re.match(r"\[\s*\d+/\d+\] ", ln) is not None and " held" in ln
               for ln in lines) == len(rows)
    assert any(ln.startswith("claims: ") for ln in lines)


def test_progress_bars_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    from specdyn import _progress

    class Stream:
        def __init__(self, tty: bool) -> None:
            self.tty, self.text = tty, []

        def isatty(self) -> bool:
            return self.tty

        def write(self, s: str) -> int:
            self.text.append(s)
            return len(s)

        def flush(self) -> None:
            pass

    for tty in (False, True):
        stream = Stream(tty)
        monkeypatch.setattr(sys, "stderr", stream)
        assert list(_progress.progress(range(3), total=3, desc="probe")) == [0, 1, 2]
        drawn = "".join(stream.text)
        assert ("probe" in drawn) == tty, (tty, drawn)


def test_reproduce_in_a_log_prints_one_plain_line_per_experiment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``nohup specdyn reproduce ... > log 2>&1``: no carriage return, no bar, in either
    stream; the experiments' own bars (``fig2``'s Gram-engine steps) included."""
    import subprocess

    log = tmp_path / "log"
    env = {"OMP_NUM_THREADS": "1", "PATH": str(Path(sys.executable).parent)}
    with open(log, "w") as fh:
        res = subprocess.run([sys.executable, "-m", "specdyn", "reproduce", "fig5", "simulate",
                              "--out", str(tmp_path / "o"), "--threads", "1"],
                             stdout=fh, stderr=subprocess.STDOUT, env=env, timeout=300)
    text = log.read_text()
    assert res.returncode == 0, text
    assert "\r" not in text and "it/s" not in text, text
    lines = text.splitlines()
    assert [ln.split()[0] for ln in lines if ln.startswith("[") and " held" in ln] == [
        "[1/2]", "[2/2]"], text


def test_each_line_reads_held_and_not_held_as_expected_and_cut_reasons_say_where() -> None:
    """A newcomer took ``claims held 19/23`` for four failures: the line says what the
    four are; a reason cut for the width says where to read it whole."""
    from specdyn.cli.reproduce import CUT, not_held_lines, progress_line

    claims = [{"name": f"c{i}", "held": True} for i in range(3)] + [
        {"name": "d", "held": False, "disputed": "theory at the premise: " + "x " * 80},
        {"name": "s", "held": True, "sanity": True}]
    row = {"experiment": "probe", "status": "finished", "wall_time_s": 1.0, "claims": claims}
    assert progress_line(1, 1, row).endswith("  3 held, 1 not held as expected")
    bad = {**row, "claims": [*claims, {"name": "f", "held": False}]}
    assert progress_line(1, 1, bad).endswith("  3 held, 1 not held as expected, 1 FAILED")
    lines = not_held_lines([row], 80)
    assert lines[-1].endswith(CUT) and len(lines[-1]) <= 80
