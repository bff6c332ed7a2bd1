"""The plain ``simulate`` experiment: train the two-layer linear network on one setting.

One run of :func:`specdyn.sim.linear.train_linear` on a
:class:`~specdyn.settings.PowerLawSetting` in the paper's units
(``PowerLawSetting.paper``: ``lambda0 = 1``, ``mu0 = 1/zeta(alpha+beta)``,
``gamma0 = gamma0_ratio * S / theta0``), beside the exact infinite-width theory
at the same times. It is the unit that sweeps vary: every field is a plain
value, so ``specdyn sweep`` can put an axis on any of them.

Table (tidy rows ``step, t, k, quantity, value``): the trajectory's
``preact`` spectrum (rank ``k``), Gram diagonals ``xi, eta, zeta`` (mode ``k``),
``loss`` (``k = 0``); ``rho_theory`` (the closed form ``rho_k(t)``, Eq. 12, at
``k = 1..D``), and the fitted exponents ``alpha_fit`` / ``alpha_fit_theory``
(``k = 0``): the power-law exponent fitted over ranks ``kmin..kmax``
(:func:`specdyn.measure.exponents.fit_exponents`, weights ``1/k``).

Beside it, ``simulate_init.parquet`` (``replica`` and the same columns): the ``t = 0``
spectra of ``init_replicas`` more networks from the same engine (:func:`init_replica_table`;
none at infinite width and samples); ``simulate_clock.parquet``: ``xi_k`` of the first ranks
of ``clock_replicas`` networks trained the whole run, for the clock
(:func:`~specdyn.experiments.simulate.clock.clock_replica_table`).

Summary: final loss, the fitted exponent at ``t = 0`` and at the end, the
largest change ``delta_alpha = max_t |alpha_fit(t) - alpha_fit(0)|`` in the
simulation and in the theory, and the theory's regime label.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn import io
from specdyn.experiments.simulate.claims import INIT_TABLE, simulate_claims_of
from specdyn.experiments.simulate.clock import CLOCK_TABLE, clock_replica_table
from specdyn.experiments.simulate.config import SimulateConfig, full_simulate
from specdyn.experiments.simulate.wrong import SIMULATE_WRONG
from specdyn.runs.registry import ExperimentResult, Measured, register
from specdyn.sim.protocol import derive_seed


def init_replica_table(cfg: SimulateConfig) -> pd.DataFrame:
    """The ``t = 0`` spectra of ``cfg.init_replicas`` networks initialised by the run's
    engine, each from its own node ``("init-replica", r)`` of the run seed: one step of
    :func:`specdyn.sim.linear.train_linear` each, its first checkpoint kept. Tidy rows
    ``replica, step (0), t (0), k, quantity ("preact_init"), value``; none at ``N = M = inf``,
    where every network starts on Eq. (12) exactly."""
    from specdyn.sim.linear import train_linear

    s = cfg.setting()
    reps = cfg.init_replicas if cfg.finite() else 0
    frames = []
    for r in range(reps):
        traj = train_linear(s, cfg.N, cfg.M, 1, dt=cfg.time_step(), method=cfg.method,
                            engine=cfg.engine, checkpoints=2, dtype=cfg.dtype,
                            seed=derive_seed(cfg.seed, "init-replica", r), progress=False)
        frames.append(pd.DataFrame({"replica": r, "step": 0, "t": 0.0,
                                    "k": np.arange(1, cfg.D + 1), "quantity": "preact_init",
                                    "value": traj.spectra[0]}))
    cols = ["replica", "step", "t", "k", "quantity", "value"]
    return pd.concat(frames, ignore_index=True)[cols] if frames else pd.DataFrame(columns=cols)


@register("simulate", "two-layer linear network on a power-law setting, beside the exact "
          "theory", SimulateConfig, full=full_simulate, claims=simulate_claims_of,
          wrong_models=SIMULATE_WRONG,
          wrong_na={"temperature": "full-batch GD (or its flow) on a fixed sample or the "
                                   "population: no noise, no temperature"},
          measured={"simulate.parquet": Measured(
              ("value",), by=("quantity",),
              where={"quantity": ("preact", "alpha_fit", "xi", "eta", "zeta")}),
              INIT_TABLE: Measured(("value",)), CLOCK_TABLE: Measured(("value",))})
def run_simulate(cfg: SimulateConfig, out_dir: Path) -> ExperimentResult:
    """Train, compare with the theory, write the tidy table (and a figure)."""
    from specdyn import theory
    from specdyn.measure.exponents import fit_exponents
    from specdyn.sim.linear import train_linear

    s = cfg.setting()
    traj = train_linear(s, cfg.N, cfg.M, cfg.steps, dt=cfg.time_step(), method=cfg.method,
                        engine=cfg.engine, checkpoints=cfg.checkpoints, seed=cfg.seed,
                        dtype=cfg.dtype, progress=False)
    k = np.arange(1, cfg.D + 1, dtype=np.float64)
    rho_th = theory.rho(s, k, traj.times[:, None])  # (n, D), decreasing in k (Appendix F)
    a_sim = fit_exponents(traj.spectra, cfg.kmin, cfg.kmax)
    a_th = fit_exponents(rho_th, cfg.kmin, cfg.kmax)
    n = len(traj.times)
    frames = [
        traj.to_frame(),
        pd.DataFrame({"step": np.repeat(traj.steps, cfg.D), "t": np.repeat(traj.times, cfg.D),
                      "quantity": "rho_theory", "k": np.tile(np.arange(1, cfg.D + 1), n),
                      "value": rho_th.ravel()}),
        pd.DataFrame({"step": traj.steps, "t": traj.times, "quantity": "alpha_fit", "k": 0,
                      "value": a_sim}),
        pd.DataFrame({"step": traj.steps, "t": traj.times, "quantity": "alpha_fit_theory",
                      "k": 0, "value": a_th}),
    ]
    df = pd.concat(frames, ignore_index=True)[["step", "t", "k", "quantity", "value"]]
    tables = [io.write_table(df, out_dir / "simulate.parquet")]
    for table, name in ((init_replica_table(cfg), INIT_TABLE),
                        (clock_replica_table(cfg), CLOCK_TABLE)):
        if len(table):
            tables.append(io.write_table(table, out_dir / name))
    figures: list[Path] = []
    if cfg.figure:
        from specdyn.plot import save_figure
        from specdyn.plot.theory import spectra_over_time

        # t = 0 and about seven log-spaced checkpoints: every curve stays readable
        pick = np.unique(np.r_[0, np.round(np.geomspace(1, n - 1, 7)).astype(int)])
        fig = spectra_over_time(k, traj.times[pick], traj.spectra[pick], theory=rho_th[pick],
                                data_label=f"simulation, N = {cfg.N}, M = {cfg.M or 'inf'}",
                                title=f"simulation (markers) beside the exact theory (lines): "
                                      f"$\\sigma_w$={cfg.sigma_w:g}, "
                                      f"$\\gamma_0\\theta_0/S$={cfg.gamma0_ratio:g}, "
                                      f"D = {cfg.D}")
        figures = save_figure(fig, out_dir / "simulate")
    summary: dict[str, Any] = {
        "final_loss": float(traj.loss[-1]),
        "alpha_fit_initial": float(a_sim[0]),
        "alpha_fit_final": float(a_sim[-1]),
        "delta_alpha": float(np.nanmax(np.abs(a_sim - a_sim[0]))),
        "delta_alpha_theory": float(np.nanmax(np.abs(a_th - a_th[0]))),
        "regime": theory.regime(s).label,
        "gamma0": s.gamma0,
        "dt": cfg.time_step(),
        "t_end": float(traj.times[-1]),
    }
    ok = traj.spectra[-1] > 0
    summary["final_median_abs_log"] = float(
        np.median(np.abs(np.log(traj.spectra[-1, ok] / rho_th[-1, ok]))))
    return ExperimentResult("simulate", out_dir, figures=figures, tables=tables,
                            summary=summary)
