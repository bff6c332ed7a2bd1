"""Overhead of SpectrumTracker inside a transformer's training loop, and its host memory.

Run:  python benchmarks/tracker.py [--steps 10000] [--block 250] [--batch 4] [--context 64]
      python benchmarks/tracker.py --memory-only
      python benchmarks/tracker.py --wide --record-only [--rounds 3]   # per-record cost table
      bash benchmarks/gpu_tracker.sh                                 # the same on a lent GPU

``--wide``: the width-512, 8-layer, 8-head ``CharTransformer`` of the example,
batch 64 x 64 tokens, AdamW (issue 31's model; ``--width/--layers/--heads/--batch``
override it). ``--device cuda`` runs model, copies and spectra there.

1. Time inside the training loop, A/B. Model, data and update:
   ``examples/monitor_a_transformer.py`` (imported: character-level transformer,
   4 layers, 4 heads, width 128, AdamW, text of ``pydoc_data.topics``). Two
   copies of the model from the same initialisation, each with its own
   optimizer and the same batches, train ``--steps`` steps each: the "bare"
   arm is the plain loop (the floor: forward, backward, AdamW step), the
   "tracked" arm is the same loop with ``SpectrumTracker(model, out=DIR)``
   attached on the log schedule (10 records a decade: 41 records in 1e4 steps)
   measuring all 27 weight matrices (Q, K, V split, out, feed-forward,
   embeddings, head) and 15 module outputs, with fits, MP outlier tests,
   verdicts and Parquet, in its background thread (fits and tests in its
   helper process, ``summary_process=True``). The arms alternate in
   blocks of ``--block`` steps (order swapped every round), so the machine's
   load hits both equally. A tracked block's time ends after
   ``tracker.flush()``: all the worker's work for the block is charged to the
   block (conservative: it cannot hide in the next, bare block). One torch
   thread (``--threads``); the worker may use another core if one is free.
   Printed: per-arm loop time, the overhead with a bootstrap interval over
   rounds, the spread of rounds without a record (the A/B noise floor plus the
   hooks' cost), and the CPU time the tracker adds (main thread, worker).
2. Memory (``--memory`` / ``--memory-only``). Subprocesses record a wide MLP
   (two 512 x 512 layers, 1024 samples, full spectra kept: ~2050 rows a
   record, fits off) 25, 100, 400 times, streamed (``out=DIR``) and in memory
   (``out=None``: rows kept in a list). Printed: the peak of the tracker's
   Python allocations (``tracemalloc``, started after the imports) and the peak
   resident set size (``ru_maxrss``).

3. Cost of one record (``--record-cost`` / ``--record-only``) through
   ``SpectrumTracker.record()`` (``background=False``, summaries in the thread),
   split as the tracker's ``record_costs`` split it: the copy (the weights'
   clones, plus the extra time of a forward pass with the hooks armed: the
   module outputs' clones), the decomposition, the summaries (fits and tests)
   and the write (one Parquet file). Two arms on the *same* model and batch in
   the same run: the reference (:func:`_reference_spectra`, put in place of
   ``batched_gram_eigenvalues`` in the module of a record's math,
   ``measure._tracker_measure``: the code path before issue 31, one
   ``gram_eigenvalues(X, precision="auto")`` per matrix, float64 on a CPU, with
   no a-posteriori precision check) and this code (``batched_gram_eigenvalues``: one batched float32
   ``eigvalsh`` per shape, float64 where the range needs it, a Linear's output
   projected on its range of rank ``d_in`` first, a widening Linear's output
   taken from its kept input and weight, ``spectra.linear_output_eigenvalues``).
   Best of ``--rounds`` interleaved rounds after a warm-up round; the machine's load average
   (``os.getloadavg``) before and after; the largest ``|delta lambda|`` between
   the arms' eigenvalues, relative to each spectrum's largest.

Prints markdown with the load average; writes ``--json`` (default
``tracker-benchmark.json``) beside it.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from monitor_a_transformer import (  # noqa: E402
    CharTransformer,
    batches,
    load_text,
    training_steps,
)

from specdyn import Schedule  # noqa: E402
from specdyn._progress import progress  # noqa: E402
from specdyn.measure import SpectrumTracker  # noqa: E402
from specdyn.measure.spectra import gram_eigenvalues  # noqa: E402


def _model(args: argparse.Namespace, vocab: int) -> torch.nn.Module:
    return CharTransformer(vocab, width=args.width, heads=args.heads, layers=args.layers,
                           context=args.context).to(args.device)


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _ab(args: argparse.Namespace) -> dict:
    data, chars = load_text()
    torch.manual_seed(0)
    bare_model = _model(args, len(chars))
    tracked_model = copy.deepcopy(bare_model)
    kw = dict(batch=args.batch, context=args.context, seed=0, device=args.device)
    bare, tracked = training_steps(bare_model, data, **kw), training_steps(tracked_model, data,
                                                                          **kw)
    out = tempfile.mkdtemp(prefix="specdyn-bench-tracker-")
    tracker = SpectrumTracker(tracked_model, out=out, max_samples=args.max_samples, n_boot=50,
                              policy=args.policy)
    sched = Schedule.per_decade(10).predicate()

    def run_bare(n: int) -> tuple[float, float]:
        w0, c0 = time.perf_counter(), time.thread_time()
        for _ in range(n):
            next(bare)
        _sync(args.device)
        return time.perf_counter() - w0, time.thread_time() - c0

    def run_tracked(n: int) -> tuple[float, float]:
        w0, c0 = time.perf_counter(), time.thread_time()
        for _ in range(n):
            next(tracked)
            tracker.step()
        tracker.flush()
        _sync(args.device)
        return time.perf_counter() - w0, time.thread_time() - c0

    # Warm-up on a throwaway copy (kernels, allocator, the tracker's lazy imports and
    # tables), so that neither arm pays the process's one-time costs.
    warm_model = copy.deepcopy(bare_model)
    w0 = time.perf_counter()
    with SpectrumTracker(warm_model, schedule=[0, 2], max_samples=args.max_samples,
                         n_boot=50) as warm:
        for _ in zip(range(3), training_steps(warm_model, data, **kw), strict=False):
            warm.step()
    warm_s = time.perf_counter() - w0
    rounds = []
    starts = range(0, args.steps, args.block)
    for r, s0 in enumerate(progress(starts, total=len(starts), desc="A/B rounds")):
        n = min(args.block, args.steps - s0)
        cpu_w0 = tracker.measure_cpu_s
        if r % 2 == 0:
            bw, bc = run_bare(n)
            tw, tc = run_tracked(n)
        else:
            tw, tc = run_tracked(n)
            bw, bc = run_bare(n)
        rounds.append({"start": s0, "steps": n, "records": sum(sched(s) for s in range(s0, s0 + n)),
                       "bare_s": bw, "tracked_s": tw, "bare_cpu_s": bc, "tracked_cpu_s": tc,
                       "worker_cpu_s": tracker.measure_cpu_s - cpu_w0})
    tracker.close()
    return {"rounds": rounds, "n_records": tracker.n_records, "out": out, "warm_s": warm_s,
            "peak_pending_mb": tracker.peak_pending_bytes / 2**20,
            "coalesced": len(tracker.coalesced),
            "layers": [len(tracker.matrices), len(tracker.sites)]}


def _bootstrap(bare: np.ndarray, tracked: np.ndarray, n: int = 2000) -> tuple[float, float]:
    rng = np.random.default_rng(0)
    idx = rng.integers(0, bare.size, size=(n, bare.size))
    ratios = tracked[idx].sum(axis=1) / bare[idx].sum(axis=1) - 1
    lo, hi = np.percentile(100 * ratios, [2.5, 97.5])
    return float(lo), float(hi)


def _report_ab(res: dict, args: argparse.Namespace, load: tuple[float, float]) -> dict:
    R = res["rounds"]
    b = np.array([r["bare_s"] for r in R])
    t = np.array([r["tracked_s"] for r in R])
    rec = np.array([r["records"] for r in R])
    over = 100 * (t.sum() / b.sum() - 1)
    lo, hi = _bootstrap(b, t)
    quiet = 100 * (t[rec == 0] / b[rec == 0] - 1)
    steps = int(sum(r["steps"] for r in R))
    worker = sum(r["worker_cpu_s"] for r in R)
    main_extra = sum(r["tracked_cpu_s"] - r["bare_cpu_s"] for r in R)
    print(f"### SpectrumTracker inside the training loop: char transformer ({args.layers} "
          f"layers x {args.heads} heads x {args.width}), batch {args.batch} x {args.context} "
          f"tokens, {steps} steps an arm, {len(R)} interleaved rounds of {args.block} steps, "
          f"{args.threads} torch thread(s), device {args.device}, policy {args.policy}")
    print()
    print("| arm | loop time | per step | records |")
    print("|---|---|---|---|")
    print(f"| bare (floor: forward, backward, AdamW) | {b.sum():.1f} s | "
          f"{1e3 * b.sum() / steps:.1f} ms | 0 |")
    print(f"| tracked, log schedule ({res['layers'][0]} matrices + {res['layers'][1]} outputs) "
          f"| {t.sum():.1f} s | {1e3 * t.sum() / steps:.1f} ms | {res['n_records']} |")
    print()
    print(f"overhead: **{over:+.2f} %** (bootstrap 95 % over rounds [{lo:+.2f}, {hi:+.2f}] %)")
    if quiet.size:
        q10, q50, q90 = np.percentile(quiet, [10, 50, 90])
        print(f"rounds without a record ({quiet.size}): tracked/bare - 1 median {q50:+.2f} %, "
              f"10-90 % [{q10:+.2f}, {q90:+.2f}] % (noise floor + hooks)")
    bare_cpu = sum(r["bare_cpu_s"] for r in R)  # the bare arm's training-thread CPU
    print(f"CPU the tracker added: worker (thread + summary process) {worker:.1f} s "
          f"({worker / max(res['n_records'], 1):.2f}"
          f" s a record, {100 * worker / bare_cpu:.2f} % of the bare arm's {bare_cpu:.3g} CPU-s)"
          f", training thread {main_extra:+.1f} s ({100 * main_extra / bare_cpu:+.2f} %)")
    print()
    print("| steps | records | bare | tracked | overhead |")
    print("|---|---|---|---|---|")
    edges = [0, 100, 1000, 10 ** 9]
    for e0, e1 in zip(edges[:-1], edges[1:], strict=True):
        sel = [i for i, r in enumerate(R) if e0 <= r["start"] < e1]
        if not sel:
            continue
        bs, ts = b[sel].sum(), t[sel].sum()
        last = min(R[sel[-1]]["start"] + R[sel[-1]]["steps"], steps)
        print(f"| {R[sel[0]]['start']}-{last - 1} | {int(rec[sel].sum())} | {bs:.1f} s | "
              f"{ts:.1f} s | {100 * (ts / bs - 1):+.2f} % |")
    print()
    print(f"one-time warm-up (imports, first records; outside both arms): {res['warm_s']:.1f} s")
    print(f"largest backlog of queued copies: {res['peak_pending_mb']:.1f} MB; records "
          f"coalesced (policy='coalesce': replaced while waiting): {res['coalesced']}")
    print(f"load average {load[0]:.1f} -> {load[1]:.1f} on {os.cpu_count()} CPUs")
    return {"overhead_pct": over, "overhead_ci95_pct": [lo, hi], "bare_s": float(b.sum()),
            "tracked_s": float(t.sum()), "records": res["n_records"], "steps": steps,
            "worker_cpu_s": worker, "main_cpu_extra_s": main_extra, "bare_cpu_s": bare_cpu,
            "quiet_rounds_pct": quiet.tolist(), "peak_pending_mb": res["peak_pending_mb"],
            "rounds": R, "load": list(load), "coalesced": res["coalesced"],
            "model": [args.layers, args.heads, args.width], "device": args.device,
            "batch": args.batch, "context": args.context, "block": args.block,
            "threads": args.threads}


def _reference_spectra(mats: list[torch.Tensor], centers: list[bool], *,
                       ranks: list[int | None] | None = None,
                       start64: list[bool] | None = None,
                       precision: str = "auto") -> list[np.ndarray]:
    """The decomposition before issue 31: one ``gram_eigenvalues`` a matrix, float64 on a CPU.

    What ``SpectrumTracker._eigs`` did for every matrix up to ``max_dense``
    (``precision="auto"``: float32 first only on an accelerator), kept here as
    the fixed reference the per-record table is timed against; it takes the
    place of ``batched_gram_eigenvalues`` in ``measure._tracker_measure`` for the
    reference arm (``ranks``, ``start64`` and ``precision`` ignored, as the old
    path had none of them).
    """
    return [gram_eigenvalues(X, center=c, precision="auto") for X, c in zip(mats, centers,
                                                                            strict=True)]


def _record_cost(args: argparse.Namespace) -> dict:
    """One record of the model through SpectrumTracker, part by part, reference and this code."""
    from specdyn.measure import _tracker_measure as record_math

    data, chars = load_text()
    torch.manual_seed(0)
    model = _model(args, len(chars))
    it = training_steps(model, data, batch=args.batch, context=args.context, seed=0,
                        device=args.device)
    for _ in range(args.warm_steps):  # a few updates: not the spectra of the initialisation
        next(it)
    x, _ = next(batches(data, args.batch, args.context, 1))
    x = x.to(args.device)
    tr = SpectrumTracker(model, schedule=lambda s: False, background=False,
                         out=Path(tempfile.mkdtemp(prefix="specdyn-bench-record-")),
                         summary_process=False, n_boot=50, max_samples=args.max_samples,
                         precision=args.precision)
    batched = record_math.batched_gram_eigenvalues

    def forward(armed: bool) -> tuple[float, float]:
        if armed:
            tr.arm()
        _sync(args.device)
        t0, c0 = time.perf_counter(), time.thread_time()
        with torch.no_grad():
            model(x)
        _sync(args.device)
        return time.perf_counter() - t0, time.thread_time() - c0

    keys = ("copy", "decomposition", "summaries", "write")
    parts: dict[str, dict[str, list[float]]] = {  # wall seconds; "<part>_cpu": CPU seconds
        k: {p: [] for p in keys + tuple(f"{q}_cpu" for q in keys)}
        for k in ("reference", "new")}
    eigs: dict[str, pd.DataFrame] = {}
    redone: list[int] = []  # float32 spectra redone in float64 (a posteriori), per round
    # round -1: warm-up (lazy imports, kernels, allocator), not counted
    for r in progress(range(-1, args.rounds), total=args.rounds + 1, desc="record rounds"):
        for arm in (("reference", "new") if r % 2 == 0 else ("new", "reference")):
            swap: Any = _reference_spectra if arm == "reference" else batched
            record_math.batched_gram_eigenvalues = swap
            # the reference kept every module's output; this code keeps the input (and
            # weight) of a widening Linear (``_tracker_hooks.takes_input``)
            tr._hooks.inputs = arm != "reference"
            # ... and had no a-posteriori precision check (nor its redo in float64)
            tr._math.precision = "float64" if arm == "reference" else args.precision
            try:
                bare_s = forward(False)
                hooked_s = forward(True)           # the hooks clone the module outputs
                tr.record()                        # copies the weights, then measures
            finally:
                record_math.batched_gram_eigenvalues = batched
            tr.step()
            c = tr.record_costs[-1]
            if r < 0:
                continue
            if arm == "new":
                redone.append(int(c.get("redone_float64", 0)))
            for k, val in (("copy", c["copy_s"] + max(hooked_s[0] - bare_s[0], 0.0)),
                           ("copy_cpu", c["copy_s"] + max(hooked_s[1] - bare_s[1], 0.0)),
                           ("decomposition", c["spectra_s"]),
                           ("decomposition_cpu", c["spectra_cpu_s"]),
                           ("summaries", c["summaries_s"]),
                           ("summaries_cpu", c["summaries_cpu_s"]),
                           ("write", c["write_s"]), ("write_cpu", c["write_cpu_s"])):
                parts[arm][k].append(val)
            if r == 0:
                df = tr.table()
                eigs[arm] = df[(df.step == df.step.max())
                               & df.quantity.str.endswith("_eigenvalue")].reset_index(drop=True)
    tr.close()
    a, b = eigs["new"], eigs["reference"]
    top = b.groupby(["layer", "quantity"])["value"].transform("max").to_numpy()
    agree = float(np.max(np.abs(a["value"].to_numpy() - b["value"].to_numpy()) / top))
    return {"parts": parts, "agree": agree, "redone": redone,
            "n_matrices": len(tr.matrices) + len(tr.sites)}


def _report_record(res: dict, args: argparse.Namespace, load: tuple[float, float]) -> dict:
    best = {arm: {k: min(v) for k, v in d.items()} for arm, d in res["parts"].items()}
    keys = ("copy", "decomposition", "summaries", "write")
    tot = {arm: sum(b[k] for k in keys) for arm, b in best.items()}
    cpu = {arm: sum(b[f"{k}_cpu"] for k in keys) for arm, b in best.items()}
    print(f"### One record: char transformer ({args.layers} layers x {args.heads} heads x "
          f"{args.width}), batch {args.batch} x {args.context} tokens, {res['n_matrices']} "
          f"matrices, device {args.device}, {args.threads} torch thread(s), best of "
          f"{args.rounds} interleaved rounds")
    print()
    print("| part | reference (before issue 31): wall | CPU | this code: wall | CPU |")
    print("|---|---|---|---|---|")
    for k in keys:
        r, n = best["reference"], best["new"]
        print(f"| {k} | {r[k]:.3f} s | {r[k + '_cpu']:.3f} s | {n[k]:.3f} s | "
              f"{n[k + '_cpu']:.3f} s |")
    print(f"| **total** | **{tot['reference']:.2f} s** | **{cpu['reference']:.2f} s** | "
          f"**{tot['new']:.2f} s** | **{cpu['new']:.2f} s** |")
    print()
    print(f"this code against the reference: {tot['reference'] / tot['new']:.1f}x cheaper in "
          f"wall time, {cpu['reference'] / cpu['new']:.1f}x in CPU time (the measure on a "
          "loaded CPU; on a GPU the wall time is); largest |delta lambda| / lambda_1 between "
          f"the two: {res['agree']:.1e}")
    print(f"matrices redone in float64 after a float32 try, per round: {res['redone']}")
    print(f"load average {load[0]:.1f} -> {load[1]:.1f} on {os.cpu_count()} CPUs")
    return {"best": best, "redone": res["redone"], "total_wall": tot, "total_cpu": cpu,
            "speedup_wall": tot["reference"] / tot["new"],
            "speedup_cpu": cpu["reference"] / cpu["new"],
            "agree": res["agree"], "rounds": res["parts"], "load": list(load)}


_MEMORY = """
import resource, sys, tempfile, tracemalloc, torch
from specdyn.measure import SpectrumTracker
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512))
out = tempfile.mkdtemp() if sys.argv[2] == "streamed" else None
t = SpectrumTracker(m, schedule=lambda s: True, out=out, fit=False, outliers=False,
                    max_samples=1024)
