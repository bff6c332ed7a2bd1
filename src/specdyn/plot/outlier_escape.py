"""Figures for outlier escape: BBP crossing, trainability phase diagrams, lr transfer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.colors import BoundaryNorm, ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import NullFormatter

from specdyn.plot._figure import new_figure

#: colour and code of each phase-diagram status
STATUS_CODES = {"converged": 0, "stalled": 1, "diverged": 2}
_STATUS_COLOURS = ["#4c9f70", "#e0c04a", "#c8553d"]


def plot_bbp_escape(steps: np.ndarray, singular_values: np.ndarray, *, theory_steps: np.ndarray,
                    bulk_edge: np.ndarray, outlier: np.ndarray, detected: np.ndarray,
                    t_star: float, t_measured: float | None, left_overlap2: np.ndarray,
                    right_overlap2: np.ndarray, theory_left2: np.ndarray,
                    theory_right2: np.ndarray,
                    replicas: tuple[np.ndarray, np.ndarray, np.ndarray, str] | None = None
                    ) -> Figure:
    """Top singular values against the predicted bulk edge and outlier path, and overlaps.

    Left: singular values (log axis) with the Marchenko-Pastur edge
    ``|a_t| sigma0 (1 + sqrt c)`` and the BBP outlier path; right: the same divided
    by the edge; then squared overlaps of the top singular vectors with the teacher,
    measured and predicted. Vertical lines: predicted ``t*`` and the first step flagged by
    the Tracy-Widom test. With ``replicas`` (steps, top singular values, their predicted
    outliers, a label: other students at a few steps), a fourth panel shows each one's
    relative deviation from its prediction beside the run's.
    """
    fig, axes = new_figure(2, 2, width=4.6, height=3.2) if replicas is not None \
        else new_figure(3, 1, width=4.6, height=3.6)
    ax, axr, axo = axes[:3]
    k = singular_values.shape[1]
    for j in range(k):
        ax.plot(steps, singular_values[:, j], color="0.6" if j else "C0", lw=1.2 if j == 0 else 0.7,
                label="measured top" if j == 0 else ("measured 2..k" if j == 1 else None))
    ax.plot(theory_steps, bulk_edge, "k--", lw=1, label="predicted bulk edge")
    ax.plot(theory_steps[detected], outlier[detected], "C3:", lw=1.6, label="predicted outlier")
    ax.set_yscale("log")
    ax.set_ylabel("singular value of W_t")
    ax.set_title("top singular values of W_t", fontsize=9)
    edge_at = np.interp(steps, theory_steps, bulk_edge)
    for j in range(min(k, 3)):
        axr.plot(steps, singular_values[:, j] / edge_at, color="C0" if j == 0 else "0.6",
                 lw=1.2 if j == 0 else 0.7)
    axr.plot(theory_steps, np.where(detected, outlier / bulk_edge, np.nan), "C3:", lw=1.6)
    axr.axhline(1.0, color="k", ls="--", lw=1)
    axr.set_yscale("log")
    axr.set_ylabel("singular value / predicted edge")
    axr.set_title("relative to the predicted bulk edge", fontsize=9)
    axo.plot(steps, left_overlap2, "C0", label="left (u), measured")
    axo.plot(steps, right_overlap2, "C2", label="right (v), measured")
    axo.plot(theory_steps, theory_left2, "C0:", lw=1.6, label="left, BBP theory")
    axo.plot(theory_steps, theory_right2, "C2:", lw=1.6, label="right, BBP theory")
    axo.set_ylabel("squared overlap with teacher")
    axo.set_ylim(-0.02, 1.02)
    axo.set_title("top singular vectors vs the teacher", fontsize=9)
    if replicas is not None:
        axd = axes[3]
        r_steps, r_sv, r_pred, r_label = replicas
        axd.plot(r_steps, r_sv / r_pred - 1.0, ".", color="C4", ms=3, alpha=0.7,
                 label=r_label)
        own = steps >= r_steps.min()
        axd.plot(steps[own], singular_values[own, 0]
                 / np.interp(steps[own], theory_steps, outlier) - 1.0, "C0", lw=1.2,
                 label="this run")
        axd.axhline(0.0, color="C3", ls=":", lw=1.2)
        axd.set_ylabel("top singular value / predicted - 1")
        axd.set_title("finite-size deviation from the outlier path", fontsize=9)
        axd.legend(fontsize=7)
    for a in axes:
        a.axvline(t_star, color="C3", lw=0.8, label="predicted t*")
        if t_measured is not None:
            a.axvline(t_measured, color="C1", lw=0.8, ls="-.", label="first flagged (TW test)")
        a.set_xlabel("step t")
    ax.legend(fontsize=7)
    axo.legend(fontsize=7)
    return fig


def plot_stochastic_escape(runs: Sequence[Mapping[str, object]]) -> Figure:
    """The escape beyond population GD of a linear layer, one panel per run (bbp-escape's SGD
    and nonlinear claims): measured top and second singular values against the predicted
    bulk edge and outlier path, a reference edge (``ref_edge``, e.g. population GD's), and
    vertical lines at the predicted crossing and the first Tracy-Widom flag.

    Each run is a mapping with ``title, steps, sv1, sv2, edge, outlier, detected`` (arrays),
    ``crossing`` (float, NaN: none), optional ``flagged`` (first flagged step or None) and
    ``ref_edge, ref_label`` (array and its label, or None).
    """
    fig, axes = new_figure(len(runs), 1, width=4.6, height=3.6)
    for ax, r in zip(np.atleast_1d(axes), runs, strict=True):
        t = np.asarray(r["steps"], dtype=float)
        det = np.asarray(r["detected"], dtype=bool)
        ax.plot(t, np.asarray(r["sv1"], dtype=float), "C0", lw=1.2, label="measured top")
        ax.plot(t, np.asarray(r["sv2"], dtype=float), color="0.55", lw=0.9,
                label="measured second (bulk)")
        ax.plot(t, np.asarray(r["edge"], dtype=float), "k--", lw=1, label="predicted bulk edge")
        ax.plot(t[det], np.asarray(r["outlier"], dtype=float)[det], "C3:", lw=1.6,
                label="predicted outlier")
        if r.get("ref_edge") is not None:
            ax.plot(t, np.asarray(r["ref_edge"], dtype=float), color="C4", ls="-.", lw=0.9,
                    label=str(r["ref_label"]))
        crossing = float(r["crossing"])  # type: ignore[arg-type]
        if np.isfinite(crossing):
            ax.axvline(crossing, color="C3", lw=0.8, label="predicted crossing")
        if r.get("flagged") is not None:
            ax.axvline(float(r["flagged"]), color="C1", lw=0.8, ls="-.",  # type: ignore[arg-type]
                       label="first flagged (TW test)")
        shown = np.concatenate([np.asarray(r["sv1"], dtype=float),
                                np.asarray(r["edge"], dtype=float)])
        if np.nanmax(shown) > 10 * np.nanmin(shown) or r.get("ref_edge") is not None:
            ax.set_yscale("log")  # a bulk shrinking by orders of magnitude
        loc = "best"
        if r.get("ref_edge") is not None:
            # room below the falling reference edge, so that the legend sits under it
            ax.set_ylim(bottom=float(np.nanmin(np.asarray(r["ref_edge"], dtype=float))) / 8)
            loc = "lower left"
        ax.set_xlabel("step t")
        ax.set_ylabel("singular value")
        ax.set_title(str(r["title"]), fontsize=9)
        ax.legend(fontsize=7, loc=loc)
    return fig


def _status_mesh(ax, x: np.ndarray, y: np.ndarray, status: np.ndarray) -> None:
    codes = np.vectorize(STATUS_CODES.__getitem__)(status).astype(float)
    cmap = ListedColormap(_STATUS_COLOURS)
    norm = BoundaryNorm([-0.5, 0.5, 1.5, 2.5], cmap.N)
    ax.pcolormesh(x, y, codes, cmap=cmap, norm=norm, shading="nearest", alpha=0.85)


def plot_trainability(single: pd.DataFrame, theory_grid: dict[str, np.ndarray],
                      two_layer: pd.DataFrame, *, lr_c: float,
                      naive_two_layer: pd.DataFrame | None = None) -> Figure:
    """Phase diagrams over (learning rate, init variance): converged / stalled / diverged.

    ``single`` and ``two_layer`` hold one row per cell with columns ``lr``,
    ``init_var`` and ``status``; ``theory_grid`` holds ``lr``, ``init_var`` (1-D)
    and ``status`` (2-D, ``init_var x lr``) of the single-layer prediction, drawn
    as boundaries. ``naive_two_layer`` (``init_var``, ``lr``) is the naive
    ``2 / sharpness at init`` line of the two-layer net.
    """
    fig, (a1, a2) = new_figure(2, 1, width=5.0, height=4.0)
    for ax, df in ((a1, single), (a2, two_layer)):
        piv = df.pivot(index="init_var", columns="lr", values="status")
        _status_mesh(ax, piv.columns.to_numpy(), piv.index.to_numpy(), piv.to_numpy())
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("learning rate")
        ax.set_ylabel("init variance sigma0^2")
    codes = np.vectorize(STATUS_CODES.__getitem__)(theory_grid["status"]).astype(float)
    a1.contour(theory_grid["lr"], theory_grid["init_var"], codes, levels=[0.5, 1.5],
               colors="k", linewidths=1.2)
    a1.axvline(lr_c, color="k", ls="--", lw=0.8)
    a1.set_title("single layer, online SGD: cells measured, lines theory", fontsize=9)
    if naive_two_layer is not None and len(naive_two_layer):
        a2.plot(naive_two_layer["lr"], naive_two_layer["init_var"], "k--", lw=1,
                label="2 / sharpness at init")
        if "lr_final" in naive_two_layer:
            a2.plot(naive_two_layer["lr_final"], naive_two_layer["init_var"], "k:", lw=1.4,
                    label="2 / sharpness of the solution")
        a2.legend(fontsize=7, loc="lower left")
    a2.set_title("two-layer linear (standard param.): measured only", fontsize=9)
    handles = [Patch(color=c, label=s) for s, c in zip(STATUS_CODES, _STATUS_COLOURS,
                                                        strict=True)]
    a1.legend(handles=handles, fontsize=7, loc="lower left")
    return fig


def plot_lr_transfer(sweep: pd.DataFrame, escape: pd.DataFrame,
                     parameterizations: Sequence[str] = ("mup", "ntk"),
                     escape_series: Sequence[str] | None = None,
                     flat_band: Mapping[str, float] | None = None,
                     loss_pilot: tuple[float, float, float] | None = None) -> Figure:
    """Loss after a fixed budget against learning rate, per width, and escape time vs width.

    ``sweep``: columns ``parameterization``, ``width``, ``lr``, ``loss``,
    ``diverged``. ``escape``: ``parameterization`` (a series label), ``width``,
    ``escape_step`` (nullable: no escape within the budget), ``budget``; hollow
    markers at the budget mean no escape. ``flat_band``: per escape series, a
    relative tolerance ``tol`` drawn as the band ``[min, (1 + tol) min]`` of its
    escape steps (the claim "width-independent within tol"). ``loss_pilot``: ``(lr, loss,
    tol)``, the muP loss a pilot put at ``lr`` (mean over its widths) and the claim's
    relative tolerance, drawn on the muP panel (the sweep's clock).
    """
    fig, axes = new_figure(len(parameterizations) + 1, 1, width=4.4, height=3.6)
    widths = sorted(sweep["width"].unique())
    cmap = __import__("matplotlib").colormaps["viridis"]
    for ax, par in zip(axes, parameterizations, strict=False):
        sub = sweep[sweep["parameterization"] == par]
        for i, N in enumerate(widths):
            s = sub[sub["width"] == N].sort_values("lr")
            colour = cmap(i / max(len(widths) - 1, 1))
            ok = ~s["diverged"].to_numpy(bool)
            ax.plot(s["lr"][ok], s["loss"][ok], "o-", ms=3, color=colour, label=f"N={N}")
            if ok.any():
                j = int(np.argmin(s["loss"][ok].to_numpy()))
                ax.plot(s["lr"][ok].iloc[j], s["loss"][ok].iloc[j], "*", ms=10, color=colour)
            bad = s["lr"][~ok]
            if len(bad):
                ax.plot(bad, np.full(len(bad), ax.get_ylim()[1] if ok.any() else 1.0), "x",
                        color=colour)
        if par == "mup" and loss_pilot is not None:
            lr, loss, tol = loss_pilot
            ax.errorbar([lr], [loss], yerr=[[loss * tol], [loss * tol]], fmt="D", ms=4,
                        color="k", capsize=3, zorder=5,
                        label=f"claim: loss at lr {lr:g} within {tol:.0%} of a pilot")
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_yscale("log")
        ax.set_xlabel("base learning rate eta0")
        ax.set_ylabel("loss after budget")
        ax.set_title(f"{par}: loss vs lr (x: diverged, *: best)", fontsize=9)
        ax.legend(fontsize=7)
    ax = axes[-1]
    series = list(escape_series) if escape_series is not None else list(parameterizations)
    for i, (par, marker) in enumerate(zip(series, "os^vD<>", strict=False)):
        colour = f"C{i}"
        sub = escape[escape["parameterization"] == par].sort_values("width")
        esc = sub["escape_step"].astype("Float64")
        got = esc.notna().to_numpy()
        if got.any():
            ax.plot(sub["width"][got], esc[got].astype(float), marker + "-", color=colour,
                    label=f"{par}")
        if (~got).any():
            ax.plot(sub["width"][~got], sub["budget"][~got], marker, mfc="none", color=colour,
                    label=f"{par}: none within budget")
        if flat_band is not None and par in flat_band and got.any():
            lo = float(esc[got].astype(float).min())
            ax.axhspan(lo, lo * (1 + flat_band[par]), color=colour, alpha=0.15,
                       label=f"claim: flat within {flat_band[par]:.0%} of its min")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("width N")
    ax.set_ylabel("outlier escape step (hidden layer)")
    ax.set_title("escape time vs width (muP: flat; NTK: grows with N)", fontsize=9)
    ax.legend(fontsize=6, loc="best")
    return fig
