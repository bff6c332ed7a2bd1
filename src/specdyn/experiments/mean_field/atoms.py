"""The sparse-atoms claims: S* atoms, where they sit and what weight decay leaves of them.

Pure functions of the run's final-particle tables (``sparse-atoms.parquet`` and, with the
weak third atom, ``sparse-atoms_weak.parquet``), its finite-``M`` theory table
(``sparse-atoms_theory.parquet``: the lasso on the run's own training data), its mass table
over the checkpoints (``sparse-atoms_mass.parquet``: the clock, against the population
mean-field flow) and its config. Every tolerance, source and revision record is fixed here
before the run.

The zero-temperature theory (:mod:`specdyn.theory.mean_field`): on a ReLU teacher's atoms,
weight decay makes the mean-field objective a lasso over signed measures on the sphere;
with the directions free, its minimiser keeps one atom a teacher atom, tilted off the
teacher's direction and shrunk (:func:`~specdyn.theory.mean_field.lasso_free_directions`):
on the population, and, on the run's own ``M`` samples, the finite-``M`` minimiser the run
should meet.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pandas as pd

from specdyn.experiments.mean_field.config import AtomsConfig
from specdyn.experiments.mean_field.readings import (
    angular_spread,
    cluster_coefficients,
    odd_activation,
    orbit_changes,
    share_near,
)
from specdyn.measure.atoms import AtomClusters, cluster_directions
from specdyn.runs.claims import OWN, Claim, sized, within
from specdyn.theory import mean_field as mft
from specdyn.theory import oracles

#: Mass fraction the sparse-atom bound is read at: the fewest clusters holding it.
ATOM_MASS_FRACTION = 0.9
#: Largest difference of an atom's effective coefficient ``a |w|`` (summed over its
#: cluster, over N) from the finite-M zero-temperature lasso on the run's own data: pilot
#: seeds 1-5 (not the judged seed 0) measured 0.0007-0.0031 on both teachers; three times
#: the largest. (As first written: 0.1 against the population lasso on the teacher's fixed
#: directions, twice the 1/sqrt(M) sampling error at M = 400.)
COEFFICIENT_TOL = 0.01
#: Largest angle (deg) from a finite-M lasso atom's direction to the nearest heavy cluster:
#: pilot seeds 1-5 measured at most 0.3 deg; the atoms tilt about 13 deg off the teacher's.
ANGLE_TOL = 2.0
#: The deviation of a|w| from the population lasso, against the finite-M lasso's (the
#: size claim): pilot seeds 1-5 measured ratios 1.02-1.08.
DEVIATION_FACTOR = 1.5
#: The |a|-weighted RMS angle (deg) of the particles to their cluster's centre, over the two
#: heaviest clusters of both runs (RMS of the four), set by the temperature (tau = 1e-4 at
#: t = 50, not yet at equilibrium): pilot seeds 1-6 (not the judged 0) measured 2.77, 2.65,
#: 2.61, 3.13, 2.78, 2.51 deg at D = 3, mean 2.74, each within 0.92-1.14 of it; scaled by
#: sqrt((D - 1) / 2), the tangent dimensions of the sphere, at another D (unchecked there).
SPREAD_DEG, SPREAD_D, SPREAD_FACTOR = 2.74, 3, 1.35
SPREAD_REVISED = ("added after a referee's wrong models (issue 47: the particles exactly the "
                  "finite-M lasso's atoms; the run at ten times the temperature, 4.4-6.5 deg) "
                  "passed every claim; each claim but the deviation's had lower bound 0")
#: The clock: the |a|-mass outside the S* heaviest clusters (the unclaimed mass), its geometric
#: mean over the checkpoints 0 < t <= CLOCK_T of the mass table, against the same reading of
#: the population mean-field flow (:func:`flow_unclaimed`). CLOCK_T is the transient: the flow
#: holds 90 % in its two atoms by t = 15 (its unclaimed mass there 0.08-0.11 at D = 3, 0.09
#: at D = 5); later the run sits at the temperature's floor (about 0.01), which the tau = 0
#: flow lacks. Quick: t = 5, 10, 15; --full: t = 10.
CLOCK_T = 15.0
#: The flow: the mean over FLOW_RUNS draws of FLOW_N particles from the initial law, from a
#: fixed generator (one draw's reading scatters by about 6 %); Heun steps of at most FLOW_DT
#: (against Heun at 0.1: the same readings to 1.5 %, the clusters' edges).
FLOW_N, FLOW_RUNS, FLOW_DT, FLOW_SEED = 1000, 4, 0.5, 20261208
#: Measured over predicted: pilot seeds 1-8 (not the judged 0) measured 0.75-1.12 at the
#: quick size (the N = 200 run's own scatter; the standard deviation of the log 0.15): three
#: of those, e^0.44 = 1.55. At half the speed (reruns at dt / 2, seeds 0-2) 1.76-2.19; at
#: --full (N = 1000, t = 10 only) pilot seeds 1-3, run to t = 40, measured 0.97-1.06.
CLOCK_FACTOR = 1.55
CLOCK_REVISED = ("added after a referee's wrong model (issue 47: the run at half the speed, "
                 "t = 25 reached where the config says t = 50) passed every claim, which "
                 "read the final particles only; seed 0 had been seen")
#: relu_gram against quadrature over the angle: both exact, so rounding.
KERNEL_TOL = 1e-9
#: The population lasso's optimality: max |h(u)| / lambda' over the probes and the atoms.
CERTIFICATE_TOL = 1e-6
#: Unit directions probing the certificate, from a fixed generator.
PROBES, PROBE_SEED = 20_000, 20261207
#: Relative rms change of ``f`` under the realisation symmetry that counts as "unchanged":
#: the symmetry is exact, float64 rounding of a sum of N terms is ~1e-15 relative.
SYMMETRY_TOL = 1e-10
#: Relative rms change of ``f`` that counts as "changed" off the symmetry orbit: four
#: orders above SYMMETRY_TOL, far from rounding.
OFF_ORBIT_MIN = 1e-6
#: The two orbit checks are identities of the activation (ReLU's positive homogeneity, an odd
#: activation's sign flip), true of any particles, trained or not: sanity checks.
ORBIT_SANITY = ("claims -> sanity checks (issue 40): identities of the activation, true of "
                "untrained random particles too (a wrong model passes them)")
#: The quick M, changed after a run, and the coefficient claims' reference since.
ATOMS_M_REVISED = (
    "ec50dd1 (issue 33 item 3): quick M 400 -> 1600, after the quick run on the derived seeds "
    "(dbb53d9) measured 0.120 (two atoms) and 0.127 (S* threshold) against 0.1 (0.0089 on "
    "the former seed 0). Pilot, seeds 1-11: 0.059-0.157 at M = 400, 5 of 11 above 0.1; "
    "0.045-0.091 at M = 1600, 11 of 11 held. The 0.06 shortfall left open then is the atoms' "
    "tilt: issue 47, the reference is the finite-M lasso with free directions on the run's "
    "own data (0.645 on the population, against 0.707 with the teacher's directions) and the "
    "tolerance 0.1 -> 0.01 (pilot seeds 1-5: 0.0007-0.0031), after those numbers were seen")
#: The angle claim's reference and tolerance, changed after runs had measured the tilt.
ANGLE_REVISED = ("issue 47: the teacher's directions within the clustering threshold (20 deg; "
                 "measured 12-14 deg, the --full run 14.1) -> the finite-M lasso's tilted "
                 "directions within 2 deg (pilot seeds 1-5: <= 0.3 deg), after the tilt's size "
                 "had been seen; the tilt itself is derived (lasso_free_directions: 13.2 deg "
                 "on the population)")

_S_STAR = ('abstract 3: "supported on at most S* atoms modulo finite-rank realization '
           'symmetry"')
_SYM_SOURCE = ('abstract 3: "two admissible parameter measures induce the same network function '
               'in L2 exactly when their active components agree modulo the finite-rank '
               'realization symmetry"')
_S_STAR_SOURCE = ('abstract 3: "supported on at most S* atoms modulo finite-rank realization '
                  'symmetry, with S* bounded by an explicit coefficient-threshold number"; own')
_COEF = "identifiability: atom coefficient a|w| - finite-M lasso's (largest)"
_COEF_KEY = "identifiability: atom coefficient a|w| - lasso-shrunk teacher's (largest)"
_THRESHOLD_COEF = "S* threshold: active atoms' a|w| - thresholded lasso's (largest)"
#: The teachers of the two runs: the two-atom teacher, and the same with a weak third atom.
TEACHERS = ("two-atom", "weak")


def _particles(df: pd.DataFrame, cfg: AtomsConfig, what: str) -> np.ndarray:
    cols = ["a", *(f"w{k + 1}" for k in range(cfg.D))]
    if not set(cols) <= set(df.columns):
        raise ValueError(f"{what} must have the columns {cols}")
    return df[cols].to_numpy(np.float64)


def teacher(cfg: AtomsConfig, which: str) -> tuple[np.ndarray, np.ndarray]:
    """``(c*, U*)``: the effective coefficients ``a s`` and unit directions of a teacher."""
    atoms = cfg.teacher_atoms() if which == "two-atom" else cfg.weak_teacher_atoms()
    norms = np.linalg.norm(atoms[:, 1:], axis=1)
    return atoms[:, 0] * norms, atoms[:, 1:] / norms[:, None]


def theory_rows(cfg: AtomsConfig, which: str, x: np.ndarray, y: np.ndarray) -> pd.DataFrame:
    """The finite-M lasso of one teacher on the training data ``(x, y)``: one row an atom,
    ``teacher, atom, c, u1..uD`` (the theory table the run writes)."""
    c_star, U_star = teacher(cfg, which)
    c, U = mft.lasso_free_directions(c_star, U_star, cfg.weight_decay, x=x, y=y)
    return pd.DataFrame({"teacher": which, "atom": np.arange(len(c)), "c": c,
                         **{f"u{k + 1}": U[:, k] for k in range(cfg.D)}})


def _finite_m(theory: pd.DataFrame, which: str, D: int) -> tuple[np.ndarray, np.ndarray]:
    rows = theory[theory["teacher"] == which].sort_values("atom")
    return (rows["c"].to_numpy(float),
            rows[[f"u{k + 1}" for k in range(D)]].to_numpy(float))


def _matched(p: np.ndarray, clusters: AtomClusters, U: np.ndarray,
             s: int) -> tuple[np.ndarray, float]:
    """The a|w| of the heavy cluster nearest each direction ``U`` (NaN if the clusters are
    fewer), and the largest angle (deg) from ``U`` to the nearest of the ``s`` heaviest."""
    heavy = clusters.centers[:s]
    if len(heavy) < len(U) or not len(U):
        return np.full(len(U), np.nan), float("nan")
    got = cluster_coefficients(p, clusters, U, s)
    cos = np.clip((heavy @ U.T).max(axis=0), -1.0, 1.0)
    return got, float(np.degrees(np.arccos(cos)).max())


def kernel_oracle_gap(directions: np.ndarray) -> float:
    """Largest relative difference of :func:`~specdyn.theory.mean_field.relu_gram` from the
    quadrature over the angle (:func:`~specdyn.theory.oracles.relu_kernel_quadrature`) over
    the pairs of ``directions``."""
    U = directions / np.linalg.norm(directions, axis=1, keepdims=True)
    G = mft.relu_gram(U)
    t = np.arccos(np.clip(U @ U.T, -1.0, 1.0))
    Q = np.vectorize(oracles.relu_kernel_quadrature)(t)
    return float(np.max(np.abs(G - Q) / np.maximum(np.abs(Q), 1e-300)))


def _probes(D: int) -> np.ndarray:
    from specdyn.sim import derive_seed

    return np.random.default_rng(derive_seed(PROBE_SEED, "probes")).standard_normal(
        (PROBES, D))


def atoms_figure_readings(df: pd.DataFrame, weak: pd.DataFrame, theory: pd.DataFrame,
                          cfg: AtomsConfig) -> dict[str, Any]:
    """What the sparse-atoms figure draws of its claims, read off the tables with the
    claims' own helpers and tolerances.

    Keys: ``mass`` (label -> |a|-mass in the K heaviest clusters, K = 1, 2, ...),
    ``s_star`` (label -> the claimed bound), ``off_share`` (the switched-off atom's share),
    ``coef`` (label -> (teacher c*, population lasso, finite-M lasso, measured) per teacher
    atom; ReLU only, 0 where the lasso switches the atom off), ``lasso_directions`` (the
    two-atom teacher's finite-M lasso atom directions; ReLU only), ``orbit`` ((on, off)
    relative change of ``f``, or None), and the tolerances ``mass_fraction``, ``coef_tol``,
    ``symmetry_tol``, ``off_orbit_min``.
    """
    odd = odd_activation(cfg.activation)
    out: dict[str, Any] = {"mass": {}, "s_star": {}, "coef": {},
                           "mass_fraction": ATOM_MASS_FRACTION, "coef_tol": COEFFICIENT_TOL,
                           "symmetry_tol": SYMMETRY_TOL, "off_orbit_min": OFF_ORBIT_MIN}
    for label, table, which in (("two-atom teacher", df, "two-atom"),
                                ("with a weak third atom", weak, "weak")):
        p = _particles(table, cfg, label)
        clusters = cluster_directions(p, threshold_deg=cfg.threshold_deg, symmetric=odd)
        c_star, U_star = teacher(cfg, which)
        active = np.flatnonzero(mft.lasso_threshold_coefficients(c_star, U_star,
                                                                 cfg.weight_decay))
        out["mass"][label] = np.array([clusters.top_mass(k)
                                       for k in range(1, clusters.K + 1)])
        out["s_star"][label] = int(active.size)
        if which == "weak":
            off = np.setdiff1d(np.arange(len(c_star)), active)
            out["off_share"] = share_near(p, U_star[off], cfg.threshold_deg, odd)
        if cfg.activation == "relu":
            c_pop, _ = mft.lasso_free_directions(c_star, U_star, cfg.weight_decay)
            c_m, U_m = _finite_m(theory, which, cfg.D)
            meas = np.zeros(len(c_star))
            meas[active] = _matched(p, clusters, U_m[active], active.size)[0]
            out["coef"][label] = (c_star, c_pop, c_m, meas)
            if which == "two-atom":
                out["lasso_directions"] = U_m[active]
    moved = orbit_changes(_particles(df, cfg, "df"), cfg.activation)
    out["orbit"] = None if moved is None else moved[:2]
    return out


def _coefficient_claims(p: np.ndarray, clusters: AtomClusters, theory: pd.DataFrame,
                        cfg: AtomsConfig, which: str) -> list[Claim]:
    """ReLU: the heavy clusters against the lasso with free directions (finite M, and the
    size of the deviation from the population lasso); for the two-atom teacher also the
    angle to the finite-M atoms."""
    c_star, U_star = teacher(cfg, which)
    c_pop, U_pop = mft.lasso_free_directions(c_star, U_star, cfg.weight_decay)
    c_m, U_m = _finite_m(theory, which, cfg.D)
    on = np.flatnonzero(c_pop != 0)
    meas, angle = _matched(p, clusters, U_m[on], on.size)
    err = float(np.max(np.abs(meas - c_m[on])))
    tilt = np.degrees(np.arccos(np.clip(np.sum(U_m[on] * U_star[on], axis=1), -1, 1)))
    fixed = mft.lasso_threshold_coefficients(c_star, U_star, cfg.weight_decay)[on]
    told = (f"measured {np.round(meas, 4).tolist()} against {np.round(c_m[on], 4).tolist()} "
            f"(population {np.round(c_pop[on], 4).tolist()}; teacher's directions fixed: "
            f"{np.round(fixed, 4).tolist()})")
    if which == "weak":
        return [within(_THRESHOLD_COEF, err, 0.0, COEFFICIENT_TOL, source=_S_STAR_SOURCE,
                       note=f"own: a|w| / N of the heavy cluster nearest each active atom of the "
                            f"finite-M lasso with free directions on the run's own data; {told}",
                       revised=ATOMS_M_REVISED, revised_how="restated", aspect="size")]
    return [
        within(f"atoms at the tilted lasso atoms: largest angle to the {on.size} heaviest "
               "clusters (deg)", angle, 0.0, ANGLE_TOL, source=OWN, partner=_COEF,
               key="atoms at the teacher's directions: largest angle to the 2 heaviest "
                   "clusters (deg)",
               note="where the S* atoms of abstract 3 sit: weight decay tilts them off the "
                    f"teacher's directions (finite-M lasso: {np.round(tilt, 2).tolist()} deg); "
                    "per atom, the angle from its direction to the nearest heavy cluster centre",
               revised=ANGLE_REVISED, revised_how="restated", aspect="size"),
        within(_COEF, err, 0.0, COEFFICIENT_TOL,
               source=f"{_SYM_SOURCE}; own", key=_COEF_KEY,
               note="own: ReLU's symmetry is the positive rescaling (a, w) -> (a/c, c w): only "
                    "a|w| per direction is identified; weight decay makes the objective a lasso "
                    f"on it, solved with free directions on the run's own data; {told}",
               revised=ATOMS_M_REVISED, revised_how="restated", aspect="size"),
        sized("finite-M deviation: |a|w| - population lasso's| against the finite-M lasso's",
              float(np.linalg.norm(meas - c_pop[on])), float(np.linalg.norm(c_m[on] - c_pop[on])),
              DEVIATION_FACTOR, source=OWN, aspect="size",
              predicted_by="the lasso on the run's own M samples against the population's "
                           "(Euclidean norm over the atoms)",
              note="a particle measure exactly at the population theory (zero deviation) "
                   "fails; factor from pilot seeds 1-5 (ratios 1.02-1.08)"),
        within("the lasso's kernel against quadrature over the angle (largest relative "
               "difference)", kernel_oracle_gap(np.vstack([U_star, U_pop[on], U_m[on]])), 0.0,
               KERNEL_TOL, source=OWN, partner=_COEF, aspect="oracle",
               note="relu_gram, which the population lasso, the claims and the figure call, "
                    "against relu_kernel_quadrature at the angles between the teacher's and "
                    "the lasso's atoms"),
    ]


def threshold_claims(weak: pd.DataFrame, theory: pd.DataFrame, cfg: AtomsConfig) -> list[Claim]:
    """The S* threshold claims on the run with the weak third atom (own derivation).

    The zero-temperature lasso on the teacher's atoms
    (:func:`~specdyn.theory.mean_field.lasso_threshold_coefficients`) switches off an
    atom whose coefficient is below the weight-decay threshold: its count of non-zero
    coefficients is the coefficient-threshold number ``S*(lambda')``, here 2 of the
    teacher's 3 atoms. Checked: the fewest clusters holding ``ATOM_MASS_FRACTION`` of the
    mass is at most ``S*(lambda')``; the sub-threshold atom's direction holds at most
    ``1 - ATOM_MASS_FRACTION`` of it; the active atoms' effective coefficients meet the
    finite-M lasso within ``COEFFICIENT_TOL`` (ReLU; the partner of the other two).
    """
    p = _particles(weak, cfg, "weak")
    c_star, U_star = teacher(cfg, "weak")
    c_thr = mft.lasso_threshold_coefficients(c_star, U_star, cfg.weight_decay)
    active = np.flatnonzero(c_thr != 0)
    s_thr = int(active.size)
    odd = odd_activation(cfg.activation)
    clusters = cluster_directions(p, threshold_deg=cfg.threshold_deg, symmetric=odd)
    off = np.setdiff1d(np.arange(len(c_star)), active)
    relu = cfg.activation == "relu"
    claims = [
        within(f"S* threshold: atoms holding {ATOM_MASS_FRACTION:.0%} of the mass <= "
               f"S*(lambda') = {s_thr} (teacher: {len(c_star)} atoms)",
               float(clusters.n_atoms(ATOM_MASS_FRACTION)), 1, s_thr, source=_S_STAR_SOURCE,
               partner=_THRESHOLD_COEF if relu else "",
               note=f"a weak third atom {cfg.weak_a:g} relu(e3 . x) added to the teacher; "
                    f"own: the thresholded lasso on the teacher's atoms leaves "
                    f"{np.round(c_thr, 3).tolist()} (weight decay {cfg.weight_decay:g}), "
                    f"so the coefficient-threshold number is {s_thr}, not {len(c_star)}"),
        within("S* threshold: |a|-share of the particles within the clustering angle of "
               "the switched-off atom", share_near(p, U_star[off], cfg.threshold_deg, odd),
               0.0, 1.0 - ATOM_MASS_FRACTION, source=_S_STAR_SOURCE,
               partner=_THRESHOLD_COEF if relu else "",
               note=f"directions within {cfg.threshold_deg:g} deg of the teacher atoms the "
                    f"thresholded lasso switches off ({off.tolist()})"),
    ]
    if relu:
        claims += _coefficient_claims(p, clusters, theory, cfg, "weak")
    return claims


def atoms_claims(df: pd.DataFrame, cfg: AtomsConfig, weak: pd.DataFrame | None = None,
                 theory: pd.DataFrame | None = None,
                 mass: pd.DataFrame | None = None) -> list[Claim]:
    """The claims of ``sparse-atoms``, a pure function of its tables and config.

    The particles (rows ``a, w1..wD``) are clustered by direction, weighted by
    ``|a|`` (:func:`~specdyn.measure.atoms.cluster_directions`, ``cfg.threshold_deg``).

    * Abstract 3: the long-time measure is supported on at most ``S*`` atoms;
      for the two-atom teacher ``S* = 2``: the fewest clusters holding
      ``ATOM_MASS_FRACTION`` of the mass is at most 2.
    * Where they sit, what they weigh (own; ReLU, with ``theory``, the finite-M lasso on
      the run's data): each finite-M lasso atom has a heavy cluster within ``ANGLE_TOL``,
      whose ``sum a |w| / N`` (the only part ReLU's positive rescaling leaves identified)
      meets the lasso's within ``COEFFICIENT_TOL``; the deviation from the population
      lasso has the finite-M lasso's size (within ``DEVIATION_FACTOR``); the lasso's kernel
      agrees with quadrature.
    * The lasso certificate and the realisation symmetry itself: sanity checks.

    The S* bound and the symmetry pair are met by any table whose directions stay (a
    shuffled or constant ``a``): their partner is the coefficient claim (ReLU), which is
    not. With ``weak``, the S* threshold claims (:func:`threshold_claims`) follow; with the
    mass table ``mass`` (ReLU), the transient's clock (:func:`clock_claim`).
    """
    p = _particles(df, cfg, "df")
    odd = odd_activation(cfg.activation)
    clusters = cluster_directions(p, threshold_deg=cfg.threshold_deg, symmetric=odd)
    c_star, U_star = teacher(cfg, "two-atom")
    relu = cfg.activation == "relu" and theory is not None
    claims = [
        within(f"atoms holding {ATOM_MASS_FRACTION:.0%} of the mass <= S* = {len(c_star)}",
               float(clusters.n_atoms(ATOM_MASS_FRACTION)), 1, len(c_star), source=_S_STAR,
               partner=_COEF if relu else "",
               note=f"|a|-weighted direction clusters ({cfg.threshold_deg:g} deg) of the final "
                    f"particles; mass in the {len(c_star)} heaviest: "
                    f"{clusters.top_mass(len(c_star)):.3f}"),
    ]
    if relu:
        assert theory is not None
        claims += _coefficient_claims(p, clusters, theory, cfg, "two-atom")
        c_pop, U_pop = mft.lasso_free_directions(c_star, U_star, cfg.weight_decay)
        sup, gap = mft.lasso_certificate(c_pop, U_pop, c_star, U_star, cfg.weight_decay,
                                         _probes(cfg.D))
        claims.append(within(
            "the population lasso is optimal: max |h(u)| / lambda' over the probes, and "
            "its gap at the atoms", max(sup - 1.0, gap), 0.0, CERTIFICATE_TOL, source=OWN,
            sanity=True,
            note=f"lasso_certificate over {PROBES} random directions: sup {sup:.9f}, gap at "
                 f"the atoms {gap:.2e}; the measure lasso is convex, so these conditions "
                 "certify the free-direction atoms globally"))
    moved = orbit_changes(p, cfg.activation)
    if moved is not None:
        on, off, how = moved
        claims += [
            within("identifiability: f moved along the realisation symmetry (relative rms "
                   "change)", on, 0.0, SYMMETRY_TOL, source=_SYM_SOURCE, sanity=True,
                   revised=ORBIT_SANITY, revised_how="restated",
                   note=f"own check of the 'if' direction on the learned measure: {how}; "
                        f"exact, so the tolerance is float rounding; an identity of the "
                        f"activation, true of any particles"),
            within("identifiability: the same move of a alone, off the orbit (relative rms "
                   "change)", off, OFF_ORBIT_MIN, np.inf, source=_SYM_SOURCE, sanity=True,
                   revised=ORBIT_SANITY, revised_how="restated",
                   note="the active components change, so f must: a change far above "
                        f"rounding (>= {OFF_ORBIT_MIN:g}), true of any particles with f != 0; "
                        "the 'only if' direction on learned measures is the coefficient "
                        "claim"),
        ]
    if weak is not None and theory is not None:
        claims += threshold_claims(weak, theory, cfg)
    if weak is not None:
        claims.append(spread_claim(p, clusters, _particles(weak, cfg, "weak"), cfg))
    if mass is not None and cfg.activation == "relu":
        claims.append(clock_claim(mass, cfg))
    return claims


def spread_claim(p: np.ndarray, clusters: AtomClusters, weak: np.ndarray,
                 cfg: AtomsConfig) -> Claim:
    """The temperature's width of the atoms: the RMS over the two heaviest clusters of both
    runs of their |a|-weighted angular spread, against seeds 1-6's (``SPREAD_DEG``)."""
    odd = odd_activation(cfg.activation)
    spreads = np.concatenate([
        angular_spread(p, clusters, 2),
        angular_spread(weak, cluster_directions(weak, threshold_deg=cfg.threshold_deg,
                                                symmetric=odd), 2)])
    predicted = SPREAD_DEG * np.sqrt((cfg.D - 1) / (SPREAD_D - 1))
    return sized("atoms' width: |a|-weighted angular spread in the heaviest clusters (deg)",
                 float(np.sqrt(np.mean(spreads ** 2))), predicted, SPREAD_FACTOR, source=OWN,
                 key="atoms' angular spread",
                 predicted_by="pilot seeds 1-6 (2.51-3.13 deg at D = 3), x sqrt((D - 1) / 2)",
                 note="at tau > 0 the particles spread about each atom (a Gibbs width, "
                      "exp(-V / tau)): particles exactly at the lasso's atoms (zero width) "
                      "fail, and so does a run at another temperature (ten times: about "
                      "twice the width); RMS of the four clusters' spreads (per run, the two "
                      f"heaviest: {np.round(spreads, 2).tolist()} deg)",
                 revised=SPREAD_REVISED, revised_how="tighter")


def flow_drift(theta: np.ndarray, others: np.ndarray, lam: float) -> np.ndarray:
    """``-grad V`` of each particle ``[a, w]`` under the population flow (ReLU,
    ``x ~ N(0, I)``): ``V = a E[(f - f*) relu(w . x)] + (lam/2) |theta|^2`` with ``others``
    the rows ``[c_j, v_j]`` of ``f - f* = sum_j c_j relu(v_j . x)``. Closed forms, ``t`` the
    angle of ``w`` and ``v``: ``E relu(w.x) relu(v.x) = |w||v| (sin t + (pi - t) cos t) /
    2 pi``, its ``w``-gradient ``|v| ((pi - t) v/|v| + sin t w/|w|) / 2 pi``."""
    a, w = theta[:, 0], theta[:, 1:]
    rw = np.maximum(np.linalg.norm(w, axis=1), 1e-300)
    rv = np.linalg.norm(others[:, 1:], axis=1)
    uw, uv = w / rw[:, None], others[:, 1:] / rv[:, None]
    cos = np.clip(uw @ uv.T, -1.0, 1.0)
    pt, sin, rc = np.pi - np.arccos(cos), np.sqrt(1.0 - cos * cos), rv * others[:, 0]
    g = rw * ((sin + pt * cos) @ rc) / (2 * np.pi)
    gw = ((pt * rc) @ uv + (sin @ rc)[:, None] * uw) / (2 * np.pi)
    return -np.column_stack([g + lam * a, a[:, None] * gw + lam * w])


@functools.lru_cache(maxsize=4)
def flow_unclaimed(cfg: AtomsConfig, times: tuple[float, ...]) -> np.ndarray:
    """The unclaimed mass (1 - the |a|-mass of the S* heaviest clusters) of the population
    mean-field flow of the two-atom teacher at the increasing ``times`` > 0: ReLU, zero
    temperature, from the run's initial law ``a ~ N(0, 1)``, ``w ~ N(0, I/D)`` (the mean
    over ``FLOW_RUNS`` draws of ``FLOW_N`` particles, Heun steps <= ``FLOW_DT``), clustered
    as the run's. Written here from the closed-form kernel, not taken from the engine."""
    from specdyn.sim import derive_seed

    atoms = cfg.teacher_atoms()
    out = np.zeros((FLOW_RUNS, len(times)))
    for r in range(FLOW_RUNS):
        theta = np.random.default_rng(derive_seed(FLOW_SEED, f"flow {r}")).standard_normal(
            (FLOW_N, cfg.D + 1))
        theta[:, 1:] /= np.sqrt(cfg.D)
        now = 0.0
        for j, t in enumerate(times):
            n = max(1, int(np.ceil((t - now) / FLOW_DT - 1e-9)))
            h = (t - now) / n
            for _ in range(n):
                others = np.vstack([theta / [len(theta), *np.ones(cfg.D)],
                                    atoms * [-1.0, *np.ones(cfg.D)]])
                k1 = flow_drift(theta, others, cfg.weight_decay)
                ahead = theta + h * k1  # the Euler step, then the trapezoid
                others[:len(theta)] = ahead / [len(ahead), *np.ones(cfg.D)]
                theta = theta + 0.5 * h * (k1 + flow_drift(ahead, others, cfg.weight_decay))
            now = t
            out[r, j] = 1.0 - cluster_directions(
                theta, threshold_deg=cfg.threshold_deg).top_mass(len(atoms))
    return out.mean(axis=0)


def clock_claim(mass: pd.DataFrame, cfg: AtomsConfig) -> Claim:
    """The transient's clock: the geometric mean of the run's unclaimed mass (the |a|-mass
    outside its S* = 2 heaviest clusters, the mass table) over its checkpoints
    ``0 < t <= CLOCK_T``, against the flow's at the same times (:func:`flow_unclaimed`)."""
    s = len(cfg.teacher_atoms())
    rows = mass[(mass["k"] == s) & (mass["t"] > 0) & (mass["t"] <= CLOCK_T)].sort_values("t")
    t = tuple(float(x) for x in rows["t"])
    got = (1.0 - rows["top_mass"].to_numpy(float)) if t else np.array([np.nan])
    flow = flow_unclaimed(cfg, t) if t else np.array([np.nan])
    with np.errstate(divide="ignore"):  # no unclaimed mass at all: 0, the claim fails
        gm = [float(np.exp(np.mean(np.log(u)))) for u in (got, flow)]
    return sized(f"clock: unclaimed mass over the transient (t <= {CLOCK_T:g}), geometric "
                 "mean, against the mean-field flow's", gm[0], gm[1], CLOCK_FACTOR,
                 source=OWN, aspect="clock", key="clock: unclaimed mass",
                 predicted_by=f"the population mean-field flow from the initial law, tau = 0 "
                              f"(flow_unclaimed: {FLOW_RUNS} x {FLOW_N} particles)",
                 note=f"|a|-mass outside the {s} heaviest clusters at t = {list(t)}: run "
                      f"{np.round(got, 3).tolist()}, flow {np.round(flow, 3).tolist()}; a "
                      "run at another speed reads the flow's mass at another time (at half "
                      "the speed, t / 2: about twice); the final particles, converged long "
                      "before the end, cannot tell",
                 revised=CLOCK_REVISED, revised_how="tighter")
