"""``specdyn reproduce --jobs``: experiments in worker processes of their own, the same numbers.

Oracle: the same experiments run one after another in this process (``--jobs 1``),
compared bit for bit by ``scripts/compare_outputs.py``; a cancel of a parallel run
must stop its workers and leave no result folder half written.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from specdyn import io
from specdyn.cli import main
from specdyn.cli.reproduce import default_jobs

#: Compares two output folders bit for bit (exit 0: identical).
COMPARE = Path(__file__).resolve().parents[2] / "scripts" / "compare_outputs.py"


def test_two_jobs_write_what_one_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                      ) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    assert main(["reproduce", "fig6", "fig5", "--out", str(one), "--jobs", "1"]) == 0
    capsys.readouterr()
    assert main(["reproduce", "fig6", "fig5", "--out", str(two), "--jobs", "2"]) == 0
    text = capsys.readouterr().out
    assert "2 at once" in text.splitlines()[0]
    # one line per experiment as it finishes, counted in the order they finished
    done = [ln.split()[:2] for ln in text.splitlines() if ln.startswith("[") and "held" in ln]
    assert sorted(name for _, name in done) == ["fig5", "fig6"]
    assert [i for i, _ in done] == ["[1/2]", "[2/2]"]
    # the records and tables in the order given, and bit-identical to the sequential run
    rec = io.read_json(two / "claims.json")
    assert [r["experiment"] for r in rec["experiments"]] == ["fig6", "fig5"]
    assert all(set(r) == {"experiment", "status", "wall_time_s", "claims"}
               for r in rec["experiments"])
    same = subprocess.run([sys.executable, str(COMPARE), str(one), str(two)],
                          capture_output=True, text=True)
    assert same.returncode == 0 and "all identical" in same.stdout, same.stdout


def test_default_jobs_is_one_with_full_and_at_least_one_at_quick_sizes() -> None:
    assert default_jobs(full=True) == 1
    assert 1 <= default_jobs() <= (os.cpu_count() or 1)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="Linux: /proc, signals")
def test_a_cancel_stops_the_workers_and_keeps_no_half_result(tmp_path: Path) -> None:
    out = tmp_path / "o"
    proc = subprocess.Popen([sys.executable, "-m", "specdyn", "reproduce", "fig3", "fig2",
                             "--out", str(out), "--jobs", "2", "--threads", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    header = proc.stdout.readline()  # printed before the workers start
    assert "2 at once" in header, header
    deadline = time.monotonic() + 120
    # the workers are running once their transactions have locked the two folders
    while not all((out / f".{n}.lock").exists() for n in ("fig3", "fig2")):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    workers = _descendants(proc.pid)
    assert len(workers) >= 2, workers  # the forkserver and the two workers, on Linux
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert err.endswith("specdyn reproduce: interrupted by SIGINT (finished results are "
                        "kept)\n"), err
    # no result folder appeared half written, and no worker is left running
    assert not (out / "fig3").exists() and not (out / "claims.json").exists()
    deadline = time.monotonic() + 10  # a worker left idle ends when it sees its parent gone
    while (alive := [p for p in workers if _alive(p)]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert alive == [], alive


def _descendants(pid: int) -> list[int]:
    """The processes below ``pid`` (from /proc)."""
    parent = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # ended meanwhile
            continue
        parent[int(stat.parent.name)] = int(fields[1])
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        found += kids
        todo += kids
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has ended (its parent has not reaped it yet)
