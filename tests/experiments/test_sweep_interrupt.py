"""Kill a sweep midway (a worker SIGKILLed, then the parent interrupted), resume it;
cancel a sweep started with SIGINT ignored (as ``&`` and ``nohup`` start it) by SIGINT
or SIGTERM.

The sweep runs through the real command line in a subprocess. Each probe call
logs ``start``/``end`` lines with its pid and the phase (first run / rerun), so
the test can kill a worker in the middle of a point and count executions.
Nothing races the clock: the killed point hangs until it is killed, and the
last point waits for a file the test creates only after the interrupt, so the
sweep is certainly running when each signal arrives, however loaded the machine.

The time bounds are liveness bounds, generous next to the work (a point is a
fraction of a second, a process pool starts in seconds); a command that does not
handle the signal is caught at once, before the signal is sent, by reading which
signals the process catches (``/proc/PID/status``), so a broken cancel fails in
seconds instead of waiting for a timeout.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from specdyn import io, runs

TESTS = Path(__file__).resolve().parent
N_POINTS = 8


# liveness bounds only (generous: a loaded CI machine is slow); no step races the clock
START = 120.0  # s: a CLI process and its process pools start, the first points finish
CANCEL = 30.0  # s: after a signal, the command stops its workers and exits


def _wait(cond, what: str, timeout: float = START) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _log_lines(log: Path) -> list[list[str]]:
    return [line.split() for line in log.read_text().splitlines()] if log.exists() else []


def _finished(out: Path) -> dict[str, int]:
    """Finished run ids -> record mtime (ns)."""
    done = {}
    for rec in (out / "runs").glob("*.json") if (out / "runs").exists() else []:
        if io.read_json(rec)["status"] == "finished":
            done[rec.stem] = rec.stat().st_mtime_ns
    return done


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead for our purpose
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return True


def _catches(pid: int, sig: signal.Signals) -> bool | None:
    """Whether process ``pid`` has a handler for ``sig`` (None where /proc cannot tell)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    mask = next(int(ln.split()[1], 16) for ln in status.splitlines() if ln.startswith("SigCgt"))
    return bool(mask >> (sig - 1) & 1)


def _assert_handles_cancel(proc: subprocess.Popen) -> None:
    """The CLI catches SIGINT and SIGTERM: checked before signalling, so a command that
    would ignore the signal fails here at once instead of after a timeout."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        assert _catches(proc.pid, sig) is not False, f"specdyn does not catch {sig.name}"


def _dump_stacks(proc: subprocess.Popen) -> None:
    """Where a hung command is: faulthandler (PYTHONFAULTHANDLER) prints every thread's
    stack on SIGABRT into the output the failure message shows."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGABRT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(10)


def _sigint_ignored() -> None:
    # what a shell does to a job started with `&` (and nohup to its command) in a script
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _no_partial_files(out: Path) -> None:
    assert [p for p in out.rglob("*") if p.name.startswith(".") or p.suffix == ".tmp"] == []
    for f in (out / "data").glob("*.parquet"):
        pd.read_parquet(f)  # every data file is complete
    for f in (out / "runs").glob("*.json"):
        io.read_json(f)


