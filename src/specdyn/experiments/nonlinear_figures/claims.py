"""fig4's claims: pure functions of its tables and config.

Every tolerance, dispute and revision record is fixed here before the run;
:func:`fig4_claims` checks them on ``fig4_slopes.parquet`` (and ``fig4.parquet`` for
the learning order).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd

from specdyn.experiments.linear_figures.readings import (
    initial_deviation,
    initial_deviation_level,
)
from specdyn.experiments.nonlinear_figures.config import Fig4Config
from specdyn.experiments.theory_figures.oracle import app_g_setting
from specdyn.measure.exponents import fit_exponents
from specdyn.runs.claims import OWN, Claim, learning_order, sized, within
from specdyn.theory.effective import NAMED_ACTIVATIONS
from specdyn.theory.oracles import gram_ode

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
#: Why the core paper's Sec. 3.3 statements are not expected here, with the evidence (the
#: exact linear theory at the paper's Fig. 4 setting, computed before these texts).
FINAL_DISPUTED = ("theory at the premise: at the paper's Fig. 4 feature-learning setting "
                  "(sigma_w = 0.1, gamma0 = 2 S/theta0) Region IIIa's alpha + beta needs R_k >> "
                  "1 (k << 400) and u_k << 1 (k >> 4) at once; the exact linear theory's "
                  "alpha_eff(k, t) of learned modes stays below 1.84 (t = inf, D = 512: max "
                  "1.835, at gamma0 and at gamma0/c1) and is within 0.1 of 2 only on the "
                  "moving learning front (47 ranks from k = 37 at t = 3000, from k = 92 at "
                  "1e4, gamma0/c1), on its way down from 3 alpha + beta; over the fit range the "
                  "theory itself ends at 1.75 (1.65 at gamma0/c1): no finite range of modes "
                  "settles at alpha + beta")
LINEAR_DISPUTED = ("convergence study: the student's distance from the linear theory at gamma0 "
                   "is 0.724 at the quick size (D = 64, N = M = 512) and 0.517 at the paper's "
                   "(--full, D = 512, N = 8192, M = 4096), while its distance from the linear "
                   "theory at gamma0/c1 falls from 0.089 to 0.022: the student converges to the "
                   "latter (ReLU's linear part c1 = 1/2 doubles gamma0), which is itself about "
                   "0.5 from the former at the paper's size")
LAZY_DISPUTED = ("theory at the premise: the lazy regime needs gamma0 << the Eq. (33) bound "
                 "sqrt(sigma_w^2 (2 sigma_w^2 + sigma_a^2))/theta0 = 1.73/theta0; the paper's "
                 "Fig. 4 lazy setting is gamma0 = 1/theta0, and a ReLU student acts as the "
                 "linear network at gamma0/c1 = 2/theta0, past the bound (k_u = 1.33 > 1): that "
                 "theory's slope over the fit range moves by 0.24 (the student's by 0.22 quick, "
                 "0.14 --full)")
#: Independent initialisations (numpy) whose t = 0 deviation from Eq. (12) sets the size the
#: feature-learning run's must have (:func:`initial_deviation_draws`).
INIT_DRAWS = 32
#: The run's t = 0 deviation over the draws' mean: 64 draws at the quick size measured a
#: log-sd of 4.4 % (min / max 0.89 / 1.11 of the mean; the sample covariance's tail at D/M =
#: 1/8 sets most of it), the engine's own t = 0 on seeds 4-27 (not the judged 0) a mean of
#: 0.251 against the draws' 0.255 and an sd of 4.0 % (seeds 1-3: 0.272, 0.226, 0.256): 1.2
#: is 4 log-sd. Fluctuations 1.5 times their size fail, and so does a simulation equal to
#: its theory (0).
INIT_FACTOR = 1.2
#: The clock: the checkpoint where the feature-learning slope peaks less the effective
#: theory's, within this many log-spaced checkpoints (one is a factor 1.23 in t; a run at
#: half the speed peaks about 3 later). Seeds 1-3 of the quick size (not the judged 0): 0.
PEAK_CHECKPOINTS = 1
#: |slope| of the effective theory's column against the independent evaluation (ODE per
#: rank, c1 by adaptive quadrature): round-off and the ODE's tolerance.
ORACLE_TOL = 1e-6

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
               revised=INIT_SANITY, revised_how="restated"),
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
               revised=CHANGE_REVISED, revised_how="tighter"),
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
    peak = (float(int(np.argmax(fl.slope_sim.to_numpy()))
                  - int(np.argmax(fl.slope_linear_theory_effective_gamma0.to_numpy())))
            if len(fl) and np.isfinite(fl.slope_sim).all() else float("nan"))
    claims.append(within("feature learning: peak checkpoint of the slope, simulation - "
                         "effective theory", peak, -PEAK_CHECKPOINTS, PEAK_CHECKPOINTS,
                         source=OWN, aspect="clock",
                         note="index of the checkpoint where the fitted slope peaks (the "
                              "transient through Region II) less the linear theory's at "
                              "gamma0/c1: the transient's time, to the resolution of the "
                              "log-spaced checkpoints; a run at half the speed peaks later",
                         key="clock: slope peak"))
    claims.append(within("effective theory's slopes = an independent evaluation (ODE per rank, "
                         "c1 by quadrature)", effective_oracle(fl, cfg), 0.0, ORACLE_TOL,
                         source=OWN, aspect="oracle",
                         note="max over the recorded times of |slope| of the table's linear "
                              "theory at gamma0/c1 (feature learning) against the same fit of "
                              "theory.oracles.gram_ode at gamma0 / c1, c1 = E[h phi(h)] / q by "
                              "adaptive quadrature (scipy.integrate.quad): the function the "
                              "figure draws and the effective claims read, evaluated a second "
                              "way", key="effective theory: oracle",
                         partner="feature-learning: max |sim - linear theory at gamma0/c1|"))
    if spectra is not None:
        pre = spectra[(spectra.regime == "feature-learning") & (spectra.quantity == "preact")]
        t0 = pre[pre.t == pre.t.min()].sort_values("k")
        s_fl = cfg.settings()["feature-learning"]
        init_mean, init_sd = initial_deviation_level(s_fl, cfg.N, cfg.M, INIT_DRAWS, cfg.seed)
        claims.append(sized(
            "feature learning, t = 0: deviation from the theory has the finite-size size",
            initial_deviation(t0, s_fl, "value"),
            init_mean, INIT_FACTOR, source=OWN,
            predicted_by=f"the mean over {INIT_DRAWS} independent numpy initialisations at "
                         f"N = {cfg.N}, M = {cfg.M} (sd {init_sd:.3g})",
            note="RMS over ranks of log rho_sim(0) / (sigma_w^2 lambda_k): the student starts "
                 "off the theory by the Wishart spread of its first layer and of the sample "
                 "covariance, so a simulation equal to its theory fails, and so do "
                 "fluctuations 1.5 times their size; factor from 64 draws (log-sd 4.4 %)",
            key="t = 0 deviation: finite-size size"))
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


def independent_c1(activation: str, var: float) -> float:
    """``c1 = E[h phi(h)] / var`` for ``h ~ N(0, var)`` by adaptive quadrature (not the
    Gauss-Hermite rule of :func:`specdyn.theory.linear_coefficient`)."""
    from scipy.integrate import quad

    phi = NAMED_ACTIVATIONS[activation]
    sd = float(np.sqrt(var))

    def f(h: float) -> float:
        return float(h * phi(np.asarray(h)) * np.exp(-0.5 * h * h / var)
                     / (np.sqrt(2 * np.pi) * sd))

    return float(sum(quad(f, a, b, limit=200)[0] for a, b in ((-np.inf, 0.0), (0.0, np.inf)))
                 / var)


def effective_oracle(fl: pd.DataFrame, cfg: Fig4Config) -> float:
    """Largest |slope_linear_theory_effective_gamma0 - the same fit of an ODE-integrated
    spectrum at gamma0 / c1 (c1 by quadrature)| over the feature-learning run's times."""
    # App. G's inputs written out, not cfg.settings(): a convention error in the setting the
    # students, the theory columns and the claims share fails here
    s = dataclasses.replace(app_g_setting(cfg.alpha, cfg.beta, cfg.fl_sigma_w, cfg.sigma_a,
                                          cfg.fl_gamma0_ratio), D=cfg.D)
    if cfg.activation not in NAMED_ACTIVATIONS:
        return float("nan")
    var = cfg.fl_sigma_w**2 * float(np.sum(np.arange(1, cfg.D + 1, dtype=float) ** -cfg.alpha))
    c1 = independent_c1(cfg.activation, var)
    eff = dataclasses.replace(s, gamma0=s.gamma0 / c1)
    t = fl.t.to_numpy(dtype=float)
    rho = np.stack([gram_ode(eff, float(k), t)["rho"] for k in range(1, cfg.kmax + 1)], axis=1)
    dev = np.abs(fit_exponents(rho, cfg.kmin, cfg.kmax)
                 - fl.slope_linear_theory_effective_gamma0.to_numpy(dtype=float))
    return float(dev.max()) if np.all(np.isfinite(dev)) else float("nan")


def fig4_claims_of(cfg: Fig4Config, folder: Path) -> list[Claim]:
    """fig4's claims on the tables a run wrote to ``folder`` (for the registry)."""
    return fig4_claims(pd.read_parquet(folder / "fig4_slopes.parquet"), cfg,
                       pd.read_parquet(folder / "fig4.parquet"))
