"""The theory figures' claims: pure functions of a table and its config.

Every tolerance, dispute and revision record is fixed here before the run;
:func:`fig3_claims`, :func:`fig5_claims` and :func:`fig6_claims` check them on the
tables ``fig3.parquet``, ``fig5.parquet`` and ``fig6.parquet`` (the ``*_claims_of``
functions read those from a run's folder, for the registry).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from specdyn import theory
from specdyn.experiments.theory_figures.config import PLATEAU_TOL, Fig3Config, FirstLayerConfig
from specdyn.experiments.theory_figures.readings import (
    BOUNDARY_MARGIN,
    SINH_ELL,
    SINH_MODES,
    SINH_X,
    boundary_offsets,
    cross_front,
    crossing_offsets,
    first_layer_offsets,
    last_k,
    longest_span,
    mode_sequence,
    panel_grid,
    plateau_span,
    rise_share,
    sequence_modes,
    sinh_deviations,
    smallest_growth,
)
from specdyn.runs.claims import OWN, Claim, rank_correlation, within

# The theory figures' claims: every tolerance fixed before the run (the plateau tolerance
# PLATEAU_TOL is a config field's default, in config; the windows read in, in readings).
#: fig3: |log10(k where alpha_eff passes halfway between two plateaus / the boundary) - the
#: offset derived for that boundary (:func:`~.readings.crossing_offsets`)|, decades. The
#: derivation takes the neighbouring crossovers as far away; they are 1 decade away at
#: least (BOUNDARY_MARGIN), and their tails move the halfway point by a few hundredths of
#: a decade, as does the quick grid's step (0.042 decade): 0.1 decade.
BOUNDARY_TOL = 0.1
BOUNDARY_REVISED = ("issue 40: |log10(crossing / boundary)| <= 0.5 -> |log10(crossing / "
                    "boundary) - the derived offset| <= 0.1 (offsets 0 at R = 1, +0.263 at "
                    "l = 0.9, +0.125 at u = 1 decade, derived from Eq. (15)), after the quick "
                    "and --full runs measured k_cross within 0.043, k_learn 0.20-0.28 and "
                    "k_layer 0.11 decade off the boundary: 0.5 let a panel shifted by 0.4 "
                    "decade pass k_cross, k_layer and the plateaus")
#: fig3's k_l claim: measured where alpha_eff(t = inf) rises past the level (ac09004), then
#: against the derived offset (issue 40).
K_L_REVISED = ("ac09004: the largest k below k_u past the k_l level -> the largest below the "
               "peak of alpha_eff(k, inf), after the --full run (k to 1e12) measured the first "
               "6 decades off (there alpha_eff falls back toward alpha near k_u and passes the "
               "level again); " + BOUNDARY_REVISED)
#: fig6: |log10(k where alpha_eff passes halfway / the boundary)|, decades: at sigma_w = 0.1
#: the first-layer regions are narrow (Region II at most ~0.9 decade), so no crossing sits
#: on its asymptotic boundary as in fig3 (a); stated: a fifth of the decade the boundary is
#: kept from the grid's edge and from t* (BOUNDARY_MARGIN), below the 0.3 decade of a
#: boundary shifted by a few tenths. fig5's R = 1 front reads against the same tolerance.
FIRST_LAYER_TOL = 0.2
FIRST_LAYER_REVISED = ("issue 40: <= 0.5 -> <= 0.2 decade, after the quick and --full runs "
                       "measured 0.17 (k2), 0.06 (k_learn), 0.02 (k1), 0.06 (t*, k*): 0.5 "
                       "let the k axis shifted by 0.3 decade pass every boundary")
#: A region "exists" (Eqs. 196, 197, 202) when its plateau spans this many decades of k at
#: some time: the factor 10 that :func:`specdyn.theory.regime` reads into "much greater".
EXIST_DECADES = 1.0
#: Why the project does not expect the existence conditions to predict the plateaus at the
#: paper's Fig. 2 setting (computed before the claim was written; see also fig6).
EXIST_DISPUTED = ("'>>' read as a factor 10 is too loose at sigma_w = 0.1, gamma0 = 2 S/theta0:"
                  " the crossovers are as wide as the regions (alpha_eff peaks at 3.74 < 4; "
                  "the alpha + beta plateau spans 0.35 decade)")
#: Why alpha_eff is not bounded by the adjacent exponents where l << 1 and u >> 1.
INTERPOLATE_DISPUTED = ("there xi grows as sinh(2 lambda_k theta_k t / gamma0) (Eq. 21), so "
                        "d log rho / d log k carries the k-dependent growth rate times t and "
                        "overshoots 3 alpha + beta")
#: Why a mode in the middle of the IIIa range does not settle on 3 alpha + beta on its way.
SEQUENCE_DISPUTED = ("written after the first run measured a peak of 3.87: between the cross "
                     "level and 0.9 gamma0 theta_k xi spans only ~2 decades at that mode, too "
                     "short a Region II passage for alpha_eff to settle within 0.05 of 4")
#: The fig3 (a) and fig6 plateau claims were a share of cells (the 10 % of a region's cells
#: nearest the exponent), which every shuffled grid passes (issue 30).
PLATEAU_REVISED = ("b6f669e (issue 30): the exponent that 10 % of the region's cells reach -> the "
                   "widest run of on-plateau cells along k, >= 1 decade (the existing "
                   "EXIST_DECADES): a shuffle keeps the share, not the run; changed after the "
                   "mutation test, the quick spans seen (fig3 (a): 10, 1.26, 2.8, 4.6 "
                   "decades; fig6: 4.0, 1.7)")
#: The boundary whose claim catches a table constant at a plateau's value (fig3 (a)).
PLATEAU_PARTNER = {"I": "k_cross", "II": "k_learn", "IIIa": "k_learn", "IIIb": "k_layer"}
#: fig3 (a)'s boundary claims, by boundary (the partner of the plateau claims).
BOUNDARY_NAME = "(a) {}(t): alpha_eff changes regime there (max decades off the derived crossing)"
#: Tolerance of ``max |log(rho_learned / Eq. 21 form)|`` over the window, derived before the
#: run: the dropped drive slows ``x`` by at most ``SINH_ELL`` relative, which moves
#: ``log(cosh x - 1)`` by at most ``SINH_ELL`` x its log-slope ``x sinh x / (cosh x - 1)``,
#: largest at the window's end.
SINH_TOL = float(SINH_ELL * SINH_X[1] * np.sinh(SINH_X[1]) / (np.cosh(SINH_X[1]) - 1.0))
SINH_NAME = "(a) Eq. (21): Region II learned part follows the sinh form (max |log ratio|)"
#: Why Eq. (34) is not expected at the paper's lazy setting (design notes, measured 0.37).
LAZY_DISPUTED = ("the paper's lazy setting (gamma0 theta0 = 1) is only a factor 1.73 below "
                 "the Eq. (33) bound, not '<<': the modes near k = 1 still gain a learned part "
                 "(reason written after the design notes measured 0.37)")
#: The lazy panels' own claim, partner of their "no change" claims (issue 30).
LAZY_FALLS = "t_max: alpha_eff - alpha falls with k (rank correlation)"
LAZY_FALLS_MAX = -0.9
#: Why the Fig. 6 setting does not reach the 3alpha + beta plateau (measured before the claim
#: was written: fig6's quick grid peaks at 3.63 in Region II, 3.48 in issue 30's check).
II_DISPUTED = ("sigma_w = 0.1 is not << sigma_a: Region II is at most ~0.9 decade wide "
               "(k2 / k_learn) and the crossovers at its two ends take it, so alpha_eff peaks "
               "below 3alpha + beta; fig3 (a) at sigma_w = 1e-3 has the plateau (reason "
               "written after a run measured the peak at 3.63)")
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
#: fig6's Region II height: its peak alpha_eff is nearer 3 alpha + beta than alpha + beta
#: (at least the midpoint of the two, 2 alpha + beta): the plateau itself is not reached at
#: sigma_w = 0.1 (the disputed claim), but a Region II that never gets past the midpoint is
#: not Eq. (113)'s Region II.
RISE_REVISED = ("b6f669e (issue 30): max alpha_eff over the Region II cells -> the share of the "
                "region's widest k-extent where alpha_eff stays above alpha + beta, >= 0.5: "
                "the max of a shuffled grid passes; changed after the mutation test, the "
                "quick run's share (1.0) seen")
#: "mode order preserved" holds for any table of positive exponents (Appendix F is a
#: theorem of the theory the table is computed from): a sanity check.
ORDER_SANITY = ("a claim -> a sanity check (issue 40): -d log rho / d log k >= 0 holds for any "
                "positive exponent table, so it caught nothing (a partner did)")
#: fig5's claims at every time: the R = 1 front and the spectrum's growth.
FRONT_NAME = "every time: R_k = 1 at Eq. (112)'s k_cross(t) (max decades off)"
#: The smallest relative step of rho_k(t) from one time to the next: the learned part only
#: grows (Eq. 84: xi_k rises monotonically to gamma0 theta_k); rounding of the closed form
#: is below 1e-12 relative.
GROWTH_MIN = -1e-12


def fig3_claims(df: pd.DataFrame, cfg: Fig3Config) -> list[Claim]:
    """fig3's claims, a pure function of its table ``fig3.parquet`` and its config.

    The measured numbers come from the table's ``alpha_eff`` grids (and the
    ``alpha_eff_t_inf`` rows at ``t = inf``); the predictions (region labels,
    boundaries, existence conditions) from the theory at the config's settings.
    """
    settings = cfg.settings()
    claims: list[Claim] = []
    tol = cfg.plateau_tol
    for name in ("deep-feature-learning", "fig2-setting", "lazy"):
        s = settings[name]
        k, t, aeff = panel_grid(df, name)
        labels = theory.region(s, k[:, None], t[None, :])
        ex = theory.asymptotic_exponents(s)
        if name == "deep-feature-learning":
            for reg, val in ex.items():
                claims.append(within(
                    f"(a) Region {reg} plateau (decades of k)",
                    plateau_span(k, aeff, labels, reg, val, tol), EXIST_DECADES, np.inf,
                    source="core Eq. (31), Fig. 3(a)",
                    note=f"widest run along k, at any t, of Region {reg} cells within {tol:g} "
                         f"of {val:g}; a table constant at {val:g} has it too, the boundary "
                         f"claim named as partner does not",
                    revised=PLATEAU_REVISED,
                    partner=BOUNDARY_NAME.format(PLATEAU_PARTNER[reg])))
            offsets = boundary_offsets(k, t, aeff, s)
            derived = crossing_offsets(s)
            for b, off in offsets.items():
                dev = off - derived[b]
                claims.append(within(
                    BOUNDARY_NAME.format(b),
                    float(np.abs(dev).max()) if dev.size else float("nan"), 0.0,
                    BOUNDARY_TOL, source="core Sec. 3.2, App. E.1-E.3",
                    note=f"over {off.size} times where {b} lies {BOUNDARY_MARGIN:g} decade "
                         f"inside the grid and from its neighbour; measured where alpha_eff "
                         f"passes halfway between the two exponents it separates, less the "
                         f"offset derived from Eq. (15) for this boundary "
                         f"({derived[b]:+.3f} decade); offsets "
                         + (f"{off.min():+.3f} to {off.max():+.3f}" if off.size else "none"),
                    revised=BOUNDARY_REVISED, key=f"(a) {b}(t)"))
            # Eq. (32): a mode between k_l and k_u ends at alpha + beta, one below k_l at
            # alpha + beta/2
            for reg, k_mode in sequence_modes(s, k).items():
                final = ex[reg]
                ok, text = mode_sequence(k, t, aeff, k_mode, [ex["I"], ex["II"], final], tol)
                claims.append(Claim(
                    f"(a) fixed mode: alpha -> 3alpha+beta -> {final:g} in time order",
                    f"each within {tol:g}, in this order", text, ok, source="core Eq. (32)",
                    note="order of the median time at which the mode sits within the "
                         "tolerance of each exponent; the mode: middle (log scale) of the "
                         f"range where Region {'IIIa' if final == ex['IIIa'] else 'IIIb'} "
                         "can appear",
                    disputed=SEQUENCE_DISPUTED if final == ex["IIIa"] else ""))
            trans = aeff[labels == "transition"]
            claims.append(within(
                "(a) where l << 1, u >> 1: alpha_eff between adjacent exponents (max)",
                float(trans.max()) if trans.size else float("nan"), ex["IIIb"] - tol,
                ex["II"] + tol, source="core Sec. 3.2.2",
                note="max alpha_eff over the cells labelled 'transition' (R >= 1, l < 0.9, "
                     "u >= 1); the paper: it 'varies so as to interpolate between the "
                     "adjacent exponents'", disputed=INTERPOLATE_DISPUTED))
            dev_sinh, dev_square, n_sinh = sinh_deviations(df, s, name)
            claims.append(within(
                SINH_NAME, dev_sinh, 0.0, SINH_TOL, source="core Eq. (21), Sec. 3.2.2",
                note=f"xi_k = S/2 sinh(2 lambda_k theta_k t / gamma0) in Eq. (22)'s first line "
                     f"gives rho_k - rho_k(0) = S lambda_k/2 (cosh x - 1); against the exact "
                     f"closed form (App. D) at k = {', '.join(f'{m:g}' for m in SINH_MODES)}, "
                     f"{n_sinh} points with x in [{SINH_X[0]:g}, {SINH_X[1]:g}] and "
                     f"l_k <= {SINH_ELL:g} (R_k >> 1 there: sigma_w = {s.sigma_w:g}); "
                     f"tolerance derived: {SINH_ELL:g} x the largest log-slope of cosh x - 1 "
                     f"in the window; the Fig. 2 setting has no such window (l_k = "
                     f"sinh(x) k^(beta/2) / 4 there), so the theory's own panel is used"))
            claims.append(within(
                "(a) Eq. (21) is not Eq. (22)'s t^2: max |log ratio| to the t^2 form there",
                dev_square, SINH_TOL, np.inf, source="core Eqs. (21)-(22)",
                note="the same points against S lambda_k x^2 / 4: the sinh growth is visible "
                     "beyond the tolerance of the sinh claim (which a constant table fails, "
                     "its partner)", partner=SINH_NAME))
        # k_u, k_l: at t = inf alpha_eff passes halfway from alpha to alpha + beta at k_u and
        # from alpha + beta to alpha + beta/2 at k_l (Eqs. 190, 193); k_l is looked for among
        # the modes that learn (below k_u), and only where k_u lies a margin above it
        sub = df[(df.panel == name) & (df.quantity == "alpha_eff_t_inf")].sort_values("k")
        kk, a_inf = sub.k.to_numpy(), sub.value.to_numpy()
        ku, kl = theory.k_u(s), theory.k_l(s)
        lo, hi = np.log10(kk[0]) + BOUNDARY_MARGIN, np.log10(kk[-1]) - BOUNDARY_MARGIN
        checks = []
        if ku > 0 and lo <= np.log10(ku) <= hi:
            checks.append(("k_u", ku, last_k(kk, a_inf >= 0.5 * (ex["I"] + ex["IIIa"])),
                           "core Eq. (190)"))
        if kl > 0 and lo <= np.log10(kl) <= hi and np.log10(ku / kl) >= BOUNDARY_MARGIN:
            # below the peak, as for k_learn: toward k_u alpha_eff falls from alpha + beta
            # to alpha and passes the same level again (found by the --full grid, k to 1e12)
            peak = int(np.argmax(np.where(kk < ku, a_inf, -np.inf)))
            checks.append(("k_l", kl, last_k(kk[:peak], a_inf[:peak] <=
                                              0.5 * (ex["IIIa"] + ex["IIIb"])),
                           "core Eq. (193)"))
        derived = crossing_offsets(s)
        for b, kb, found, source in checks:
            off_inf = float(np.log10(found / kb))
            claims.append(within(
                f"({name}) {b} = {kb:.3g}: alpha_eff(t = inf) changes regime there (decades "
                f"off the derived crossing)", abs(off_inf - derived[b]), 0.0, BOUNDARY_TOL,
                source=source,
                note=f"largest k where alpha_eff(k, inf) is past halfway between the two "
                     f"exponents {b} separates: {found:.3g} ({off_inf:+.3f} decade), against the "
                     f"offset derived from Eq. (15) ({derived[b]:+.3f})",
                revised=K_L_REVISED if b == "k_l" else BOUNDARY_REVISED,
                key=f"({name}) {b}"))
        # Appendix E.4: the regions whose condition holds have a plateau, the others not
        rep = theory.regime(s)
        mism = [reg for reg in ("II", "IIIa", "IIIb")
                if rep.exists[reg] != (longest_span(np.abs(aeff - ex[reg]) <= tol,
                                                     np.log10(k)) >= EXIST_DECADES)]
        claims.append(within(
            f"({name}) regions predicted by Eqs. (196), (197), (202) = regions with a plateau",
            float(len(mism)), 0.0, 0.0, source="core App. E.4",
            note=f"'>>' as a factor 10; a plateau: within {tol:g} of its exponent over "
                 f">= {EXIST_DECADES:g} decade of k at some time; mismatched: "
                 f"{', '.join(mism) or 'none'}",
            disputed=EXIST_DISPUTED if name == "fig2-setting" else "",
            partner=f"(lazy) {LAZY_FALLS}" if name == "lazy" else ""))
    # Eq. (34) at the paper's lazy setting and well below the Eq. (33) bound
    for name, source, disputed in (("lazy", "core Eq. (34), Fig. 3(c)", LAZY_DISPUTED),
                                   ("lazy-below-bound", OWN, "")):
        _, _, aeff = panel_grid(df, name)
        s = settings[name]
        claims.append(within(
            f"({name}) alpha_eff stays at alpha (max |alpha_eff - alpha|)",
            float(np.abs(aeff - s.alpha).max()), 0.0, tol, source=source,
            note=f"gamma0 theta0 / S = {s.gamma0 * s.theta0 / s.S:.3g}, Eq. (33) bound "
                 f"{theory.cross_level(s) / s.S:.3g}; over the whole grid", disputed=disputed,
            partner=f"({name}) {LAZY_FALLS}"))
        # what a lazy panel does show: a learned part whose weight falls with k
        claims.append(within(
            f"({name}) {LAZY_FALLS}", rank_correlation(np.log(panel_grid(df, name)[0]),
                                                     aeff[:, -1] - s.alpha),
            -1.0, LAZY_FALLS_MAX, source=OWN,
            note="alpha_eff(k, t_max) - alpha against log k: the learned part "
                 "lambda_k S/2 [-1 + sqrt(1 + 4 u_k^2)] (Eq. 22 at xi = gamma0 theta_k) over "
                 "Eq. (34)'s sigma_w^2 lambda_k falls with k, so the excess over alpha does "
                 f"too (-1: strictly); {LAZY_FALLS_MAX:g} leaves room for rounding where the "
                 "excess is below 1e-12 (the quick run measured -1.0 in both lazy panels); "
                 "a constant or shuffled table has no such order"))
    # App. F: rho_k(t) stays decreasing in k, i.e. alpha_eff >= 0, in every panel
    low = min(float(panel_grid(df, name)[2].min()) for name in settings)
    claims.append(within(
        "every panel: mode order preserved (min alpha_eff over the grids)", low, 0.0, np.inf,
        source="core Sec. 3.1, App. F",
        note="'rho_k(t) remains monotonically decreasing in k; hence the relative ordering of "
             "the modes is preserved at all times': -d log rho / d log k >= 0 at every cell; "
             "any table of positive exponents meets it", sanity=True, revised=ORDER_SANITY))
    # Eq. (200): Region IIIa needs sigma_a^2 >> (sqrt 5 - 1)/2 sigma_w^2; at sigma_w = sigma_a
    # (a factor 1.6, not '>>') it has no plateau, though the panel feature-learns (IIIb)
    k, _, aeff = panel_grid(df, "equal-scales")
    s = settings["equal-scales"]
    ex = theory.asymptotic_exponents(s)
    labels = theory.region(s, k[:, None], panel_grid(df, "equal-scales")[1][None, :])
    ratio = s.sigma_a**2 / s.sigma_w**2 / ((np.sqrt(5.0) - 1.0) / 2.0)
    claims.append(Claim(
        "(equal-scales) Eq. (200) fails: no alpha + beta plateau (decades of k)",
        f"in [0, {EXIST_DECADES:g}) (strictly below)",
        longest_span(np.abs(aeff - ex["IIIa"]) <= tol, np.log10(k)),
        bool(longest_span(np.abs(aeff - ex["IIIa"]) <= tol, np.log10(k)) < EXIST_DECADES),
        source="core Eq. (200)",
        note=f"sigma_a^2 / sigma_w^2 is {ratio:.3g} x (sqrt 5 - 1)/2, not '>>' (a factor 10); "
             f"gamma0 theta0 / S = {s.gamma0 * s.theta0 / s.S:.3g}; widest run along k of "
             f"cells within {tol:g} of alpha + beta, whatever their label; an absence, so the "
             "panel's IIIb plateau claim is its partner",
        partner="(equal-scales) Region IIIb plateau (decades of k)"))
    claims.append(within(
        "(equal-scales) Region IIIb plateau (decades of k)",
        plateau_span(k, aeff, labels, "IIIb", ex["IIIb"], tol), EXIST_DECADES, np.inf,
        source="core Eq. (202), Eq. (31)",
        note=f"the panel learns: widest run along k of Region IIIb cells within {tol:g} of "
             f"{ex['IIIb']:g} (Eq. 202 holds there)"))
    return claims


def fig5_claims(df: pd.DataFrame, cfg: FirstLayerConfig) -> list[Claim]:
    """fig5's claims, a pure function of its table ``fig5.parquet`` (``k, t, value``).

    The local exponent at the last time is the log-log slope of the table's
    spectrum between its first two and its last two modes; at every time, the front where
    the learned part equals the initial one (:func:`~.readings.cross_front`) and the
    spectrum's growth (:func:`~.readings.smallest_growth`).
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
    return [
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
                    "rho_k(0): the first layer's learned part xi_k rises monotonically to "
                    f"gamma0 theta_k; {GROWTH_MIN:g} is rounding of the closed form; a table "
                    "frozen at t = 0 meets it too: its partner is the front",
               partner=FRONT_NAME),
    ]


