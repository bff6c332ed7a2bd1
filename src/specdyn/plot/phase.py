"""Phase diagrams: any scalar summary of a set of runs over two swept axes.

The input is a table with one row per run (for a sweep:
``specdyn.runs.load_records(folder)``, whose summary numbers are the columns
``summary.NAME``); rows that share a grid cell (several seeds) are averaged,
or, for a label column, the most frequent label is shown. Theory boundaries
are drawn over the map as curves.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import matplotlib
import numpy as np
import pandas as pd
from matplotlib import colors, patheffects
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from specdyn.plot._figure import new_figure


@dataclass(frozen=True)
class Boundary:
    """A theory boundary: the curve ``y = fn(x)`` (NaN where it does not exist)."""

    label: str
    fn: Callable[[np.ndarray], np.ndarray]
    style: str = "-"
    color: str = "white"


def grid_table(df: pd.DataFrame, x: str, y: str, value: str) -> pd.DataFrame:
    """``value`` pivoted onto the (y rows, x columns) grid; seeds averaged, labels by mode."""
    for col in (x, y, value):
        if col not in df.columns:
            raise ValueError(f"column {col!r} not in the table; columns: {', '.join(df.columns)}")
    data = df[[x, y, value]].dropna(subset=[x, y])
    if data.empty:
        raise ValueError("no rows to plot")
    if pd.api.types.is_numeric_dtype(data[value]):
        agg: str | Callable[[pd.Series], object] = "mean"
    else:
        def agg(s: pd.Series) -> object:
            s = s.dropna()
            return s.mode().iloc[0] if len(s) else None
    return data.pivot_table(index=y, columns=x, values=value, aggfunc=agg, dropna=False)


def _edges(centres: np.ndarray, log: bool) -> np.ndarray:
    c = np.log(centres) if log else centres.astype(np.float64)
    if c.size == 1:
        half = 0.5 if not log else np.log(2.0)
        e = np.array([c[0] - half, c[0] + half])
    else:
        mid = 0.5 * (c[1:] + c[:-1])
        e = np.concatenate([[2 * c[0] - mid[0]], mid, [2 * c[-1] - mid[-1]]])
    return np.exp(e) if log else e


def phase_diagram(df: pd.DataFrame, x: str, y: str, value: str, *, ax: Axes | None = None,
                  logx: bool = True, logy: bool = True,
                  boundaries: Sequence[Boundary] = (), title: str | None = None,
                  xlabel: str | None = None, ylabel: str | None = None,
                  value_label: str | None = None, cmap: str = "viridis",
                  vmin: float | None = None, vmax: float | None = None,
                  label_colors: Mapping[str, str] | None = None) -> Figure:
    """A map of ``value`` over the grid of ``x`` and ``y`` values in ``df``, with boundaries.

    Parameters
    ----------
    df
        One row per run; ``x``, ``y`` and ``value`` are column names. Numeric
        values get a colour bar; other values (regime labels) get one colour
        per label and a legend.
    ax
        Draw into these axes (of an existing figure); a new figure otherwise.
    boundaries
        Theory curves drawn over the map, over the plotted x range.
    """
    table = grid_table(df, x, y, value)
    xs = np.asarray(table.columns, dtype=np.float64)
    ys = np.asarray(table.index, dtype=np.float64)
    if (logx and (xs <= 0).any()) or (logy and (ys <= 0).any()):
        raise ValueError("log axes need positive x and y values; pass logx/logy=False")
    if ax is None:
        fig, (ax,) = new_figure(width=5.2, height=4.2)
    else:
        fig = ax.figure  # type: ignore[assignment]
    xe, ye = _edges(xs, logx), _edges(ys, logy)
    vals = table.to_numpy()
    if pd.api.types.is_numeric_dtype(df[value]):
        mesh = ax.pcolormesh(xe, ye, np.asarray(vals, dtype=np.float64), cmap=cmap,
                             vmin=vmin, vmax=vmax, shading="flat")
        fig.colorbar(mesh, ax=ax, label=value_label or value)
    else:
        labels = sorted({str(v) for v in vals.ravel() if v is not None and v == v})
        palette = matplotlib.colormaps["Set2"]
        lut = {lab: (label_colors or {}).get(lab, palette(i % 8)) for i, lab in
               enumerate(labels)}
        codes = np.full(vals.shape, np.nan)
        for i, lab in enumerate(labels):
            codes[vals == lab] = i
        cm = colors.ListedColormap([lut[lab] for lab in labels] or ["white"])
        ax.pcolormesh(xe, ye, codes, cmap=cm, vmin=-0.5, vmax=max(len(labels), 1) - 0.5,
                      shading="flat")
        handles = [Patch(color=lut[lab], label=lab) for lab in labels]
        ax.legend(handles=handles, title=value_label or value, fontsize=8, loc="lower right",
                  framealpha=0.85)
    xx = np.geomspace(xe[0], xe[-1], 400) if logx else np.linspace(xe[0], xe[-1], 400)
    for b in boundaries:
        yy = np.asarray(b.fn(xx), dtype=np.float64)
        # a dark outline keeps a light line visible on any cell colour and in the legend
        ax.plot(xx, yy, b.style, color=b.color, lw=1.8, label=b.label,
                path_effects=[patheffects.Stroke(linewidth=3.2, foreground="0.15"),
                              patheffects.Normal()])
    if boundaries:
        # the label legend (if any) stays; boundaries get a second one
        leg = ax.get_legend()
        ax.legend(loc="upper left", fontsize=8, framealpha=0.85)
        if leg is not None:
            ax.add_artist(leg)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlim(xe[0], xe[-1])
    ax.set_ylim(ye[0], ye[-1])
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel or y)
    if title:
        ax.set_title(title)
    return fig
