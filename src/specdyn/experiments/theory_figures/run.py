"""The theory figures' runs: fig3, fig5 and fig6 write their table, figure and summary.

Each run computes the closed-form theory on its config's grid, writes the table its
claims read (:mod:`specdyn.experiments.theory_figures.claims`) and draws the figure.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from specdyn import io, theory
from specdyn.experiments.theory_figures.claims import fig3_claims_of
from specdyn.experiments.theory_figures.claims_first_layer import fig5_claims_of, fig6_claims_of
from specdyn.experiments.theory_figures.config import (
    Fig3Config,
    FirstLayerConfig,
    full_fig3,
    full_first_layer,
)
from specdyn.experiments.theory_figures.readings import panel_grid, plateau_span, sequence_modes
from specdyn.experiments.theory_figures.tables import (
    FIG3_TITLES,
    fig3_table,
    fig5_table,
    fig6_bounds,
    fig6_parts,
    fig6_table,
)
from specdyn.experiments.theory_figures.wrong import (
    FIG3_WRONG,
    FIG5_WRONG,
    FIG6_WRONG,
    WRONG_NA,
    WRONG_NA_FIRST_LAYER,
)
from specdyn.plot import save_figure
from specdyn.plot import theory as tplot
from specdyn.runs.registry import ExperimentResult, Measured, register

FIG3_BOUNDARIES = ("k_learn", "k_cross", "k_layer")
#: The asymptotic exponents of Eq. (31) as the figure labels them.
_REGION_NAMES = {"I": "\\alpha", "II": "3\\alpha+\\beta", "IIIa": "\\alpha+\\beta",
                 "IIIb": "\\alpha+\\beta/2"}


def _label_cell(aeff: np.ndarray, labels: np.ndarray, region: str, value: float,
                tol: float) -> tuple[int, int] | None:
    """Grid cell deepest inside the part of ``region`` within ``tol`` of ``value``."""
    from scipy.ndimage import distance_transform_edt

    inside = labels == region
    on = inside & (np.abs(aeff - value) <= tol)
    mask = on if on.any() else inside
    if not mask.any():
        return None
    depth = distance_transform_edt(np.pad(mask, 1))[1:-1, 1:-1]
    i, j = np.unravel_index(int(np.argmax(depth)), mask.shape)
    return int(i), int(j)


@register("fig3", "alpha_eff over the (k, t) plane with k_learn, k_cross, k_layer (Fig. 3): "
          "deep feature learning, the Fig. 2 setting, lazy", Fig3Config, full=full_fig3,
          claims=fig3_claims_of, wrong_models=FIG3_WRONG, wrong_na=WRONG_NA,
          measured={"fig3.parquet": Measured(("value",), by=("panel", "quantity"))})
def run_fig3(cfg: Fig3Config, out_dir: Path) -> ExperimentResult:
    """Exponent maps of three settings, the four plateaus labelled, and slices at fixed times."""
    panels: list[dict[str, Any]] = []
    summary: dict[str, Any] = {}
    settings = cfg.settings()
    df = fig3_table(cfg)
    for name, s in settings.items():
        k, t, aeff = panel_grid(df, name)
        rep = theory.regime(s)
        summary[name] = {"regime": rep.label, "alpha_eff_min": float(aeff.min()),
                         "alpha_eff_max": float(aeff.max()), "k_u": rep.k_u, "k_l": rep.k_l}
        if name not in FIG3_TITLES:
            continue  # a setting checked by a claim, not drawn
        labels = theory.region(s, k[:, None], t[None, :])
        curves = df[(df.panel == name) & df.quantity.isin(FIG3_BOUNDARIES)]
        bounds = {b: curves[curves.quantity == b].sort_values("t").value.to_numpy()
                  for b in FIG3_BOUNDARIES}
        marks = []
        if name == "deep-feature-learning":
            for reg, km in sequence_modes(s, k, cfg.plateau_tol).items():
                if np.isfinite(km):
                    bounds[f"Eq. (32) mode, to {reg}"] = np.full_like(t, km)
            for reg, val in theory.asymptotic_exponents(s).items():
                summary[f"plateau_{reg}"] = plateau_span(k, aeff, labels, reg, val,
                                                         cfg.plateau_tol)
                cell = _label_cell(aeff, labels, reg, val, cfg.plateau_tol)
                if cell is not None:
                    marks.append((float(t[cell[1]]), float(k[cell[0]]),
                                  f"{reg}: ${_REGION_NAMES[reg]}$ = {val:g}"))
        dev = float(np.abs(aeff - s.alpha).max())
        extra = (f"\nmax$|\\alpha_{{\\rm eff}}-\\alpha|$ = {dev:.2f} (Eq. 34: $\\approx\\alpha$)"
                 if name == "lazy-below-bound" else "")
        panels.append({"k": k, "t": t, "alpha_eff": aeff, "boundaries": bounds, "marks": marks,
                       "title": f"{FIG3_TITLES[name]} (regime: {rep.label})\n"
                                f"$\\sigma_w$={s.sigma_w:g}, $\\sigma_a$={s.sigma_a:g}, "
                                f"$\\gamma_0\\theta_0/S$={s.gamma0 * s.theta0 / s.S:.3g}{extra}"})
    s_deep = settings["deep-feature-learning"]
    k, t = cfg.panel_axes("deep-feature-learning")
    ts = np.logspace(np.log10(t[0]) + 2, np.log10(t[-1]) - 1, cfg.n_slices)
    slices = {"k": k, "t": ts, "alpha_eff": theory.alpha_eff(s_deep, k[None, :], ts[:, None]),
              "exponents": {f"{reg}: ${_REGION_NAMES[reg]}$ = {val:g}": val
                            for reg, val in theory.asymptotic_exponents(s_deep).items()},
              "title": "(d) panel (a) at fixed times"}
    fig = tplot.fig3(panels, slices)
    figures = save_figure(fig, out_dir / "fig3")
    table = io.write_table(df, out_dir / "fig3.parquet")
    summary["settings"] = {n: s.to_dict() for n, s in settings.items()}
    return ExperimentResult("fig3", out_dir, figures, [table], summary)


@register("fig5", "rho_k(t) with the second layer frozen, coloured by time (Fig. 5)",
          FirstLayerConfig, full=full_first_layer, claims=fig5_claims_of,
          wrong_models=FIG5_WRONG, wrong_na=WRONG_NA_FIRST_LAYER,
          measured={"fig5.parquet": Measured(("value",), by=("quantity",))})
def run_fig5(cfg: FirstLayerConfig, out_dir: Path) -> ExperimentResult:
    """First-layer-only spectra (Eq. 84) on the grid's times, some of them drawn."""
    s = cfg.setting()
    df = fig5_table(cfg)
    wide = df.pivot(index="t", columns="k", values="value").sort_index()
    k, t, rho = (wide.columns.to_numpy(dtype=float), wide.index.to_numpy(dtype=float),
                 wide.to_numpy(dtype=float))
    # n_curves of the table's times drawn: t = 0 and log-spaced picks
    pick = np.unique(np.r_[0, np.round(np.geomspace(1, t.size - 1, cfg.n_curves - 1))
                           .astype(int)])
    fig = tplot.spectra_over_time(
        k, t[pick], rho[pick],
        title=f"second layer frozen: $\\rho_k(t)$, $\\sigma_w$ = {s.sigma_w:g}, "
              f"$\\gamma_0\\theta_0/S$ = {cfg.gamma0_ratio:g}",
        guides={"$-\\alpha$": s.alpha, "$-(\\alpha+\\beta)$": s.alpha + s.beta,
                "$-(3\\alpha+\\beta)$": 3 * s.alpha + s.beta})
    figures = save_figure(fig, out_dir / "fig5")
    table = io.write_table(df, out_dir / "fig5.parquet")
    late = theory.alpha_eff_first_layer(s, np.array([k[0], k[-1]]), t[-1])
    return ExperimentResult("fig5", out_dir, figures, [table],
                            {"setting": s.to_dict(), "k1": theory.k1(s),
                             "t_star": theory.t_star(s),
                             "late_local_exponent_k_first_last": late.tolist()})


