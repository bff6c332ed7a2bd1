"""Figures of the linear-network simulations: Fig. 2 and the finite-size study."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib import cm, colors
from matplotlib.figure import Figure

from specdyn.measure.exponents import loglog_fit
from specdyn.plot._figure import new_figure


def _time_norm(times: np.ndarray) -> colors.Normalize:
    pos = times[times > 0]
    lo = pos.min() if pos.size else 1.0
    return colors.LogNorm(vmin=lo, vmax=max(times.max(), lo * 10))


def fig2(times: np.ndarray, k: np.ndarray, rho_theory: np.ndarray, rho_sim: np.ndarray,
         alpha_t: np.ndarray, alpha_theory: np.ndarray, alpha_theory_local: np.ndarray,
         alpha_sim_t: np.ndarray, alpha_sim: np.ndarray, *,
         local_ranks: Sequence[int] = (1, 2), alpha_gd: np.ndarray | None = None,
         marker_ranks: np.ndarray | None = None,
         note: str = "", symlog_t: float = 1.0, title: str = "",
         late_t: float | None = None) -> Figure:
    """Fig. 2 of the paper: (a) spectra over training, (b) the exponent at ``k = 1``.

    Parameters
    ----------
    times
        ``(n,)`` times of the curves in panel (a) (``t = 0`` is drawn dashed).
    k, rho_theory, rho_sim
        Ranks ``(D,)`` and spectra ``(n, D)`` (theory lines, simulation markers).
    alpha_t, alpha_theory, alpha_theory_local
        Time grid (from ``t = 0``) and the theory's ``alpha_eff`` at ``k = 1``
        (exact derivative) and with the simulation's estimator (two-point slope
        over ``local_ranks``).
    alpha_sim_t, alpha_sim
        Checkpoint times (from ``t = 0``) and the simulation's exponent.
    alpha_gd
        The discrete-time theory's exponent (GD with the run's step at ``N = M = inf``,
        the same two-point slope) at the checkpoint times, or ``None``.
    note
        Text under panel (b): what separates simulation and theory.
    symlog_t
        Panel (b)'s time axis is linear below this and logarithmic above, so
        that ``t = 0`` is on the axis.
    late_t
        Start of the late window of the claims (shaded in panel (b)), or ``None``.
    """
    fig, (ax_a, ax_b) = new_figure(2, 1, width=5.0, height=4.0)
    norm = _time_norm(times)
    cmap = cm.viridis
    if marker_ranks is None:
        marker_ranks = np.unique(np.round(np.geomspace(1, k.size, 30)).astype(int))
    idx = marker_ranks - 1
    for i, t in enumerate(times):
        col = cmap(norm(max(t, norm.vmin)))
        ax_a.plot(k, rho_theory[i], color=col, lw=1.4, ls="--" if t == 0 else "-",
                  label="t = 0" if t == 0 else None)
        ax_a.plot(k[idx], rho_sim[i, idx], "o", ms=3.2, mfc="none", color=col, mew=0.9)
    ax_a.set_xscale("log")
    ax_a.set_yscale("log")
    ax_a.set_xlabel("mode index k (rank)")
    ax_a.set_ylabel(r"eigenvalue $\rho_k(t)$")
    ax_a.set_title("(a) representation spectra: theory (lines), simulation (markers)",
                   fontsize=9)
    if (times == 0).any():
        ax_a.legend(loc="lower left", fontsize=8)
    sm = cm.ScalarMappable(norm=norm, cmap=cmap)
    fig.colorbar(sm, ax=ax_a, label="training time t")

    lo, hi = local_ranks[0], local_ranks[-1]
    ax_b.plot(alpha_t, alpha_theory, color="k", lw=1.5,
              label=r"Eq. (12), exact $-d\log\rho/d\log k$")
    ax_b.plot(alpha_t, alpha_theory_local, color="C1", lw=1.2, ls="--",
              label=f"Eq. (12), two-point slope k = {lo}, {hi}")
    if alpha_gd is not None:
        ax_b.plot(alpha_sim_t, alpha_gd, ":", color="C2", lw=1.6,
                  label="GD at N = M = inf, two-point")
    ax_b.plot(alpha_sim_t, alpha_sim, "o", color="C0", ms=3.5, mfc="none",
              label="simulation, two-point")
    if late_t is not None:
        ax_b.axvspan(late_t, alpha_sim_t.max(), color="0.9", zorder=0,
                     label=f"late window t >= {late_t:.3g}")
    ax_b.set_xscale("symlog", linthresh=symlog_t)
    ax_b.set_xlim(left=0.0)
    ax_b.set_xlabel(f"training time t (linear below t = {symlog_t:g}, log above)")
    ax_b.set_ylabel(r"local exponent $\alpha_{\rm eff}$ at k = 1")
    ax_b.set_title("(b) local power-law exponent at k = 1, from t = 0", fontsize=9)
    if note:  # room above the curves for the note
        lo_y, hi_y = ax_b.get_ylim()
        ax_b.set_ylim(lo_y, hi_y + 0.45 * (hi_y - lo_y))
        ax_b.text(0.02, 0.98, note, transform=ax_b.transAxes, va="top", fontsize=7,
                  bbox=dict(fc="white", ec="0.6", alpha=0.9))
    # under the note, right of the transient, above the late plateaus
    ax_b.legend(fontsize=7, loc="upper right", bbox_to_anchor=(1.0, 0.8 if note else 1.0))
    if title:
        fig.suptitle(title, fontsize=9)
    return fig


def finite_size(by_n: tuple, by_m: tuple, *,
                metric: str = "median over modes of |log rho_sim/rho_theory|",
                notes: dict[str, str] | None = None, title: str = "") -> Figure:
    """Agreement with theory against width ``N`` (``M = inf``) and samples ``M`` (``N = inf``).

    ``by_n`` and ``by_m`` are ``(sizes, mean_error, sd_error, slope, slope_upper)``:
    seed-mean errors with their standard deviation, and the least-squares
    power-law slopes over all sizes and over the upper half of the sizes
    (drawn as lines ``err ~ size^slope``). ``notes`` maps ``"N"`` / ``"M"`` to a text
    drawn in the lower left of its panel (e.g. the error level against a prediction).
    """
    fig, axes = new_figure(2, 1, width=4.4, height=3.6)
    for ax, data, name, col, letter, axis in (
        (axes[0], by_n, "width N  (M = inf)", "C0", "a", "N"),
        (axes[1], by_m, "samples M  (N = inf)", "C3", "b", "M"),
    ):
        if notes and axis in notes:  # below the falling errors
            ax.text(0.03, 0.03, notes[axis], transform=ax.transAxes, fontsize=7,
                    va="bottom", bbox=dict(fc="white", ec="0.6", alpha=0.9))
        x, y, sd, slope, slope_upper = data
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        ax.errorbar(x, y, yerr=sd, fmt="o", color=col, ms=4, capsize=2,
                    label="simulation (seed mean, sd)")
        for xs, ys, sl, ls, lab in ((x, y, slope, "--", "all sizes"),
                                    (x[len(x) // 2:], y[len(y) // 2:], slope_upper, ":",
                                     "upper half")):
            if len(xs) < 2:
                continue
            s, c = loglog_fit(xs, ys)
            xx = np.geomspace(xs.min(), xs.max(), 50)
            ax.plot(xx, np.exp(c + s * np.log(xx)), ls, color="k", lw=1.1,
                    label=f"fit, {lab}: slope {sl:.2f}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(name)
        ax.set_ylabel("error vs theory")
        ax.set_title(f"({letter}) {metric}", fontsize=8)
        ax.legend(fontsize=7)
    if title:
        fig.suptitle(title, fontsize=9)
    return fig
