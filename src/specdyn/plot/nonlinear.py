"""Figures of nonlinear students: spectra over time and their fitted slopes (Fig. 4)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from matplotlib import cm, colors
from matplotlib.figure import Figure

from specdyn.plot._figure import new_figure

#: The size of every title of the figure (panels and, by the caller, the figure's).
TITLE_SIZE = 10


def plot_spectra_and_slopes(
    spectra: Mapping[str, tuple[np.ndarray, np.ndarray]],
    slopes: Mapping[str, tuple[np.ndarray, np.ndarray, np.ndarray]],
    *,
    alpha: float,
    beta: float,
    k_range: tuple[int, int],
    effective: Mapping[str, np.ndarray] | None = None,
    effective_label: str = r"linear theory, $\gamma_0 \to \gamma_0 / c_1$",
    ylabel: str = r"eigenvalue $\rho_k$ of $HH^\top/(MN)$",
    note: str = "",
) -> Figure:
    """One spectrum panel per run plus a panel of fitted slopes against time.

    Parameters
    ----------
    spectra
        ``name -> (times (n,), eigenvalues (n, D))``, eigenvalues decreasing per row.
    slopes
        ``name -> (times (n,), simulated slope (n,), linear-theory slope (n,))``;
        slopes are rank exponents ``a`` in ``rho_k ~ k^-a`` fitted over ``k_range``.
    alpha, beta
        Exponents of the data; guide lines of slope ``alpha`` (anchored on the
        initial spectrum) and ``alpha + beta`` (anchored on the final one).
    k_range
        ``(kmin, kmax)``, 1-based, shaded in the spectrum panels (the fit window of the
        slopes, named in their legends).
    effective
        Optional ``name -> slope (n,)`` of a second theory curve (dotted), e.g. the
        linear theory at an effective ``gamma0``; labelled ``effective_label``.
    note
        One line under the slope panel's title (e.g. the final slopes against
        ``alpha + beta``).

    Every title is :data:`TITLE_SIZE` points (the caller's ``suptitle`` too).
    """
    names = list(spectra)
    fig, axes = new_figure(len(names) + 1, 1, width=4.4, height=3.6)
    kmin, kmax = k_range
    t_pos = np.concatenate([t[t > 0] for t, _ in spectra.values()])
    norm = colors.LogNorm(vmin=float(t_pos.min()), vmax=float(t_pos.max()))
    cmap = cm.viridis
    for ax, name in zip(axes, names, strict=False):
        times, eigs = spectra[name]
        D = eigs.shape[1]
        k = np.arange(1, D + 1)
        for t, e in zip(times, eigs, strict=True):
            keep = e > 0
            c = cmap(norm(max(t, norm.vmin)))
            ax.loglog(k[keep], e[keep], color=c, lw=1.0 if t > 0 else 1.6,
                      ls="-" if t > 0 else "--",
                      label=None if t > 0 else "spectrum at t = 0 (dashed)")
        kk = np.array([kmin, kmax], dtype=float)
        e0, e1 = eigs[0, kmin - 1], eigs[-1, kmin - 1]
        ax.loglog(kk, e0 * 0.5 * (kk / kmin) ** -alpha, color="0.3", ls=":", lw=1.5,
                  label=rf"slope $\alpha$ = {alpha:g}")
        ax.loglog(kk, e1 * 2.0 * (kk / kmin) ** -(alpha + beta), color="crimson", ls=":",
                  lw=1.5, label=rf"slope $\alpha+\beta$ = {alpha + beta:g}")
        ax.axvspan(kmin, kmax, color="0.9", zorder=0,
                   label=f"fit window of (c): $k \\in [{kmin}, {kmax}]$")
        ax.set_xlabel("rank $k$")
        ax.set_ylabel(ylabel)
        ax.set_title(name, fontsize=TITLE_SIZE)
        fig.colorbar(cm.ScalarMappable(norm=norm, cmap=cmap), ax=ax, label="time $t$")
    ax = axes[-1]
    palette = ["tab:blue", "tab:orange", "tab:green", "tab:purple"]
    for i, (name, (times, sim, th)) in enumerate(slopes.items()):
        keep = times > 0
        col = palette[i % len(palette)]
        ax.semilogx(times[keep], sim[keep], "o-", ms=3, color=col, label=f"{name}: simulation")
        ax.semilogx(times[keep], th[keep], "--", color=col, label=f"{name}: linear theory")
        if effective is not None and name in effective:
            ax.semilogx(times[keep], effective[name][keep], ":", color=col, lw=2,
                        label=f"{name}: {effective_label}")
    ax.axhline(alpha, color="0.3", ls=":", lw=1)
    ax.axhline(alpha + beta, color="crimson", ls=":", lw=1)
    # guide names as right-hand ticks, outside the data: no curve strikes them through
    right = ax.secondary_yaxis("right")
    right.set_yticks([alpha, alpha + beta], labels=[r"$\alpha$", r"$\alpha+\beta$"])
    ax.set_xlabel("time $t$")
    ax.set_ylabel(f"fitted slope over $k \\in [{kmin}, {kmax}]$")
    # the note under the title: clear of every curve
    ax.set_title("slope of the spectrum" + (f"\n{note}" if note else ""), fontsize=TITLE_SIZE)
    # the spectrum panels' guides: one legend below them (inside, the spectra fill every
    # corner of (a) at some time), the first panel's handles (the others are the same)
    guide_h, guide_l = axes[0].get_legend_handles_labels()
    fig.legend(guide_h, guide_l, fontsize=8, loc="outside lower left", ncol=2,
               title="(" + "), (".join(chr(ord("a") + i) for i in range(len(names)))
                     + ") spectra", title_fontsize=8)
    # below the whole figure (the layout makes room): under the panel it hid the x label
    handles, labels = ax.get_legend_handles_labels()
    ncol = len(labels) // max(len(slopes), 1)
    if ncol * len(slopes) == len(labels) and ncol > 1:
        # one row per run: the legend fills column by column
        order = [r * ncol + c for c in range(ncol) for r in range(len(slopes))]
        handles, labels = [handles[i] for i in order], [labels[i] for i in order]
    else:
        ncol = min(len(labels), 3)
    fig.legend(handles, labels, fontsize=8, loc="outside lower right", ncol=ncol,
               title=f"({chr(ord('a') + len(names))}) slope of the spectrum", title_fontsize=8)
    return fig
