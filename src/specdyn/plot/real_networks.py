"""Figures of ``real-data`` beyond the tasks' overview (:mod:`specdyn.plot.real_data`): the SGD
networks against the two-layer theory, the anchors (loss curves, per-mode learning times,
the representation's spectrum beside the per-mode diagonal, the tasks where the model
applies) and the glance figure.

Every exponent drawn is :func:`specdyn.measure.mode_exponents` (mode order, weights
``1/k``, window ``2..kmax``); the tracker spectra are by rank.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from specdyn.plot._figure import new_figure
from specdyn.plot.real_data import (
    _PART_MARKERS,
    _REGIME_COLOURS,
    _exponent_panel,
    _exponents,
    _fit,
    _levels,
    _task,
    _time_axis,
    wide,
)

__all__ = ["anchors_figure", "glance_figure", "networks_figure"]

_ARCH_COLOURS = {"mlp": "tab:orange", "cnn": "tab:purple"}
_LAYER_STYLES = {"pre1": ("tab:red", "first pre-activation"),
                 "post1": ("tab:orange", "first post-activation"),
                 "pre2": ("tab:green", "second pre-activation"),
                 "post2": ("tab:blue", "second post-activation")}


def _measured(claims: Sequence[Any], key: str) -> float:
    for c in claims:
        if c.key == key and isinstance(c.measured, float):
            return float(c.measured)
    return float("nan")


def _loss_frac(df: pd.DataFrame, q: str, **sel: Any) -> tuple[np.ndarray, np.ndarray]:
    t, v = wide(df, q, **sel)
    if not t.size or not v[0, 0] > 0:
        return t, np.full(t.size, np.nan)
    return t, v[:, 0] / v[0, 0]


def _rank_exponents(v: np.ndarray, kmax: int) -> tuple[np.ndarray, int]:
    kk = min(kmax, v.shape[1] - 1) if v.ndim == 2 else 0
    return (_exponents(v, kk) if kk >= 4 else np.full(max(len(v), 1), np.nan)), kk


def networks_figure(tables: dict[str, pd.DataFrame], kmax: int,
                    claims: Sequence[Any] = ()) -> Figure:
    """The real networks beside the theory: (a) the two-layer theory and exact reference on
    the networks' training data (Regions IIIa, IIIb, lazy); (b) the SGD MLP's and (c) the
    CNN's first hidden layer exponent over training (per mode from its weights: o train, s
    held-out; x its lazy baseline; lines: the trackers' spectra by rank); (d) the networks
    and the theory against the share of the loss still to learn, peaks marked; (e) the
    MLP's layers (tracker spectra, training and held-out inputs); (f) the losses."""
    fig, ax = new_figure(3, 2, width=4.6, height=3.6)
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
    ax[0].set_title("(a) two-layer theory on the same data\n(lines: exact reference)",
                    fontsize=8.5)
    ax[0].legend(fontsize=6.5, loc="upper left")
    for i, arch in enumerate(("mlp", "cnn"), start=1):
        for part in ("train", "heldout"):
            t, v = wide(d, f"rho_{part}", student=arch)
            if t.size:
                ax[i].semilogx(np.maximum(t, 0.5), _exponents(v, kmax), _PART_MARKERS[part],
                               color="tab:red", ms=3.5, mfc="none",
                               label=f"per mode, {part.replace('heldout', 'held-out')}")
            t, v = wide(d, f"spectrum_{part}", student=arch)
            e, kk = _rank_exponents(v, kmax)
            if t.size and kk >= 4:  # by rank; a CNN's channels may be fewer than kmax
                ax[i].semilogx(np.maximum(t, 0.5), e, "-" if part == "train" else "--",
                               color="tab:gray", lw=1,
                               label=f"tracker spectrum 2..{kk}, "
                                     f"{part.replace('heldout', 'held-out')}")
        t, v = wide(d, "rho_train", student=f"{arch}-lazy")
        if t.size:
            ax[i].semilogx(np.maximum(t, 0.5), _exponents(v, kmax), "x", color="k", ms=3.5,
                           label="lazy baseline (f0 = 0), per mode")
        _levels(ax[i], a, ab)
        ax[i].set_xlabel("SGD step (step 0 at 0.5)")
        ax[i].set_ylabel(f"first hidden layer exponent, 2..{kmax}")
        ax[i].set_title(f"({'bc'[i - 1]}) {arch.upper()}: first hidden layer", fontsize=9)
        ax[i].legend(fontsize=6.5, loc="upper left")
    _equal_loss_panel(ax[3], d, kmax, a, ab, claims)
    _layers_panel(ax[4], d, kmax)
    for arch in ("mlp", "cnn"):
        c = _ARCH_COLOURS[arch]
        for student, style in ((arch, "-"), (f"{arch}-lazy", ":")):
            for part, mk in (("train", "o"), ("heldout", "s")):
                t, fr = _loss_frac(d, f"loss_{part}", student=student)
                if t.size:
                    ax[5].loglog(np.maximum(t, 0.5), fr, style, marker=mk, ms=2.5, mfc="none",
                                 color=c, lw=1.0,
                                 label=f"{student.upper().replace('-LAZY', ' lazy')}, "
                                       f"{part.replace('heldout', 'held-out')}")
    ax[5].set_xlabel("SGD step (step 0 at 0.5)")
    ax[5].set_ylabel("loss / initial loss")
    ax[5].set_title("(f) losses (dotted: the lazy baselines)", fontsize=9)
    ax[5].legend(fontsize=6, loc="lower left", ncol=2)
    return fig


