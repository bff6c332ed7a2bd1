"""The mean-field wrong models: what propagation-of-chaos, sparse-atoms and error-budget
would have written under a plausible mistake (:class:`~specdyn.runs.WrongModel`), built
from a run's own tables, one of each class of :data:`~specdyn.runs.WRONG_KINDS` that can
occur, and the reasons the others cannot (``*_NA``)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn.experiments.mean_field import levels
from specdyn.experiments.mean_field.atoms import TEACHERS, teacher, theory_rows
from specdyn.experiments.mean_field.readings import INIT_EARLY, INIT_END, noise_rows
from specdyn.measure.atoms import cluster_directions
from specdyn.runs.registry import WrongModel
from specdyn.runs.wrong import edit_table, table_edit
from specdyn.sim.protocol import derive_seed
from specdyn.theory import mean_field as mft

#: The seed of the wrong models' own draws (untrained particles, held-out data): fixed.
_WRONG_SEED = 20261205
_LEVELS = "specdyn.experiments.mean_field.levels"


def _w_variance_without_1_over_d(fn: Any) -> Any:
    """``fn`` (a level of :mod:`.levels`) with ``w ~ N(0, s_w^2 I)`` for the initial law, not
    ``N(0, s_w^2 I / D)``: the convention of the notes' ``W0`` rows mistaken."""
    def wrong(activation: str, x: np.ndarray, init_scale: tuple[float, float],
              *args: Any, **kw: Any) -> Any:
        s_a, s_w = init_scale
        return fn(activation, x, (s_a, s_w * math.sqrt(x.shape[1])), *args, **kw)
    return wrong


def _no_change(cfg: Any, folder: Path) -> None:
    """A mistake inside a theory function only (its ``patch``): the tables stay."""


def _interp_in_time(df: pd.DataFrame, cols: tuple[str, ...], by: list[str], t: str,
                    speed: float, sqrt: bool = False) -> pd.DataFrame:
    """Each ``by`` group's ``cols`` at ``speed x t`` (linear interpolation over its recorded
    times, from 0; in the square root for a squared distance, which grows like ``t^2``)."""
    out = df.copy()
    for _, g in df.groupby(by):
        g = g.sort_values(t)
        tt = g[t].to_numpy(float)
        for col in cols:
            v = g[col].to_numpy(float)
            v = np.sqrt(np.maximum(v, 0.0)) if sqrt and col != "function_gap" else v
            new = np.interp(speed * tt, tt, v)
            out.loc[g.index, col] = new ** 2 if sqrt and col != "function_gap" else new
    return out


# --------------------------------------------------------------------------
# propagation-of-chaos
# --------------------------------------------------------------------------

_CHAOS = "propagation-of-chaos.parquet"
_DIST = ("sq_distance", "w2_distance")


def _chaos_rate(df: pd.DataFrame) -> pd.DataFrame:
    """The coupled distances fall as N^(-1/2), not N^(-1) (a rate of the fluctuations'
    size, not of their squares)."""
    grow = np.sqrt(df["N"] / df["N"].min())
    return df.assign(sq_distance=df["sq_distance"] * grow,
                     w2_distance=df["w2_distance"] * grow)


def _chaos_end_only(df: pd.DataFrame) -> pd.DataFrame:
    """The 1/N rate only at the end: at every earlier checkpoint the distance is the same at
    every N (its mean over N), as for a coupling that only converges at the horizon."""
    early = df["step"] < df["step"].max()
    for col in _DIST:
        mean = df[early].groupby(["seed", "step"])[col].transform("mean")
        df.loc[early, col] = mean
    return df


def _chaos_scaled(factor: Any) -> Any:
    def change(df: pd.DataFrame) -> pd.DataFrame:
        f = factor(df) if callable(factor) else factor
        return df.assign(sq_distance=df["sq_distance"] * f, w2_distance=df["w2_distance"] * f)
    return table_edit(_CHAOS, change)


def _replicas(df: pd.DataFrame) -> Any:
    """Each size's replica count ``R_N = replicas max(N) / N``, up to the constant
    ``replicas``."""
    return df["N"].max() / df["N"]


def _gap_at_level(cfg: Any, folder: Path) -> None:
    """The t = 0 function gaps written as their exact levels (a theory for a measurement)."""
    from specdyn.experiments.mean_field.claims import inputs_of

    inputs = pd.read_parquet(folder / "propagation-of-chaos_inputs.parquet")

    def change(df: pd.DataFrame) -> pd.DataFrame:
        for seed, g in df[df["step"] == 0].groupby("seed"):
            at0 = g.sort_values("N")
            df.loc[at0.index, "function_gap"] = levels.initial_function_gap(
                cfg.activation, inputs_of(inputs, cfg.D, int(seed)), (1.0, 1.0),
                tuple(int(n) for n in at0["N"]), cfg.reference_N)
        return df
    edit_table(folder, _CHAOS, change)


