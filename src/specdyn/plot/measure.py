"""Figures of measured spectra: rank plots with fits and MP edges, tracker histories."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib import colors
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from specdyn.plot._figure import new_figure

__all__ = ["draw_spectrum", "plot_layer_summaries", "plot_tracker", "plot_tracker_spectra"]


def draw_spectrum(ax: Axes, eigs: np.ndarray, *, fit: Any = None, mp: Any = None,
                  outliers: Any = None, title: str | None = None) -> None:
    """Eigenvalue against rank on log-log axes, with the power-law fit and the MP edge.

    ``fit``: a ``PowerLawFit``; ``mp``: an ``MPFit`` (its top edge is drawn as a
    horizontal line); ``outliers``: an ``OutlierReport`` (outliers are circled).
    """
    lam = np.asarray(eigs, dtype=np.float64)
    k = np.arange(1, lam.size + 1)
    pos = lam > 1e-12 * lam.max() if lam.size and lam.max() > 0 else lam > 0  # drop numerical zeros
    ax.loglog(k[pos], lam[pos], ".", ms=3, color="C0", label="eigenvalues")
    if fit is not None:
        kk = np.arange(fit.kmin, fit.kmax + 1)
        ax.loglog(kk, fit.amplitude * kk ** (-fit.exponent), "-", color="C3", lw=1.5,
                  label=f"a = {fit.exponent:.3f} [{fit.ci_low:.3f}, {fit.ci_high:.3f}]")
    if mp is not None:
        ax.axhline(mp.hi, color="k", ls="--", lw=1, label=f"MP edge {mp.hi:.3g}")
    if outliers is not None and outliers.n_outliers > 0:
        idx = np.arange(outliers.n_outliers)
        ax.loglog(idx + 1, outliers.eigenvalues[idx], "o", mfc="none", mec="C1", ms=8,
                  label=f"{outliers.n_outliers} outlier(s)")
    ax.set_xlabel("rank k")
    ax.set_ylabel(r"eigenvalue $\lambda_k$")
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="lower left")


def plot_layer_summaries(summaries: Sequence[Any], *, max_panels: int = 16) -> Figure:
    """One panel per analysed layer (``LayerSummary`` objects with a spectrum)."""
    ok = [s for s in summaries if s.eigs is not None][:max_panels]
    if not ok:
        fig, axes = new_figure()
        axes[0].text(0.5, 0.5, "no layer had a matrix spectrum", ha="center", va="center")
        axes[0].set_axis_off()
        return fig
    ncols = min(4, len(ok))
    nrows = int(np.ceil(len(ok) / ncols))
    fig, axes = new_figure(ncols=ncols, nrows=nrows, width=3.8, height=3.0)
    for ax, s in zip(axes, ok, strict=False):
        shape = "x".join(map(str, s.matrix_shape)) if s.matrix_shape else ""
        draw_spectrum(ax, s.eigs, fit=s.fit, mp=s.mp, outliers=s.outliers,
                      title=f"{s.name} ({shape})")
    for ax in axes[len(ok):]:
        ax.set_axis_off()
    return fig


def plot_tracker(table: pd.DataFrame, quantity: str = "activation_exponent",
                 layers: Sequence[str] | None = None) -> Figure:
    """A per-layer summary quantity from ``SpectrumTracker.table()`` against step (log axis)."""
    df = table[(table["quantity"] == quantity) & (table["rank"] == 0)]
    fig, axes = new_figure()
    ax = axes[0]
    names = list(dict.fromkeys(df["layer"])) if layers is None else list(layers)
    for name in names:
        d = df[df["layer"] == name].sort_values("step")
        ax.plot(d["step"] + 1, d["value"], "o-", ms=3, label=str(name))
        lo = table[(table["quantity"] == f"{quantity}_ci_low") & (table["layer"] == name)]
        hi = table[(table["quantity"] == f"{quantity}_ci_high") & (table["layer"] == name)]
        if len(lo) == len(d) and len(hi) == len(d) and len(d):
            ax.fill_between(d["step"] + 1, lo.sort_values("step")["value"],
                            hi.sort_values("step")["value"], alpha=0.2)
    ax.set_xscale("log")
    ax.set_xlabel("step + 1")
    ax.set_ylabel(quantity.replace("_", " "))
    if names:
        ax.legend(title="layer", fontsize=8)
    return fig


def plot_tracker_spectra(table: pd.DataFrame, layer: str, kind: str = "activation") -> Figure:
    """Spectra of one layer at every recorded step, coloured by step (log colour scale)."""
    df = table[(table["layer"] == layer) & (table["quantity"] == f"{kind}_eigenvalue")]
    fig, axes = new_figure(width=5.2)
    ax = axes[0]
    steps = np.sort(df["step"].unique())
    if steps.size == 0:
        ax.text(0.5, 0.5, f"no {kind} spectra for {layer}", ha="center", va="center")
        return fig
    norm = colors.LogNorm(vmin=1, vmax=max(2, int(steps.max()) + 1))
    cmap = matplotlib.colormaps["viridis"]
    for s in steps:
        d = df[df["step"] == s].sort_values("rank")
        pos = d["value"] > 1e-12 * d["value"].max()  # numerical zeros are not spectrum
        ax.loglog(d["rank"][pos], d["value"][pos], "-", lw=1, color=cmap(norm(s + 1)))
    sm = matplotlib.cm.ScalarMappable(norm=norm, cmap=cmap)
    fig.colorbar(sm, ax=ax, label="step + 1")
    ax.set_xlabel("rank k")
    ax.set_ylabel(r"eigenvalue $\lambda_k$")
    ax.set_title(f"{kind} spectrum of {layer}", fontsize=9)
    return fig
