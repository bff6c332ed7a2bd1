"""The one seed derivation: every seed of a cell, a repeat or a stream comes from here.

A run seed is the root of a tree; a *key* names a node of it::

    derive_seed(cfg.seed, "cell", i, j)    # the seed of cell (i, j) of a grid
    derive_seed(cfg.seed, "rep", r)        # the r-th repeat of an experiment
    seed_streams(seed, 3)                  # an engine's streams 0, 1, 2 (data, init, noise...)

``derive_seed(seed, *key)`` is the first 32-bit word of
``numpy.random.SeedSequence(seed, spawn_key=key)``: the node ``key`` of numpy's
spawn tree, so ``seed_streams(seed, n)[i]`` is child ``i`` of
``SeedSequence(seed).spawn(n)`` (the linear and two-layer engines' streams since
their first tables). Distinct keys give independent streams in numpy's sense;
no seed is ever made by arithmetic (``seed + 1000 i + j`` makes neighbouring
cells share seeds across experiments). A relation between runs is kept by the
choice of key: two engines that must see the same data use the same stream
index, the cells of a row that must start alike use a key without the column.

Every generator of the package (``numpy.random.default_rng``, ``SeedSequence``,
``torch.Generator().manual_seed``) is seeded by a :data:`DerivedSeed`: the
result of :func:`derive_seed` or :func:`seed_streams`, or a parameter typed
``DerivedSeed`` (so mypy refuses a raw seed there).
``tests/project/test_seed_derivation.py`` checks this in the source.
"""

from __future__ import annotations

import zlib
from typing import NewType

import numpy as np

from specdyn import _validate as v

__all__ = ["DerivedSeed", "derive_seed", "seed_streams"]

DerivedSeed = NewType("DerivedSeed", int)
"""A seed made by :func:`derive_seed` (a 32-bit integer), ready for a generator."""

_WORD = 1 << 32


def _key_word(part: int | str) -> int:
    """One 32-bit word of a key: an index in ``[0, 2**32)`` or a name (its CRC-32)."""
    if isinstance(part, str):
        return zlib.crc32(part.encode())
    if isinstance(part, bool) or not isinstance(part, (int, np.integer)) \
            or not 0 <= int(part) < _WORD:
        raise ValueError(f"key must hold names and integers in [0, 2**32), got {part!r}")
    return int(part)


@v.constrained(seed=v.SEED)
def derive_seed(seed: int, *key: int | str) -> DerivedSeed:
    """The seed of node ``key`` of the tree rooted at run ``seed``.

    Parameters
    ----------
    seed
        The run seed, an integer ``>= 0``.
    *key
        The node: names (``"cell"``, ``"rep"``) and indices in ``[0, 2**32)``.
        An empty key is the root's own derived seed.

    Returns
    -------
    DerivedSeed
        The first 32-bit word of ``SeedSequence(seed, spawn_key=key)`` (names
        enter as their CRC-32), an ``int`` in ``[0, 2**32)``.
    """
    words = tuple(_key_word(k) for k in key)
    return DerivedSeed(int(np.random.SeedSequence(seed, spawn_key=words).generate_state(1)[0]))


@v.constrained(seed=v.SEED, count=v.SIZE)
def seed_streams(seed: int, count: int) -> list[DerivedSeed]:
    """``count`` independent stream seeds of one run ``seed``: ``derive_seed(seed, i)``.

    An engine takes its streams by index (data first, then weights, noise...);
    engines that must draw the same data and weights from one seed (the linear
    and two-layer engines) take the same indices. Stream ``i`` is child ``i`` of
    ``SeedSequence(seed).spawn(count)``.
    """
    return [derive_seed(seed, i) for i in range(count)]
