"""``specdyn data``'s figure: a user's data against the theory, in six panels.

(a) the data's spectra with their fits: ``lambda_k`` and ``lambda_k mu_k`` per input mode,
and the teacher's own spectrum by rank; (b) the representation's eigenvalue spectrum at
four times (exact reference, else the aligned theory), the rank of ``C`` marked; (c) the
exponent over time of both the per-mode diagonal and the eigenvalue spectrum; (d) the
loss above the least-squares loss; (e) the per-mode learning times; (f) the teacher's
misalignment per mode. Every exponent is the estimator of
:mod:`specdyn.measure.data_spectra` over the study's window.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.figure import Figure

from specdyn.plot._figure import new_figure

__all__ = ["study_figure"]

_REGIME_COLOURS = ("tab:red", "tab:blue", "tab:green", "tab:purple", "tab:brown")


def _t_axis(t: np.ndarray) -> np.ndarray:
    """``t / t_end``, with ``t = 0`` drawn at a third of the first positive time."""
    pos = t[t > 0]
    return np.maximum(t, pos.min() / 3) / t[-1] if pos.size else np.ones_like(t)


def _fit_line(ax: Any, k: np.ndarray, y: np.ndarray, e: float, lo: int, hi: int) -> None:
    """The fitted power law through the window's centre (black)."""
    win = y[lo - 1:hi]
    if np.isfinite(e) and win.size and np.all(win > 0):
        kk = np.arange(lo, hi + 1, dtype=float)
        mid = np.exp(np.mean(np.log(win)) + e * np.mean(np.log(kk)))
        ax.loglog(kk, mid * kk ** (-e), "-", color="k", lw=0.8)


def _spectra_panel(ax: Any, st: Any) -> None:
    d, lo, hi = st.dec, st.kmin, st.kmax
    k = np.arange(1, d.D + 1)
    lam, lm = d.lam / d.lam[0], d.lam * d.mu / (d.lam[0] * d.mu[0])
    f = st.fits
    ax.loglog(k, lam, ".", color="tab:blue", ms=3,
              label=fr"$\lambda_k$: $\alpha$ = {f.alpha.exponent:.2f}")
    ax.loglog(k, lm, ".", color="tab:orange", ms=3,
              label=fr"$\lambda_k\mu_k$ (per mode): $\alpha+\beta$ = "
                    f"{f.alpha_plus_beta.exponent:.2f}")
    _fit_line(ax, k, lam, f.alpha.exponent, lo, hi)
    _fit_line(ax, k, lm, f.alpha_plus_beta.exponent, lo, hi)
    teach = d.teacher_spectrum()
    if teach.size:
        kt = np.arange(1, teach.size + 1)
        tf = st.teacher_fit
        lab = ("teacher's own spectrum (rank): "
               + (fr"$\beta$ = {tf.exponent:.2f}" if tf is not None else "too few modes"))
        ax.loglog(kt, teach / teach[0], "x", color="tab:green", ms=3, label=lab)
        if tf is not None:
            _fit_line(ax, kt, teach / teach[0], tf.exponent, lo, hi)
    ax.set_xlabel("input mode k (teacher: rank)")
    ax.set_ylabel("normalised to k = 1")
    ax.set_title(f"data; black: fits over {lo}..{hi}", fontsize=9)
    ax.legend(fontsize=6, loc="lower left")


def _first_model(st: Any) -> tuple[str, Any]:
    name, (_, models) = next(iter(st.regimes.items()))
    return name, models["linear"]


def _spectrum_panel(ax: Any, st: Any) -> None:
    import matplotlib

    name, m = _first_model(st)
    spec = m.reference.spectrum if m.reference is not None else -np.sort(-m.rho_theory, axis=1)
    src = "exact reference" if m.reference is not None else "aligned theory"
    pick = np.unique(np.r_[0, np.round(np.geomspace(1, m.t.size - 1, 4)).astype(int)])
    cmap = matplotlib.colormaps["viridis"]
    r = np.arange(1, spec.shape[1] + 1)
    for j, i in enumerate(pick):
        ax.loglog(r, spec[i], "-", color=cmap(j / max(1, pick.size - 1)), lw=1.0,
                  label=f"t = {m.t[i]:.3g}")
    rank = st.dec.rank
    if rank < st.dec.D:
        ax.axvline(rank + 0.5, color="grey", ls=":", lw=0.8)
        ax.annotate(f"rank(C) = {rank}", (rank + 0.5, spec[-1, -1]), fontsize=7,
                    color="grey", xytext=(3, 3), textcoords="offset points")
    ax.set_xlabel("rank")
    ax.set_ylabel(r"eigenvalue of $\Sigma^{1/2}G^w\Sigma^{1/2}$")
    ax.set_title(f"representation spectrum, {name} ({src})", fontsize=8)
    ax.legend(fontsize=6, loc="lower left")


