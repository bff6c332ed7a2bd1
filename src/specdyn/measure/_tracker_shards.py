"""Sharded weight matrices (``fully_shard``'s DTensor parameters) as this rank's piece.

Under FSDP (``torch.distributed.fsdp.fully_shard``) each rank holds a block of
rows of every parameter (``Shard(0)`` on a one-dimensional mesh, the rows split
as ``torch.chunk`` splits them). The tracker reads a weight matrix through its
rule (:mod:`specdyn.measure.layers`: as stored, transposed, reshaped, a block of
rows); on a DTensor a transpose or a reshape keeps the sharding, but a block of
rows would make DTensor gather the whole parameter on every rank. So a rule's
row blocks go through :func:`row_block`, which on a sharded matrix keeps this
rank's part of the block (a :class:`Piece`) and never communicates, and
:func:`piece` turns what a rule returns into the local block and the axis it is
sharded along. The Gram matrix of the whole matrix is then the sum over ranks of
the pieces' Grams over the other axis (:mod:`specdyn.measure._tracker_reduce`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Piece", "is_sharded", "piece", "row_block"]


@dataclass(frozen=True)
class Piece:
    """This rank's block of a matrix sharded along ``axis`` (0: rows, 1: columns).

    ``local`` holds the matrix's rows (``axis=0``) or columns (``axis=1``)
    ``offset .. offset + local.shape[axis]``; ``shape`` is the whole matrix's.
    """

    local: Any
    axis: int
    offset: int
    shape: tuple[int, int]

    def __getitem__(self, rows: slice) -> Piece:
        return row_block(self, rows.start or 0, self.shape[0] if rows.stop is None
                         else rows.stop)


def _is_dtensor(x: Any) -> bool:
    return type(x).__name__ == "DTensor" and hasattr(x, "to_local")


def is_sharded(x: Any) -> bool:
    """Whether ``x`` (what a weight rule returned) is sharded across ranks."""
    return isinstance(x, Piece) or _is_dtensor(x)


def piece(x: Any) -> Piece | str:
    """This rank's :class:`Piece` of a sharded 2-D matrix, or why it cannot be read so.

    Readable: a DTensor sharded along one axis of a one-dimensional mesh, as
    ``torch.chunk`` splits (``fully_shard``'s layout).
    """
    if isinstance(x, Piece):
        return x
    mesh, placements = x.device_mesh, tuple(x.placements)
    if x.ndim != 2 or mesh.ndim != 1 or len(placements) != 1 or not placements[0].is_shard():
        return (f"a DTensor with placements {placements} on a {mesh.ndim}-D mesh (the tracker "
                "reads matrices sharded along one axis of a 1-D mesh, as fully_shard does)")
    axis = int(placements[0].dim) % 2
    n = int(x.shape[axis])
    world, coord = int(mesh.size()), int(mesh.get_local_rank())
    chunk = -(-n // world)
    lo = min(coord * chunk, n)
    local = x.to_local()
    if int(local.shape[axis]) != min(lo + chunk, n) - lo:
        return (f"a DTensor whose local block ({tuple(local.shape)}) is not the torch.chunk "
                f"split of its {tuple(x.shape)} over {world} ranks")
    return Piece(local, axis, lo, (int(x.shape[0]), int(x.shape[1])))


def row_block(x: Any, lo: int, hi: int) -> Any:
    """Rows ``lo:hi`` of a matrix; of a sharded one, this rank's part of them (no gather)."""
    if not is_sharded(x):
        return x[lo:hi]
    p = piece(x)
    if isinstance(p, str):  # a layout this module does not read: DTensor's own slicing
        return x[lo:hi]
    shape = (hi - lo, p.shape[1])
    if p.axis == 1:  # columns sharded: every rank holds all rows of its columns
        return Piece(p.local[lo:hi], 1, p.offset, shape)
    n = int(p.local.shape[0])
    a, b = max(lo, p.offset), min(hi, p.offset + n)
    local = p.local[a - p.offset:b - p.offset] if a < b else p.local[:0]
    return Piece(local, 0, max(a, lo) - lo if a < b else 0, shape)
