"""Figures of the exact theory: exponent maps (Fig. 3), first-layer spectra and regions (5-6)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib
import numpy as np
from matplotlib import colors
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from specdyn.plot._figure import new_figure
from specdyn.plot._placement import label_off_lines

_BOUNDARY_STYLE: dict[str, dict[str, Any]] = {
    "k_learn": dict(color="white", ls="-", lw=1.6),
    "k_cross": dict(color="black", ls="--", lw=1.6),
    "k_layer": dict(color="magenta", ls=":", lw=1.8),
    "k1": dict(color="black", ls="--", lw=1.4),
    "k2": dict(color="black", ls="-.", lw=1.4),
    "Eq. (32) mode, to IIIa": dict(color="cyan", ls="-.", lw=1.0),
    "Eq. (32) mode, to IIIb": dict(color="orange", ls="-.", lw=1.0),
}


_LABEL_BOX = dict(boxstyle="round,pad=0.25", fc="white", ec="0.4", alpha=0.9)


def _exponent_map(fig: Figure, ax: Axes, k: np.ndarray, t: np.ndarray, aeff: np.ndarray,
                  boundaries: Mapping[str, np.ndarray], title: str,
                  vlim: tuple[float, float],
                  marks: Sequence[tuple[float, float, str]] = ()) -> None:
    mesh = ax.pcolormesh(t, k, aeff, shading="auto", cmap="viridis", vmin=vlim[0], vmax=vlim[1],
                         rasterized=True)
    extend = "max" if float(np.max(aeff)) > vlim[1] else "neither"
    for name, kb in boundaries.items():
        ok = np.isfinite(kb) & (kb >= k.min()) & (kb <= k.max())
        if ok.any():
            ax.plot(t[ok], kb[ok], label=name, **_BOUNDARY_STYLE.get(name, {}))
    # region labels sit in an opaque box; fig3 moves one that a line crosses off it
    # (label_off_lines), pointing at its region
    for tt, kk, text in marks:
        ax.text(tt, kk, text, ha="center", va="center", fontsize=8, zorder=6, bbox=_LABEL_BOX)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(k.min(), k.max())
    ax.set_xlabel("training time t")
    ax.set_ylabel("mode k")
    ax.set_title(title, fontsize=9, pad=8)  # clear of a log axis's top tick label
    ax.figure.colorbar(mesh, ax=ax, label=r"$\alpha_{\rm eff}(k,t)$", extend=extend)


def fig3(panels: Sequence[Mapping], slices: Mapping) -> Figure:
    """Local exponent over the (k, t) plane with boundaries, plus slices at fixed t.

    ``panels``: dicts with ``k``, ``t``, ``alpha_eff`` (len(k) x len(t)),
    ``boundaries`` (name -> k(t)), ``title`` and optional ``marks`` (``(t, k,
    text)`` region labels). ``slices``: ``k``, ``t`` (a few times),
    ``alpha_eff`` (len(t) x len(k)), ``exponents`` (label -> value), ``title``.
    The colour scale spans the data's minimum to the largest exponent + 0.5.
    Drawn as a 2 x 2 grid when there are three panels.
    """
    n = len(panels) + 1
    ncols = 2 if n == 4 else n
    # rows apart: panel (d)'s plateau names on its right pushed (b)'s colour bar away
    fig, axes = new_figure(ncols=ncols, nrows=(n + ncols - 1) // ncols, width=5.2, height=4.2,
                           rows_apart=True)
    # the colour scale ends just above the largest plateau: the transient overshoot
    # between Regions I and II (up to ~9) would otherwise wash the plateaus out
    lo = min(float(np.min(p["alpha_eff"])) for p in panels)
    hi = max(slices["exponents"].values()) + 0.5
    for ax, p in zip(axes, panels, strict=False):
        _exponent_map(fig, ax, p["k"], p["t"], p["alpha_eff"], p["boundaries"], p["title"],
                      (lo, hi), p.get("marks", ()))
    # one legend for the boundary lines of every map, below the figure: inside a map it
    # covered the region labels and the data (each line has one style in every panel)
    handles: dict[str, Any] = {}
    for ax in axes[:len(panels)]:
        for h, name in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(name, h)
    if handles:
        leg = fig.legend(list(handles.values()), list(handles), loc="outside lower center",
                         ncol=min(len(handles), 5), fontsize=8, framealpha=0.9)
        leg.get_frame().set_facecolor("0.75")  # the white k_learn line stays visible
    ax = axes[len(panels)]
    norm = colors.LogNorm(vmin=float(np.min(slices["t"])), vmax=float(np.max(slices["t"])))
    cmap = colors.ListedColormap(matplotlib.colormaps["plasma"](np.linspace(0, 0.9, 256)))
    for tt, row in zip(slices["t"], slices["alpha_eff"], strict=True):
        ax.plot(slices["k"], row, color=cmap(norm(tt)), lw=1.4)
    for val in slices["exponents"].values():
        ax.axhline(val, color="gray", ls=":", lw=1, zorder=0)
    # plateau names as ticks on a right-hand axis: outside the data, never crossed by a curve
    right = ax.secondary_yaxis("right")
    right.set_yticks(list(slices["exponents"].values()), labels=list(slices["exponents"]),
                     fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("mode k")
    ax.set_ylabel(r"$\alpha_{\rm eff}(k,t)$")
    ax.set_title(slices["title"], fontsize=9)
    sm = matplotlib.cm.ScalarMappable(norm=norm, cmap=cmap)
    ax.figure.colorbar(sm, ax=ax, label="training time t")
    for extra in axes[n:]:
        extra.set_visible(False)
    fig.canvas.draw()  # the layout fixes the pixels: then a label on a line moves off it
    for ax in axes[:len(panels)]:
        for text in list(ax.texts):
            label_off_lines(text)
    return fig


def spectra_over_time(k: np.ndarray, t: np.ndarray, rho: np.ndarray, *, title: str,
                      guides: Mapping[str, float] | None = None,
                      theory: np.ndarray | None = None,
                      data_label: str = "") -> Figure:
    """``rho_k(t)`` against ``k`` on log axes, one curve per time, coloured by time (Fig. 5).

    ``guides``: label -> exponent ``a`` of a dashed ``k^-a`` guide, anchored at
    the last curve's ``rho_1`` and drawn only where it stays inside the data's
    range (so it never stretches the axis); labelled in the legend. ``theory``:
    optional ``(len(t), len(k))`` curves drawn as thin black lines under ``rho``
    drawn as markers (``data_label``), e.g. a simulation beside its theory.
    """
    fig, (ax,) = new_figure(width=5.6, height=4.2)
    positive_t = t[t > 0]
    norm = colors.LogNorm(vmin=float(positive_t.min()), vmax=float(positive_t.max()))
    cmap = matplotlib.colormaps["viridis"]
    for i, (tt, row) in enumerate(zip(t, rho, strict=True)):
        col = cmap(norm(tt)) if tt > 0 else "black"
        if theory is None:
            ax.plot(k, row, color=col, lw=1.2, label="t = 0" if tt == 0 else None)
            continue
        ax.plot(k, theory[i], color="black", lw=0.8, alpha=0.7,
                label="exact theory" if i == 0 else None)
        ax.plot(k, row, "o", ms=3, mfc="none", color=col,
                label=(data_label or "data") + " (t = 0 black)" if i == 0 else None)
    lo_y, hi_y = float(np.min(rho[rho > 0])), float(np.max(rho))
    if guides:
        anchor = float(rho[-1][0]) * 3
        styles = ["--", "-.", ":"]
        for i, (name, slope) in enumerate(guides.items()):
            g = anchor * k**-slope
            keep = g >= lo_y
            ax.plot(k[keep], g[keep], color="0.35", ls=styles[i % 3], lw=1.1,
                    label=f"slope {name}")
    ax.set_ylim(lo_y / 2, hi_y * 6)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("mode k")
    ax.set_ylabel(r"$\rho_k(t)$")
    ax.set_title(title, fontsize=9)
    ax.legend(loc="lower left", fontsize=8, framealpha=0.9)
    fig.colorbar(matplotlib.cm.ScalarMappable(norm=norm, cmap=cmap), ax=ax,
                 label="training time t")
    return fig


def region_map(k: np.ndarray, t: np.ndarray, labels: np.ndarray, order: Sequence[str],
               exponents: Mapping[str, float], boundaries: Mapping[str, np.ndarray], *,
               title: str) -> Figure:
    """Region labels over the (k, t) plane as a categorical map with boundary lines (Fig. 6)."""
    fig, (ax,) = new_figure(width=5.4, height=4.0)
    codes = np.zeros(labels.shape)
    for i, name in enumerate(order):
        codes[labels == name] = i
    cmap = colors.ListedColormap(matplotlib.colormaps["Pastel1"](np.arange(len(order))))
    norm = colors.BoundaryNorm(np.arange(len(order) + 1) - 0.5, len(order))
    mesh = ax.pcolormesh(t, k, codes, cmap=cmap, norm=norm, shading="auto", rasterized=True)
    for name, kb in boundaries.items():
        ok = np.isfinite(kb) & (kb >= k.min()) & (kb <= k.max())
        if ok.any():
            ax.plot(t[ok], kb[ok], label=name, **_BOUNDARY_STYLE.get(name, {"color": "k"}))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(k.min(), k.max())
    ax.set_xlabel("training time t")
    ax.set_ylabel("mode k")
    ax.set_title(title)
    cb = fig.colorbar(mesh, ax=ax, ticks=np.arange(len(order)))
    cb.ax.set_yticklabels([f"{n}: {exponents[n]:.3g}" for n in order])
    cb.set_label(r"region: asymptotic $\alpha_{\rm eff}$")
    leg = ax.legend(loc="lower right", fontsize=8, framealpha=0.9)
    leg.get_frame().set_facecolor("0.6")  # the white k_learn line stays visible
    return fig