def _exponent_panel(ax: Any, st: Any) -> None:
    from specdyn.measure import mode_exponents, rank_exponent

    lo, hi = st.kmin, st.kmax
    for c, (name, (_, models)) in zip(_REGIME_COLOURS, st.regimes.items(), strict=False):
        m = models["linear"]
        src = m.reference if m.reference is not None else None
        rho = src.rho if src is not None else m.rho_theory
        spec = src.spectrum if src is not None else m.rho_theory
        x = _t_axis(m.t)
        ax.semilogx(x, mode_exponents(rho, lo, hi), "-", color=c, lw=1.1,
                    label=f"{name}: diagonal")
        ax.semilogx(x, rank_exponent(spec, lo, hi), "--", color=c, lw=1.1,
                    label=f"{name}: spectrum")
        if m.network is not None:
            xn = _t_axis(m.network.times)
            ax.semilogx(xn, mode_exponents(m.rho_network, lo, hi), "o", color=c, ms=3,
                        mfc="none", label=f"{name}: network (diagonal)")
    ax.axhline(st.fits.alpha.exponent, color="grey", ls=":", lw=0.8)
    ax.set_xlabel(r"$t / t_{end}$")
    ax.set_ylabel(f"exponent over {lo}..{hi}")
    ax.set_title("exponent over time (reference where integrated)", fontsize=8)
    lo_y, hi_y = ax.get_ylim()  # room above the curves for the legend
    ax.set_ylim(lo_y, hi_y + 0.45 * (hi_y - lo_y))
    ax.legend(fontsize=6, loc="upper right", ncol=2)


def _loss_panel(ax: Any, st: Any) -> None:
    for c, (name, (_, models)) in zip(_REGIME_COLOURS, st.regimes.items(), strict=False):
        m = models["linear"]
        x = _t_axis(m.t)
        ax.loglog(x, np.maximum(m.loss_theory, 1e-300), "-", color=c, lw=1.1,
                  label=f"{name}: theory")
        if m.reference is not None:
            ax.loglog(x, np.maximum(m.reference.excess_loss, 1e-300), "--", color=c, lw=1.1,
                      label=f"{name}: exact reference")
        if m.network is not None:
            least = 0.5 * float(np.trace(st.dec.syy)
                                - np.sum(st.dec.coeffs**2 / st.dec.lam[:, None]))
            ax.loglog(_t_axis(m.network.times),
                      np.maximum(np.asarray(m.network.loss) - least, 1e-300), "o", color=c,
                      ms=3, mfc="none", label=f"{name}: network")
    ax.set_xlabel(r"$t / t_{end}$")
    ax.set_ylabel("loss above least squares")
    ax.set_title("predicted loss curves", fontsize=9)
    ax.legend(fontsize=6)


def _times_panel(ax: Any, st: Any) -> None:
    name, m = _first_model(st)
    # the study's own table (plot does not import the study layer)
    tab = st.learning_times_table()
    rows = (tab["regime"] == name) & (tab["student"] == "linear")
    lt = {c: tab.loc[rows, c].to_numpy(dtype=float)
          for c in ("k", "t_theory", "t_reference", "t_saxe")}
    k = lt["k"]
    ax.loglog(k, lt["t_theory"], "-", color="tab:red", lw=1.1, label="aligned theory")
    if m.reference is not None:
        ax.loglog(k, lt["t_reference"], "o", color="k", ms=2.5, mfc="none",
                  label="exact reference")
    ref = lt["t_reference"] if m.reference is not None else lt["t_theory"]
    ok = np.isfinite(ref) & np.isfinite(lt["t_saxe"])
    if ok.any():  # the scale drawn through the median ratio: its shape, not its level
        ratio = float(np.exp(np.median(np.log(ref[ok] / lt["t_saxe"][ok]))))
        ax.loglog(k, ratio * lt["t_saxe"], ":", color="tab:blue", lw=1.1,
                  label=r"$\propto\gamma_0/|c_k|$ (Saxe-like scale)")
    ax.axvline(st.kmax, color="grey", ls=":", lw=0.8, label=f"end of the fit window, k = {st.kmax}")
    ax.set_xlabel("input mode k")
    ax.set_ylabel("time to 90 % learned")
    ax.set_title(f"learning times, {name}", fontsize=9)
    ax.legend(fontsize=6)


def _misalignment_panel(ax: Any, st: Any) -> None:
    d = st.dec
    k = np.arange(1, d.D + 1)
    ax.semilogx(k, d.misalignment, ".", color="tab:gray", ms=3,
                label="Gram-Schmidt share (headline)")
    ax.semilogx(k[:st.kmax], d.mode_overlap(st.kmax), "o-", color="tab:red", ms=3, lw=0.8,
                label="output overlap (rms cos)")
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel("input mode k")
    ax.set_ylabel("misalignment of mode k")
    ax.set_title("teacher misalignment per mode", fontsize=9)
    ax.legend(fontsize=6)


def study_figure(st: Any) -> Figure:
    """The figure of a :class:`~specdyn.study.DataStudy` (the module docstring)."""
    fig, ax = new_figure(3, 2, width=4.2, height=3.4)
    _spectra_panel(ax[0], st)
    _spectrum_panel(ax[1], st)
    _exponent_panel(ax[2], st)
    _loss_panel(ax[3], st)
    _times_panel(ax[4], st)
    _misalignment_panel(ax[5], st)
    return fig
