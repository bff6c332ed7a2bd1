"""The theory figures' runs: fig3, fig5 and fig6 write their table, figure and summary.

Each run computes the closed-form theory on its config's grid, writes the table its
claims read (:mod:`specdyn.experiments.theory_figures.claims`) and draws the figure.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn import io, theory
from specdyn.experiments.theory_figures.claims import fig3_claims_of
from specdyn.experiments.theory_figures.claims_first_layer import fig5_claims_of, fig6_claims_of
from specdyn.experiments.theory_figures.claims_independent import MODE_QUANTITIES
from specdyn.experiments.theory_figures.config import (
    Fig3Config,
    FirstLayerConfig,
    full_fig3,
    full_first_layer,
)
from specdyn.experiments.theory_figures.readings import (
    SINH_GRID,
    SINH_MODES,
    SINH_POINTS,
    panel_grid,
    plateau_span,
    sequence_modes,
    sinh_x,
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
from specdyn.settings import PowerLawSetting

#: The panels fig3 draws, by setting (the other settings are checked by claims, not drawn),
#: and the boundaries drawn on them.
FIG3_TITLES = {"deep-feature-learning": "(a) deep feature learning",
               "fig2-setting": "(b) the paper's Fig. 2 setting",
               "lazy-below-bound": "(c) lazy, below the Eq. (33) bound"}
FIG3_BOUNDARIES = ("k_learn", "k_cross", "k_layer")
#: The asymptotic exponents of Eq. (31) as the figure labels them.
_REGION_NAMES = {"I": "\\alpha", "II": "3\\alpha+\\beta", "IIIa": "\\alpha+\\beta",
                 "IIIb": "\\alpha+\\beta/2"}


def _grid_frame(panel: str, k: np.ndarray, t: np.ndarray, quantity: str,
                values: np.ndarray) -> pd.DataFrame:
    K, T = np.meshgrid(k, t, indexing="ij")
    return pd.DataFrame({"panel": panel, "k": K.ravel(), "t": T.ravel(), "quantity": quantity,
                         "value": np.asarray(values, dtype=np.float64).ravel()})


def _curve_frame(panel: str, t: np.ndarray, quantity: str, values: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({"panel": panel, "k": values, "t": t, "quantity": quantity,
                         "value": values})


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


def sinh_frame(panel: str, s: PowerLawSetting) -> pd.DataFrame:
    """The exact learned part ``rho_k(t) - rho_k(0)`` (closed form, App. D) of the modes
    :data:`SINH_MODES`, on times where Eq. (21)'s argument runs over :data:`SINH_GRID`."""
    frames = []
    for k in SINH_MODES:
        t = np.geomspace(*SINH_GRID, SINH_POINTS) / float(sinh_x(s, np.array(k), np.array(1.0)))
        kk = np.full_like(t, k)
        frames.append(pd.DataFrame({"panel": panel, "k": kk, "t": t, "quantity": "rho_learned",
                                    "value": theory.rho(s, kk, t) - theory.rho(s, kk, 0.0 * t)}))
    return pd.concat(frames, ignore_index=True)


def mode_frame(panel: str, s: PowerLawSetting, modes: list[float], t: np.ndarray
               ) -> pd.DataFrame:
    """``rho``, ``eta`` and ``zeta`` (quantities :data:`MODE_QUANTITIES`) of the fixed
    ``modes`` at ``t = 0``, the times ``t`` and ``t = inf``."""
    tt = np.concatenate([[0.0], t, [np.inf]])
    fns = dict(zip(MODE_QUANTITIES, (theory.rho, theory.eta, theory.zeta), strict=True))
    return pd.concat([pd.DataFrame({"panel": panel, "k": km, "t": tt, "quantity": q,
                                    "value": fn(s, np.full_like(tt, km), tt)})
                      for km in modes for q, fn in fns.items()], ignore_index=True)


