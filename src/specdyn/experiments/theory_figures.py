"""Theory figures of the core paper: Fig. 3 (exponent map), Fig. 5 and Fig. 6 (first layer only)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn import _validate as v
from specdyn import io, theory
from specdyn.experiments.claims import Claim, within
from specdyn.experiments.registry import ExperimentResult, register
from specdyn.plot import save_figure
from specdyn.plot import theory as tplot
from specdyn.settings import PowerLawSetting


@dataclass(frozen=True)
class TheoryGrid:
    """Shared fields of the theory figures: exponents, grid extent and resolution."""

    alpha: float = 1.0
    beta: float = 1.0
    sigma_a: float = 1.0
    k_max: float = 1e4
    t_min: float = 1e-2
    t_max: float = 1e7
    n_k: int = 240
    n_t: int = 240

    def __post_init__(self) -> None:
        v.positive("alpha", self.alpha)
        v.positive("beta", self.beta)
        v.positive("sigma_a", self.sigma_a)
        v.in_range("k_max", self.k_max, 1.0, 1e300, lo_open=True)
        v.positive("t_min", self.t_min)
        v.in_range("t_max", self.t_max, self.t_min, np.inf, lo_open=True)
        v.positive_int("n_k", self.n_k, minimum=2)
        v.positive_int("n_t", self.n_t, minimum=2)

    def axes(self) -> tuple[np.ndarray, np.ndarray]:
        """Log-spaced ``k`` and ``t`` axes."""
        k = np.logspace(0.0, np.log10(self.k_max), self.n_k)
        t = np.logspace(np.log10(self.t_min), np.log10(self.t_max), self.n_t)
        return k, t


@dataclass(frozen=True)
class Fig3Config(TheoryGrid):
    """Fig. 3: (a) deep feature learning, (b) the paper's Fig. 2 setting, (c) lazy.

    Panel (a) is the regime of the paper's Fig. 3(a, b), ``sigma_a >> sigma_w``
    and ``gamma0 >> S/theta0`` (default ``sigma_w = 1e-3``,
    ``gamma0 theta0/S = 1e3``), where all four asymptotic exponents of Eq. (31)
    coexist; it needs modes up to ``deep_k_max`` and times up to
    ``deep_t_max`` because Region IIIa lies between ``k_l = (gamma0
    theta0/S)^(2/beta)`` and ``k_u``. Panels (b) and (c) use the grid fields of
    :class:`TheoryGrid`. ``plateau_tol`` is the tolerance of the plateau claims.
    """

    deep_sigma_w: float = 1e-3
    deep_gamma0_ratio: float = 1e3
    deep_k_max: float = 1e10
    deep_t_max: float = 1e17
    sigma_w_feature: float = 0.1
    gamma0_ratio_feature: float = 2.0
    sigma_w_lazy: float = 1.0
    gamma0_ratio_lazy: float = 0.5
    n_slices: int = 7
    plateau_tol: float = 0.05

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("deep_sigma_w", "deep_gamma0_ratio", "sigma_w_feature",
                     "gamma0_ratio_feature", "sigma_w_lazy", "gamma0_ratio_lazy"):
            v.positive(name, getattr(self, name))
        v.in_range("deep_k_max", self.deep_k_max, 1.0, 1e300, lo_open=True)
        v.in_range("deep_t_max", self.deep_t_max, self.t_min, np.inf, lo_open=True)
        v.positive_int("n_slices", self.n_slices)
        v.in_range("plateau_tol", self.plateau_tol, 0.0, 1.0, lo_open=True)

    def settings(self) -> dict[str, PowerLawSetting]:
        """The three settings of the figure, keyed by panel name."""
        def paper(sigma_w: float, ratio: float) -> PowerLawSetting:
            return PowerLawSetting.paper(sigma_w, ratio, alpha=self.alpha, beta=self.beta,
                                         sigma_a=self.sigma_a)

        return {
            "deep-feature-learning": paper(self.deep_sigma_w, self.deep_gamma0_ratio),
            "fig2-setting": paper(self.sigma_w_feature, self.gamma0_ratio_feature),
            "lazy": paper(self.sigma_w_lazy, self.gamma0_ratio_lazy),
        }

    def panel_axes(self, panel: str) -> tuple[np.ndarray, np.ndarray]:
        """``(k, t)`` axes of one panel: the deep panel spans more modes and time."""
        if panel != "deep-feature-learning":
            return self.axes()
        k = np.logspace(0.0, np.log10(self.deep_k_max), self.n_k)
        t = np.logspace(np.log10(self.t_min), np.log10(self.deep_t_max), self.n_t)
        return k, t


@dataclass(frozen=True)
class FirstLayerConfig(TheoryGrid):
    """Figs. 5 and 6: second layer frozen, feature-learning setting of the paper."""

    sigma_w: float = 0.1
    gamma0_ratio: float = 2.0
    n_curves: int = 12

    def __post_init__(self) -> None:
        super().__post_init__()
        v.positive("sigma_w", self.sigma_w)
        v.positive("gamma0_ratio", self.gamma0_ratio)
        v.positive_int("n_curves", self.n_curves, minimum=2)

    def setting(self) -> PowerLawSetting:
        """The setting of the figure."""
        return PowerLawSetting.paper(self.sigma_w, self.gamma0_ratio, alpha=self.alpha,
                                     beta=self.beta, sigma_a=self.sigma_a)


def _full3() -> Fig3Config:
    return Fig3Config(k_max=1e5, t_max=1e8, deep_k_max=1e12, deep_t_max=1e19, n_k=800,
                      n_t=800)


def _full_first() -> FirstLayerConfig:
    return FirstLayerConfig(k_max=1e5, t_max=1e8, n_k=800, n_t=800, n_curves=20)


def _grid_frame(panel: str, k: np.ndarray, t: np.ndarray, quantity: str,
                values: np.ndarray) -> pd.DataFrame:
    K, T = np.meshgrid(k, t, indexing="ij")
    return pd.DataFrame({"panel": panel, "k": K.ravel(), "t": T.ravel(), "quantity": quantity,
                         "value": np.asarray(values, dtype=np.float64).ravel()})


def _curve_frame(panel: str, t: np.ndarray, quantity: str, values: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({"panel": panel, "k": values, "t": t, "quantity": quantity,
                         "value": values})


#: Share of a region's cells that must sit on its plateau for the fig3 claims.
PLATEAU_SHARE = 0.1


def plateau_value(aeff: np.ndarray, labels: np.ndarray, region: str, value: float,
                  share: float = PLATEAU_SHARE) -> float:
    """The exponent that the best ``share`` of a region's cells reach.

    Of the cells labelled ``region``, sorted by ``|alpha_eff - value|``, the
    ``alpha_eff`` of the one at rank ``share``: within ``tol`` of ``value``
    exactly when at least that share of the region lies on the plateau. NaN
    when no cell carries the label.
    """
    vals = aeff[labels == region]
    if vals.size == 0:
        return float("nan")
    order = np.argsort(np.abs(vals - value))
    return float(vals[order[int(share * (vals.size - 1))]])


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


_REGION_NAMES = {"I": "\\alpha", "II": "3\\alpha+\\beta", "IIIa": "\\alpha+\\beta",
                 "IIIb": "\\alpha+\\beta/2"}


@register("fig3", "alpha_eff over the (k, t) plane with k_learn, k_cross, k_layer (Fig. 3): "
          "deep feature learning, the Fig. 2 setting, lazy", Fig3Config, full=_full3)
def run_fig3(cfg: Fig3Config, out_dir: Path) -> ExperimentResult:
    """Exponent maps of three settings, the four plateaus labelled, and slices at fixed times."""
    panels: list[dict[str, Any]] = []
    frames: list[pd.DataFrame] = []
    summary: dict[str, Any] = {}
    claims: list[Claim] = []
    titles = {"deep-feature-learning": "(a) deep feature learning",
              "fig2-setting": "(b) the paper's Fig. 2 setting", "lazy": "(c) lazy"}
    settings = cfg.settings()
    for name, s in settings.items():
        k, t = cfg.panel_axes(name)
        aeff = theory.alpha_eff(s, k[:, None], t[None, :])
        labels = theory.region(s, k[:, None], t[None, :])
        bounds = {"k_learn": theory.k_learn(s, t), "k_cross": theory.k_cross(s, t),
                  "k_layer": theory.k_layer(s, t)}
        rep = theory.regime(s)
        marks = []
        if name == "deep-feature-learning":
            for reg, val in theory.asymptotic_exponents(s).items():
                got = plateau_value(aeff, labels, reg, val)
                claims.append(within(
                    f"(a) Region {reg} plateau", got, val - cfg.plateau_tol,
                    val + cfg.plateau_tol,
                    note=f"alpha_eff that {PLATEAU_SHARE:.0%} of the Region {reg} cells reach "
                         f"(expected {val:g})"))
                summary[f"plateau_{reg}"] = got
                cell = _label_cell(aeff, labels, reg, val, cfg.plateau_tol)
                if cell is not None:
                    marks.append((float(t[cell[1]]), float(k[cell[0]]),
                                  f"{reg}: ${_REGION_NAMES[reg]}$ = {val:g}"))
        panels.append({"k": k, "t": t, "alpha_eff": aeff, "boundaries": bounds, "marks": marks,
                       "title": f"{titles[name]} (regime: {rep.label})\n$\\sigma_w$={s.sigma_w:g}, "
                                f"$\\sigma_a$={s.sigma_a:g}, "
                                f"$\\gamma_0\\theta_0/S$={s.gamma0 * s.theta0 / s.S:.3g}"})
        frames.append(_grid_frame(name, k, t, "alpha_eff", aeff))
        frames += [_curve_frame(name, t, b, kb) for b, kb in bounds.items()]
        summary[name] = {"regime": rep.label, "alpha_eff_min": float(aeff.min()),
                         "alpha_eff_max": float(aeff.max()), "k_u": rep.k_u, "k_l": rep.k_l}
    s_deep = settings["deep-feature-learning"]
    k, t = cfg.panel_axes("deep-feature-learning")
    ts = np.logspace(np.log10(t[0]) + 2, np.log10(t[-1]) - 1, cfg.n_slices)
    slices = {"k": k, "t": ts, "alpha_eff": theory.alpha_eff(s_deep, k[None, :], ts[:, None]),
              "exponents": {f"{reg}: ${_REGION_NAMES[reg]}$ = {val:g}": val
                            for reg, val in theory.asymptotic_exponents(s_deep).items()},
              "title": "(d) panel (a) at fixed times"}
    fig = tplot.fig3(panels, slices)
    figures = save_figure(fig, out_dir / "fig3")
    table = io.write_table(pd.concat(frames, ignore_index=True), out_dir / "fig3.parquet")
    summary["settings"] = {n: s.to_dict() for n, s in settings.items()}
    return ExperimentResult("fig3", out_dir, figures, [table], summary, claims)


@register("fig5", "rho_k(t) with the second layer frozen, coloured by time (Fig. 5)",
          FirstLayerConfig, full=_full_first)
def run_fig5(cfg: FirstLayerConfig, out_dir: Path) -> ExperimentResult:
    """First-layer-only spectra (Eq. 84) at log-spaced times."""
    s = cfg.setting()
    k, _ = cfg.axes()
    t = np.concatenate([[0.0], np.logspace(np.log10(cfg.t_min), np.log10(cfg.t_max),
                                           cfg.n_curves - 1)])
    rho = theory.rho_first_layer(s, k[None, :], t[:, None])
    fig = tplot.spectra_over_time(
        k, t, rho, title="second layer frozen: $\\rho_k(t)$",
        guides={"$-\\alpha$": s.alpha, "$-(\\alpha+\\beta)$": s.alpha + s.beta,
                "$-(3\\alpha+\\beta)$": 3 * s.alpha + s.beta})
    figures = save_figure(fig, out_dir / "fig5")
    K, T = np.meshgrid(k, t, indexing="xy")
    df = pd.DataFrame({"k": K.ravel(), "t": T.ravel(), "quantity": "rho_first_layer",
                       "value": rho.ravel()})
    table = io.write_table(df, out_dir / "fig5.parquet")
    late = theory.alpha_eff_first_layer(s, np.array([k[0], k[-1]]), t[-1])
    claims = [
        within(f"t = {t[-1]:g}: local exponent at k = 1", float(late[0]),
               s.alpha + s.beta - 0.05, s.alpha + s.beta + 0.05,
               note="learned modes (Region III) carry alpha + beta"),
        within(f"t = {t[-1]:g}: local exponent at k = {k[-1]:g}", float(late[1]),
               s.alpha - 0.05, s.alpha + 0.05,
               note="modes not yet learned (Region I) keep alpha"),
    ]
    return ExperimentResult("fig5", out_dir, figures, [table],
                            {"setting": s.to_dict(), "k1": theory.k1(s),
                             "t_star": theory.t_star(s),
                             "late_local_exponent_k_first_last": late.tolist()}, claims)


@register("fig6", "the three first-layer regions with k_learn, k1, k2 (Fig. 6)",
          FirstLayerConfig, full=_full_first)
def run_fig6(cfg: FirstLayerConfig, out_dir: Path) -> ExperimentResult:
    """Region labels of Eq. (113) over the (k, t) plane, with the exact alpha_eff beside them."""
    s = cfg.setting()
    k, t = cfg.axes()
    labels = theory.region_first_layer(s, k[:, None], t[None, :])
    aeff = theory.alpha_eff_first_layer(s, k[:, None], t[None, :])
    exps = {"I": s.alpha, "II": 3 * s.alpha + s.beta, "III": s.alpha + s.beta}
    bounds = {"k_learn": theory.k_learn_first_layer(s, t),
              "k1": np.full_like(t, theory.k1(s)), "k2": theory.k2(s, t)}
    fig = tplot.region_map(k, t, labels, ["I", "II", "III"], exps, bounds,
                           title="second layer frozen: regions of Eq. (113)")
    figures = save_figure(fig, out_dir / "fig6")
    frames = [_grid_frame("first-layer", k, t, "alpha_eff_first_layer", aeff)]
    frames += [_curve_frame("first-layer", t, b, kb) for b, kb in bounds.items()]
    df = pd.concat(frames, ignore_index=True)
    df["region"] = pd.Series(dtype="string")
    n = labels.size
    df.loc[: n - 1, "region"] = labels.ravel()
    table = io.write_table(df, out_dir / "fig6.parquet")
    # how well the asymptotic labels predict the exact exponent, per region
    agree = {name: float(np.median(np.abs(aeff[labels == name] - exps[name])))
             for name in exps if (labels == name).any()}
    claims = [within(f"Region {name} plateau", plateau_value(aeff, labels, name, exps[name]),
                     exps[name] - 0.05, exps[name] + 0.05,
                     note=f"alpha_eff that {PLATEAU_SHARE:.0%} of the Region {name} cells reach")
              for name in ("I", "III")]
    peak = float(aeff[labels == "II"].max()) if (labels == "II").any() else float("nan")
    claims.append(within("Region II rises above alpha + beta", peak, s.alpha + s.beta,
                         exps["II"] + 0.05,
                         note=f"max alpha_eff in Region II, towards 3alpha+beta = {exps['II']:g};"
                              " the plateau itself needs sigma_w << 0.1 (see fig3 (a))"))
    return ExperimentResult("fig6", out_dir, figures, [table],
                            {"setting": s.to_dict(), "median_abs_dev_from_asymptote": agree,
                             "region_II_max_alpha_eff": peak,
                             "k1": theory.k1(s), "t_star": theory.t_star(s)}, claims)
