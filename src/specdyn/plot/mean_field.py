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
                              growth: tuple[float, float, float] | None = None,
                              gap_vs_time: np.ndarray | None = None,
                              levels: tuple[tuple[float, float], tuple[float, float]]
                              | None = None) -> Figure:
    """Coupled distance against ``N`` (log axes), ``N x distance`` and ``N x function gap``
    against time.

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
        measured relative growth of ``N x function gap`` over it (shaded, in the title).
    gap_vs_time
        Optional ``(K, C)`` seed-mean ``N * function gap``: a third panel, with ``growth``.
    levels
        Optional ``((measured, predicted) first-step distance, (measured, predicted) function
        gap at t = 0)``, the level claims' numbers, named in the panels' titles.
    """
    panels = 2 if gap_vs_time is None else 3
    fig, axes = new_figure(panels, 1, width=4.8, height=3.8)
    ax, axt = axes[0], axes[1]
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
    title = "N x coupled distance (an upper bound)"
    if levels is not None:
        (m1, p1), _ = levels
        title += f"\nfirst step: {m1 / p1:.2f} x its exact level"
    axt.set_title(title, fontsize=10)
    axt.legend(fontsize=8)
    if gap_vs_time is not None:
        axg = axes[2]
        for i, n in enumerate(N):
            axg.plot(times, gap_vs_time[i], color=f"C{i % 10}", label=f"N = {n}")
        if growth is not None:
            t_mid, t_end, g = growth
            axg.axvspan(t_mid, t_end, color="0.85", zorder=0,
                        label="uniform in time: flat here")
        title = "N x function gap (uniform-in-time claim)"
        if growth is not None:
            title += f"\nt = {growth[0]:g} -> {growth[1]:g}: {growth[2]:+.0%}"
        if levels is not None:
            (_, _), (m0, p0) = levels
            title += f"; t = 0: {m0 / p0:.2f} x exact"
        axg.set_title(title, fontsize=10)
        axg.set_xlabel("time t = step x dt")
        axg.set_ylabel(r"N x mean $(f_N - f_{ref})^2$ (mean over seeds)")
        lo, hi = axg.get_ylim()
        axg.set_ylim(0.0, hi + 0.45 * (hi - lo))  # room above the curves for the legend
        axg.legend(fontsize=7, ncol=2, loc="upper right")
    return fig


def plot_sparse_atoms(initial: np.ndarray, final: np.ndarray, labels: np.ndarray,
                      teacher: np.ndarray, times: np.ndarray, top_mass: np.ndarray,
                      loss_times: np.ndarray, loss: np.ndarray, coords: tuple[int, int] = (0, 1),
                      *, mass: Mapping[str, np.ndarray] | None = None,
                      s_star: Mapping[str, int] | None = None, mass_fraction: float = 0.9,
                      off_share: float | None = None,
                      coef: Mapping[str, tuple[np.ndarray, ...]] | None = None,
                      coef_tol: float = 0.1, orbit: tuple[float, float] | None = None,
                      symmetry_tol: float = 1e-10, off_orbit_min: float = 1e-6,
                      lasso_directions: np.ndarray | None = None,
                      flow: tuple[np.ndarray, np.ndarray, float] | None = None) -> Figure:
    """Particles at the start and the end, coloured by cluster, against the teacher's atoms;
    with ``mass`` given, a second row draws the S*, coefficient and symmetry claims.
    ``flow`` ``(times, mass, factor)``: the population mean-field flow's |a|-mass in the two
    heaviest clusters over the transient, drawn with the clock claim's band (its unclaimed
    mass within ``factor``).

    Particles are ``(N, d+1)`` rows ``[a, w]``; the scatter shows ``w`` in the
    plane of input coordinates ``coords`` with marker area proportional to
    ``|a|``. ``top_mass`` is ``(C, k)``: the |a|-mass fraction in the ``j+1``
    heaviest clusters at each checkpoint time.

    The claim row (keyword arguments, one entry per run label): ``mass`` the final
    |a|-mass in the K heaviest clusters (K = 1, 2, ...) against ``mass_fraction`` and
    the bound ``s_star`` (``off_share``: the switched-off atom's share); ``coef`` per
    teacher atom ``(teacher c*, population lasso, finite-M lasso, measured)`` effective
    coefficients ``a |w|``, the finite-M lasso drawn with a ``+-coef_tol`` band (a predicted
    0 is a switched-off atom, drawn without band); ``orbit`` the relative change of ``f`` along the
    realisation symmetry and off it, against ``symmetry_tol`` and ``off_orbit_min``;
    ``lasso_directions`` ``(K, D)`` the zero-temperature lasso's unit atom directions (tilted
    off the teacher's), drawn as rays in the end-of-training panel.
    """
    if mass is None:
        fig, (ax0, ax1, ax2) = new_figure(3, 1, width=4.2, height=4.0)
    else:
        fig, axes = new_figure(3, 2, width=4.2, height=4.0)
        ax0, ax1, ax2 = axes[:3]
        _atoms_mass_panel(axes[3], mass, s_star or {}, mass_fraction, off_share)
        _atoms_coef_panel(axes[4], coef or {}, coef_tol)
        _atoms_orbit_panel(axes[5], orbit, symmetry_tol, off_orbit_min)
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
        if p is final and lasso_directions is not None:
            for k, u in enumerate(lasso_directions):
                ax.plot([0, lim * u[i]], [0, lim * u[j]], "-", color="C2", lw=1.2, zorder=0,
                        label="lasso atoms (tilted)" if k == 0 else None)
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
    if flow is not None:
        t_f, m_f, factor = flow
        u = 1.0 - np.asarray(m_f)
        ax2.fill_between(t_f, 1.0 - u * factor, 1.0 - u / factor, color="C1", alpha=0.2, lw=0,
                         label=f"clock claim: unclaimed mass within x{factor:g}")
        ax2.plot(t_f, m_f, "x--", color="C1", lw=1, label="mean-field flow, 2 heaviest")
    ax2.set_ylim(0, 1.02)
    ax2.set_xlabel("time t")
    ax2.set_ylabel("|a|-mass fraction")
    ax2.set_title("concentration on atoms")
    axl = ax2.twinx()
    axl.plot(loss_times, loss, color="0.3", lw=0.8, ls="--")
    axl.set_yscale("log")
    axl.set_ylabel("training loss (dashed)")
    ax2.legend(fontsize=6.5, loc="lower right")
    return fig


