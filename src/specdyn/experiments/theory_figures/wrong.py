"""The theory figures' wrong models: what fig3, fig5 and fig6 would have written under a
plausible mistake (:class:`~specdyn.runs.WrongModel`), built from a run's own table or
written again with a theory function replaced (``patch``).

Theory figures have no seed to get wrong; their wrong models are the mistakes of a theory:
a neighbouring equation of the paper (Eq. 84, the second layer frozen, for Eq. 12, and
back), a boundary or a whole panel shifted along ``k`` by a few tenths of a decade, a
region whose exponent stops short, a transient replaced by noise; and, by class
(:data:`~specdyn.runs.WRONG_KINDS`): the theory's clock off by 2 in every function the
run and the claims call, a convention error inside the closed form the figure draws, the
teacher not normalised (App. G's ``mu0``), the ``t = inf`` exponent read at the grid's
last time. The classes that cannot occur without a simulation are in :data:`WRONG_NA`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn import theory
from specdyn.experiments.theory_figures import tables
from specdyn.runs.registry import WrongModel
from specdyn.runs.wrong import edit_table, table_edit
from specdyn.settings import PowerLawSetting
from specdyn.sim.protocol import derive_seed

#: The classes of mistake that cannot occur in a theory figure, and why.
WRONG_NA = {
    "is-theory": "no simulation: the table is the closed form itself, and its independent "
                 "evaluations (ODE, quadrature, a second formula) are computed by the claims, "
                 "never read from the table",
    "fluctuation-size": "no finite size: the closed form at N = M = inf has no fluctuations "
                        "or finite-size errors",
    "temperature": "no noise: deterministic gradient flow at N = inf, no temperature or "
                   "label noise",
}
#: fig5 and fig6 have no quantity to attribute to a wrong step either.
WRONG_NA_FIRST_LAYER = {
    **WRONG_NA,
    "attribution": "no step, width or held-out set: a closed form on a (k, t) grid, every row "
                   "written at its own (k, t); a row at the wrong time is the clock model",
}

#: The time-dependent theory functions that fig3's run and claims call (``theory.NAME``).
_FIG3_TIMED = ("alpha_eff", "rho", "eta", "zeta", "region", "region_quantities")
_FIG3_BOUNDS = ("k_learn", "k_cross", "k_layer")
#: The first-layer ones (fig5, fig6).
_FL_TIMED = ("rho_first_layer", "alpha_eff_first_layer", "region_first_layer")
_FL_BOUNDS = ("k_learn_first_layer", "k2", "k_cross_first_layer")


def _clock(names: tuple[str, ...], bounds: tuple[str, ...], factor: float,
           star: bool = False) -> dict[str, Any]:
    """Patches running ``theory.NAME`` at ``factor`` times the time: ``f(s, k, t) -> f(s, k,
    factor t)`` for ``names``, ``f(s, t) -> f(s, factor t)`` for ``bounds``, ``t_star ->
    t_star / factor`` when ``star``."""
    def timed(f: Callable[..., Any]) -> Callable[..., Any]:
        return lambda s, k, t: f(s, k, factor * np.asarray(t, dtype=float))

    def bound(f: Callable[..., Any]) -> Callable[..., Any]:
        return lambda s, t: f(s, factor * np.asarray(t, dtype=float))

    out: dict[str, Any] = {f"specdyn.theory.{n}": timed(getattr(theory, n)) for n in names}
    out.update({f"specdyn.theory.{n}": bound(getattr(theory, n)) for n in bounds})
    if star:
        t_star = theory.t_star
        out["specdyn.theory.t_star"] = lambda s: t_star(s) / factor
    return out


class _UnnormalisedTeacher:
    """``PowerLawSetting.paper`` with ``mu0 = 1`` instead of App. G's ``1/zeta(alpha +
    beta)`` (the teacher's strengths not normalised to ``sum_k lambda_k mu_k = 1``)."""

    @staticmethod
    def paper(sigma_w: float, gamma0_ratio: float, *, alpha: float = 1.0, beta: float = 1.0,
              sigma_a: float = 1.0, D: int | None = None) -> PowerLawSetting:
        return PowerLawSetting(alpha, beta, sigma_w, sigma_a,
                               gamma0_ratio * (sigma_w**2 + sigma_a**2), 1.0, 1.0, D)


#: Where the theory figures' configs build their settings.
_UNNORMALISED = {"specdyn.experiments.theory_figures.config.PowerLawSetting":
                 _UnnormalisedTeacher}


def _rewrite(table: str) -> Callable[[Any, Path], None]:
    """Write ``table`` again from the config with whatever theory is patched in."""
    def apply(cfg: Any, folder: Path) -> None:
        if table == "fig3.parquet":
            df = tables.fig3_table(cfg)
        else:
            df = tables.fig5_table(cfg) if table == "fig5.parquet" else tables.fig6_table(cfg)
        df.to_parquet(folder / table)

    return apply


def _shift_k(k: np.ndarray, values: np.ndarray, decades: float) -> np.ndarray:
    """``values`` (along ``k``, axis 0) moved ``decades`` up in ``k``: at ``k`` the value the
    real table has at ``k / 10^decades`` (the end values held beyond the grid)."""
    lk = np.log10(k)
    vals = np.asarray(values, dtype=float)
    if vals.ndim == 1:
        return np.interp(lk - decades, lk, vals)
    return np.stack([np.interp(lk - decades, lk, col) for col in vals.T], axis=1)


def _edit_grid(folder: Path, table: str, rows: Callable[[pd.DataFrame], pd.Series],
               change: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]) -> None:
    """Rewrite the ``value`` of the rows ``rows(df)`` (a ``k`` x ``t`` grid) by
    ``change(k, t, grid)``."""
    def edit(df: pd.DataFrame) -> pd.DataFrame:
        sel = rows(df)
        wide = df[sel].pivot(index="k", columns="t", values="value")
        new = change(wide.index.to_numpy(dtype=float), wide.columns.to_numpy(dtype=float),
                     wide.to_numpy(dtype=float))
        long = pd.DataFrame(new, index=wide.index, columns=wide.columns).stack()
        key = pd.MultiIndex.from_arrays([df.loc[sel, "k"], df.loc[sel, "t"]])
        df.loc[sel, "value"] = long.reindex(key).to_numpy()
        return df

    edit_table(folder, table, edit)


