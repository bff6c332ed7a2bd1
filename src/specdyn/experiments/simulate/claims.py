"""simulate's claims: pure functions of its table and config.

The tolerances are fixed here before the run; :func:`simulate_claims` checks them on
``simulate.parquet``, the replicas' ``t = 0`` spectra, ``simulate_init.parquet``, and the
clock replicas' ``xi_k``, ``simulate_clock.parquet`` (:mod:`~specdyn.experiments.simulate.clock`).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from specdyn.experiments.linear_figures.claims import oracle_claim
from specdyn.experiments.linear_figures.readings import (
    initial_deviation_level,
    oracle_ranks,
    rms_log_deviation,
)
from specdyn.experiments.simulate.clock import CLOCK_TABLE, clock_claim, diagonal
from specdyn.experiments.simulate.config import SimulateConfig
from specdyn.runs.claims import Claim, sized, within
from specdyn.theory.discrete import grams_gd

#: median over ranks of |log rho_sim / rho_theory| at the last checkpoint. Seed spread of the
#: quick size, measured on seeds 1-3 (not the judged seed 0): 0.029, 0.030, 0.017; 0.1 is
#: 3.3 times the largest and half the log(1.25) = 0.22 of a 25 % scale error.
SPECTRUM_TOL = 0.1
SPECTRUM_REVISED = ("issue 40: 0.25 -> 0.1, after the quick (0.028) and --full (0.020) runs: "
                    "0.25 let every eigenvalue 1.25 times too large pass; 0.1 from the spread "
                    "of seeds 1-3 (0.017-0.030)")
#: |max_t |alpha_fit(t) - alpha_fit(0)|: simulation - theory|.
CHANGE_TOL = 0.15
#: max over the checkpoints of |alpha_fit(t): simulation - theory|: the exponent at every
#: time, not only its largest change. Seeds 1-3 (not the judged seed 0) measured 0.044,
#: 0.033, 0.027; 0.1 is 2.3 times the largest (a quarter of the 0.44 by which an exponent
#: that jumps to its final value is off at the first checkpoint).
TRACK_TOL = 0.1
#: The table of the ``init_replicas`` networks' ``t = 0`` spectra (``replica, k, value``, ...).
INIT_TABLE = "simulate_init.parquet"
#: Independent initialisations (numpy, not the engine) whose deviation from Eq. (12) at
#: t = 0 sets the size the run's must have (:func:`initial_deviation_draws`).
INIT_DRAWS = 64
#: The networks' mean t = 0 deviation (the run's and its ``init_replicas``') over the
#: draws' mean. One network's (RMS over ranks, 0.081 at the quick size) has an sd of 13.7 %
#: (seeds 1-16, D = 32 ranks: about 1/sqrt(2 D) = 12.5 %), so one alone allowed only a factor
#: 1.5 (3 log-sd), which a network at twice its width (0.71 of the deviation) passed. The
#: mean of 17 networks has 3.3 %, the draws' mean of 64 1.7 %: 1.15 is 3.8 sd of their
#: ratio. Deviations 1.25 times their size fail, or 0.71 of it; a simulation equal to its
#: theory (0) always. With ``init_replicas = 0`` the run's own alone, within 1.5.
INIT_FACTOR = 1.15
INIT_FACTOR_ALONE = 1.5
INIT_REVISED = ("issue 47: the run's own t = 0 deviation within 1.5 -> the mean over it and "
                "16 more networks from the same engine within 1.15, after a referee's wrong "
                "model (the network at width 2N, 0.71 of the deviation) passed; 64 numpy "
                "draws for 32; the factor from the sd of one network's deviation (seeds "
                "1-16, measured before the first claim), seed 0's replicas not read for it")
#: App. D, Eq. (148): the flow conserves eta_k - zeta_k; GD breaks it by its step, by the
#: discrete-time theory's amount (each step multiplies eta - zeta by 1 - c^2 g^2). The
#: simulated drift of sum_k (eta_k - zeta_k) over that amount, seeds 1-8 of the quick size
#: (not the judged seed 0), measured before this claim: 0.944-1.033 (finite N moves it):
#: 1.15 is 1.7 times the largest departure.
DRIFT_FACTOR = 1.15
#: Under the flow (``method="flow"``) the drift is the solver's: |drift| / |sum (eta -
#: zeta)| at most this.
FLOW_DRIFT_TOL = 1e-6


def simulate_claims(df: pd.DataFrame, cfg: SimulateConfig,
                    init: pd.DataFrame | None = None,
                    clock: pd.DataFrame | None = None) -> list[Claim]:
    """simulate's claims, a pure function of its table ``simulate.parquet`` and the
    replicas' ``t = 0`` spectra ``init`` (``replica, k, value``, ...; ``None`` or empty: the
    run's own ``t = 0`` alone) and the clock replicas' ``xi_k`` ``clock`` (``replica, step, k,
    quantity, value``; ``None`` or empty: the run's own clock alone).

    Uses the rows ``preact`` (simulated spectrum by rank), ``rho_theory``, the Gram
    diagonals ``xi, eta, zeta`` (teacher basis) and the fitted exponents ``alpha_fit`` /
    ``alpha_fit_theory``.
    """
    def series(q: str) -> pd.DataFrame:
        return df[df.quantity == q].sort_values(["t", "k"])

    def wide(q: str) -> pd.DataFrame:
        return series(q).pivot(index="t", columns="k", values="value").sort_index()

    sim, th = series("preact"), series("rho_theory")
    t_end = sim.t.max()
    last_sim = sim[sim.t == t_end].value.to_numpy()
    last_th = th[th.t == t_end].value.to_numpy()
    ok = last_sim > 0
    med = float(np.median(np.abs(np.log(last_sim[ok] / last_th[ok])))) if ok.any() else \
        float("nan")
    a_sim, a_th = series("alpha_fit").value.to_numpy(), series("alpha_fit_theory").value.to_numpy()
    change = float(np.nanmax(np.abs(a_sim - a_sim[0])) - np.nanmax(np.abs(a_th - a_th[0])))
    gap = np.abs(a_sim - a_th)
    worst = int(np.argmax(np.where(np.isfinite(gap), gap, np.inf))) if gap.size else 0
    times = series("alpha_fit").t.to_numpy()
    t0 = sim.t.min()
    init_th = th[th.t == t0].sort_values("k")
    devs = [rms_log_deviation(sim[sim.t == t0].sort_values("k").value.to_numpy(),
                              init_th.value.to_numpy())]
    for _, rep in (init.groupby("replica") if init is not None else []):
        ranks = rep.sort_values("k")
        devs.append(rms_log_deviation(
            ranks.value.to_numpy(),
            init_th.set_index("k").value.reindex(ranks.k).to_numpy()))
    init_dev = float(np.mean(devs))
    init_factor = INIT_FACTOR if len(devs) > 1 else INIT_FACTOR_ALONE
    init_mean, init_sd = initial_deviation_level(cfg.setting(), cfg.N, cfg.M, INIT_DRAWS,
                                                 cfg.seed)
    return [
        within("end: median |log rho_sim/rho_theory|", med, 0.0, SPECTRUM_TOL,
               source="core Sec. 3.1",
               note="'the analytical solution closely matches finite-width networks'; over "
                    "ranks 1..D at the last checkpoint; finite N and GD separate them; "
                    "tolerance from the spread of seeds 1-3 (0.017-0.030)",
               revised=SPECTRUM_REVISED, revised_how="tighter"),
        within("every checkpoint: |fitted exponent: simulation - theory|",
               float(gap[worst]) if gap.size else float("nan"), 0.0, TRACK_TOL,
               source="core Sec. 3.1",
               note=f"the fitted exponent over ranks {cfg.kmin}..{cfg.kmax} follows the "
                    f"theory's at each of the {gap.size} checkpoints, worst at t = "
                    f"{float(times[worst]) if gap.size else float('nan'):.3g}; tolerance from "
                    "the spread of seeds 1-3 (0.027-0.044)"),
        within("exponent change: simulation - theory", change, -CHANGE_TOL, CHANGE_TOL,
               source="core Sec. 3.1",
               note=f"'the exponent measured over a finite range of modes can change during "
                    f"training': max_t |alpha_fit(t) - alpha_fit(0)| over ranks "
                    f"{cfg.kmin}..{cfg.kmax}, simulation against the exact theory"),
        sized("t = 0: deviation from the theory has the finite-size size", init_dev,
              init_mean, init_factor, source="core Sec. 3.1",
              predicted_by=f"the mean over {INIT_DRAWS} independent numpy initialisations at "
                           f"N = {cfg.N}, M = {cfg.M or 'inf'} (sd {init_sd:.3g})",
              revised=INIT_REVISED, revised_how="tighter",
              note=f"RMS over ranks of log rho_sim(0) / (sigma_w^2 lambda_k), the mean over "
                   f"{len(devs)} networks (the run and {len(devs) - 1} more from its engine, "
                   f"{INIT_TABLE}): a finite network starts off Eq. (12) by the Wishart "
                   "spread of its Gram (and of the sample covariance at finite M), so a "
                   "simulation equal to its theory fails, and so do fluctuations 1.25 times "
                   "their size or a network of twice the width; factor from one network's sd "
                   "(13.7 %, seeds 1-16) over the networks and draws",
              key="t = 0 deviation: finite-size size"),
        _drift_claim(df, cfg),
        clock_claim(df, cfg, clock),
        replace(oracle_claim(th.rename(columns={"value": "rho_theory"}), cfg,
                             what="the closed form the figure draws and the claims read",
                             partner="end: median |log rho_sim/rho_theory|"),
                name=f"theory rows = ODE integration of Eqs. (144)-(145), ranks "
                     f"{oracle_ranks(cfg.D)}", key="theory rows: ODE oracle"),
    ]


def _drift_claim(df: pd.DataFrame, cfg: SimulateConfig) -> Claim:
    """App. D, Eq. (148): the drift of sum_k (eta_k - zeta_k) from t = 0 to the end."""
    eta, zeta = diagonal(df, "eta"), diagonal(df, "zeta")
    inv = (eta - zeta).sum(axis=1).to_numpy(dtype=float)
    drift = float(inv[-1] - inv[0]) if inv.size else float("nan")
    name = "App. D, Eq. (148): sum_k (eta_k - zeta_k) moves only by the GD step"
    if cfg.method == "flow":
        return within(name, abs(drift) / max(abs(inv[0]), 1e-300) if inv.size else np.nan,
                      0.0, FLOW_DRIFT_TOL, source="core App. D, Eq. (148)",
                      note="gradient flow conserves eta_k - zeta_k; relative drift of the sum "
                           "from t = 0 to the end", key="eta - zeta: drift")
    s = cfg.setting()
    k = eta.columns.to_numpy(dtype=float)
    g = grams_gd(s, k, np.asarray([0, int(eta.index.max())]), cfg.time_step())
    predicted = float(np.sum((g["eta"] - g["zeta"])[1] - (g["eta"] - g["zeta"])[0]))
    return sized(name, drift, predicted, DRIFT_FACTOR, source="core App. D, Eq. (148)",
                 predicted_by="the discrete-time theory (GD with the run's dt at N = M = inf, "
                              "each step multiplies eta - zeta by 1 - c^2 g^2)",
                 note="the flow conserves eta_k - zeta_k (Eq. 148); a GD step breaks it at "
                      "second order in dt, by the amount its map predicts: a simulation "
                      "equal to its (flow) theory drifts by 0 and fails, a run at another "
                      "step size or clock drifts by another amount; factor from seeds 1-8 "
                      "(0.944-1.033)", key="eta - zeta: drift")


def simulate_claims_of(cfg: SimulateConfig, folder: Path) -> list[Claim]:
    """simulate's claims on the tables a run wrote to ``folder`` (for the registry; a folder
    written before the replicas were recorded has the run's own ``t = 0`` and clock alone)."""
    init, clock = folder / INIT_TABLE, folder / CLOCK_TABLE
    return simulate_claims(pd.read_parquet(folder / "simulate.parquet"), cfg,
                           pd.read_parquet(init) if init.exists() else None,
                           pd.read_parquet(clock) if clock.exists() else None)
