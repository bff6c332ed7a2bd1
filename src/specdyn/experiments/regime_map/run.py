"""The regime map of the core paper: lazy vs feature learning over two ratios.

Axes: ``r = sigma_w / sigma_a`` and ``g = gamma0 theta0 / S`` (``S = sigma_w^2 +
sigma_a^2``), the two dimensionless numbers of Section 3.2 / Appendix E.4.
Three panels on the same axes:

(a) theory's classification :func:`specdyn.theory.regime` on a fine grid;
(b) the exponent change measured in simulation: for every grid point a
    ``simulate`` run (finite-width two-layer linear network, exact Gram GD),
    ``delta_alpha = max_t |alpha_fit(t) - alpha_fit(0)|`` of the fitted exponent
    of the representation spectrum over ranks ``kmin..kmax``; every point also runs
    at ``spread_seeds`` more seeds, whose deviations from the theory are the size the
    judged run's should have (not drawn);
(c) the same number from the exact infinite-width theory at the same times.

Boundaries drawn on every panel (with ``sigma_a`` fixed these depend on r only):

- lazy (Eq. 33 at equality, ``k_u = 1``):
  ``gamma0 theta0 = sqrt(sigma_w^2 (2 sigma_w^2 + sigma_a^2))``, i.e.
  ``g = r sqrt(2 r^2 + 1) / (1 + r^2)``;
- feature learning (strict forms of ``sigma_a >> sigma_w`` and
  ``gamma0 >> S / theta0``): ``g = 1`` for ``r < 1``, and ``r = 1``.

The simulations run as a sweep (``specdyn.runs.sweep``) into
a hidden folder beside the result, named after the grid, so an interrupted
map resumes where it stopped; a finished map keeps it as ``out_dir/sweep``.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import shutil
from pathlib import Path

import numpy as np
import pandas as pd

from specdyn import io, runs
from specdyn.experiments.regime_map.claims import regime_map_claims_of
from specdyn.experiments.regime_map.config import RegimeMapConfig, full_regime_map
from specdyn.experiments.regime_map.readings import (
    cell_labels,
    exponent_times,
    learned_ratio,
    spectrum_deviation,
    theory_labels,
)
from specdyn.experiments.regime_map.wrong import REGIME_MAP_WRONG, REGIME_MAP_WRONG_NA
from specdyn.runs.registry import ExperimentResult, Measured, register
from specdyn.theory.boundaries import feature_boundary, lazy_boundary


def _points(cfg: RegimeMapConfig, rec: pd.DataFrame, sweep_dir: Path) -> pd.DataFrame:
    """One row a grid point: the judged seed's run and its readings, the spread seeds'
    deviations from the theory, the theory's label."""
    from specdyn.runs import store

    def data(rid: str) -> pd.DataFrame:
        return pd.read_parquet(store.data_path(sweep_dir, rid))

    key = ["sigma_w", "gamma0_ratio"]
    judged = rec[rec["seed"] == cfg.seed].sort_values(key).reset_index(drop=True)
    tables = [data(rid) for rid in judged["run_id"]]
    learned = [learned_ratio(d) for d in tables]
    times = pd.DataFrame([exponent_times(d) for d in tables])
    spread = rec[rec["seed"] != cfg.seed].copy()
    spread["dev"] = spread["summary.delta_alpha"] - spread["summary.delta_alpha_theory"]
    spread["spec"] = [spectrum_deviation(data(rid)) for rid in spread["run_id"]]
    by_cell = spread.groupby(key)[["dev", "spec"]].agg(lambda x: float(np.sqrt(np.mean(x**2))))
    by_cell = by_cell.reindex(pd.MultiIndex.from_frame(judged[key]))
    points = pd.DataFrame({
        "sigma_ratio": judged["sigma_w"] / cfg.sigma_a,
        "gamma_ratio": judged["gamma0_ratio"],
        "delta_alpha": judged["summary.delta_alpha"],
        "delta_alpha_theory": judged["summary.delta_alpha_theory"],
        "delta_alpha_end": times["delta_alpha_end"],
        "t_half": times["t_half"],
        "t_half_theory": times["t_half_theory"],
        "spec_dev": [spectrum_deviation(d) for d in tables],
        "dev_spread": by_cell["dev"].to_numpy(),
        "spec_dev_spread": by_cell["spec"].to_numpy(),
        "final_loss": judged["summary.final_loss"],
        "R_max": [r[0] for r in learned],
        "R_max_theory": [r[1] for r in learned],
        "run_id": judged["run_id"],
    }).sort_values(["sigma_ratio", "gamma_ratio"]).reset_index(drop=True)
    points.insert(2, "regime", cell_labels(cfg, points))
    return points


