"""Two-process runs of a SpectrumTracker under torch.distributed (gloo, CPU), for the tests.

python tests/measure/tracker_ranks_probe.py OUT [SCENARIO ...]

Spawns two ranks (``torch.multiprocessing``) that run, in order, the scenarios named
(default: all of them) and write what the tests compare under OUT:

``ddp``
    An MLP (float64) under DistributedDataParallel, a global batch of 96 rows a step
    (48 a rank), SGD, 6 steps, ``SpectrumTracker(model, schedule=[0, 2, 5],
    out=OUT/ddp)``; rank 0 saves the weights after every step (and before the first)
    to ``OUT/ddp-weights.pt``; then the same training without a tracker, whose final
    weights (``OUT/ddp-bare.pt``) must equal the tracked run's bit for bit.
``fsdp``
    Embedding, MultiheadAttention (Q/K/V rows and heads split) and two Linear layers
    (odd widths: uneven shards) under ``fully_shard``, float64, 4 steps, schedule
    ``[0, 1, 3]``, ``heads=True``, ``out=OUT/fsdp``; the full weights (gathered by
    the probe, not by the tracker) after every step to ``OUT/fsdp-weights.pt``.
``early``
    No DDP: rank 1 stops after 4 steps and closes, rank 0 goes on to 8, schedule
    ``every(1)`` then ``[0, 2]`` (``close()``'s final records at different steps).
``slow``
    Rank 0's worker slowed (an ``on_record`` callback, which runs on rank 0 only, sleeps
    50 ms, 2 s at step 9), ``max_pending_bytes=0``, ``every(1)`` over 30 steps: coalescing must be
    agreed (the same steps dropped on both ranks, none of the first decade); then
    again with rank 1 closing after 15 steps (``slow-early``).
``topk``
    The FSDP model at ``max_dense=20``, ``top=6``: every sharded weight and every
    module output wider than 20 through the reduced subspace iteration, one record.

Each rank writes ``OUT/<scenario>-rank<r>.json`` with what it saw (its ``out``,
its table's length, its record count). Batches depend only on the step. With
``SPECDYN_RANKS_DEVICE=cuda`` each rank trains on its own GPU (nccl; the tracker's
reductions stay on its gloo group), which ``benchmarks/gpu_tracker.sh`` runs when a
machine with two GPUs or more is lent.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from specdyn import Schedule
from specdyn.measure import SpectrumTracker

GLOBAL_ROWS, D_IN, STEPS = 96, 24, 6
DEVICE = os.environ.get("SPECDYN_RANKS_DEVICE", "cpu")


def _dev() -> torch.device:
    return torch.device(f"cuda:{torch.cuda.current_device()}" if DEVICE == "cuda" else "cpu")


def _host(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {k: v.detach().cpu().clone() for k, v in state.items()}


def mlp() -> torch.nn.Sequential:
    """The DDP scenario's model (float64), the same on every rank and in the tests."""
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(D_IN, 40), torch.nn.Tanh(),
                               torch.nn.Linear(40, 40), torch.nn.Tanh(),
                               torch.nn.Linear(40, 6)).double()


def batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The global batch of ``step`` (rows 0..47 are rank 0's, 48..95 rank 1's)."""
    g = torch.Generator().manual_seed(100 + step)
    x = torch.randn(GLOBAL_ROWS, D_IN, generator=g, dtype=torch.float64) * 1.5 + 0.3
    return x, torch.tanh(x[:, :6])


class Attend(torch.nn.Module):
    """The FSDP scenario's model: tokens -> embedding -> attention -> MLP."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = torch.nn.Embedding(50, 36)
        self.attn = torch.nn.MultiheadAttention(36, 3, batch_first=True)
        self.up = torch.nn.Linear(36, 37)
        self.down = torch.nn.Linear(37, 5)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h = self.emb(tokens)
        h = self.attn(h, h, h, need_weights=False)[0]
        return self.down(torch.tanh(self.up(h)))


def attend() -> Attend:
    torch.manual_seed(1)
    return Attend().double()


def tokens(step: int) -> torch.Tensor:
    """The FSDP scenario's global batch: 8 sequences of 12 tokens (4 a rank)."""
    return torch.randint(0, 50, (8, 12), generator=torch.Generator().manual_seed(200 + step))


def _local(t: torch.Tensor, rank: int, world: int) -> torch.Tensor:
    n = t.shape[0] // world
    return t[rank * n:(rank + 1) * n].to(_dev())


def _facts(out: Path, name: str, tr: SpectrumTracker, **more: Any) -> None:
    (out / f"{name}-rank{tr.rank}.json").write_text(json.dumps(
        {"out": None if tr.out is None else str(tr.out), "rows": len(tr.table()),
         "n_records": tr.n_records, "world": tr.world, "coalesced": tr.coalesced, **more}))


