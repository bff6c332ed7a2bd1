"""Shared figure plumbing: a non-interactive backend and atomic PNG + PDF saving."""

from __future__ import annotations

import re
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


_LETTERED = re.compile(r"^\([a-z]\)")


def letter_panels(fig: Figure) -> None:
    """Prefix the title of each panel of a multi-panel figure with ``(a)``, ``(b)``, ...

    Panels are the visible axes that are not colorbars or twins, in creation
    order (row by row for :func:`new_figure`); a title that already starts with a letter
    in parentheses is left alone, and so is a figure with one panel.
    """
    panels: list = []
    for ax in fig.axes:
        if not ax.get_visible() or ax.get_label() == "<colorbar>":
            continue
        if any(ax.get_position().bounds == p.get_position().bounds for p in panels):
            continue  # a twin (twinx) of a panel already lettered
        panels.append(ax)
    if len(panels) < 2:
        return
    for i, ax in enumerate(panels):
        title = ax.get_title()
        if not _LETTERED.match(title):
            ax.title.set_text(f"({chr(ord('a') + i)}) {title}".rstrip())  # keeps the font


def save_figure(fig: Figure, stem: str | Path) -> list[Path]:
    """Save ``fig`` as ``stem.png`` (150 dpi) and ``stem.pdf``, atomically; close it.

    Multi-panel figures get panel letters first (:func:`letter_panels`).
    """
    letter_panels(fig)
    stem = Path(stem)
    paths = []
    for ext in ("png", "pdf"):
        path = stem.with_suffix(f".{ext}")
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=ext, dpi=150)
        paths.append(path)
    plt.close(fig)
    return paths
