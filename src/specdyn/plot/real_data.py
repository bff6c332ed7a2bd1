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

__all__ = ["data_figure", "drift_slopes", "glance_figure", "lazy_drift", "networks_figure",
           "real_data_figure", "wide"]

_TASK_COLOURS = {"patches": "tab:blue", "blur": "tab:purple", "blur2": "tab:pink",
                 "digits": "tab:orange", "text": "tab:green", "aligned": "tab:gray",
                 "rotated": "tab:brown"}
_REGIME_COLOURS = {"feature-learning": "tab:red", "lazy": "tab:blue", "IIIa": "tab:green",
                   "IIIb": "tab:red", "lazy-paper": "tab:cyan"}
_PART_MARKERS = {"train": "o", "heldout": "s"}


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


def real_data_figure(tables: dict[str, pd.DataFrame], kmax: int) -> Figure:
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
    ax[0].set_title("input spectra; black: the fits over their windows", fontsize=9)
    ax[0].legend(fontsize=7)
    # (b) the aligned theory's error against two misalignment measures
    tk = tables["tasks"]
    err = tk.error.to_numpy(dtype=float)
    for col, mk, lab in (("output_overlap", "o", "output overlap"),
                         ("total_misalignment", "x", "headline misalignment")):
        x = tk[col].to_numpy(dtype=float)
        rho = rank_correlation(x, err)
        ax[1].loglog(np.maximum(x, 1e-4), np.maximum(err, 1e-4), mk, color="k"
                     if mk == "x" else "tab:red", ms=5, mfc="none",
                     label=f"{lab}: Spearman {rho:.2f}")
    for r in tk.itertuples():
        ax[1].annotate(str(r.task), (max(float(r.output_overlap), 1e-4),
                                     max(float(r.error), 1e-4)),
                       fontsize=6, xytext=(3, -3), textcoords="offset points",
                       color=_TASK_COLOURS.get(str(r.task), "k"))
    ax[1].set_xlabel("misalignment measure (floored at 1e-4)")
    ax[1].set_ylabel("aligned theory vs exact reference")
    ax[1].set_title("which measure predicts the theory's error", fontsize=9)
    ax[1].legend(fontsize=6, loc="upper left")
    # (c) digits in feature learning: per mode at a few times
    d = _task(tables, "dynamics", "digits")
    t, th = wide(d, "rho_theory", regime="feature-learning", student="linear")
    _, ref = wide(d, "rho_reference", regime="feature-learning", student="linear")
    _, net = wide(d, "rho_sim", regime="feature-learning", student="linear")
    if t.size:
        pick = np.unique(np.r_[0, np.round(np.geomspace(1, t.size - 1, 4)).astype(int)])
        km = np.arange(1, th.shape[1] + 1)
        for j, i in enumerate(pick):
            c = _cmap()(j / max(1, pick.size - 1))
            ax[2].loglog(km, th[i], ":", color=c, lw=1.0)
            ax[2].loglog(km, ref[i], "-", color=c, lw=1.0, label=f"t = {t[i]:.3g}")
            ax[2].loglog(km, net[i], "o", color=c, ms=2.5, mfc="none")
    ax[2].set_xlabel("input mode k")
    ax[2].set_ylabel(r"$\rho_k(t)$")
    ax[2].set_title("digits -> labels: dotted aligned theory, lines exact reference, "
                    "o network", fontsize=7)
    ax[2].legend(fontsize=6)
    # (d) the blurred target: Regions IIIa, IIIb and lazy
    b = _task(tables, "dynamics", "blur")
    _exponent_panel(ax[3], b, ("IIIa", "IIIb", "lazy"), kmax, "rho_reference")
    _levels(ax[3], _fit(fits, "alpha", "blur"), _fit(fits, "alpha_plus_beta", "blur"))
    ax[3].set_title("blurred target: lines exact reference, o network", fontsize=9)
    # (e) the shifted target: feature learning against lazy, linear and ReLU
    p = _task(tables, "dynamics", "patches")
    _exponent_panel(ax[4], p, ("feature-learning", "lazy"), kmax, "rho_theory",
                    relu=True)
    _levels(ax[4], _fit(fits, "alpha", "patches"), _fit(fits, "alpha_plus_beta", "patches"))
    ax[4].set_title("shifted target: lines theory, o linear, s ReLU", fontsize=9)
    # (f) the ReLU student's lazy drift against its width
    _drift_panel(ax[5], tables, kmax)
    return fig