def ddp(out: Path, rank: int, world: int) -> None:
    from torch.nn.parallel import DistributedDataParallel

    for tracked in (True, False):
        model = mlp().to(_dev())
        net = DistributedDataParallel(model, device_ids=[_dev()] if DEVICE == "cuda" else None)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        tr = (SpectrumTracker(model, schedule=[0, 2, 5], out=out / "ddp", n_boot=0,
                              max_samples=GLOBAL_ROWS, precision="float64") if tracked
              else None)
        saved = [_host(model.state_dict())]
        for s in range(STEPS):
            x, y = (_local(t, rank, world) for t in batch(s))
            loss = ((net(x) - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            if tr is not None:
                tr.step()
            saved.append(_host(model.state_dict()))
        if tr is not None:
            tr.close()
            _facts(out, "ddp", tr)
        if rank == 0:
            torch.save(saved if tracked else saved[-1],
                       out / ("ddp-weights.pt" if tracked else "ddp-bare.pt"))


def fsdp(out: Path, rank: int, world: int) -> None:
    from torch.distributed.fsdp import fully_shard

    model = attend().to(_dev())
    for m in (model.emb, model.attn, model.up, model.down):
        fully_shard(m)
    fully_shard(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    tr = SpectrumTracker(model, schedule=[0, 1, 3], out=out / "fsdp", n_boot=0, heads=True,
                         max_samples=96, precision="float64")

    def full() -> dict[str, torch.Tensor]:  # the probe's gather, for the tests' oracle
        return _host({k: v.full_tensor() for k, v in model.state_dict().items()})

    saved = [full()]
    for s in range(4):
        tok = _local(tokens(s), rank, world)
        loss = (model(tok) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        tr.step()
        saved.append(full())
    tr.close()
    _facts(out, "fsdp", tr)
    if rank == 0:
        torch.save(saved, out / "fsdp-weights.pt")


def early(out: Path, rank: int, world: int) -> None:
    for name, schedule in (("early", Schedule.every(1)), ("early-final", [0, 2])):
        model = mlp().to(_dev())
        tr = SpectrumTracker(model, schedule=schedule, out=out / name, n_boot=0,
                             max_samples=GLOBAL_ROWS)
        for s in range(4 if rank == 1 else 8):
            x, _ = (_local(t, rank, world) for t in batch(s))
            model(x)
            tr.step()
        tr.close()   # rank 1 here while rank 0 still trains: it answers rank 0's records
        _facts(out, name, tr, skipped=[list(k) for k in tr.skipped])


def slow(out: Path, rank: int, world: int) -> None:
    import time

    for name, last in (("slow", 30), ("slow-early", 30 if rank == 0 else 15)):
        model = mlp().to(_dev())
        # 2 s at step 9, the last of the first decade: both ranks' training queues the
        # next records meanwhile, so the ranks must agree to skip some (not a race)
        tr = SpectrumTracker(model, schedule=Schedule.every(1), out=out / name, n_boot=0,
                             fit=False, max_pending_bytes=0,
                             on_record=lambda rows: time.sleep(
                                 2.0 if int(rows.step.iloc[0]) == 9 else 0.05))
        for s in range(last):
            x, _ = (_local(t, rank, world) for t in batch(s))
            model(x)
            tr.step()
        tr.close()
        _facts(out, name, tr)


def topk(out: Path, rank: int, world: int) -> None:
    from torch.distributed.fsdp import fully_shard

    model = attend().to(_dev())
    for m in (model.emb, model.attn, model.up, model.down):
        fully_shard(m)
    fully_shard(model)
    tr = SpectrumTracker(model, schedule=[0], out=out / "topk", n_boot=0, max_dense=20, top=6,
                         max_samples=96)
    with torch.no_grad():
        model(_local(tokens(0), rank, world))
    tr.step()
    tr.close(final=False)
    weights = _host({k: v.full_tensor() for k, v in model.state_dict().items()})
    if rank == 0:
        torch.save(weights, out / "topk-weights.pt")


SCENARIOS = {"ddp": ddp, "fsdp": fsdp, "early": early, "slow": slow, "topk": topk}


def _rank(rank: int, world: int, port: int, out: str, names: list[str]) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    if DEVICE == "cuda":
        torch.cuda.set_device(rank % torch.cuda.device_count())
    dist.init_process_group("nccl" if DEVICE == "cuda" else "gloo", rank=rank, world_size=world)
    try:
        for name in names:
            SCENARIOS[name](Path(out), rank, world)
    finally:
        dist.destroy_process_group()


def main() -> None:
    out = Path(sys.argv[1])
    names = sys.argv[2:] or list(SCENARIOS)
    out.mkdir(parents=True, exist_ok=True)
    with socket.socket() as sock:  # a free port for the rendezvous
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    torch.multiprocessing.spawn(_rank, args=(2, port, str(out), names), nprocs=2)


if __name__ == "__main__":
    main()
