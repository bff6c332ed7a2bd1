"""Figures for mean-field Langevin dynamics: propagation of chaos, sparse atoms, error budget."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator

from specdyn.plot._figure import new_figure


def plot_propagation_of_chaos(N: np.ndarray, distances: np.ndarray, slope: float,
                              intercept: float, times: np.ndarray,
                              scaled_vs_time: np.ndarray, w2: np.ndarray | None = None,
                              growth: tuple[float, float, float] | None = None) -> Figure:
    """Coupled distance against ``N`` (log axes) and ``N * distance`` against time.

    Parameters
    ----------
    N
        ``(K,)`` system sizes.
    distances
        ``(S, K)`` per-particle squared distance at the final time, one row per seed.
    slope, intercept
        Least-squares fit ``log D = intercept + slope log N`` of the seed mean.
    times
        ``(C,)`` checkpoint times.
    scaled_vs_time
        ``(K, C)`` seed-mean ``N * distance`` at each checkpoint.
    w2
        Optional ``(S, K)`` exact ``W2^2`` between each system's empirical
        measure and its copies' (optimal assignment), drawn as open squares.
    growth
        Optional ``(t_mid, t_end, g)``: the uniform-in-time claim's window and the
        measured relative growth of ``N x W2^2`` over it (shaded, in the title).
    """
    fig, (ax, axt) = new_figure(2, 1, width=4.8, height=3.8)
    for s, row in enumerate(distances):
        ax.plot(N, row, "-", color="0.7", lw=0.8, marker=".", label="seeds" if s == 0 else None)
    mean = distances.mean(0)
    ax.fill_between(N, distances.min(0), distances.max(0), color="C0", alpha=0.15,
                    label="seeds' range")
    ax.plot(N, mean, "o", color="C0", label="mean over seeds (paired)")
    if w2 is not None:
        ax.plot(N, w2.mean(0), "s", mfc="none", color="C2",
                label="W2^2 of the measures (assignment)")
    grid = np.geomspace(N.min(), N.max(), 50)
    ax.plot(grid, np.exp(intercept) * grid ** slope, "C3-",
            label=f"fit: slope {slope:.2f}")
    ax.plot(grid, mean[0] * (grid / N[0]) ** -1.0, "k:", lw=1, label="slope -1")
    ax.set_xscale("log")
    ax.set_yscale("log")
    _log_ticks(ax, N)
    ax.set_xlabel("number of particles N")
    ax.set_ylabel(r"$\frac{1}{N}\sum_i \|\theta_i - \bar\theta_i\|^2$ at final time")
    ax.set_title("synchronous coupling to mean-field copies")
    ax.legend(fontsize=8)
    for i, n in enumerate(N):
        axt.plot(times, scaled_vs_time[i], color=f"C{i % 10}", label=f"N = {n}")
    axt.set_xlabel("time t = step x dt")
    axt.set_ylabel("N x coupled distance (mean over seeds)")
    axt.set_title("N x distance: the same curve for every N")
    if growth is not None:
        t_mid, t_end, g = growth
        axt.axvspan(t_mid, t_end, color="0.85", zorder=0,
                    label="uniform in time: flat here")
        axt.set_title(f"N x distance: same curve for every N\n"
                      f"t = {t_mid:g} -> {t_end:g}: N x W2^2 {g:+.0%}", fontsize=10)
    axt.legend(fontsize=8)
    return fig


def plot_sparse_atoms(initial: np.ndarray, final: np.ndarray, labels: np.ndarray,
                      teacher: np.ndarray, times: np.ndarray, top_mass: np.ndarray,
                      loss_times: np.ndarray, loss: np.ndarray, coords: tuple[int, int] = (0, 1)
                      ) -> Figure:
    """Particles at the start and the end, coloured by cluster, against the teacher's atoms.

    Particles are ``(N, d+1)`` rows ``[a, w]``; the scatter shows ``w`` in the
    plane of input coordinates ``coords`` with marker area proportional to
    ``|a|``. ``top_mass`` is ``(C, k)``: the |a|-mass fraction in the ``j+1``
    heaviest clusters at each checkpoint time.
    """
    fig, (ax0, ax1, ax2) = new_figure(3, 1, width=4.2, height=4.0)
    i, j = coords
    lim = 1.15 * max(np.abs(final[:, 1:][:, [i, j]]).max(), np.abs(teacher[:, 1:][:, [i, j]]).max(),
                     1e-12)
    for ax, p, title in ((ax0, initial, "initialisation"), (ax1, final, "end of training")):
        size = 60 * np.abs(p[:, 0]) / max(np.abs(p[:, 0]).max(), 1e-300) + 2
        if p is final:
            colours = np.where(labels[:, None] == 0, np.array([[0.12, 0.47, 0.71, 1.0]]),
                               np.where(labels[:, None] == 1,
                                        np.array([[0.84, 0.15, 0.16, 1.0]]),
                                        np.array([[0.6, 0.6, 0.6, 0.6]])))
            ax.scatter(p[:, 1 + i], p[:, 1 + j], s=size, c=colours, lw=0)
            ax.scatter([], [], c="C0", s=20, label="cluster 1")
            ax.scatter([], [], c="C3", s=20, label="cluster 2")
            ax.scatter([], [], c="0.6", s=20, label="other clusters")
        else:
            ax.scatter(p[:, 1 + i], p[:, 1 + j], s=size, c="0.4", lw=0, label="particles")
        for k, atom in enumerate(teacher):
            w = atom[1:]
            ax.plot([0, w[i]], [0, w[j]], "k--", lw=0.8)
            ax.plot(w[i], w[j], "k*", ms=14, label="teacher atoms" if k == 0 else None)
        ax.set_xlim(-lim, lim)
        ax.set_ylim(-lim, lim)
        ax.set_aspect("equal")
        ax.set_xlabel(f"w_{i + 1}")
        ax.set_ylabel(f"w_{j + 1}")
        ax.set_title(f"{title} (area ~ |a|)")
        ax.legend(fontsize=7, loc="lower left")
    for k in range(top_mass.shape[1]):
        ax2.plot(times, top_mass[:, k], marker=".", label=f"{k + 1} heaviest cluster(s)")
    ax2.axhline(0.9, color="k", ls=":", lw=1, label="90%")
    ax2.set_ylim(0, 1.02)
    ax2.set_xlabel("time t")
    ax2.set_ylabel("|a|-mass fraction")
    ax2.set_title("concentration on atoms")
    axl = ax2.twinx()
    axl.plot(loss_times, loss, color="0.3", lw=0.8, ls="--")
    axl.set_yscale("log")
    axl.set_ylabel("training loss (dashed)")
    ax2.legend(fontsize=7, loc="center right")
    return fig


def _log_ticks(ax: Axes, values: np.ndarray) -> None:
    ticks = [float(x) for x in values]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FixedFormatter([f"{x:g}" for x in ticks]))
    ax.xaxis.set_minor_locator(NullLocator())


def plot_error_budget(parts: Mapping[str, tuple[np.ndarray, np.ndarray]], total: float,
                      target_coeffs: np.ndarray, learned_coeffs: np.ndarray,
                      loss_times: np.ndarray, loss: np.ndarray, *, plateau: float | None = None,
                      budget_time: float | None = None) -> Figure:
    """The four parts of the error against their own knob, plus Hermite coefficients.

    ``parts`` maps ``"statistical"`` (against n), ``"optimisation"`` (against t),
    ``"particle"`` (against N), ``"sparse residual"`` and ``"K-cluster residual"``
    (against K) to ``(x, value)`` arrays; values are drawn as ``|value|`` on log
    axes, negative ones as open markers. ``total`` is the test error of the
    population run at the budget's time (dotted line in each panel); ``plateau``
    the test error at the end of the long run.
    """
    fig, axes = new_figure(3, 2, width=4.2, height=3.4)
    spec = [("statistical", "training-set size n", "E(n) - E(population)", True),
            ("optimisation", "time t", "E(t) - E(t_end)", True),
            ("particle", "number of particles N", "mean (f_N - f_ref)^2", True),
            ("sparse residual", "number of terms / atoms K", "squared residual", False)]
    for ax, (name, xl, yl, logx) in zip(axes[:4], spec, strict=True):
        x, y = parts[name]
        neg = y < 0
        ax.plot(x, np.abs(y), "-", color="C0", lw=1)
        ax.plot(x[~neg], y[~neg], "o", color="C0", label=name)
        if neg.any():
            ax.plot(x[neg], -y[neg], "o", mfc="none", color="C0", label="(negative: |value|)")
        if name == "sparse residual" and "K-cluster residual" in parts:
            xk, yk = parts["K-cluster residual"]
            ok = yk > 0
            ax.plot(xk[ok], yk[ok], "s--", color="C1",
                    label="learned f minus its K heaviest clusters")
            ax.set_title("sparse residual: target Hermite tail")
        else:
            ax.set_title(name)
        ax.axhline(total, color="k", ls=":", lw=1, label="total test error")
        if logx:
            ax.set_xscale("log")
            if name != "optimisation":
                _log_ticks(ax, x)
        ax.set_yscale("log")
        ax.set_xlabel(xl)
        ax.set_ylabel(yl)
        ax.legend(fontsize=7)
    if budget_time is not None:
        axes[1].axvline(budget_time, color="C3", lw=0.8, label="budget time")
        axes[1].legend(fontsize=7)
    axh, axl = axes[4], axes[5]
    k = np.arange(len(target_coeffs))
    floor = 1e-4
    axh.bar(k - 0.2, np.maximum(np.abs(target_coeffs), floor), width=0.4, label="target f*")
    axh.bar(k + 0.2, np.maximum(np.abs(learned_coeffs), floor), width=0.4,
            label="learned f (along e1)")
    axh.set_yscale("log")
    axh.set_ylim(floor, None)
    axh.set_xticks(k)
    axh.set_xlabel("Hermite degree k")
    axh.set_ylabel(f"|c_k|, orthonormal basis (floor {floor:g})")
    axh.set_title("Hermite coefficients")
    axh.legend(fontsize=7)
    axl.plot(loss_times, loss, label="training loss")
    if plateau is not None:
        axl.axhline(0.5 * plateau, color="k", ls=":", lw=1, label="E(t_end) / 2 (test)")
    if budget_time is not None:
        axl.axvline(budget_time, color="C3", lw=0.8, label="budget time")
    axl.set_yscale("log")
    axl.set_xlabel("time t")
    axl.set_ylabel("(1/2) mean (f - y)^2")
    axl.set_title("population run")
    axl.legend(fontsize=7)
    return fig
