"""Wall time of ``specdyn reproduce`` (quick sizes), quiet and beside a competing CPU job.

Runs ``specdyn reproduce NAMES --threads T --jobs J`` in a subprocess for each thread
setting (default: every core, which is torch's own default and the baseline,
against 1 and the automatic choice), each ``--jobs`` setting (default: 1, one
experiment after another, the baseline of the parallel default) and each condition:
quiet, and with ``--competitors`` busy processes (default: one per core) spinning
beside it.
Rounds interleave the settings, and the best of ``--rounds`` is kept per
experiment, so a setting is never compared against another measured at a
different moment of a shared machine's load. Per-experiment wall times come
from the run's ``claims.json``.

Prints a markdown table (experiment x setting x condition, seconds) with the
1-minute load average before each run, and the slowdown loaded / quiet of the
whole run; ``--json FILE`` also writes the raw numbers. The 3x target of
issue 15: the whole run beside a competing job no worse than 3 times quiet.

    python benchmarks/reproduce.py                      # all 16, ~10 min quiet on 2 cores
    python benchmarks/reproduce.py fig3 simulate --rounds 1
    python benchmarks/reproduce.py --threads 1 --jobs 1 auto   # parallel against sequential
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SPIN = "while True: pass"


def _run(names: list[str], threads: str, jobs: str, out: Path) -> dict[str, float]:
    cmd = [sys.executable, "-m", "specdyn", "reproduce", *names, "--out", str(out)]
    if threads != "auto":
        cmd += ["--threads", threads]
    if jobs != "auto":
        cmd += ["--jobs", jobs]
    env = {k: v for k, v in os.environ.items()
           if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                        "OMP_WAIT_POLICY")}
    start = time.perf_counter()
    subprocess.run(cmd, check=False, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    total = time.perf_counter() - start
    rec = json.loads((out / "claims.json").read_text())
    times = {r["experiment"]: float(r["wall_time_s"]) for r in rec["experiments"]}
    times["(whole run)"] = total
    return times


def main() -> None:
    cores = os.cpu_count() or 1
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("names", nargs="*", help="experiments (default: all)")
    p.add_argument("--threads", nargs="+", default=[str(cores), "1", "auto"],
                   help=f"thread settings to compare (default: {cores} 1 auto)")
    p.add_argument("--jobs", nargs="+", default=["1"],
                   help="--jobs settings to compare ('auto': the default, one per core)")
    p.add_argument("--competitors", type=int, default=cores,
                   help="busy processes beside the loaded runs (default: one per core)")
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--json", default=None, help="write the raw numbers here")
    args = p.parse_args()
    settings = [(th, jb) for th in args.threads for jb in args.jobs]
    best: dict[tuple[str, str], dict[str, float]] = {}
    loads: dict[tuple[str, str], float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for rnd in range(args.rounds):
            for cond in ("quiet", "loaded"):
                for th, jb in settings:
                    label = f"threads {th}, jobs {jb}"
                    spinners = ([subprocess.Popen([sys.executable, "-c", SPIN])
                                 for _ in range(args.competitors)] if cond == "loaded" else [])
                    try:
                        time.sleep(1.0 if spinners else 0.0)
                        loads[(label, cond)] = os.getloadavg()[0]
                        out = Path(tmp) / f"{rnd}-{cond}-{th}-{jb}"
                        got = _run(args.names, th, jb, out)
                    finally:
                        for sp in spinners:
                            sp.kill()
                            sp.wait()
                    key = (label, cond)
                    old = best.get(key, {})
                    best[key] = {n: min(v, old.get(n, float("inf"))) for n, v in got.items()}
                    print(f"round {rnd + 1}: {label}, {cond}: "
                          f"{got['(whole run)']:.1f} s (load {loads[key]:.2f})", flush=True)
    labels = [f"threads {th}, jobs {jb}" for th, jb in settings]
    keys = [(lb, c) for lb in labels for c in ("quiet", "loaded")]
    names = list(next(iter(best.values())))
    print(f"\n{cores} cores, {args.competitors} competing busy process(es) when loaded, "
          f"best of {args.rounds} round(s), seconds\n")
    print("| experiment | " + " | ".join(f"{lb}, {c}" for lb, c in keys) + " |")
    print("|---|" + "---|" * len(keys))
    for n in names:
        print(f"| {n} | " + " | ".join(f"{best[k].get(n, float('nan')):.1f}" for k in keys)
              + " |")
    print("| load before the run | " + " | ".join(f"{loads[k]:.2f}" for k in keys) + " |")
    for lb in labels:
        q, lo = best[(lb, "quiet")]["(whole run)"], best[(lb, "loaded")]["(whole run)"]
        print(f"\n{lb}: loaded / quiet = {lo / q:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"cores": cores, "competitors": args.competitors, "rounds": args.rounds,
             "best": {f"{lb}|{c}": v for (lb, c), v in best.items()},
             "load": {f"{lb}|{c}": v for (lb, c), v in loads.items()}}, indent=1))


if __name__ == "__main__":
    main()