def _twice_the_temperature(cfg: Any, folder: Path) -> None:
    """The reference's first step rerun at twice the temperature (the table the temperature
    claim reads; the coupling cancels the noise from every other claim's first step)."""
    from dataclasses import replace

    from specdyn.experiments.mean_field.config import notes_target
    from specdyn.sim import propagation_of_chaos

    hot = replace(cfg, temperature=2 * cfg.temperature)
    rows = []
    for seed in cfg.seeds:
        run = propagation_of_chaos(cfg.activation, notes_target(), cfg.N_values, cfg.D, cfg.M,
                                   update=hot.langevin_update(1), seed=seed,
                                   reference_N=cfg.reference_N, replicas=cfg.replicas,
                                   checkpoints=[0, 1], record=("reference_particles",))
        assert run.reference_particles is not None
        rows.append(noise_rows(seed, run.reference_particles, run.steps))
    hot_rows = pd.concat(rows, ignore_index=True)
    edit_table(folder, "propagation-of-chaos_noise.parquet", lambda _: hot_rows)


CHAOS_WRONG = (
    WrongModel("rate N^-1/2", "the coupled distance falls as N^(-1/2) (the fluctuations' "
               "size taken for their square)", table_edit(_CHAOS, _chaos_rate),
               catches=("slope of the coupled distance against N",)),
    WrongModel("rate only at the end", "the distance is flat in N at every checkpoint "
               "before the last (the rate not uniform in time)",
               table_edit(_CHAOS, _chaos_end_only),
               catches=("worst slope over checkpoints t > 0",)),
    WrongModel("systems are their copies", "each N-particle system driven by the reference "
               "measure, like its copies: the coupled distances are zero",
               _chaos_scaled(0.0), kind="is-theory",
               catches=("first-step coupled distance against its exact level",)),
    WrongModel("distance x1.5", "the coupled distances of the right 1/N law at 1.5 times "
               "their level", _chaos_scaled(1.5), kind="fluctuation-size",
               catches=("first-step coupled distance against its exact level",)),
    WrongModel("run at 1.5x speed", "the coupling run at 1.5 times the speed its config "
               "says (its checkpoints read at 1.5 t)",
               table_edit(_CHAOS, lambda df: _interp_in_time(
                   df, ("sq_distance", "w2_distance", "function_gap"), ["seed", "N"], "step",
                   1.5, sqrt=True)), kind="clock",
               catches=("first-step coupled distance against its exact level",)),
    WrongModel("init law's w variance s_w^2 I", "the exact function gap at t = 0 computed "
               "from w ~ N(0, s_w^2 I), not N(0, s_w^2 I / D)", _no_change, kind="convention",
               patch={f"{_LEVELS}.initial_function_gap":
                      _w_variance_without_1_over_d(levels.initial_function_gap)},
               catches=("function gap at t = 0 against its exact level",)),
    WrongModel("replicas summed", "each size's distance summed over its R_N = replicas "
               "max(N) / N systems instead of averaged (a rescaling with the width)",
               _chaos_scaled(_replicas), kind="attribution",
               catches=("slope of the coupled distance against N",)),
    WrongModel("inputs not normalised", "the levels computed from the training inputs "
               "divided by sqrt(D) (x ~ N(0, I/D), as the weights)",
               table_edit("propagation-of-chaos_inputs.parquet", lambda df: df.assign(
                   **{c: df[c] / math.sqrt(sum(k.startswith("x") for k in df.columns))
                      for c in df.columns if c.startswith("x")})), kind="wrong-inputs",
               catches=("first-step coupled distance against its exact level",)),
    WrongModel("gaps written as their levels", "the t = 0 function gap of each seed and N "
               "written as its exact level instead of measured", _gap_at_level,
               kind="is-theory", catches=("t = 0 gap scatter about its exact level",)),
    WrongModel("twice the temperature", "every run at temperature 2 tau while the config "
               "says tau (the noise sqrt(4 tau dt))", _twice_the_temperature,
               kind="temperature",
               catches=("temperature: the first step's noise against tau",)),
)

CHAOS_NA: dict[str, str] = {}

# --------------------------------------------------------------------------
# sparse-atoms
# --------------------------------------------------------------------------