def _deep(quantity: str) -> Callable[[pd.DataFrame], pd.Series]:
    return lambda df: (df["panel"] == "deep-feature-learning") & (df["quantity"] == quantity)


def _fig3_shifted(cfg: Any, folder: Path) -> None:
    for q in ("alpha_eff", "alpha_eff_t_inf"):
        _edit_grid(folder, "fig3.parquet", _deep(q),
                   lambda k, t, v: _shift_k(k, v, 0.4))


def _fig3_first_layer(cfg: Any, folder: Path) -> None:
    s = cfg.settings()["deep-feature-learning"]
    _edit_grid(folder, "fig3.parquet", _deep("alpha_eff"),
               lambda k, t, v: theory.alpha_eff_first_layer(s, k[:, None], t[None, :]))
    _edit_grid(folder, "fig3.parquet", _deep("alpha_eff_t_inf"),
               lambda k, t, v: theory.alpha_eff_first_layer(s, k, np.inf)[:, None])


def _t_inf_from_last_time(df: pd.DataFrame) -> pd.DataFrame:
    """The ``alpha_eff(t = inf)`` rows of every panel replaced by its grid's last time."""
    for panel in df["panel"].unique():
        grid = df[(df["panel"] == panel) & (df["quantity"] == "alpha_eff")]
        last = grid[grid["t"] == grid["t"].max()].set_index("k")["value"]
        sel = (df["panel"] == panel) & (df["quantity"] == "alpha_eff_t_inf")
        df.loc[sel, "value"] = last.reindex(df.loc[sel, "k"]).to_numpy()
    return df


_alpha_eff = theory.alpha_eff
#: fig3's claim against the ODE oracle (its key).
_FIG3_ORACLE = "every panel: alpha_eff against the ODE oracle (max |difference|)"

