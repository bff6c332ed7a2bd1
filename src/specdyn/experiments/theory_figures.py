"""Theory figures of the core paper: Fig. 3 (exponent map), Fig. 5 and Fig. 6 (first layer only)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn import _validate as v
from specdyn import io, theory
from specdyn.plot import save_figure
from specdyn.plot import theory as tplot
from specdyn.runs.claims import OWN, Claim, rank_correlation, within
from specdyn.runs.registry import ExperimentResult, Measured, register
from specdyn.settings import PowerLawSetting

_K_MAX = v.Real(1.0, 1e300, lo_open=True)


@dataclass(frozen=True)
@v.constrained_fields(alpha=v.POSITIVE, beta=v.POSITIVE, sigma_a=v.POSITIVE, k_max=_K_MAX,
                      t_min=v.POSITIVE, t_max=v.POSITIVE, n_k=v.Int(2), n_t=v.Int(2))
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
        # the time axis runs forwards
        v.in_range("t_max", self.t_max, self.t_min, np.inf, lo_open=True)

    def axes(self) -> tuple[np.ndarray, np.ndarray]:
        """Log-spaced ``k`` and ``t`` axes."""
        k = np.logspace(0.0, np.log10(self.k_max), self.n_k)
        t = np.logspace(np.log10(self.t_min), np.log10(self.t_max), self.n_t)
        return k, t


# The theory figures' claims: every tolerance fixed before the run.
#: |alpha_eff - asymptotic exponent| on a plateau (Eq. 31, Eq. 113).
PLATEAU_TOL = 0.05
#: |log10(k where alpha_eff passes halfway between two plateaus / the boundary)|, decades.
#: At R = 1 alpha_eff is exactly halfway between alpha and 3 alpha + beta; the other levels
#: (l = 0.9, u = 1) sit at O(1) of their crossovers, i.e. within a factor ~3 in k.
BOUNDARY_TOL = 0.5
#: A boundary is checked where it lies this many decades inside the grid and from its
#: neighbour (the two plateaus it separates both exist there).
BOUNDARY_MARGIN = 1.0
#: A region "exists" (Eqs. 196, 197, 202) when its plateau spans this many decades of k at
#: some time: the factor 10 that :func:`specdyn.theory.regime` reads into "much greater".
EXIST_DECADES = 1.0
#: Why the project does not expect the existence conditions to predict the plateaus at the
#: paper's Fig. 2 setting (computed before the claim was written; see also fig6).
EXIST_DISPUTED = ("'>>' read as a factor 10 is too loose at sigma_w = 0.1, gamma0 = 2 S/theta0:"
                  " the crossovers are as wide as the regions (alpha_eff peaks at 3.74 < 4; "
                  "the alpha + beta plateau spans 0.35 decade)")
#: Why alpha_eff is not bounded by the adjacent exponents where l << 1 and u >> 1.
INTERPOLATE_DISPUTED = ("there xi grows as sinh(2 lambda_k theta_k t / gamma0) (Eq. 21), so "
                        "d log rho / d log k carries the k-dependent growth rate times t and "
                        "overshoots 3 alpha + beta")
#: Why a mode in the middle of the IIIa range does not settle on 3 alpha + beta on its way.
SEQUENCE_DISPUTED = ("written after the first run measured a peak of 3.87: between the cross "
                     "level and 0.9 gamma0 theta_k xi spans only ~2 decades at that mode, too "
                     "short a Region II passage for alpha_eff to settle within 0.05 of 4")
#: The fig3 (a) and fig6 plateau claims were a share of cells (the 10 % of a region's cells
#: nearest the exponent), which every shuffled grid passes (issue 30).
PLATEAU_REVISED = ("b6f669e (issue 30): the exponent that 10 % of the region's cells reach -> the "
                   "widest run of on-plateau cells along k, >= 1 decade (the existing "
                   "EXIST_DECADES): a shuffle keeps the share, not the run; changed after the "
                   "mutation test, the quick spans seen (fig3 (a): 10, 1.26, 2.8, 4.6 "
                   "decades; fig6: 4.0, 1.7)")
#: The boundary whose claim catches a table constant at a plateau's value (fig3 (a)).
PLATEAU_PARTNER = {"I": "k_cross", "II": "k_learn", "IIIa": "k_learn", "IIIb": "k_layer"}
#: Why Eq. (34) is not expected at the paper's lazy setting (design notes, measured 0.37).
#: Eq. (21) on its own: modes of the deep panel whose exact learned part
#: ``rho_k(t) - rho_k(0)`` the table records (quantity ``rho_learned``), on times where
#: ``x = 2 lambda_k theta_k t / gamma0`` runs over ``SINH_GRID`` (log-spaced, ``SINH_POINTS``).
SINH_MODES = (1.0, 10.0, 100.0)
SINH_GRID, SINH_POINTS = (0.5, 5.0), 25
#: The window of the Eq. (21) claims: ``x`` in ``SINH_X`` (beyond the t^2 range of Eq. 22's
#: x <= 0.3) where Eq. (21)'s own ``l_k = S sinh(x) / (2 gamma0 theta_k) <= SINH_ELL`` (the
#: drive ``theta_k - xi_k/gamma0`` of Eq. 20 is dropped to ``theta_k`` within SINH_ELL).
SINH_X, SINH_ELL = (1.0, 4.0), 0.05
#: Tolerance of ``max |log(rho_learned / Eq. 21 form)|`` over the window, derived before the
#: run: the dropped drive slows ``x`` by at most ``SINH_ELL`` relative, which moves
#: ``log(cosh x - 1)`` by at most ``SINH_ELL`` x its log-slope ``x sinh x / (cosh x - 1)``,
#: largest at the window's end.
SINH_TOL = float(SINH_ELL * SINH_X[1] * np.sinh(SINH_X[1]) / (np.cosh(SINH_X[1]) - 1.0))
SINH_NAME = "(a) Eq. (21): Region II learned part follows the sinh form (max |log ratio|)"
LAZY_DISPUTED = ("the paper's lazy setting (gamma0 theta0 = 1) is only a factor 1.73 below "
                 "the Eq. (33) bound, not '<<': the modes near k = 1 still gain a learned part")


@dataclass(frozen=True)
@v.constrained_fields(deep_sigma_w=v.POSITIVE, deep_gamma0_ratio=v.POSITIVE, deep_k_max=_K_MAX,
                      deep_t_max=v.POSITIVE, sigma_w_feature=v.POSITIVE,
                      gamma0_ratio_feature=v.POSITIVE, sigma_w_lazy=v.POSITIVE,
                      gamma0_ratio_lazy=v.POSITIVE, gamma0_ratio_lazy_deep=v.POSITIVE,
                      gamma0_ratio_equal=v.POSITIVE, n_slices=v.SIZE,
                      plateau_tol=v.Real(0.0, 1.0, lo_open=True))
class Fig3Config(TheoryGrid):
    """Fig. 3: (a) deep feature learning, (b) the paper's Fig. 2 setting, (c) lazy.

    Panel (a) is the regime of the paper's Fig. 3(a, b), ``sigma_a >> sigma_w``
    and ``gamma0 >> S/theta0`` (default ``sigma_w = 1e-3``,
    ``gamma0 theta0/S = 1e3``), where all four asymptotic exponents of Eq. (31)
    coexist; it needs modes up to ``deep_k_max`` and times up to
    ``deep_t_max`` because Region IIIa lies between ``k_l = (gamma0
    theta0/S)^(2/beta)`` and ``k_u``. Panels (b) and (c) use the grid fields of
    :class:`TheoryGrid`. ``plateau_tol`` is the tolerance of the plateau claims.
    ``gamma0_ratio_lazy_deep`` is a lazy setting well below the Eq. (33) bound
    (same ``sigma_w`` as the lazy panel), where the project expects Eq. (34)
    to hold; it is written to the table (panel ``lazy-below-bound``), not drawn.
    ``gamma0_ratio_equal`` is a feature-learning setting with ``sigma_w = sigma_a``, where
    Eq. (200) rules Region IIIa out (panel ``equal-scales``, on the deep panel's axes, not
    drawn).
    """

    deep_sigma_w: float = 1e-3
    deep_gamma0_ratio: float = 1e3
    deep_k_max: float = 1e10
    deep_t_max: float = 1e17
    sigma_w_feature: float = 0.1
    gamma0_ratio_feature: float = 2.0
    sigma_w_lazy: float = 1.0
    gamma0_ratio_lazy: float = 0.5
    gamma0_ratio_lazy_deep: float = 0.05
    gamma0_ratio_equal: float = 1e3
    n_slices: int = 7
    plateau_tol: float = PLATEAU_TOL

    def __post_init__(self) -> None:
        super().__post_init__()
        # the deep panel's time axis runs forwards from the shared t_min
        v.in_range("deep_t_max", self.deep_t_max, self.t_min, np.inf, lo_open=True)

    def settings(self) -> dict[str, PowerLawSetting]:
        """The settings of the figure's three panels and the well-lazy check, by name."""
        def paper(sigma_w: float, ratio: float) -> PowerLawSetting:
            return PowerLawSetting.paper(sigma_w, ratio, alpha=self.alpha, beta=self.beta,
                                         sigma_a=self.sigma_a)

        return {
            "deep-feature-learning": paper(self.deep_sigma_w, self.deep_gamma0_ratio),
            "fig2-setting": paper(self.sigma_w_feature, self.gamma0_ratio_feature),
            "lazy": paper(self.sigma_w_lazy, self.gamma0_ratio_lazy),
            "lazy-below-bound": paper(self.sigma_w_lazy, self.gamma0_ratio_lazy_deep),
            "equal-scales": paper(self.sigma_a, self.gamma0_ratio_equal),
        }

    def panel_axes(self, panel: str) -> tuple[np.ndarray, np.ndarray]:
        """``(k, t)`` axes of one panel: the deep and equal-scales panels span more modes and
        time."""
        if panel not in ("deep-feature-learning", "equal-scales"):
            return self.axes()
        k = np.logspace(0.0, np.log10(self.deep_k_max), self.n_k)
        t = np.logspace(np.log10(self.t_min), np.log10(self.deep_t_max), self.n_t)
        return k, t