def _equal_loss_panel(ax: Any, d: pd.DataFrame, kmax: int, a: float, ab: float,
                      claims: Sequence[Any]) -> None:
    """(d) networks and theory against the loss fraction still to learn, each peak marked."""
    for reg in ("IIIa", "IIIb"):
        for q, style in (("reference", "-"), ("theory", ":")):
            t, v = wide(d, f"rho_{q}", regime=reg, student="linear")
            _, frac = _loss_frac(d, f"loss_{q}", regime=reg, student="linear")
            if t.size:
                e = _exponents(v, kmax)
                lab = (f"{reg}, exact reference" if q == "reference" else
                       "aligned theory (dotted)" if reg == "IIIb" else None)
                ax.semilogx(frac, e, style, color=_REGIME_COLOURS[reg], lw=1.2, label=lab)
                if q == "reference" and np.isfinite(e).any():
                    i = int(np.nanargmax(e))
                    ax.plot(frac[i], e[i], "*", color=_REGIME_COLOURS[reg], ms=9)
    for arch in ("mlp", "cnn"):
        c = _ARCH_COLOURS[arch]
        for student, mk in ((arch, "o"), (f"{arch}-lazy", "x")):
            t, v = wide(d, "rho_train", student=student)
            _, frac = _loss_frac(d, "loss_train", student=student)
            if t.size:
                e = _exponents(v, kmax)
                size = _measured(claims, f"{arch}-transient-size")
                lab = (f"{arch.upper()}: transient {size:.2f} of the IIIb theory's"
                       if student == arch else f"{arch.upper()} lazy baseline")
                ax.semilogx(frac, e, mk, color=c, ms=3, mfc="none", label=lab)
                if student == arch and np.isfinite(e).any():
                    i = int(np.nanargmax(e))
                    ax.plot(frac[i], e[i], "*", color=c, ms=9)
    ax.invert_xaxis()
    _levels(ax, a, ab)
    ax.set_xlabel("loss / initial loss (learning goes right)")
    ax.set_ylabel(f"first-layer exponent, modes 2..{kmax}")
    ax.set_title("(d) networks and theory at equal loss (training inputs; * peaks)",
                 fontsize=8.5)
    ax.legend(fontsize=6.5, loc="upper right")


def _layers_panel(ax: Any, d: pd.DataFrame, kmax: int) -> None:
    """(e) the MLP's tracked layers: spectrum exponent by rank over training."""
    for layer, (c, what) in _LAYER_STYLES.items():
        for part, style in (("train", "-"), ("heldout", "--")):
            q = f"spectrum_{part}" if layer == "pre1" else f"spectrum_{part}_{layer}"
            t, v = wide(d, q, student="mlp")
            e, kk = _rank_exponents(v, kmax)
            if t.size and kk >= 4:
                ax.semilogx(np.maximum(t, 0.5), e, style, color=c, lw=1.2,
                            label=what if part == "train" else None)
    ax.plot([], [], "--", color="0.4", label="held-out inputs (dashed)")
    ax.set_xlabel("SGD step (step 0 at 0.5)")
    ax.set_ylabel(f"spectrum exponent by rank, 2..{kmax}")
    ax.set_title("(e) MLP: the layers' spectra (trackers)", fontsize=9)
    ax.legend(fontsize=6.5, loc="upper left")


