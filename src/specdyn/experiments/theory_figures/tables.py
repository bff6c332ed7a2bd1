"""The theory figures' tables: the closed-form theory on each config's grid, as fig3, fig5
and fig6 write them (and as a wrong model writes them again with a patched theory)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from specdyn import theory
from specdyn.experiments.theory_figures.claims_independent import MODE_QUANTITIES
from specdyn.experiments.theory_figures.config import Fig3Config, FirstLayerConfig
from specdyn.experiments.theory_figures.readings import (
    SINH_GRID,
    SINH_MODES,
    SINH_POINTS,
    sequence_modes,
    sinh_x,
)
from specdyn.settings import PowerLawSetting

#: The panels fig3 draws, by setting (the other settings are checked by claims, not drawn),
#: and the boundaries drawn on them.
FIG3_TITLES = {"deep-feature-learning": "(a) deep feature learning",
               "fig2-setting": "(b) the paper's Fig. 2 setting",
               "lazy-below-bound": "(c) lazy, below the Eq. (33) bound"}

def _grid_frame(panel: str, k: np.ndarray, t: np.ndarray, quantity: str,
                values: np.ndarray) -> pd.DataFrame:
    K, T = np.meshgrid(k, t, indexing="ij")
    return pd.DataFrame({"panel": panel, "k": K.ravel(), "t": T.ravel(), "quantity": quantity,
                         "value": np.asarray(values, dtype=np.float64).ravel()})


def _curve_frame(panel: str, t: np.ndarray, quantity: str, values: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({"panel": panel, "k": values, "t": t, "quantity": quantity,
                         "value": values})


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


def fig5_table(cfg: FirstLayerConfig) -> pd.DataFrame:
    """fig5's table: ``rho_first_layer`` (Eq. 84) on the config's ``(k, t)`` grid and at
    ``t = 0``."""
    k, t_grid = cfg.axes()
    t = np.concatenate([[0.0], t_grid])
    rho = theory.rho_first_layer(cfg.setting(), k[None, :], t[:, None])
    K, T = np.meshgrid(k, t, indexing="xy")
    return pd.DataFrame({"k": K.ravel(), "t": T.ravel(), "quantity": "rho_first_layer",
                         "value": rho.ravel()})


def fig6_parts(cfg: FirstLayerConfig) -> tuple[np.ndarray, ...]:
    s = cfg.setting()
    k, t = cfg.axes()
    labels = theory.region_first_layer(s, k[:, None], t[None, :])
    aeff = theory.alpha_eff_first_layer(s, k[:, None], t[None, :])
    return k, t, labels, aeff


def fig6_bounds(cfg: FirstLayerConfig, t: np.ndarray) -> dict[str, np.ndarray]:
    s = cfg.setting()
    return {"k_learn": theory.k_learn_first_layer(s, t), "k1": np.full_like(t, theory.k1(s)),
            "k2": theory.k2(s, t)}


def fig6_table(cfg: FirstLayerConfig) -> pd.DataFrame:
    """fig6's table: ``alpha_eff_first_layer`` (Eq. 98) on the config's ``(k, t)`` grid with
    its ``region`` label (Eq. 113), and the boundaries ``k_learn(t)``, ``k1``, ``k2(t)``."""
    k, t, labels, aeff = fig6_parts(cfg)
    frames = [_grid_frame("first-layer", k, t, "alpha_eff_first_layer", aeff)]
    frames += [_curve_frame("first-layer", t, b, kb) for b, kb in fig6_bounds(cfg, t).items()]
    df = pd.concat(frames, ignore_index=True)
    df["region"] = pd.Series(dtype="string")
    df.loc[: labels.size - 1, "region"] = labels.ravel()
    return df
