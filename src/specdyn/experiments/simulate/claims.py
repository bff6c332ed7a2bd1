"""simulate's claims: pure functions of its table and config.

The tolerances are fixed here before the run; :func:`simulate_claims` checks them on
``simulate.parquet``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from specdyn.experiments.simulate.config import SimulateConfig
from specdyn.runs.claims import Claim, within

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


def simulate_claims(df: pd.DataFrame, cfg: SimulateConfig) -> list[Claim]:
    """simulate's claims, a pure function of its table ``simulate.parquet``.

    Uses the rows ``preact`` (simulated spectrum by rank), ``rho_theory`` and the
    fitted exponents ``alpha_fit`` / ``alpha_fit_theory``.
    """
    def series(q: str) -> pd.DataFrame:
        return df[df.quantity == q].sort_values(["t", "k"])

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
    return [
        within("end: median |log rho_sim/rho_theory|", med, 0.0, SPECTRUM_TOL,
               source="core Sec. 3.1",
               note="'the analytical solution closely matches finite-width networks'; over "
                    "ranks 1..D at the last checkpoint; finite N and GD separate them; "
                    "tolerance from the spread of seeds 1-3 (0.017-0.030)",
               revised=SPECTRUM_REVISED),
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
    ]


def simulate_claims_of(cfg: SimulateConfig, folder: Path) -> list[Claim]:
    """simulate's claims on the table a run wrote to ``folder`` (for the registry)."""
    return simulate_claims(pd.read_parquet(folder / "simulate.parquet"), cfg)
