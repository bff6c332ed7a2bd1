"""Overhead of SpectrumTracker under DistributedDataParallel, A/B against the bare DDP run.

Run:  python benchmarks/tracker_ddp.py [--nproc 2] [--rounds 4] [--block 40] [--every 20]
      torchrun --nproc_per_node N benchmarks/tracker_ddp.py --device cuda   # one GPU a rank

The model and update of ``examples/monitor_a_transformer.py`` (character-level
transformer, ``--layers`` x ``--heads`` x ``--width``, AdamW, the text of
``pydoc_data.topics``), each rank its own batches (``--batch`` sequences of
``--context`` tokens). Every rank holds two copies of the model from one
initialisation, each in its own DDP: the *bare* arm trains one, the *tracked* arm
the other with ``SpectrumTracker(model, schedule=Schedule.every(--every),
out=DIR)`` (rank 0 writes; module outputs over the global batch, weights on rank 0).
The arms alternate in blocks of ``--block`` steps, the order swapped every round,
so the machine's load hits both alike. A block's time is rank 0's wall time
between two barriers; a tracked block ends after ``tracker.flush()`` on every
rank, so all the tracker's work for the block (the ranks' reductions, rank 0's
spectra, fits and Parquet) is charged to it. Printed: each arm's best block
(best of the rounds) and the overhead ``best tracked / best bare - 1``, the
same over the totals, the records a block, and the load average before and
after. Without torchrun's variables the script spawns ``--nproc`` ranks itself
(gloo on the CPU, one torch thread each). Writes ``--json``.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import socket
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from monitor_a_transformer import CharTransformer, load_text, training_steps  # noqa: E402

from specdyn import Schedule  # noqa: E402
from specdyn.measure import SpectrumTracker  # noqa: E402


def _rank_main(rank: int, world: int, args: argparse.Namespace) -> None:
    cuda = args.device == "cuda"
    if cuda:
        torch.cuda.set_device(rank % torch.cuda.device_count())
    dist.init_process_group("nccl" if cuda else "gloo", rank=rank, world_size=world)
    torch.set_num_threads(args.threads)
    from torch.nn.parallel import DistributedDataParallel

    device = f"cuda:{torch.cuda.current_device()}" if cuda else "cpu"
    data, chars = load_text()
    torch.manual_seed(0)
    base = CharTransformer(len(chars), width=args.width, heads=args.heads, layers=args.layers,
                           context=args.context).to(device)
    models = {arm: copy.deepcopy(base) for arm in ("bare", "tracked")}
    ddp = {arm: DistributedDataParallel(m, device_ids=[device] if cuda else None)
           for arm, m in models.items()}
    kw = dict(batch=args.batch, context=args.context, seed=1000 * rank, device=device)
    steps = {arm: training_steps(net, data, **kw) for arm, net in ddp.items()}
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="specdyn-ddp-"))
    tracker = SpectrumTracker(models["tracked"], schedule=Schedule.every(args.every), out=out,
                              overwrite=True, n_boot=args.n_boot, max_samples=args.max_samples)

    def block(arm: str) -> float:
        dist.barrier()
        if cuda:
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(args.block):
            next(steps[arm])
            if arm == "tracked":
                tracker.step()
        if arm == "tracked":
            tracker.flush()
        if cuda:
            torch.cuda.synchronize()
        dist.barrier()
        return time.perf_counter() - t0

    load0 = os.getloadavg()[0]
    for arm in ("bare", "tracked"):  # warm-up: kernels, allocator, first record, helper
        block(arm)
    times: dict[str, list[float]] = {"bare": [], "tracked": []}
    for r in range(args.rounds):
        for arm in (("bare", "tracked") if r % 2 == 0 else ("tracked", "bare")):
            times[arm].append(block(arm))
    tracker.close()
    load1 = os.getloadavg()[0]
    if rank == 0:
        _report(args, world, times, tracker, (load0, load1))
    dist.destroy_process_group()


def _report(args: argparse.Namespace, world: int, times: dict[str, list[float]],
            tracker: SpectrumTracker, load: tuple[float, float]) -> None:
    b, t = np.array(times["bare"]), np.array(times["tracked"])
    per_block = args.block // args.every + (1 if args.block % args.every else 0)
    over_best = 100 * (t.min() / b.min() - 1)
    over_total = 100 * (t.sum() / b.sum() - 1)
    costs = tracker.record_costs
    rec_s = float(np.median([c["spectra_s"] + c["summaries_s"] + c["write_s"] for c in costs]))
    print(f"### SpectrumTracker under DDP: {world} ranks ({args.device}, "
          f"{'nccl' if args.device == 'cuda' else 'gloo'}), char transformer ({args.layers} "
          f"layers x {args.heads} heads x {args.width}), {args.batch} x {args.context} tokens a "
          f"rank, {args.rounds} interleaved rounds of {args.block} steps an arm, a record every "
          f"{args.every} steps (about {per_block} a block), {args.threads} torch thread(s) a "
          "rank")
    print()
    print("| arm | best block | per step | all blocks |")
    print("|---|---|---|---|")
    for name, x in (("bare DDP (floor)", b), ("DDP + SpectrumTracker", t)):
        print(f"| {name} | {x.min():.2f} s | {1e3 * x.min() / args.block:.1f} ms | "
              f"{x.sum():.1f} s |")
    print()
    print(f"overhead: **{over_best:+.1f} %** best of rounds ({over_total:+.1f} % over all "
          f"blocks); rank 0's record (spectra, fits, write), median of {len(costs)}: "
          f"{rec_s:.2f} s; records coalesced: {len(tracker.coalesced)}")
    print(f"tracked {len(tracker.matrices)} weight matrices and {len(tracker.sites)} module "
          f"outputs; load average {load[0]:.1f} -> {load[1]:.1f} on {os.cpu_count()} CPUs")
    res = {"world": world, "device": args.device, "bare_s": b.tolist(), "tracked_s": t.tolist(),
           "overhead_best_pct": over_best, "overhead_total_pct": over_total,
           "record_s_median": rec_s, "records": tracker.n_records,
           "coalesced": len(tracker.coalesced), "load": list(load),
           "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}}
    args.json.write_text(json.dumps(res, indent=1))
    print(f"\n(machine-readable: {args.json})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nproc", type=int, default=2, help="ranks to spawn (without torchrun)")
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--block", type=int, default=40, help="steps an arm runs per round")
    ap.add_argument("--every", type=int, default=20, help="a record every this many steps")
    ap.add_argument("--width", type=int, default=128)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--batch", type=int, default=8, help="sequences a rank")
    ap.add_argument("--context", type=int, default=64, help="tokens a sequence (<= 64)")
    ap.add_argument("--max-samples", type=int, default=1024)
    ap.add_argument("--n-boot", type=int, default=50)
    ap.add_argument("--threads", type=int, default=1, help="torch threads a rank")
    ap.add_argument("--out", default=None, help="the tracker's folder (default: a temporary)")
    ap.add_argument("--json", type=Path, default=Path("tracker-ddp-benchmark.json"))
    args = ap.parse_args()
    for name in ("nproc", "rounds", "block", "every", "width", "layers", "heads", "batch",
                 "context", "max_samples", "threads"):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be a positive integer; got "
                     f"{getattr(args, name)}")
    if args.context > 64:
        ap.error(f"--context must be at most 64 (the model's context); got {args.context}")
    if "RANK" in os.environ:  # under torchrun
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        _rank_main(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), args)
        return
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.multiprocessing.spawn(_rank_main, args=(args.nproc, args), nprocs=args.nproc)


if __name__ == "__main__":
    main()