FIG3_WRONG = (
    WrongModel("deep panel shifted 0.4 decade", "the deep panel's exponent shifted 0.4 decade "
               "up in k (every boundary 2.5 times too high: e.g. a lambda_k off by that "
               "factor)", _fig3_shifted,
               catches=("(a) k_cross(t)", "(a) k_learn(t)", "(a) k_layer(t)")),
    WrongModel("Eq. (84) for Eq. (12)", "the deep panel computed with the second layer frozen "
               "(Eq. 84, the neighbouring equation) instead of both layers trained (Eq. 12)",
               _fig3_first_layer),
    WrongModel("theory clock x2", "every time-dependent theory function the run and the "
               "claims call (alpha_eff, rho, eta, zeta, region, the boundaries) at twice the "
               "time: a theory clock off by 2 (e.g. nu = 2N, or t counted per half step)",
               _rewrite("fig3.parquet"), kind="clock",
               patch=_clock(_FIG3_TIMED, _FIG3_BOUNDS, 2.0),
               catches=(_FIG3_ORACLE, "(a)-(c) boundaries in time: Eq. (181) by quadrature at "
                        "k_b(t) gives t (max decades off)")),
    WrongModel("mode index from 0", "alpha_eff of mode k + 1 written at k: a 0-based mode "
               "index inside the exponent's closed form (lambda_k = lambda0 (k + 1)^-alpha), "
               "which the figure and the claims both read",
               _rewrite("fig3.parquet"), kind="convention",
               patch={"specdyn.theory.alpha_eff": lambda s, k, t: _alpha_eff(
                   s, np.asarray(k, dtype=float) + 1.0, t)},
               catches=(_FIG3_ORACLE,)),
    WrongModel("teacher not normalised", "every panel's setting with mu0 = 1 instead of App. "
               "G's 1/zeta(alpha + beta) (gamma0 = ratio S / theta0 then off by sqrt(zeta(2)), "
               "every rate by zeta(2) = 1.64), in the table and in the claims' theory",
               _rewrite("fig3.parquet"), kind="wrong-inputs", patch=_UNNORMALISED,
               catches=(_FIG3_ORACLE,)),
    WrongModel("t = inf read at t_max", "alpha_eff(t = inf) written from the grid's last "
               "time (a quantity read at the wrong step): the modes not learned by t_max "
               "carry their transient exponent", table_edit("fig3.parquet",
                                                             _t_inf_from_last_time),
               kind="attribution",
               catches=("every panel: alpha_eff(t = inf) against the fixed-point formula "
                        "(max |difference|)",)),
)


def _fig5_noise(cfg: Any, folder: Path) -> None:
    rng = np.random.default_rng(derive_seed(20261205, "fig5 noise"))  # the wrong model's own

    def noisy(df: pd.DataFrame) -> pd.DataFrame:
        early = df["t"] < df["t"].max()
        df.loc[early, "value"] *= np.exp(0.5 * rng.standard_normal(int(early.sum())))
        return df

    edit_table(folder, "fig5.parquet", noisy)


def _fig5_both_layers(cfg: Any, folder: Path) -> None:
    s = cfg.setting()
    edit_table(folder, "fig5.parquet", lambda df: df.assign(
        value=theory.rho(s, df["k"].to_numpy(dtype=float), df["t"].to_numpy(dtype=float))))


#: The first-layer convention error: c = sigma_a^2 / gamma0 in place of Eq. (80)'s
#: sigma_a^2 / gamma0^2, inside the helper every first-layer closed form calls.
_LOG_C_WRONG = {"specdyn.theory.first_layer._log_c":
                lambda s: 2.0 * float(np.log(s.sigma_a)) - float(np.log(s.gamma0))}


def _first_layer_classes(table: str, oracle: str, clock: str) -> tuple[WrongModel, ...]:
    """fig5's and fig6's wrong models by class: a theory clock off by 2, a convention error
    inside Eq. (80)'s ``c``, the teacher not normalised."""
    return (
        WrongModel("theory clock x2", "every time-dependent first-layer function the run and "
                   "the claims call (Eqs. 84, 98, the regions, k_learn, k2, k_cross at twice "
                   "the time, t* at half): a theory clock off by 2", _rewrite(table),
                   kind="clock", patch=_clock(_FL_TIMED, _FL_BOUNDS, 2.0, star=True),
                   catches=(oracle, clock)),
        WrongModel("c = sigma_a^2 / gamma0", "Eq. (80)'s c = sigma_a^2 / gamma0^2 written "
                   "sigma_a^2 / gamma0 inside the helper every first-layer closed form calls "
                   "(the figure's and the claims' theory alike)", _rewrite(table),
                   kind="convention", patch=_LOG_C_WRONG, catches=(oracle,)),
        WrongModel("teacher not normalised", "the setting with mu0 = 1 instead of App. G's "
                   "1/zeta(alpha + beta) (c off by zeta(2) = 1.64: a faster clock, the same "
                   "k1), in the table and in the claims' theory", _rewrite(table),
                   kind="wrong-inputs", patch=_UNNORMALISED, catches=(oracle,)),
    )


