"""The propagation-of-chaos claims: a pure function of its tables and config.

Every tolerance, source and dispute is fixed here before the run; :func:`chaos_claims`
checks them on ``propagation-of-chaos.parquet`` (with the training inputs
``propagation-of-chaos_inputs.parquet`` the levels are computed from, and the reference's
first step ``propagation-of-chaos_noise.parquet``); the ``*_claims_of`` functions read those
from a run's folder, for the registry (``sparse-atoms``: :mod:`.atoms`; ``error-budget``:
:mod:`.budget`, which shares the levels' cache and the scatter reading kept here). The exact
levels the prefactor claims compare with are :mod:`.levels`'.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn.experiments.mean_field import levels
from specdyn.experiments.mean_field.atoms import atoms_claims
from specdyn.experiments.mean_field.config import (
    AtomsConfig,
    ChaosConfig,
    notes_target,
)
from specdyn.experiments.mean_field.readings import (
    uniform_growth,
)
from specdyn.runs.claims import OWN, Claim, loglog_slope, sized, within

# Claim tolerances of ``propagation-of-chaos`` (fixed before any run).
#: The O(1/N) rate: fitted log-log slope against N within this of -1.
SLOPE_TOL = 0.2
#: Uniform in time: largest growth of ``N x function gap`` (mean over N and seeds) from the
#: middle checkpoint to the last.
UNIFORM_GROWTH_MAX = 0.25
#: The levels at t = 0 and after one step against their exact values: pilot seeds 3-6 (not
#: the judged 0-2) measured per-seed ratios 0.95-1.09 (first step) and 0.94-1.09 (t = 0),
#: the 1/N-weighted pool over N; the seed mean of three is within about 5 %.
LEVEL_FACTOR = 1.25
#: The t = 0 function gap's scatter about its exact level: the RMS over (seed, N) of
#: measured / exact - 1 against its derived size (levels.initial_gap_scatter), within this
#: factor: 1000 Monte-Carlo draws of the initial law on pilot seeds 3-5's inputs put the
#: ratio's 0.1 % and 99.9 % quantiles at 0.31 and 2.43 (median 0.90); pilot seed triples
#: 3-5, 6-8, 9-11 measured 1.24, 1.05, 0.78 (checked after, not tuned).
SCATTER_FACTOR = 2.5
SCATTER_REVISED = ("added after a referee's wrong model (issue 47: the t = 0 gap and the "
                   "first-step distances written as their exact levels) passed every claim; "
                   "the level claims compare only sums over N")
#: The temperature the first step injected (levels.step_noise_temperature, the reference
#: particles kept by the run, pooled over seeds) against the config's: exact in expectation,
#: a chi-square mean of n = particles x (D + 1) squares, relative sd sqrt(2 / n); the claim
#: allows NOISE_SDS of them (n = 18000 at the quick size: 5.3 %; 30000 at --full: 4.1 %).
#: Twice or half the temperature, or sqrt(tau dt) for sqrt(2 tau dt), is off by a factor 2.
NOISE_SDS = 5.0
NOISE_REVISED = ("added after a referee's wrong model (issue 47: every run at twice the "
                 "temperature) passed every claim: the coupling cancels the noise from the "
                 "claimed distances; seed 0's tables had been seen")
#: The uniform-in-time claim's quantity, changed after the runs (and a study to t = 100).
UNIFORM_REVISED = (
    "issue 47: N x W2^2 of the coupled empirical measures (disputed: it grew 0.84 from t = 10 "
    "to 20 at --full) -> N x the function gap. A convergence study in t (quick sizes, seed 0, "
    "to t = 100) showed the coupling decorrelate: its 1/N slope drifts from -1.00 (t <= 0.5) "
    "to -0.88 (t = 10), -0.71 (t = 50), -0.54 (t = 100), toward the N^(-1/3) of two independent "
    "6-dimensional samples; W2 between laws, which abstract 3 bounds, only has the coupling as "
    "an upper bound. N x the function gap, which that bound controls, stays level: 0.20 at "
    "t = 10, 0.17-0.24 from t = 30 to 100 (slope -0.88 to -0.94 at every t)")

#: The seed statement the propagation-of-chaos claims check.
CHAOS_RATE_SOURCE = ('abstract 3: "The finite-particle approximation has uniform-in-time '
               'squared-Wasserstein rate O(N^-1)"')
_FIRST_STEP = "first-step coupled distance against its exact level"

GIBBS_SOURCE = ('abstract 3: "mean-field limit of noisy gradient descent"; own: the N-particle '
          'Gibbs measure exp(-N F(mu_N) / tau) has E[theta . grad V] = tau per coordinate')
_CACHE: dict[tuple[Any, ...], np.ndarray] = {}


def cached_level(fn: Any, *args: Any) -> np.ndarray:
    """``fn(activation, x, ...)`` memoised on the function and its inputs (the claims of one
    folder are checked many times by the mutation tests)."""
    key = (fn, args[0], args[1].tobytes(), *args[2:])
    if key not in _CACHE:
        _CACHE[key] = np.asarray(fn(*args), dtype=np.float64)
    return _CACHE[key]


def inputs_of(inputs: pd.DataFrame, D: int, seed: int) -> np.ndarray:
    """The ``(M, D)`` training inputs of one seed from an inputs table (``seed, x1..xD``)."""
    rows = inputs[inputs["seed"] == seed]
    return rows[[f"x{k + 1}" for k in range(D)]].to_numpy(np.float64)


def chaos_levels(df: pd.DataFrame, cfg: ChaosConfig,
                 inputs: pd.DataFrame) -> tuple[tuple[float, float], tuple[float, float]]:
    """``((measured, predicted) after the first step, (measured, predicted) at t = 0)``: the
    coupled distance after one step and the function gap at ``t = 0`` with their exact levels
    (:func:`.levels.first_step_distance`, :func:`.levels.initial_function_gap`) on each seed's
    training inputs; mean over seeds of the sum over N (each size weighted by its ``R_N``
    independent systems, ``1/N``)."""
    scale = (1.0, 1.0)  # the engine's default init_scale (s_a, s_w)
    meas1, pred1, meas0, pred0 = [], [], [], []
    for seed, g in df.groupby("seed"):
        x = inputs_of(inputs, cfg.D, int(seed))
        at1 = g[g["step"] == 1].sort_values("N")
        at0 = g[g["step"] == 0].sort_values("N")
        meas1.append(at1["sq_distance"].to_numpy(float).sum())
        pred1.append(cached_level(levels.first_step_distance, cfg.activation, x, scale,
                            tuple(int(n) for n in at1["N"]), cfg.reference_N, cfg.dt).sum())
        meas0.append(at0["function_gap"].to_numpy(float).sum())
        pred0.append(cached_level(levels.initial_function_gap, cfg.activation, x, scale,
                            tuple(int(n) for n in at0["N"]), cfg.reference_N).sum())

    def mean(a: list[float]) -> float:
        return float(np.mean(a)) if a else float("nan")

    return (mean(meas1), mean(pred1)), (mean(meas0), mean(pred0))


def scatter_about_level(gaps: list[tuple[np.ndarray, tuple[int, ...], np.ndarray]],
                        activation: str, reference_N: int, replicas: int) -> tuple[float, float]:
    """``(measured, predicted)``: the RMS over every ``(inputs, N)`` of the t = 0 function gap
    over its exact level minus 1, and the square root of the mean of its derived relative
    variance (:func:`.levels.initial_gap_scatter`, ``R_N = replicas x max(N) / N`` systems
    against one shared reference); ``gaps`` holds ``(inputs, N values, measured gaps)`` per
    seed."""
    dev, var = [], []
    for x, Ns, g in gaps:
        exact = cached_level(levels.initial_function_gap, activation, x, (1.0, 1.0), Ns,
                             reference_N)
        dev.append(g / exact - 1.0)
        var.append(cached_level(levels.initial_gap_scatter, activation, x, (1.0, 1.0), Ns,
                          reference_N, max(Ns) * replicas))
    if not dev:
        return float("nan"), float("nan")
    return (float(np.sqrt(np.mean(np.concatenate(dev) ** 2))),
            float(np.sqrt(np.mean(np.concatenate(var)))))


def gap_scatter(df: pd.DataFrame, cfg: ChaosConfig,
                inputs: pd.DataFrame) -> tuple[float, float]:
    """:func:`scatter_about_level` of propagation-of-chaos's t = 0 gaps, over (seed, N)."""
    gaps = []
    for seed, g in df.groupby("seed"):
        at0 = g[g["step"] == 0].sort_values("N")
        gaps.append((inputs_of(inputs, cfg.D, int(seed)), tuple(int(n) for n in at0["N"]),
                     at0["function_gap"].to_numpy(float)))
    return scatter_about_level(gaps, cfg.activation, cfg.reference_N, cfg.replicas)