@pytest.mark.slow  # two CLI subprocesses and three process pools: ~10 s idle, more when loaded
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_killed_worker_and_interrupted_parent_then_resume(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    out = tmp_path / "sweep"
    cfg = tmp_path / "s.toml"
    release = tmp_path / "release"
    xs = ", ".join(f"{i + 1}.0" for i in range(N_POINTS))
    cfg.write_text(
        f'experiment = "sweep-probe"\nmodule = "sweep_probe"\nn = 5\nsleep = 0.1\n'
        f'log = "{log}"\nhang_at = 1.0\nhang_marker = "{tmp_path / "hung"}"\n'
        f'wait_at = {N_POINTS}.0\nwait_for = "{release}"\n\n'
        f'[sweep]\nseeds = [7]\n[sweep.axes]\nx = [{xs}]\n')
    env = {**os.environ, "PYTHONPATH": f"{TESTS}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
           "OMP_NUM_THREADS": "1", "PYTHONFAULTHANDLER": "1"}
    cmd = [sys.executable, "-m", "specdyn", "sweep", str(cfg), "--out", str(out),
           "--workers", "2", "--no-progress"]

    proc = subprocess.Popen(cmd, env={**env, "PROBE_PHASE": "first"},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        # 1. the first attempt at x = 1 hangs; once another point has finished, SIGKILL
        #    the worker that runs x = 1 (it is certainly in the middle of that point)
        def hung_pid() -> int | None:
            starts = [ln for ln in _log_lines(log) if ln[0] == "start" and ln[1] == "1.0"]
            return int(starts[0][3]) if starts else None

        _wait(lambda: len(_finished(out)) >= 1 and hung_pid() is not None,
              "a finished point while x = 1 hangs")
        victim_pid = hung_pid()
        assert victim_pid is not None and _alive(victim_pid)
        os.kill(victim_pid, signal.SIGKILL)
        # 2. the sweep goes on (x = 1 again, on a fresh worker) up to the last point,
        #    which waits for `release`; then Ctrl-C the parent
        def started(x: str) -> int:
            return [ln[1] for ln in _log_lines(log) if ln[0] == "start"].count(x)

        _wait(lambda: len(_finished(out)) >= 3 and started("1.0") == 2
              and started(f"{N_POINTS}.0") == 1, "points after the worker was killed")
        _assert_handles_cancel(proc)
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate(timeout=CANCEL)
    except (AssertionError, subprocess.TimeoutExpired) as err:
        _dump_stacks(proc)
        proc.kill()
        output, _ = proc.communicate()
        raise AssertionError(f"{err}\n--- sweep output:\n{output}\n--- log:\n"
                             f"{log.read_text() if log.exists() else ''}") from None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, output
    assert "interrupted" in output

    # the interrupted state: complete files only, some points still to do
    _no_partial_files(out)
    done_first = _finished(out)
    assert 3 <= len(done_first) < N_POINTS
    for rid in done_first:
        assert (out / "data" / f"{rid}.parquet").exists()
    # the parent stopped its workers: none is left running a point
    worker_pids = {int(ln[3]) for ln in _log_lines(log)}
    _wait(lambda: not any(_alive(p) for p in worker_pids), "workers to exit", timeout=CANCEL)

    # 3. resume: only the unfinished points run, each finished point exactly once
    release.touch()
    rerun = subprocess.run(cmd, env={**env, "PROBE_PHASE": "second"}, capture_output=True,
                           text=True, timeout=START)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    _no_partial_files(out)
    done = _finished(out)
    assert len(done) == N_POINTS
    for rid, mtime in done_first.items():
        assert done[rid] == mtime  # not rewritten
    df = runs.load(out)
    assert sorted(df.groupby("run_id").size().tolist()) == [5] * N_POINTS
    assert sorted(df["x"].unique().tolist()) == [float(i + 1) for i in range(N_POINTS)]

    lines = _log_lines(log)
    x_done_first = {io.read_json(out / "runs" / f"{rid}.json")["config"]["x"]
                    for rid in done_first}
    second_starts = [float(ln[1]) for ln in lines if ln[0] == "start" and ln[4] == "second"]
    assert x_done_first.isdisjoint(second_starts)  # no finished point recomputed
    assert len(second_starts) == len(set(second_starts)) == N_POINTS - len(done_first)
    # in the first run, the point whose worker was killed ran again, and no other twice
    first_starts = [ln[1] for ln in lines if ln[0] == "start" and ln[4] == "first"]
    assert first_starts.count("1.0") == 2
    assert all(first_starts.count(x) == 1 for x in set(first_starts) - {"1.0"})


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_cancels_sweep_started_with_sigint_ignored(tmp_path: Path,
                                                          sig: signal.Signals) -> None:
    """Started as `specdyn sweep ... &` from a script (SIGINT ignored), in its own process
    group; the signal goes to the whole group, as Ctrl-C, `timeout` and batch schedulers
    send it. Exit 128 + signal, finished points kept, no partial file, no worker left."""
    log = tmp_path / "calls.log"
    out = tmp_path / "sweep"
    cfg = tmp_path / "s.toml"
    n = 4
    xs = ", ".join(f"{i + 1}.0" for i in range(n))
    cfg.write_text(  # the last point waits for a file that never comes: the sweep is busy
        f'experiment = "sweep-probe"\nmodule = "sweep_probe"\nn = 5\nsleep = 0.05\n'
        f'log = "{log}"\nwait_at = {n}.0\nwait_for = "{tmp_path / "never"}"\n\n'
        f'[sweep]\nseeds = [3]\n[sweep.axes]\nx = [{xs}]\n')
    env = {**os.environ, "PYTHONPATH": f"{TESTS}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
           "OMP_NUM_THREADS": "1", "PROBE_PHASE": "first", "PYTHONFAULTHANDLER": "1"}
    cmd = [sys.executable, "-m", "specdyn", "sweep", str(cfg), "--out", str(out),
           "--workers", "2", "--no-progress"]
    ours = signal.getsignal(signal.SIGINT)  # SIG_IGN itself when the suite runs under nohup
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, preexec_fn=_sigint_ignored, start_new_session=True)
    try:
        assert signal.getsignal(signal.SIGINT) is ours  # preexec_fn ignored it in the child only
        _wait(lambda: len(_finished(out)) >= n - 1
              and [ln[1] for ln in _log_lines(log) if ln[0] == "start"].count(f"{n}.0") == 1,
              "the points before the waiting one")
        _assert_handles_cancel(proc)
        os.killpg(proc.pid, sig)
        output, _ = proc.communicate(timeout=CANCEL)
    except (AssertionError, subprocess.TimeoutExpired) as err:
        _dump_stacks(proc)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        raise AssertionError(f"{err}\n--- sweep output:\n{output}") from None
    finally:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 128 + sig, output
    assert f"interrupted by {sig.name}" in output
    assert "Traceback" not in output
    _no_partial_files(out)
    done = _finished(out)
    assert len(done) == n - 1  # every finished point kept, the waiting one not recorded
    for rid in done:
        assert (out / "data" / f"{rid}.parquet").exists()
    worker_pids = {int(ln[3]) for ln in _log_lines(log)}
    _wait(lambda: not any(_alive(p) for p in worker_pids), "workers to exit", timeout=CANCEL)
