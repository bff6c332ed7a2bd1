"""Sweep executors: scaling of a 64-point sweep from 1 to 2 workers, and per-point overhead.

Every point is a small ``simulate`` run (infinite width, population GD, D = 32).
Baseline: the experiment function called directly in a loop in this process
(no records, no tables, no processes), measured in the same run. Reported:

- wall time of the whole sweep per executor and worker count;
- speed-up of 2 workers over 1 against the ideal 2 (the machine's load average
  is printed: on a shared machine the ideal is not reachable);
- per-point overhead ``(sweep wall - direct wall) / points`` with 1 worker,
  i.e. what the executor, the Parquet table and the JSON record cost per point.

Every time is the minimum over ``--repeat`` runs. On a machine shared with
other work the numbers move by a factor 2-3 from run to run; measure on a
quiet machine.

Run: ``python benchmarks/sweep.py [--points 64] [--steps 300] [--repeat 3] [--no-dask]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from specdyn.runs import get
from specdyn.runs.config import build_config
from specdyn.runs.spec import make_sweep
from specdyn.runs.sweep import run_sweep


def _spec(points: int, steps: int):
    n_ratio = 8
    return make_sweep(
        "simulate",
        {"sigma_w": {"log": [0.05, 2.0], "num": n_ratio},
         "gamma0_ratio": {"log": [0.03, 30.0], "num": points // n_ratio}},
        base={"D": 32, "N": None, "steps": steps, "checkpoints": 20, "figure": False},
    )


def _direct(spec) -> float:
    exp = get("simulate")
    start = time.perf_counter()
    for p in spec.points:
        cfg: object = build_config(exp.config_cls, p.config, lambda key: "benchmark")
        with tempfile.TemporaryDirectory() as tmp:
            exp.run(cfg, Path(tmp))
    return time.perf_counter() - start


def _sweep(spec, executor: str, workers: int) -> float:
    out = Path(tempfile.mkdtemp(prefix=f"specdyn-bench-{executor}{workers}-"))
    try:
        start = time.perf_counter()
        report = run_sweep(spec, out, executor=executor, workers=workers, progress=False)
        wall = time.perf_counter() - start
        if report.finished != len(spec.points):
            raise RuntimeError(f"{report.failed} points failed in {out}")
        return wall
    finally:
        shutil.rmtree(out, ignore_errors=True)


def _row(spec, tiny, executor: str, workers: int, repeat: int) -> tuple[float, float]:
    """(wall of the sweep, start-up: wall of a sweep of ``workers`` one-step points).

    Each is the minimum over ``repeat`` runs: other load only ever adds time.
    """
    startup = min(_sweep(tiny(workers), executor, workers) for _ in range(repeat))
    return min(_sweep(spec, executor, workers) for _ in range(repeat)), startup


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=64)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--no-dask", action="store_true")
    ap.add_argument("--repeat", type=int, default=3,
                    help="runs per measurement; the minimum is reported (default 3)")
    args = ap.parse_args()
    rep = max(1, args.repeat)
    spec = _spec(args.points, args.steps)
    n = len(spec.points)

    def tiny(w: int):
        return make_sweep("simulate", {"sigma_w": [0.1 * (i + 1) for i in range(w)]},
                          base={"D": 8, "kmax": 4, "N": None, "steps": 1,
                                "checkpoints": 2, "figure": False})

    _direct(_spec(8, 10))  # warm-up: imports (torch) and caches outside the timings
    print(f"{n} points of 'simulate' (D=32, N=inf, {args.steps} GD steps each); "
          f"cpus={os.cpu_count()}, load average before: {os.getloadavg()[0]:.2f}")
    direct = min(_direct(spec) for _ in range(rep))
    rows = [("direct call (baseline)", 1, direct, 0.0)]
    rows.append(("inline (records + tables)", 1,
                 min(_sweep(spec, "inline", 1) for _ in range(rep)), 0.0))
    executors = [("local process pool", "local")]
    if not args.no_dask:
        executors.append(("dask LocalCluster", "dask"))
    for name, ex in executors:
        for w in (1, 2):
            rows.append((name, w, *_row(spec, tiny, ex, w, rep)))
    print("\nstart-up: wall of a sweep of `workers` one-step points (pool/cluster start, "
          "worker imports);\nnet = wall - start-up; overhead/pt = (net - direct) / points; "
          "speed-up = net(1 worker) / net(2 workers)")
    print(f"\n{'executor':26s} {'workers':>7s} {'wall s':>7s} {'start-up s':>10s} "
          f"{'net s':>6s} {'net/pt ms':>9s} {'overhead/pt ms':>14s} {'speed-up':>8s} "
          f"{'ideal':>5s}")
    by = {(name, w): t - su for name, w, t, su in rows}
    for name, w, t, su in rows:
        net = t - su
        over = (net - direct) / n * 1e3 if w == 1 else float("nan")
        one = by.get((name, 1))
        speed = one / net if (one is not None and w > 1) else float("nan")
        ideal = f"{w:5d}" if w > 1 else "    -"
        print(f"{name:26s} {w:7d} {t:7.2f} {su:10.2f} {net:6.2f} {net / n * 1e3:9.1f} "
              f"{over:14.1f} {speed:8.2f} {ideal}")
    print(f"\nload average after: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs "
          "(other processes on the machine take CPU from the workers)")


if __name__ == "__main__":
    main()
