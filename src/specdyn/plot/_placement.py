"""Where a label goes and what it crosses: the drawn extent of a text, the line that
crosses it, and the three ways a figure keeps its labels clear of its lines.

:func:`crossing_line` is what :func:`specdyn.plot.check.figure_problems` reports (a
line or marker through a text inside a panel); the figures use the same test to move a
label (:func:`clear_of_lines`, :func:`label_off_lines`: off the line, with a pointer) or
to interrupt a line under a number that belongs where it is (:func:`break_lines_under`,
as contour labels do). All work in display pixels: call them after a draw, once the
layout has fixed where everything is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.text import Text
from matplotlib.transforms import Bbox

__all__ = ["break_lines_under", "clear_of_lines", "crossing_line", "label_off_lines",
           "spiral", "text_extent"]


def _segments_hit(xy: np.ndarray, box: Bbox) -> bool:
    """Whether the polyline ``xy`` (display coordinates, NaN breaks it) enters ``box``:
    Liang-Barsky clipping of every segment, at once."""
    a, b = xy[:-1], xy[1:]
    ok = np.all(np.isfinite(a), axis=1) & np.all(np.isfinite(b), axis=1)
    a, b = a[ok], b[ok]
    if a.size == 0:
        return False
    d = b - a
    t0, t1 = np.zeros(len(a)), np.ones(len(a))
    hit = np.ones(len(a), dtype=bool)
    for pk, qk in ((-d[:, 0], a[:, 0] - box.x0), (d[:, 0], box.x1 - a[:, 0]),
                   (-d[:, 1], a[:, 1] - box.y0), (d[:, 1], box.y1 - a[:, 1])):
        par = pk == 0
        hit &= ~(par & (qk < 0))
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(par, 0.0, qk / np.where(par, 1.0, pk))
        t0 = np.where(~par & (pk < 0), np.maximum(t0, t), t0)
        t1 = np.where(~par & (pk > 0), np.minimum(t1, t), t1)
    return bool(np.any(hit & (t0 <= t1)))


def text_extent(text: Text, renderer: Any) -> Bbox:
    """The drawn extent of a text, with its box (``bbox=``) if it has one (an annotation's
    arrow left out)."""
    # the text alone: an annotation's own extent takes in its arrow, which is no text
    box = Text.get_window_extent(text, renderer)
    patch = text.get_bbox_patch()
    if patch is not None and patch.get_visible():
        text.update_bbox_position_size(renderer)  # the box follows the text only at a draw
        box = Bbox.union([box, patch.get_window_extent(renderer)])
    return box


def _opaque(alpha: float | None) -> bool:
    return alpha is None or alpha > 0


def crossing_line(text: Text, renderer: Any, slack: float = 0.0) -> Any:
    """The first drawn line (or marker) of ``text``'s axes that crosses its extent (its box
    included, ``slack`` pixels in from each side), or None: what a label must stay clear
    of (``figure_problems`` reports it; figures move their labels with it)."""
    ax = text.axes
    if ax is None:
        return None
    box = text_extent(text, renderer)
    box = Bbox.from_extents(box.x0 + slack, box.y0 + slack, box.x1 - slack, box.y1 - slack)
    inside = ax.get_window_extent(renderer)
    for line in ax.lines:
        if not (line.get_visible() and _opaque(line.get_alpha())):
            continue
        clip = Bbox.intersection(box, inside) if line.get_clip_on() else box
        if clip is None or clip.width <= 0 or clip.height <= 0:
            continue
        xy = line.get_transform().transform(np.column_stack(
            [np.asarray(line.get_xdata(orig=False), dtype=np.float64),
             np.asarray(line.get_ydata(orig=False), dtype=np.float64)]))
        drawn = line.get_linestyle() not in ("None", "", " ")
        marked = line.get_marker() not in ("None", "", " ", None)
        if (drawn and _segments_hit(xy, clip)) or (marked and bool(np.any(
                (xy[:, 0] >= clip.x0) & (xy[:, 0] <= clip.x1)
                & (xy[:, 1] >= clip.y0) & (xy[:, 1] <= clip.y1)))):
            return line
    return None


def clear_of_lines(text: Any, offsets_px: Sequence[tuple[float, float]], *,
                   within: Any = None, margin_px: float = 4.0) -> bool:
    """Move ``text`` by the first of ``offsets_px`` (pixels from where it is, ``(0, 0)``
    first if wanted) at which no drawn line or marker of its axes crosses it
    (:func:`crossing_line`, its box included), it overlaps no other
    text of its axes, and it stays inside ``within`` (a display-space ``Bbox``; default
    its axes), all with ``margin_px`` to spare; where none does, it stays where it was.
    True when it ends clear. Call it after a draw (``fig.canvas.draw()``): the layout
    fixes the pixels."""
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