def anchors_figure(tables: dict[str, pd.DataFrame], times: pd.DataFrame,
                   model_tasks: Sequence[str], kmax: int, kmax_digits: int) -> Figure:
    """What the anchors give on the data: (a) the loss curves (theory, exact reference and
    linear network; blurred target in Region IIIb and the denoising task); (b) each mode's
    half-rise time (``times``: ``task, regime, k, source, t``); (c) the representation's
    spectrum (by rank) beside the per-mode diagonal (digits, P < D; denoise, P = D); (d)
    the tasks where the model applies (exponent over time, every seed)."""
    fig, ax = new_figure(2, 2, width=4.8, height=3.6)
    dyn = tables["dynamics"]
    runs = (("blur", "IIIb", "tab:red"), ("denoise", "feature-learning", "tab:green"))
    for task, reg, c in runs:
        d = dyn[dyn.task == task]
        for q, style, what in (("loss_theory", ":", "aligned theory"),
                               ("loss_reference", "-", "exact reference"),
                               ("loss_sim", "o", "network")):
            t, v = wide(d, q, regime=reg, student="linear")
            if t.size:
                ax[0].loglog(_time_axis(t), np.maximum(v[:, 0], 1e-12), style, color=c,
                             lw=1.1, ms=3, mfc="none", label=f"{task} {reg}: {what}")
    ax[0].set_xlabel(r"$t / t_{end}$")
    ax[0].set_ylabel("loss above the least-squares loss")
    ax[0].set_title("(a) loss curves", fontsize=9)
    ax[0].legend(fontsize=6, loc="lower left")
    for (task, reg, c), mk in zip(runs, ("o", "s"), strict=True):
        g = times[(times.task == task) & (times.regime == reg)]
        for src, style in (("theory", ":"), ("reference", "-"), ("network", mk)):
            h = g[g.source == src].sort_values("k")
            if len(h):
                ax[1].loglog(h.k, h.t, style, color=c, ms=3.5, mfc="none", lw=1.1,
                             label=f"{task} {reg}: {src}")
    ax[1].set_xlabel("input mode k")
    ax[1].set_ylabel("half-rise time of rho_k")
    ax[1].set_title("(b) each mode learns in turn (Saxe-style learning times)", fontsize=9)
    ax[1].legend(fontsize=6, loc="upper left")
    for task, c, k in (("digits", "tab:orange", kmax_digits), ("denoise", "tab:green", kmax),
                       ("patches", "tab:blue", kmax)):
        d = dyn[(dyn.task == task) & (dyn.regime == "feature-learning")]
        t, v = wide(d, "rho_sim", student="linear")
        _, sp = wide(d, "spectrum_sim", student="linear")
        if t.size and sp.shape == v.shape:
            ax[2].semilogx(_time_axis(t), _exponents(v, k), "o", color=c, ms=3, mfc="none",
                           label=f"{task}: per-mode diagonal")
            ax[2].semilogx(_time_axis(t), _exponents(sp, k), "-", color=c, lw=1.2,
                           label=f"{task}: eigenvalues by rank")
    ax[2].set_xlabel(r"$t / t_{end}$")
    ax[2].set_ylabel("exponent, modes (ranks) 2..kmax")
    ax[2].set_title("(c) the representation's spectrum vs the per-mode diagonal\n"
                    "(linear network; digits: P = 10 < D)", fontsize=8.5)
    ax[2].legend(fontsize=6, loc="upper right")
    colours = ("tab:green", "tab:olive", "tab:brown", "tab:pink", "tab:cyan", "tab:gray")
    for i, task in enumerate(model_tasks):
        d = dyn[(dyn.task == task) & (dyn.regime == "feature-learning")]
        c = colours[i % len(colours)]
        t, ref = wide(d, "rho_reference", student="linear")
        row = tables["tasks"][tables["tasks"].task == task]
        k = int(row.kmax.iloc[0]) if len(row) else kmax
        if t.size:
            ax[3].semilogx(_time_axis(t), _exponents(ref, k), "-", color=c, lw=1.2,
                           label=f"{task}: exact reference")
        t, v = wide(d, "rho_sim", student="linear")
        if t.size:
            ax[3].semilogx(_time_axis(t), _exponents(v, k), "o", color=c, ms=3, mfc="none",
                           label=f"{task}: network")
    ax[3].set_xlabel(r"$t / t_{end}$")
    ax[3].set_ylabel("exponent of rho_k, modes 2..kmax")
    ax[3].set_title("(d) where the model applies (P = D, nearly aligned)", fontsize=9)
    ax[3].legend(fontsize=6, loc="upper right")
    return fig


def glance_figure(tables: dict[str, pd.DataFrame], kmax: int, claims: Sequence[Any]) -> Figure:
    """Does the paper's picture survive on real images? The exponent of the linear network's
    representation over time on the blurred target, Regions IIIa and IIIb against lazy,
    beside the exact reference built from the images' own spectra; the verdicts of the
    claims on this task written on the figure, and the count of all."""
    fig, (ax, ax_text) = new_figure(2, 1, width=4.8, height=3.6)
    b = _task(tables, "dynamics", "blur")
    f = tables["fits"]
    _exponent_panel(ax, b, ("IIIa", "IIIb", "lazy"), kmax, "rho_reference")
    _levels(ax, _fit(f, "alpha", "blur"), _fit(f, "alpha_plus_beta", "blur"))
    ax.set_title("image patches -> blurred patch: the theory's regions on real data\n"
                 "(lines: exact reference; o: linear network)", fontsize=8)
    ax_text.axis("off")
    lines = []
    for c in claims:
        if "blur" not in c.key or c.key.startswith("relu"):
            continue
        mark = "held" if c.held else ("NOT HELD (disputed)" if c.disputed else "NOT HELD")
        m = c.measured
        ms = f"{m:.3g}" if isinstance(m, float) else str(m)
        lines.append(f"[{mark}] {c.name}: {ms} ({c.expected})")
    judged = [c for c in claims if not c.sanity]
    held = sum(c.held for c in judged)
    expected_not = sum((not c.held) and bool(c.disputed or c.full_only) for c in judged)
    lines += ["", f"all claims of this run: {held} held, {expected_not} not held as expected, "
                  f"{len(judged) - held - expected_not} FAILED (claims.json)"]
    ax_text.text(0.0, 1.0, "\n".join(lines), va="top", ha="left", fontsize=6,
                 family="monospace", transform=ax_text.transAxes)
    ax_text.set_title("claims on the blurred target", fontsize=9)
    return fig
