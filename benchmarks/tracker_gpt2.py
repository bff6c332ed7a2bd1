"""SpectrumTracker on a GPT-2-small-size transformer during training: A/B and per-record cost.

Run:  python benchmarks/tracker_gpt2.py --device cuda [--rounds 3] [--block 100] [--every 50]
      python benchmarks/tracker_gpt2.py --smoke          # tiny, on the CPU: the script works
      bash benchmarks/gpu_tracker.sh                       # with the other GPU measurements

Model: the ``CharTransformer`` of ``examples/monitor_a_transformer.py`` at GPT-2
small's size (12 pre-norm blocks, 12 heads, width 768, feed-forward 3072, a
50257-token vocabulary, 1024 positions, the head tied to the token embedding:
about 124M parameters, printed), AdamW, next-token loss on the text of
``pydoc_data.topics`` (its characters are the first ~100 token ids), ``--batch``
sequences of ``--seq`` tokens. Two copies from one initialisation train the same
batches: the *bare* arm (the floor: forward, backward, AdamW) and the *tracked*
arm with ``SpectrumTracker(model, schedule=Schedule.every(--every), out=DIR)``
(every weight matrix: Q, K, V split, out, feed-forward, embeddings, the tied head;
every module output, the 50257-wide logits by their top eigenvalues; default
settings otherwise). The arms alternate in blocks of ``--block`` steps, the order
swapped every round; a tracked block ends after ``tracker.flush()``, so all the
worker's work for the block is charged to it. Printed: each arm's best block
(best of ``--rounds``), the overhead ``best tracked / best bare - 1`` and over all
blocks, the per-record cost split as ``record_costs`` splits it (copy, spectra,
summaries, write; medians) and as a ratio to a bare training step, and the load
average. Writes ``--json``.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from monitor_a_transformer import CharTransformer, load_text, training_steps  # noqa: E402

from specdyn import Schedule  # noqa: E402
from specdyn.measure import SpectrumTracker  # noqa: E402

GPT2_SMALL = dict(width=768, layers=12, heads=12, vocab=50257, context=1024)
SMOKE = dict(width=64, layers=2, heads=2, vocab=1000, context=64, seq=32, batch=2, rounds=1,
             block=4, every=2, max_samples=128)


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def gpt2_small(args: argparse.Namespace) -> torch.nn.Module:
    """The GPT-2-small-size model (head tied to the token embedding), on ``args.device``."""
    torch.manual_seed(0)
    model = CharTransformer(args.vocab, width=args.width, heads=args.heads, layers=args.layers,
                            context=args.context)
    model.head.weight = model.tok.weight  # tied, as GPT-2's
    return model.to(args.device)


def run(args: argparse.Namespace) -> dict:
    data, _ = load_text()
    base = gpt2_small(args)
    n_params = sum(p.numel() for p in base.parameters())  # unique: the tied one once
    models = {"bare": base, "tracked": copy.deepcopy(base)}
    kw = dict(batch=args.batch, context=args.seq, seed=0, device=args.device)
    steps = {arm: training_steps(m, data, **kw) for arm, m in models.items()}
    out = Path(tempfile.mkdtemp(prefix="specdyn-gpt2-"))
    tracker = SpectrumTracker(models["tracked"], schedule=Schedule.every(args.every), out=out,
                              max_samples=args.max_samples)

    def block(arm: str) -> float:
        _sync(args.device)
        t0 = time.perf_counter()
        for _ in range(args.block):
            next(steps[arm])
            if arm == "tracked":
                tracker.step()
        if arm == "tracked":
            tracker.flush()
        _sync(args.device)
        return time.perf_counter() - t0

    load0 = os.getloadavg()[0]
    warm = {arm: block(arm) for arm in ("bare", "tracked")}  # kernels, allocator, helper
    times: dict[str, list[float]] = {"bare": [], "tracked": []}
    for r in range(args.rounds):
        for arm in (("bare", "tracked") if r % 2 == 0 else ("tracked", "bare")):
            times[arm].append(block(arm))
    tracker.close()
    costs = tracker.record_costs[1:] or tracker.record_costs  # the warm-up's first aside
    return {"times": times, "warm": warm, "n_params": n_params, "costs": costs,
            "n_records": tracker.n_records, "coalesced": len(tracker.coalesced),
            "layers": [len(tracker.matrices), len(tracker.sites)],
            "peak_pending_mb": tracker.peak_pending_bytes / 2**20,
            "load": [load0, os.getloadavg()[0]], "out": str(out)}


def report(res: dict, args: argparse.Namespace) -> dict:
    b, t = np.array(res["times"]["bare"]), np.array(res["times"]["tracked"])
    step_s = b.min() / args.block
    per_block = -(-args.block // args.every)
    over_best, over_all = 100 * (t.min() / b.min() - 1), 100 * (t.sum() / b.sum() - 1)
    parts = {k: float(np.median([c[k] for c in res["costs"]]))
             for k in ("copy_s", "spectra_s", "summaries_s", "write_s")}
    record_s = parts["spectra_s"] + parts["summaries_s"] + parts["write_s"]
    size = "a tiny transformer (--smoke: the script's check)" if args.smoke else \
        "a GPT-2-small-size transformer"
    print(f"### SpectrumTracker on {size} ({res['n_params'] / 1e6:.1f}M "
          f"parameters: {args.layers} layers x {args.heads} heads x {args.width}, vocabulary "
          f"{args.vocab}, tied head), batch {args.batch} x {args.seq} tokens, AdamW, device "
          f"{args.device}; {args.rounds} interleaved rounds of {args.block} steps an arm, a "
          f"record every {args.every} steps ({per_block} a block)")
    print()
    print("| arm | best block | per step | all blocks |")
    print("|---|---|---|---|")
    for name, x in (("bare (floor)", b), ("tracked", t)):
        print(f"| {name} | {x.min():.2f} s | {1e3 * x.min() / args.block:.1f} ms | "
              f"{x.sum():.1f} s |")
    print()
    print(f"overhead: **{over_best:+.1f} %** best of rounds ({over_all:+.1f} % over all blocks)")
    print(f"per record ({res['layers'][0]} matrices + {res['layers'][1]} module outputs, "
          f"median of {len(res['costs'])}): copy {parts['copy_s'] * 1e3:.1f} ms (training "
          f"thread), spectra {parts['spectra_s']:.2f} s, summaries {parts['summaries_s']:.2f} s, "
          f"write {parts['write_s']:.2f} s: {record_s:.2f} s = {record_s / step_s:.1f} bare "
          f"steps; copy = {parts['copy_s'] / step_s:.2f} bare steps")
    print(f"records {res['n_records']}, coalesced {res['coalesced']}, largest backlog "
          f"{res['peak_pending_mb']:.0f} MB; warm-up blocks (not counted) bare "
          f"{res['warm']['bare']:.1f} s, tracked {res['warm']['tracked']:.1f} s")
    print(f"load average {res['load'][0]:.1f} -> {res['load'][1]:.1f} on {os.cpu_count()} CPUs")
    out = {**res, "overhead_best_pct": over_best, "overhead_all_pct": over_all,
           "record_parts_s": parts, "record_in_bare_steps": record_s / step_s,
           "bare_step_s": step_s, "args": {k: str(v) if isinstance(v, Path) else v
                                           for k, v in vars(args).items()}}
    args.json.write_text(json.dumps(out, indent=1))
    print(f"\n(machine-readable: {args.json})")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--block", type=int, default=100, help="steps an arm runs per round")
    ap.add_argument("--every", type=int, default=50, help="a record every this many steps")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=256, help="tokens a sequence (<= context)")
    ap.add_argument("--max-samples", type=int, default=2048)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--json", type=Path, default=Path("tracker-gpt2-benchmark.json"))
    args = ap.parse_args()
    for k, val in GPT2_SMALL.items():
        setattr(args, k, val)
    if args.smoke:
        for k, val in SMOKE.items():
            setattr(args, k, val)
    for name in ("rounds", "block", "every", "batch", "seq", "max_samples", "threads"):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be a positive integer; got "
                     f"{getattr(args, name)}")
    if args.seq > args.context:
        ap.error(f"--seq must be at most the context ({args.context}); got {args.seq}")
    if args.device == "cuda" and not torch.cuda.is_available():
        ap.error("--device cuda: no CUDA device (use --smoke on a CPU)")
    if args.device == "cpu" and not args.smoke:
        ap.error("--device cpu: a GPT-2-small-size model needs a GPU (--smoke runs a tiny one "
                 "on the CPU)")
    torch.set_num_threads(args.threads)
    report(run(args), args)


if __name__ == "__main__":
    main()