@register("regime-map", "lazy vs feature-learning regime over (sigma_w/sigma_a, "
          "gamma0 theta0/S): theory's classification beside the exponent change measured "
          "in simulation", RegimeMapConfig, full=full_regime_map,
          claims=regime_map_claims_of, wrong_models=REGIME_MAP_WRONG,
          wrong_na=REGIME_MAP_WRONG_NA,
          measured={"regime-map.parquet": Measured(("delta_alpha", "R_max", "t_half",
                                                    "spec_dev"))})
def run_regime_map(cfg: RegimeMapConfig, out_dir: Path) -> ExperimentResult:
    """Sweep ``simulate`` over the grid, then draw the three panels."""
    from specdyn.plot import new_figure, save_figure
    from specdyn.plot.phase import Boundary, phase_diagram
    from specdyn.runs import store
    from specdyn.runs.spec import make_sweep
    from specdyn.runs.sweep import run_sweep

    ratios, gammas = cfg.ratios(), cfg.gammas()
    base = {k: v for k, v in cfg.simulate_base().items() if k != "seed"}
    spec = make_sweep("simulate", {"sigma_w": [float(r * cfg.sigma_a) for r in ratios],
                                   "gamma0_ratio": [float(g) for g in gammas]},
                      base=base, seeds=[cfg.seed + i for i in range(cfg.spread_seeds + 1)])
    executor = cfg.executor
    if executor == "local" and multiprocessing.current_process().daemon:
        executor = "inline"  # a pool worker may not start processes of its own
    # The sweep runs outside the run's transaction (out_dir is a fresh temporary folder
    # each time), in a hidden folder named after its grid, so that an interrupted map
    # resumes; a finished map moves it into its result.
    key = json.dumps(spec.to_dict(), sort_keys=True, default=str)
    grid = hashlib.sha256(key.encode()).hexdigest()[:12]
    sweep_dir = out_dir.parent / f".regime-map.sweep-{grid}"
    report = run_sweep(spec, sweep_dir, executor=executor, workers=cfg.workers or None)
    if report.failed:
        raise RuntimeError(f"{report.failed} simulations of the regime map failed; "
                           f"tracebacks in {sweep_dir / store.RUNS}")
    rec = runs.load_records(sweep_dir)
    rec = rec[rec["run_id"].isin([p.run_id for p in spec.points])]
    points = _points(cfg, rec, sweep_dir)
    table = io.write_table(points, out_dir / "regime-map.parquet")

    n = cfg.theory_resolution
    fine = theory_labels(cfg, np.geomspace(cfg.ratio_min, cfg.ratio_max, n),
                         np.geomspace(cfg.gamma_min, cfg.gamma_max, n))
    bounds = [Boundary("lazy boundary, Eq. (33)", lazy_boundary, "--"),
              Boundary(r"$\gamma_0\theta_0 = S$, $\sigma_w<\sigma_a$", feature_boundary, ":")]
    fig, axes = new_figure(3, 1, width=5.0, height=4.2, wspace=0.05)
    labels = {"lazy": "#8da0cb", "intermediate": "#e5c494", "feature-learning": "#fc8d62"}
    xl, yl = r"$\sigma_w/\sigma_a$", r"$\gamma_0\theta_0/S$"
    phase_diagram(fine, "sigma_ratio", "gamma_ratio", "regime", ax=axes[0], boundaries=bounds,
                  title="(a) theory: regime", xlabel=xl, ylabel=yl, value_label="regime",
                  label_colors=labels)
    vmax = float(np.nanmax(points[["delta_alpha", "delta_alpha_theory"]].to_numpy()))
    phase_diagram(points, "sigma_ratio", "gamma_ratio", "delta_alpha", ax=axes[1],
                  boundaries=bounds, title=f"(b) simulation, N={cfg.N}, D={cfg.D}",
                  xlabel=xl, ylabel=yl, value_label=r"max$_t|\Delta\alpha_{fit}|$",
                  vmin=0.0, vmax=vmax)
    phase_diagram(points, "sigma_ratio", "gamma_ratio", "delta_alpha_theory", ax=axes[2],
                  boundaries=bounds, title="(c) exact theory (N = inf)", xlabel=xl, ylabel=yl,
                  value_label=r"max$_t|\Delta\alpha_{fit}|$", vmin=0.0, vmax=vmax)
    figures = save_figure(fig, out_dir / "regime-map")

    by = points.groupby("regime")["delta_alpha"]
    summary: dict[str, object] = {
        "points": len(points),
        "max_abs_sim_minus_theory": float(
            np.max(np.abs(points["delta_alpha"] - points["delta_alpha_theory"]))),
    }
    for label, vals in by:
        summary[f"delta_alpha_{label}_max"] = float(vals.max())
        summary[f"delta_alpha_{label}_min"] = float(vals.min())
    shutil.move(str(sweep_dir), str(out_dir / "sweep"))
    return ExperimentResult("regime-map", out_dir, figures=figures, tables=[table],
                            summary=summary)
