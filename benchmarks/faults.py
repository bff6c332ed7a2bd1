"""Fault injection: SIGKILLs and failures during reruns and sweeps, and concurrent writers.

Reproduces the fault table of issue 17 against the result store
(:mod:`specdyn.runs.store`). Each fault runs in a forked child process
(specdyn already imported, so a kill can land anywhere in a run, commit
included) and is killed at a random moment of its run:

1. **reruns into an existing experiment folder**: a finished result exists
   (tag 0); a rerun with tag ``i`` writes a table, a PNG and a PDF (each
   carrying its tag), then its record, and is SIGKILLed at a random time.
   Afterwards every file in the folder must carry the tag of the folder's
   ``record.json`` (old result or new, never a mix), ``runs.load`` must return
   that run's rows, and the next run must leave no ``.tmp``;
2. **a failed rerun** (the experiment raises): the old result is kept byte for
   byte, the failure is recorded beside it;
3. **sweeps killed and resumed**: the sweep's parent is SIGKILLed once a random
   number of its points has started, then resumed; every point must be in the
   table exactly once, no file partial, no ``.tmp`` left;
4. **concurrent sweeps into one folder**: two identical sweeps started
   together; one runs, the other is refused naming the holder's PID; no point
   is computed twice. Then a different grid aimed at the folder is refused.

Run: ``python benchmarks/faults.py [--kills 20] [--sweep-kills 8] [--pairs 5] [--seed 0]``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import signal
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from specdyn import io, runs
from specdyn.runs import run_experiment, store
from specdyn.runs.registry import ExperimentResult, register
from specdyn.runs.spec import make_sweep
from specdyn.runs.sweep import run_sweep

NAME = "fault-probe"
CTX = multiprocessing.get_context("fork")


@dataclass(frozen=True)
class FaultConfig:
    tag: int = 0
    n: int = 200
    pause: float = 0.05
    fail: bool = False
    log: str = ""


def _slow_write(path: Path, data: bytes, pause: float) -> None:
    path.write_bytes(data)  # plain writes, as a careless experiment would: the store must cope
    time.sleep(pause)


@register(NAME, "fault injection probe (benchmarks/faults.py)", FaultConfig)
def _run(cfg: FaultConfig, out_dir: Path) -> ExperimentResult:
    if cfg.log:
        fd = os.open(cfg.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        os.write(fd, f"start {cfg.tag} {os.getpid()}\n".encode())
        os.close(fd)
    table = out_dir / "data.parquet"
    pd.DataFrame({"tag": cfg.tag, "value": np.full(cfg.n, float(cfg.tag))}).to_parquet(table)
    time.sleep(cfg.pause)
    if cfg.fail:
        raise FloatingPointError(f"diverged at step 7 (tag {cfg.tag})")
    _slow_write(out_dir / "figure.png", f"PNG tag={cfg.tag}".encode(), cfg.pause)
    _slow_write(out_dir / "figure.pdf", f"PDF tag={cfg.tag}".encode(), cfg.pause)
    return ExperimentResult(NAME, out_dir, figures=[out_dir / "figure.png",
                                                    out_dir / "figure.pdf"],
                            tables=[table], summary={"tag": cfg.tag})


def _tags(target: Path) -> dict[str, int]:
    """The tag each file in ``target`` carries."""
    tags = {"record.json": io.read_json(target / "record.json")["config"]["tag"]}
    tags["data.parquet"] = int(pd.read_parquet(target / "data.parquet")["tag"].iloc[0])
    for name in ("figure.png", "figure.pdf"):
        tags[name] = int((target / name).read_text().split("tag=")[1])
    return tags


def _tmp_count(root: Path) -> int:
    return sum(1 for p in root.rglob("*") if p.name.endswith(".tmp"))


def reruns(root: Path, kills: int, rng: random.Random) -> dict[str, int]:
    run_experiment(NAME, root, config=FaultConfig(tag=0))
    target = root / NAME
    counts = {"kills": 0, "old": 0, "new": 0, "mixed": 0, "load_wrong": 0,
              "tmp_after_kill": 0, "tmp_after_next_run": 0}
    # a run takes about 3 pauses plus its commit; kill anywhere in it (and a bit after)
    for i in range(1, kills + 1):
        cfg = FaultConfig(tag=i)
        proc = CTX.Process(target=run_experiment, args=(NAME, root), kwargs={"config": cfg})
        proc.start()
        time.sleep(rng.uniform(0.0, 0.6))
        os.kill(proc.pid, signal.SIGKILL)
        proc.join()
        counts["kills"] += 1
        counts["tmp_after_kill"] += _tmp_count(root) > 0
        tags = _tags(target)
        rec = tags["record.json"]
        if len(set(tags.values())) != 1:
            counts["mixed"] += 1
        counts["new" if rec == i else "old"] += 1
        if set(runs.load(target)["tag"]) != {rec}:
            counts["load_wrong"] += 1
        # the next run removes what the kill left (it finishes: tag back to a clean state)
        run_experiment(NAME, root, config=FaultConfig(tag=rec, pause=0.0))
        counts["tmp_after_next_run"] += _tmp_count(root) > 0
    return counts


def failed_rerun(root: Path) -> dict[str, int]:
    run_experiment(NAME, root, config=FaultConfig(tag=100, pause=0.0))
    target = root / NAME
    before = {p.name: p.read_bytes() for p in target.iterdir()}
    try:
        run_experiment(NAME, root, config=FaultConfig(tag=101, pause=0.0, fail=True))
    except FloatingPointError:
        pass
    after = {p.name: p.read_bytes() for p in target.iterdir()}
    stale = int((runs.load(target)["tag"] != 100).sum())
    failed = io.read_json(store.failed_record_path(target))
    return {"old_kept_bytewise": int(after == before), "rows_not_old": stale,
            "failure_recorded": int(failed["status"] == "failed"
                                    and "diverged at step 7" in failed["error"]),
            "tmp": _tmp_count(root)}


def _grid(log: Path, xs: list[int], pause: float = 0.05):
    return make_sweep(NAME, {"tag": xs}, base={"n": 3, "pause": pause, "log": str(log)})


def _sweep(spec: object, out: Path, executor: str) -> None:
    run_sweep(spec, out, executor=executor, workers=2, progress=False)  # type: ignore[arg-type]


def sweep_kills(root: Path, kills: int, rng: random.Random, executor: str) -> dict[str, int]:
    counts = {"kills": 0, "kills_mid_sweep": 0, "lost": 0, "duplicated": 0, "partial": 0,
              "tmp_after_resume": 0, "recomputed_finished": 0}
    for k in range(kills):
        out, log = root / f"{executor}{k}", root / f"{executor}{k}.log"
        spec = _grid(log, list(range(12)))
        # kill once a random number of points has started (whatever the pool's start-up
        # time), a random moment later: inside a point, or while it is being stored
        proc = CTX.Process(target=_sweep, args=(spec, out, executor))
        proc.start()
        target, end = rng.randint(1, len(spec.points) - 1), time.monotonic() + 300
        while (log.read_text().count("start") if log.exists() else 0) < target:
            if time.monotonic() > end or not proc.is_alive():
                break
            time.sleep(0.01)
        time.sleep(rng.uniform(0.0, 0.1))
        os.kill(proc.pid, signal.SIGKILL)
        proc.join()
        counts["kills"] += 1
        done = set(runs.load(out).get("run_id", [])) if out.exists() else set()
        counts["kills_mid_sweep"] += 0 < len(done) < len(spec.points)
        before = len(log.read_text().splitlines()) if log.exists() else 0
        # resume in a child too: a forkserver started here would be inherited, broken,
        # by the next forked child
        resume = CTX.Process(target=_sweep, args=(spec, out, executor))
        resume.start()
        resume.join()
        df = runs.load(out)
        sizes = df.groupby("run_id").size()
        counts["lost"] += len({p.run_id for p in spec.points} - set(sizes.index))
        counts["duplicated"] += int((sizes != 3).sum())
        counts["tmp_after_resume"] += _tmp_count(out) > 0
        starts = [ln.split()[1] for ln in log.read_text().splitlines()[before:]
                  if ln.startswith("start")]
        tags_done = {p.config["tag"] for p in spec.points if p.run_id in done}
        counts["recomputed_finished"] += len(tags_done & {int(t) for t in starts})
        for f in out.rglob("*"):
            try:
                if f.suffix == ".parquet":
                    pd.read_parquet(f)
                elif f.suffix == ".json":
                    io.read_json(f)
            except Exception:
                counts["partial"] += 1
    return counts


def _sweep_quiet(spec: object, out: Path, q: object) -> None:
    try:
        _sweep(spec, out, "inline")
        q.put("ran")  # type: ignore[attr-defined]
    except store.FolderBusyError as err:
        q.put(f"refused: {err}")  # type: ignore[attr-defined]


def concurrent(root: Path, pairs: int) -> dict[str, int]:
    counts = {"pairs": 0, "both_ran": 0, "refused_naming_pid": 0, "points_computed_twice": 0,
              "other_grid_refused": 0, "sweep_json_changed": 0}
    for k in range(pairs):
        out, log = root / f"pair{k}", root / f"pair{k}.log"
        spec = _grid(log, list(range(6)), pause=0.02)
        q = CTX.Queue()
        procs = [CTX.Process(target=_sweep_quiet, args=(spec, out, q)) for _ in range(2)]
        for p in procs:
            p.start()
        results = [q.get(timeout=300) for _ in procs]
        for p in procs:
            p.join()
        counts["pairs"] += 1
        counts["both_ran"] += results.count("ran") == 2
        pids = {str(p.pid) for p in procs}
        counts["refused_naming_pid"] += any(r.startswith("refused") and any(
            f"process {pid}" in r for pid in pids) for r in results)
        starts = [ln.split()[1] for ln in log.read_text().splitlines()]
        counts["points_computed_twice"] += len(starts) - len(set(starts))
        meta = (out / "sweep.json").read_bytes()
        try:
            _sweep(_grid(log, [0, 1, 99]), out, "inline")
        except ValueError as err:
            counts["other_grid_refused"] += "another grid" in str(err)
        counts["sweep_json_changed"] += (out / "sweep.json").read_bytes() != meta
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--sweep-kills", type=int, default=8)
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="specdyn-faults-") as tmp:
        root = Path(tmp)
        rows = {
            "SIGKILL during a rerun into an existing folder": reruns(root / "runs", args.kills,
                                                                     rng),
            "failed (diverging) rerun": failed_rerun(root / "failed"),
            "SIGKILL of a local sweep, then resume": sweep_kills(root / "sweeps",
                                                                 args.sweep_kills, rng, "local"),
            "SIGKILL of an inline sweep, then resume": sweep_kills(
                root / "sweeps", args.sweep_kills, rng, "inline"),
            "two identical sweeps at once, then another grid": concurrent(root / "pairs",
                                                                          args.pairs),
        }
    for name, counts in rows.items():
        print(f"\n{name}")
        for key, value in counts.items():
            print(f"  {key:24s} {value}")
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