@register("fig6", "the three first-layer regions with k_learn, k1, k2 (Fig. 6)",
          FirstLayerConfig, full=full_first_layer, claims=fig6_claims_of,
          wrong_models=FIG6_WRONG, wrong_na=WRONG_NA_FIRST_LAYER,
          measured={"fig6.parquet": Measured(("value",), by=("quantity",))})
def run_fig6(cfg: FirstLayerConfig, out_dir: Path) -> ExperimentResult:
    """Region labels of Eq. (113) over the (k, t) plane, with the exact alpha_eff beside them."""
    s = cfg.setting()
    k, t, labels, aeff = fig6_parts(cfg)
    exps = {"I": s.alpha, "II": 3 * s.alpha + s.beta, "III": s.alpha + s.beta}
    fig = tplot.region_map(k, t, labels, ["I", "II", "III"], exps, fig6_bounds(cfg, t),
                           title="second layer frozen: regions of Eq. (113), "
                                 f"$\\sigma_w$ = {s.sigma_w:g}")
    figures = save_figure(fig, out_dir / "fig6")
    table = io.write_table(fig6_table(cfg), out_dir / "fig6.parquet")
    # how well the asymptotic labels predict the exact exponent, per region
    agree = {name: float(np.median(np.abs(aeff[labels == name] - exps[name])))
             for name in exps if (labels == name).any()}
    peak = float(aeff[labels == "II"].max()) if (labels == "II").any() else float("nan")
    return ExperimentResult("fig6", out_dir, figures, [table],
                            {"setting": s.to_dict(), "median_abs_dev_from_asymptote": agree,
                             "region_II_max_alpha_eff": peak,
                             "k1": theory.k1(s), "t_star": theory.t_star(s)})
