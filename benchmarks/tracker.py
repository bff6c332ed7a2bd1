"""Overhead of SpectrumTracker on training time (log schedule), against plain training.

Run:  python benchmarks/tracker.py [--steps 3000] [--width 256]

Trains an MLP (64 -> width -> width -> 10, ReLU, SGD, batch 128) on
scikit-learn's bundled digits data twice with the same seed, with and without
``SpectrumTracker(model)`` (log schedule: 10 records per decade of steps;
weights and activations of the three Linear layers, exponent fits and outlier
tests), and reports the measured overhead. Because a log schedule records
about ``10 log10(T)`` times, the overhead falls with the run length; the table
also projects it to longer runs from the measured per-step and per-record
costs (clearly marked as projections). Prints markdown.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import torch
from sklearn.datasets import load_digits

from specdyn.measure import SpectrumTracker, log_schedule


def _train(steps: int, width: int, track: bool, seed: int = 0
           ) -> tuple[float, int, float, float]:
    X, y = load_digits(return_X_y=True)
    X = torch.tensor(X / 16.0, dtype=torch.float32)
    y = torch.tensor(y)
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(64, width), torch.nn.ReLU(),
                                torch.nn.Linear(width, width), torch.nn.ReLU(),
                                torch.nn.Linear(width, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    gen = torch.Generator().manual_seed(seed)
    idx_all = torch.randint(0, len(X), (steps, 128), generator=gen)
    tracker = SpectrumTracker(model) if track else None
    in_tracker = 0.0  # time inside tracker.step(): the measurement work itself
    t0 = time.perf_counter()
    for it in range(steps):
        idx = idx_all[it]
        loss = torch.nn.functional.cross_entropy(model(X[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if tracker is not None:
            t1 = time.perf_counter()
            tracker.step()
            in_tracker += time.perf_counter() - t1
    elapsed = time.perf_counter() - t0
    n_rec = 0 if tracker is None else int(tracker.table()["step"].nunique())
    return elapsed, n_rec, float(loss.detach()), in_tracker


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    # Warm-up: imports, the Tracy-Widom interpolant (built once per process, ~1 s).
    _train(20, args.width, True)
    base, tracked, inrun, n_rec = [], [], [], 0
    for _ in range(args.repeat):  # alternate to share the machine's load fairly
        base.append(_train(args.steps, args.width, False)[0])
        t, n_rec, _, t_in = _train(args.steps, args.width, True)
        tracked.append(t)
        inrun.append((t_in, t - t_in))
    tb, tt = min(base), min(tracked)
    # In-run accounting (time inside tracker.step() over the rest of the same run) is
    # robust to load changes between runs; the A/B difference is not on a shared machine.
    t_in, t_rest = min(inrun, key=lambda r: r[0] / r[1])
    ov_inrun = t_in / t_rest
    per_step = t_rest / args.steps
    per_record = t_in / max(n_rec, 1)
    sched = log_schedule(10)

    def n_records(T: int) -> int:
        return sum(1 for s in range(T) if sched(s))

    print(f"### SpectrumTracker overhead (MLP 64-{args.width}-{args.width}-10 on digits, "
          f"batch 128, {os.environ.get('OMP_NUM_THREADS', 'default')} threads, "
          f"best of {args.repeat})")
    print()
    print("| steps | records | plain training (s) | with tracker (s) | overhead | kind |")
    print("|---|---|---|---|---|---|")
    print(f"| {args.steps} | {n_rec} | {tb:.2f} | {tt:.2f} | {100 * (tt - tb) / tb:.1f} % "
          "| measured, A/B runs |")
    print(f"| {args.steps} | {n_rec} | - | - | {100 * ov_inrun:.1f} % "
          "| measured, time in tracker.step() / rest of the run |")
    for T in (10_000, 100_000):
        proj_base = per_step * T
        proj_extra = per_record * n_records(T)
        print(f"| {T} | {n_records(T)} | {proj_base:.1f} | {proj_base + proj_extra:.1f} | "
              f"{100 * proj_extra / proj_base:.1f} % | projected from the in-run costs |")
    print()
    print(f"per step {1e3 * per_step:.2f} ms, per record {1e3 * per_record:.1f} ms "
          f"(6 spectra, fits and outlier tests)")
    print(f"plain-training time spread over repeats: {np.ptp(base) / tb * 100:.1f} % "
          f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