def _atoms_mass_panel(ax: Axes, mass: Mapping[str, np.ndarray], s_star: Mapping[str, int],
                      fraction: float, off_share: float | None) -> None:
    for i, (label, m) in enumerate(mass.items()):
        k = np.arange(1, len(m) + 1)[:8]
        ax.plot(k, m[:8], "o-", color=f"C{i}", label=label)
        if label in s_star:
            ax.axvline(s_star[label] + 0.04 * i, color=f"C{i}", ls="--", lw=1,
                       label=f"S* = {s_star[label]} ({label})")
    ax.axhline(fraction, color="k", ls=":", lw=1, label=f"{fraction:.0%} of the mass")
    if off_share is not None:
        ax.plot([], [], " ", label=f"switched-off atom's share: {off_share:.3f}")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("K heaviest clusters")
    ax.set_ylabel("final |a|-mass fraction")
    ax.set_title("S* claim: K reaching the dotted line <= S*", fontsize=10)
    ax.legend(fontsize=7, loc="lower right")


def _atoms_coef_panel(ax: Axes, coef: Mapping[str, tuple[np.ndarray, ...]],
                      tol: float) -> None:
    x0, ticks, names = 0, [], []
    for i, (label, (c_star, c_pop, pred, meas)) in enumerate(coef.items()):
        x = x0 + np.arange(len(pred))
        for xi, p in zip(x, pred, strict=True):
            if p == 0:  # switched off: the claim is its share, not a band
                ax.plot(xi, 0.0, "kx", ms=8)
                ax.annotate("lasso: off", (xi, 0.0), textcoords="offset points",
                            xytext=(0, -14), ha="center", fontsize=7)
            else:
                ax.fill_between([xi - 0.3, xi + 0.3], p - tol, p + tol, color="0.85", lw=0)
                ax.plot([xi - 0.3, xi + 0.3], [p, p], "k-", lw=1.5)
        ax.plot(x, c_star, "D", mfc="none", color="0.4", ms=6)
        on = np.asarray(c_pop) != 0
        ax.plot(x[on], np.asarray(c_pop)[on], "_", color="C2", ms=16, mew=2)
        ax.plot(x, meas, "o", color=f"C{i}", ms=7, label=f"measured: {label}")
        ticks += list(x)
        names += [f"atom {j + 1}" for j in range(len(pred))]
        x0 += len(pred) + 1
    ax.fill_between([], [], [], color="0.85", label=f"finite-M lasso +- {tol:g}")
    ax.plot([], [], "_", color="C2", ms=16, mew=2, label="population lasso")
    ax.plot([], [], "D", mfc="none", color="0.4", label="teacher c*")
    ax.axhline(0.0, color="0.6", lw=0.5)
    ax.set_xlim(-0.7, x0 - 1.2)  # room for the "lasso: off" label at the last atom
    ax.set_xticks(ticks)
    ax.set_xticklabels(names, fontsize=8)
    ax.set_ylabel("effective coefficient a|w| (cluster sum / N)")
    ax.set_title("a|w| per atom: the lasso with free directions", fontsize=10)
    ax.legend(fontsize=7, loc="center left")


