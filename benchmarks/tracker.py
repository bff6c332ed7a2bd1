"""Overhead of SpectrumTracker on a transformer's training, and its host memory per record.

Run:  python benchmarks/tracker.py [--window 20] [--records 4] [--rounds 2] [--skip-memory]

Model and data: ``examples/monitor_a_transformer.py`` (character-level transformer,
4 layers, 4 heads, width 128, context 64, batch 32, AdamW, text of
``pydoc_data.topics``). The tracker measures all 27 weight matrices (attention
Q, K, V split, out, feed-forward, embeddings, head) and 15 module outputs
(1024 tokens each), with fits, MP outlier tests and verdicts, streamed to
Parquet by its background thread.

1. Cost. Interleaved rounds (best of ``--rounds``) of ``--window`` training
   steps without the tracker and with it recording ``--records`` times in the
   window; the timed region ends after ``tracker.flush()``, so all background
   work is counted. Both wall time and process CPU time (all threads) are
   reported; on a shared machine CPU time is the robust one. The per-record
   cost is (tracked - plain) / records.
2. Projection. With the log schedule (10 records a decade) a run of T steps
   records ``~10 log10(T)`` times (41 at T = 1e4); overhead(T) =
   records(T) x per-record cost / (T x per-step cost), from the costs measured
   in 1 (marked as a projection).
3. Memory. Subprocesses record 25, 100 and 400 times (every step, a small MLP,
   spectra only, no fits) with ``out=DIR`` (streamed) and, for contrast, in
   memory; the peak resident set size (``ru_maxrss``) is printed: flat when streamed.

Prints markdown, with the load average.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from monitor_a_transformer import CharTransformer, load_text, train  # noqa: E402

from specdyn.measure import SpectrumTracker, log_schedule  # noqa: E402


def _round(data: torch.Tensor, vocab: int, window: int, records: int, track: bool,
           seed: int) -> tuple[float, float]:
    torch.manual_seed(0)
    model = CharTransformer(vocab)
    tracker = None
    if track:
        every = max(window // records, 1)
        sched = [i * every for i in range(records)]
        tracker = SpectrumTracker(model, schedule=sched, max_samples=1024, n_boot=50,
                                  out=tempfile.mkdtemp(prefix="specdyn-bench-"))
    w0, c0 = time.perf_counter(), time.process_time()
    train(model, data, window, tracker=tracker, seed=seed)
    if tracker is not None:
        tracker.flush()  # count every bit of background work inside the timed region
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    if tracker is not None:
        tracker.close()
    return wall, cpu


def _memory(n_records: int, streamed: bool) -> float:
    """Peak RSS (MB) of a subprocess that records ``n_records`` times."""
    code = f"""
import resource, tempfile, torch
from specdyn.measure import SpectrumTracker
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.ReLU(), torch.nn.Linear(256, 128))
out = tempfile.mkdtemp() if {streamed} else None
t = SpectrumTracker(m, schedule=1, out=out, fit=False, outliers=False, max_samples=512)
for i in range({n_records}):
    m(torch.randn(512, 128))
    t.step()
t.close()
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return float(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--window", type=int, default=20, help="training steps per timed run")
    ap.add_argument("--records", type=int, default=4, help="records inside a tracked window")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--skip-memory", action="store_true")
    args = ap.parse_args()
    data, chars = load_text()
    load0 = os.getloadavg()[0]
    _round(data, len(chars), 3, 1, True, seed=99)  # warm-up: imports, Tracy-Widom tables
    plain, tracked = [], []
    for r in range(args.rounds):  # interleaved, so both share the machine's load
        plain.append(_round(data, len(chars), args.window, args.records, False, seed=r))
        tracked.append(_round(data, len(chars), args.window, args.records, True, seed=r))
    load1 = os.getloadavg()[0]
    print(f"### SpectrumTracker on a char transformer (4 x 4 heads x 128, batch 32 x 64 "
          f"tokens), best of {args.rounds} interleaved rounds of {args.window} steps")
    print()
    print(f"| clock | plain (s) | tracked, {args.records} records (s) | per step (s) "
          "| per record (s) |")
    print("|---|---|---|---|---|")
    per = {}
    for i, clock in enumerate(("wall", "CPU (all threads)")):
        tp = min(p[i] for p in plain)
        tt = min(t[i] for t in tracked)
        per_step, per_rec = tp / args.window, max(tt - tp, 0.0) / args.records
        per[clock] = (per_step, per_rec)
        print(f"| {clock} | {tp:.1f} | {tt:.1f} | {per_step:.3f} | {per_rec:.3f} |")
    sched = log_schedule(10)
    print()
    print("| steps T | log-schedule records | projected overhead (wall) | projected (CPU) |")
    print("|---|---|---|---|")
    for T in (1_000, 10_000, 100_000):
        n = sum(1 for s in range(T) if sched(s))
        cells = [f"{100 * n * pr / (T * ps):.2f} %" for ps, pr in per.values()]
        print(f"| {T} | {n} | {cells[0]} | {cells[1]} |")
    print()
    print(f"load average {load0:.1f} -> {load1:.1f} on {os.cpu_count()} CPUs; "
          f"torch threads {torch.get_num_threads()}")
    if args.skip_memory:
        return
    print()
    print("| records | peak RSS, streamed to Parquet (MB) | peak RSS, in memory (MB) |")
    print("|---|---|---|")
    for n in (25, 100, 400):
        print(f"| {n} | {_memory(n, True):.0f} | {_memory(n, False):.0f} |")


if __name__ == "__main__":
    main()
