"""Overhead of SpectrumTracker on a transformer's training, and its host memory per record.

Run:  python benchmarks/tracker.py [--window 20] [--records 4] [--rounds 2] [--skip-memory]

Model and data: ``examples/monitor_a_transformer.py`` (character-level transformer,
4 layers, 4 heads, width 128, context 64, batch 32, AdamW, text of
``pydoc_data.topics``). The tracker measures all 27 weight matrices (attention
Q, K, V split, out, feed-forward, embeddings, head) and 15 module outputs
(1024 tokens each), with fits, MP outlier tests and verdicts, streamed to
Parquet by its background thread.

1. Cost. One torch thread, so that the training's CPU time is the main
   thread's. Interleaved rounds (best of ``--rounds``) of ``--window`` training
   steps without the tracker and with it recording ``--records`` times in the
   window (``tracker.flush()`` inside the timed region). Measured: training CPU
   time per step (main thread, plain runs), CPU time inside ``tracker.step()``
   (copies, on the main thread), and the worker thread's CPU time per record
   (``tracker.measure_cpu_s``, spectra + fits + tests + Parquet). Thread CPU
   times are robust to other load on a shared machine; the wall-clock A/B
   difference is printed too, but on a loaded machine it is noise.
2. Projection. With the log schedule (10 records a decade) a run of T steps
   records ``~10 log10(T)`` times (38 in 1e4 steps); the overhead is
   records(T) x (worker CPU + step() CPU per record) / (T x training CPU per
   step): the CPU the tracker adds, which is what it costs in wall time when
   the training keeps every core busy (marked as a projection).
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

from specdyn import Schedule  # noqa: E402
from specdyn.measure import SpectrumTracker  # noqa: E402


class _Timed:
    """Wraps a tracker: main-thread CPU time spent inside ``step()``."""

    def __init__(self, tracker: SpectrumTracker) -> None:
        self.tracker, self.cpu = tracker, 0.0

    def step(self) -> None:
        t0 = time.thread_time()
        self.tracker.step()
        self.cpu += time.thread_time() - t0


def _round(data: torch.Tensor, vocab: int, window: int, records: int, track: bool,
           seed: int) -> dict[str, float]:
    torch.manual_seed(0)
    model = CharTransformer(vocab)
    timed = None
    if track:
        every = max(window // records, 1)
        sched = [i * every for i in range(records)]
        timed = _Timed(SpectrumTracker(model, schedule=sched, max_samples=1024, n_boot=50,
                                       out=tempfile.mkdtemp(prefix="specdyn-bench-")))
    w0, c0 = time.perf_counter(), time.thread_time()
    train(model, data, window, tracker=timed, seed=seed)  # type: ignore[arg-type]
    if timed is not None:
        timed.tracker.flush()  # count every bit of background work inside the timed region
    res = {"wall": time.perf_counter() - w0, "main_cpu": time.thread_time() - c0}
    if timed is not None:
        timed.tracker.close()
        res.update(step_cpu=timed.cpu, worker_cpu=timed.tracker.measure_cpu_s,
                   n=timed.tracker.n_records)
    return res


def _memory(n_records: int, streamed: bool) -> float:
    """Peak RSS (MB) of a subprocess that records ``n_records`` times."""
    code = f"""
import resource, tempfile, torch
from specdyn import Schedule
from specdyn.measure import SpectrumTracker
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.ReLU(), torch.nn.Linear(256, 128))
out = tempfile.mkdtemp() if {streamed} else None
t = SpectrumTracker(m, schedule=Schedule.every(1), out=out, fit=False, outliers=False,
                    max_samples=512)
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
    torch.set_num_threads(1)
    data, chars = load_text()
    load0 = os.getloadavg()[0]
    _round(data, len(chars), 3, 1, True, seed=99)  # warm-up: imports, Tracy-Widom tables
    plain, tracked = [], []
    for r in range(args.rounds):  # interleaved, so both share the machine's load
        plain.append(_round(data, len(chars), args.window, args.records, False, seed=r))
        tracked.append(_round(data, len(chars), args.window, args.records, True, seed=r))
    load1 = os.getloadavg()[0]
    step_cpu = min(p["main_cpu"] for p in plain) / args.window
    n = args.records
    rec_cpu = min(t["worker_cpu"] for t in tracked) / n
    copy_cpu = min(t["step_cpu"] for t in tracked) / n
    wall_p, wall_t = min(p["wall"] for p in plain), min(t["wall"] for t in tracked)
    print(f"### SpectrumTracker on a char transformer (4 layers x 4 heads x 128, batch 32 x 64 "
          f"tokens, 27 matrices + 15 outputs), best of {args.rounds} interleaved rounds of "
          f"{args.window} steps, 1 torch thread")
    print()
    print("| measured | CPU seconds |")
    print("|---|---|")
    print(f"| training, per step (main thread, plain runs) | {step_cpu:.3f} |")
    print(f"| tracker.step() at a recorded step (copies; main thread) | {copy_cpu:.4f} |")
    print(f"| worker, per record (42 spectra, fits, MP tests, Parquet) | {rec_cpu:.3f} |")
    print()
    print(f"wall clock, {args.window} steps: plain {wall_p:.1f} s, tracked ({n} records) "
          f"{wall_t:.1f} s ({100 * (wall_t - wall_p) / wall_p:+.0f} %; on a loaded machine "
          "this A/B difference is noise)")
    sched = Schedule.per_decade(10).predicate()
    print()
    print("| steps T | log-schedule records | projected overhead (CPU) |")
    print("|---|---|---|")
    for T in (1_000, 10_000, 100_000):
        nT = sum(1 for s in range(T) if sched(s))
        print(f"| {T} | {nT} | {100 * nT * (rec_cpu + copy_cpu) / (T * step_cpu):.2f} % |")
    print()
    print(f"load average {load0:.1f} -> {load1:.1f} on {os.cpu_count()} CPUs")
    if args.skip_memory:
        return
    print()
    print("| records | peak RSS, streamed to Parquet (MB) | peak RSS, in memory (MB) |")
    print("|---|---|---|")
    for n in (25, 100, 400):
        print(f"| {n} | {_memory(n, True):.0f} | {_memory(n, False):.0f} |")


if __name__ == "__main__":
    main()
