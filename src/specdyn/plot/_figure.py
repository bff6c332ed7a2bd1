"""Shared figure plumbing: a non-interactive backend and atomic PNG + PDF saving."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from specdyn.io import atomic_path  # noqa: E402


def new_figure(ncols: int = 1, nrows: int = 1, *, width: float = 4.8,
               height: float = 3.6) -> tuple[Figure, list]:
    """A figure with an ``nrows x ncols`` grid of axes, returned flat."""
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows),
                             constrained_layout=True, squeeze=False)
    return fig, list(axes.ravel())


def save_figure(fig: Figure, stem: str | Path) -> list[Path]:
    """Save ``fig`` as ``stem.png`` (150 dpi) and ``stem.pdf``, atomically; close it."""
    stem = Path(stem)
    paths = []
    for ext in ("png", "pdf"):
        path = stem.with_suffix(f".{ext}")
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=ext, dpi=150)
        paths.append(path)
    plt.close(fig)
    return paths
