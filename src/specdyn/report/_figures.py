"""The figures of the HTML report (:mod:`specdyn.report`): plotly, data inline.

A layer's two panels (:func:`layer_figure`: exponent and outliers over steps; the
spectrum at chosen steps) and the overview of every layer's exponent
(:func:`overview`). Steps the tracker scheduled but did not measure (coalesced:
``record.json``'s ``"coalesced"``) are drawn as gaps, never bridged by a line: a
curve over steps breaks between the two measured steps around them, and a grey
band, named in the legend, covers the coalesced steps (:func:`gaps`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from specdyn.measure import rank_tolerance

__all__ = ["KINDS", "gaps", "layer_figure", "log_axis", "overview"]

#: The kinds of spectra a tracker records, in the page's order.
KINDS = ("weight", "activation")

# Plotly's default qualitative palette (10 colours), reused for steps.
_COLORS = ("#636efa", "#ef553b", "#00cc96", "#ab63fa", "#ffa15a", "#19d3f3", "#ff6692",
           "#b6e880", "#ff97ff", "#fecb52")
#: One marker symbol a selected step (up to 10), open and filled in turn: spectra of
#: nearby steps overlap, and colour alone did not tell them apart.
_SYMBOLS = ("circle-open", "square", "diamond-open", "triangle-up", "x-thin-open", "cross",
            "triangle-down-open", "star", "hexagon-open", "pentagon")


def log_axis(lo: float, hi: float) -> dict[str, Any]:
    """Plotly settings of a log axis over ``[lo, hi]`` labelled at whole decades (10^n),
    every decade (every n-th beyond 8), with unlabelled minor ticks at 2..9 between. The
    range is the data's when it holds two decade ticks or more, else it widens to the
    decades around the data, so that two are labelled. (An axis labelled at one decade
    and a few small 2 and 5 ticks could not be read.)"""
    if not (lo > 0 and hi >= lo and math.isfinite(hi)):
        lo, hi = 1.0, 10.0
    x0, x1 = math.log10(lo), math.log10(hi)
    if math.floor(x1 + 1e-9) - math.ceil(x0 - 1e-9) + 1 >= 2:
        pad = 0.03 * (x1 - x0)
        x0, x1 = x0 - pad, x1 + pad
    else:
        x0, x1 = math.floor(x0 + 1e-9), math.ceil(x1 - 1e-9)
        x1 = max(x1, x0 + 1)
    return {"type": "log", "range": [x0, x1],
            "dtick": max(1, math.ceil((x1 - x0) / 8)), "exponentformat": "power",
            "minor": {"ticks": "outside", "ticklen": 3, "dtick": "D1", "showgrid": False}}


_MAX_POINTS = 200  # per plotted spectrum: log-spaced ranks keep the file small


def _thin(rank: np.ndarray) -> np.ndarray:
    """Indices of at most ``_MAX_POINTS`` ranks, log-spaced (all of them when few)."""
    if rank.size <= _MAX_POINTS:
        return np.arange(rank.size)
    idx = np.unique(np.geomspace(1, rank.size, _MAX_POINTS).astype(np.int64) - 1)
    return idx


def _zero_note(zeros: dict[int, tuple[int, int]]) -> str:
    """The line under a spectrum panel saying how many numerical zeros it leaves out."""
    hidden = {st: nz for st, nz in zeros.items() if nz[0]}
    if not hidden:
        return ""
    counts = {nz for nz in hidden.values()}
    if len(counts) == 1 and len(hidden) == len(zeros):
        n, total = counts.pop()
        what = f"{n} of {total} eigenvalues at every selected step are"
    else:
        what = "; ".join(f"step {st}: {n} of {total}" for st, (n, total) in hidden.items())
        what = f"eigenvalues ({what}) are"
    return (f"Not on the log axis: {what} at or below the rank tolerance (largest x "
            "matrix size x float64 eps): numerical zeros, kept in the tracker's tables.")


def layer_figure(layer: str, kind: str, summ: pd.DataFrame, eig: pd.DataFrame,
                 steps: list[int], size: float | None = None,
                 skipped: Sequence[tuple[int, int]] = ()) -> tuple[Any, str]:
    """The two panels of one layer and kind, and the note on the eigenvalues left out.

    ``size``: the larger side of the matrix whose Gram was diagonalised (the rank
    tolerance's size); default the number of eigenvalues recorded. ``skipped``:
    the coalesced ranges (:func:`gaps`), drawn as gaps in the curves over steps.
    """
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, specs=[[{"secondary_y": True}, {}]],
                        horizontal_spacing=0.12,
                        subplot_titles=(f"{kind} exponent a and outliers over steps",
                                        f"{kind} spectrum at selected steps"))
    s = summ.sort_values("step")
    x = s["step"].to_numpy() + 1  # log axis: step + 1
    step = s["step"].to_numpy()
    if "exponent" in s:
        ok = s["exponent"].notna().to_numpy()
        a = s["exponent"].to_numpy()[ok]
        lo = hi = a
        if {"exponent_ci_low", "exponent_ci_high"} <= set(s.columns):
            lo, hi = (s[c].to_numpy()[ok] for c in ("exponent_ci_low", "exponent_ci_high"))
            xs, ys = [], []
            for seg in _segments(step[ok], skipped):  # one closed band per stretch
                xs += [*x[ok][seg], *x[ok][seg][::-1], None]
                ys += [*hi[seg], *lo[seg][::-1], None]
            fig.add_scatter(x=xs, y=ys, fill="toself", fillcolor="rgba(99,110,250,0.2)",
                            line={"width": 0}, hoverinfo="skip", name="95 % interval of a",
                            row=1, col=1)
        _add_gaps(fig, skipped, np.nanmin(lo) if lo.size else 0.0,
                  np.nanmax(hi) if hi.size else 1.0, row=1, col=1)
        fig.add_scatter(**_broken(step[ok], a, skipped), mode="lines+markers",
                        name="exponent a", line={"color": _COLORS[0]}, row=1, col=1)
    top = 1.0
    if "n_outliers" in s:
        ok = s["n_outliers"].notna().to_numpy()
        n_out = s["n_outliers"].to_numpy()[ok]
        top = max(float(n_out.max()) if n_out.size else 1.0, 1.0)
        fig.add_scatter(**_broken(step[ok], n_out, skipped), mode="lines+markers",
                        line={"shape": "hv", "color": _COLORS[1], "dash": "dot"},
                        name="outliers above MP edge", row=1, col=1, secondary_y=True)
    fig.update_xaxes(title_text="step + 1", row=1, col=1,
                     **log_axis(float(x.min()) if x.size else 1.0,
                                float(x.max()) if x.size else 10.0))
    fig.update_yaxes(title_text="rank exponent a", row=1, col=1, secondary_y=False)
    # Whole numbers on the outlier axis, from 0 (an axis of all-zero counts stays 0..1).
    fig.update_yaxes(title_text="outliers (dotted)", row=1, col=1, secondary_y=True,
                     range=[-0.05 * top, 1.1 * top], tickformat="d",
                     dtick=max(1, int(np.ceil(top / 5))), showgrid=False)

    by_step = s.set_index("step")
    zeros: dict[int, tuple[int, int]] = {}
    shown: list[np.ndarray] = []
    k_max = 10.0
    points, lines = [], []  # the eigenvalues are added last: drawn above the lines
    for i, st in enumerate(steps):
        e = eig[eig["step"] == st].sort_values("rank")
        if e.empty:
            continue
        color = _COLORS[i % len(_COLORS)]
        k, lam = e["rank"].to_numpy(), e["value"].to_numpy(dtype=np.float64)
        # numerical zeros (round-off of a rank-deficient matrix, ~1e-15 of the largest)
        # would stretch the log axis over 17 decades: counted, not drawn
        tol = rank_tolerance(float(np.nanmax(lam)) if lam.size else 0.0,
                             size if size else lam.size)
        pos = np.isfinite(lam) & (lam > tol)
        zeros[st] = (int(lam.size - pos.sum()), int(lam.size))
        k, lam = k[pos], lam[pos]
        if lam.size == 0:
            continue
        shown.append(lam)
        k_max = max(k_max, float(k.max()))
        idx = _thin(k)
        points.append(dict(x=k[idx], y=lam[idx], mode="markers", name=f"step {st}",
                           legendgroup=f"s{st}", opacity=0.85,
                           marker={"size": 6, "color": color,
                                   "symbol": _SYMBOLS[i % len(_SYMBOLS)],
                                   "line": {"width": 1, "color": color}}))
        if st not in by_step.index:
            continue
        r = by_step.loc[st]
        if pd.notna(r.get("exponent")) and pd.notna(r.get("exponent_amplitude")):
            kk = np.geomspace(r["exponent_kmin"], r["exponent_kmax"], 20)
            lines.append(dict(x=kk, y=r["exponent_amplitude"] * kk ** -r["exponent"],
                              mode="lines", line={"color": color, "dash": "dash", "width": 1},
                              name=f"fit a={r['exponent']:.2f} (step {st})",
                              legendgroup=f"s{st}", showlegend=False))
        if pd.notna(r.get("mp_edge")):
            lines.append(dict(x=[1, max(int(k.max()), 2)], y=[r["mp_edge"]] * 2, mode="lines",
                              line={"color": color, "dash": "dot", "width": 1},
                              name=f"MP edge (step {st})", legendgroup=f"s{st}",
                              showlegend=False))
    for trace in lines + points:
        fig.add_scatter(**trace, row=1, col=2)
    lam_all = np.concatenate(shown) if shown else np.array([])
    fig.update_xaxes(title_text="rank k", row=1, col=2, **log_axis(1.0, k_max))
    fig.update_yaxes(title_text="eigenvalue (dashed: fit, dotted: MP edge)", row=1, col=2,
                     **log_axis(float(lam_all.min()) if lam_all.size else 1.0,
                                float(lam_all.max()) if lam_all.size else 10.0))
    fig.update_layout(height=330, margin={"l": 60, "r": 20, "t": 40, "b": 45},
                      legend={"font": {"size": 11}}, template="plotly_white",
                      font={"size": 12})
    return fig, _zero_note(zeros)


def overview(summ: dict[str, pd.DataFrame], skipped: Sequence[tuple[int, int]] = ()) -> Any:
    """Every layer's exponent over steps, weights and activations side by side; the
    coalesced ranges (``skipped``, :func:`gaps`) as gaps."""
    from plotly.subplots import make_subplots

    kinds = [k for k in KINDS if not summ[k].empty and "exponent" in summ[k]]
    fig = make_subplots(rows=1, cols=max(len(kinds), 1), horizontal_spacing=0.08,
                        subplot_titles=[f"{k} rank exponent a, every layer" for k in kinds])
    for c, kind in enumerate(kinds, start=1):
        ex = summ[kind]["exponent"]
        _add_gaps(fig, skipped, ex.min(), ex.max(), row=1, col=c, legend=c == 1)
        for j, (layer, g) in enumerate(summ[kind].groupby("layer", sort=False)):
            g = g.sort_values("step")
            ok = g["exponent"].notna()
            # markers too: a layer recorded at one step only (activations need a forward
            # pass, so close() adds none) is a single point, which a line alone never draws
            fig.add_scatter(**_broken(g["step"][ok].to_numpy(), g["exponent"][ok].to_numpy(),
                                      skipped), mode="lines+markers",
                            name=f"{layer} ({kind})", line={"width": 1.5,
                                                            "color": _COLORS[j % 10]},
                            marker={"size": 5}, row=1, col=c)
        steps1 = summ[kind]["step"].to_numpy() + 1
        fig.update_xaxes(title_text="step + 1", row=1, col=c,
                         **log_axis(float(steps1.min()), float(steps1.max())))
        fig.update_yaxes(title_text="rank exponent a", row=1, col=c)
    fig.update_layout(height=420, template="plotly_white", margin={"l": 60, "r": 20, "t": 40,
                                                                   "b": 45},
                      legend={"font": {"size": 10}}, font={"size": 12})
    return fig


def gaps(recorded: Sequence[int], coalesced: Sequence[int]) -> list[tuple[int, int]]:
    """``(first, last)`` coalesced step of each stretch between two consecutive recorded
    steps that holds any: the ranges the figures leave open."""
    rec = np.unique(np.asarray(recorded, dtype=np.int64))
    out: list[list[int]] = []
    for c in np.unique(np.asarray(coalesced, dtype=np.int64)):
        i = int(np.searchsorted(rec, c))
        if out and (out[-1][2] == i):
            out[-1][1] = int(c)
        else:
            out.append([int(c), int(c), i])
    return [(a, b) for a, b, _ in out]


def _segments(steps: np.ndarray, skipped: Sequence[tuple[int, int]]) -> list[np.ndarray]:
    """Indices of ``steps`` (increasing) in stretches not separated by a coalesced range."""
    cuts = [i for i in range(1, len(steps))
            if any(steps[i - 1] < a and b < steps[i] for a, b in skipped)]
    return [np.arange(lo, hi) for lo, hi in zip([0, *cuts], [*cuts, len(steps)], strict=True)
            if hi > lo]


def _broken(steps: np.ndarray, y: np.ndarray, skipped: Sequence[tuple[int, int]]
            ) -> dict[str, list[Any]]:
    """``x`` (step + 1) and ``y`` of a curve with a ``None`` across each coalesced range."""
    xs: list[Any] = []
    ys: list[Any] = []
    for seg in _segments(np.asarray(steps), skipped):
        if xs:
            xs.append(None)
            ys.append(None)
        xs += [float(v) + 1 for v in np.asarray(steps)[seg]]
        ys += [float(v) for v in np.asarray(y)[seg]]
    return {"x": xs, "y": ys}


def _add_gaps(fig: Any, skipped: Sequence[tuple[int, int]], lo: float, hi: float, *, row: int,
              col: int, legend: bool = True) -> None:
    """A grey band over each coalesced range, from ``lo`` to ``hi`` (the curve's span)."""
    if not skipped or not (math.isfinite(lo) and math.isfinite(hi)):
        return
    pad = 0.05 * (hi - lo) if hi > lo else 0.5
    xs: list[Any] = []
    ys: list[Any] = []
    for a, b in skipped:  # on the log axis of step + 1; a lone step gets a visible width
        x0, x1 = a + 1.0, max(b + 1.0, (a + 1.0) * 1.15)
        xs += [x0, x1, x1, x0, x0, None]
        ys += [lo - pad, lo - pad, hi + pad, hi + pad, lo - pad, None]
    fig.add_scatter(x=xs, y=ys, fill="toself", fillcolor="rgba(120,120,120,0.18)",
                    line={"width": 0}, mode="lines", hoverinfo="skip", legendgroup="gaps",
                    name="not measured: coalesced steps", showlegend=legend, row=row, col=col)