@dataclass(frozen=True)
@v.constrained_fields(sigma_w=v.POSITIVE, gamma0_ratio=v.POSITIVE, n_curves=v.Int(2))
class FirstLayerConfig(TheoryGrid):
    """Figs. 5 and 6: second layer frozen, feature-learning setting of the paper."""

    sigma_w: float = 0.1
    gamma0_ratio: float = 2.0
    n_curves: int = 12

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


def plateau_span(k: np.ndarray, aeff: np.ndarray, labels: np.ndarray, region: str,
                 value: float, tol: float) -> float:
    """Widest run along ``k``, at any time, of cells labelled ``region`` within ``tol`` of
    ``value``, in decades of ``k``.

    A plateau is a run of neighbouring modes on the asymptotic exponent, not a share of
    cells: a shuffled grid keeps the share but breaks the run.
    """
    on = (labels == region) & (np.abs(aeff - value) <= tol)
    return _longest_span(on, np.log10(k))


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


def _grid(df: pd.DataFrame, panel: str, quantity: str = "alpha_eff"
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(k, t, values[k, t])`` of one panel's grid in a fig3/fig6 table."""
    sub = df[(df.panel == panel) & (df.quantity == quantity)]
    wide = sub.pivot(index="k", columns="t", values="value")
    return (wide.index.to_numpy(dtype=float), wide.columns.to_numpy(dtype=float),
            wide.to_numpy(dtype=float))


def _longest_span(on: np.ndarray, log_k: np.ndarray) -> float:
    """Widest run of consecutive ``True`` along ``k`` (axis 0) at any ``t``, in decades."""
    best = 0
    for col in on.T:
        run = 0
        for x in col:
            run = run + 1 if x else 0
            best = max(best, run)
    step = float(log_k[1] - log_k[0]) if log_k.size > 1 else 0.0
    return best * step


def _last_k(k: np.ndarray, mask: np.ndarray) -> float:
    """Largest ``k`` where ``mask`` holds (NaN if nowhere)."""
    idx = np.nonzero(mask)[0]
    return float(k[idx.max()]) if idx.size else float("nan")


def boundary_offsets(k: np.ndarray, t: np.ndarray, aeff: np.ndarray, s: PowerLawSetting
                     ) -> dict[str, np.ndarray]:
    """Where the exact ``alpha_eff`` changes regime, against the boundaries, in decades.

    At each time ``t_j`` (column of ``aeff``): ``k_cross`` is measured as the
    largest ``k`` with ``alpha_eff >= (alpha + 3 alpha + beta)/2``; below the
    slice's peak, ``k_learn`` as the largest ``k`` with ``alpha_eff <= (3 alpha +
    beta + alpha + beta)/2`` and ``k_layer`` as the largest with ``alpha_eff <=
    (alpha + beta + alpha + beta/2)/2``. Returns ``log10(measured / boundary)``
    for each boundary at the times where it lies :data:`BOUNDARY_MARGIN` decades
    inside the grid and from its neighbour (``k_cross`` from ``k_learn``,
    ``k_learn`` from ``k_cross`` and ``k_layer``, ``k_layer`` below ``k_learn``).
    """
    ex = theory.asymptotic_exponents(s)
    levels = {"k_cross": 0.5 * (ex["I"] + ex["II"]), "k_learn": 0.5 * (ex["II"] + ex["IIIa"]),
              "k_layer": 0.5 * (ex["IIIa"] + ex["IIIb"])}
    kc, kl, ky = theory.k_cross(s, t), theory.k_learn(s, t), theory.k_layer(s, t)
    lo, hi = np.log10(k[0]) + BOUNDARY_MARGIN, np.log10(k[-1]) - BOUNDARY_MARGIN
    m = BOUNDARY_MARGIN
    with np.errstate(divide="ignore", invalid="ignore"):
        def inside(b: np.ndarray) -> np.ndarray:
            return (np.log10(b) >= lo) & (np.log10(b) <= hi)

        use = {"k_cross": inside(kc) & (np.log10(kc / kl) >= m),
               "k_learn": inside(kl) & (np.log10(kc / kl) >= m) & (np.log10(kl / ky) >= m),
               "k_layer": inside(ky) & (np.log10(kl / ky) >= m)}
    bound = {"k_cross": kc, "k_learn": kl, "k_layer": ky}
    out: dict[str, list[float]] = {name: [] for name in levels}
    for j in range(t.size):
        a = aeff[:, j]
        peak = int(np.argmax(a))
        found = {"k_cross": _last_k(k, a >= levels["k_cross"]),
                 "k_learn": _last_k(k[:peak], a[:peak] <= levels["k_learn"]),
                 "k_layer": _last_k(k[:peak], a[:peak] <= levels["k_layer"])}
        for name in levels:
            if use[name][j]:
                out[name].append(float(np.log10(found[name] / bound[name][j])))
    return {name: np.asarray(v) for name, v in out.items()}


def sequence_modes(s: PowerLawSetting, k: np.ndarray) -> dict[str, float]:
    """The modes fig3 follows over time (Eq. 32), keyed by the region they end in.

    The middle (log scale) of the modes where Region IIIa can appear,
    ``[max(1, k_l), min(k_max, k_u)]``, and of those where IIIb can,
    ``[1, min(k_u, k_l)]``; each rounded to the nearest mode of the grid ``k``.
    """
    ku, kl = theory.k_u(s), theory.k_l(s)
    want = {"IIIa": np.sqrt(max(1.0, kl) * min(float(k[-1]), ku)),
            "IIIb": np.sqrt(min(ku, kl))}
    return {reg: float(k[int(np.argmin(np.abs(np.log(k / w))))]) for reg, w in want.items()}


def _mode_sequence(k: np.ndarray, t: np.ndarray, aeff: np.ndarray, k_mode: float,
                   values: list[float], tol: float) -> tuple[bool, str]:
    """Whether the mode nearest ``k_mode`` visits ``values`` in time order (Eq. 32).

    Each value is visited at the times where ``|alpha_eff - value| <= tol``; the
    order is that of the median of those times. Not held when a value is never visited.
    """
    i = int(np.argmin(np.abs(np.log(k / k_mode))))
    a = aeff[i]
    medians = []
    for val in values:
        hit = t[np.abs(a - val) <= tol]
        medians.append(float(np.median(hit)) if hit.size else float("nan"))
    ok = bool(np.all(np.isfinite(medians)) and np.all(np.diff(medians) > 0))
    text = " -> ".join(f"{v:g} at t ~ {m:.3g}" if np.isfinite(m) else f"{v:g} never within {tol:g}"
                       for v, m in zip(values, medians, strict=True))
    return ok, f"k = {k[i]:.3g}: {text}"


def _sinh_x(s: PowerLawSetting, k: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Eq. (21)'s argument ``x = 2 lambda_k theta_k t / gamma0``."""
    lam, th = s.lambda0 * k ** -s.alpha, s.theta0 * k ** (-s.beta / 2)
    return 2.0 * lam * th * t / s.gamma0


def sinh_frame(panel: str, s: PowerLawSetting) -> pd.DataFrame:
    """The exact learned part ``rho_k(t) - rho_k(0)`` (closed form, App. D) of the modes
    :data:`SINH_MODES`, on times where Eq. (21)'s argument runs over :data:`SINH_GRID`."""
    frames = []
    for k in SINH_MODES:
        t = np.geomspace(*SINH_GRID, SINH_POINTS) / float(_sinh_x(s, np.array(k), np.array(1.0)))
        kk = np.full_like(t, k)
        frames.append(pd.DataFrame({"panel": panel, "k": kk, "t": t, "quantity": "rho_learned",
                                    "value": theory.rho(s, kk, t) - theory.rho(s, kk, 0.0 * t)}))
    return pd.concat(frames, ignore_index=True)


def sinh_deviations(df: pd.DataFrame, s: PowerLawSetting, panel: str) -> tuple[float, float, int]:
    """``(sinh, square, n)``: over the Eq. (21) window (:data:`SINH_X`, ``l_k <=``
    :data:`SINH_ELL`) of the table's ``rho_learned`` rows, the largest ``|log|`` of their
    ratio to Eq. (21)'s form ``S lambda_k / 2 (cosh x - 1)`` (``xi = S/2 sinh x`` in Eq. 22's
    first line) and to Eq. (22)'s ``t^2`` form ``S lambda_k x^2 / 4``; ``n`` points.
    NaN where a value is not positive or no point lies in the window (a wrong table)."""
    sub = df[(df.panel == panel) & (df.quantity == "rho_learned")]
    k, t, val = (sub[c].to_numpy(dtype=float) for c in ("k", "t", "value"))
    x = _sinh_x(s, k, t)
    ell = s.S * np.sinh(x) / (2.0 * s.gamma0 * s.theta0 * k ** (-s.beta / 2))
    m = (x >= SINH_X[0]) & (x <= SINH_X[1]) & (ell <= SINH_ELL)
    if not m.any() or not np.all(val[m] > 0) or not np.all(np.isfinite(val[m])):
        return float("nan"), float("nan"), int(m.sum())
    lam = s.lambda0 * k[m] ** -s.alpha
    sinh_form = s.S * lam / 2.0 * (np.cosh(x[m]) - 1.0)
    square = s.S * lam * x[m] ** 2 / 4.0
    return (float(np.abs(np.log(val[m] / sinh_form)).max()),
            float(np.abs(np.log(val[m] / square)).max()), int(m.sum()))


def fig3_claims(df: pd.DataFrame, cfg: Fig3Config) -> list[Claim]:
    """fig3's claims, a pure function of its table ``fig3.parquet`` and its config.

    The measured numbers come from the table's ``alpha_eff`` grids (and the
    ``alpha_eff_t_inf`` rows at ``t = inf``); the predictions (region labels,
    boundaries, existence conditions) from the theory at the config's settings.
    """
    settings = cfg.settings()
    claims: list[Claim] = []
    tol = cfg.plateau_tol
    for name in ("deep-feature-learning", "fig2-setting", "lazy"):
        s = settings[name]
        k, t, aeff = _grid(df, name)
        labels = theory.region(s, k[:, None], t[None, :])
        ex = theory.asymptotic_exponents(s)
        if name == "deep-feature-learning":
            for reg, val in ex.items():
                claims.append(within(
                    f"(a) Region {reg} plateau (decades of k)",
                    plateau_span(k, aeff, labels, reg, val, tol), EXIST_DECADES, np.inf,
                    source="core Eq. (31), Fig. 3(a)",
                    note=f"widest run along k, at any t, of Region {reg} cells within {tol:g} "
                         f"of {val:g}; a table constant at {val:g} has it too, the boundary "
                         f"claim named as partner does not",
                    revised=PLATEAU_REVISED, partner=f"(a) {PLATEAU_PARTNER[reg]}(t): "
                                                     f"alpha_eff changes regime there "
                                                     f"(max decades off)"))
            offsets = boundary_offsets(k, t, aeff, s)
            for b, off in offsets.items():
                claims.append(within(
                    f"(a) {b}(t): alpha_eff changes regime there (max decades off)",
                    float(np.abs(off).max()) if off.size else float("nan"), 0.0,
                    BOUNDARY_TOL, source="core Sec. 3.2, App. E.1-E.3",
                    note=f"over {off.size} times where {b} lies {BOUNDARY_MARGIN:g} decade "
                         f"inside the grid and from its neighbour; measured where alpha_eff "
                         f"passes halfway between the two exponents it separates"))
            # Eq. (32): a mode between k_l and k_u ends at alpha + beta, one below k_l at
            # alpha + beta/2
            for reg, k_mode in sequence_modes(s, k).items():
                final = ex[reg]
                ok, text = _mode_sequence(k, t, aeff, k_mode, [ex["I"], ex["II"], final], tol)
                claims.append(Claim(
                    f"(a) fixed mode: alpha -> 3alpha+beta -> {final:g} in time order",
                    f"each within {tol:g}, in this order", text, ok, source="core Eq. (32)",
                    note="order of the median time at which the mode sits within the "
                         "tolerance of each exponent; the mode: middle (log scale) of the "
                         f"range where Region {'IIIa' if final == ex['IIIa'] else 'IIIb'} "
                         "can appear",
                    disputed=SEQUENCE_DISPUTED if final == ex["IIIa"] else ""))
            trans = aeff[labels == "transition"]
            claims.append(within(
                "(a) where l << 1, u >> 1: alpha_eff between adjacent exponents (max)",
                float(trans.max()) if trans.size else float("nan"), ex["IIIb"] - tol,
                ex["II"] + tol, source="core Sec. 3.2.2",
                note="max alpha_eff over the cells labelled 'transition' (R >= 1, l < 0.9, "
                     "u >= 1); the paper: it 'varies so as to interpolate between the "
                     "adjacent exponents'", disputed=INTERPOLATE_DISPUTED))
            dev_sinh, dev_square, n_sinh = sinh_deviations(df, s, name)
            claims.append(within(
                SINH_NAME, dev_sinh, 0.0, SINH_TOL, source="core Eq. (21), Sec. 3.2.2",
                note=f"xi_k = S/2 sinh(2 lambda_k theta_k t / gamma0) in Eq. (22)'s first line "
                     f"gives rho_k - rho_k(0) = S lambda_k/2 (cosh x - 1); against the exact "
                     f"closed form (App. D) at k = {', '.join(f'{m:g}' for m in SINH_MODES)}, "
                     f"{n_sinh} points with x in [{SINH_X[0]:g}, {SINH_X[1]:g}] and "
                     f"l_k <= {SINH_ELL:g} (R_k >> 1 there: sigma_w = {s.sigma_w:g}); "
                     f"tolerance derived: {SINH_ELL:g} x the largest log-slope of cosh x - 1 "
                     f"in the window; the Fig. 2 setting has no such window (l_k = "
                     f"sinh(x) k^(beta/2) / 4 there), so the theory's own panel is used"))
            claims.append(within(
                "(a) Eq. (21) is not Eq. (22)'s t^2: max |log ratio| to the t^2 form there",
                dev_square, SINH_TOL, np.inf, source="core Eqs. (21)-(22)",
                note="the same points against S lambda_k x^2 / 4: the sinh growth is visible "
                     "beyond the tolerance of the sinh claim (which a constant table fails, "
                     "its partner)", partner=SINH_NAME))
        # k_u, k_l: at t = inf alpha_eff passes halfway from alpha to alpha + beta at k_u and
        # from alpha + beta to alpha + beta/2 at k_l (Eqs. 190, 193); k_l is looked for among
        # the modes that learn (below k_u), and only where k_u lies a margin above it
        sub = df[(df.panel == name) & (df.quantity == "alpha_eff_t_inf")].sort_values("k")
        kk, a_inf = sub.k.to_numpy(), sub.value.to_numpy()
        ku, kl = theory.k_u(s), theory.k_l(s)
        lo, hi = np.log10(kk[0]) + BOUNDARY_MARGIN, np.log10(kk[-1]) - BOUNDARY_MARGIN
        checks = []
        if ku > 0 and lo <= np.log10(ku) <= hi:
            checks.append(("k_u", ku, _last_k(kk, a_inf >= 0.5 * (ex["I"] + ex["IIIa"])),
                           "core Eq. (190)"))
        if kl > 0 and lo <= np.log10(kl) <= hi and np.log10(ku / kl) >= BOUNDARY_MARGIN:
            # below the peak, as for k_learn: toward k_u alpha_eff falls from alpha + beta
            # to alpha and passes the same level again (found by the --full grid, k to 1e12)
            peak = int(np.argmax(np.where(kk < ku, a_inf, -np.inf)))
            checks.append(("k_l", kl, _last_k(kk[:peak], a_inf[:peak] <=
                                              0.5 * (ex["IIIa"] + ex["IIIb"])),
                           "core Eq. (193)"))
        for b, kb, found, source in checks:
            claims.append(within(
                f"({name}) {b} = {kb:.3g}: alpha_eff(t = inf) changes regime there (decades "
                f"off)", abs(float(np.log10(found / kb))), 0.0, BOUNDARY_TOL, source=source,
                note=f"largest k where alpha_eff(k, inf) is past halfway between the two "
                     f"exponents {b} separates: {found:.3g}"))
        # Appendix E.4: the regions whose condition holds have a plateau, the others not
        rep = theory.regime(s)
        mism = [reg for reg in ("II", "IIIa", "IIIb")
                if rep.exists[reg] != (_longest_span(np.abs(aeff - ex[reg]) <= tol,
                                                     np.log10(k)) >= EXIST_DECADES)]
        claims.append(within(
            f"({name}) regions predicted by Eqs. (196), (197), (202) = regions with a plateau",
            float(len(mism)), 0.0, 0.0, source="core App. E.4",
            note=f"'>>' as a factor 10; a plateau: within {tol:g} of its exponent over "
                 f">= {EXIST_DECADES:g} decade of k at some time; mismatched: "
                 f"{', '.join(mism) or 'none'}",
            disputed=EXIST_DISPUTED if name == "fig2-setting" else "",
            partner=f"(lazy) {LAZY_FALLS}" if name == "lazy" else ""))
    # Eq. (34) at the paper's lazy setting and well below the Eq. (33) bound
    for name, source, disputed in (("lazy", "core Eq. (34), Fig. 3(c)", LAZY_DISPUTED),
                                   ("lazy-below-bound", OWN, "")):
        _, _, aeff = _grid(df, name)
        s = settings[name]
        claims.append(within(
            f"({name}) alpha_eff stays at alpha (max |alpha_eff - alpha|)",
            float(np.abs(aeff - s.alpha).max()), 0.0, tol, source=source,
            note=f"gamma0 theta0 / S = {s.gamma0 * s.theta0 / s.S:.3g}, Eq. (33) bound "
                 f"{theory.cross_level(s) / s.S:.3g}; over the whole grid", disputed=disputed,
            partner=f"({name}) {LAZY_FALLS}"))
        # what a lazy panel does show: a learned part whose weight falls with k
        claims.append(within(
            f"({name}) {LAZY_FALLS}", rank_correlation(np.log(_grid(df, name)[0]),
                                                     aeff[:, -1] - s.alpha),
            -1.0, LAZY_FALLS_MAX, source=OWN,
            note="alpha_eff(k, t_max) - alpha against log k: the learned part "
                 "lambda_k S/2 [-1 + sqrt(1 + 4 u_k^2)] (Eq. 22 at xi = gamma0 theta_k) over "
                 "Eq. (34)'s sigma_w^2 lambda_k falls with k, so the excess over alpha does "
                 f"too (-1: strictly); {LAZY_FALLS_MAX:g} leaves room for rounding where the "
                 "excess is below 1e-12 (the quick run measured -1.0 in both lazy panels); "
                 "a constant or shuffled table has no such order"))
    # App. F: rho_k(t) stays decreasing in k, i.e. alpha_eff >= 0, in every panel
    low = min(float(_grid(df, name)[2].min()) for name in settings)
    claims.append(within(
        "every panel: mode order preserved (min alpha_eff over the grids)", low, 0.0, np.inf,
        source="core Sec. 3.1, App. F",
        note="'rho_k(t) remains monotonically decreasing in k; hence the relative ordering of "
             "the modes is preserved at all times': -d log rho / d log k >= 0 at every cell; "
             "any table of positive exponents meets it, so the deep panel's k_cross claim is "
             "its partner", partner=_DEEP_K_CROSS))
    # Eq. (200): Region IIIa needs sigma_a^2 >> (sqrt 5 - 1)/2 sigma_w^2; at sigma_w = sigma_a
    # (a factor 1.6, not '>>') it has no plateau, though the panel feature-learns (IIIb)
    k, _, aeff = _grid(df, "equal-scales")
    s = settings["equal-scales"]
    ex = theory.asymptotic_exponents(s)
    labels = theory.region(s, k[:, None], _grid(df, "equal-scales")[1][None, :])
    ratio = s.sigma_a**2 / s.sigma_w**2 / ((np.sqrt(5.0) - 1.0) / 2.0)
    claims.append(Claim(
        "(equal-scales) Eq. (200) fails: no alpha + beta plateau (decades of k)",
        f"in [0, {EXIST_DECADES:g}) (strictly below)",
        _longest_span(np.abs(aeff - ex["IIIa"]) <= tol, np.log10(k)),
        bool(_longest_span(np.abs(aeff - ex["IIIa"]) <= tol, np.log10(k)) < EXIST_DECADES),
        source="core Eq. (200)",
        note=f"sigma_a^2 / sigma_w^2 is {ratio:.3g} x (sqrt 5 - 1)/2, not '>>' (a factor 10); "
             f"gamma0 theta0 / S = {s.gamma0 * s.theta0 / s.S:.3g}; widest run along k of "
             f"cells within {tol:g} of alpha + beta, whatever their label; an absence, so the "
             "panel's IIIb plateau claim is its partner",
        partner="(equal-scales) Region IIIb plateau (decades of k)"))
    claims.append(within(
        "(equal-scales) Region IIIb plateau (decades of k)",
        plateau_span(k, aeff, labels, "IIIb", ex["IIIb"], tol), EXIST_DECADES, np.inf,
        source="core Eq. (202), Eq. (31)",
        note=f"the panel learns: widest run along k of Region IIIb cells within {tol:g} of "
             f"{ex['IIIb']:g} (Eq. 202 holds there)"))
    return claims


_DEEP_K_CROSS = "(a) k_cross(t): alpha_eff changes regime there (max decades off)"


#: The lazy panels' own claim, partner of their "no change" claims (issue 30).
LAZY_FALLS = "t_max: alpha_eff - alpha falls with k (rank correlation)"
LAZY_FALLS_MAX = -0.9


FIG3_TITLES = {"deep-feature-learning": "(a) deep feature learning",
               "fig2-setting": "(b) the paper's Fig. 2 setting", "lazy": "(c) lazy"}
FIG3_BOUNDARIES = ("k_learn", "k_cross", "k_layer")


def fig3_table(cfg: Fig3Config) -> pd.DataFrame:
    """fig3's table: per setting the ``alpha_eff`` grid and ``alpha_eff(k, t = inf)``; per
    drawn panel the boundaries ``k_learn(t)``, ``k_cross(t)``, ``k_layer(t)``."""
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
    return pd.concat(frames, ignore_index=True)


def _fig3_claims_of(cfg: Fig3Config, folder: Path) -> list[Claim]:
    return fig3_claims(pd.read_parquet(folder / "fig3.parquet"), cfg)


def _fig5_claims_of(cfg: FirstLayerConfig, folder: Path) -> list[Claim]:
    return fig5_claims(pd.read_parquet(folder / "fig5.parquet"), cfg)


def _fig6_claims_of(cfg: FirstLayerConfig, folder: Path) -> list[Claim]:
    return fig6_claims(pd.read_parquet(folder / "fig6.parquet"), cfg)


@register("fig3", "alpha_eff over the (k, t) plane with k_learn, k_cross, k_layer (Fig. 3): "
          "deep feature learning, the Fig. 2 setting, lazy", Fig3Config, full=_full3,
          claims=_fig3_claims_of,
          measured={"fig3.parquet": Measured(("value",), by=("panel", "quantity"))})
def run_fig3(cfg: Fig3Config, out_dir: Path) -> ExperimentResult:
    """Exponent maps of three settings, the four plateaus labelled, and slices at fixed times."""
    panels: list[dict[str, Any]] = []
    summary: dict[str, Any] = {}
    settings = cfg.settings()
    df = fig3_table(cfg)
    for name, s in settings.items():
        k, t, aeff = _grid(df, name)
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
            for reg, km in sequence_modes(s, k).items():
                bounds[f"Eq. (32) mode, to {reg}"] = np.full_like(t, km)
            for reg, val in theory.asymptotic_exponents(s).items():
                cell = _label_cell(aeff, labels, reg, val, cfg.plateau_tol)
                if cell is not None:
                    marks.append((float(t[cell[1]]), float(k[cell[0]]),
                                  f"{reg}: ${_REGION_NAMES[reg]}$ = {val:g}"))
        dev = float(np.abs(aeff - s.alpha).max())
        extra = (f"\nmax$|\\alpha_{{\\rm eff}}-\\alpha|$ = {dev:.2f} (Eq. 34: $\\approx\\alpha$)"
                 if name == "lazy" else "")
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
    claims = fig3_claims(df, cfg)
    for c in claims:
        if c.name.startswith("(a) Region"):
            summary[f"plateau_{c.name.split()[2]}"] = c.measured
    summary["settings"] = {n: s.to_dict() for n, s in settings.items()}
    return ExperimentResult("fig3", out_dir, figures, [table], summary)


def fig5_claims(df: pd.DataFrame, cfg: FirstLayerConfig) -> list[Claim]:
    """fig5's claims, a pure function of its table ``fig5.parquet`` (``k, t, value``).

    The local exponent at the last time is the log-log slope of the table's
    spectrum between its first two and its last two modes.
    """
    s = cfg.setting()
    last = df[df.t == df.t.max()].sort_values("k")
    lk, lr = np.log(last.k.to_numpy()), np.log(last.value.to_numpy())
    lo, hi = -(lr[1] - lr[0]) / (lk[1] - lk[0]), -(lr[-1] - lr[-2]) / (lk[-1] - lk[-2])
    t_end = float(last.t.iloc[0])
    k_end = float(last.k.iloc[-1])
    tol = PLATEAU_TOL
    return [
        within(f"t = {t_end:g}: local exponent at k = 1", float(lo), s.alpha + s.beta - tol,
               s.alpha + s.beta + tol, source="core Eq. (113), Fig. 5",
               note="learned modes (Region III) carry alpha + beta; log-log slope between "
                    "the first two modes of the table"),
        within(f"t = {t_end:g}: local exponent at k = {k_end:g}", float(hi), s.alpha - tol,
               s.alpha + tol, source="core Eq. (113), Fig. 5",
               note="modes not yet learned (Region I) keep alpha; log-log slope between the "
                    "last two modes of the table"),
    ]


@register("fig5", "rho_k(t) with the second layer frozen, coloured by time (Fig. 5)",
          FirstLayerConfig, full=_full_first, claims=_fig5_claims_of,
          measured={"fig5.parquet": Measured(("value",), by=("quantity",))})
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
    return ExperimentResult("fig5", out_dir, figures, [table],
                            {"setting": s.to_dict(), "k1": theory.k1(s),
                             "t_star": theory.t_star(s),
                             "late_local_exponent_k_first_last": late.tolist()})


def fig6_claims(df: pd.DataFrame, cfg: FirstLayerConfig) -> list[Claim]:
    """fig6's claims, a pure function of its table ``fig6.parquet``: the exact exponent
    (``alpha_eff_first_layer`` rows) in each region the table labels (``region``)."""
    s = cfg.setting()
    grid = df[df.quantity == "alpha_eff_first_layer"]
    wide = grid.pivot(index="k", columns="t", values="value")
    k, aeff = wide.index.to_numpy(dtype=float), wide.to_numpy(dtype=float)
    labels = (grid.pivot(index="k", columns="t", values="region")
              .reindex(index=wide.index, columns=wide.columns).to_numpy().astype(str))
    exps = {"I": s.alpha, "II": 3 * s.alpha + s.beta, "III": s.alpha + s.beta}
    tol = PLATEAU_TOL
    claims = [within(f"Region {name} plateau (decades of k)",
                     plateau_span(k, aeff, labels, name, exps[name], tol), EXIST_DECADES,
                     np.inf, source="core Eq. (113), Fig. 6",
                     note=f"widest run along k, at any t, of Region {name} cells within {tol:g} "
                          f"of {exps[name]:g}", revised=PLATEAU_REVISED)
              for name in ("I", "III")]

    def median(name: str) -> float:
        vals = aeff[labels == name]
        return float(np.median(vals)) if vals.size else float("nan")

    claims += [within(f"Region {name}: median alpha_eff", median(name), exps[name] - tol,
                      exps[name] + tol, source="core Eq. (113), Fig. 6",
                      note="over every cell of the region, crossovers included")
               for name in ("I", "III")]
    claims.append(within("Region II: median alpha_eff above alpha + beta", median("II"),
                         s.alpha + s.beta, exps["II"] + tol, source="core Eq. (113), Fig. 6",
                         note="the plateau 3alpha+beta itself needs sigma_w << 0.1"))
    claims.append(within(
        "Region II rises above alpha + beta (share of its widest k-extent)",
        rise_share(k, aeff, labels, "II", s.alpha + s.beta), RISE_SHARE, 1.0,
        source="core Eq. (113), Fig. 6",
        note=f"widest run along k of Region II cells above alpha + beta, over the widest "
             f"run of Region II cells at any t, towards 3alpha+beta = {exps['II']:g}; the "
             f"plateau itself needs sigma_w << 0.1 (see fig3 (a))", revised=RISE_REVISED))
    claims.append(within(
        "Region II plateau at 3alpha + beta (max alpha_eff in Region II)",
        float(aeff[labels == "II"].max()) if (labels == "II").any() else float("nan"),
        exps["II"] - tol, exps["II"] + tol, source="core Eq. (113), Fig. 6",
        note="Eq. (113) in the Fig. 6 setting itself (sigma_w = 0.1)", disputed=II_DISPUTED))
    # the first-layer boundaries (App. C): where the exact exponent changes regime
    t = wide.columns.to_numpy(dtype=float)
    offsets = first_layer_offsets(k, t, aeff, s)
    for key, (name, source) in FIRST_LAYER_BOUNDARIES.items():
        off = offsets[key]
        claims.append(within(
            f"{name}: alpha_eff changes regime there (max decades off)",
            float(np.abs(off).max()) if off.size else float("nan"), 0.0, BOUNDARY_TOL,
            source=source,
            note=f"over {off.size} times where the boundary lies {BOUNDARY_MARGIN:g} decade "
                 f"inside the grid and the time {BOUNDARY_MARGIN:g} decade from t* = "
                 f"{theory.t_star(s):.3g} (Eq. 111: at the grid time nearest t*); measured "
                 f"where alpha_eff passes halfway between the two exponents it separates"))
    return claims


#: Why the Fig. 6 setting does not reach the 3alpha + beta plateau (measured before the claim
#: was written: fig6's quick grid peaks at 3.63 in Region II, 3.48 in issue 30's check).
II_DISPUTED = ("sigma_w = 0.1 is not << sigma_a: Region II is at most ~0.9 decade wide "
               "(k2 / k_learn) and the crossovers at its two ends take it, so alpha_eff peaks "
               "below 3alpha + beta; fig3 (a) at sigma_w = 1e-3 has the plateau")
#: fig6's boundary claims: key of :func:`first_layer_offsets` -> (claim name, source).
FIRST_LAYER_BOUNDARIES = {
    "k2": ("Eq. (109) k2(t), t < t*", "core Eq. (109)"),
    "k_learn": ("Eq. (100) k_learn(t), t < t*", "core Eq. (100)"),
    "k1": ("Eq. (104) k1, t > t*", "core Eq. (104)"),
    "k_star": ("Eq. (111) (t*, k*)", "core Eq. (111)"),
}


def first_layer_offsets(k: np.ndarray, t: np.ndarray, aeff: np.ndarray, s: PowerLawSetting
                        ) -> dict[str, np.ndarray]:
    """Where the exact first-layer ``alpha_eff`` changes regime, against App. C's boundaries.

    ``log10(measured / boundary)`` at each time ``t_j`` (column of ``aeff``) where the
    boundary lies :data:`BOUNDARY_MARGIN` decades inside the grid and ``t_j`` that far from
    ``t*`` on the boundary's side: ``k2`` (Eq. 109, ``t < t*``) as the largest ``k`` with
    ``alpha_eff >= (alpha + 3 alpha + beta)/2``; ``k_learn`` (Eq. 100, ``t < t*``), below the
    slice's peak, as the largest with ``alpha_eff <= (3 alpha + beta + alpha + beta)/2``;
    ``k1`` (Eq. 104, ``t > t*``) as the largest with ``alpha_eff >= (alpha + alpha + beta)/2``;
    ``k_star`` (Eq. 111): at the grid time nearest ``t*`` (if within half a margin), the
    largest ``k`` with ``alpha_eff`` past halfway from ``alpha`` to ``alpha + beta``, against
    ``k* = k1``.
    """
    a_, b_, c_ = s.alpha, 3 * s.alpha + s.beta, s.alpha + s.beta
    ts, k1 = theory.t_star(s), theory.k1(s)
    bounds = {"k2": theory.k2(s, t), "k_learn": theory.k_learn_first_layer(s, t),
              "k1": np.full_like(t, k1)}
    lo, hi = np.log10(k[0]) + BOUNDARY_MARGIN, np.log10(k[-1]) - BOUNDARY_MARGIN
    early = np.log10(t) <= np.log10(ts) - BOUNDARY_MARGIN
    late = np.log10(t) >= np.log10(ts) + BOUNDARY_MARGIN
    side = {"k2": early, "k_learn": early, "k1": late}
    out: dict[str, np.ndarray] = {}
    for name, b in bounds.items():
        with np.errstate(divide="ignore", invalid="ignore"):
            use = side[name] & (np.log10(b) >= lo) & (np.log10(b) <= hi)
        offs = []
        for j in np.nonzero(use)[0]:
            col = aeff[:, j]
            peak = int(np.argmax(col))
            found = {"k2": _last_k(k, col >= 0.5 * (a_ + b_)),
                     "k_learn": _last_k(k[:peak], col[:peak] <= 0.5 * (b_ + c_)),
                     "k1": _last_k(k, col >= 0.5 * (a_ + c_))}[name]
            offs.append(float(np.log10(found / b[j])))
        out[name] = np.asarray(offs)
    near = int(np.argmin(np.abs(np.log(t / ts))))
    star = []
    if lo <= np.log10(k1) <= hi and abs(np.log10(t[near] / ts)) <= 0.5 * BOUNDARY_MARGIN:
        star.append(float(np.log10(_last_k(k, aeff[:, near] >= 0.5 * (a_ + c_)) / k1)))
    out["k_star"] = np.asarray(star)
    return out


#: fig6's Region II claim: alpha_eff lies above alpha + beta over at least this share of the
#: region's widest extent along k (the crossovers at its two ends may take the rest).
RISE_SHARE = 0.5
RISE_REVISED = ("b6f669e (issue 30): max alpha_eff over the Region II cells -> the share of the "
                "region's widest k-extent where alpha_eff stays above alpha + beta, >= 0.5: "
                "the max of a shuffled grid passes; changed after the mutation test, the "
                "quick run's share (1.0) seen")


def rise_share(k: np.ndarray, aeff: np.ndarray, labels: np.ndarray, region: str,
               level: float) -> float:
    """Widest run along ``k`` of ``region`` cells above ``level``, over the region's widest
    run along ``k`` (both at any time); NaN where the region has no cell."""
    extent = _longest_span(labels == region, np.log10(k))
    if extent <= 0:
        return float("nan")
    return _longest_span((labels == region) & (aeff > level), np.log10(k)) / extent


@register("fig6", "the three first-layer regions with k_learn, k1, k2 (Fig. 6)",
          FirstLayerConfig, full=_full_first, claims=_fig6_claims_of,
          measured={"fig6.parquet": Measured(("value",), by=("quantity",))})
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
    peak = float(aeff[labels == "II"].max()) if (labels == "II").any() else float("nan")
    return ExperimentResult("fig6", out_dir, figures, [table],
                            {"setting": s.to_dict(), "median_abs_dev_from_asymptote": agree,
                             "region_II_max_alpha_eff": peak,
                             "k1": theory.k1(s), "t_star": theory.t_star(s)})
