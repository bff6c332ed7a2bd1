"""Figure of the finite-size theory against simulation, and of the effective nonlinear theory."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from specdyn.plot._figure import new_figure


def plot_finite_size(df: pd.DataFrame, effective: pd.DataFrame | None = None) -> Figure:
    """Measured (points, +- 1 SE) against predicted (lines) bias and std of ``log rho_k``.

    Parameters
    ----------
    df
        Rows ``(N, M, t, k, bias_sim, se_sim, std_sim, shift_theory, std_theory,
        valid)`` (one of ``N``, ``M`` NaN for infinite), as written by the
        ``finite-size-theory`` experiment. Theory lines are drawn only where
        ``valid``; the first invalid ``k`` is marked by a vertical dotted line.
    effective
        Optional rows ``(activation, regime, t, slope_sim, slope_effective)``:
        one extra row of panels, fitted slope against time per activation.
    """
    times = np.sort(df["t"].unique())
    kinds = [(col, df[df[col].notna()]) for col in ("N", "M")]
    kinds = [(c, d) for c, d in kinds if len(d)]
    acts = [] if effective is None or not len(effective) else list(effective["activation"]
                                                                   .unique())
    nrows = 2 * len(kinds) + (1 if acts else 0)
    ncols = max(len(times), len(acts), 1)
    fig, axes = new_figure(ncols, nrows, width=3.3, height=2.6)
    cmap = colormaps["viridis"]
    for r, (col, d) in enumerate(kinds):
        sizes = np.sort(d[col].unique())
        for c, t in enumerate(times):
            ax_m, ax_s = axes[(2 * r) * ncols + c], axes[(2 * r + 1) * ncols + c]
            for i, n in enumerate(sizes):
                g = d[(d[col] == n) & (d["t"] == t)].sort_values("k")
                color = cmap(i / max(len(sizes) - 1, 1))
                ok = g["valid"].to_numpy()
                k = g["k"].to_numpy()
                ax_m.errorbar(k, g["bias_sim"], yerr=g["se_sim"], fmt="o", ms=2.5,
                              color=color, lw=0.8, label=f"{col} = {int(n)}")
                ax_m.plot(k, np.where(ok, g["shift_theory"], np.nan), color=color, lw=1.2)
                ax_s.plot(k, g["std_sim"], "o", ms=2.5, color=color)
                ax_s.plot(k, np.where(ok, g["std_theory"], np.nan), color=color, lw=1.2)
                if not ok.all():
                    for ax in (ax_m, ax_s):
                        ax.axvline(k[~ok].min() - 0.5, color=color, ls=":", lw=0.8)
            ax_m.axhline(0.0, color="0.6", lw=0.6)
            ax_m.set_title(f"bias, t = {t:g}, finite {col}", fontsize=9)
            ax_s.set_title(f"std, t = {t:g}, finite {col}", fontsize=9)
            ax_s.set_yscale("log")
            for ax in (ax_m, ax_s):
                ax.set_xscale("log")
                ax.xaxis.set_minor_formatter(NullFormatter())
                ax.set_xlabel("mode k")
            if c == 0:
                ax_m.set_ylabel(r"bias of $\log\rho_k$")
                ax_s.set_ylabel(r"std of $\log\rho_k$")
                ax_m.legend(fontsize=7, title="points: sim, lines: theory", title_fontsize=7)
    if acts:
        assert effective is not None
        base = 2 * len(kinds) * ncols
        for c, act in enumerate(acts):
            ax = axes[base + c]
            g = effective[effective["activation"] == act]
            for j, (regime, h) in enumerate(g.groupby("regime", sort=True)):
                ax.plot(h["t"], h["slope_sim"], color=f"C{j}", lw=1.4, label=f"{regime}: sim")
                ax.plot(h["t"], h["slope_effective"], color=f"C{j}", ls="--", lw=1.2,
                        label="effective theory")
            ax.set_xscale("symlog", linthresh=1.0)
            ax.set_xlabel("t")
            ax.set_ylabel("preactivation slope, fitted")
            ax.set_title(f"{act} student vs effective theory", fontsize=9)
            ax.legend(fontsize=7)
        for c in range(len(acts), ncols):
            axes[base + c].set_visible(False)
    for r in range(2 * len(kinds)):
        for c in range(len(times), ncols):
            axes[r * ncols + c].set_visible(False)
    return fig