_ATOMS = ("sparse-atoms.parquet", "sparse-atoms_weak.parquet")
_ATOM_COEF = "identifiability: atom coefficient a|w| - lasso-shrunk teacher's (largest)"
_SPREAD = "atoms' angular spread"
_DEVIATION = "finite-M deviation: |a|w| - population lasso's| against the finite-M lasso's"


def _untrained(cfg: Any, folder: Path) -> None:
    """Both final-particle tables replaced by untrained particles, drawn as the engine draws
    its initial ones: a ~ N(0, 1), w ~ N(0, I_D / D)."""
    rng = np.random.default_rng(derive_seed(_WRONG_SEED, "untrained particles"))

    def fresh(df: pd.DataFrame) -> pd.DataFrame:
        d = sum(c.startswith("w") and c[1:].isdigit() for c in df.columns)
        df["a"] = rng.standard_normal(len(df))
        for j in range(d):
            df[f"w{j + 1}"] = rng.standard_normal(len(df)) / np.sqrt(d)
        return df

    for table in _ATOMS:
        edit_table(folder, table, fresh)


def _moved_to(where: str) -> Any:
    """Both runs' heavy clusters moved onto a theory: ``"population"`` (the population
    lasso's atoms), ``"finite-M"`` (the finite-M lasso's) or ``"twice"`` (the finite-M
    lasso's directions, its deviation from the population's coefficients doubled); particles
    keep their |w|, their a is rescaled."""
    def apply(cfg: Any, folder: Path) -> None:
        theory = pd.read_parquet(folder / "sparse-atoms_theory.parquet")
        for table, which in zip(_ATOMS, TEACHERS, strict=True):
            c_star, U_star = teacher(cfg, which)
            c_pop, U_pop = mft.lasso_free_directions(c_star, U_star, cfg.weight_decay)
            rows = theory[theory["teacher"] == which].sort_values("atom")
            c_m = rows["c"].to_numpy(float)
            U_m = rows[[f"u{k + 1}" for k in range(cfg.D)]].to_numpy(float)
            c_new, U_new = {"population": (c_pop, U_pop), "finite-M": (c_m, U_m),
                             "twice": (c_pop + 2.0 * (c_m - c_pop), U_m)}[where]

            def move(df: pd.DataFrame, c_new: np.ndarray = c_new, U_new: np.ndarray = U_new,
                     U_m: np.ndarray = U_m) -> pd.DataFrame:
                cols = [f"w{k + 1}" for k in range(cfg.D)]
                p = df[["a", *cols]].to_numpy(float, copy=True)
                clusters = cluster_directions(p, threshold_deg=cfg.threshold_deg)
                on = np.flatnonzero(c_new != 0)
                match = np.argmax(clusters.centers[:on.size] @ U_m[on].T, axis=0)
                for k, j in zip(on, match, strict=True):
                    idx = clusters.labels == j
                    norm = np.linalg.norm(p[idx, 1:], axis=1)
                    p[idx, 1:] = norm[:, None] * U_new[k]
                    now = float(np.sum(p[idx, 0] * norm)) / len(p)
                    p[idx, 0] *= c_new[k] / now
                df[["a", *cols]] = p
                return df

            edit_table(folder, table, move)
    return apply


def _wider(df: pd.DataFrame, threshold_deg: float = 20.0) -> pd.DataFrame:
    """Each particle's angle to its cluster's centre doubled (``|w|`` and ``a`` kept): the
    width a run at a higher temperature leaves (ten times tau: about twice)."""
    cols = [c for c in df.columns if c.startswith("w") and c[1:].isdigit()]
    p = df[["a", *cols]].to_numpy(float, copy=True)
    clusters = cluster_directions(p, threshold_deg=threshold_deg)
    norm = np.linalg.norm(p[:, 1:], axis=1)
    for j in range(clusters.K):
        idx = clusters.labels == j
        c = clusters.centers[j]
        d = p[idx, 1:] / norm[idx, None]
        ang = np.arccos(np.clip(d @ c, -1.0, 1.0))
        perp = d - np.outer(d @ c, c)
        perp /= np.maximum(np.linalg.norm(perp, axis=1, keepdims=True), 1e-300)
        p[idx, 1:] = norm[idx, None] * (np.cos(2 * ang)[:, None] * c
                                        + np.sin(2 * ang)[:, None] * perp)
    df[cols] = p[:, 1:]
    return df


def _widened(cfg: Any, folder: Path) -> None:
    """Both final-particle tables widened about their clusters (:func:`_wider`)."""
    for table in _ATOMS:
        edit_table(folder, table, lambda df: _wider(df, cfg.threshold_deg))