def _exponent_panel(ax: Any, df: pd.DataFrame, regimes: Sequence[str], kmax: int,
                    line: str, relu: bool = False) -> None:
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
        if relu:
            t2, r = wide(df, "rho_sim", regime=reg, student="relu")
            _, rt = wide(df, "rho_theory", regime=reg, student="relu")
            if t2.size:
                ax.semilogx(_time_axis(t2), _exponents(rt, kmax), "-", color=c, lw=0.8,
                            alpha=0.5)
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
    """The lazy ReLU's exponent drift |a(t) - a(0)| over time, per width (blue) and at the
    paper's gamma0 (cyan), beside the effective theory's; shaded: the times the claim
    compares the widths at (up to the smallest width's peak), with its worst slope."""
    w = tables["widths"]
    lazy = w[w.regime == "lazy"]
    Ns = sorted(int(n) for n in lazy.N.unique())
    blues = ("#9ecae1", "#4292c6", "#08519c", "#08306b")
    t_end = float(lazy.t.max()) if len(lazy) else 1.0  # each regime against its own t_end

    def curve(df: pd.DataFrame, q: str, end: float | None, style: str, **kw: Any) -> None:
        t, d = _drift(df, q, kmax)
        if t.size:
            keep = t > 0
            ax.loglog(t[keep] / (t[-1] if end is None else end), np.maximum(d[keep], 1e-4),
                      style, **kw)

    for i, N in enumerate(Ns):
        curve(lazy[lazy.N == N], "rho_sim", t_end, "-", color=blues[min(i, len(blues) - 1)],
              lw=1.3, label=rf"ReLU N = {N}, $\gamma_0 = 0.05\,S/\theta_1$")
    if Ns:
        curve(lazy[lazy.N == Ns[0]], "rho_theory", t_end, ":", color="tab:blue",
              label="its effective theory (any N)")
    paper = w[w.regime == "lazy-paper"]
    curve(paper, "rho_sim", None, "--", color="tab:cyan", lw=1.0,
          label=r"ReLU, paper's $\gamma_0 = 0.5\,S/\theta_0$")
    curve(paper, "rho_theory", None, ":", color="tab:cyan", lw=1.0,
          label="its effective theory")
    sl = drift_slopes(w, kmax).dropna()
    if len(sl):
        ax.axvspan(float(sl.t.min()) / t_end, float(sl.t.max()) / t_end, color="0.9",
                   zorder=0, label=f"widths compared: worst slope {sl.slope.max():.2f} "
                                   "(1/N: -1)")
    ax.set_xlabel(r"$t / t_{end}$")
    ax.set_ylabel(f"exponent drift |a(t) - a(0)|, modes 2..{kmax}")
    ax.set_title("lazy ReLU: at equal times the drift falls as 1/N", fontsize=9)
    ax.legend(fontsize=5, loc="lower center", ncol=2, framealpha=0.9)


# ---------------------------------------------------------------------------- networks


