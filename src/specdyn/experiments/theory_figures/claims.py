"""fig3's claims: pure functions of its table and config.

Every tolerance, dispute and revision record is fixed here before the run;
:func:`fig3_claims` checks them on ``fig3.parquet`` (:func:`fig3_claims_of` reads it from a
run's folder, for the registry), with the claims against independent evaluations of
:mod:`~specdyn.experiments.theory_figures.claims_independent`. fig5's and fig6's are in
:mod:`~specdyn.experiments.theory_figures.claims_first_layer`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from specdyn import theory
from specdyn.experiments.theory_figures.claims_independent import (
    ORACLE_NAME,
    fig3_independent_claims,
)
from specdyn.experiments.theory_figures.config import Fig3Config
from specdyn.experiments.theory_figures.readings import (
    BOUNDARY_MARGIN,
    SINH_ELL,
    SINH_MODES,
    SINH_X,
    boundary_offsets,
    crossing_offsets,
    last_k,
    longest_span,
    mode_sequence,
    panel_grid,
    plateau_span,
    premise_window,
    sequence_modes,
    sinh_deviations,
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
#: against the derived offset.
K_L_REVISED = ("ac09004: the largest k below k_u past the k_l level -> the largest below the "
               "peak of alpha_eff(k, inf), after the --full run (k to 1e12) measured the first "
               "6 decades off (there alpha_eff falls back toward alpha near k_u and passes the "
               "level again); " + BOUNDARY_REVISED)
#: A region "exists" (Eqs. 196, 197, 202) when its plateau spans this many decades of k at
#: some time: the factor 10 that :func:`specdyn.theory.regime` reads into "much greater".
EXIST_DECADES = 1.0
#: Why the existence conditions do not predict the plateaus at the paper's Fig. 2 setting.
EXIST_DISPUTED = ("theory at the premise: at sigma_w = 0.1, gamma0 = 2 S/theta0 Eq. (196) holds "
                  "by a factor 324 and Eq. (197) by a factor 100 (k_l = 4, k_u = 400), so "
                  "'>>' is met at any reading up to a factor 100, yet the exact alpha_eff "
                  "peaks at 3.74 (no cell within 0.05 of 3 alpha + beta = 4) and its alpha + "
                  "beta plateau spans 0.35 decade: the conditions are necessary, not "
                  "sufficient, for the plateaus (Region II within 0.05 of 4 needs gamma0 "
                  "theta_k >= 402 x the cross level, premise_window)")
#: Why alpha_eff is not bounded by the adjacent exponents where l << 1 and u >> 1.
INTERPOLATE_DISPUTED = ("theory at the premise: where l <= 0.1 and u >= 10, Eq. (21) gives "
                        "rho_k - rho_k(0) = S lambda_k (cosh x - 1) / 2, x = 2 lambda_k "
                        "theta_k t / gamma0, whose exponent alpha + (alpha + beta/2) x "
                        "coth(x/2) grows without bound in x: 4 at x = 0, 10.0 at k = 1 where "
                        "l reaches 0.1 (x = 6.0; sigma_w = 1e-4, gamma0 theta0 / S = 1e3); "
                        "the exact closed form over those cells (measured) agrees, not an "
                        "interpolation between 3 alpha + beta and alpha + beta/2")
#: The premise of the "interpolation" statement: l << 1 and u >> 1, each a factor 10.
INTERPOLATE_L, INTERPOLATE_U = 0.1, 10.0
INTERPOLATE_REVISED = ("issue 47: the cells labelled 'transition' (l < 0.9, u >= 1) -> the "
                       "cells of the statement's premise l <= 0.1, u >= 10, after the dispute's "
                       "9.46 (--full) was seen: the dispute stands on the premise's cells")
#: The IIIa sequence: a setting and a mode that meet Eq. (32)'s premise.
SEQUENCE_REVISED = ("issue 47: sigma_w 1e-3 -> 1e-4 and the mode from the middle of [k_l, "
                    "min(k_max, k_u)] -> the middle of premise_window (derived from Eq. 15's "
                    "asymptotic forms), after the disputed 3.87 (quick) and 3.73 (--full) were "
                    "seen: at sigma_w = 1e-3 no mode meets the premise (its window is empty)")
#: The fig3 (a) and fig6 plateau claims were a share of cells (the 10 % of a region's cells
#: nearest the exponent), which every shuffled grid passes.
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
#: Eq. (34) at the setting that meets its premise, and the Fig. 4 lazy setting, which does
#: not (gamma0 theta0 = 1, only a factor 1.73 below the Eq. 33 bound).
LAZY_EQ34_REVISED = ("issue 47: source own -> core Eq. (34), Fig. 3(c), and drawn as panel "
                     "(c): gamma0 theta0 / S = 0.05 (17 x below the Eq. 33 bound) meets the "
                     "premise '<<' that the Fig. 4 setting (0.5) misses; the claim unchanged "
                     "(0.006 seen at --full)")
LAZY_MILD_REVISED = ("issue 47: 'alpha_eff stays at alpha' (core Eq. 34, disputed: the setting "
                     "misses the premise) -> the project's claim that at this setting it does "
                     "not, after 0.37 (design notes) and 0.39 (--full) were seen")
#: The lazy panels' own claim, partner of their "no change" claims (the mutation test).
LAZY_FALLS = "t_max: alpha_eff - alpha falls with k (rank correlation)"
LAZY_FALLS_MAX = -0.9
#: "mode order preserved" holds for any table of positive exponents (Appendix F is a
#: theorem of the theory the table is computed from): a sanity check.
ORDER_SANITY = ("a claim -> a sanity check (issue 40): -d log rho / d log k >= 0 holds for any "
                "positive exponent table, so it caught nothing (a partner did)")

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
                    revised=PLATEAU_REVISED, revised_how="restated",
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
                    revised=BOUNDARY_REVISED, revised_how="tighter", key=f"(a) {b}(t)"))
            # Eq. (32): a mode of the premise window ends at alpha + beta, one below k_l at
            # alpha + beta/2
            lo_w, hi_w = premise_window(s, tol)
            for reg, k_mode in sequence_modes(s, k, tol).items():
                final = ex[reg]
                ok, text = mode_sequence(k, t, aeff, k_mode, [ex["I"], ex["II"], final], tol)
                where = (f"middle (log scale) of the premise window [{lo_w:.3g}, {hi_w:.3g}] "
                         "(Region II within the tolerance on the way, IIIa at the end: "
                         "premise_window)" if reg == "IIIa" else
                         "middle (log scale) of the range where Region IIIb can appear")
                claims.append(Claim(
                    f"(a) fixed mode: alpha -> 3alpha+beta -> {final:g} in time order",
                    f"each within {tol:g}, in this order", text, ok, source="core Eq. (32)",
                    note="order of the median time at which the mode sits within the "
                         f"tolerance of each exponent; the mode: {where}",
                    revised=SEQUENCE_REVISED if reg == "IIIa" else "",
                    revised_how="restated" if reg == "IIIa" else "",
                    # the order of three median times survives some shuffles of the grid;
                    # the mode's exponent against the ODE at every time does not
                    partner=ORACLE_NAME if reg == "IIIa" else ""))
            q = theory.region_quantities(s, k[:, None], t[None, :])
            premise = (labels != "I") & (q["l"] <= INTERPOLATE_L) & (q["u"] >= INTERPOLATE_U)
            claims.append(within(
                "(a) where l << 1, u >> 1: alpha_eff between adjacent exponents (max)",
                float(aeff[premise].max()) if premise.any() else float("nan"),
                ex["IIIb"] - tol, ex["II"] + tol, source="core Sec. 3.2.2",
                note=f"max alpha_eff over the {int(premise.sum())} cells with R >= 1, "
                     f"l <= {INTERPOLATE_L:g}, u >= {INTERPOLATE_U:g} ('<<', '>>' as a factor "
                     "10); the paper: it 'varies so as to interpolate between the adjacent "
                     "exponents'", disputed=INTERPOLATE_DISPUTED, revised=INTERPOLATE_REVISED,
                revised_how="restated"))
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
                revised_how="restated" if b == "k_l" else "tighter", key=f"({name}) {b}"))
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
    # Eq. (34) well below the Eq. (33) bound (its premise), and at Fig. 4's lazy setting,
    # which misses the premise
    for name in ("lazy-below-bound", "lazy"):
        _, _, aeff = panel_grid(df, name)
        s = settings[name]
        bound = (f"gamma0 theta0 / S = {s.gamma0 * s.theta0 / s.S:.3g}, Eq. (33) bound "
                 f"{theory.cross_level(s) / s.S:.3g}; over the whole grid")
        gap = float(np.abs(aeff - s.alpha).max())
        if name == "lazy-below-bound":
            claims.append(within(
                f"({name}) alpha_eff stays at alpha (max |alpha_eff - alpha|)", gap, 0.0, tol,
                source="core Eq. (34), Fig. 3(c)", note=f"{bound}: Eq. (33)'s '<<' met",
                partner=f"({name}) {LAZY_FALLS}", revised=LAZY_EQ34_REVISED,
                revised_how="restated"))
        else:
            claims.append(within(
                f"({name}) at Fig. 4's lazy setting alpha_eff leaves alpha by more than the "
                "plateau tolerance (max |alpha_eff - alpha|)", gap, tol, np.inf, source=OWN,
                note=f"{bound}: a factor 1.73 below the bound is not Eq. (33)'s '<<', and the "
                     "modes near k = 1 still gain a learned part; the setting of fig4's lazy "
                     "runs", partner=f"({name}) {LAZY_FALLS}", revised=LAZY_MILD_REVISED,
                revised_how="restated"))
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
             "any table of positive exponents meets it", sanity=True, revised=ORDER_SANITY,
        revised_how="restated"))
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
    return claims + fig3_independent_claims(df, cfg)


def fig3_claims_of(cfg: Fig3Config, folder: Path) -> list[Claim]:
    """fig3's claims on the table of a run's folder (the registry's ``claims``)."""
    return fig3_claims(pd.read_parquet(folder / "fig3.parquet"), cfg)
