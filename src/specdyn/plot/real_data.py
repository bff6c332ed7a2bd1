"""Figures of the ``real-data`` experiment: the theory from a data set's own spectra."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from specdyn.plot._figure import new_figure

__all__ = ["glance_figure", "real_data_figure"]

_TASK_COLOURS = {"patches": "tab:blue", "digits": "tab:orange", "text": "tab:green"}
_REGIME_COLOURS = {"feature-learning": "tab:red", "lazy": "tab:blue"}


def _wide(df: pd.DataFrame, task: str, student: str, regime: str, q: str
          ) -> tuple[np.ndarray, np.ndarray]:
    sel = df[(df.task == task) & (df.student == student) & (df.regime == regime)
             & (df.quantity == q)]
    w = sel.pivot_table(index="t", columns="k", values="value", aggfunc="first").sort_index()
    return w.index.to_numpy(dtype=float), w.to_numpy(dtype=float)


def _slopes(rho: np.ndarray, kmax: int) -> np.ndarray:
    """Mode-order exponent over ``k = 2..kmax`` per checkpoint, as the claims measure it."""
    from specdyn.measure import loglog_fit

    k = np.arange(2, kmax + 1, dtype=float)
    return np.array([-loglog_fit(k, r[1:kmax])[0] for r in rho])


def _fit(fits: pd.DataFrame, task: str, q: str) -> float:
    row = fits[(fits.task == task) & (fits.quantity == q)]
    return float(row.value.iloc[0]) if len(row) else float("nan")


def _spectra_over_time(ax: Any, df: pd.DataFrame, task: str, title: str) -> None:
    t, sim = _wide(df, task, "linear", "feature-learning", "rho_sim")
    _, th = _wide(df, task, "linear", "feature-learning", "rho_theory")
    pick = np.unique(np.r_[0, np.round(np.geomspace(1, t.size - 1, 5)).astype(int)])
    cmap = _cmap()
    k = np.arange(1, sim.shape[1] + 1)
    for j, i in enumerate(pick):
        c = cmap(j / max(1, pick.size - 1))
        ax.loglog(k, th[i], "-", color=c, lw=1.2, label=f"t = {t[i]:.3g}")
        ax.loglog(k, sim[i], "o", color=c, ms=2.5, mfc="none")
    ax.set_xlabel("input mode k")
    ax.set_ylabel(r"$\rho_k(t)$")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=6, title="lines theory, o network", title_fontsize=6)


def _cmap() -> Any:
    import matplotlib

    return matplotlib.colormaps["viridis"]


def real_data_figure(df: pd.DataFrame, modes: pd.DataFrame, fits: pd.DataFrame,
                     kmax: int) -> Figure:
    """Six panels: data spectra with fits, misalignment per mode, rho_k(t) theory against
    the network (patches, digits), the local exponent over time, the error per mode."""
    fig, ax = new_figure(3, 2, width=4.6, height=3.6)
    # (a) spectra with fits
    for task, g in modes.groupby("task", sort=False):
        g = g.sort_values("k")
        lam = g.lam.to_numpy()
        ok = lam > 0
        k = g.k.to_numpy()[ok]
        lam = lam[ok] / lam[0]
        a = _fit(fits, str(task), "alpha")
        row = fits[(fits.task == task) & (fits.quantity == "alpha")]
        lo, hi = (float(row.kmin.iloc[0]), float(row.kmax.iloc[0])) if len(row) else (2, 10)
        c = _TASK_COLOURS.get(str(task), "k")
        ax[0].loglog(k, lam, ".", color=c, ms=3,
                     label=fr"{task}: $\alpha$ = {a:.2f}")
        kk = np.geomspace(lo, hi, 20)
        ref = lam[int(lo) - 1] * (kk / lo) ** (-a)
        ax[0].loglog(kk, ref * 3.0, "--", color=c, lw=1)
    ax[0].set_xlabel("mode k")
    ax[0].set_ylabel(r"$\lambda_k / \lambda_1$ (dashed: fit, offset x3)")
    ax[0].set_title("input spectra of the data and their fits", fontsize=9)
    ax[0].legend(fontsize=7)
    # (b) misalignment per mode
    for task in ("patches", "digits"):
        g = modes[modes.task == task].sort_values("k")
        ax[1].semilogx(g.k, g.misalignment, ".-", color=_TASK_COLOURS[task], ms=3, lw=0.6,
                       label=f"{task}")
    ax[1].axhline(0.1, color="grey", ls=":", lw=1)
    ax[1].set_xlabel("input mode k")
    ax[1].set_ylabel("misalignment (off-diagonal share)")
    ax[1].set_title("teacher misalignment per mode (dotted: 0.1)", fontsize=9)
    ax[1].legend(fontsize=7)
    # (c), (d) rho_k(t)
    _spectra_over_time(ax[2], df, "patches", "patches -> shifted patch, linear, feature "
                       "learning")
    _spectra_over_time(ax[3], df, "digits", "digits -> label, linear, feature learning")
    # (e) exponent over time, both regimes, linear and ReLU
    a, ab = _fit(fits, "patches", "alpha"), _fit(fits, "patches", "alpha_plus_beta")
    for regime, c in _REGIME_COLOURS.items():
        for student, mk in (("linear", "o"), ("relu", "s")):
            sel = df[(df.task == "patches") & (df.student == student) & (df.regime == regime)]
            if sel.empty:
                continue
            t, sim = _wide(df, "patches", student, regime, "rho_sim")
            _, th = _wide(df, "patches", student, regime, "rho_theory")
            tt = np.maximum(t, t[t > 0].min() / 3) / t[-1]
            ax[4].semilogx(tt, _slopes(th, kmax), "-", color=c, lw=1,
                           alpha=1.0 if student == "linear" else 0.5)
            ax[4].semilogx(tt, _slopes(sim, kmax), mk, color=c, ms=3, mfc="none",
                           label=f"{regime}, {student}")
    levels = [(a, r"$\alpha$", "top"), (ab, r"$\alpha+\beta$", "bottom"),
              (3 * a + (ab - a), r"$3\alpha+\beta$", "top")]
    if abs(ab - a) < 0.1 * max(abs(a), 1.0):  # beta ~ 0 (patches): one line, one label
        levels = [(a, r"$\alpha \approx \alpha+\beta$", "top"), levels[2]]
    for y, lab, va in levels:
        ax[4].axhline(y, color="grey", ls=":", lw=0.8)
        ax[4].annotate(lab, (0.01, y), xycoords=("axes fraction", "data"), fontsize=7,
                       va=va, zorder=5,  # over the markers that start at the same level
                       bbox={"fc": "white", "ec": "none", "alpha": 0.8, "pad": 0.5})
    ax[4].set_xlabel(r"$t / t_{end}$")
    ax[4].set_ylabel(f"exponent of $\\rho_k$, modes 2..{kmax}")
    ax[4].set_title("patches: exponent over time (lines theory)", fontsize=9)
    ax[4].legend(fontsize=6)
    # (f) error per mode against misalignment
    for task in ("patches", "digits"):
        _, sim = _wide(df, task, "linear", "feature-learning", "rho_sim")
        _, th = _wide(df, task, "linear", "feature-learning", "rho_theory")
        err = np.max(np.abs(np.log(sim / th)), axis=0)
        m = modes[modes.task == task].sort_values("k").misalignment.to_numpy()
        ax[5].loglog(np.maximum(m, 1e-4), err, ".", color=_TASK_COLOURS[task], ms=4,
                     label=task)
    ax[5].set_xlabel("misalignment of mode k (floored at 1e-4)")
    ax[5].set_ylabel(r"max$_t$ |log $\rho_{sim}/\rho_{theory}$|")
    ax[5].set_title("theory's error per mode, feature learning", fontsize=9)
    ax[5].legend(fontsize=7)
    return fig


def glance_figure(df: pd.DataFrame, fits: pd.DataFrame, kmax: int,
                  claims: Sequence[Any]) -> Figure:
    """Does the paper's picture survive on real images? The exponent of the network's
    representation over time, feature learning against lazy, beside the theory built from
    the images' own spectra; the claims and their verdicts written on the figure."""
    fig, (ax, ax_text) = new_figure(2, 1, width=5.2, height=4.0)
    a, ab = _fit(fits, "patches", "alpha"), _fit(fits, "patches", "alpha_plus_beta")
    for regime, c in _REGIME_COLOURS.items():
        t, sim = _wide(df, "patches", "linear", regime, "rho_sim")
        _, th = _wide(df, "patches", "linear", regime, "rho_theory")
        tt = np.maximum(t, t[t > 0].min() / 3) / t[-1]
        ax.semilogx(tt, _slopes(th, kmax), "-", color=c, lw=1.5, label=f"{regime}: theory")
        ax.semilogx(tt, _slopes(sim, kmax), "o", color=c, ms=4, mfc="none",
                    label=f"{regime}: network")
    ax.axhline(a, color="grey", ls=":", lw=1)
    ax.axhline(3 * a + (ab - a), color="grey", ls=":", lw=1)
    ax.annotate(fr"data $\alpha$ = {a:.2f}", (0.02, a), xycoords=("axes fraction", "data"),
                fontsize=8, va="bottom")
    ax.annotate(r"$3\alpha+\beta$ (Region II)", (0.02, 3 * a + (ab - a)),
                xycoords=("axes fraction", "data"), fontsize=8, va="top")
    ax.set_xlabel(r"$t / t_{end}$")
    ax.set_ylabel(f"exponent of the representation, modes 2..{kmax}")
    ax.set_title("natural image patches: feature learning reshapes the exponent, lazy does "
                 "not", fontsize=9)
    ax.legend(fontsize=7, loc="center right")
    ax_text.axis("off")
    lines = []
    for c in claims:
        mark = "held" if c.held else ("NOT HELD (disputed)" if c.disputed else "NOT HELD")
        m = c.measured
        ms = f"{m:.3g}" if isinstance(m, float) else str(m)
        lines.append(f"[{mark}] {c.name}\n      measured {ms}, expected {c.expected}")
    ax_text.text(0.0, 1.0, "\n".join(lines), va="top", ha="left", fontsize=6.5,
                 family="monospace", transform=ax_text.transAxes)
    ax_text.set_title("claims of this run", fontsize=9)
    return fig