def noise_temperature(noise: pd.DataFrame, cfg: ChaosConfig,
                      inputs: pd.DataFrame) -> tuple[float, int]:
    """``(temperature, n)``: :func:`.levels.step_noise_temperature` of the first step of the
    reference particles in ``noise`` (rows ``seed, step, particle, a, w1..wD``), each seed on
    its own inputs, pooled over seeds weighted by their coordinates ``n``."""
    cols = ["a"] + [f"w{k + 1}" for k in range(cfg.D)]
    target = notes_target()
    total, n = 0.0, 0
    for seed, g in noise.groupby("seed"):
        before = g[g["step"] == 0].sort_values("particle")[cols].to_numpy(np.float64)
        after = g[g["step"] == 1].sort_values("particle")[cols].to_numpy(np.float64)
        if before.shape != after.shape or not before.size:
            return float("nan"), 0
        x = inputs_of(inputs, cfg.D, int(seed))
        tau = levels.step_noise_temperature(before, after, x, np.asarray(target(x)),
                                            cfg.activation, cfg.weight_decay, cfg.dt)
        total += tau * before.size
        n += before.size
    return (total / n if n else float("nan")), n


def noise_claim(noise: pd.DataFrame, cfg: ChaosConfig, inputs: pd.DataFrame) -> Claim:
    """The first step's injected temperature against the config's (:data:`NOISE_SDS`)."""
    tau, n = noise_temperature(noise, cfg, inputs)
    half = NOISE_SDS * math.sqrt(2.0 / n) if n else 1.0
    return within("temperature: the first step's noise against tau", tau,
                  cfg.temperature * (1.0 - half), cfg.temperature * (1.0 + half),
                  source=GIBBS_SOURCE, aspect="prefactor",
                  rule=f"in tau x (1 +- {NOISE_SDS:g} sqrt(2 / n)), n the coordinates read",
                  note=f"mean |theta' - theta + dt grad V(theta)|^2 / (2 dt) per coordinate "
                       f"over the reference's first step, n = {n} coordinates pooled over "
                       f"seeds, the drift in numpy (levels.step_noise_temperature), against "
                       f"tau = {cfg.temperature:g}; exact in expectation, so the band is "
                       f"{NOISE_SDS:g} sd of a chi-square mean; the coupling cancels the noise "
                       f"from every distance above, so this is where a run's temperature shows",
                  revised=NOISE_REVISED, revised_how="tighter")