def _held_out_theory(cfg: Any, folder: Path) -> None:
    """The finite-M lasso solved on another draw of M samples than the run's training set."""
    from specdyn.models import AtomTeacher

    rng = np.random.default_rng(derive_seed(_WRONG_SEED, "held-out data"))
    parts = []
    for which in TEACHERS:
        atoms = cfg.teacher_atoms() if which == "two-atom" else cfg.weak_teacher_atoms()
        x = rng.standard_normal((cfg.M, cfg.D))
        parts.append(theory_rows(cfg, which, x, AtomTeacher(cfg.activation, atoms)(x)))
    pd.concat(parts, ignore_index=True).to_parquet(folder / "sparse-atoms_theory.parquet")


def _gram_without_half(directions: Any) -> np.ndarray:
    """The arc-cosine kernel normalised to E relu(z)^2 = 1, not 1/2 (twice the Gram)."""
    return 2.0 * _RELU_GRAM(directions)


_RELU_GRAM = mft.relu_gram


def _half_speed(cfg: Any, folder: Path) -> None:
    """The run made again at half the speed its config says (the update's dt / 2, the same
    steps, data and seed: at the quick size t = 25 reached where the tables say t = 50),
    every table as that run writes it, its checkpoints at the config's t = step x dt (a
    --full folder's is a --full run again)."""
    from dataclasses import replace

    from specdyn.runs.registry import get  # the registered run: run.py imports this module

    get("sparse-atoms").run(replace(cfg, dt=cfg.dt / 2), folder)
    edit_table(folder, "sparse-atoms_mass.parquet",
               lambda df: df.assign(t=df["step"] * cfg.dt))


ATOMS_WRONG = (
    WrongModel("untrained particles", "untrained random particles (the network never "
               "learns): a ~ N(0, 1), w ~ N(0, I/D)", _untrained,
               catches=("atoms holding 90% of the mass <= S* = 2",)),
    WrongModel("output x1.25", "every output weight 25 % too large (the atoms' coefficients "
               "a |w| off by that factor)",
               table_edit(_ATOMS, lambda df: df.assign(a=1.25 * df["a"])),
               catches=(_ATOM_COEF,)),
    WrongModel("atoms at the population lasso", "the heavy clusters exactly at the "
               "population theory's atoms (directions and a|w|)", _moved_to("population"),
               kind="is-theory", catches=(_DEVIATION,)),
    WrongModel("finite-M deviation doubled", "the atoms' a|w| off the population lasso by "
               "twice the finite-M lasso's deviation", _moved_to("twice"),
               kind="fluctuation-size", catches=(_DEVIATION,)),
    WrongModel("particles at the finite-M lasso", "the heavy clusters exactly at the "
               "finite-M lasso's atoms on the run's data (no temperature width)",
               _moved_to("finite-M"), kind="is-theory", catches=(_SPREAD,)),
    WrongModel("temperature x10", "the Langevin noise at ten times tau: each particle twice "
               "as far from its atom's direction (a referee's rerun: 2.0 times the width)",
               _widened, kind="temperature", catches=(_SPREAD,)),
    WrongModel("half the speed", "the run at half the speed its config says (dt / 2 in the "
               "update: t = 25 reached where the tables say t = 50)", _half_speed,
               kind="clock", catches=("clock: unclaimed mass",)),
    WrongModel("ReLU kernel x2", "the arc-cosine kernel normalised to E relu(z)^2 = 1 "
               "inside relu_gram (the population lasso, the claims and the figure call it)",
               _no_change, kind="convention",
               patch={"specdyn.theory.mean_field.relu_gram": _gram_without_half},
               catches=("the lasso's kernel against quadrature over the angle (largest "
                        "relative difference)",)),
    WrongModel("theory on held-out data", "the finite-M lasso solved on another draw of M "
               "samples than the run was trained on", _held_out_theory, kind="wrong-inputs",
               catches=(_ATOM_COEF,)),
)

ATOMS_NA = {
    "attribution": "the claims read the final particles and (the clock) the |a|-mass at "
                   "the checkpoints, clustered the same way for every claim: no width "
                   "rescaling or held-out split to misread (a scale error of a is the "
                   "'output x1.25' model, a misread time the clock's 'half the speed')",
}

# --------------------------------------------------------------------------
# error-budget
# --------------------------------------------------------------------------

_BUDGET = "error-budget.parquet"
_PARTICLE = ("particle", "particle at t = 0")
_LEVEL0 = "particle part at t = 0 against its exact level"


