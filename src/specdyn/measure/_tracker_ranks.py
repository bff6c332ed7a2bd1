"""SpectrumTracker across the ranks of ``torch.distributed``: one record, one writer, no waiting.

Under DistributedDataParallel or ``fully_shard`` every rank builds the same tracker
on its model (the same layers and settings: checked when it is built). Then:

- Rank 0 writes (the folder, ``record.json``, the table, the callbacks, the
  summary process); the other ranks measure their part and write nothing.
- A record is one *round* of collectives on the tracker's own gloo group (apart
  from the group training uses, so its reductions never interleave with DDP's):
  an all-gather of a small header (each rank's state, step, queue and, per module
  output and sharded weight, its rows, width and finiteness), then the
  reductions of :mod:`specdyn.measure._tracker_reduce`: the module outputs'
  covariance over the global batch (the union of the ranks' rows, centred at the
  global mean) and the Grams of sharded weights, from the ranks' pieces
  (:mod:`specdyn.measure._tracker_shards`). Replicated weights (DDP) are
  measured by rank 0 alone, as in one process.
- Every rank enters the same collectives in the same order, whatever its own
  data: the hooks and the schedule are the same everywhere, a rank with no rows
  sends zeros, and the decisions taken from the header are the same on every
  rank because every rank reads the same gathered table and applies the same
  rules (the policy and the schedule's first decade, checked equal when built),
  a closed rank included. Coalescing (a rank
  cannot drop a record alone: the others would wait in its collectives) is
  agreed at the start of each record: when any rank's queued copies exceed
  ``max_pending_bytes`` and the record is not one of the first decade's, every
  rank skips to the newest record that all ranks have queued.
- A rank that closes early keeps answering the others' records (with no rows)
  until every rank has closed, so no collective is left waiting; ``close()``'s
  final unscheduled record is kept only when every rank closes at the same step.

A rank ``r`` keeps at most ``ceil(max_samples / world)`` rows of a module output,
so a record's rows number at most about ``max_samples`` in all.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from specdyn.measure._summary_process import Skip, Spectrum
from specdyn.measure._tracker_hooks import Job
from specdyn.measure._tracker_measure import RecordMath
from specdyn.measure._tracker_queue import RecordQueue
from specdyn.measure._tracker_reduce import Item, global_means, summed_spectra
from specdyn.measure._tracker_shards import Piece, is_sharded, piece
from specdyn.measure.layers import ActivationSite, WeightMatrix

__all__ = ["CLOSED", "FINAL", "RECORD", "Ranks", "Round", "ranks_for"]

#: A rank's state in a round's header.
CLOSED, RECORD, FINAL = 0, 1, 2
_HEAD = 4  # state, step, newest queued step, over the byte bound


def ranks_for(setting: bool | None) -> Any:
    """``torch.distributed`` when the tracker is to be rank-aware (``setting``: the
    config's ``distributed``), else ``None``."""
    if setting is False:
        return None
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        return dist
    if setting is True:
        raise ValueError("distributed=True: torch.distributed is not initialised with more "
                         "than one process (call torch.distributed.init_process_group first, "
                         "or leave distributed=None)")
    return None


@dataclass
class Round:
    """What a round decided: the job to measure (``None``: none this round), the steps
    it replaced, and, on rank 0, the spectra the ranks reduced and what was skipped."""

    job: Job | None
    coalesced: list[int] = field(default_factory=list)
    spectra: list[Spectrum] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    all_closed: bool = False


class Ranks:
    """The tracker's ranks: its group, which weights are sharded, and the rounds.

    Built by every rank at the same point (it creates a process group and checks,
    collectively, that every rank tracks the same layers with the same ``key``).
    """

    def __init__(self, dist: Any, matrices: list[WeightMatrix], sites: list[ActivationSite],
                 *, max_samples: int, max_dense: int, top: int | None, key: str,
                 coalesce: bool, keep: Callable[[int], bool]) -> None:
        self.dist = dist
        self.coalesce, self.keep = coalesce, keep  # the same on every rank (``key``)
        self.rank, self.world = int(dist.get_rank()), int(dist.get_world_size())
        self.writer = self.rank == 0
        self.group = dist.new_group(backend="gloo")
        self.sites, self.max_dense, self.top = sites, max_dense, top
        self.local_samples = math.ceil(max_samples / self.world)
        self.replicated: list[WeightMatrix] = []
        self.sharded: list[WeightMatrix] = []
        self.unreadable: list[tuple[str, str]] = []
        for m in matrices:
            x = m.get()
            if not is_sharded(x):
                self.replicated.append(m)
                continue
            p = piece(x)
            if isinstance(p, str):
                self.unreadable.append((m.name, p))
            else:
                self.sharded.append(m)
        self._check_same(key)

    def _gather(self, values: list[int]) -> np.ndarray:
        import torch

        t = torch.tensor(values, dtype=torch.int64)
        parts = [torch.empty_like(t) for _ in range(self.world)]
        self.dist.all_gather(parts, t, group=self.group)
        return torch.stack(parts).numpy()

    def _check_same(self, key: str) -> None:
        what = "|".join([key, *(m.name for m in self.replicated), "#",
                         *(m.name for m in self.sharded), "#", *(s.name for s in self.sites)])
        crc = self._gather([zlib.crc32(what.encode())])[:, 0]
        if len(set(crc.tolist())) > 1:
            odd = [r for r in range(self.world) if crc[r] != crc[0]]
            raise ValueError(f"SpectrumTracker: ranks {odd} track other layers or settings "
                             "than rank 0; build the tracker on every rank with the same "
                             "model (same wrapping) and the same settings")

    def pieces(self) -> list[Piece]:
        """This rank's pieces of the sharded weights, copied (training thread)."""
        out = []
        for m in self.sharded:
            p = piece(m.get())
            assert isinstance(p, Piece)
            out.append(Piece(p.local.detach().clone(), p.axis, p.offset, p.shape))
        return out

    # -- a round ------------------------------------------------------------------
    def round(self, job: Job | None, state: int, *, queue: RecordQueue | None,
              switched: Callable[[Job], None] | None = None) -> Round:
        """Agree with the other ranks on this record and reduce its spectra.

        ``job``: this rank's record (``None`` with ``state=CLOSED``: answering the
        others' after ``close()``). Every rank calls it once per record and, once
        closed, until :attr:`Round.all_closed`. ``switched(job)`` is called when the
        agreement replaces the job by a later one (before its copies are read).
        """
        coalesced: list[int] = []
        while True:
            acts = self._blocks(job)
            table = self._gather(self._header(job, state, queue, acts))
            states, steps = table[:, 0], table[:, 1]
            active = states != CLOSED
            if not active.any():
                return Round(None, all_closed=True)
            offers = {(int(a), int(b)) for a, b in zip(states[active], steps[active],
                                                        strict=True)}
            if len(offers) > 1:
                records = sorted({b for a, b in offers if a == RECORD})
                if len(records) > 1:
                    raise RuntimeError(
                        f"SpectrumTracker: the ranks are at different records (steps "
                        f"{records}): every rank must use the same schedule and call step() "
                        "once per training step")
                if state == FINAL and job is not None:  # close() at different steps
                    at = ", ".join(f"rank {r} at step {int(steps[r])}"
                                   for r in range(self.world) if active[r])
                    return Round(None, skipped=[(job.step, "*", "record",
                                                 f"close()'s final record dropped: the "
                                                 f"ranks closed at different steps ({at})")])
                continue  # the others drop theirs; offer this record again
            st_state, step = offers.pop()
            newest = table[active, 2]
            if (self.coalesce and st_state == RECORD and not self.keep(step)
                    and table[active, 3].any() and int(newest.min()) > step):
                target = int(newest.min())  # queued on every rank: skip to it
                if state == RECORD and job is not None and queue is not None:
                    taken = queue.take_through(target)
                    for old in [job, *taken[:-1]]:
                        coalesced += [*old.coalesced, old.step]
                    job = taken[-1]
                    job.coalesced = sorted(set(job.coalesced + coalesced))
                    if switched is not None:
                        switched(job)
                continue
            return self._reduce(job, state, step, table, acts, coalesced)

    def answer_until_all_closed(self) -> None:
        """After ``close()``: take part in the others' records (with no rows) until every
        rank has closed."""
        while True:
            try:
                if self.round(None, CLOSED, queue=None).all_closed:
                    return
            except (FloatingPointError, ValueError, RuntimeError):
                return  # every rank read the same table: the active ones failed too

    def _blocks(self, job: Job | None) -> list[Any]:
        """This rank's rows of each module output (``None``: none)."""
        import torch

        if job is None or job.final:
            return [None] * len(self.sites)
        got = dict(job.activations)
        return [torch.cat(got[s.name], dim=0) if got.get(s.name) else None for s in self.sites]

    def _header(self, job: Job | None, state: int, queue: RecordQueue | None,
                acts: list[Any]) -> list[int]:
        w = queue.waiting() if queue is not None else None
        head = [state, -1 if job is None else job.step,
                w.newest if w is not None and w.count else -1, int(w.over) if w else 0]
        for X in acts:
            if X is None:
                head += [0, 0, 1]
            else:
                head += [int(X.shape[0]), int(X.shape[1]), int(_finite(X))]
        shards = job.shards if job is not None else []
        head += [int(_finite(pc.local)) for pc in shards] or [1] * len(self.sharded)
        return head

    def _reduce(self, job: Job | None, state: int, step: int, table: np.ndarray,
                acts: list[Any], coalesced: list[int]) -> Round:
        import torch

        skipped: list[Skip] = []
        items: list[Item] = []
        named: list[tuple[str, str, tuple[int, int], bool]] = []
        closed = [r for r in range(self.world) if table[r, 0] == CLOSED]
        final = int(table[table[:, 0] != CLOSED][0, 0]) == FINAL
        # module outputs: the union of the ranks' rows
        blocks, counts, sites = [], [], []
        for i, site in enumerate(self.sites):
            n, p, ok = (table[:, _HEAD + 3 * i + j] for j in range(3))
            N = int(n.sum())
            if final:
                continue  # close()'s record: weights only (listed by the tracker)
            widths = {int(q) for q, k in zip(p, n, strict=True) if k > 0}
            if len(widths) > 1:
                raise ValueError(f"SpectrumTracker: module {site.name!r} gave outputs of "
                                 f"widths {sorted(widths)} on different ranks at step {step}")
            bad = [r for r in range(self.world) if n[r] > 0 and not ok[r]]
            if bad:
                raise FloatingPointError(
                    f"SpectrumTracker: activations of layer {site.name!r} are not finite at "
                    f"step {step} (rank {bad[0]}): the run diverged. Lower the learning "
                    "rate (or add gradient clipping) and rerun; nothing was recorded for "
                    "this step.")
            if N < 2:
                why = ("no forward pass seen at this step on any rank" if N == 0
                       else "fewer than 2 samples")
                skipped.append((step, site.name, "activation", why))
                continue
            width = widths.pop()
            X = acts[i] if acts[i] is not None else torch.zeros((0, width), dtype=torch.float64)
            blocks.append(X)
            counts.append(N)
            sites.append((site.name, N, width))
        for X, m, (name, N, width) in zip(blocks, global_means(blocks, counts, self.group), sites,
                                          strict=True):
            dense = width <= self.max_dense
            items.append(Item(X.double() - m, width, float(N), min(N, width),
                              None if dense else min(self.top or 256, min(N, width) - 1)))
            named.append((name, "activation", (N, width), dense))
        # sharded weights: the sum of the pieces' Grams
        base = _HEAD + 3 * len(self.sites)
        for j, m in enumerate(self.sharded):
            if closed:
                skipped.append((step, m.name, "weight", f"ranks {closed} closed before this "
                                "record: a sharded weight needs every rank's piece"))
                continue
            if not table[:, base + j].all():
                r = int(np.argmin(table[:, base + j]))
                raise FloatingPointError(
                    f"SpectrumTracker: weights of layer {m.name!r} are not finite at step "
                    f"{step} (rank {r}): the run diverged. Lower the learning rate (or add "
                    "gradient clipping) and rerun; nothing was recorded for this step.")
            pc = job.shards[j]  # type: ignore[union-attr]
            rows, cols = pc.shape
            A = pc.local if pc.axis == 0 else pc.local.mT
            side = cols if pc.axis == 0 else rows
            dense = side <= self.max_dense
            items.append(Item(A, side, float(rows), min(rows, cols),
                              None if dense else min(self.top or 256, min(rows, cols) - 1)))
            named.append((m.name, "weight", (rows, cols), dense))
        eigs = summed_spectra(items, self.group, self.writer)
        spectra = []
        if self.writer:
            for (name, kind, shape, dense), e in zip(named, eigs, strict=True):
                assert e is not None
                if kind == "activation":
                    e = e.copy()
                    e[shape[0] - 1:] = 0.0  # centred: rank at most n - 1
                spectra.append(RecordMath.spectrum(step, name, kind, None, e, dense,
                                                   check=False, shape=shape))
            skipped += [(step, name, "weight", why) for name, why in self.unreadable]
        return Round(job if state != CLOSED else None, coalesced, spectra, skipped)


def _finite(X: Any) -> bool:
    import torch

    if X.numel() == 0:
        return True
    return bool(torch.isfinite(torch.stack(torch.aminmax(X))).all())