def chaos_level_claims(df: pd.DataFrame, cfg: ChaosConfig, inputs: pd.DataFrame) -> list[Claim]:
    """The levels of :func:`chaos_levels` within ``LEVEL_FACTOR``: one step of a run at
    another speed (``dt^2``), a distance of the right law at another level, or a system
    equal to its copies fails."""
    (m1, p1), (m0, p0) = chaos_levels(df, cfg, inputs)
    s_meas, s_pred = gap_scatter(df, cfg, inputs)
    how = "mean over seeds of the sum over N (weights 1/N)"
    return [
        sized(_FIRST_STEP, m1, p1, LEVEL_FACTOR, source=CHAOS_RATE_SOURCE, aspect="clock",
              predicted_by="dt^2 x the drifts' mean squared difference over the initial law "
                           "(levels.first_step_distance)",
              note=f"the rate's level, not only its slope; {how}; the step is the clock: a run "
                   "at speed c moves it by c^2; tolerance from pilot seeds 3-6"),
        replace(sized("function gap at t = 0 against its exact level", m0, p0, LEVEL_FACTOR,
                      source=CHAOS_RATE_SOURCE, aspect="prefactor",
                      predicted_by="(1/N + 1/N_ref) s_a^2 E sigma(w . x)^2 "
                                   "(levels.initial_function_gap)",
                      note=f"{how}; tolerance from pilot seeds 3-6"), partner=_FIRST_STEP),
        sized("function gap at t = 0: scatter about its exact level", s_meas, s_pred,
              SCATTER_FACTOR, source=OWN, key="t = 0 gap scatter about its exact level",
              predicted_by="the relative variance of R_N systems' mean gap against a shared "
                           "reference, from the initial law (levels.initial_gap_scatter)",
              note="RMS over seeds and N of measured / exact - 1: each size's gap is a draw, "
                   "so gaps written as their levels (zero scatter) fail, and so do gaps "
                   "scattering far more than R_N independent systems allow; factor from "
                   "Monte-Carlo draws of the initial law (0.1-99.9 % quantiles 0.31-2.43)",
              revised=SCATTER_REVISED, revised_how="tighter"),
    ]