def _atoms_orbit_panel(ax: Axes, orbit: tuple[float, float] | None, symmetry_tol: float,
                       off_orbit_min: float) -> None:
    ax.set_title("identifiability: f along the symmetry", fontsize=10)
    if orbit is None:
        ax.text(0.5, 0.5, "no realisation symmetry\nfor this activation", ha="center",
                va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return
    floor = 1e-18  # an exactly unchanged f would sit at 0 on a log axis
    on, off = (max(float(v), floor) for v in orbit)
    ax.bar([0, 1], [on, off], color=["C0", "C3"], width=0.6)
    ax.axhline(symmetry_tol, color="C0", ls="--", lw=1,
               label=f"claim: along the symmetry <= {symmetry_tol:g}")
    ax.axhline(off_orbit_min, color="C3", ls=":", lw=1.2,
               label=f"claim: a alone >= {off_orbit_min:g}")
    ax.set_yscale("log")
    ax.set_ylim(floor, 10.0)
    ax.set_xticks([0, 1])
    ax.set_xticklabels(["(a, w) moved\nalong the symmetry", "a alone moved\n(off the orbit)"],
                       fontsize=8)
    ax.set_ylabel(f"relative rms change of f (floor {floor:g})")
    ax.legend(fontsize=7, loc="upper left")


def _log_ticks(ax: Axes, values: np.ndarray) -> None:
    ticks = [float(x) for x in values]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FixedFormatter([f"{x:g}" for x in ticks]))
    ax.xaxis.set_minor_locator(NullLocator())


def _init_scale_panel(ax: Axes, curves: Mapping[str, tuple[np.ndarray, np.ndarray]],
                      claim: tuple[tuple[float, float], tuple[float, float]] | None) -> None:
    for i, (label, (x, y)) in enumerate(curves.items()):
        ax.plot(x, y, "o-", color=f"C{i + 2}", label=label)
    x, y = list(curves.values())[-1]
    if claim is not None and y.size:
        (spread, bound), (ratio, ratio_bound) = claim
        mid, half = 0.5 * (y.max() + y.min()), 0.5 * bound * y.mean()
        ax.fill_between([x.min(), x.max()], mid - half, mid + half, color="C3", alpha=0.15,
                        lw=0, label=f"claim band: spread <= {bound:g} of the mean")
        ax.plot([], [], " ", label=f"t_end spread {spread:.3f} (<= {bound:g})")
        ax.plot([], [], " ", label=f"/ t_early spread: {ratio:.3f} (<= {ratio_bound:g})")
    ax.set_xscale("log")
    _log_ticks(ax, x)
    ax.set_xlabel("init scale s of (a_0, w_0)")
    ax.set_ylabel("test error E")
    ax.set_title("no initialization-only residual", fontsize=10)
    lo, hi = ax.get_ylim()
    ax.set_ylim(lo, hi + 0.6 * (hi - lo))  # room above the points for the legend's 5 rows
    ax.legend(fontsize=7, loc="upper right")


def _temperature_panel(ax: Axes, runs: list[str], values: np.ndarray, tau: float,
                       factor: float) -> None:
    x = np.arange(len(runs))
    ax.bar(x, values / tau, color="C4", width=0.6, label="measured (t_end)")
    ax.axhspan(1 / factor, factor, color="0.85", zorder=0, label=f"claim: mean within x{factor:g}")
    ax.axhline(1.0, color="k", ls=":", lw=1, label="tau (equipartition)")
    ax.axhline(float(np.mean(values)) / tau, color="C3", lw=1.2,
               label=f"mean: {np.mean(values) / tau:.2f} tau")
    ax.set_xticks(x)
    ax.set_xticklabels([r.replace("init scale ", "init ") for r in runs], fontsize=7)
    ax.set_ylabel("configurational temperature / tau")
    ax.set_ylim(0.0, max(2.0, 1.15 * float(np.max(values)) / tau))
    ax.set_title("Gibbs measure: theta . grad V / (D + 1) = tau", fontsize=10)
    ax.legend(fontsize=7, loc="upper right")


