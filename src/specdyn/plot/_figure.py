"""Shared figure plumbing: a non-interactive backend and atomic PNG + PDF saving."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import LogFormatterSciNotation  # noqa: E402

from specdyn.io import atomic_path  # noqa: E402


def new_figure(ncols: int = 1, nrows: int = 1, *, width: float = 4.8,
               height: float = 3.6, wspace: float | None = None,
               rows_apart: bool = False) -> tuple[Figure, list]:
    """A figure with an ``nrows x ncols`` grid of axes, returned flat.

    ``wspace``: extra space between columns, as a fraction of the figure width
    (the layout's default 0.02); more keeps a colour bar's label apart from the
    next panel's y label. ``rows_apart``: each row is its own sub-figure, so that the
    decorations of one row (a colour bar, tick labels on the right) do not push the
    panels of another apart (one layout grid aligns a column's margins: a colour bar
    stood far from its panel because the panel below had labels on its right); add
    colour bars with ``ax.figure.colorbar``.
    """
    size = (width * ncols, height * nrows)
    if rows_apart and nrows > 1:
        fig = plt.figure(figsize=size, constrained_layout=True)
        rows: Any = fig.subfigures(nrows, 1)
        axes = [ax for row in rows for ax in np.atleast_1d(row.subplots(1, ncols))]
    else:
        fig, grid = plt.subplots(nrows, ncols, figsize=size, constrained_layout=True,
                                 squeeze=False)
        axes = list(grid.ravel())
    if wspace is not None:
        fig.get_layout_engine().set(wspace=wspace)  # type: ignore[call-arg, union-attr]
    return fig, axes


_LETTERED = re.compile(r"^\([a-z]\)")

#: Called as ``hook(fig, stem)`` by :func:`save_figure` after writing, before closing;
#: added and removed by :func:`specdyn.plot.check.on_save` (the layout test's way in).
SAVE_HOOKS: list[Callable[[Figure, Path], None]] = []


def panels(fig: Figure) -> list:
    """The panels of ``fig``: visible axes that are not colorbars, twins or switched off (an
    axes that only holds a legend), in creation order."""
    found: list = []
    for ax in fig.axes:
        if not ax.get_visible() or ax.get_label() == "<colorbar>" or not ax.axison:
            continue
        if any(ax.get_position().bounds == p.get_position().bounds for p in found):
            continue  # a twin (twinx) of a panel already found
        found.append(ax)
    return found


def letter_panels(fig: Figure) -> None:
    """Prefix the title of each panel of a multi-panel figure with ``(a)``, ``(b)``, ...

    Panels are those of :func:`panels` (row by row for :func:`new_figure`); a title
    that already starts with a letter in parentheses is left alone, and so is a
    figure with one panel.
    """
    found = panels(fig)
    if len(found) < 2:
        return
    for i, ax in enumerate(found):
        title = ax.get_title()
        if not _LETTERED.match(title):
            ax.title.set_text(f"({chr(ord('a') + i)}) {title}".rstrip())  # keeps the font


class _SparseMinorLabels(LogFormatterSciNotation):
    """Minor tick labels of a log axis: at 2 and 5 times a power of ten where matplotlib
    would label 2, 3, 4 and 6 (an axis spanning 0.4 to 1 decade), whose labels
    ("3x10^0", "4x10^0") overlap in a narrow panel."""

    def set_locs(self, locs: Any = None) -> None:
        super().set_locs(locs)
        # _sublabels: the mantissas matplotlib labels (None: all); no public setter
        subset = getattr(self, "_sublabels", None)
        if subset is not None and 1 < len(subset) < getattr(self, "_base", 10):
            self._sublabels = {1, 2, 5}


def sparse_log_labels(fig: Figure) -> None:
    """Give every log axis of ``fig`` that keeps matplotlib's default minor tick labels
    the sparser ones of :class:`_SparseMinorLabels`; axes with their own formatter keep it."""
    stack: list[Any] = list(fig.axes)
    while stack:
        ax = stack.pop()
        stack.extend(ax.child_axes)
        for axis in (ax.xaxis, ax.yaxis):
            fmt = axis.get_minor_formatter()
            if axis.get_scale() == "log" and type(fmt) is LogFormatterSciNotation:
                axis.set_minor_formatter(_SparseMinorLabels(base=getattr(fmt, "_base", 10),
                                                            labelOnlyBase=False))


def save_figure(fig: Figure, stem: str | Path) -> list[Path]:
    """Save ``fig`` as ``stem.png`` (150 dpi) and ``stem.pdf``, atomically; close it.

    Multi-panel figures get panel letters first (:func:`letter_panels`), and log
    axes sparser minor tick labels (:func:`sparse_log_labels`).
    """
    letter_panels(fig)
    sparse_log_labels(fig)
    stem = Path(stem)
    paths = []
    for ext in ("png", "pdf"):
        path = stem.with_suffix(f".{ext}")
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=ext, dpi=150)
        paths.append(path)
    for hook in list(SAVE_HOOKS):
        hook(fig, stem)
    plt.close(fig)
    return paths
