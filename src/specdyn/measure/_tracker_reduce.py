"""Spectra of matrices whose rows are spread over ranks: Gram matrices summed by reduction.

A matrix ``A`` made of row blocks ``A_r`` (rank ``r`` holds ``A_r``; a rank may hold
none) has the Gram matrix ``A^T A = sum_r A_r^T A_r``. So the spectrum of

- a representation over the global batch: ``A_r`` is rank ``r``'s rows of a module
  output less the *global* mean (:func:`global_means`, one all-reduce of the
  column sums), and ``sum_r A_r^T A_r / n`` is the centred covariance of the
  union of the ranks' rows, exactly as one process would form it;
- a weight sharded by ``fully_shard``: ``A_r`` is this rank's block of rows of
  ``W`` (or of ``W^T`` when its columns are sharded), and ``sum_r A_r^T A_r / out``
  has the nonzero eigenvalues of ``W^T W / out``;

costs one reduction of a ``p x p`` matrix (dense: :func:`summed_spectra`, every
dense item of a record in one buffer, to rank 0, which diagonalises it in float64),
and never gathers a matrix's rows on one rank. Above ``max_dense`` the top ``k``
eigenvalues come from randomized subspace iteration on the implicit ``sum_r
A_r^T A_r`` (``k + 10`` directions, a sketch from a local generator with seed 0,
``NITER + 1`` products each summed by an all-reduce of a ``p x (k + 10)`` float32
matrix, then the Rayleigh-Ritz values), as :func:`~specdyn.measure.spectra.top_gram_eigenvalues`
finds them in one process.

The reductions run on the tracker's own gloo group: CPU buffers whatever the
device, and a communicator apart from the one training uses, so that the
worker's reductions never interleave with DDP's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["NITER", "Item", "global_means", "summed_spectra"]

#: Power iterations of the top-k path (as ``top_gram_eigenvalues``'s default).
NITER = 4


@dataclass
class Item:
    """One matrix whose Gram is summed over ranks.

    ``local``: this rank's ``n_r x p`` block (any device; may have no rows);
    ``divisor``: the Gram is divided by it (samples, or the weight's rows);
    ``keep``: how many eigenvalues the matrix has (its smaller side); ``top``:
    ``None`` for the whole spectrum (dense), else the ``top`` largest.
    """

    local: Any
    p: int
    divisor: float
    keep: int
    top: int | None = None


def _on_cpu(t: Any) -> Any:
    return t if t.device.type == "cpu" else t.cpu()


def global_means(blocks: list[Any], counts: list[int], group: Any) -> list[Any]:
    """The column means over every rank's rows, of each block (one all-reduce).

    ``blocks[i]``: this rank's ``n_r x p_i`` rows; ``counts[i]``: the rows of all
    ranks together. Means in float64, on each block's device.
    """
    import torch
    import torch.distributed as dist

    if not blocks:
        return []
    sums = torch.cat([_on_cpu(b.double().sum(dim=0)) for b in blocks])
    dist.all_reduce(sums, group=group)
    out, at = [], 0
    for b, n in zip(blocks, counts, strict=True):
        p = int(b.shape[1])
        out.append((sums[at:at + p] / n).to(b.device))
        at += p
    return out


def summed_spectra(items: list[Item], group: Any, writer: bool) -> list[np.ndarray | None]:
    """Eigenvalues of ``sum_r A_r^T A_r / divisor`` of each item, decreasing, float64.

    Dense items: one reduction of all their float64 Grams to rank 0, which
    diagonalises them (the other ranks get ``None``); ``top`` items: subspace
    iteration, every rank taking part. Every rank must call it with the same
    items (shapes and order): the collectives follow them.
    """
    import torch
    import torch.distributed as dist

    from specdyn.measure.spectra import symmetric_eigenvalues

    out: list[np.ndarray | None] = [None] * len(items)
    dense = [i for i, it in enumerate(items) if it.top is None]
    if dense:
        grams = [items[i].local.double() for i in dense]
        buf = torch.cat([_on_cpu(A.mT @ A).reshape(-1) for A in grams])
        dist.reduce(buf, dst=dist.get_global_rank(group, 0), group=group)
        at = 0
        for i, A in zip(dense, grams, strict=True):
            p = items[i].p
            if writer:
                G = buf[at:at + p * p].reshape(p, p).to(A.device) / items[i].divisor
                out[i] = symmetric_eigenvalues(G, symmetrize=True)[:items[i].keep].copy()
            at += p * p
    for i, it in enumerate(items):
        if it.top is not None:
            e = _top_summed(it, group)
            out[i] = e if writer else None
    return out


def _top_summed(it: Item, group: Any) -> np.ndarray:
    """The ``top`` largest eigenvalues of ``sum_r A_r^T A_r / divisor`` (module docstring)."""
    import torch
    import torch.distributed as dist

    from specdyn.measure.spectra import symmetric_eigenvalues

    A = it.local.float()
    q = min(it.top + 10, it.p, it.keep)  # type: ignore[operator]
    sketch = np.random.default_rng(0).standard_normal((it.p, q)).astype(np.float32)
    V = torch.from_numpy(sketch).to(A.device)

    def product(V: Any) -> Any:
        Y = _on_cpu(A.mT @ (A @ V)).contiguous()
        dist.all_reduce(Y, group=group)
        return Y.to(A.device)

    for _ in range(NITER + 1):
        V = torch.linalg.qr(product(V)).Q
    B = V.mT @ product(V)
    return symmetric_eigenvalues(0.5 * (B + B.mT))[:it.top] / it.divisor
