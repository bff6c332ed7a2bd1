"""A figure checked by a program: overlapping text, integer colour bars, panel titles.

:func:`figure_problems` draws a figure and lists, one line each, what a reader
would see as clutter: two pieces of text whose drawn extents overlap (tick
labels, axis labels, titles, colour-bar labels, annotations, and legends taken
as whole boxes), text running off the figure, a colour bar of integer-valued
data with ticks between the integers, and a panel whose title is missing or is
only its panel letter. The test of every experiment's figure
(``tests/experiments/test_experiments_figure_layout.py``) runs it on each figure
:func:`~specdyn.plot.save_figure` saves, through :func:`on_save`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.cm import ScalarMappable
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.transforms import Bbox, BboxBase

from specdyn.plot import _figure

__all__ = ["figure_problems", "on_save"]

#: Overlaps of at most this many pixels (at 100 dpi) in either direction are not counted:
#: glyph boxes include the font's ascent and descent, which touch without ink meeting.
_SLACK_PX = 1.0

_LETTER_ONLY = re.compile(r"^\s*(\([a-z]\))?\s*$")


@dataclass(frozen=True)
class _Item:
    """One drawn piece of text (or a legend box), its extent and where it belongs."""

    what: str
    box: Bbox
    owner: int  # items with the same owner are never compared (e.g. one legend's entries)


def _shown(artist: Text) -> bool:
    return bool(artist.get_visible() and artist.get_text().strip())


def _tick_labels(axis: Axis, name: str) -> Iterator[tuple[str, Text]]:
    """The tick labels the axis draws: major and minor, inside the view interval."""
    # _update_ticks is what Axis.draw uses to pick the ticks inside the view (no public twin)
    for tick in getattr(axis, "_update_ticks")():  # noqa: B009
        if not tick.get_visible():
            continue
        for label in (tick.label1, tick.label2):
            if _shown(label):
                yield f"{name} tick label {label.get_text()!r}", label


def _panel_name(ax: Axes) -> str:
    title = ax.title.get_text().strip()
    if ax.get_label() == "<colorbar>":
        return "colour bar"
    return f"panel {title[:40]!r}" if title else f"untitled axes at {ax.get_position().bounds}"


def _axes_texts(ax: Axes, where: str) -> Iterator[tuple[str, Text]]:
    # the left and right titles have no public getter of their Text
    for title in (ax.title, getattr(ax, "_left_title", None), getattr(ax, "_right_title", None)):
        if title is not None and _shown(title):
            yield f"{where}: title {title.get_text()!r}", title
    for axis, xy in ((ax.xaxis, "x"), (ax.yaxis, "y")):
        if not axis.get_visible() or not ax.axison:
            continue
        if _shown(axis.label):
            yield f"{where}: {xy} label {axis.label.get_text()!r}", axis.label
        if _shown(axis.offsetText):
            yield f"{where}: {xy} offset {axis.offsetText.get_text()!r}", axis.offsetText
        for what, label in _tick_labels(axis, xy):
            yield f"{where}: {what}", label
    for text in ax.texts:
        if _shown(text):
            yield f"{where}: text {text.get_text()!r}", text


def _all_axes(fig: Figure) -> Iterator[Axes]:
    """Every visible axes, with the child axes (``secondary_yaxis``) of each."""
    stack: list[Any] = list(fig.axes)
    seen: set[int] = set()
    while stack:
        ax = stack.pop(0)
        if id(ax) in seen or not ax.get_visible():
            continue
        seen.add(id(ax))
        yield ax
        stack.extend(ax.child_axes)


def _items(fig: Figure) -> list[_Item]:
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]  # Agg canvas
    items: list[_Item] = []
    owner = 0

    def add(what: str, artist: Text | None, box: Bbox | None = None) -> None:
        nonlocal owner
        if box is None:
            assert artist is not None
            box = artist.get_window_extent(renderer)
        if box.width > 0 and box.height > 0:
            owner += 1
            items.append(_Item(what, box, owner))

    for ax in _all_axes(fig):
        where = _panel_name(ax)
        for what, text in _axes_texts(ax, where):
            add(what, text)
        legend = ax.get_legend()
        if legend is not None and legend.get_visible():
            add(f"{where}: legend", None, legend.get_window_extent(renderer))
    # suptitle and friends have no public getter of their Text
    sup = [getattr(fig, attr, None) for attr in ("_suptitle", "_supxlabel", "_supylabel")]
    for sup_text in sup:
        if sup_text is not None and _shown(sup_text):
            add(f"figure title/label {sup_text.get_text()!r}", sup_text)
    for text in fig.texts:
        if _shown(text) and not any(text is t for t in sup):
            add(f"figure text {text.get_text()!r}", text)
    for legend in fig.legends:
        if legend.get_visible():
            add("figure legend", None, legend.get_window_extent(renderer))
    return items


def _overlap(a: Bbox, b: Bbox, slack: float) -> bool:
    dx = min(a.x1, b.x1) - max(a.x0, b.x0)
    dy = min(a.y1, b.y1) - max(a.y0, b.y0)
    return dx > slack and dy > slack


def _outside(box: Bbox, fig_box: BboxBase, slack: float) -> bool:
    return (box.x0 < fig_box.x0 - slack or box.y0 < fig_box.y0 - slack
            or box.x1 > fig_box.x1 + slack or box.y1 > fig_box.y1 + slack)


def _colorbar_problems(fig: Figure) -> Iterator[str]:
    """A colour bar of integer-valued data must have its ticks on integers."""
    mappables: list[ScalarMappable] = []
    for ax in _all_axes(fig):
        mappables.extend(m for m in (*ax.collections, *ax.images)
                         if isinstance(m, ScalarMappable))
    for m in mappables:
        cb = m.colorbar
        if cb is None or m.get_array() is None:
            continue
        data = np.ma.masked_invalid(np.ma.asarray(m.get_array(), dtype=np.float64)).compressed()
        if data.size == 0 or not np.all(data == np.round(data)):
            continue
        ticks = np.asarray(cb.get_ticks(), dtype=np.float64)
        lo, hi = sorted(cb.ax.yaxis.get_view_interval() if cb.orientation == "vertical"
                        else cb.ax.xaxis.get_view_interval())
        ticks = ticks[(ticks >= lo - 1e-9) & (ticks <= hi + 1e-9)]
        off = ticks[np.abs(ticks - np.round(ticks)) > 1e-9]
        if off.size:
            yield (f"colour bar {cb.ax.get_ylabel() or cb.ax.get_xlabel()!r} of integer data "
                   f"has ticks between integers: {', '.join(f'{t:g}' for t in off)}")


def _title_problems(fig: Figure) -> Iterator[str]:
    """Every panel (not a colour bar, not a twin, not switched off) has a descriptive title."""
    for ax in _figure.panels(fig):
        if not ax.axison:
            continue
        title = ax.title.get_text()
        if _LETTER_ONLY.match(title):
            yield (f"panel at {tuple(round(float(b), 2) for b in ax.get_position().bounds)} "
                   f"has no title beyond its letter: {title!r}")


def figure_problems(fig: Figure, *, slack_px: float = _SLACK_PX) -> list[str]:
    """Draw ``fig`` and list its clutter, one line each (empty: nothing found).

    Checked: every pair of drawn texts and legend boxes, within and across axes,
    must not overlap by more than ``slack_px`` pixels (scaled from 100 dpi) in
    both directions; no text or legend may run off the figure; a colour bar of
    integer-valued data has integer ticks only; every panel has a title that is
    more than its panel letter.
    """
    fig.canvas.draw()
    slack = slack_px * fig.dpi / 100.0
    items = _items(fig)
    problems: list[str] = []
    fig_box = fig.bbox
    for i, a in enumerate(items):
        if _outside(a.box, fig_box, slack):
            problems.append(f"{a.what} runs off the figure")
        for b in items[i + 1:]:
            if a.owner != b.owner and _overlap(a.box, b.box, slack):
                problems.append(f"{a.what} overlaps {b.what}")
    problems.extend(_colorbar_problems(fig))
    problems.extend(_title_problems(fig))
    return problems


@contextmanager
def on_save(hook: Callable[[Figure, Path], None]) -> Iterator[None]:
    """Call ``hook(fig, stem)`` on every figure :func:`~specdyn.plot.save_figure` saves.

    The hook runs after the figure is written and before it is closed, so it
    sees the figure exactly as saved (panel letters included).
    """
    _figure.SAVE_HOOKS.append(hook)
    try:
        yield
    finally:
        _figure.SAVE_HOOKS.remove(hook)