def chaos_claims(df: pd.DataFrame, cfg: ChaosConfig | None = None,
                 inputs: pd.DataFrame | None = None,
                 noise: pd.DataFrame | None = None) -> list[Claim]:
    """The claims of ``propagation-of-chaos``, a pure function of its table.

    ``df`` has one row per (seed, N, checkpoint): the coupled per-particle squared distance
    ``sq_distance`` (an upper bound of ``W2^2`` of the laws), the exact ``w2_distance``
    (``W2^2`` of the two empirical measures) and the ``function_gap``. Abstract 3: ``W2^2 =
    O(1/N)`` uniformly in time.

    * slope of the seed-mean ``sq_distance`` against N at the end, and of ``w2_distance``,
      within ``SLOPE_TOL`` of -1; the same slope at every checkpoint after the start;
    * uniform in time: ``N x function_gap`` (mean over N and seeds), which the W2 bound of
      the laws controls, grows by at most ``UNIFORM_GROWTH_MAX`` from mid-run to the end;
    * with ``cfg`` and the training ``inputs``, the levels (:func:`chaos_level_claims`), and
      with the reference's first step ``noise`` too, its temperature (:func:`noise_claim`).
    """
    needed = {"seed", "N", "step", "sq_distance", "w2_distance", "function_gap"}
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
    mid, end, growth = uniform_growth(df, "function_gap")
    lo, hi = -1.0 - SLOPE_TOL, -1.0 + SLOPE_TOL
    claims = [
        within("slope of the coupled distance against N", slope(end, "sq_distance"), lo, hi,
               source=CHAOS_RATE_SOURCE,
               note="least squares over N of the seed-mean per-particle squared distance "
                    "to the mean-field copies at the end; claim O(1/N)"),
        within("slope of W2^2 against N", slope(end, "w2_distance"), lo, hi,
               source=CHAOS_RATE_SOURCE,
               note="exact W2^2 between each system and its copies (optimal assignment), "
                    "seed mean at the end"),
        within("worst slope over checkpoints t > 0", worst, lo, hi, source=CHAOS_RATE_SOURCE,
               note=f"the rate at each of the {late.size} checkpoints after the start, the "
                    "first step included"),
        within("N x function gap: growth from mid-run to the end", growth, -np.inf,
               UNIFORM_GROWTH_MAX, source=CHAOS_RATE_SOURCE,
               key="N x W2^2: growth from mid-run to the end", partner=_FIRST_STEP,
               note=f"mean over N and seeds of N x mean (f_N - f_ref)^2, step {mid} -> {end}; "
                    "uniform in time means it levels off (it is bounded by the W2^2 of the "
                    "laws, which the coupling's own distance only bounds from above)",
               revised=UNIFORM_REVISED, revised_how="restated"),
    ]
    if cfg is not None and inputs is not None:
        claims += chaos_level_claims(df, cfg, inputs)
        if noise is not None:
            claims.append(noise_claim(noise, cfg, inputs))
    return claims


def chaos_claims_of(cfg: ChaosConfig, folder: Path) -> list[Claim]:
    """propagation-of-chaos's claims on the tables of a run's folder (the registry's
    ``claims``)."""
    return chaos_claims(pd.read_parquet(folder / "propagation-of-chaos.parquet"), cfg,
                        pd.read_parquet(folder / "propagation-of-chaos_inputs.parquet"),
                        pd.read_parquet(folder / "propagation-of-chaos_noise.parquet"))


def atoms_claims_of(cfg: AtomsConfig, folder: Path) -> list[Claim]:
    """sparse-atoms's claims on the tables of a run's folder (the registry's ``claims``)."""
    return atoms_claims(pd.read_parquet(folder / "sparse-atoms.parquet"), cfg,
                        pd.read_parquet(folder / "sparse-atoms_weak.parquet"),
                        pd.read_parquet(folder / "sparse-atoms_theory.parquet"),
                        pd.read_parquet(folder / "sparse-atoms_mass.parquet"))
