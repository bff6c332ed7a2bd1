"""Figures of real data: the theory and the exact reference from a data set's own spectra
beside the networks trained on it (``real-data``, ``specdyn data``).

Every exponent drawn is :func:`specdyn.measure.mode_exponents` (mode order, weights
``1/k``, window ``2..kmax``): the estimator of the data's own ``alpha`` and ``beta``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from specdyn.plot._figure import new_figure
from specdyn.runs.claims import rank_correlation

__all__ = ["data_figure", "drift_slopes", "lazy_drift", "real_data_figure", "wide"]

_TASK_COLOURS = {"patches": "tab:blue", "blur": "tab:purple", "blur2": "tab:pink",
                 "digits": "tab:orange", "text": "tab:green", "aligned": "tab:gray",
                 "rotated": "tab:brown"}
_REGIME_COLOURS = {"feature-learning": "tab:red", "lazy": "tab:blue", "IIIa": "tab:green",
                   "IIIb": "tab:red", "lazy-paper": "tab:cyan"}
_PART_MARKERS = {"train": "o", "heldout": "s"}
#: Offsets (points) of the task labels of the misalignment panel, clear of the neighbours'.
_LABEL_OFFSETS = {"patches": (5, -10), "rotated": (5, 3), "text": (5, -10), "blur2": (5, 3),
                  "digits": (5, 3), "blur": (5, 3), "aligned": (5, 3)}


def wide(df: pd.DataFrame, q: str, **sel: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(t, values)``: rows by time, columns by mode/rank, of quantity ``q`` where every
    column named in ``sel`` has the value given."""
    mask = df.quantity == q
    for col, val in sel.items():
        mask &= df[col] == val
    w = df[mask].pivot_table(index="t", columns="k", values="value",
                             aggfunc="first").sort_index()
    return w.index.to_numpy(dtype=float), w.to_numpy(dtype=float)


def _exponents(values: np.ndarray, kmax: int, kmin: int = 2) -> np.ndarray:
    from specdyn.measure import mode_exponents

    if values.ndim != 2 or values.shape[1] < kmax:
        return np.full(values.shape[0] if values.ndim == 2 else 0, np.nan)
    return mode_exponents(values, kmin, kmax)


def _fit(fits: pd.DataFrame, q: str, task: str | None = None) -> float:
    sel = fits[fits.quantity == q] if task is None else fits[(fits.task == task)
                                                             & (fits.quantity == q)]
    return float(sel.value.iloc[0]) if len(sel) else float("nan")


def _time_axis(t: np.ndarray) -> np.ndarray:
    """``t / t_end`` with ``t = 0`` drawn at a third of the first positive time."""
    pos = t[t > 0]
    if not pos.size:
        return np.ones_like(t)
    return np.maximum(t, pos.min() / 3) / t[-1]


def _levels(ax: Any, a: float, ab: float, *, show_mid: bool = True) -> None:
    """Dotted lines at ``alpha``, ``alpha + beta/2`` and ``alpha + beta``, labelled at the
    right edge (outside the curves, which start at the left)."""
    lv = [(a, r"$\alpha$")]
    b = ab - a
    if abs(b) >= 0.1 * max(abs(a), 1.0):
        lv += ([(a + b / 2, r"$\alpha+\beta/2$")] if show_mid else []) + [(ab, r"$\alpha+\beta$")]
    else:  # beta ~ 0: one line
        lv = [(a, r"$\alpha\approx\alpha+\beta$")]
    for y, lab in lv:
        if not np.isfinite(y):
            continue
        ax.axhline(y, color="grey", ls=":", lw=0.8, zorder=1)
        ax.annotate(lab, (1.01, y), xycoords=("axes fraction", "data"), fontsize=7,
                    va="center", ha="left", annotation_clip=False)


# ---------------------------------------------------------------------------- specdyn data


