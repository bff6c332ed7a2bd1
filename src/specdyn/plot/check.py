"""A figure checked by a program: overlapping text, text on lines, unexplained bands,
integer colour bars, panel titles, the shape, project history.

:func:`figure_problems` draws a figure and lists, one line each, what a reader
would see as clutter: two pieces of text whose drawn extents overlap (tick
labels, axis labels, titles, colour-bar labels, annotations, and legends taken
as whole boxes), text running off the figure, text inside a panel (a label, a
number in a cell, with its box if it has one) that a drawn line or marker
crosses, a band or hatched area (``axvspan``, ``fill_between``, a hatched
rectangle) that no legend entry or text names, a colour bar of integer-valued
data with ticks between the integers, a panel whose title is missing or is only
its panel letter, a figure wider than 4 : 1 (or taller than 1 : 4), and a commit
hash or an issue number in any text (project history, which stays in
docs/claims.md). The test of every experiment's figure
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
from specdyn.plot._placement import crossing_line

__all__ = ["MAX_ASPECT", "figure_problems", "history_mentions", "on_save"]

#: Overlaps of at most this many pixels (at 100 dpi) in either direction are not counted:
#: glyph boxes include the font's ascent and descent, which touch without ink meeting.
_SLACK_PX = 1.0

_LETTER_ONLY = re.compile(r"^\s*(\([a-z]\))?\s*$")

#: The widest (and, inverted, the tallest) figure a screen shows whole: 4 : 1.
MAX_ASPECT = 4.0

#: A commit hash (7 to 40 hex digits with a digit and a letter) and an issue number (the
#: word "issue" or "issues" before a number, or "#" before one): project history, never in
#: what a user reads.
_COMMIT = re.compile(r"\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")
_ISSUE = re.compile(r"\bissues?\s+#?\d+|#\d+\b", re.IGNORECASE)


def history_mentions(text: str) -> list[str]:
    """The commit hashes and issue numbers in ``text`` (each with a little context)."""
    found = []
    for pattern in (_COMMIT, _ISSUE):
        for m in pattern.finditer(text):
            found.append(repr(text[max(0, m.start() - 30):m.end() + 10]))
    return found


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


def _line_problems(fig: Figure, slack: float) -> Iterator[str]:
    """A text inside a panel (a label, a number in a cell) that a drawn line crosses or a
    marker sits on: the line strikes it through, or its box hides the line."""
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]  # Agg canvas
    for ax in _all_axes(fig):
        if ax.get_label() == "<colorbar>":
            continue
        for text in ax.texts:
            if not _shown(text):
                continue
            line = crossing_line(text, renderer, slack)
            if line is not None:
                name = str(line.get_label() or "")
                name = repr(name) if name and not name.startswith("_") else "a line"
                marked_only = line.get_linestyle() in ("None", "", " ")
                yield (f"{_panel_name(ax)}: text {text.get_text()!r} is crossed by {name} "
                       f"({'marker' if marked_only else 'line'})")


def _legend_texts(fig: Figure) -> set[str]:
    legends = [ax.get_legend() for ax in _all_axes(fig)] + list(fig.legends)
    return {t.get_text().strip() for lg in legends if lg is not None and lg.get_visible()
            for t in lg.get_texts()}


def _bands(ax: Axes) -> Iterator[Any]:
    """The filled or hatched areas of a panel that are not data bars: spans, fills
    between curves, polygons, hatched rectangles."""
    from matplotlib.collections import PolyCollection
    from matplotlib.patches import Polygon, Rectangle

    in_containers = {id(a) for c in ax.containers for a in c}
    for patch in ax.patches:
        if not patch.get_visible() or id(patch) in in_containers:
            continue
        if not isinstance(patch, (Rectangle, Polygon)):
            continue
        from matplotlib.colors import to_rgba

        filled = patch.get_fill() and to_rgba(patch.get_facecolor())[3] > 0
        if filled or patch.get_hatch():
            yield patch
    for coll in ax.collections:
        if type(coll).__name__ in ("PolyCollection", "FillBetweenPolyCollection") and \
                isinstance(coll, PolyCollection) and coll.get_visible():
            yield coll


def _look(band: Any) -> tuple:
    """What a band looks like (face colour, hatch): bands that look alike mean the same."""
    from matplotlib.colors import to_rgba

    face = band.get_facecolor()
    face = face[0] if np.ndim(face) == 2 and len(face) else face
    return tuple(np.round(to_rgba(face), 3)) + (band.get_hatch() or "",)


def _named(band: Any, names: set[str]) -> bool:
    label = str(band.get_label() or "")
    return bool(label) and not label.startswith("_") and label in names


def _band_problems(fig: Figure) -> Iterator[str]:
    """A band or hatched area that no legend entry and no text names (by its label), nor
    one that looks the same (the many cells or intervals of one legend entry)."""
    named = _legend_texts(fig)
    for ax in _all_axes(fig):
        texts = {t.get_text().strip() for t in ax.texts} | {t.get_text().strip()
                                                            for t in fig.texts}
        bands = list(_bands(ax))

        looks = {_look(b) for b in bands if _named(b, named | texts)}
        seen: set[str] = set()
        for band in bands:
            if _named(band, named | texts) or _look(band) in looks:
                continue
            label = str(band.get_label() or "")
            what = (f"band {label!r}" if label and not label.startswith("_")
                    else f"an unlabelled {'hatched area' if band.get_hatch() else 'band'}")
            if what not in seen:
                seen.add(what)
                yield f"{_panel_name(ax)}: {what} is explained by no legend entry or text"


def _aspect_problems(fig: Figure) -> Iterator[str]:
    w, h = (float(x) for x in fig.get_size_inches())
    ratio = max(w / h, h / w)
    if ratio > MAX_ASPECT + 1e-9:
        px = f"{w * fig.dpi:.0f} x {h * fig.dpi:.0f} px at {fig.dpi:g} dpi"
        yield (f"figure is {px}, aspect {ratio:.1f} : 1, beyond {MAX_ASPECT:g} : 1 "
               "(unreadable at screen width)")


def _history_problems(items: list[_Item], fig: Figure) -> Iterator[str]:
    texts = [t for ax in _all_axes(fig) for _, t in _axes_texts(ax, "")]
    legends = [ax.get_legend() for ax in _all_axes(fig)] + list(fig.legends)
    texts += [t for lg in legends if lg is not None for t in lg.get_texts()]
    texts += [t for t in fig.texts]
    texts += [t for t in (getattr(fig, "_suptitle", None),) if t is not None]
    for t in texts:
        for m in history_mentions(t.get_text()):
            yield f"text {t.get_text()[:60]!r} names project history: {m}"


def figure_problems(fig: Figure, *, slack_px: float = _SLACK_PX) -> list[str]:
    """Draw ``fig`` and list its clutter, one line each (empty: nothing found).

    Checked: every pair of drawn texts and legend boxes, within and across axes,
    must not overlap by more than ``slack_px`` pixels (scaled from 100 dpi) in
    both directions; no text or legend may run off the figure; no drawn line or
    marker may cross a text inside a panel; every band or hatched area is named by
    a legend entry or a text (its label); a colour bar of integer-valued data has
    integer ticks only; every panel has a title that is more than its panel letter;
    the figure is at most :data:`MAX_ASPECT` : 1 either way; no text names a commit
    or an issue.
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
    problems.extend(_line_problems(fig, slack))
    problems.extend(_band_problems(fig))
    problems.extend(_colorbar_problems(fig))
    problems.extend(_title_problems(fig))
    problems.extend(_aspect_problems(fig))
    problems.extend(_history_problems(items, fig))
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