FIG5_WRONG = (
    WrongModel("noise before the last time", "every time before the last replaced by "
               "noise (the spectrum times a log-normal factor, sd 0.5 in log)", _fig5_noise,
               catches=("every time: R_k = 1 at Eq. (112)'s k_cross(t) (max decades off)",)),
    WrongModel("Eq. (12) for Eq. (84)", "both layers trained (Eq. 12, the neighbouring "
               "equation) instead of the second layer frozen (Eq. 84)", _fig5_both_layers,
               catches=("last time: local exponent at k = 1",)),
    *_first_layer_classes(
        "fig5.parquet", "every time: rho_k(t) against the ODE oracle of Eq. (69) (max |log "
        "ratio|)", "modes' R_k = 1 times against the quadrature of Eq. (69) (max decades off)"),
)


def _fig6_grid(change: Callable[[Any, np.ndarray, np.ndarray, np.ndarray], np.ndarray]) -> Any:
    def apply(cfg: Any, folder: Path) -> None:
        _edit_grid(folder, "fig6.parquet", lambda df: df["quantity"] == "alpha_eff_first_layer",
                   lambda k, t, v: change(cfg, k, t, v))
    return apply


def _fig6_capped(df: pd.DataFrame) -> pd.DataFrame:
    sel = (df["quantity"] == "alpha_eff_first_layer") & (df["region"] == "II")
    df.loc[sel, "value"] = np.minimum(df.loc[sel, "value"], 2.6)
    return df


def _k_learn_at_ninety(s: Any, t: Any) -> np.ndarray:
    """Eq. (100)'s k_learn(t) at Sec. 3.2's learned fraction 0.9 (z = ln 10) instead of App.
    C's 1 - 1/e (z = 1): the time divided by ln 10."""
    return np.asarray(_K_LEARN(s, np.asarray(t, dtype=float) / np.log(10.0)))


_K_LEARN = theory.k_learn_first_layer


FIG6_WRONG = (
    WrongModel("Region II capped at 2.6", "Region II's local exponent capped at 2.6 (the "
               "paper: 3 alpha + beta = 4)",
               table_edit("fig6.parquet", _fig6_capped),
               catches=("Region II: peak alpha_eff nearer 3alpha + beta than alpha + beta",)),
    WrongModel("k shifted 0.3 decade", "the exponent map shifted 0.3 decade up in k (every "
               "boundary a factor 2 too high)",
               _fig6_grid(lambda cfg, k, t, v: _shift_k(k, v, 0.3))),
    WrongModel("Eq. (12) for Eq. (84)", "the exponent of both layers trained (Eq. 12, the "
               "neighbouring equation) in place of the second layer frozen (Eq. 84)",
               _fig6_grid(lambda cfg, k, t, v: theory.alpha_eff(cfg.setting(), k[:, None],
                                                                t[None, :]))),
    *_first_layer_classes(
        "fig6.parquet", "every time: alpha_eff against the ODE oracle of Eq. (69) (max "
        "|difference|)", "boundaries in time: k_learn(t), k2(t), (k1, t*) against the ODE "
        "oracle (max |difference|)"),
    WrongModel("labels at l = 0.9", "the region labels built from k_learn(t) at Sec. 3.2's "
               "learned fraction 0.9 (z = ln 10), the drawn k_learn(t) curve at App. C's 1 - "
               "1/e (patched inside theory.first_layer only)", _rewrite("fig6.parquet"),
               catches=("region labels: III learned, II not, by the ODE (share disagreeing)",),
               kind="convention",
               patch={"specdyn.theory.first_layer.k_learn_first_layer": _k_learn_at_ninety}),
)