def data_figure(modes: pd.DataFrame, fits: pd.DataFrame, dyn: pd.DataFrame, kmin: int,
                kmax: int) -> Figure:
    """``specdyn data``'s figure: (a) the data's spectra and fits, (b) misalignment per
    mode, (c) ``rho_k(t)`` of the first regime (theory, exact reference, network), (d) the
    exponent over time of every regime."""
    fig, ax = new_figure(2, 2, width=4.6, height=3.5)
    k = modes.k.to_numpy()
    lam = modes.lam.to_numpy()
    lm = lam * modes.mu.to_numpy()
    a, ab = _fit(fits, "alpha"), _fit(fits, "alpha_plus_beta")
    ax[0].loglog(k, lam / lam[0], ".", color="tab:blue", ms=3,
                 label=fr"$\lambda_k$: $\alpha$ = {a:.2f}")
    ax[0].loglog(k, lm / lm[0], ".", color="tab:orange", ms=3,
                 label=fr"$\lambda_k\mu_k$: $\alpha+\beta$ = {ab:.2f}")
    kk = np.arange(kmin, kmax + 1, dtype=float)
    for y, e in ((lam / lam[0], a), (lm / lm[0], ab)):
        if np.all(y[kmin - 1:kmax] > 0):  # the fitted line through the window's centre
            mid = np.exp(np.mean(np.log(y[kmin - 1:kmax])) + e * np.mean(np.log(kk)))
            ax[0].loglog(kk, mid * kk ** (-e), "-", color="k", lw=0.8)
    ax[0].set_xlabel("input mode k")
    ax[0].set_ylabel("normalised to mode 1")
    ax[0].set_title(f"spectra; black: fits over modes {kmin}..{kmax}", fontsize=9)
    ax[0].legend(fontsize=7)
    ov = modes.overlap.to_numpy()
    ax[1].semilogx(k, modes.misalignment, ".", color="tab:gray", ms=3,
                   label="Gram-Schmidt share (headline)")
    ax[1].semilogx(k[:kmax], ov[:kmax], "o-", color="tab:red", ms=3, lw=0.8,
                   label="output overlap (rms cos)")
    ax[1].set_ylim(-0.03, 1.03)
    ax[1].set_xlabel("input mode k")
    ax[1].set_ylabel("misalignment of mode k")
    ax[1].set_title("teacher misalignment per mode", fontsize=9)
    ax[1].legend(fontsize=7)
    regimes = list(dict.fromkeys(dyn.regime[dyn.student == "linear"]))
    first = regimes[0] if regimes else ""
    t, th = wide(dyn, "rho_theory", regime=first, student="linear")
    _, ref = wide(dyn, "rho_reference", regime=first, student="linear")
    _, net = wide(dyn, "rho_sim", regime=first, student="linear")
    if t.size:
        pick = np.unique(np.r_[0, np.round(np.geomspace(1, t.size - 1, 4)).astype(int)])
        cmap = _cmap()
        km = np.arange(1, th.shape[1] + 1)
        for j, i in enumerate(pick):
            c = cmap(j / max(1, pick.size - 1))
            ax[2].loglog(km, th[i], "-", color=c, lw=1.0, label=f"t = {t[i]:.3g}")
            if ref.shape == th.shape:
                ax[2].loglog(km, ref[i], "--", color=c, lw=1.0)
            if net.shape == th.shape:
                ax[2].loglog(km, net[i], "o", color=c, ms=2, mfc="none")
    ax[2].set_xlabel("input mode k")
    ax[2].set_ylabel(r"$\rho_k(t)$")
    ax[2].set_title(f"{first}: lines theory, dashed exact reference, o network", fontsize=8)
    ax[2].legend(fontsize=6)
    for reg in regimes:
        c = _REGIME_COLOURS.get(reg, "k")
        for q, style in (("rho_theory", "-"), ("rho_reference", "--")):
            t, v = wide(dyn, q, regime=reg, student="linear")
            if t.size:
                ax[3].semilogx(_time_axis(t), _exponents(v, kmax, kmin), style, color=c, lw=1,
                               label=f"{reg}: theory" if q == "rho_theory" else None)
        t, v = wide(dyn, "rho_sim", regime=reg, student="linear")
        if t.size:
            ax[3].semilogx(_time_axis(t), _exponents(v, kmax, kmin), "o", color=c, ms=3,
                           mfc="none", label=f"{reg}: network")
    _levels(ax[3], a, ab)
    ax[3].set_xlabel(r"$t / t_{end}$")
    ax[3].set_ylabel(f"exponent of $\\rho_k$, modes {kmin}..{kmax}")
    ax[3].set_title("exponent over time (dashed: exact reference)", fontsize=9)
    ax[3].legend(fontsize=6)
    return fig


def _cmap() -> Any:
    import matplotlib

    return matplotlib.colormaps["viridis"]


# ---------------------------------------------------------------------------- real-data


def _task(tables: dict[str, pd.DataFrame], name: str, task: str) -> pd.DataFrame:
    df = tables[name]
    return df[df.task == task]


