"""Result folders as transactions, and one writer per folder.

An experiment rerun that fails keeps the previous finished result whole; a
killed one leaves temporaries the next run removes; readers see only data
whose record says ``finished``; a folder being written refuses a second
writer at once, naming its PID; a sweep folder takes one grid only. The
expected tables are recomputed here from numpy (the probe draws
``x * standard_normal(n)`` from ``default_rng(seed)``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sweep_probe import ProbeConfig  # importing it registers "sweep-probe"

from specdyn import io, runs
from specdyn.runs import run_experiment, store
from specdyn.runs.spec import make_sweep
from specdyn.runs.sweep import run_sweep

TESTS = Path(__file__).resolve().parent
NAME = "sweep-probe"


def _expected(x: float, n: int, seed: int = 0) -> np.ndarray:
    return x * np.random.default_rng(seed).standard_normal(n)


def _hidden(root: Path) -> list[str]:
    return sorted(p.name for p in root.rglob("*") if p.name.startswith(".") or ".tmp" in p.name)


def test_failed_rerun_keeps_previous_result_and_records_failure_beside(tmp_path: Path) -> None:
    run_experiment(NAME, tmp_path, config=ProbeConfig(x=1.0, n=3))
    target = tmp_path / NAME
    before = {p.name: p.read_bytes() for p in target.iterdir()}
    with pytest.raises(RuntimeError, match="probe asked to fail"):
        run_experiment(NAME, tmp_path, config=ProbeConfig(x=5.0, n=4, fail_above=4.0))
    # the previous finished result, byte for byte; the failure beside it
    assert {p.name: p.read_bytes() for p in target.iterdir()} == before
    np.testing.assert_array_equal(runs.load(target)["value"], _expected(1.0, 3))
    failed = io.read_json(store.failed_record_path(target))
    assert failed["status"] == "failed" and failed["config"]["x"] == 5.0
    assert "probe asked to fail" in failed["error"]
    recs = runs.load_records(target)
    assert recs["status"].tolist() == ["finished", "failed"]
    assert _hidden(tmp_path) == []
    # a finished rerun replaces the result whole and clears the failure
    res = run_experiment(NAME, tmp_path, config=ProbeConfig(x=2.0, n=5))
    assert res.out_dir == target and res.tables == [target / "data.parquet"]
    np.testing.assert_array_equal(runs.load(target)["value"], _expected(2.0, 5))
    assert io.read_json(target / "record.json")["config"]["x"] == 2.0
    assert not store.failed_record_path(target).exists()
    assert sorted(p.name for p in target.iterdir()) == ["data.parquet", "record.json"]
    assert _hidden(tmp_path) == []


def test_first_run_that_fails_leaves_no_folder(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError):
        run_experiment(NAME, tmp_path, config=ProbeConfig(x=5.0, fail_above=4.0))
    assert not (tmp_path / NAME).exists()
    assert runs.load_records(tmp_path / NAME)["status"].tolist() == ["failed"]
    assert _hidden(tmp_path) == []


def test_leftovers_of_killed_runs_removed_and_half_replace_undone(tmp_path: Path) -> None:
    run_experiment(NAME, tmp_path, config=ProbeConfig(x=1.0, n=3))
    target = tmp_path / NAME
    # what kills leave: a half-written run folder, and (fallback replace, killed between
    # its two renames) the old result moved aside with the target missing
    partial = tmp_path / f".{NAME}.k1ll3d.tmp"
    partial.mkdir()
    (partial / "data.parquet").write_bytes(b"half")
    os.rename(target, tmp_path / f".{NAME}.abcd1234.old.tmp")
    with pytest.raises(ValueError, match="does not exist"):
        runs.load(target)  # a reader in that instant sees nothing, never a mix
    with pytest.raises(RuntimeError):
        run_experiment(NAME, tmp_path, config=ProbeConfig(x=5.0, fail_above=4.0))
    np.testing.assert_array_equal(runs.load(target)["value"], _expected(1.0, 3))
    assert _hidden(tmp_path) == []


def test_load_refuses_a_folder_whose_record_is_not_finished(tmp_path: Path) -> None:
    io.write_table(pd.DataFrame({"value": [1.0]}), tmp_path / "r" / "t.parquet")
    io.write_json({"status": "failed"}, tmp_path / "r" / "record.json")
    with pytest.raises(ValueError, match="record says 'failed'"):
        runs.load(tmp_path / "r")
    (tmp_path / "bad.parquet").write_bytes(b"not parquet")
    with pytest.raises(ValueError, match="bad.parquet"):
        runs.load(tmp_path / "bad.parquet")


def _spec(xs: list[float], log: Path | str = "", **base: object):
    return make_sweep(NAME, {"x": xs}, seeds=[0], module="sweep_probe",
                      base={"n": 2, "log": str(log), **base})


def test_sweep_load_returns_only_finished_points_of_its_grid(tmp_path: Path) -> None:
    out = tmp_path / "sw"
    run_sweep(_spec([1.0, 2.0, 5.0], fail_above=4.0), out, executor="inline", progress=False)
    ids = sorted(runs.load(out)["run_id"].unique())
    assert len(ids) == 2
    # an orphan table (no point of this grid) and a table whose record says failed
    io.write_table(runs.load(out).assign(run_id="0rphan"), out / "data" / "0rphan.parquet")
    failed = runs.load_records(out).query("status == 'failed'")["run_id"].item()
    io.write_table(runs.load(out), out / "data" / f"{failed}.parquet")
    assert sorted(runs.load(out)["run_id"].unique()) == ids
    assert "0rphan" not in runs.load_records(out)["run_id"].tolist()


def test_other_grid_refused_before_any_work(tmp_path: Path) -> None:
    out, log = tmp_path / "sw", tmp_path / "calls.log"
    run_sweep(_spec([1.0, 2.0], log), out, executor="inline", progress=False)
    meta = (out / "sweep.json").read_bytes()
    with pytest.raises(ValueError, match="holds another grid"):
        run_sweep(_spec([1.0, 3.0], log), out, executor="inline", progress=False)
    assert log.read_text().count("start") == 2 and (out / "sweep.json").read_bytes() == meta
    assert len(runs.load(out)) == 4


def test_locked_folder_refuses_second_writer_naming_the_pid(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from specdyn.cli import main

    out, log = tmp_path / "sw", tmp_path / "calls.log"
    sweep_file = tmp_path / "s.toml"
    sweep_file.write_text(f'experiment = "{NAME}"\nmodule = "sweep_probe"\nlog = "{log}"\n\n'
                          '[sweep]\n[sweep.axes]\nx = [1.0]\n')
    with store.lock(out):  # a second open file description conflicts even in-process
        assert store.lock_path(out).read_text().split()[0] == str(os.getpid())
        with pytest.raises(store.FolderBusyError, match=f"process {os.getpid()}"):
            run_sweep(_spec([1.0], log), out, executor="inline", progress=False)
        assert main(["sweep", str(sweep_file), "--out", str(out), "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and f"process {os.getpid()}" in err
        with store.lock(tmp_path / NAME), pytest.raises(store.FolderBusyError):
            run_experiment(NAME, tmp_path, config=ProbeConfig(log=str(log)))
    assert not log.exists() and not out.exists()
    assert not store.lock_path(out).exists()  # released and removed
    report = run_sweep(_spec([1.0], log), out, executor="inline", progress=False)
    assert report.finished == 1


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX paths in the probe")
def test_two_identical_concurrent_sweeps_compute_no_point_twice(tmp_path: Path) -> None:
    log, release, out = tmp_path / "calls.log", tmp_path / "release", tmp_path / "sw"
    cfg = tmp_path / "s.toml"
    cfg.write_text(f'experiment = "{NAME}"\nmodule = "sweep_probe"\nn = 2\nlog = "{log}"\n'
                   f'wait_at = 1.0\nwait_for = "{release}"\n\n'
                   '[sweep]\nseeds = [0]\n[sweep.axes]\nx = [1.0, 2.0, 3.0]\n')
    env = {**os.environ, "PYTHONPATH": f"{TESTS}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    cmd = [sys.executable, "-m", "specdyn", "sweep", str(cfg), "--out", str(out),
           "--executor", "inline", "--no-progress"]
    first = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
    try:
        end = time.monotonic() + 600  # a liveness bound: CLI start-up on a loaded machine
        while not (log.exists() and "start" in log.read_text()):  # held at the barrier
            assert first.poll() is None and time.monotonic() < end, first.communicate()[0]
            time.sleep(0.05)
        second = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        release.touch()
        output, _ = first.communicate(timeout=600)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert second.returncode == 2 and second.stdout.count("[specdyn]") == 1
    err = second.stderr.strip().splitlines()
    assert len(err) == 1 and f"process {first.pid}" in err[0] and "--out" in err[0], err
    assert first.returncode == 0, output
    starts = [ln.split()[1] for ln in log.read_text().splitlines() if ln.startswith("start")]
    assert sorted(starts) == ["1.0", "2.0", "3.0"]  # every point computed exactly once
    assert len(runs.load(out)) == 3 * 2


def test_reproduce_folder_records_are_found_by_the_layout(tmp_path: Path) -> None:
    # a reproduce folder laid out by hand, with the literal names of the documented layout
    (tmp_path / "fig2").mkdir()
    (tmp_path / "fig2" / "record.json").write_text('{"status": "finished"}')
    (tmp_path / "fig2.failed.json").write_text('{"status": "failed"}')
    (tmp_path / "fig3.failed.json").write_text('{"status": "failed"}')
    (tmp_path / "empty").mkdir()  # no record: not an experiment
    found = store.experiment_records(tmp_path)
    assert [p.relative_to(tmp_path).as_posix() for p in found] == [
        "fig2/record.json", "fig2.failed.json", "fig3.failed.json"]
    assert [store.experiment_name(p) for p in found] == ["fig2", "fig2", "fig3"]
    assert store.failed_record_path(tmp_path / "fig2") == found[1]
    assert store.is_experiment(tmp_path / "fig2")
    assert not store.is_experiment(tmp_path / "empty")
    (tmp_path / "fig2" / "runs").mkdir()  # a sweep's runs/ folder: not one experiment
    assert not store.is_experiment(tmp_path / "fig2")
