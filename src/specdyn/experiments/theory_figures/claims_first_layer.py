"""fig5's and fig6's claims (second layer frozen, Appendices B-C): pure functions of a
table and its config.

Every tolerance and revision record is fixed here before the run; :func:`fig5_claims` and
:func:`fig6_claims` check them on ``fig5.parquet`` and ``fig6.parquet`` (the ``*_of``
functions read those from a run's folder, for the registry). Beside the paper's
statements, each holds the closed forms its figure draws (Eq. 84, Eq. 98, the boundaries
of App. C) against independent evaluations (:mod:`~.oracle`: App. G's inputs written
out, the ODE of Eq. 69, a quadrature of it), in time and on levels.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from specdyn import theory
from specdyn.experiments.theory_figures import oracle
from specdyn.experiments.theory_figures.claims import EXIST_DECADES, PLATEAU_REVISED
from specdyn.experiments.theory_figures.config import PLATEAU_TOL, FirstLayerConfig
from specdyn.experiments.theory_figures.readings import (
    BOUNDARY_MARGIN,
    cross_front,
    first_layer_offsets,
    plateau_span,
    rise_share,
    smallest_growth,
)
from specdyn.runs.claims import Claim, within
from specdyn.settings import PowerLawSetting

#: fig6: |log10(k where alpha_eff passes halfway / the boundary)|, decades: stated as a
#: fifth of the decade the boundary is kept from the grid's edge and from t*
#: (BOUNDARY_MARGIN), below the 0.3 decade of a boundary shifted by a few tenths. fig5's
#: R = 1 front reads against the same tolerance.
FIRST_LAYER_TOL = 0.2
FIRST_LAYER_REVISED = ("issue 40: <= 0.5 -> <= 0.2 decade, after the quick and --full runs "
                       "measured 0.17 (k2), 0.06 (k_learn), 0.02 (k1), 0.06 (t*, k*): 0.5 "
                       "let the k axis shifted by 0.3 decade pass every boundary")
#: fig6's boundary claims: key of :func:`first_layer_offsets` -> (claim name, source).
FIRST_LAYER_BOUNDARIES = {
    "k2": ("Eq. (109) k2(t), t < t*", "core Eq. (109)"),
    "k_learn": ("Eq. (100) k_learn(t), t < t*", "core Eq. (100)"),
    "k1": ("Eq. (104) k1, t > t*", "core Eq. (104)"),
    "k_star": ("Eq. (111) (t*, k*)", "core Eq. (111)"),
}
#: fig6's Region II claim: alpha_eff lies above alpha + beta over at least this share of the
#: region's widest extent along k (the crossovers at its two ends may take the rest).
RISE_SHARE = 0.5
RISE_REVISED = ("b6f669e (issue 30): max alpha_eff over the Region II cells -> the share of the "
                "region's widest k-extent where alpha_eff stays above alpha + beta, >= 0.5: "
                "the max of a shuffled grid passes; changed after the mutation test, the "
                "quick run's share (1.0) seen")
#: Eq. (113)'s Region II exponent at the setting that meets its premise sigma_w << sigma_a.
II_REVISED = ("issue 47: disputed at sigma_w = 0.1 (the Fig. 2 setting, 3.63 measured) -> "
              "held at sigma_w = 1e-3, the setting that meets the premise (the paper states "
              "none for Figs. 5-6): 3.92 at 1e-2 and 3.98 at 1e-3 were seen first")
#: fig5's claims at every time: the R = 1 front and the spectrum's growth.
FRONT_NAME = "every time: R_k = 1 at Eq. (112)'s k_cross(t) (max decades off)"
#: The smallest relative step of rho_k(t) from one time to the next: the learned part only
#: grows (Eq. 84); rounding of the closed form is below 1e-12 relative.
GROWTH_MIN = -1e-12
GROWTH_SANITY = ("issue 47: a claim -> a sanity check: Eq. (84)'s learned part (1 - e^-z)^2 "
                 "rises with t by construction, and a table frozen at t = 0 met it too")
#: The modes (nearest on the grid) that the first-layer claims evaluate independently.
ORACLE_MODES = (1.0, 10.0, 1e2, 1e4, 1e6, 1e8)
#: |log ratio| of Eq. (84) to the ODE of Eq. (69): the ODE's tolerances (rtol 1e-12, atol
#: 1e-15 gamma0 theta_k on xi) keep rho to 1e-11 relative; 1e-9.
ORACLE_RHO_TOL = 1e-9
#: |Eq. (98) - the ODE's rho differentiated in log k|: as fig3's (the oracle's own error
#: below 2.5e-5, :data:`~.oracle.FD_STEP`), 1e-4.
ORACLE_AEFF_TOL = 1e-4
#: fig5's clock: |log10| of the time mode k's learned part reaches its initial one (R = 1),
#: read off the table (log R interpolated in log t between its times), against the
#: quadrature of Eq. (69) to that level (xi = sigma_a sigma_w): log R is near-linear in log t
#: there (R ~ z^2, z << 1), so the interpolation error is far below the grid's step (0.05
#: decade quick); 0.01 decade, a thirtieth of a clock off by 2.
CLOCK_R_TOL = 0.01
#: fig6's clock: the boundaries in time. At (k_learn(t), t) and at (k1, t*) the learned
#: fraction xi / (gamma0 theta_k) is 1 - 1/e (z = 1, Eqs. 100, 111); at (k2(t), t) the
#: small-z ratio R (z / (1 - e^-z))^2 is 1 (Eq. 109): from the ODE of Eq. (69), with z = c
#: lambda_k t from App. G's inputs. |difference| <= 1e-8 (the ODE's 1e-11).
CLOCK_BOUNDARY_TOL = 1e-8
#: fig6's labels: at the oracle's modes and every time, a cell the table labels Region III
#: (learned, k < k_learn(t)) has the ODE's learned fraction xi / (gamma0 theta_k) above 1 -
#: 1/e (z > 1, Eq. 100) and a Region II cell (k_learn(t) < k < k_cross(t)) below it. Cells
#: within LABEL_MARGIN of 1 - 1/e are left out (the ODE's error is 1e-11 there); no other
#: cell may disagree.
LABEL_MARGIN = 1e-6
LABEL_REVISED = ("added after a referee's wrong model (issue 47: the labels built from "
                 "k_learn at Sec. 3.2's l = 0.9, the drawn curve at App. C's 1 - 1/e) passed "
                 "every claim; 0 disagreeing cells on the quick run seen in that test")
#: fig5's levels: Eq. (108)'s c lambda0^3 mu0 t^2 k^-(3 alpha + beta) where z = c lambda_k t
#: <= LEVEL_Z (its neglected (1 - e^-z)^2 / z^2 - 1 is at most z) and R >= LEVEL_R_MIN (so
#: that rho - rho(0) keeps its digits); Eq. (103)'s lambda0 mu0 k^-(alpha + beta) / c at the
#: last time where z >= 20 (neglected: 2 e^-z = 4e-9).
LEVEL_Z, LEVEL_R_MIN, LEVEL_TOL, LEVEL_LEARNED_TOL = 0.02, 1e-6, 0.05, 1e-6


def _oracle_setting(cfg: FirstLayerConfig) -> PowerLawSetting:
    return oracle.app_g_setting(cfg.alpha, cfg.beta, cfg.sigma_w, cfg.sigma_a, cfg.gamma0_ratio)


def _grid_modes(k: np.ndarray) -> list[float]:
    return sorted({float(k[int(np.argmin(np.abs(np.log(k / w))))]) for w in ORACLE_MODES
                   if k[0] <= w <= k[-1]})


def _crossing_time(t: np.ndarray, r: np.ndarray) -> float:
    """The first time ``r`` reaches 1, ``log r`` interpolated in ``log t`` (NaN if never or
    not bracketed by the positive times)."""
    pos = (t > 0) & np.isfinite(t)
    t, r = t[pos], r[pos]
    above = np.nonzero(r >= 1.0)[0]
    if not above.size or above[0] == 0 or not np.all(r[above[0] - 1: above[0] + 1] > 0):
        return float("nan")
    i = above[0]
    lt, lr = np.log(t[i - 1: i + 1]), np.log(r[i - 1: i + 1])
    return float(np.exp(lt[0] + (0.0 - lr[0]) * (lt[1] - lt[0]) / (lr[1] - lr[0])))


def fig5_claims(df: pd.DataFrame, cfg: FirstLayerConfig) -> list[Claim]:
    """fig5's claims, a pure function of its table ``fig5.parquet`` (``k, t, value``).

    The local exponent at the last time is the log-log slope of the table's spectrum
    between its first two and its last two modes; at every time, the front where the
    learned part equals the initial one (:func:`~.readings.cross_front`); against the ODE
    of Eq. (69): the spectrum at every time, and the time each mode's front passes; the
    levels of Eqs. (108) and (103).
    """
    s = cfg.setting()
    last = df[df.t == df.t.max()].sort_values("k")
    lk, lr = np.log(last.k.to_numpy()), np.log(last.value.to_numpy())
    lo, hi = -(lr[1] - lr[0]) / (lk[1] - lk[0]), -(lr[-1] - lr[-2]) / (lk[-1] - lk[-2])
    t_end = float(last.t.iloc[0])
    k_end = float(last.k.iloc[-1])
    tol = PLATEAU_TOL
    wide = df.pivot(index="t", columns="k", values="value").sort_index()
    t, k, rho = (wide.index.to_numpy(dtype=float), wide.columns.to_numpy(dtype=float),
                 wide.to_numpy(dtype=float))
    front = cross_front(k, t, rho, s)
    claims = [
        within(f"t = {t_end:g}: local exponent at k = 1", float(lo), s.alpha + s.beta - tol,
               s.alpha + s.beta + tol, source="core Eq. (113), Fig. 5",
               note="learned modes (Region III) carry alpha + beta; log-log slope between "
                    "the first two modes of the table", key="last time: local exponent at k = 1"),
        within(f"t = {t_end:g}: local exponent at k = {k_end:g}", float(hi), s.alpha - tol,
               s.alpha + tol, source="core Eq. (113), Fig. 5",
               note="modes not yet learned (Region I) keep alpha; log-log slope between the "
                    "last two modes of the table",
               key="last time: local exponent at the largest mode"),
        within(FRONT_NAME, float(np.abs(front).max()) if front.size else float("nan"), 0.0,
               FIRST_LAYER_TOL, source="core Eqs. (16), (112), Fig. 5",
               note=f"at each of the {front.size} times where k_cross lies "
                    f"{BOUNDARY_MARGIN:g} decade inside the grid and the time "
                    f"{BOUNDARY_MARGIN:g} decade from t* = {theory.t_star(s):.3g}: the largest "
                    "k with R_k = rho_k(t) / rho_k(0) - 1 >= 1 (the learned part at least the "
                    "initial one) against k2(t) before t*, k1 after; tolerance as fig6's "
                    "boundaries"),
        within("every time: the spectrum only grows (smallest step, relative)",
               smallest_growth(rho), GROWTH_MIN, np.inf, source="core Eq. (84), Fig. 5",
               note="min over modes and consecutive times of (rho_k(t') - rho_k(t)) / "
                    f"rho_k(0); {GROWTH_MIN:g} is rounding of the closed form; holds for any "
                    "table of Eq. (84) and for one frozen at t = 0", sanity=True,
               revised=GROWTH_SANITY, revised_how="restated"),
    ]
    # against the ODE of Eq. (69), from App. G's inputs written out
    so = _oracle_setting(cfg)
    modes = _grid_modes(k)
    with np.errstate(divide="ignore", invalid="ignore"):
        dev = [float(np.abs(np.log(rho[:, j] / oracle.rho_first_layer(so, km, t))).max())
               for km in modes for j in [int(np.argmin(np.abs(k - km)))]]
    claims.append(within(
        "every time: rho_k(t) against the ODE oracle of Eq. (69) (max |log ratio|)",
        float(np.max(dev)) if dev else float("nan"), 0.0, ORACLE_RHO_TOL,
        source="core Eq. (84), App. B", aspect="oracle",
        note=f"at the modes {', '.join(f'{m:.3g}' for m in modes)} and every one of the "
             f"{t.size} times of the table (rtol {oracle.ODE_RTOL:g})"))
    offs, used = [], []
    for km in modes:
        j = int(np.argmin(np.abs(k - km)))
        with np.errstate(divide="ignore", invalid="ignore"):
            found = _crossing_time(t, rho[:, j] / rho[0, j] - 1.0)
        level = so.sigma_a * so.sigma_w  # R = xi^2 / (sigma_a^2 sigma_w^2) = 1 (Eq. 76)
        ref = oracle.time_to_xi_first_layer(so, km, level)
        if np.isfinite(ref) and t[1] <= ref <= t[-1]:
            used.append(km)
            offs.append(abs(float(np.log10(found / ref))) if np.isfinite(found) else np.nan)
    claims.append(within(
        "modes' R_k = 1 times against the quadrature of Eq. (69) (max decades off)",
        float(np.max(offs)) if offs else float("nan"), 0.0, CLOCK_R_TOL,
        source="core Eqs. (16), (84)", aspect="clock",
        note=f"the time the learned part reaches the initial one (R = 1: xi = sigma_a sigma_w),"
             f" read off the table (log R interpolated in log t) at the modes "
             f"{', '.join(f'{m:.3g}' for m in used)}, against the quadrature of Eq. (69)"))
    c = s.sigma_a**2 / s.gamma0**2
    lam = s.lambda0 * k ** -s.alpha
    with np.errstate(divide="ignore", invalid="ignore"):
        z = c * lam[None, :] * t[:, None]
        r = rho / rho[0] - 1.0
        ratio = (rho - rho[0]) / (c * s.lambda0**3 * s.mu0 * t[:, None] ** 2
                                  * k[None, :] ** -(3 * s.alpha + s.beta))
        use = (t[:, None] > 0) & (z <= LEVEL_Z) & (r >= LEVEL_R_MIN)
        early = float(np.abs(np.log(ratio[use])).max()) if use.any() else float("nan")
        learned = (rho[-1] - rho[0]) / (s.lambda0 * s.mu0 * k ** -(s.alpha + s.beta) / c)
        late = z[-1] >= 20.0
        end = float(np.abs(np.log(learned[late])).max()) if late.any() else float("nan")
    claims.append(within(
        "Region II level, Eq. (108): rho_k(t) - rho_k(0) against c lambda0^3 mu0 t^2 "
        "k^-(3 alpha + beta) (max |log ratio|)", early, 0.0, LEVEL_TOL, source="core Eq. (108)",
        aspect="prefactor",
        note=f"over the {int(use.sum())} cells with z = c lambda_k t <= {LEVEL_Z:g} and R_k >= "
             f"{LEVEL_R_MIN:g}: the level and its t^2 (a clock off by 2 is a factor 4); "
             f"tolerance derived: the neglected (1 - e^-z)^2 / z^2 - 1 is at most z"))
    claims.append(within(
        f"t = {t_end:g}: learned level, Eq. (103): rho_k - rho_k(0) against lambda0 mu0 "
        "k^-(alpha + beta) / c (max |log ratio|)", end, 0.0, LEVEL_LEARNED_TOL,
        source="core Eq. (103)", aspect="prefactor",
        note=f"over the {int(late.sum())} modes with z >= 20 at the last time (c = sigma_a^2 / "
             f"gamma0^2 = {c:.4g}); neglected: 2 e^-z", key="last time: learned level"))
    return claims


def fig6_claims(df: pd.DataFrame, cfg: FirstLayerConfig) -> list[Claim]:
    """fig6's claims, a pure function of its table ``fig6.parquet``: the exact exponent
    (``alpha_eff_first_layer`` rows) in each region the table labels (``region``), where it
    changes regime against App. C's boundaries, and the exponent and the boundaries'
    clock against the ODE of Eq. (69)."""
    s = cfg.setting()
    grid = df[df.quantity == "alpha_eff_first_layer"]
    wide = grid.pivot(index="k", columns="t", values="value")
    k, aeff = wide.index.to_numpy(dtype=float), wide.to_numpy(dtype=float)
    t = wide.columns.to_numpy(dtype=float)
    labels = (grid.pivot(index="k", columns="t", values="region")
              .reindex(index=wide.index, columns=wide.columns).to_numpy().astype(str))
    exps = {"I": s.alpha, "II": 3 * s.alpha + s.beta, "III": s.alpha + s.beta}
    tol = PLATEAU_TOL
    claims = [within(f"Region {name} plateau (decades of k)",
                     plateau_span(k, aeff, labels, name, exps[name], tol), EXIST_DECADES,
                     np.inf, source="core Eq. (113), Fig. 6",
                     note=f"widest run along k, at any t, of Region {name} cells within {tol:g} "
                          f"of {exps[name]:g}", revised=PLATEAU_REVISED, revised_how="restated")
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
                         note="over every cell of the region, crossovers included: they take "
                              "much of it, so only its side of alpha + beta is claimed"))
    claims.append(within(
        "Region II rises above alpha + beta (share of its widest k-extent)",
        rise_share(k, aeff, labels, "II", s.alpha + s.beta), RISE_SHARE, 1.0,
        source="core Eq. (113), Fig. 6",
        note=f"widest run along k of Region II cells above alpha + beta, over the widest "
             f"run of Region II cells at any t, towards 3alpha+beta = {exps['II']:g}",
        revised=RISE_REVISED, revised_how="restated"))
    peak = float(aeff[labels == "II"].max()) if (labels == "II").any() else float("nan")
    mid = 0.5 * (exps["II"] + exps["III"])
    claims.append(within(
        "Region II: peak alpha_eff nearer 3alpha + beta than alpha + beta", peak, mid,
        exps["II"] + tol, source="core Eq. (113), Fig. 6",
        note=f"max alpha_eff over the Region II cells at least the midpoint {mid:g} of alpha + "
             f"beta and 3alpha + beta (and at most the plateau's tolerance above it); a "
             f"shuffled grid keeps a high cell in the region: its partner, the share of the "
             f"region above alpha + beta, does not",
        partner="Region II rises above alpha + beta (share of its widest k-extent)"))
    claims.append(within(
        "Region II plateau at 3alpha + beta (max alpha_eff in Region II)", peak,
        exps["II"] - tol, exps["II"] + tol, source="core Eq. (113), Fig. 6",
        note=f"Eq. (113) at sigma_w = {s.sigma_w:g} << sigma_a = {s.sigma_a:g} (its premise); "
             "a Region II one decade wide within the tolerance needs sigma_w ~ 1e-5 (the "
             "learned part over the initial one and the learned fraction cannot both be "
             "small enough over a decade of k >= 1), so the peak is claimed",
        revised=II_REVISED, revised_how="restated",
        partner="Region II rises above alpha + beta (share of its widest k-extent)"))
    # the first-layer boundaries (App. C): where the exact exponent changes regime
    offsets = first_layer_offsets(k, t, aeff, s)
    for key, (name, source) in FIRST_LAYER_BOUNDARIES.items():
        off = offsets[key]
        claims.append(within(
            f"{name}: alpha_eff changes regime there (max decades off)",
            float(np.abs(off).max()) if off.size else float("nan"), 0.0, FIRST_LAYER_TOL,
            source=source, revised=FIRST_LAYER_REVISED, revised_how="tighter",
            note=f"over {off.size} times where the boundary lies {BOUNDARY_MARGIN:g} decade "
                 f"inside the grid and the time {BOUNDARY_MARGIN:g} decade from t* = "
                 f"{theory.t_star(s):.3g} (Eq. 111: at the grid time nearest t*); measured "
                 f"where alpha_eff passes halfway between the two exponents it separates"))
    claims += _fig6_independent(df, cfg, k, t, aeff)
    return claims


def _fig6_independent(df: pd.DataFrame, cfg: FirstLayerConfig, k: np.ndarray, t: np.ndarray,
                      aeff: np.ndarray) -> list[Claim]:
    """fig6's exponent against the ODE (oracle) and its boundaries in time (clock)."""
    so = _oracle_setting(cfg)
    modes = _grid_modes(k)
    dev = [float(np.abs(aeff[int(np.argmin(np.abs(k - km)))]
                        - oracle.alpha_eff_first_layer(so, km, t)).max()) for km in modes]
    out = [within(
        "every time: alpha_eff against the ODE oracle of Eq. (69) (max |difference|)",
        float(np.max(dev)) if dev else float("nan"), 0.0, ORACLE_AEFF_TOL, source="core Eq. (98)",
        aspect="oracle",
        note=f"Eq. (69) integrated at every one of the {t.size} times (rtol "
             f"{oracle.ODE_RTOL:g}) from App. G's inputs written out, rho differentiated in "
             f"log k (step {oracle.FD_STEP:g}), at the modes "
             f"{', '.join(f'{m:.3g}' for m in modes)}")]
    labels = (df[df.quantity == "alpha_eff_first_layer"]
              .pivot(index="k", columns="t", values="region")
              .reindex(index=k, columns=t).to_numpy().astype(str))
    wrong, cells = 0, 0
    for km in modes:
        frac = oracle.learned_fraction_first_layer(so, km, t) - (1.0 - np.exp(-1.0))
        row = labels[int(np.argmin(np.abs(k - km)))]
        clear = np.abs(frac) > LABEL_MARGIN
        judged = clear & ((row == "III") | (row == "II"))
        wrong += int(np.sum(((row == "III") != (frac > 0)) & judged))
        cells += int(np.sum(judged))
    out.append(within(
        "region labels: III learned, II not, by the ODE (share disagreeing)",
        wrong / cells if cells else float("nan"), 0.0, 0.0, source="core Eqs. (100), (113)",
        aspect="oracle", revised=LABEL_REVISED, revised_how="tighter", partner=out[0].name,
        note=f"the {cells} cells labelled II or III at the oracle's modes and all {t.size} "
             "times: a cell labelled III (k < k_learn(t)) has the ODE's learned fraction xi / "
             "(gamma0 theta_k) of Eq. (69) above 1 - 1/e (z > 1), one labelled II (k_learn(t) < "
             "k < k_cross(t)) below it (Region I, past k_cross, holds both: after t* the modes "
             "between k1 and k_learn are learned, below their initial part), from App. G's "
             "inputs written out; a label built from another k_learn than the drawn one fails; "
             "it reads no exponent: its partner is the exponent's ODE oracle"))
    c = so.sigma_a**2 / so.gamma0**2
    gaps: list[float] = []

    def curve(q: str) -> tuple[np.ndarray, np.ndarray]:
        sub = df[df.quantity == q].sort_values("t")
        return sub.t.to_numpy(dtype=float), sub.value.to_numpy(dtype=float)

    inside = lambda kb: np.isfinite(kb) and k[0] <= kb <= k[-1]  # noqa: E731
    tl, kl = curve("k_learn")
    for tj, kb in zip(tl, kl, strict=True):
        if inside(kb):
            gaps.append(abs(float(oracle.learned_fraction_first_layer(so, kb, np.array([tj]))[0])
                            - (1.0 - np.exp(-1.0))))
    t2, k2 = curve("k2")
    for tj, kb in zip(t2, k2, strict=True):
        if inside(kb):
            z = c * so.lambda0 * kb ** -so.alpha * tj
            frac = oracle.learned_fraction_first_layer(so, kb, np.array([tj]))[0]
            # R = mu_k (gamma0 frac)^2 / (sigma_a^2 sigma_w^2) = Q at the exact z
            r_exact = so.mu0 * kb ** -so.beta * (so.gamma0 * frac) ** 2 / (so.sigma_a
                                                                            * so.sigma_w) ** 2
            gaps.append(abs(float(r_exact * (z / -np.expm1(-z)) ** 2) - 1.0))
    k1, ts = theory.k1(cfg.setting()), theory.t_star(cfg.setting())
    if inside(k1) and np.isfinite(ts):
        gaps.append(abs(float(oracle.learned_fraction_first_layer(so, k1, np.array([ts]))[0])
                        - (1.0 - np.exp(-1.0))))
    out.append(within(
        "boundaries in time: k_learn(t), k2(t), (k1, t*) against the ODE oracle (max "
        "|difference|)", float(np.max(gaps)) if gaps else float("nan"), 0.0, CLOCK_BOUNDARY_TOL,
        source="core Eqs. (100), (109), (111)", aspect="clock",
        note=f"{len(gaps)} points of the table's boundary curves inside the grid: the ODE's "
             "learned fraction xi / (gamma0 theta_k) is 1 - 1/e at (k_learn(t), t) and (k1, t*) "
             "(z = 1), and its R (z / (1 - e^-z))^2 is 1 at (k2(t), t), with z = c lambda_k t "
             "from App. G's inputs written out"))
    return out


def fig5_claims_of(cfg: FirstLayerConfig, folder: Path) -> list[Claim]:
    """fig5's claims on the table of a run's folder (the registry's ``claims``)."""
    return fig5_claims(pd.read_parquet(folder / "fig5.parquet"), cfg)


def fig6_claims_of(cfg: FirstLayerConfig, folder: Path) -> list[Claim]:
    """fig6's claims on the table of a run's folder (the registry's ``claims``)."""
    return fig6_claims(pd.read_parquet(folder / "fig6.parquet"), cfg)