def real_data_figure(tables: dict[str, pd.DataFrame], kmax: int,
                     relu_kmax: int | None = None) -> Figure:
    """Six panels: (a) the data's spectra with fits, (b) the misalignment check over the
    tasks, (c) digits: theory, exact reference and network per mode, (d) blurred target:
    the exponent in Regions IIIa, IIIb and lazy, (e) shifted target: feature learning
    against lazy, linear and ReLU, (f) the ReLU student's lazy drift against width."""
    fig, ax = new_figure(3, 2, width=4.6, height=3.6)
    modes, fits = tables["modes"], tables["fits"]
    # (a) spectra with their fits over the window (the fitted line itself, no offset)
    for task in ("patches", "digits", "text"):
        g = modes[modes.task == task].sort_values("k")
        if g.empty:
            continue
        lam = g.lam.to_numpy()
        k = g.k.to_numpy()
        a = _fit(fits, "alpha", task)
        row = fits[(fits.task == task) & (fits.quantity == "alpha")]
        lo, hi = (int(row.kmin.iloc[0]), int(row.kmax.iloc[0])) if len(row) else (2, 10)
        c = _TASK_COLOURS[task]
        y = lam / lam[0]
        ax[0].loglog(k, y, ".", color=c, ms=3, label=fr"{task}: $\alpha$ = {a:.2f}")
        kk = np.arange(lo, hi + 1, dtype=float)
        mid = np.exp(np.mean(np.log(y[lo - 1:hi])) + a * np.mean(np.log(kk)))
        ax[0].loglog(kk, mid * kk ** (-a), "-", color="k", lw=0.9)
    ax[0].set_xlabel("input mode k")
    ax[0].set_ylabel(r"$\lambda_k / \lambda_1$")
    ax[0].set_title("(a) input spectra; black: the fits over their windows", fontsize=9)
    ax[0].legend(fontsize=7)
    # (b) the aligned theory's error against two misalignment measures (the seven tasks of
    # the check; a thin line joins a task's two markers, which share its error)
    tk = tables["tasks"]
    tk = tk[tk.task.isin(list(_TASK_COLOURS))]
    err = np.maximum(tk.error.to_numpy(dtype=float), 1e-4)
    xo = np.maximum(tk.output_overlap.to_numpy(dtype=float), 1e-4)
    xh = np.maximum(tk.total_misalignment.to_numpy(dtype=float), 1e-4)
    for i in range(err.size):
        ax[1].plot([xo[i], xh[i]], [err[i], err[i]], "-", color="0.8", lw=0.8, zorder=1)
    for x, mk, lab, c in ((xo, "o", "output overlap", "tab:red"),
                          (xh, "x", "headline misalignment", "k")):
        rho = rank_correlation(x, tk.error.to_numpy(dtype=float))
        ax[1].loglog(x, err, mk, color=c, ms=5, mfc="none",
                     label=f"{lab}: Spearman {rho:.2f}")
    for i, r in enumerate(tk.itertuples()):
        ax[1].annotate(str(r.task), (xo[i], err[i]), fontsize=6.5,
                       xytext=_LABEL_OFFSETS.get(str(r.task), (5, 3)),
                       textcoords="offset points", color=_TASK_COLOURS.get(str(r.task), "k"))
    ax[1].set_xlabel("misalignment measure (floored at 1e-4)")
    ax[1].set_ylabel("aligned theory vs exact reference")
    ax[1].set_title("(b) which measure predicts the theory's error\n(grey line: one task's "
                    "two measures)", fontsize=8.5)
    ax[1].legend(fontsize=6.5, loc="center", bbox_to_anchor=(0.5, 0.25))
    # (c) digits in feature learning: per mode at a few times, and the representation's
    # eigenvalues at the end (by rank: what a tracker sees)
    d = _task(tables, "dynamics", "digits")
    t, th = wide(d, "rho_theory", regime="feature-learning", student="linear")
    _, ref = wide(d, "rho_reference", regime="feature-learning", student="linear")
    _, net = wide(d, "rho_sim", regime="feature-learning", student="linear")
    _, spec = wide(d, "spectrum_reference", regime="feature-learning", student="linear")
    if t.size:
        pick = np.unique(np.r_[0, np.round(np.geomspace(1, t.size - 1, 4)).astype(int)])
        km = np.arange(1, th.shape[1] + 1)
        for j, i in enumerate(pick):
            c = _cmap()(j / max(1, pick.size - 1))
            ax[2].loglog(km, th[i], ":", color=c, lw=1.0)
            ax[2].loglog(km, ref[i], "-", color=c, lw=1.0, label=f"t = {t[i]:.3g}")
            ax[2].loglog(km, net[i], "o", color=c, ms=2.5, mfc="none")
        if spec.shape == ref.shape:
            ax[2].loglog(km, spec[-1], "--", color="k", lw=1.0,
                         label="eigenvalues by rank, last t")
    ax[2].set_xlabel("input mode k (dashed: rank)")
    ax[2].set_ylabel(r"$\rho_k(t)$")
    ax[2].set_title("(c) digits -> labels (P = 10 < D): per mode\ndotted aligned theory, "
                    "lines exact reference, o network", fontsize=8.5)
    ax[2].legend(fontsize=6.5, loc="lower left")
    # (d) the blurred target: Regions IIIa, IIIb and lazy
    b = _task(tables, "dynamics", "blur")
    _exponent_panel(ax[3], b, ("IIIa", "IIIb", "lazy"), kmax, "rho_reference")
    _levels(ax[3], _fit(fits, "alpha", "blur"), _fit(fits, "alpha_plus_beta", "blur"))
    ax[3].set_title("(d) blurred target: lines exact reference, o network", fontsize=9)
    # (e) the shifted target: feature learning against lazy, linear and ReLU
    p = _task(tables, "dynamics", "patches")
    _exponent_panel(ax[4], p, ("feature-learning", "lazy"), kmax, "rho_theory",
                    relu=_task(tables, "dynamics", "relu-patches"))
    _levels(ax[4], _fit(fits, "alpha", "patches"), _fit(fits, "alpha_plus_beta", "patches"))
    ax[4].set_title("(e) shifted target: lines theory, o linear, s ReLU", fontsize=9)
    # (f) the ReLU student's lazy drift against its width, from both starts
    _drift_panel(ax[5], tables, kmax if relu_kmax is None else relu_kmax)
    return fig