def fig6_claims(df: pd.DataFrame, cfg: FirstLayerConfig) -> list[Claim]:
    """fig6's claims, a pure function of its table ``fig6.parquet``: the exact exponent
    (``alpha_eff_first_layer`` rows) in each region the table labels (``region``)."""
    s = cfg.setting()
    grid = df[df.quantity == "alpha_eff_first_layer"]
    wide = grid.pivot(index="k", columns="t", values="value")
    k, aeff = wide.index.to_numpy(dtype=float), wide.to_numpy(dtype=float)
    labels = (grid.pivot(index="k", columns="t", values="region")
              .reindex(index=wide.index, columns=wide.columns).to_numpy().astype(str))
    exps = {"I": s.alpha, "II": 3 * s.alpha + s.beta, "III": s.alpha + s.beta}
    tol = PLATEAU_TOL
    claims = [within(f"Region {name} plateau (decades of k)",
                     plateau_span(k, aeff, labels, name, exps[name], tol), EXIST_DECADES,
                     np.inf, source="core Eq. (113), Fig. 6",
                     note=f"widest run along k, at any t, of Region {name} cells within {tol:g} "
                          f"of {exps[name]:g}", revised=PLATEAU_REVISED)
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
                         note="the plateau 3alpha+beta itself needs sigma_w << 0.1"))
    claims.append(within(
        "Region II rises above alpha + beta (share of its widest k-extent)",
        rise_share(k, aeff, labels, "II", s.alpha + s.beta), RISE_SHARE, 1.0,
        source="core Eq. (113), Fig. 6",
        note=f"widest run along k of Region II cells above alpha + beta, over the widest "
             f"run of Region II cells at any t, towards 3alpha+beta = {exps['II']:g}; the "
             f"plateau itself needs sigma_w << 0.1 (see fig3 (a))", revised=RISE_REVISED))
    peak = float(aeff[labels == "II"].max()) if (labels == "II").any() else float("nan")
    mid = 0.5 * (exps["II"] + exps["III"])
    claims.append(within(
        "Region II: peak alpha_eff nearer 3alpha + beta than alpha + beta", peak, mid,
        exps["II"] + tol, source="core Eq. (113), Fig. 6",
        note=f"max alpha_eff over the Region II cells at least the midpoint {mid:g} of alpha + "
             f"beta and 3alpha + beta (and at most the plateau's tolerance above it): the "
             f"region steepens toward its exponent, though at sigma_w = 0.1 it does not "
             f"reach the plateau (claim below); a shuffled grid keeps a high cell in the "
             f"region: its partner, the share of the region above alpha + beta, does not",
        partner="Region II rises above alpha + beta (share of its widest k-extent)"))
    claims.append(within(
        "Region II plateau at 3alpha + beta (max alpha_eff in Region II)", peak,
        exps["II"] - tol, exps["II"] + tol, source="core Eq. (113), Fig. 6",
        note="Eq. (113) in the Fig. 6 setting itself (sigma_w = 0.1)", disputed=II_DISPUTED))
    # the first-layer boundaries (App. C): where the exact exponent changes regime
    t = wide.columns.to_numpy(dtype=float)
    offsets = first_layer_offsets(k, t, aeff, s)
    for key, (name, source) in FIRST_LAYER_BOUNDARIES.items():
        off = offsets[key]
        claims.append(within(
            f"{name}: alpha_eff changes regime there (max decades off)",
            float(np.abs(off).max()) if off.size else float("nan"), 0.0, FIRST_LAYER_TOL,
            source=source, revised=FIRST_LAYER_REVISED,
            note=f"over {off.size} times where the boundary lies {BOUNDARY_MARGIN:g} decade "
                 f"inside the grid and the time {BOUNDARY_MARGIN:g} decade from t* = "
                 f"{theory.t_star(s):.3g} (Eq. 111: at the grid time nearest t*); measured "
                 f"where alpha_eff passes halfway between the two exponents it separates"))
    return claims


def fig3_claims_of(cfg: Fig3Config, folder: Path) -> list[Claim]:
    """fig3's claims on the table of a run's folder (the registry's ``claims``)."""
    return fig3_claims(pd.read_parquet(folder / "fig3.parquet"), cfg)


def fig5_claims_of(cfg: FirstLayerConfig, folder: Path) -> list[Claim]:
    """fig5's claims on the table of a run's folder (the registry's ``claims``)."""
    return fig5_claims(pd.read_parquet(folder / "fig5.parquet"), cfg)


def fig6_claims_of(cfg: FirstLayerConfig, folder: Path) -> list[Claim]:
    """fig6's claims on the table of a run's folder (the registry's ``claims``)."""
    return fig6_claims(pd.read_parquet(folder / "fig6.parquet"), cfg)

