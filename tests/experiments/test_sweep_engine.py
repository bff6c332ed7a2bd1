"""Sweeps on the local process pool and on a real Dask LocalCluster: tables, failures, resume.

The probe experiment (tests/experiments/sweep_probe.py) draws ``x * standard_normal(n)``
from ``default_rng(seed)``; the expected table is recomputed here directly
from numpy, independently of the sweep code.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sweep_probe  # noqa: F401  (registers "sweep-probe" in this process)

from specdyn import io, runs
from specdyn.runs.executors import run_point
from specdyn.runs.spec import load_sweep, make_sweep
from specdyn.runs.store import TIDY_COLUMNS, point_status
from specdyn.runs.sweep import run_sweep

TESTS = str(Path(__file__).resolve().parent)


@pytest.fixture(autouse=True)
def _probe_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    # worker processes (forkserver, Dask nannies) import the probe by name
    monkeypatch.setenv("PYTHONPATH", TESTS + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _spec(log: Path | str = "", **base: object):
    return make_sweep("sweep-probe", {"x": [0.5, 2.0, 8.0]}, seeds=[0, 1],
                      base={"n": 3, "fail_above": 4.0, "log": str(log), **base},
                      module="sweep_probe")


def _expected_rows(x: float, seed: int, n: int = 3) -> np.ndarray:
    return x * np.random.default_rng(seed).standard_normal(n)


def _sorted(df: pd.DataFrame) -> pd.DataFrame:
    return df.sort_values(["run_id", "step"]).reset_index(drop=True)


def _no_partial_files(out: Path) -> None:
    leftovers = [p for p in out.rglob("*") if p.name.startswith(".") or p.suffix == ".tmp"]
    assert leftovers == []


@pytest.mark.parametrize("workers", [1, 2])
def test_local_pool_shares_the_cores_between_its_workers(tmp_path: Path, workers: int) -> None:
    # default-sized BLAS/OpenMP pools in every worker spin against each other (20x slower,
    # BENCHMARKS.md): each worker gets cpu_count // workers threads, as Dask's nanny does.
    # (conftest pins this process to 1 thread, so workers=1 checks the budget is set, not
    # inherited, wherever there is more than one core)
    log = tmp_path / "threads.log"
    spec = make_sweep("sweep-probe", {"x": [1.0, 2.0]}, base={"threads_log": str(log)},
                      module="sweep_probe")
    run_sweep(spec, tmp_path / "sw", workers=workers, progress=False)
    want = max(1, (os.cpu_count() or 1) // workers)
    lines = log.read_text().split("\n")[:-1]
    assert len(lines) == 2
    for line in lines:
        env, pools = line.split()
        assert int(env) == want
        assert 1 <= int(pools) <= want


def test_local_sweep_table_failures_and_records(tmp_path: Path) -> None:
    spec = _spec()
    out = tmp_path / "sw"
    report = run_sweep(spec, out, workers=2, progress=False)
    assert (report.total, report.finished, report.failed) == (6, 4, 2)
    df = runs.load(out)
    assert list(df.columns[:1]) == ["run_id"]
    assert set(TIDY_COLUMNS) <= set(df.columns) and {"x", "seed", "n"} <= set(df.columns)
    # every finished point exactly once, with the values numpy gives directly
    assert df.groupby("run_id").size().tolist() == [3] * 4
    for (x, seed), g in df.groupby(["x", "seed"]):
        np.testing.assert_array_equal(g.sort_values("step")["value"], _expected_rows(x, seed))
    assert set(df["x"]) == {0.5, 2.0}
    # the failing points are recorded with their traceback; the others finished
    recs = runs.load_records(out).set_index("run_id")
    failed = recs[recs["status"] == "failed"]
    assert set(failed["x"]) == {8.0} and len(failed) == 2
    for rid in failed.index:
        rec = io.read_json(out / "runs" / f"{rid}.json")
        assert "Traceback" in rec["error"] and "probe asked to fail at x=8.0" in rec["error"]
        assert rec["config"]["x"] == 8.0 and rec["specdyn_version"]
        assert not (out / "data" / f"{rid}.parquet").exists()
    fin = recs[recs["status"] == "finished"]
    expected = [_expected_rows(x, s).mean() for x, s in zip(fin["x"], fin["seed"], strict=True)]
    assert np.allclose(fin["summary.mean"], expected)
    assert (fin["wall_time_s"] > 0).all() and (fin["host"] == socket.gethostname()).all()
    _no_partial_files(out)


def test_resume_runs_only_unfinished_and_retry_failed(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    out = tmp_path / "sw"
    run_sweep(_spec(log), out, workers=2, progress=False)
    mtimes = {p.name: p.stat().st_mtime_ns for p in (out / "runs").glob("*.json")}
    first = log.read_text().count("start")
    assert first == 6
    # a second run: nothing to do, nothing rewritten
    report = run_sweep(_spec(log), out, workers=2, progress=False)
    assert (report.skipped, report.finished, report.failed) == (6, 0, 0)
    assert log.read_text().count("start") == first
    assert {p.name: p.stat().st_mtime_ns for p in (out / "runs").glob("*.json")} == mtimes
    # retry_failed reruns exactly the failed points (they fail again: same config)
    report = run_sweep(_spec(log), out, workers=2, progress=False, retry_failed=True)
    assert (report.skipped, report.failed) == (4, 2)
    starts = [line.split() for line in log.read_text().splitlines() if line.startswith("start")]
    assert len(starts) == 8 and {float(s[1]) for s in starts[6:]} == {8.0}
    # a point whose data file vanished counts as unfinished and is run again
    victim = next((out / "data").glob("*.parquet"))
    victim.unlink()
    assert point_status(out, victim.stem) == "pending"
    report = run_sweep(_spec(log), out, workers=1, progress=False)
    assert report.finished == 1 and victim.exists()


def test_run_point_never_raises_and_carries_traceback() -> None:
    spec = _spec()
    bad = next(p for p in spec.points if p.config["x"] == 8.0)
    outcome = run_point(bad)
    assert outcome.status == "failed" and outcome.table is None
    assert "RuntimeError: probe asked to fail" in (outcome.error or "")


@pytest.mark.slow  # a LocalCluster of two worker processes: a few seconds to start
def test_dask_local_cluster_gives_same_table_as_local_pool(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    spec = _spec()
    local = run_sweep(spec, tmp_path / "local", workers=2, progress=False)
    dask = run_sweep(spec, tmp_path / "dask", executor="dask", workers=2, progress=False)
    assert (dask.finished, dask.failed) == (local.finished, local.failed) == (4, 2)
    pd.testing.assert_frame_equal(_sorted(runs.load(tmp_path / "local")),
                                  _sorted(runs.load(tmp_path / "dask")))
    recs = runs.load_records(tmp_path / "dask")
    # the points really ran in Dask worker processes, not in this one
    pids = {io.read_json(p)["pid"] for p in (tmp_path / "dask" / "runs").glob("*.json")}
    assert os.getpid() not in pids and len(pids) >= 1
    failed = recs[recs["status"] == "failed"]
    assert failed["error"].str.contains("probe asked to fail").all()
    _no_partial_files(tmp_path / "dask")


def test_unreachable_dask_address_fails_fast_naming_it(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    log = tmp_path / "calls.log"
    # "fast" is the given timeout, passed to the client (no wall-clock bound: CI is shared)
    with pytest.raises(ConnectionError, match=address.replace(".", r"\.") + " within 1 s"):
        run_sweep(_spec(log), tmp_path / "sw", address=address, timeout=1.0, progress=False)
    assert not log.exists() and not (tmp_path / "sw").exists()


def test_bad_arguments_rejected_before_work(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="executor must be one of"):
        run_sweep(_spec(), tmp_path / "a", executor="slurm")
    with pytest.raises(ValueError, match="workers must be an integer >= 1"):
        run_sweep(_spec(), tmp_path / "a", workers=0)
    with pytest.raises(ValueError, match="address is for executor 'dask'"):
        run_sweep(_spec(), tmp_path / "a", executor="local", address="tcp://127.0.0.1:1")
    assert not (tmp_path / "a").exists()


def test_folder_of_another_experiment_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "sw"
    out.mkdir()
    io.write_json({"experiment": "simulate"}, out / "sweep.json")
    with pytest.raises(ValueError, match="holds a sweep of experiment 'simulate'"):
        run_sweep(_spec(), out)


def test_sweep_file_options_and_load(tmp_path: Path) -> None:
    text = ('experiment = "sweep-probe"\nmodule = "sweep_probe"\nn = 2\n\n'
            '[sweep]\nseeds = 2\nworkers = 1\n[sweep.axes]\nx = [1.0, 3.0]\n')
    path = tmp_path / "s.toml"
    path.write_text(text)
    spec = load_sweep(path)
    assert spec.options == {"workers": 1}
    report = run_sweep(path, tmp_path / "sw", progress=False)
    assert report.finished == 4
    assert (tmp_path / "sw" / "sweep.toml").read_text() == text
    assert len(runs.load(tmp_path / "sw")) == 4 * 2


def test_cli_run_sweep_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from specdyn.cli import main

    run_file = tmp_path / "r.toml"
    run_file.write_text('experiment = "sweep-probe"\nmodule = "sweep_probe"\nx = 3.0\nn = 2\n')
    assert main(["run", str(run_file), "--out", str(tmp_path / "o")]) == 0
    rec = io.read_json(tmp_path / "o" / "sweep-probe" / "record.json")
    assert rec["status"] == "finished" and rec["config"]["x"] == 3.0
    np.testing.assert_array_equal(runs.load(tmp_path / "o" / "sweep-probe")["value"],
                                  _expected_rows(3.0, 0, 2))

    sweep_file = tmp_path / "s.toml"
    sweep_file.write_text(run_file.read_text().replace("x = 3.0\n", "fail_above = 4.0\n")
                          + "\n[sweep]\nseeds = 2\n[sweep.axes]\nx = [1.0, 5.0]\n")
    out = tmp_path / "sw"
    args = ["sweep", str(sweep_file), "--out", str(out), "--executor", "inline",
            "--no-progress"]
    assert main(args) == 1  # two points failed
    text = capsys.readouterr().out
    assert "4 points: 0 already done, 2 finished, 2 failed" in text
    assert main(["results", str(out)]) == 0
    text = capsys.readouterr().out
    assert "4 runs (2 finished, 2 failed)" in text
    assert "probe asked to fail" in text
    for rid in runs.load_records(out)["run_id"]:
        assert rid in text
    assert main(args + ["--retry-failed"]) == 1
    assert "2 already done, 0 finished, 2 failed" in capsys.readouterr().out

    bad = tmp_path / "bad.toml"
    bad.write_text(sweep_file.read_text().replace("x = [1.0, 5.0]", "x = []"))
    assert main(["sweep", str(bad), "--out", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert f"{bad}, line 9, key 'sweep.axes.x'" in err and "empty" in err
    assert not (tmp_path / "b").exists()


def test_io_load_folder_file_and_errors(tmp_path: Path) -> None:
    a = pd.DataFrame({"t": [0.0, 1.0], "value": [1.0, 2.0]})
    b = pd.DataFrame({"t": [0.0], "value": [5.0], "k": [3]})
    io.write_table(a, tmp_path / "a.parquet")
    assert runs.load(tmp_path).equals(a)  # one table: as it is
    io.write_table(b, tmp_path / "b.parquet")
    (tmp_path / ".b.parquet.x.tmp").write_bytes(b"partial")  # a stray temporary file
    both = runs.load(tmp_path)
    assert both["table"].tolist() == ["a", "a", "b"] and both["value"].tolist() == [1, 2, 5]
    assert runs.load(tmp_path / "b.parquet").equals(b)
    with pytest.raises(ValueError, match="does not exist"):
        runs.load(tmp_path / "nope")
    with pytest.raises(ValueError, match="no run records"):
        runs.load_records(tmp_path)


def test_worker_death_retries_that_point_only_then_records_it(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    # x = 3: its worker dies on the first try only; x = 4: its worker always dies
    once = make_sweep("sweep-probe", {"x": [1.0, 2.0, 3.0]}, module="sweep_probe",
                      base={"n": 2, "log": str(log), "die_above": 2.5,
                            "die_once": str(tmp_path / "died")})
    always = make_sweep("sweep-probe", {"x": [4.0]}, module="sweep_probe",
                        base={"n": 2, "log": str(log), "die_above": 2.5})
    out = tmp_path / "sw"
    report = run_sweep(once, out, workers=2, progress=False)
    assert (report.finished, report.failed) == (3, 0)
    starts = [float(ln.split()[1]) for ln in log.read_text().splitlines()
              if ln.startswith("start")]
    assert sorted(starts) == [1.0, 2.0, 3.0, 3.0]  # only the dead worker's point ran twice
    report = run_sweep(always, tmp_path / "sw2", workers=2, progress=False)
    assert (report.finished, report.failed) == (0, 1)
    rec = io.read_json(tmp_path / "sw2" / "runs" / f"{report.failed_ids[0]}.json")
    assert rec["status"] == "failed" and "worker process died 3 times" in rec["error"]
    assert [ln.split()[1] for ln in log.read_text().splitlines()].count("4.0") == 3