def _exponent_panel(ax: Any, df: pd.DataFrame, regimes: Sequence[str], kmax: int,
                    line: str, relu: pd.DataFrame | None = None) -> None:
    for reg in regimes:
        c = _REGIME_COLOURS.get(reg, "k")
        t, v = wide(df, line, regime=reg, student="linear")
        if not t.size:
            continue
        tt = _time_axis(t)
        _, s = wide(df, "rho_sim", regime=reg, student="linear")
        ax.semilogx(tt, _exponents(v, kmax), "-", color=c, lw=1.2,
                    label=None if s.shape == v.shape else f"{reg}, {line[4:]}")
        if s.shape == v.shape:
            ax.semilogx(tt, _exponents(s, kmax), "o", color=c, ms=3, mfc="none",
                        label=f"{reg}, linear")
        if relu is not None:
            t2, r = wide(relu, "rho_sim", regime=reg, student="relu")
            _, rt = wide(relu, "rho_theory", regime=reg, student="relu")
            if t2.size:
                ax.semilogx(_time_axis(t2), _exponents(rt, kmax), "-", color=c, lw=0.8,
                            alpha=0.5, label=f"{reg}, ReLU's effective theory")
                ax.semilogx(_time_axis(t2), _exponents(r, kmax), "s", color=c, ms=3,
                            mfc="none", label=f"{reg}, ReLU")
    ax.set_xlabel(r"$t / t_{end}$")
    ax.set_ylabel(f"exponent of $\\rho_k$, modes 2..{kmax}")
    ax.legend(fontsize=6, loc="upper left")


def lazy_drift(widths: pd.DataFrame, kmax: int) -> pd.DataFrame:
    """Per lazy run (``regime, N``): the ReLU student's exponent drift ``max_t |a(t) -
    a(0)|`` and its effective theory's (columns ``regime, N, drift_sim, drift_theory``)."""
    rows = []
    for (reg, N), g in widths.groupby(["regime", "N"], sort=False):
        out: dict[str, Any] = {"regime": reg, "N": int(N)}
        for q in ("rho_sim", "rho_theory"):
            d = _drift(g, q, kmax)[1]
            out[f"drift_{q[4:]}"] = float(np.max(d)) if d.size else np.nan
        rows.append(out)
    return pd.DataFrame(rows, columns=["regime", "N", "drift_sim", "drift_theory"])


def _drift(df: pd.DataFrame, q: str, kmax: int) -> tuple[np.ndarray, np.ndarray]:
    """``(t, |a(t) - a(0)|)``: one run's exponent drift over modes ``2..kmax`` of ``q``."""
    t, v = wide(df, q)
    a = _exponents(v, kmax)
    return np.asarray(t, dtype=float), np.abs(a - a[0]) if a.size else a


