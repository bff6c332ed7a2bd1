"""Figures of the two-step GD experiments: outlier-count phase grid and batch-reuse alignment."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import QuadMesh
from matplotlib.colors import BoundaryNorm
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle
from matplotlib.ticker import MaxNLocator
from numpy.typing import ArrayLike

from specdyn.plot._figure import new_figure
from specdyn.plot._placement import break_lines_under

__all__ = ["CellsStudy", "Step1Update", "alignment_bars", "outlier_phase_grid"]


#: What the count maps draw beside the counts, named in their legend.
_HATCH = "///"
_HATCH_LABEL = "hatched: a cell near a line\n(left out of the agreement)"
_LINE_LABEL = "dashed: $\\alpha_2 = k\\,(1/2 - \\alpha_1)$,\nwhere the floor steps"


def _count_panel(ax: Axes, a1: np.ndarray, a2: np.ndarray, counts: np.ndarray, vmax: int,
                 title: str, near: np.ndarray | None = None) -> QuadMesh:
    """One integer map on the (alpha1, alpha2) grid, with the value written in each cell
    (on a small box of the cell's colour, so that hatching never runs through it)."""
    cmap = matplotlib.colormaps["viridis"]
    norm = BoundaryNorm(np.arange(-0.5, vmax + 1.5), 256)
    im = ax.pcolormesh(_edges(a1), _edges(a2), counts.T, cmap=cmap, norm=norm,
                       shading="flat")
    for i, x in enumerate(a1):
        for j, y in enumerate(a2):
            val = counts[i, j]
            if np.isnan(val):
                continue
            if near is not None and near[i, j]:
                ax.add_patch(_hatch(x, y, a1, a2))
            txt = f"{val:.0f}" if float(val).is_integer() else f"{val:.1f}"
            light = val < 0.6 * vmax
            ax.text(x, y, txt, ha="center", va="center", fontsize=8, zorder=4,
                    color="white" if light else "black",
                    bbox=dict(boxstyle="square,pad=0.1", fc=cmap(norm(val)), ec="none"))
    _lines(ax, vmax)
    ax.set_xlim(_edges(a1)[0], _edges(a1)[-1])
    ax.set_ylim(_edges(a2)[0], _edges(a2)[-1])
    ax.set_xlabel(r"$\alpha_1$ (step 1: $\eta_1 = N^{\alpha_1}$)")
    ax.set_ylabel(r"$\alpha_2$ (step 2: $\eta_2 = N^{\alpha_2}$)")
    ax.set_title(title, fontsize=10)
    return im


def _edges(c: np.ndarray) -> np.ndarray:
    c = np.asarray(c, dtype=np.float64)
    if c.size == 1:
        return np.array([c[0] - 0.025, c[0] + 0.025])
    mid = 0.5 * (c[1:] + c[:-1])
    return np.concatenate([[2 * c[0] - mid[0]], mid, [2 * c[-1] - mid[-1]]])


def _cell(x: float, y: float, a1: np.ndarray, a2: np.ndarray
          ) -> tuple[float, float, float, float]:
    """``(x0, y0, width, height)`` of the grid cell centred at ``(x, y)``."""
    e1, e2 = _edges(a1), _edges(a2)
    i = int(np.searchsorted(e1, x)) - 1
    j = int(np.searchsorted(e2, y)) - 1
    return e1[i], e2[j], e1[i + 1] - e1[i], e2[j + 1] - e2[j]


def _hatch(x: float, y: float, a1: np.ndarray, a2: np.ndarray) -> Rectangle:
    x0, y0, w, h = _cell(x, y, a1, a2)
    return Rectangle((x0, y0), w, h, fill=False, hatch=_HATCH, edgecolor="0.85", linewidth=0,
                     label=_HATCH_LABEL)


def _lines(ax: Axes, kmax: int) -> None:
    """The lines alpha2 = k (1/2 - alpha1) where floor(alpha2 / (1/2 - alpha1)) steps."""
    x = np.linspace(0.0, 0.5, 2000)  # dense: break_lines_under cuts gaps at the numbers
    for k in range(1, max(kmax, 1) + 2):
        ax.plot(x, k * (0.5 - x), color="white", lw=0.8, ls="--", alpha=0.8,
                label=_LINE_LABEL if k == 1 else "_")


def _map_legend(ax: Axes, vmax: int) -> None:
    """The legend of the count maps' hatching and dashed lines, in a switched-off axes."""
    cmap = matplotlib.colormaps["viridis"]
    handles = [Patch(facecolor=cmap(0.3), edgecolor="0.85", hatch=_HATCH, lw=0,
                     label=_HATCH_LABEL),
               Line2D([], [], color="white", lw=0.8, ls="--", label=_LINE_LABEL)]
    ax.axis("off")
    leg = ax.legend(handles=handles, loc="center", fontsize=9, frameon=True,
                    title="panels (a)-(c)", title_fontsize=9, handlelength=3)
    leg.get_frame().set_facecolor("0.55")  # the white dashes and hatching stay visible


def outlier_phase_grid(alpha1: ArrayLike, alpha2: ArrayLike,
                       measured: np.ndarray, near_line: np.ndarray | None = None,
                       title: str = "", step2: np.ndarray | None = None,
                       step2_theory: np.ndarray | None = None, rise: float | None = None,
                       step1: Step1Update | None = None,
                       cells: CellsStudy | None = None) -> Figure:
    """Measured outlier count of ``W2`` beside the two formulas, on the (alpha1, alpha2) grid.

    Parameters
    ----------
    alpha1, alpha2
        Grid values (x and y axes).
    measured
        ``(len(alpha1), len(alpha2))`` outliers of ``W2`` (all of them, the
        step-1 spike included); seed means allowed.
    near_line
        Boolean mask of cells near a line where the formula steps (hatched;
        they are left out of the agreement score).
    title
        Figure title (sizes, target, agreement).
    step2, step2_theory
        Optional ``(len(alpha1), len(alpha2))`` identified step-2 outliers of
        each cell and the count the finite-N theory of the step-2 spikes predicts;
        with ``step2`` a fourth panel draws them against ``floor(...)`` beside the
        abstract's line ``count = floor``.
    rise
        The Spearman correlation of ``step2`` with ``floor`` (panel title).
    step1
        Optional top singular values of the step-1 update ``W1 - W0`` per run: a last
        panel draws ``s2/s1`` against the rank-one claim's bound and ``s1`` (the spike)
        against the BBP threshold a ``W1`` outlier needs.
    cells
        Optional chosen cells at several widths (:class:`CellsStudy`): a last panel draws
        the theory's step-2 spike strengths against ``N`` with the measured ones and the
        BBP threshold.

    Panels, three a row: measured; ``floor(alpha2 / (1/2 - alpha1))`` (abstract);
    ``1 + floor(...)`` (with the step-1 spike); then the step-2 and step-1 panels. The
    hatching and the dashed lines ``alpha2 = k (1/2 - alpha1)`` of the maps are named
    in a legend (in a free slot of the grid, else under it).
    """
    a1 = np.asarray(alpha1, dtype=np.float64)
    a2 = np.asarray(alpha2, dtype=np.float64)
    measured = np.asarray(measured, dtype=np.float64)
    A1, A2 = np.meshgrid(a1, a2, indexing="ij")
    abstract = np.floor(A2 / (0.5 - A1))
    total = 1 + abstract
    vmax = int(max(np.nanmax(measured), np.max(total)))
    n = 3 + (step2 is not None) + (step1 is not None) + (cells is not None)
    rows = -(-n // 3)
    fig, axes = new_figure(3, rows, width=4.3, height=3.9)
    maps = [_count_panel(axes[0], a1, a2, measured, vmax, "measured outliers of $W_2$",
                         near_line),
            _count_panel(axes[1], a1, a2, abstract, vmax,
                         r"abstract: $\lfloor \alpha_2 / (1/2 - \alpha_1) \rfloor$", near_line),
            _count_panel(axes[2], a1, a2, total, vmax,
                         r"with step-1 spike: $1 + \lfloor \alpha_2 / (1/2 - \alpha_1) "
                         r"\rfloor$", near_line)]
    # ticks on the counts, not on the half-integer boundaries of the norm's bins
    fig.colorbar(maps[0], ax=axes[:3], label="number of outliers", shrink=0.85, pad=0.015,
                 ticks=MaxNLocator(integer=True))
    if step2 is not None:
        _step2_panel(axes[3], abstract, np.asarray(step2, dtype=np.float64),
                     None if step2_theory is None else np.asarray(step2_theory,
                                                                  dtype=np.float64),
                     rise)
    if step1 is not None:
        _step1_panel(axes[n - 1 - (cells is not None)], step1)
    if cells is not None:
        _cells_panel(axes[n - 1], cells)
    for extra in axes[n + 1:]:
        extra.set_visible(False)
    if n < len(axes):
        _map_legend(axes[n], vmax)
    else:
        cmap = matplotlib.colormaps["viridis"]
        fig.legend(handles=[Patch(facecolor=cmap(0.3), edgecolor="0.85", hatch=_HATCH, lw=0,
                                  label=_HATCH_LABEL),
                            Line2D([], [], color="white", lw=0.8, ls="--", label=_LINE_LABEL)],
                   loc="outside lower center", ncol=2, fontsize=9,
                   facecolor="0.55")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.canvas.draw()  # the layout fixes the pixels: then the lines give way to the numbers
    break_lines_under([t for ax in axes[:3] for t in ax.texts])
    return fig


@dataclass(frozen=True)
class Step1Update:
    """What the step-1 panel draws, one entry a run (``alpha1``, ``s1``, ``s2``,
    ``count_W1``), and the two lines: the rank-one claim's largest ``s2/s1`` (``bound``)
    and the BBP threshold of the spike (``threshold``, ``W0``'s noise units)."""

    alpha1: np.ndarray
    s1: np.ndarray
    s2: np.ndarray
    count_W1: np.ndarray
    bound: float
    threshold: float


def _step1_panel(ax: Axes, st: Step1Update) -> None:
    """Step 1 per run against ``alpha1``: rank one (``s2/s1`` under the claim's bound)
    whatever ``alpha1``, detectable (``s1`` above the BBP threshold) only at large ``alpha1``."""
    a1 = np.asarray(st.alpha1, dtype=np.float64)
    s1, s2 = np.asarray(st.s1, dtype=np.float64), np.asarray(st.s2, dtype=np.float64)
    seen = np.asarray(st.count_W1) >= 1
    ax.plot(a1, s2 / s1, "s", ms=4, color="tab:green", label=r"$s_2/s_1$ of $W_1 - W_0$")
    ax.axhline(st.bound, color="tab:green", ls="--", lw=1,
               label=f"claim (abstract 2, rank one): $s_2/s_1 \\leq$ {st.bound:.2g}")
    ax.plot(a1[seen], s1[seen], "o", ms=5, color="tab:purple",
            label=r"$s_1$ (spike), $W_1$ has an outlier")
    ax.plot(a1[~seen], s1[~seen], "o", ms=5, mfc="none", color="tab:purple",
            label=r"$s_1$ (spike), no $W_1$ outlier")
    ax.axhline(st.threshold, color="tab:purple", ls=":", lw=1,
               label=f"BBP threshold of the spike ({st.threshold:.2g})")
    ax.set_yscale("log")
    low = float(np.nanmin(np.concatenate([s2 / s1, [st.bound]])))
    high = float(np.nanmax(np.concatenate([s1, [st.threshold]])))
    ax.set_ylim(0.3 * low, 300 * high)  # head room on the log axis for the legend
    ax.set_xlabel(r"$\alpha_1$ (step 1: $\eta_1 = N^{\alpha_1}$)")
    ax.set_ylabel(r"step-1 update $W_1 - W_0$: $s_1$ and $s_2/s_1$")
    ax.set_title("step 1: rank one at every $\\alpha_1$,\ndetectable only above the threshold",
                 fontsize=10)
    ax.legend(fontsize=7, loc="upper left")


@dataclass(frozen=True)
class CellsStudy:
    """What the chosen-cells panel draws, one entry a cell: its ``label`` (exponents and
    ``floor``), the theory's step-2 spike strengths over ``widths`` (``theory[i]``:
    ``(len(widths), floor + 1)``, in units of the bulk's noise), the measured ones at the
    study's widths (``measured[i]``: ``(len(measured_N[i]), floor + 1)``, NaN where no
    outlier was identified) and the BBP threshold ``c^(1/4)``."""

    labels: list[str]
    widths: np.ndarray
    theory: list[np.ndarray]
    measured_N: list[np.ndarray]
    measured: list[np.ndarray]
    threshold: float


def _cells_panel(ax: Axes, st: CellsStudy) -> None:
    """Step-2 spike strengths of the chosen cells against ``N``: the theory's (lines: solid
    for the spikes ``floor`` counts, dotted for the next), the measured outliers' (markers),
    the BBP threshold (a spike above it is an outlier)."""
    colors = ("tab:blue", "tab:red", "tab:green", "tab:purple")
    for i, lab in enumerate(st.labels):
        col = colors[i % len(colors)]
        th = np.asarray(st.theory[i], dtype=np.float64)
        kmax = th.shape[1]
        for k in range(kmax):
            last = k == kmax - 1
            ax.plot(st.widths, th[:, k], ":" if last else "-", color=col, lw=1.2,
                    label=f"{lab}: theory" if k == 0 else "_")
        meas = np.asarray(st.measured[i], dtype=np.float64)
        for k in range(meas.shape[1]):
            ax.plot(st.measured_N[i], meas[:, k], "o", ms=5, color=col,
                    label=f"{lab}: measured outliers" if k == 0 else "_")
    ax.axhline(st.threshold, color="k", ls="--", lw=0.8,
               label=f"BBP threshold $c^{{1/4}}$ = {st.threshold:.2g}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("width $N$ ($D$, $M$ in proportion)")
    ax.set_ylabel(r"step-2 spike strength / bulk noise")
    ax.set_title("chosen cells: step-2 spikes vs $N$ (solid: counted by floor,\n"
                 "dotted: the next one)", fontsize=10)
    ax.legend(fontsize=7, loc="upper left")


def _step2_panel(ax: Axes, floor: np.ndarray, step2: np.ndarray, theory: np.ndarray | None,
                 rise: float | None) -> None:
    """Identified step-2 outliers of every cell against ``floor``, with the abstract's line."""
    f, c = floor.ravel(), step2.ravel()
    jitter = 0.06 * (np.arange(f.size) % 5 - 2)  # deterministic, separates equal points
    ax.plot(f + jitter, c, "o", ms=4, color="tab:blue", alpha=0.6, label="cells (measured)")
    values = np.unique(f)
    ax.plot(values, [c[f == x].mean() for x in values], "-", color="tab:blue", lw=1.5,
            label="mean per floor")
    if theory is not None:
        b = theory.ravel()
        ax.plot(values, [b[f == x].mean() for x in values], "--", color="tab:orange",
                label="finite-N theory (mean)")
    ax.plot(values, values, ":", color="k", label="abstract: count = floor")
    ax.set_xlabel(r"$\lfloor \alpha_2 / (1/2 - \alpha_1) \rfloor$")
    ax.set_ylabel(r"identified step-2 outliers ($a^2, a^3, \ldots$)")
    ax.set_ylim(-0.3, max(float(values.max()), 1.0) + 0.5)
    rho = "undefined (constant count)" if rise is None or not np.isfinite(rise) else \
        f"{rise:.2f}"
    ax.set_title(f"step-2 outliers vs floor\nSpearman: {rho}", fontsize=10)
    ax.legend(fontsize=7, loc="upper left")


def alignment_bars(labels: Sequence[str], fresh: Mapping[str, np.ndarray],
                   reused: Mapping[str, np.ndarray],
                   reuse_quantity: Mapping[str, Sequence[float]],
                   thresholds: tuple[float, float] = (0.15, 0.1), noise_floor: float | None = None,
                   title: str = "", fresh_all: Mapping[str, np.ndarray] | None = None,
                   reused_all: Mapping[str, np.ndarray] | None = None,
                   noise_levels: Mapping[str, float] | None = None) -> Figure:
    """Target alignment of the outliers of ``W2``: fresh versus reused batch, per target.

    Parameters
    ----------
    labels
        Target names in plot order (e.g. ``"He2+He3 (k*=2)"``).
    fresh, reused
        Per label, the per-seed alignment ``max_i |v_i . beta|`` over the learned
        directions' right singular vectors (cosine, not squared).
    reuse_quantity
        Per label ``E[z sigma*(z)^(k+1)]`` for ``k = 1, 2, ...``, shown in the
        right panel as absolute values on a log axis (below 1e-12 drawn at 1e-12).
    thresholds
        ``(aligned, not aligned)`` reference levels drawn as horizontal lines.
    noise_floor
        Typical overlap of a random unit vector, ``1/sqrt(D)`` (dotted line).
    fresh_all, reused_all
        Optional per-seed ``max_i |v_i . beta|`` over *all* outliers (drawn as
        small markers beside each bar).
    noise_levels
        Optional per label the predicted overlap of a fresh batch's learned direction
        that is noise (drawn as a short black bar over the fresh bar; the claim: the fresh
        overlaps have this size).
    """
    fig, (ax, ax2) = new_figure(2, 1, width=5.0, height=3.8)
    x = np.arange(len(labels))
    w = 0.38
    series = ((-w / 2, fresh, fresh_all, "fresh batch", "tab:blue"),
              (w / 2, reused, reused_all, "reused batch", "tab:orange"))
    marker_label: str | None = "all outliers"  # legend entry for the first markers drawn only
    for off, data, every, name, col in series:
        vals = [np.asarray(data[lab], dtype=np.float64) for lab in labels]
        means = np.array([v.mean() for v in vals])
        lo = means - np.array([v.min() for v in vals])
        hi = np.array([v.max() for v in vals]) - means
        ax.bar(x + off, means, w, yerr=[lo, hi], capsize=3, color=col, label=name)
        if every is not None:
            for i, lab in enumerate(labels):
                pts = np.asarray(every[lab], dtype=np.float64)
                ax.plot(np.full(pts.shape, x[i] + off), pts, "x", color="0.25", ms=4,
                        label=marker_label)
                marker_label = None
    ax.axhline(thresholds[0], color="k", ls="--", lw=0.8, label=f"aligned ({thresholds[0]:g})")
    if noise_levels:
        first = True
        for i, lab in enumerate(labels):
            if lab in noise_levels:
                ax.hlines(noise_levels[lab], x[i] - w, x[i], color="k", lw=2,
                          label="claim: fresh overlap at the noise level" if first else None)
                first = False
    else:
        ax.axhline(thresholds[1], color="0.4", ls=":", lw=0.8,
                   label=f"not aligned ({thresholds[1]:g})")
    if noise_floor is not None:
        ax.axhline(noise_floor, color="0.6", ls="-.", lw=0.8, label=r"$1/\sqrt{D}$")
    ax.set_xticks(x)
    ax.set_xticklabels(labels, rotation=15)
    ax.set_ylabel(r"$\max_i |\langle v_i, \beta\rangle|$, learned directions of $W_2$")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    ax.set_title("alignment with the target (bars: seed mean, whiskers: range)", fontsize=9)
    q = np.array([[max(abs(float(x)), 1e-12) for x in reuse_quantity[lab]] for lab in labels])
    nk = q.shape[1]
    wk = 0.8 / nk
    for k in range(nk):
        ax2.bar(x + (k - (nk - 1) / 2) * wk, q[:, k], wk, label=f"k = {k + 1}")
    ax2.set_yscale("log")
    ax2.set_ylim(1e-13, max(1e3, 1e3 * q.max()))
    ax2.set_xticks(x)
    ax2.set_xticklabels(labels, rotation=15)
    ax2.set_ylabel(r"$|E[z\,\sigma_*(z)^{k+1}]|$ (1e-12 = zero)")
    ax2.legend(fontsize=8, ncol=3, loc="upper left")
    ax2.set_title("reuse quantity: direction k can align under reuse iff non-zero", fontsize=9)
    if title:
        fig.suptitle(title, fontsize=10)
    return fig