x = torch.randn(1024, 512)
m(x); t.step(); t.flush()  # warm-up record: lazy imports and caches are not the tracker's rows
tracemalloc.start()
for i in range(int(sys.argv[1])):
    m(x)
    t.step()
t.flush()
cur, peak = tracemalloc.get_traced_memory()
t.close()
print(peak / 2**20, cur / 2**20, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def _memory(n_records: int, mode: str) -> list[float]:
    """(tracemalloc peak, tracemalloc at the end, peak RSS), MB, of a subprocess."""
    res = subprocess.run([sys.executable, "-c", _MEMORY, str(n_records), mode],
                         capture_output=True, text=True, check=True)
    return [float(x) for x in res.stdout.strip().splitlines()[-1].split()]


def _report_memory() -> dict:
    print("### Host memory against records: wide MLP (2 x 512 x 512, 1024 samples, full "
          "spectra, ~2050 rows a record)")
    print()
    print("| records | streamed: traced peak | streamed: peak RSS | in memory: traced peak | "
          "in memory: held at end | in memory: peak RSS |")
    print("|---|---|---|---|---|---|")
    out = {}
    for n in progress((25, 100, 400), total=3, desc="memory"):
        s, m = _memory(n, "streamed"), _memory(n, "memory")
        out[n] = {"streamed": s, "memory": m}
        print(f"| {n} | {s[0]:.1f} MB | {s[2]:.0f} MB | {m[0]:.1f} MB | {m[1]:.1f} MB | "
              f"{m[2]:.0f} MB |")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=10_000, help="training steps an arm")
    ap.add_argument("--block", type=int, default=250, help="steps an arm runs per round")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--context", type=int, default=64, help="tokens per sequence (<= 64)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads")
    ap.add_argument("--wide", action="store_true",
                    help="issue 31's model: width 512, 8 layers, 8 heads, batch 64")
    ap.add_argument("--width", type=int, default=None, help="model width (default 128)")
    ap.add_argument("--layers", type=int, default=None, help="blocks (default 4)")
    ap.add_argument("--heads", type=int, default=None, help="attention heads (default 4)")
    ap.add_argument("--device", default="cpu", help="cpu or cuda")
    ap.add_argument("--policy", default="coalesce", choices=("coalesce", "block"))
    ap.add_argument("--precision", default="auto", choices=("auto", "float64"))
    ap.add_argument("--max-samples", type=int, default=None,
                    help="activation rows a record (default 1024; --wide: 2048)")
    ap.add_argument("--record-cost", action="store_true", help="also the per-record table")
    ap.add_argument("--record-only", action="store_true", help="only the per-record table")
    ap.add_argument("--rounds", type=int, default=3, help="per-record rounds (best of)")
    ap.add_argument("--warm-steps", type=int, default=3,
                    help="training steps before the per-record table")
    ap.add_argument("--memory", action="store_true", help="also the memory table")
    ap.add_argument("--memory-only", action="store_true")
    ap.add_argument("--json", type=Path, default=Path("tracker-benchmark.json"))
    args = ap.parse_args()
    wide = dict(width=512, layers=8, heads=8, max_samples=2048) if args.wide else {}
    for name, small in (("width", 128), ("layers", 4), ("heads", 4), ("max_samples", 1024)):
        if getattr(args, name) is None:
            setattr(args, name, wide.get(name, small))
    if args.wide and "--batch" not in sys.argv:
        args.batch = 64
    for name in ("steps", "block", "batch", "context", "threads", "width", "layers", "heads",
                 "max_samples", "rounds"):
        if getattr(args, name) < 1:
            ap.error(f"--{name} must be a positive integer; got {getattr(args, name)}")
    if args.context > 64:
        ap.error(f"--context must be at most 64 (the model's context); got {args.context}")
    torch.set_num_threads(args.threads)
    record: dict = {}
    if args.record_cost or args.record_only:
        load0 = os.getloadavg()[0]
        res = _record_cost(args)
        record["record"] = _report_record(res, args, (load0, os.getloadavg()[0]))
        print()
    if not (args.memory_only or args.record_only):
        load0 = os.getloadavg()[0]
        res = _ab(args)
        record["ab"] = _report_ab(res, args, (load0, os.getloadavg()[0]))
    if args.memory or args.memory_only:
        print()
        record["memory"] = _report_memory()
    args.json.write_text(json.dumps(record, indent=1))
    print(f"\n(machine-readable: {args.json})")


if __name__ == "__main__":
    main()
