"""Shared figure plumbing: a non-interactive backend and atomic PNG + PDF saving."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
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


def clear_of_lines(text: Any, offsets_px: Sequence[tuple[float, float]], *,
                   within: Any = None, margin_px: float = 4.0) -> bool:
    """Move ``text`` by the first of ``offsets_px`` (pixels from where it is, ``(0, 0)``
    first if wanted) at which no drawn line or marker of its axes crosses it
    (:func:`specdyn.plot.check.crossing_line`, its box included), it overlaps no other
    text of its axes, and it stays inside ``within`` (a display-space ``Bbox``; default
    its axes), all with ``margin_px`` to spare; where none does, it stays where it was.
    True when it ends clear. Call it after a draw (``fig.canvas.draw()``): the layout
    fixes the pixels."""
    from specdyn.plot.check import crossing_line, text_extent

    renderer = text.figure.canvas.get_renderer()
    ax = text.axes
    if within is None:
        within = ax.get_window_extent(renderer).padded(-2)
    others = [text_extent(t, renderer) for t in ax.texts
              if t is not text and t.get_visible() and t.get_text().strip()]
    tr = text.get_transform()
    home = text.get_position()
    x0, y0 = tr.transform(home)
    for dx, dy in offsets_px:
        text.set_position(tuple(tr.inverted().transform((x0 + dx, y0 + dy))))
        box = text_extent(text, renderer)
        if not (within.x0 <= box.x0 and box.x1 <= within.x1
                and within.y0 <= box.y0 and box.y1 <= within.y1):
            continue
        if any(box.overlaps(o) for o in others):
            continue
        # a margin: saving re-runs the layout (panel letters), which may shift a few pixels
        if crossing_line(text, renderer, slack=-margin_px) is None:
            return True
    text.set_position(home)
    return False


def spiral(max_px: float, step_px: float = 10.0, directions: int = 16
           ) -> list[tuple[float, float]]:
    """Offsets in pixels from ``(0, 0)`` outwards to ``max_px``: where to try a label."""
    out = [(0.0, 0.0)]
    for r in np.arange(step_px, max_px + 1e-9, step_px):
        for a in np.linspace(0, 2 * np.pi, directions, endpoint=False):
            out.append((float(r * np.cos(a)), float(r * np.sin(a))))
    return out


def label_off_lines(text: Any, *, max_px: float = 300.0) -> Any:
    """Keep a label of a point (``text`` at the point) off every line of its axes: where a
    line crosses it, move it to the nearest clear place within ``max_px`` and point at
    the spot with a thin arrow (the label becomes an annotation). Returns the label
    drawn. Call it after a draw."""
    tr = text.get_transform()
    anchor = text.get_position()
    if not clear_of_lines(text, spiral(max_px)):
        return text
    if text.get_position() == anchor:
        return text
    ax = text.axes
    box = text.get_bbox_patch()
    label = ax.annotate(
        text.get_text(), xy=anchor, xycoords=tr, xytext=text.get_position(), textcoords=tr,
        ha=text.get_ha(), va=text.get_va(), fontsize=text.get_fontsize(),
        zorder=text.get_zorder(), color=text.get_color(),
        bbox=None if box is None else dict(boxstyle=box.get_boxstyle(),
                                           fc=box.get_facecolor(), ec=box.get_edgecolor(),
                                           lw=box.get_linewidth()),
        arrowprops=dict(arrowstyle="-", color="0.15", lw=0.8, shrinkA=0, shrinkB=0))
    text.remove()
    return label


def break_lines_under(texts: Sequence[Any], *, pad_px: float = 2.0) -> None:
    """Interrupt every line of the texts' axes where it would pass under one of ``texts``
    (its box included, ``pad_px`` around it), as contour labels interrupt their contour:
    the number stays where it belongs and no line strikes it through. The lines' points
    there become NaN, so draw densely sampled lines; call it after a draw (the layout fixes
    the pixels)."""
    from specdyn.plot.check import text_extent

    by_axes: dict[int, tuple[Any, list[Any]]] = {}
    for t in texts:
        by_axes.setdefault(id(t.axes), (t.axes, []))[1].append(t)
    for ax, group in by_axes.values():
        renderer = ax.figure.canvas.get_renderer()
        boxes = [text_extent(t, renderer).padded(pad_px) for t in group]
        for line in ax.lines:
            x = np.asarray(line.get_xdata(orig=False), dtype=np.float64)
            y = np.asarray(line.get_ydata(orig=False), dtype=np.float64)
            px = line.get_transform().transform(np.column_stack([x, y]))
            under = np.zeros(len(x), dtype=bool)
            for b in boxes:
                under |= ((px[:, 0] >= b.x0) & (px[:, 0] <= b.x1)
                          & (px[:, 1] >= b.y0) & (px[:, 1] <= b.y1))
            if under.any():
                line.set_data(x, np.where(under, np.nan, y))


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