def _budget_part(parts: str | tuple[str, ...], change: Any) -> Any:
    """A wrong model rewriting the ``value`` of the rows of ``parts`` by ``change(rows)``."""
    names = (parts,) if isinstance(parts, str) else parts

    def edit(df: pd.DataFrame) -> pd.DataFrame:
        for part in names:
            rows = df["part"] == part
            df.loc[rows, "value"] = change(df[rows])
        return df
    return table_edit(_BUDGET, edit)


def _init_kept(df: pd.DataFrame) -> pd.DataFrame:
    """The init scale is never forgotten: the t_end test error of each init scale is its
    error at t_early."""
    init = df["part"] == "init scale"
    early = df[init & (df["knob"] == INIT_EARLY)].set_index("x")["value"]
    end = init & (df["knob"] == INIT_END)
    df.loc[end, "value"] = df.loc[end, "x"].map(early).to_numpy()
    return df


def _particle0_at_level(cfg: Any, folder: Path) -> None:
    """The particle part at t = 0 written as its exact level (a theory for a measurement)."""
    from specdyn.experiments.mean_field.claims import inputs_of

    x = inputs_of(pd.read_parquet(folder / "error-budget_inputs.parquet"), cfg.D, cfg.seed)

    def change(df: pd.DataFrame) -> pd.DataFrame:
        at0 = df[df["part"] == "particle at t = 0"].sort_values("x")
        df.loc[at0.index, "value"] = levels.initial_function_gap(
            cfg.activation, x, (1.0, 1.0), tuple(int(n) for n in at0["x"]),
            cfg.chaos_reference_N)
        return df
    edit_table(folder, _BUDGET, change)


def _twice_as_fast(df: pd.DataFrame) -> pd.DataFrame:
    """The population run at twice the speed: E(t) - E(t_end) read at 2 t."""
    opt = df[df["part"] == "optimisation"]
    moved = _interp_in_time(opt, ("value",), ["part"], "x", 2.0)
    df.loc[opt.index, "value"] = moved["value"]
    return df


BUDGET_WRONG = (
    WrongModel("particle rate N^-1/2", "the particle error falls as N^(-1/2), not N^(-1)",
               _budget_part("particle",
                            lambda r: r["value"] * np.sqrt(r["x"] / r["x"].min())),
               catches=("particle part: slope against N",)),
    WrongModel("init never forgotten", "an initialisation-only residual: the test error at "
               "t_end of each init scale read at t_early", table_edit(_BUDGET, _init_kept),
               kind="attribution",
               catches=("init forgotten: spread of the t_end test error over init scales "
                        "((max - min) / mean)",)),
    WrongModel("systems are the reference", "the N-particle systems driven by the reference "
               "measure: no particle error at any N or time",
               _budget_part(_PARTICLE, lambda r: 0.0 * r["value"]), kind="is-theory",
               catches=(_LEVEL0,)),
    WrongModel("particle part at t = 0 written as its level", "the particle part at t = 0 "
               "of each N written as its exact level instead of measured", _particle0_at_level,
               kind="is-theory",
               catches=("particle part at t = 0: scatter about its exact level",)),
    WrongModel("particle part x1.5", "the particle error of the right 1/N law at 1.5 times "
               "its level", _budget_part(_PARTICLE, lambda r: 1.5 * r["value"]),
               kind="fluctuation-size", catches=(_LEVEL0,)),
    WrongModel("noise at half the temperature", "the Langevin noise sqrt(tau dt), not "
               "sqrt(2 tau dt): the runs sample the Gibbs measure at tau / 2",
               _budget_part("configurational temperature", lambda r: 0.5 * r["value"]),
               kind="temperature",
               catches=("configurational temperature at t_end against the temperature",)),
    WrongModel("population run at 2x speed", "the population run at twice the speed its "
               "config says (its test error read at 2 t)", table_edit(_BUDGET, _twice_as_fast),
               kind="clock",
               catches=("clock: the test error's initial fall against the initial rate",)),
    WrongModel("init law's w variance s_w^2 I", "the particle part's exact level computed "
               "from w ~ N(0, s_w^2 I), not N(0, s_w^2 I / D)", _no_change, kind="convention",
               patch={f"{_LEVELS}.initial_function_gap":
                      _w_variance_without_1_over_d(levels.initial_function_gap)},
               catches=(_LEVEL0,)),
)

BUDGET_NA = {
    "wrong-inputs": "no prediction is built from a spectrum: the levels take the training "
                    "inputs and the initial law (a wrong initial law is the convention "
                    "model; the inputs' normalisation is propagation-of-chaos's "
                    "'inputs not normalised', the same level function)",
}
