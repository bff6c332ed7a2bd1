"""fig4's claims: pure functions of its tables and config.

Every tolerance, dispute and revision record is fixed here before the run;
:func:`fig4_claims` checks them on ``fig4_slopes.parquet`` (and ``fig4.parquet`` for
the learning order).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from specdyn.experiments.nonlinear_figures.config import Fig4Config
from specdyn.runs.claims import OWN, Claim, learning_order, within

# fig4's claims: every tolerance fixed before the run.
#: The slope at t = 0 is the initialisation's, whatever the dynamics: a sanity check.
INIT_SANITY = ("a claim -> a sanity check (issue 40): the slope at t = 0 is the "
               "initialisation's, the same for any model of the dynamics (a wrong one passes "
               "it); the --full record's copy was checked as a claim")
#: |fitted slope - target| for the endpoints the core paper names (alpha at t = 0 and in the
#: lazy regime, alpha + beta at the end of feature learning).
SLOPE_TOL = 0.1
#: max over recorded times of |simulated slope - a theory's slope, same fit, same times|.
AGREE_TOL = 0.15
#: The feature-learning slope moves by at least this fraction of beta ...
CHANGE_MIN = 0.5
#: ... and the lazy slope by at most this fraction of the feature-learning change (core Fig. 4).
LAZY_RATIO_MAX = 1 / 3
#: Why the project does not expect the core paper's Sec. 3.3 statements at fig4's fit range
#: (the theory numbers for ReLU, D = 64, ranks 2..24, computed before the claims were written).
FINAL_DISPUTED = ("the learned spectrum over the fit range mixes Region IIIb (k < k_l = 4 at "
                  "gamma0, 16 at gamma0/c1: exponent alpha + beta/2) with IIIa; over the quick "
                  "ranks 2..24 the linear theory itself ends at 1.75 (1.65 at gamma0/c1)")
LINEAR_DISPUTED = ("ReLU's linear part has slope c1 = 1/2, so the student follows the linear "
                   "theory at gamma0/c1 (own claim below), not at gamma0")
LAZY_DISPUTED = ("at gamma0/c1 = 2 gamma0 the paper's lazy setting crosses the Eq. (33) bound "
                 "(k_u = 1.33 > 1): the effective theory's slope moves by 0.24")


#: Rank correlation of each rank's half-learning time with the rank (Sec. 3.3); a pilot run
#: (quick size, seed 1, before the claim was written) measured 0.992.
ORDER_MIN = 0.9
#: The share of the recorded times (the last ones) over which fig4's slope change must last.
LATE_SHARE = 0.25
CHANGE_REVISED = ("b6f669e (issue 30): max_t |slope(t) - slope(0)| >= 0.5 beta -> min over "
                  "the last 25 % of the recorded times of slope(t) - slope(0) >= 0.5 beta: a "
                  "shuffled slope series keeps its max change, not a lasting one; changed "
                  "after the mutation test (0.68 on the quick run seen)")


def lasting_change(slope: np.ndarray, late_share: float = LATE_SHARE) -> float:
    """Minimum of ``slope`` over its last ``late_share`` of entries (time order), less its
    first entry: how far the slope has moved and stayed moved."""
    n = max(int(np.ceil(late_share * (slope.size - 1))), 1)
    return float(np.min(slope[-n:]) - slope[0]) if slope.size >= 2 else float("nan")


def fig4_claims(slopes: pd.DataFrame, cfg: Fig4Config,
                spectra: pd.DataFrame | None = None) -> list[Claim]:
    """fig4's claims, a pure function of its table ``fig4_slopes.parquet``.

    ``slopes`` has ``regime`` (``feature-learning``, ``lazy``), ``t``, ``slope_sim``,
    ``slope_linear_theory`` (at the paper's gamma0) and
    ``slope_linear_theory_effective_gamma0`` (at gamma0/c1), one row per recorded time.
    ``spectra``, when given, is ``fig4.parquet`` (``regime, t, quantity, k, value``): the
    feature-learning run's preactivation spectrum, read for the learning order.
    """
    def run(regime: str) -> pd.DataFrame:
        return slopes[slopes.regime == regime].sort_values("t")

    fl, lz = run("feature-learning"), run("lazy")
    a, ab = cfg.alpha, cfg.alpha + cfg.beta
    fl_change = float(np.abs(fl.slope_sim - fl.slope_sim.iloc[0]).max())
    fl_lasting = lasting_change(fl.slope_sim.to_numpy())
    lz_change = float(np.abs(lz.slope_sim - lz.slope_sim.iloc[0]).max())
    lin_dev = float(max(np.abs(r.slope_sim - r.slope_linear_theory).max() for r in (fl, lz)))
    fit = f"slope fitted over ranks {cfg.kmin}..{cfg.kmax}"
    claims = [
        within("feature learning: slope at t = 0 is alpha", float(fl.slope_sim.iloc[0]),
               a - SLOPE_TOL, a + SLOPE_TOL, source="core Sec. 3.3",
               note=f"'its exponent evolves from alpha ...'; {fit}", sanity=True,
               revised=INIT_SANITY),
        within("feature learning: final slope is alpha + beta", float(fl.slope_sim.iloc[-1]),
               ab - SLOPE_TOL, ab + SLOPE_TOL, source="core Sec. 3.3",
               note=f"'... to alpha + beta over a finite range of modes'; {fit} at t = "
                    f"{float(fl.t.iloc[-1]):g}", disputed=FINAL_DISPUTED),
        within("lazy: slope stays at alpha (max over t of |slope - alpha|)",
               float(np.abs(lz.slope_sim - a).max()), 0.0, SLOPE_TOL, source="core Sec. 3.3",
               note=f"'in the lazy regime it remains at alpha'; {fit}", disputed=LAZY_DISPUTED),
        within("max |sim - linear theory at gamma0| (both regimes)", lin_dev, 0.0, AGREE_TOL,
               source="core Sec. 3.3",
               note="'these results agree quantitatively with the predictions of the linear "
                    "theory'; same fit, same times", disputed=LINEAR_DISPUTED),
        within("feature learning: lasting slope change (late minimum - slope at t = 0)",
               fl_lasting, CHANGE_MIN * cfg.beta, np.inf, source="core Fig. 4",
               note=f"min over the last {LATE_SHARE:.0%} of the recorded times of slope(t), "
                    f"less slope(0): the slope changes in the feature-learning regime and "
                    f"stays changed (max_t |slope(t) - slope(0)| = {fl_change:.3g})",
               revised=CHANGE_REVISED),
        within("lazy / feature-learning slope change",
               lz_change / fl_change if fl_change > 0 else float("nan"), 0.0, LAZY_RATIO_MAX,
               source="core Fig. 4", note="the lazy slope 'remains close to its initial value'",
               partner="feature learning: lasting slope change (late minimum - slope at t = 0)"),
    ]
    claims += [within(f"{name}: max |sim - linear theory at gamma0/c1|",
                      float(np.abs(r.slope_sim - r.slope_linear_theory_effective_gamma0).max()),
                      0.0, AGREE_TOL, source=OWN,
                      note="the effective theory: c1 = E[phi'(h)] at the initial "
                           "preactivations rescales gamma0; same fit, same times")
               for name, r in (("feature-learning", fl), ("lazy", lz))]
    if spectra is not None:
        pre = spectra[(spectra.regime == "feature-learning") & (spectra.quantity == "preact")]
        wide = pre.pivot(index="t", columns="k", values="value").sort_index()
        ranks = np.arange(cfg.kmin, cfg.kmax + 1)
        claims.append(within(
            "feature learning: modes learn from low to high k (rank correlation)",
            learning_order(wide.index.to_numpy(dtype=float),
                           wide.reindex(columns=ranks).to_numpy(dtype=float), ranks),
            ORDER_MIN, 1.0, source="core Sec. 3.3",
            note=f"'the spectrum changes successively from low to high mode index': rank "
                 f"correlation of each rank's half-learning time with the rank, {fit}; "
                 f"{ORDER_MIN:g} fixed from a pilot run (quick size, seed 1: 0.992)"))
    return claims


def fig4_claims_of(cfg: Fig4Config, folder: Path) -> list[Claim]:
    """fig4's claims on the tables a run wrote to ``folder`` (for the registry)."""
    return fig4_claims(pd.read_parquet(folder / "fig4_slopes.parquet"), cfg,
                       pd.read_parquet(folder / "fig4.parquet"))
