"""What the regime map reads off each cell's ``simulate`` table, and the label of a cell
by an independent evaluation.

Pure functions of one table (its ``preact``, ``rho_theory``, ``alpha_fit`` and
``alpha_fit_theory`` rows): the learned part over the initial one, the exponent change at
the end, the time the exponent change reaches half its largest value; and a cell's regime
from the ODE of its strongest mode (:func:`ode_label`), which shares no code with
:func:`specdyn.theory.regime`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from specdyn.experiments.regime_map.config import RegimeMapConfig
from specdyn.experiments.theory_figures import oracle
from specdyn.settings import PowerLawSetting


def learned_ratio(run: pd.DataFrame) -> tuple[float, float]:
    """``(simulation, theory)``: the largest ``R_k(t) = rho_k(t) / rho_k(0) - 1`` over the
    ranks and checkpoints of one ``simulate`` table (its ``preact`` and ``rho_theory``
    rows): the learned part over the initial part of the representation (core Eq. 16,
    ``R_k = Delta eta_k / sigma_w^2``), measured on the simulated spectrum itself."""
    out = []
    for q in ("preact", "rho_theory"):
        wide = (run[run["quantity"] == q].pivot(index="t", columns="k", values="value")
                .sort_index().to_numpy(dtype=float))
        with np.errstate(divide="ignore", invalid="ignore"):
            r = wide / wide[0] - 1.0
        out.append(float(np.max(r)) if r.size and np.all(np.isfinite(r)) else float("nan"))
    return out[0], out[1]


def spectrum_deviation(run: pd.DataFrame) -> float:
    """Root mean square over the ranks and checkpoints of ``log(rho_sim / rho_theory)`` of
    one ``simulate`` table (``preact`` against ``rho_theory``): the size of the finite-width
    deviation of the spectrum itself (NaN where a value is not positive)."""
    wide = {q: run[run["quantity"] == q].pivot(index="t", columns="k", values="value")
            .sort_index() for q in ("preact", "rho_theory")}
    sim, th = wide["preact"].to_numpy(dtype=float), wide["rho_theory"].to_numpy(dtype=float)
    if sim.shape != th.shape or not (np.all(sim > 0) and np.all(th > 0)):
        return float("nan")
    return float(np.sqrt(np.mean(np.log(sim / th) ** 2)))


def half_time(t: np.ndarray, alpha_fit: np.ndarray) -> float:
    """The first time ``|alpha_fit(t) - alpha_fit(0)|`` reaches half its largest value,
    ``log t`` interpolated linearly between the two checkpoints around it (NaN if the
    exponent never changes or the crossing is not bracketed by positive times)."""
    t, a = np.asarray(t, dtype=float), np.asarray(alpha_fit, dtype=float)
    d = np.abs(a - a[0])
    top = float(np.nanmax(d)) if d.size else float("nan")
    if not top > 0:
        return float("nan")
    i = int(np.nonzero(d >= 0.5 * top)[0][0])
    if i == 0 or t[i - 1] <= 0:
        return float("nan")
    f = (0.5 * top - d[i - 1]) / (d[i] - d[i - 1])
    return float(np.exp(np.log(t[i - 1]) + f * (np.log(t[i]) - np.log(t[i - 1]))))


def exponent_times(run: pd.DataFrame) -> dict[str, float]:
    """Of one ``simulate`` table: the simulated and the theory's :func:`half_time`
    (``t_half``, ``t_half_theory``) and the simulated exponent change at the last
    checkpoint (``delta_alpha_end``, beside the largest, ``delta_alpha``)."""
    out: dict[str, float] = {}
    for q, name in (("alpha_fit", "t_half"), ("alpha_fit_theory", "t_half_theory")):
        sub = run[run["quantity"] == q].sort_values("t")
        a = sub["value"].to_numpy(dtype=float)
        out[name] = half_time(sub["t"].to_numpy(dtype=float), a)
        if q == "alpha_fit":
            out["delta_alpha_end"] = float(abs(a[-1] - a[0])) if a.size else float("nan")
    return out


#: Mode 1 is taken as settled after this many of its relaxation times ``1 / b_1``.
SETTLED = 200.0


def ode_label(alpha: float, beta: float, sigma_w: float, sigma_a: float,
              gamma0_ratio: float) -> str:
    """A cell's regime from the ODE of its strongest mode (Eqs. 144-145, App. G's inputs
    written out), integrated until settled: "lazy" when its learned part stays below the
    initial one (``R_1 < 1``: Eq. 33's "even for the strongest teacher mode"),
    "feature-learning" when it does not and ``sigma_a > sigma_w`` and ``xi_1 > S`` (the
    second layer's share ``u_1 > 1``: the strict forms of Sec. 3.2.4's two conditions),
    "intermediate" otherwise."""
    s = oracle.app_g_setting(alpha, beta, sigma_w, sigma_a, gamma0_ratio)
    rate = s.lambda0 * np.hypot(s.S, 2.0 * s.gamma0 * np.sqrt(s.mu0)) / s.gamma0**2
    g = oracle.gram(s, 1.0, np.array([SETTLED / rate]))
    r1 = (float(g["eta"][0]) - s.sigma_w**2) / s.sigma_w**2
    if r1 < 1.0:
        return "lazy"
    if s.sigma_a > s.sigma_w and float(g["xi"][0]) > s.S:
        return "feature-learning"
    return "intermediate"


def theory_labels(cfg: RegimeMapConfig, ratios: np.ndarray, gammas: np.ndarray) -> pd.DataFrame:
    """``theory.regime`` label of every (ratio, gamma) pair, one row each."""
    from specdyn import theory

    rows = []
    for r in ratios:
        for g in gammas:
            s = PowerLawSetting.paper(r * cfg.sigma_a, g, alpha=cfg.alpha, beta=cfg.beta,
                                      sigma_a=cfg.sigma_a, D=cfg.D)
            rows.append({"sigma_ratio": float(r), "gamma_ratio": float(g),
                         "regime": theory.regime(s).label})
    return pd.DataFrame(rows)


def cell_labels(cfg: RegimeMapConfig, points: pd.DataFrame) -> list[str]:
    """``theory.regime`` label of each row's ``(sigma_ratio, gamma_ratio)``."""
    return [str(theory_labels(cfg, np.array([r]), np.array([g]))["regime"].iloc[0])
            for r, g in zip(points["sigma_ratio"], points["gamma_ratio"], strict=True)]