def fig3_table(cfg: Fig3Config) -> pd.DataFrame:
    """fig3's table: per setting the ``alpha_eff`` grid and ``alpha_eff(k, t = inf)``; per
    drawn panel the boundaries ``k_learn(t)``, ``k_cross(t)``, ``k_layer(t)``; for the deep
    panel the exact learned part on Eq. (21)'s window and the Gram diagonals of the Eq. (32)
    fixed modes over time."""
    frames = []
    for name, s in cfg.settings().items():
        k, t = cfg.panel_axes(name)
        frames.append(_grid_frame(name, k, t, "alpha_eff",
                                  theory.alpha_eff(s, k[:, None], t[None, :])))
        frames.append(pd.DataFrame({"panel": name, "k": k, "t": np.inf,
                                    "quantity": "alpha_eff_t_inf",
                                    "value": theory.alpha_eff(s, k, np.inf)}))
        if name in FIG3_TITLES:
            bounds = {"k_learn": theory.k_learn(s, t), "k_cross": theory.k_cross(s, t),
                      "k_layer": theory.k_layer(s, t)}
            frames += [_curve_frame(name, t, b, kb) for b, kb in bounds.items()]
        if name == "deep-feature-learning":
            frames.append(sinh_frame(name, s))
            modes = [m for m in sequence_modes(s, k, cfg.plateau_tol).values() if np.isfinite(m)]
            frames.append(mode_frame(name, s, modes, t))
    return pd.concat(frames, ignore_index=True)


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


def fig5_table(cfg: FirstLayerConfig) -> pd.DataFrame:
    """fig5's table: ``rho_first_layer`` (Eq. 84) on the config's ``(k, t)`` grid and at
    ``t = 0``."""
    k, t_grid = cfg.axes()
    t = np.concatenate([[0.0], t_grid])
    rho = theory.rho_first_layer(cfg.setting(), k[None, :], t[:, None])
    K, T = np.meshgrid(k, t, indexing="xy")
    return pd.DataFrame({"k": K.ravel(), "t": T.ravel(), "quantity": "rho_first_layer",
                         "value": rho.ravel()})


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


def _fig6_parts(cfg: FirstLayerConfig) -> tuple[np.ndarray, ...]:
    s = cfg.setting()
    k, t = cfg.axes()
    labels = theory.region_first_layer(s, k[:, None], t[None, :])
    aeff = theory.alpha_eff_first_layer(s, k[:, None], t[None, :])
    return k, t, labels, aeff


def _fig6_bounds(cfg: FirstLayerConfig, t: np.ndarray) -> dict[str, np.ndarray]:
    s = cfg.setting()
    return {"k_learn": theory.k_learn_first_layer(s, t), "k1": np.full_like(t, theory.k1(s)),
            "k2": theory.k2(s, t)}


def fig6_table(cfg: FirstLayerConfig) -> pd.DataFrame:
    """fig6's table: ``alpha_eff_first_layer`` (Eq. 98) on the config's ``(k, t)`` grid with
    its ``region`` label (Eq. 113), and the boundaries ``k_learn(t)``, ``k1``, ``k2(t)``."""
    k, t, labels, aeff = _fig6_parts(cfg)
    frames = [_grid_frame("first-layer", k, t, "alpha_eff_first_layer", aeff)]
    frames += [_curve_frame("first-layer", t, b, kb) for b, kb in _fig6_bounds(cfg, t).items()]
    df = pd.concat(frames, ignore_index=True)
    df["region"] = pd.Series(dtype="string")
    df.loc[: labels.size - 1, "region"] = labels.ravel()
    return df


@register("fig6", "the three first-layer regions with k_learn, k1, k2 (Fig. 6)",
          FirstLayerConfig, full=full_first_layer, claims=fig6_claims_of,
          wrong_models=FIG6_WRONG, wrong_na=WRONG_NA_FIRST_LAYER,
          measured={"fig6.parquet": Measured(("value",), by=("quantity",))})
def run_fig6(cfg: FirstLayerConfig, out_dir: Path) -> ExperimentResult:
    """Region labels of Eq. (113) over the (k, t) plane, with the exact alpha_eff beside them."""
    s = cfg.setting()
    k, t, labels, aeff = _fig6_parts(cfg)
    exps = {"I": s.alpha, "II": 3 * s.alpha + s.beta, "III": s.alpha + s.beta}
    fig = tplot.region_map(k, t, labels, ["I", "II", "III"], exps, _fig6_bounds(cfg, t),
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