def plot_error_budget(parts: Mapping[str, tuple[np.ndarray, np.ndarray]], total: float,
                      target_coeffs: np.ndarray, learned_coeffs: np.ndarray,
                      loss_times: np.ndarray, loss: np.ndarray, *, plateau: float | None = None,
                      budget_time: float | None = None,
                      init_scale: Mapping[str, tuple[np.ndarray, np.ndarray]] | None = None,
                      init_claim: tuple[tuple[float, float], tuple[float, float]] | None = None,
                      particle_level: tuple[tuple[np.ndarray, np.ndarray], float] | None = None,
                      clock: tuple[tuple[float, float, float], tuple[float, float]] | None = None,
                      temperature: tuple[tuple[list[str], np.ndarray], float, float]
                      | None = None) -> Figure:
    """The four parts of the error against their own knob, plus Hermite coefficients.

    ``parts`` maps ``"statistical"`` (against n), ``"optimisation"`` (against t, from
    ``t = 0``), ``"particle"`` and ``"particle at t = 0"`` (against N), ``"sparse
    residual"`` and ``"K-cluster residual"`` (against K) to ``(x, value)`` arrays; values
    are drawn as ``|value|`` on log axes, negative ones as open markers. ``total`` is the
    test error of the population run at the budget's time (dotted line in each panel);
    ``plateau`` the test error at the end of the long run. ``init_scale`` (label -> (init
    scales, test error), ``t_early`` first, ``t_end`` last) adds a panel for the "no
    initialization-only residual" claim: ``init_claim`` is ``((spread, bound), (ratio,
    bound))`` of the ``t_end`` spread ``(max - min) / mean`` and of its ratio to the spread
    at ``t_early``; the band drawn around the ``t_end`` points is as tall as the spread
    bound allows. The level claims: ``particle_level`` (``((N, exact gap at t = 0),
    factor)``), ``clock`` (``((t_c, measured rate, predicted rate), (lo, hi))``: the
    initial rate's line from ``E(0)``, the claim's band of their ratio), ``temperature``
    (``((run labels, configurational temperatures), tau, factor)``, a panel).
    """
    if init_scale is None:
        fig, axes = new_figure(3, 2, width=4.2, height=3.4)
    else:
        fig, axes = new_figure(4, 2, width=4.2, height=3.4)
        _init_scale_panel(axes[6], init_scale, init_claim)
        if temperature is None:
            axes[7].remove()
        else:
            (runs, values), tau, factor = temperature
            _temperature_panel(axes[7], runs, values, tau, factor)
    spec = [("statistical", "training-set size n", "E(n) - E(population), seed mean", True),
            ("optimisation", "time t", "E(t) - E(t_end)", True),
            ("particle", "number of particles N", "mean (f_N - f_ref)^2", True),
            ("sparse residual", "number of terms / atoms K", "squared residual", False)]
    for ax, (name, xl, yl, logx) in zip(axes[:4], spec, strict=True):
        x, y = parts[name]
        if logx:  # t = 0 has no place on a log axis (the clock's line starts from it)
            x, y = x[x > 0], y[x > 0]
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
            ax.set_title("sparse residual (drawn, not claimed:\nat tau > 0 the measure "
                         "has a density)", fontsize=9)
        else:
            ax.set_title(name)
        if name == "particle" and particle_level is not None:
            (n0, pred0), factor = particle_level
            x0, y0 = parts["particle at t = 0"]
            ax.plot(x0, y0, "s", mfc="none", color="C2", label="at t = 0")
            ax.plot(n0, pred0, "--", color="C2", lw=1, label=f"exact at t = 0 (claim: x{factor:g})")
        if name == "optimisation" and clock is not None:
            (t_c, rate, pred), (lo, hi) = clock
            x_all, y_all = parts[name]
            if np.isfinite(pred) and (x_all == 0).any():
                e0 = float(y_all[x_all == 0][0])
                tt = np.linspace(x[0], min(4 * t_c, x[-1]), 30)
                ax.plot(tt, e0 + pred * tt, "--", color="C3", lw=1,
                        label=f"initial rate (theory); measured to t = {t_c:g}: "
                              f"{rate / pred:.2f} x (claim: {lo:g}-{hi:g} x)")
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