def drift_slopes(widths: pd.DataFrame, kmax: int, *, min_share: float = 0.25) -> pd.DataFrame:
    """The lazy width series (``regime == "lazy"``) compared at equal times: per checkpoint
    ``t > 0`` up to the one where the smallest width's drift ``|a(t) - a(0)|`` peaks, the
    log-log slope over the widths of that drift (columns ``t, slope``; NaN where a drift is
    0 or not finite). A finite-width effect falls as ``1/N`` (slope -1) at every such time.

    Past the smallest width's peak its exponent turns back toward ``a(0)`` (the drift is a
    transient whose size grows and whose time shortens as the width falls), so widths are
    not compared there; a maximum over the run would compare one width's peak with
    another's value at the end. A window of fewer than ``min_share`` of the positive
    checkpoints (a peak at the run's start: no growing drift to compare) gives one NaN row.
    """
    from specdyn.runs.claims import loglog_slope

    lazy = widths[widths.regime == "lazy"]
    curves: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for N, g in lazy.groupby("N"):
        curves[int(N)] = _drift(g, "rho_sim", kmax)
    if len(curves) < 2:
        return pd.DataFrame({"t": [], "slope": []})
    Ns = sorted(curves)
    t, first = curves[Ns[0]]
    if not all(np.array_equal(curves[N][0], t) for N in Ns) or not first.size:
        return pd.DataFrame({"t": [np.nan], "slope": [np.nan]})  # unequal checkpoints
    peak = int(np.nanargmax(first)) if np.isfinite(first).any() else 0
    rows = [(float(t[i]), loglog_slope(Ns, [curves[N][1][i] for N in Ns]))
            for i in range(len(t)) if 0 < t[i] <= t[peak]]
    if len(rows) < min_share * np.count_nonzero(t > 0):
        rows = []
    return pd.DataFrame(rows or [(np.nan, np.nan)], columns=["t", "slope"])


def _drift_panel(ax: Any, tables: dict[str, pd.DataFrame], kmax: int) -> None:
    """The lazy ReLU's exponent drift |a(t) - a(0)| over time: per width (colour) from a
    zero initial output (solid) and from the random start (dashed), beside the effective
    theory's (dotted); the paper's lazy gamma0 (cyan, random start)."""
    from matplotlib.lines import Line2D

    w = tables["widths"]
    lazy = w[w.regime.isin(["lazy", "lazy-zero-output"])]
    Ns = sorted(int(n) for n in lazy.N.unique())
    blues = ("#6baed6", "#2171b5", "#08306b", "#000000")
    t_end = float(lazy.t.max()) if len(lazy) else 1.0  # each regime against its own t_end

    def curve(df: pd.DataFrame, q: str, end: float | None, style: str, **kw: Any) -> None:
        t, d = _drift(df, q, kmax)
        if t.size:
            keep = t > 0
            ax.loglog(t[keep] / (t[-1] if end is None else end), np.maximum(d[keep], 1e-4),
                      style, **kw)

    handles = []
    for i, N in enumerate(Ns):
        c = blues[min(i, len(blues) - 1)]
        for regime, style in (("lazy-zero-output", "-"), ("lazy", "--")):
            g = lazy[(lazy.N == N) & (lazy.regime == regime)]
            curve(g, "rho_sim", t_end, style, color=c, lw=1.3)
        handles.append(Line2D([], [], color=c, lw=1.3, label=f"N = {N}"))
    if Ns:
        curve(lazy[lazy.N == Ns[0]], "rho_theory", t_end, ":", color="k", lw=1.2)
    paper = w[w.regime == "lazy-paper"]
    curve(paper, "rho_sim", None, "--", color="tab:cyan", lw=1.0)
    curve(paper, "rho_theory", None, ":", color="tab:cyan", lw=1.0)
    handles += [Line2D([], [], color="0.4", ls="-", label="zero initial output"),
                Line2D([], [], color="0.4", ls="--", label="random start (f0 != 0)"),
                Line2D([], [], color="k", ls=":", label="effective theory"),
                Line2D([], [], color="tab:cyan", ls="--",
                       label=r"paper's $\gamma_0 = 0.5\,S/\theta_0$ (random)")]
    ax.set_xlabel(r"$t / t_{end}$")
    ax.set_ylabel(f"exponent drift |a(t) - a(0)|, modes 2..{kmax}")
    ax.set_title("(f) lazy ReLU: the drift is the random initial output's\n"
                 r"($\gamma_0 = 0.05\,S/\theta_1$; solid: from a zero output)", fontsize=8.5)
    ax.legend(handles=handles, fontsize=6.5, loc="lower right", ncol=2, framealpha=0.9)