def networks_figure(tables: dict[str, pd.DataFrame], kmax: int) -> Figure:
    """The real networks beside the theory: (a) the theory and the exact reference on the
    networks' own training data (Regions IIIa, IIIb, lazy), (b) the SGD MLP's and (c) the
    CNN's first hidden layer exponent over training (per mode from its weights, o train,
    s held-out; lines: the trackers' spectra by rank), (d) all of them against the share
    of the loss still to learn."""
    fig, ax = new_figure(2, 2, width=4.8, height=3.6)
    d = _task(tables, "dynamics", "net")
    f = _task(tables, "fits", "net")
    a, ab = _fit(f, "alpha"), _fit(f, "alpha_plus_beta")
    _exponent_panel(ax[0], d, ("IIIa", "IIIb", "lazy"), kmax, "rho_reference")
    for reg in ("IIIa", "IIIb", "lazy"):
        t, v = wide(d, "rho_theory", regime=reg, student="linear")
        if t.size:
            ax[0].semilogx(_time_axis(t), _exponents(v, kmax), ":", color=_REGIME_COLOURS[reg],
                           lw=1.0, label=f"{reg}, aligned theory")
    _levels(ax[0], a, ab)
    ax[0].set_title("two-layer theory on the same data: lines exact reference", fontsize=8)
    ax[0].legend(fontsize=6, loc="upper left")
    for i, arch in enumerate(("mlp", "cnn"), start=1):
        for part in ("train", "heldout"):
            t, v = wide(d, f"rho_{part}", student=arch)
            if t.size:
                ax[i].semilogx(np.maximum(t, 0.5), _exponents(v, kmax), _PART_MARKERS[part],
                               color="tab:red", ms=3.5, mfc="none",
                               label=f"per mode, {part.replace('heldout', 'held-out')}")
            t, v = wide(d, f"spectrum_{part}", student=arch)
            kk = min(kmax, v.shape[1] - 1) if v.ndim == 2 else 0
            if t.size and kk >= 4:  # by rank; a CNN's channels may be fewer than kmax
                ax[i].semilogx(np.maximum(t, 0.5), _exponents(v, kk),
                               "-" if part == "train" else "--", color="tab:gray", lw=1,
                               label=f"tracker spectrum 2..{kk}, "
                                     f"{part.replace('heldout', 'held-out')}")
        _levels(ax[i], a, ab)
        ax[i].set_xlabel("SGD step (step 0 at 0.5)")
        ax[i].set_ylabel(f"first hidden layer exponent, 2..{kmax}")
        ax[i].set_title(f"{arch.upper()}: first hidden layer", fontsize=9)
        ax[i].legend(fontsize=6, loc="lower right")
    # (d) against the share of the loss still to learn
    for reg in ("IIIa", "IIIb"):
        for q, style in (("reference", "-"), ("theory", ":")):
            t, v = wide(d, f"rho_{q}", regime=reg, student="linear")
            _, loss = wide(d, f"loss_{q}", regime=reg, student="linear")
            if t.size:
                frac = loss[:, 0] / loss[0, 0]
                lab = (f"{reg}, exact reference" if q == "reference" else
                       "aligned theory (dotted)" if reg == "IIIb" else None)
                ax[3].semilogx(frac, _exponents(v, kmax), style, color=_REGIME_COLOURS[reg],
                               lw=1.2, label=lab)
    for arch, c in (("mlp", "tab:orange"), ("cnn", "tab:purple")):
        for part in ("train", "heldout"):
            t, v = wide(d, f"rho_{part}", student=arch)
            _, loss = wide(d, f"loss_{part}", student=arch)
            if t.size:
                ax[3].semilogx(loss[:, 0] / loss[0, 0], _exponents(v, kmax),
                               _PART_MARKERS[part], color=c, ms=3, mfc="none",
                               label=f"{arch.upper()}, {part.replace('heldout', 'held-out')}")
    ax[3].invert_xaxis()
    _levels(ax[3], a, ab)
    ax[3].set_xlabel("loss / initial loss (learning goes right)")
    ax[3].set_ylabel(f"exponent, modes 2..{kmax}")
    ax[3].set_title("networks and theory at equal loss", fontsize=9)
    ax[3].legend(fontsize=6, loc="upper right")
    return fig


def glance_figure(tables: dict[str, pd.DataFrame], kmax: int, claims: Sequence[Any]) -> Figure:
    """Does the paper's picture survive on real images? The exponent of the linear network's
    representation over time on the blurred target, Regions IIIa and IIIb against lazy,
    beside the exact reference built from the images' own spectra; the claims and their
    verdicts written on the figure."""
    fig, (ax, ax_text) = new_figure(1, 2, width=9.0, height=3.6)
    b = _task(tables, "dynamics", "blur")
    f = tables["fits"]
    _exponent_panel(ax, b, ("IIIa", "IIIb", "lazy"), kmax, "rho_reference")
    _levels(ax, _fit(f, "alpha", "blur"), _fit(f, "alpha_plus_beta", "blur"))
    ax.set_title("image patches -> blurred patch: the theory's regions on real data\n"
                 "(lines: exact reference; o: linear network)", fontsize=8)
    ax_text.axis("off")
    lines = []
    for c in claims:
        mark = "held" if c.held else ("NOT HELD (disputed)" if c.disputed else "NOT HELD")
        m = c.measured
        ms = f"{m:.3g}" if isinstance(m, float) else str(m)
        lines.append(f"[{mark}] {c.name}: {ms} ({c.expected})")
    ax_text.text(0.0, 1.0, "\n".join(lines), va="top", ha="left", fontsize=5.5,
                 family="monospace", transform=ax_text.transAxes)
    ax_text.set_title("claims of this run", fontsize=9)
    return fig
