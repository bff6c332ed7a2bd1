"""Mean-field Langevin dynamics under muP (related-notes.md, section 3).

Three experiments:

* ``propagation-of-chaos``: per-particle squared distance between ``N``-particle
  systems and their synchronously coupled mean-field copies, against ``N`` on
  log axes, with the fitted slope (claim: ``O(1/N)`` uniformly in time) and
  the spread over seeds.
* ``sparse-atoms``: a two-atom teacher learnt at small temperature; particles
  at the end coloured by |a|-weighted direction cluster against the teacher's
  atoms, and the mass in the heaviest clusters over time.
* ``error-budget``: statistical (against M), optimisation (against t),
  particle (against N) and sparse-residual (against K) parts of the error.

Config fields follow ``docs/concepts.md``: ``D`` inputs (the notes' ``d``),
``M`` training samples (``n``), ``N`` particles, ``dt`` the Langevin flow step
(``eta``).

Default target ``f*(x) = tanh(2 x1) + 0.5 He2(x1)`` and the default student
activation ``tanh-shift`` (``tanh(z + 1/2)``): a plain ``tanh`` network has no
bias and is odd, so it cannot represent the even ``He2`` part at all.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn import _validate as v
from specdyn import io
from specdyn.data.hermite import HermiteTarget, hermite_coefficients
from specdyn.measure.atoms import cluster_directions
from specdyn.measure.exponents import loglog_fit
from specdyn.plot import mean_field as mplot
from specdyn.plot import save_figure
from specdyn.runs.claims import OWN, Claim, loglog_slope, rank_correlation, within
from specdyn.runs.registry import ExperimentResult, Measured, register
from specdyn.theory.mean_field import lasso_atom_coefficients, lasso_threshold_coefficients

#: Parts of the ``error-budget`` table measured on runs (the "sparse residual" rows are the
#: target's Hermite tail, computed from its coefficients).
_MEASURED_PARTS = ("statistical", "optimisation", "particle", "K-cluster residual",
                   "init scale")
#: Knobs of the ``init scale`` rows: the test error at the budget's time and at ``t_end``.
_INIT_EARLY, _INIT_END = "init scale at the budget time", "init scale at t_end"

_ACTS = ("linear", "relu", "tanh", "gelu", "erf", "quadratic", "tanh-shift")


def notes_target(degree: int = 40) -> HermiteTarget:
    """``f*(x) = tanh(2 x1) + 0.5 He2(x1)`` as a :class:`~specdyn.data.hermite.HermiteTarget`.

    Coefficients in the orthonormal basis ``h_k = He_k / sqrt(k!)`` up to
    ``degree`` (``He2 = sqrt(2) h2``); the exact link is kept as ``fn``.
    """
    c = hermite_coefficients(lambda z: np.tanh(2 * z), degree)
    c[2] += 0.5 * math.sqrt(2.0)

    def fn(z: np.ndarray) -> np.ndarray:
        return np.tanh(2 * z) + 0.5 * (z * z - 1)

    return HermiteTarget(c, fn=fn, name="tanh(2z) + 0.5 He2(z)")


#: The declared fields every mean-field config shares (the settings of the particle engine).
_COMMON: dict[str, v.Constraint] = dict(
    activation=v.Choice(*_ACTS), D=v.SIZE, dt=v.POSITIVE, temperature=v.NONNEGATIVE,
    weight_decay=v.NONNEGATIVE, steps=v.SIZE)


# --------------------------------------------------------------------------------------
# propagation of chaos

@dataclass(frozen=True)
@v.constrained_fields(**_COMMON, M=v.SIZE,
                      N_values=v.Tuple(v.SIZE, min_len=2, why="two sizes at least, to fit a slope"),
                      reference_N=v.SIZE, replicas=v.SIZE,
                      seeds=v.Tuple(v.Int(strict=True), min_len=1), even_checkpoints=v.Int(2))
class ChaosConfig:
    """Coupled distance against N; defaults are the quick version (~30 s on one core).

    ``even_checkpoints`` is a count of evenly spaced steps from 0 to ``steps``
    (``Schedule.even``); a plain ``checkpoints`` key is a log-spaced count everywhere.
    """

    activation: str = "tanh-shift"
    D: int = 5
    M: int = 100
    dt: float = 0.05
    temperature: float = 0.02
    weight_decay: float = 0.05
    steps: int = 60
    N_values: tuple[int, ...] = (25, 50, 100, 200, 400, 800)
    reference_N: int = 4000
    replicas: int = 4
    seeds: tuple[int, ...] = (0, 1, 2)
    even_checkpoints: int = 7



def _chaos_full() -> ChaosConfig:
    return ChaosConfig(M=400, steps=400, reference_N=16000, replicas=4, seeds=(0, 1, 2, 3, 4),
                       N_values=(25, 50, 100, 200, 400, 800, 1600), even_checkpoints=11)


# Claim tolerances of ``propagation-of-chaos`` (fixed before any run).
#: The O(1/N) rate: fitted log-log slope against N within this of -1.
SLOPE_TOL = 0.2
#: Uniform in time: largest growth of ``N x distance`` (mean over N and seeds)
#: from the middle checkpoint to the last.
UNIFORM_GROWTH_MAX = 0.25


#: The seed statement the propagation-of-chaos claims check.
_CHAOS_RATE = ('abstract 3: "The finite-particle approximation has uniform-in-time '
               'squared-Wasserstein rate O(N^-1)"')


def uniform_growth(df: pd.DataFrame) -> tuple[int, int, float]:
    """``(mid, end, g)``: relative growth ``g`` of ``N x w2_distance`` (mean over N and
    seeds) from the checkpoint ``mid`` nearest half the run to the last, ``end``.

    Uniform-in-time ``W2^2 = O(1/N)`` means ``N x W2^2`` levels off, ``g -> 0``.
    NaN when the distance at ``mid`` is zero.
    """
    scaled = df.assign(s=df["w2_distance"] * df["N"]).groupby("step")["s"].mean()
    steps = scaled.index.to_numpy()
    end = int(steps[-1])
    late = steps[steps > 0]
    mid = int(late[np.argmin(np.abs(late - end / 2))]) if late.size else end
    growth = float(scaled[end] / scaled[mid] - 1.0) if scaled[mid] > 0 else float("nan")
    return mid, end, growth


def chaos_claims(df: pd.DataFrame) -> list[Claim]:
    """The claims of ``propagation-of-chaos``, a pure function of its table.

    ``df`` has one row per (seed, N, checkpoint): the coupled per-particle
    squared distance ``sq_distance`` (an upper bound of ``W2^2``) and the exact
    ``w2_distance`` (``W2^2``). Abstract 3: ``W2^2 = O(1/N)`` uniformly in time.

    * slope of the seed-mean ``sq_distance`` against N at the end, and of
      ``w2_distance``, within ``SLOPE_TOL`` of -1;
    * the same slope at every checkpoint after the start (the worst one);
    * ``N x w2_distance`` (mean over N and seeds) grows by at most
      ``UNIFORM_GROWTH_MAX`` from the middle checkpoint to the last. Disputed:
      measured still growing about linearly up to t = 20 at the quick sizes.
    """
    needed = {"seed", "N", "step", "sq_distance", "w2_distance"}
    if not needed <= set(df.columns):
        raise ValueError(f"df must have the columns {sorted(needed)}")
    mean = df.groupby(["step", "N"])[["sq_distance", "w2_distance"]].mean()
    steps = np.sort(df["step"].unique())
    late = steps[steps > 0]

    def slope(step: int, col: str) -> float:
        m = mean.loc[step]
        return loglog_slope(m.index.to_numpy(), m[col].to_numpy())

    slopes = np.array([slope(int(t), "sq_distance") for t in late])
    worst = float(slopes[np.argmax(np.abs(slopes + 1.0))]) if slopes.size else float("nan")
    mid, end, growth = uniform_growth(df)
    lo, hi = -1.0 - SLOPE_TOL, -1.0 + SLOPE_TOL
    return [
        within("slope of the coupled distance against N", slope(end, "sq_distance"), lo, hi,
               source=_CHAOS_RATE,
               note="least squares over N of the seed-mean per-particle squared distance "
                    "to the mean-field copies at the end; claim O(1/N)"),
        within("slope of W2^2 against N", slope(end, "w2_distance"), lo, hi,
               source=_CHAOS_RATE,
               note="exact W2^2 between each system and its copies (optimal assignment), "
                    "seed mean at the end"),
        within("worst slope over checkpoints t > 0", worst, lo, hi, source=_CHAOS_RATE,
               note=f"the rate at each of the {late.size} checkpoints after the start "
                    "(uniform in time)"),
        within("N x W2^2: growth from mid-run to the end", growth, -np.inf,
               UNIFORM_GROWTH_MAX, source=_CHAOS_RATE,
               note=f"mean over N and seeds of N x w2_distance, step {mid} -> {end}; "
                    "uniform in time means it levels off",
               disputed="no plateau within reach: at the quick sizes N x W2^2 still grows "
                        "about linearly to t = 20 (3.6 at t = 10, 8.0 at t = 20; the --full "
                        "horizon), though the 1/N rate holds at every checkpoint"),
    ]


def _chaos_claims_of(cfg: ChaosConfig, folder: Path) -> list[Claim]:
    return chaos_claims(pd.read_parquet(folder / "propagation-of-chaos.parquet"))


def _atoms_claims_of(cfg: AtomsConfig, folder: Path) -> list[Claim]:
    return atoms_claims(pd.read_parquet(folder / "sparse-atoms.parquet"), cfg,
                        pd.read_parquet(folder / "sparse-atoms_weak.parquet"))


def _budget_claims_of(cfg: BudgetConfig, folder: Path) -> list[Claim]:
    return budget_claims(pd.read_parquet(folder / "error-budget.parquet"))


@register("propagation-of-chaos",
          "mean-field Langevin: coupled particle distance against N, slope about -1",
          ChaosConfig, full=_chaos_full, claims=_chaos_claims_of,
          measured={"propagation-of-chaos.parquet": Measured(
              ("sq_distance", "w2_distance", "function_gap"))})
def run_chaos(cfg: ChaosConfig, out_dir: Path) -> ExperimentResult:
    """Synchronous coupling (same start, same noise) to copies driven by a reference."""
    from specdyn import Schedule
    from specdyn.sim import propagation_of_chaos

    target = notes_target()
    rows = []
    finals = []
    w2s = []
    scaled = []
    for seed in cfg.seeds:
        run = propagation_of_chaos(cfg.activation, target, cfg.N_values, cfg.D, cfg.M,
                                   dt=cfg.dt, temperature=cfg.temperature,
                                   weight_decay=cfg.weight_decay, steps=cfg.steps, seed=seed,
                                   reference_N=cfg.reference_N, replicas=cfg.replicas,
                                   checkpoints=Schedule.even(cfg.even_checkpoints), w2=True,
                                   progress=True)
        assert run.w2_distance is not None
        for i, N in enumerate(run.N):
            for j, t in enumerate(run.times):
                rows.append({"seed": seed, "N": int(N), "step": int(run.steps[j]),
                             "t": float(t), "sq_distance": run.sq_distance[i, j],
                             "w2_distance": run.w2_distance[i, j],
                             "function_gap": run.function_gap[i, j]})
        finals.append(run.sq_distance[:, -1])
        w2s.append(run.w2_distance[:, -1])
        scaled.append(run.sq_distance * run.N[:, None])
        times = run.times
        Ns = run.N
    D = np.asarray(finals)
    slope, intercept = loglog_fit(Ns, D.mean(0))
    per_seed = [loglog_fit(Ns, row)[0] for row in D]
    df = pd.DataFrame(rows)
    mid, end, growth = uniform_growth(df)
    fig = mplot.plot_propagation_of_chaos(
        Ns, D, float(slope), float(intercept), times, np.mean(scaled, axis=0),
        np.asarray(w2s), growth=(mid * cfg.dt, end * cfg.dt, growth))
    slope_w2 = loglog_fit(Ns, np.mean(w2s, axis=0))[0]
    figures = save_figure(fig, out_dir / "propagation-of-chaos")
    table = io.write_table(df, out_dir / "propagation-of-chaos.parquet")
    summary = {"slope": float(slope), "slope_w2": slope_w2, "slope_per_seed": per_seed,
               "slope_spread": float(np.ptp(per_seed)),
               "reference_N": cfg.reference_N, "t_final": float(times[-1])}
    return ExperimentResult("propagation-of-chaos", out_dir, figures, [table], summary)


# --------------------------------------------------------------------------------------
# sparse atoms

@dataclass(frozen=True)
@v.constrained_fields(**{**_COMMON, "D": v.Int(3, why="a two-atom teacher and a weak third "
                                                       "atom along e3")}, M=v.SIZE,
                      N=v.SIZE, teacher_a=v.Tuple(v.Real(), length=2), teacher_scale=v.POSITIVE,
                      weak_a=v.Real(),
                      threshold_deg=v.Real(0.0, 90.0, lo_open=True), seed=v.SEED,
                      even_checkpoints=v.Int(2))
class AtomsConfig:
    """Two-atom teacher ``a1 sigma(s e1 . x) + a2 sigma(s e2 . x)`` learnt at small temperature.

    A second run (the S* threshold claims) adds a weak third atom ``weak_a sigma(s e3 . x)``
    to the same teacher, same settings and seed.

    ``even_checkpoints`` is a count of evenly spaced steps from 0 to ``steps``
    (``Schedule.even``); a plain ``checkpoints`` key is a log-spaced count everywhere.
    """

    activation: str = "relu"
    D: int = 3
    M: int = 400
    N: int = 200
    dt: float = 0.05
    temperature: float = 1e-4
    weight_decay: float = 0.1
    steps: int = 1000
    teacher_a: tuple[float, float] = (1.0, -1.0)
    teacher_scale: float = 1.0
    #: Coefficient of the weak third atom: below the lasso threshold (about
    #: 2 weight_decay here, :func:`~specdyn.theory.mean_field.lasso_threshold_coefficients`)
    weak_a: float = 0.1
    threshold_deg: float = 20.0
    seed: int = 0
    even_checkpoints: int = 11


    def teacher_atoms(self) -> np.ndarray:
        """``(2, D+1)`` rows ``[a_k, w_k]``: ``w_1 = s e1``, ``w_2 = s e2``."""
        atoms = np.zeros((2, self.D + 1))
        atoms[:, 0] = self.teacher_a
        atoms[0, 1] = atoms[1, 2] = self.teacher_scale
        return atoms

    def weak_teacher_atoms(self) -> np.ndarray:
        """``(3, D+1)``: :meth:`teacher_atoms` and the weak atom ``[weak_a, s e3]``."""
        weak = np.zeros((1, self.D + 1))
        weak[0, 0], weak[0, 3] = self.weak_a, self.teacher_scale
        return np.vstack([self.teacher_atoms(), weak])


def _atoms_full() -> AtomsConfig:
    return AtomsConfig(D=5, N=1000, M=2000, steps=4000, even_checkpoints=21)


# Claim tolerances of ``sparse-atoms`` (fixed before any run).
#: Mass fraction the sparse-atom bound is read at: the fewest clusters holding it.
ATOM_MASS_FRACTION = 0.9
#: Largest error of an atom's effective coefficient ``a |w|`` (summed over its
#: cluster, over N) against the lasso-shrunk teacher coefficient
#: (:func:`~specdyn.theory.mean_field.lasso_atom_coefficients`): twice the
#: ``1/sqrt(M) = 0.05`` sampling error of the empirical Gram at the quick M = 400.
COEFFICIENT_TOL = 0.1
#: Relative rms change of ``f`` under the realisation symmetry that counts as "unchanged":
#: the symmetry is exact, float64 rounding of a sum of N terms is ~1e-15 relative.
SYMMETRY_TOL = 1e-10
#: Relative rms change of ``f`` that counts as "changed" off the symmetry orbit: four
#: orders above SYMMETRY_TOL, far from rounding.
OFF_ORBIT_MIN = 1e-6
#: Positive rescalings ``c`` of the symmetry check: log-uniform in ``[1/RESCALE, RESCALE]``,
#: one per particle, from a fixed generator (not the run's data).
RESCALE, RESCALE_SEED = 2.0, 20261204


def _odd(activation: str) -> bool:
    """Odd activations identify the particle ``(a, w)`` with ``(-a, -w)``."""
    return activation in ("tanh", "erf", "linear")


_SYM_SOURCE = ('abstract 3: "two admissible parameter measures induce the same network function '
               'in L2 exactly when their active components agree modulo the finite-rank '
               'realization symmetry"')
_S_STAR_SOURCE = ('abstract 3: "supported on at most S* atoms modulo finite-rank realization '
                  'symmetry, with S* bounded by an explicit coefficient-threshold number"; own')
_THRESHOLD_COEF = "S* threshold: active atoms' a|w| - thresholded lasso's (largest)"


def orbit_changes(p: np.ndarray, activation: str) -> tuple[float, float, str] | None:
    """``(on, off, how)``: relative rms change of ``f`` when the particles ``p`` move along
    the realisation symmetry, and when the same move is applied to ``a`` alone.

    ReLU: ``(a, w) -> (a / c, c w)``, ``c`` log-uniform in ``[1/RESCALE, RESCALE]`` per
    particle, against ``a -> a / c``; odd activations: ``(a, w) -> (-a, -w)`` on a random
    half, against ``a -> -a`` there. ``None`` for an activation with neither symmetry.
    Probes ``x ~ N(0, I)`` and the moves come from ``RESCALE_SEED``.
    """
    from specdyn.measure.atoms import relu_rescale, sign_flip
    from specdyn.models import network_function
    from specdyn.sim import derive_seed

    rng = np.random.default_rng(derive_seed(RESCALE_SEED, "rescale"))
    x = rng.standard_normal((4096, p.shape[1] - 1))
    if activation == "relu":
        c = np.exp(rng.uniform(-np.log(RESCALE), np.log(RESCALE), len(p)))
        on = relu_rescale(p, 1.0 / c)
        off = p.copy()
        off[:, 0] /= c
        how = f"(a, w) -> (a/c, c w), c log-uniform in [1/{RESCALE:g}, {RESCALE:g}]"
    elif _odd(activation):
        mask = rng.random(len(p)) < 0.5
        on = sign_flip(p, mask)
        off = p.copy()
        off[mask, 0] *= -1.0
        how = "(a, w) -> (-a, -w) on a random half"
    else:
        return None
    f = network_function(p, x, activation)
    norm = float(np.sqrt(np.mean(f ** 2)))
    if not norm > 0:
        return float("nan"), float("nan"), how

    def rel(q: np.ndarray) -> float:
        return float(np.sqrt(np.mean((network_function(q, x, activation) - f) ** 2))) / norm

    return rel(on), rel(off), how


def threshold_claims(weak: pd.DataFrame, cfg: AtomsConfig) -> list[Claim]:
    """The S* threshold claims on the run with the weak third atom (own derivation).

    The zero-temperature lasso on the teacher's atoms
    (:func:`~specdyn.theory.mean_field.lasso_threshold_coefficients`) switches off an
    atom whose coefficient is below the weight-decay threshold: its count of non-zero
    coefficients is the coefficient-threshold number ``S*(lambda')``, here 2 of the
    teacher's 3 atoms. Checked: the fewest clusters holding ``ATOM_MASS_FRACTION`` of the
    mass is at most ``S*(lambda')``; the sub-threshold atom's direction holds at most
    ``1 - ATOM_MASS_FRACTION`` of it; the active atoms' effective coefficients meet the
    thresholded lasso within ``COEFFICIENT_TOL`` (ReLU; the partner of the other two).
    """
    cols = ["a", *(f"w{k + 1}" for k in range(cfg.D))]
    if not set(cols) <= set(weak.columns):
        raise ValueError(f"weak must have the columns {cols}")
    p = weak[cols].to_numpy(np.float64)
    atoms = cfg.weak_teacher_atoms()
    norms = np.linalg.norm(atoms[:, 1:], axis=1)
    u = atoms[:, 1:] / norms[:, None]
    c_thr = lasso_threshold_coefficients(atoms[:, 0] * norms, u, cfg.weight_decay)
    active = np.flatnonzero(c_thr != 0)
    s_thr = int(active.size)
    odd = _odd(cfg.activation)
    clusters = cluster_directions(p, threshold_deg=cfg.threshold_deg, symmetric=odd)
    dirs = p[:, 1:] / np.maximum(np.linalg.norm(p[:, 1:], axis=1, keepdims=True), 1e-300)
    off = np.setdiff1d(np.arange(len(atoms)), active)
    near = np.zeros(len(p), bool)
    for k in off:
        sim = dirs @ u[k]
        near |= (np.abs(sim) if odd else sim) >= np.cos(np.radians(cfg.threshold_deg))
    total = float(np.abs(p[:, 0]).sum())
    share = float(np.abs(p[near, 0]).sum()) / total if total > 0 else float("nan")
    relu = cfg.activation == "relu"
    claims = [
        within(f"S* threshold: atoms holding {ATOM_MASS_FRACTION:.0%} of the mass <= "
               f"S*(lambda') = {s_thr} (teacher: {len(atoms)} atoms)",
               float(clusters.n_atoms(ATOM_MASS_FRACTION)), 1, s_thr, source=_S_STAR_SOURCE,
               partner=_THRESHOLD_COEF if relu else "",
               note=f"a weak third atom {cfg.weak_a:g} relu(e3 . x) added to the teacher; "
                    f"own: the thresholded lasso on the teacher's atoms leaves "
                    f"{np.round(c_thr, 3).tolist()} (weight decay {cfg.weight_decay:g}), "
                    f"so the coefficient-threshold number is {s_thr}, not {len(atoms)}"),
        within("S* threshold: |a|-share of the particles within the clustering angle of "
               "the switched-off atom", share, 0.0, 1.0 - ATOM_MASS_FRACTION,
               source=_S_STAR_SOURCE, partner=_THRESHOLD_COEF if relu else "",
               note=f"directions within {cfg.threshold_deg:g} deg of the teacher atoms the "
                    f"thresholded lasso switches off ({off.tolist()})"),
    ]
    if relu:
        heavy = clusters.centers[:s_thr]
        if len(heavy) == s_thr and s_thr:
            match = np.argmax(heavy @ u[active].T, axis=0)
            eff = p[:, 0] * np.linalg.norm(p[:, 1:], axis=1)
            c_meas = np.array([eff[clusters.labels == j].sum() / len(p) for j in match])
            err = float(np.max(np.abs(c_meas - c_thr[active])))
        else:
            c_meas, err = np.zeros(0), float("nan")
        claims.append(within(
            _THRESHOLD_COEF, err, 0.0, COEFFICIENT_TOL, source=_S_STAR_SOURCE,
            note=f"own: effective coefficient sum a|w| / N of the heaviest cluster nearest each "
                 f"active teacher atom against the thresholded lasso; measured "
                 f"{np.round(c_meas, 3).tolist()} against "
                 f"{np.round(c_thr[active], 3).tolist()}; tolerance as the two-atom "
                 f"coefficient claim"))
    return claims


def atoms_claims(df: pd.DataFrame, cfg: AtomsConfig,
                 weak: pd.DataFrame | None = None) -> list[Claim]:
    """The claims of ``sparse-atoms``, a pure function of its final-particle table and config.

    The particles (rows ``a, w1..wD``) are clustered by direction, weighted by
    ``|a|`` (:func:`~specdyn.measure.atoms.cluster_directions`, ``cfg.threshold_deg``).

    * Abstract 3: the long-time measure is supported on at most ``S*`` atoms;
      for the two-atom teacher ``S* = 2``: the fewest clusters holding
      ``ATOM_MASS_FRACTION`` of the mass is at most 2.
    * Where they sit (own): each teacher direction has one of the ``S*``
      heaviest cluster centres within ``cfg.threshold_deg`` (the clustering's
      own resolution; at weight decay 0.1 the learned atoms tilt about 12
      degrees off the teacher's).
    * Identifiability modulo the realisation symmetry (abstract 3; ReLU only,
      whose symmetry is the positive rescaling): the effective coefficient
      ``sum a |w| / N`` of the cluster on each teacher direction equals the
      lasso-shrunk teacher coefficient within ``COEFFICIENT_TOL``.

    * Identifiability, the realisation symmetry itself (:func:`orbit_changes`): moving
      the final particles along the symmetry changes ``f`` by at most ``SYMMETRY_TOL``
      (relative rms), the same move of ``a`` alone by at least ``OFF_ORBIT_MIN``.

    The first two and the symmetry pair are met by any table whose directions stay (a
    shuffled or constant ``a``): their partner is the coefficient claim (ReLU), which is
    not. With ``weak``, the final particles of the run with the weak third atom, the S*
    threshold claims (:func:`threshold_claims`) follow.
    """
    cols = ["a", *(f"w{k + 1}" for k in range(cfg.D))]
    if not set(cols) <= set(df.columns):
        raise ValueError(f"df must have the columns {cols}")
    p = df[cols].to_numpy(np.float64)
    odd = _odd(cfg.activation)
    clusters = cluster_directions(p, threshold_deg=cfg.threshold_deg, symmetric=odd)
    atoms = cfg.teacher_atoms()
    s_star = len(atoms)
    u = atoms[:, 1:] / np.linalg.norm(atoms[:, 1:], axis=1, keepdims=True)
    heavy = clusters.centers[:s_star]
    relu = cfg.activation == "relu"
    coef_name = "identifiability: atom coefficient a|w| - lasso-shrunk teacher's (largest)"
    if len(heavy):
        sim = heavy @ u.T
        sim = np.abs(sim) if odd else sim
        match = np.argmax(sim, axis=0)  # the heavy cluster nearest each teacher atom
        angle = float(np.degrees(np.arccos(np.clip(sim.max(axis=0), -1, 1))).max())
    else:
        match, angle = np.zeros(0, dtype=int), float("nan")
    claims = [
        within(f"atoms holding {ATOM_MASS_FRACTION:.0%} of the mass <= S* = {s_star}",
               float(clusters.n_atoms(ATOM_MASS_FRACTION)), 1, s_star,
               source='abstract 3: "supported on at most S* atoms modulo finite-rank '
                      'realization symmetry"', partner=coef_name if relu else "",
               note=f"|a|-weighted direction clusters ({cfg.threshold_deg:g} deg) of the final "
                    f"particles; mass in the {s_star} heaviest: {clusters.top_mass(s_star):.3f}"),
        within(f"atoms at the teacher's directions: largest angle to the {s_star} heaviest "
               "clusters (deg)", angle, 0.0, cfg.threshold_deg,
               source=OWN, partner=coef_name if relu else "",
               note="where the S* atoms of abstract 3 sit, for an atom teacher: per teacher "
                    "atom, the angle from its direction to the nearest of the "
                    f"{s_star} heaviest cluster centres; the tolerance is the clustering's "
                    "threshold"),
    ]
    if relu:
        c_pred = lasso_atom_coefficients(atoms[:, 0] * np.linalg.norm(atoms[:, 1:], axis=1),
                                         u, cfg.weight_decay)
        eff = p[:, 0] * np.linalg.norm(p[:, 1:], axis=1)
        c_meas = np.array([eff[clusters.labels == j].sum() / len(p) for j in match])
        err = float(np.max(np.abs(c_meas - c_pred))) if c_meas.size == s_star \
            else float("nan")
        claims.append(within(
            coef_name, err, 0.0, COEFFICIENT_TOL,
            source='abstract 3: "induce the same network function in L2 exactly when their '
                   'active components agree modulo the finite-rank realization symmetry"; '
                   "own",
            note="own: the lasso shrinkage of specdyn.theory.mean_field; ReLU's symmetry "
                 "is the positive rescaling (a, w) -> (a/c, c w): only a|w| "
                 "per direction is identified; weight decay shrinks it to "
                 "c* - lambda' G^-1 sign(c*) (zero temperature); measured "
                 f"{np.round(c_meas, 3).tolist()} against {np.round(c_pred, 3).tolist()}"))
    moved = orbit_changes(p, cfg.activation)
    if moved is not None:
        on, off, how = moved
        claims += [
            within("identifiability: f moved along the realisation symmetry (relative rms "
                   "change)", on, 0.0, SYMMETRY_TOL, source=_SYM_SOURCE,
                   partner=coef_name if relu else "",
                   note=f"own check of the 'if' direction on the learned measure: {how}; "
                        f"exact, so the tolerance is float rounding"),
            within("identifiability: the same move of a alone, off the orbit (relative rms "
                   "change)", off, OFF_ORBIT_MIN, np.inf, source=_SYM_SOURCE,
                   partner=coef_name if relu else "",
                   note="the active components change, so f must: a change far above "
                        f"rounding (>= {OFF_ORBIT_MIN:g}); the 'only if' direction on "
                        "learned measures is the coefficient claim"),
        ]
    if weak is not None:
        claims += threshold_claims(weak, cfg)
    return claims


@register("sparse-atoms",
          "mean-field Langevin: particles concentrate on the atoms of a two-atom teacher",
          AtomsConfig, full=_atoms_full, claims=_atoms_claims_of,
          measured={"sparse-atoms.parquet": Measured(("a",)),
                    "sparse-atoms_weak.parquet": Measured(("a",))})
def run_atoms(cfg: AtomsConfig, out_dir: Path) -> ExperimentResult:
    """Train, cluster directions weighted by |a|, compare with the teacher's atoms."""
    from specdyn import Schedule
    from specdyn.models import AtomTeacher, get_activation
    from specdyn.sim import mean_field_langevin

    act = get_activation(cfg.activation)
    atoms = cfg.teacher_atoms()
    teacher = AtomTeacher(act, atoms)
    run = mean_field_langevin(act, teacher, cfg.N, cfg.D, cfg.M, dt=cfg.dt,
                              temperature=cfg.temperature, weight_decay=cfg.weight_decay,
                              steps=cfg.steps, seed=cfg.seed,
                              checkpoints=Schedule.even(cfg.even_checkpoints),
                              progress=True)
    # odd activations identify (a, w) with (-a, -w): cluster u and -u together
    odd = _odd(cfg.activation)
    clusters = [cluster_directions(p, threshold_deg=cfg.threshold_deg, symmetric=odd)
                for p in run.particles]
    top = np.array([[c.top_mass(k) for k in (1, 2, 3)] for c in clusters])
    end = clusters[-1]
    u_teacher = atoms[:, 1:] / np.linalg.norm(atoms[:, 1:], axis=1, keepdims=True)
    sim = end.centers[:2] @ u_teacher.T
    sim = np.abs(sim) if odd else sim
    angles = np.degrees(np.arccos(np.clip(sim.max(axis=1), -1, 1)))
    fig = mplot.plot_sparse_atoms(run.particles[0], run.final, end.labels, atoms, run.times,
                                  top, np.arange(cfg.steps + 1) * cfg.dt, run.loss)
    figures = save_figure(fig, out_dir / "sparse-atoms")
    p = run.final
    df = pd.DataFrame({"particle": np.arange(cfg.N), "a": p[:, 0], "cluster": end.labels,
                       **{f"w{k + 1}": p[:, 1 + k] for k in range(cfg.D)}})
    mass = pd.DataFrame([{"step": int(s), "t": float(t), "k": k, "top_mass": top[j, k - 1],
                          "n_clusters": clusters[j].K}
                         for j, (s, t) in enumerate(zip(run.steps, run.times, strict=True))
                         for k in (1, 2, 3)])
    # the S* threshold run: the same teacher with a weak third atom, same settings and seed
    weak = mean_field_langevin(act, AtomTeacher(act, cfg.weak_teacher_atoms()), cfg.N, cfg.D,
                               cfg.M, dt=cfg.dt, temperature=cfg.temperature,
                               weight_decay=cfg.weight_decay, steps=cfg.steps, seed=cfg.seed,
                               checkpoints=Schedule.even(2), progress=True).final
    weak_df = pd.DataFrame({"particle": np.arange(cfg.N), "a": weak[:, 0],
                            **{f"w{k + 1}": weak[:, 1 + k] for k in range(cfg.D)}})
    tables = [io.write_table(df, out_dir / "sparse-atoms.parquet"),
              io.write_table(mass, out_dir / "sparse-atoms_mass.parquet"),
              io.write_table(weak_df, out_dir / "sparse-atoms_weak.parquet")]
    summary = {"top2_mass": end.top_mass(2), "n_atoms_90": end.n_atoms(0.9),
               "n_clusters": end.K, "angle_to_teacher_deg": angles.tolist(),
               "final_loss": float(run.loss[-1])}
    return ExperimentResult("sparse-atoms", out_dir, figures, tables, summary)


# --------------------------------------------------------------------------------------
# error budget

@dataclass(frozen=True)
@v.constrained_fields(**_COMMON, N=v.SIZE, long_factor=v.Int(2),
                      M_values=v.Tuple(v.SIZE, min_len=1), population_size=v.SIZE,
                      M_test=v.SIZE, chaos_M=v.SIZE, chaos_N_values=v.Tuple(v.SIZE),
                      chaos_reference_N=v.SIZE, chaos_steps=v.SIZE, chaos_replicas=v.SIZE,
                      K_max=v.SIZE, hermite_degree=v.SIZE, seed=v.SEED,
                      init_scales=v.Tuple(v.POSITIVE, min_len=2,
                                          why="two init scales at least, to compare"),
                      init_M=v.SIZE)
class BudgetConfig:
    """Error parts against M, t, N and K (quick defaults, ~30 s on one core).

    GELU by default: with no bias, every student misses much of the even
    ``He2`` part of the target; at ``t = 40`` GELU reaches a test error of
    about 0.30 against 0.46 for ``tanh-shift`` (E[f*^2] = 1.14).

    ``init_scales``: initial scales ``s_a = s_w`` of runs on ``init_M`` samples to
    ``t_end`` (the "no initialization-only residual" claims).
    """

    activation: str = "gelu"
    D: int = 5
    N: int = 200
    dt: float = 0.05
    temperature: float = 0.02
    weight_decay: float = 0.05
    steps: int = 200
    long_factor: int = 4
    M_values: tuple[int, ...] = (50, 100, 200, 400, 800)
    population_size: int = 2048
    M_test: int = 4000
    chaos_M: int = 100
    chaos_N_values: tuple[int, ...] = (25, 50, 100, 200, 400)
    chaos_reference_N: int = 2000
    chaos_steps: int = 60
    chaos_replicas: int = 2
    K_max: int = 8
    hermite_degree: int = 10
    seed: int = 0
    init_scales: tuple[float, ...] = (0.25, 1.0, 4.0)
    init_M: int = 400



def _budget_full() -> BudgetConfig:
    return BudgetConfig(N=1000, steps=1000, chaos_replicas=4,
                        M_values=(50, 100, 200, 400, 800, 1600, 3200),
                        population_size=8192, M_test=20000, chaos_M=400,
                        chaos_N_values=(25, 50, 100, 200, 400, 800), chaos_reference_N=8000,
                        chaos_steps=400)  # init_M stays 400: three more runs to t_end


# Claim tolerances of ``error-budget`` (fixed before any run).
#: A part "falls" with its knob when its Spearman correlation with it is at most -TREND_MIN.
TREND_MIN = 0.8
#: Largest share of the learned function (``K = 0`` residual) left outside the
#: ``S*`` heaviest clusters (``S*`` = :data:`BUDGET_S_STAR`).
SPARSE_RESIDUAL_MAX = 0.1
#: Sparse-dictionary depth at which the residual is read: the target
#: ``tanh(2 x1) + 0.5 He2(x1)`` is one ridge direction, realised by a few atoms.
BUDGET_S_STAR = 2
#: No initialization-only residual (abstract 3, fourth result): the spread (max - min) / mean
#: over ``init_scales`` of the test error at ``t_end`` is at most INIT_END_SPREAD_MAX, and at
#: most INIT_DECAY_MAX of the same spread at the budget's time. Fixed from a pilot run
#: (quick config, seeds 1 and 2, before the claims were written): end spreads 0.024 and
#: 0.035, ratios 0.088 and 0.087.
INIT_END_SPREAD_MAX, INIT_DECAY_MAX = 0.07, 0.15
_INIT_DECAY = "init forgotten: spread over init scales at t_end / at the budget time"
_TAIL_SOURCE = ('abstract 3: "with a target-dependent Hermite/Barron tail replacing any '
                'initialization-only residual"; own')


#: The seed statement the error-budget claims check.
_BUDGET_SPLIT = ('abstract 3: "the total feature-learning-error decomposition into statistical, '
                 'optimization, propagation-of-chaos, and sparse-residual components"')


def _falls(df: pd.DataFrame, part: str) -> float:
    """Spearman correlation of one part's value with its knob (NaN if constant or < 3 points)."""
    sel = df[df["part"] == part]
    return rank_correlation(sel["x"], sel["value"])


def _spread(df: pd.DataFrame, knob: str) -> float:
    """``(max - min) / mean`` of the ``init scale`` rows of one knob (NaN if < 2 rows or a
    mean that is not positive)."""
    v = df[(df["part"] == "init scale") & (df["knob"] == knob)]["value"].to_numpy(float)
    if v.size < 2 or not np.all(np.isfinite(v)) or not v.mean() > 0:
        return float("nan")
    return float(np.ptp(v) / v.mean())


def budget_claims(df: pd.DataFrame) -> list[Claim]:
    """The claims of ``error-budget``, a pure function of its long table.

    ``df`` has rows ``(part, knob, x, value)``. Abstract 3 splits the error into
    statistical, optimisation, propagation-of-chaos and sparse-residual parts:

    * statistical(M) falls with M and optimisation(t) falls with t (Spearman
      <= ``-TREND_MIN``);
    * particle(N) is ``O(1/N)``: log-log slope within ``SLOPE_TOL`` of -1;
    * sparse residual: the learned function outside its ``BUDGET_S_STAR``
      heaviest clusters is at most ``SPARSE_RESIDUAL_MAX`` of the whole
      (``K``-cluster residual at ``K = S*`` over ``K = 0``; disputed at the
      default temperature, see the claim), and falls with ``K``;
    * no initialization-only residual (own reading of abstract 3's fourth result): the
      test error at ``t_end`` hardly depends on the init scale (``INIT_END_SPREAD_MAX``),
      though it did at the budget's time (``INIT_DECAY_MAX``, the partner).
    """
    needed = {"part", "x", "value"}
    if not needed <= set(df.columns):
        raise ValueError(f"df must have the columns {sorted(needed)}")
    part = df[df["part"] == "particle"].sort_values("x")
    kres = df[df["part"] == "K-cluster residual"].set_index("x")["value"]
    share = (float(kres[float(BUDGET_S_STAR)] / kres[0.0])
             if {0.0, float(BUDGET_S_STAR)} <= set(kres.index) and kres[0.0] > 0
             else float("nan"))
    lo, hi = -1.0 - SLOPE_TOL, -1.0 + SLOPE_TOL
    early, end = _spread(df, _INIT_EARLY), _spread(df, _INIT_END)
    return [
        within("statistical part falls with M (Spearman)", _falls(df, "statistical"),
               -1.0, -TREND_MIN, source=_BUDGET_SPLIT,
               note="test error after the budget on M samples minus the population run's"),
        within("optimisation part falls with t (Spearman)", _falls(df, "optimisation"),
               -1.0, -TREND_MIN, source=_BUDGET_SPLIT,
               note="E(t) - E(t_end) along the population run"),
        within("particle part: slope against N", loglog_slope(part["x"], part["value"]),
               lo, hi, source=f"{_BUDGET_SPLIT}; {_CHAOS_RATE}",
               note="function gap to a coupled reference at the end; claim O(1/N)"),
        within(f"sparse residual: share of f outside the {BUDGET_S_STAR} heaviest clusters",
               share, 0.0, SPARSE_RESIDUAL_MAX,
               source=OWN,
               note="S* = 2 and the 10 % bound are the project's choices, for the "
                    "sparse-residual component of abstract 3; mean (f - f_K)^2 at K = S* "
                    "over K = 0 (f_K: the network restricted "
                    "to its K heaviest |a|-weighted direction clusters)",
               disputed="at temperature 0.02 the Langevin limit exp(-dF/dmu / lambda) has a "
                        "density, not atoms: the residual levels off at ~0.12-0.14 of f for "
                        "K = 3..8; S* atoms is a low-temperature statement (sparse-atoms)"),
        within("sparse residual falls with K (Spearman)", _falls(df, "K-cluster residual"),
               -1.0, -TREND_MIN, source=_BUDGET_SPLIT,
               note="K-cluster residual of the learned measure against K"),
        within("init forgotten: spread of the t_end test error over init scales "
               "((max - min) / mean)", end, 0.0, INIT_END_SPREAD_MAX, source=_TAIL_SOURCE,
               partner=_INIT_DECAY,
               note="runs from a_0 ~ N(0, s^2), w_0 ~ N(0, s^2 I/D) at each init scale s, same "
                    "samples and noise; what is left at t_end is the target's, not the "
                    "init's; that it is the Hermite/Barron tail is not checked; tolerance "
                    "from a pilot run (seeds 1, 2: 0.024, 0.035)"),
        within(_INIT_DECAY, end / early if early > 0 else float("nan"), 0.0, INIT_DECAY_MAX,
               source=_TAIL_SOURCE,
               note="the init scale mattered at the budget's time and is forgotten by t_end; "
                    "tolerance from a pilot run (seeds 1, 2: 0.088, 0.087)"),
    ]


@register("error-budget",
          "mean-field Langevin: statistical, optimisation, particle and sparse-residual errors",
          BudgetConfig, full=_budget_full, claims=_budget_claims_of,
          measured={"error-budget.parquet": Measured(("value",), by=("part",),
                                                     where={"part": _MEASURED_PARTS})})
def run_budget(cfg: BudgetConfig, out_dir: Path) -> ExperimentResult:
    """Measure each part of the error with the other knobs held at their large values.

    * statistical(M): test error ``E = mean_test (f - f*)^2`` after ``steps``
      on ``M`` samples, minus the same for the population run (fixed sample of
      ``population_size``), same ``N``, seed and time (it can come out
      negative: a single seed, and a finite test set; shown as open markers);
    * optimisation(t): ``E(t) - E(t_end)`` along the population run continued
      to ``t_end = long_factor * steps * dt`` (a lower bound of the gap to
      ``t = inf``; the ``E(t_end)`` plateau is drawn);
    * particle(N): ``mean_data (f_N - f_ref)^2`` at the end of a synchronous
      coupling to a ``chaos_reference_N``-particle reference (:func:`propagation_of_chaos`);
    * sparse residual(K): the target's Hermite tail beyond its ``K`` largest
      coefficients (plus the truncation beyond the stored degree), and, for the
      learned measure, ``mean_test (f - f_K)^2`` with ``f_K`` the network
      restricted to its ``K`` heaviest |a|-weighted direction clusters;
    * init scale: ``E`` at the budget's time and at ``t_end`` of runs on ``init_M``
      samples from each of ``init_scales`` (same samples, init draws and noise, scaled).
    """
    from specdyn import Schedule
    from specdyn.data.hermite import gaussian_expectation
    from specdyn.measure.atoms import (
        cluster_directions,
        hermite_tail,
        network_hermite_coefficients,
        top_clusters_function,
    )
    from specdyn.models import network_function
    from specdyn.sim import derive_seed, mean_field_langevin, propagation_of_chaos

    target = notes_target()
    rng = np.random.default_rng(derive_seed(cfg.seed, "test"))
    x_test = rng.standard_normal((cfg.M_test, cfg.D))
    y_test = np.asarray(target(x_test))
    common: dict[str, Any] = dict(dt=cfg.dt, temperature=cfg.temperature,
                                  weight_decay=cfg.weight_decay, seed=cfg.seed)

    def test_error(p: np.ndarray) -> float:
        return float(np.mean((network_function(p, x_test, cfg.activation) - y_test) ** 2))

    rows = []
    long = cfg.steps * cfg.long_factor
    # 0, 16 log-spaced steps to the end, and the budget's step
    ckpt = np.union1d(Schedule.log(17).resolve(long), [cfg.steps])
    pop = mean_field_langevin(cfg.activation, target, cfg.N, cfg.D, None, steps=long,
                              population_size=cfg.population_size,
                              checkpoints=ckpt.tolist(), progress=True, **common)
    e_pop_t = np.array([test_error(p) for p in pop.particles])
    e_end = float(e_pop_t[-1])
    e_pop = float(e_pop_t[list(pop.steps).index(cfg.steps)])  # at the budget's time
    opt = e_pop_t[1:-1] - e_end
    rows += [{"part": "optimisation", "knob": "t", "x": float(t), "value": float(val)}
             for t, val in zip(pop.times[1:-1], opt, strict=True)]
    stat = []
    for n in cfg.M_values:
        run = mean_field_langevin(cfg.activation, target, cfg.N, cfg.D, n, steps=cfg.steps,
                                  checkpoints=Schedule.even(2), **common)
        stat.append(test_error(run.final) - e_pop)
    rows += [{"part": "statistical", "knob": "n", "x": float(n), "value": float(s)}
             for n, s in zip(cfg.M_values, stat, strict=True)]
    chaos = propagation_of_chaos(cfg.activation, target, cfg.chaos_N_values, cfg.D, cfg.chaos_M,
                                 steps=cfg.chaos_steps, reference_N=cfg.chaos_reference_N,
                                 replicas=cfg.chaos_replicas, checkpoints=Schedule.even(2),
                                 progress=True,
                                 **common)
    rows += [{"part": "particle", "knob": "N", "x": float(N), "value": float(g)}
             for N, g in zip(chaos.N, chaos.function_gap[:, -1], strict=True)]
    link = target.fn if target.fn is not None else target.link
    m2 = gaussian_expectation(lambda z: np.asarray(link(z)) ** 2)
    Ks = np.arange(cfg.K_max + 1)
    tail = np.array([hermite_tail(target.coeffs, int(K), second_moment=m2) for K in Ks])
    rows += [{"part": "sparse residual", "knob": "K", "x": float(K), "value": float(t)}
             for K, t in zip(Ks, tail, strict=True)]
    final = pop.particles[list(pop.steps).index(cfg.steps)]
    clusters = cluster_directions(final)
    f_full = network_function(final, x_test, cfg.activation)
    kres = np.array([np.mean((f_full - top_clusters_function(final, clusters, int(K), x_test,
                                                             cfg.activation)) ** 2)
                     for K in Ks])
    rows += [{"part": "K-cluster residual", "knob": "K", "x": float(K), "value": float(r)}
             for K, r in zip(Ks, kres, strict=True)]
    for scale in cfg.init_scales:  # the same samples and noise from each init scale
        run = mean_field_langevin(cfg.activation, target, cfg.N, cfg.D, cfg.init_M, steps=long,
                                  checkpoints=[cfg.steps, long], init_scale=(scale, scale),
                                  **common)
        rows += [{"part": "init scale", "knob": knob, "x": float(scale),
                  "value": test_error(q)}
                 for knob, q in zip((_INIT_EARLY, _INIT_END), run.particles, strict=True)]
    learned = network_hermite_coefficients(final, cfg.activation, cfg.hermite_degree)
    df = pd.DataFrame(rows)
    parts = {name: (g["x"].to_numpy(), g["value"].to_numpy()) for name, g in df.groupby("part")}
    fig = mplot.plot_error_budget(parts, e_pop, target.coeffs[:cfg.hermite_degree + 1], learned,
                                  np.arange(long + 1) * cfg.dt, pop.loss, plateau=e_end,
                                  budget_time=cfg.steps * cfg.dt)
    figures = save_figure(fig, out_dir / "error-budget")
    table = io.write_table(df, out_dir / "error-budget.parquet")
    slope_N = loglog_slope(chaos.N, chaos.function_gap[:, -1])
    summary = {"test_error_population": e_pop, "test_error_t_end": e_end,
               "optimisation_gap_at_budget_time": e_pop - e_end,
               "statistical": dict(zip(map(str, cfg.M_values), map(float, stat), strict=True)),
               "particle_slope_vs_N": slope_N,
               "hermite_tail_K2": float(tail[min(2, cfg.K_max)]),
               "n_clusters_90": clusters.n_atoms(0.9)}
    return ExperimentResult("error-budget", out_dir, figures, [table], summary)
