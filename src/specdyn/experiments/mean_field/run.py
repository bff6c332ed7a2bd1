"""The mean-field runs: propagation-of-chaos, sparse-atoms and error-budget write their
tables, figures and summaries.

Each run drives the particle engine (:mod:`specdyn.sim`, imported inside the run so that
importing the experiments stays light), writes the tables its claims read
(:mod:`specdyn.experiments.mean_field.claims`, :mod:`~specdyn.experiments.mean_field.budget`)
and draws the figure.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from specdyn import io
from specdyn.experiments.mean_field import levels
from specdyn.experiments.mean_field.atoms import CLOCK_FACTOR as ATOMS_CLOCK_FACTOR
from specdyn.experiments.mean_field.atoms import CLOCK_T as ATOMS_CLOCK_T
from specdyn.experiments.mean_field.atoms import (
    TEACHERS,
    atoms_figure_readings,
    flow_unclaimed,
    theory_rows,
)
from specdyn.experiments.mean_field.budget import (
    budget_claims_of,
    budget_figure_readings,
    clock_reading,
    statistical_mean,
)
from specdyn.experiments.mean_field.claims import atoms_claims_of, chaos_claims_of, chaos_levels
from specdyn.experiments.mean_field.config import (
    AtomsConfig,
    BudgetConfig,
    ChaosConfig,
    full_atoms,
    full_budget,
    full_chaos,
    notes_target,
)
from specdyn.experiments.mean_field.readings import (
    INIT_EARLY,
    INIT_END,
    noise_rows,
    odd_activation,
    uniform_growth,
)
from specdyn.experiments.mean_field.wrong import (
    ATOMS_NA,
    ATOMS_WRONG,
    BUDGET_NA,
    BUDGET_WRONG,
    CHAOS_NA,
    CHAOS_WRONG,
)
from specdyn.measure.atoms import cluster_directions
from specdyn.measure.exponents import loglog_fit
from specdyn.plot import mean_field as mplot
from specdyn.plot import save_figure
from specdyn.runs.claims import loglog_slope
from specdyn.runs.registry import ExperimentResult, Measured, register

#: Parts of the ``error-budget`` table measured on runs (the "sparse residual" rows are the
#: target's Hermite tail, computed from its coefficients; "initial rate, theory" a prediction).
_MEASURED_PARTS = ("statistical", "optimisation", "particle", "particle at t = 0",
                   "K-cluster residual", "init scale", "configurational temperature")


def _inputs_table(seeds: list[int], xs: list[np.ndarray]) -> pd.DataFrame:
    """The training inputs the levels are computed from: rows ``seed, m, x1..xD``."""
    return pd.concat([pd.DataFrame({"seed": s, "m": np.arange(len(x)),
                                    **{f"x{k + 1}": x[:, k] for k in range(x.shape[1])}})
                      for s, x in zip(seeds, xs, strict=True)], ignore_index=True)


@register("propagation-of-chaos",
          "mean-field Langevin: coupled particle distance against N, slope about -1",
          ChaosConfig, full=full_chaos, claims=chaos_claims_of, wrong_models=CHAOS_WRONG,
          wrong_na=CHAOS_NA,
          measured={"propagation-of-chaos.parquet": Measured(
              ("sq_distance", "w2_distance", "function_gap")),
              "propagation-of-chaos_noise.parquet": Measured(("a",), by=("step",))})
def run_chaos(cfg: ChaosConfig, out_dir: Path) -> ExperimentResult:
    """Synchronous coupling (same start, same noise) to copies driven by a reference."""
    from specdyn import Schedule
    from specdyn.sim import propagation_of_chaos

    target = notes_target()
    rows = []
    finals = []
    w2s = []
    scaled = []
    gaps = []
    xs = []
    noise = []
    # the even checkpoints and the first step (the level claim's)
    ckpt = np.union1d(Schedule.even(cfg.even_checkpoints).resolve(cfg.steps), [1])
    for seed in cfg.seeds:
        run = propagation_of_chaos(cfg.activation, target, cfg.N_values, cfg.D, cfg.M,
                                   update=cfg.langevin_update(), seed=seed,
                                   reference_N=cfg.reference_N, replicas=cfg.replicas,
                                   checkpoints=ckpt.tolist(),
                                   record=("w2_distance", "reference_particles"),
                                   progress=True)
        assert run.w2_distance is not None and run.reference_particles is not None
        noise.append(noise_rows(seed, run.reference_particles[:2], run.steps[:2]))
        for i, N in enumerate(run.N):
            for j, t in enumerate(run.times):
                rows.append({"seed": seed, "N": int(N), "step": int(run.steps[j]),
                             "t": float(t), "sq_distance": run.sq_distance[i, j],
                             "w2_distance": run.w2_distance[i, j],
                             "function_gap": run.function_gap[i, j]})
        finals.append(run.sq_distance[:, -1])
        w2s.append(run.w2_distance[:, -1])
        scaled.append(run.sq_distance * run.N[:, None])
        gaps.append(run.function_gap * run.N[:, None])
        xs.append(run.x)
        times = run.times
        Ns = run.N
    D = np.asarray(finals)
    slope, intercept = loglog_fit(Ns, D.mean(0))
    per_seed = [loglog_fit(Ns, row)[0] for row in D]
    df = pd.DataFrame(rows)
    inputs = _inputs_table(list(cfg.seeds), xs)
    mid, end, growth = uniform_growth(df, "function_gap")
    first, at0 = chaos_levels(df, cfg, inputs)
    fig = mplot.plot_propagation_of_chaos(
        Ns, D, float(slope), float(intercept), times, np.mean(scaled, axis=0),
        np.asarray(w2s), growth=(mid * cfg.dt, end * cfg.dt, growth),
        gap_vs_time=np.mean(gaps, axis=0),
        levels=(first, at0))
    slope_w2 = loglog_fit(Ns, np.mean(w2s, axis=0))[0]
    figures = save_figure(fig, out_dir / "propagation-of-chaos")
    tables = [io.write_table(df, out_dir / "propagation-of-chaos.parquet"),
              io.write_table(inputs, out_dir / "propagation-of-chaos_inputs.parquet"),
              io.write_table(pd.concat(noise, ignore_index=True),
                             out_dir / "propagation-of-chaos_noise.parquet")]
    summary = {"slope": float(slope), "slope_w2": slope_w2, "slope_per_seed": per_seed,
               "slope_spread": float(np.ptp(per_seed)),
               "first_step_level": list(first), "initial_gap_level": list(at0),
               "reference_N": cfg.reference_N, "t_final": float(times[-1])}
    return ExperimentResult("propagation-of-chaos", out_dir, figures, tables, summary)


@register("sparse-atoms",
          "mean-field Langevin: particles concentrate on the atoms of a two-atom teacher",
          AtomsConfig, full=full_atoms, claims=atoms_claims_of, wrong_models=ATOMS_WRONG,
          wrong_na=ATOMS_NA, measured={"sparse-atoms.parquet": Measured(("a",)),
                    "sparse-atoms_weak.parquet": Measured(("a",)),
                    "sparse-atoms_mass.parquet": Measured(("top_mass",), by=("k",))})
def run_atoms(cfg: AtomsConfig, out_dir: Path) -> ExperimentResult:
    """Train, cluster directions weighted by |a|, compare with the teacher's atoms and with
    the zero-temperature lasso on the run's own data (the theory table, ReLU)."""
    from specdyn import Schedule
    from specdyn.models import AtomTeacher, get_activation
    from specdyn.sim import mean_field_langevin

    act = get_activation(cfg.activation)
    atoms = cfg.teacher_atoms()
    teacher = AtomTeacher(act, atoms)
    run = mean_field_langevin(act, teacher, cfg.N, cfg.D, cfg.M, update=cfg.langevin_update(),
                              seed=cfg.seed, checkpoints=Schedule.even(cfg.even_checkpoints),
                              progress=True)
    # odd activations identify (a, w) with (-a, -w): cluster u and -u together
    odd = odd_activation(cfg.activation)
    clusters = [cluster_directions(p, threshold_deg=cfg.threshold_deg, symmetric=odd)
                for p in run.particles]
    top = np.array([[c.top_mass(k) for k in (1, 2, 3)] for c in clusters])
    end = clusters[-1]
    u_teacher = atoms[:, 1:] / np.linalg.norm(atoms[:, 1:], axis=1, keepdims=True)
    sim = end.centers[:2] @ u_teacher.T
    sim = np.abs(sim) if odd else sim
    angles = np.degrees(np.arccos(np.clip(sim.max(axis=1), -1, 1)))
    p = run.final
    df = pd.DataFrame({"particle": np.arange(cfg.N), "a": p[:, 0], "cluster": end.labels,
                       **{f"w{k + 1}": p[:, 1 + k] for k in range(cfg.D)}})
    mass = pd.DataFrame([{"step": int(s), "t": float(t), "k": k, "top_mass": top[j, k - 1],
                          "n_clusters": clusters[j].K}
                         for j, (s, t) in enumerate(zip(run.steps, run.times, strict=True))
                         for k in (1, 2, 3)])
    # the S* threshold run: the same teacher with a weak third atom, same settings and seed
    weak_run = mean_field_langevin(act, AtomTeacher(act, cfg.weak_teacher_atoms()), cfg.N,
                                   cfg.D, cfg.M, update=cfg.langevin_update(), seed=cfg.seed,
                                   checkpoints=Schedule.even(2), progress=True)
    weak = weak_run.final
    weak_df = pd.DataFrame({"particle": np.arange(cfg.N), "a": weak[:, 0],
                            **{f"w{k + 1}": weak[:, 1 + k] for k in range(cfg.D)}})
    # the zero-temperature lasso of each teacher on its run's own training data (ReLU)
    theory = pd.concat([theory_rows(cfg, which, r.x, r.y) if cfg.activation == "relu"
                        else theory_rows(cfg, which, r.x[:0], r.y[:0]).iloc[:0]
                        for which, r in zip(TEACHERS, (run, weak_run), strict=True)],
                       ignore_index=True)
    # the claims' panels are drawn from the tables, with the claims' own readings
    t_clock = np.array([float(t) for t in run.times if 0 < t <= ATOMS_CLOCK_T])
    fig = mplot.plot_sparse_atoms(run.particles[0], run.final, end.labels, atoms, run.times,
                                  top, np.arange(cfg.steps + 1) * cfg.dt, run.loss,
                                  flow=(t_clock, 1.0 - flow_unclaimed(cfg, tuple(t_clock)),
                                        ATOMS_CLOCK_FACTOR),
                                  **atoms_figure_readings(df, weak_df, theory, cfg))
    figures = save_figure(fig, out_dir / "sparse-atoms")
    tables = [io.write_table(df, out_dir / "sparse-atoms.parquet"),
              io.write_table(mass, out_dir / "sparse-atoms_mass.parquet"),
              io.write_table(weak_df, out_dir / "sparse-atoms_weak.parquet"),
              io.write_table(theory, out_dir / "sparse-atoms_theory.parquet")]
    summary = {"top2_mass": end.top_mass(2), "n_atoms_90": end.n_atoms(0.9),
               "n_clusters": end.K, "angle_to_teacher_deg": angles.tolist(),
               "final_loss": float(run.loss[-1])}
    return ExperimentResult("sparse-atoms", out_dir, figures, tables, summary)


@register("error-budget",
          "mean-field Langevin: statistical, optimisation, particle and sparse-residual errors",
          BudgetConfig, full=full_budget, claims=budget_claims_of, wrong_models=BUDGET_WRONG,
          wrong_na=BUDGET_NA, measured={"error-budget.parquet": Measured(("value",), by=("part",),
                                                     where={"part": _MEASURED_PARTS})})
def run_budget(cfg: BudgetConfig, out_dir: Path) -> ExperimentResult:
    """Measure each part of the error with the other knobs held at their large values.

    * statistical(M): test error ``E = mean_test (f - f*)^2`` after ``steps``
      on ``M`` samples, minus the same for the population run (fixed sample of
      ``population_size``), same ``N`` and time, for each of ``statistical_seeds`` seeds (a
      row ``seed`` each; it can come out negative: a finite test set; open markers);
    * optimisation(t): ``E(t) - E(t_end)`` along the population run continued
      to ``t_end = long_factor * steps * dt`` (a lower bound of the gap to
      ``t = inf``; the ``E(t_end)`` plateau is drawn), from ``t = 0``; beside it the
      initial rate of the mean-field flow (``initial rate, theory``, the clock);
    * particle(N): ``mean_data (f_N - f_ref)^2`` at the end of a synchronous
      coupling to a ``chaos_reference_N``-particle reference (:func:`propagation_of_chaos`),
      and at ``t = 0`` (``particle at t = 0``; its exact level needs the coupling's training
      inputs, ``error-budget_inputs.parquet``);
    * configurational temperature: ``theta . grad V / (D + 1)`` over the particles at
      ``t_end`` of the population run and of the init-scale runs (knob: which run), on
      their training data;
    * sparse residual(K): the target's Hermite tail beyond its ``K`` largest
      coefficients (plus the truncation beyond the stored degree), and, for the
      learned measure, ``mean_test (f - f_K)^2`` with ``f_K`` the network
      restricted to its ``K`` heaviest |a|-weighted direction clusters;
    * init scale: ``E`` at ``t_early`` (``init_early_steps``) and at ``t_end`` of runs on ``init_M``
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

    def test_error(p: np.ndarray) -> float:
        return float(np.mean((network_function(p, x_test, cfg.activation) - y_test) ** 2))

    rows = []
    long = cfg.steps * cfg.long_factor
    # 0, 16 log-spaced steps to the end, and the budget's step
    ckpt = np.union1d(Schedule.log(17).resolve(long), [cfg.steps])
    pop = mean_field_langevin(cfg.activation, target, cfg.N, cfg.D, None,
                              update=cfg.langevin_update(long),
                              population_size=cfg.population_size, seed=cfg.seed,
                              checkpoints=ckpt.tolist(), progress=True)
    e_pop_t = np.array([test_error(p) for p in pop.particles])
    e_end = float(e_pop_t[-1])
    e_pop = float(e_pop_t[list(pop.steps).index(cfg.steps)])  # at the budget's time
    opt = e_pop_t[:-1] - e_end
    rows += [{"part": "optimisation", "knob": "t", "x": float(t), "value": float(val)}
             for t, val in zip(pop.times[:-1], opt, strict=True)]
    rows.append({"part": "initial rate, theory", "knob": "dE/dt at t = 0", "x": 0.0,
                 "value": levels.initial_rate(cfg.activation, pop.x, pop.y, x_test, y_test,
                                              (1.0, 1.0))})
    temperature = [("population", pop.final, pop.x, pop.y)]
    for r in range(cfg.statistical_seeds):  # seed, seed + 1, ...: the part's seed mean
        for n in cfg.M_values:
            run = mean_field_langevin(cfg.activation, target, cfg.N, cfg.D, n,
                                      update=cfg.langevin_update(), seed=cfg.seed + r,
                                      checkpoints=Schedule.even(2))
            rows.append({"part": "statistical", "knob": "n", "x": float(n),
                         "value": test_error(run.final) - e_pop, "seed": cfg.seed + r})
    stat = statistical_mean(pd.DataFrame(rows))["value"].to_numpy()
    chaos = propagation_of_chaos(cfg.activation, target, cfg.chaos_N_values, cfg.D, cfg.chaos_M,
                                 update=cfg.langevin_update(cfg.chaos_steps),
                                 reference_N=cfg.chaos_reference_N, replicas=cfg.chaos_replicas,
                                 seed=cfg.seed, checkpoints=Schedule.even(2), progress=True)
    rows += [{"part": part, "knob": "N", "x": float(N), "value": float(g)}
             for part, j in (("particle", -1), ("particle at t = 0", 0))
             for N, g in zip(chaos.N, chaos.function_gap[:, j], strict=True)]
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
        run = mean_field_langevin(cfg.activation, target, cfg.N, cfg.D, cfg.init_M,
                                  update=cfg.langevin_update(long), init=(scale, scale),
                                  seed=cfg.seed, checkpoints=[cfg.early_steps, long])
        rows += [{"part": "init scale", "knob": knob, "x": float(scale),
                  "value": test_error(q)}
                 for knob, q in zip((INIT_EARLY, INIT_END), run.particles, strict=True)]
        temperature.append((f"init scale {scale:g}", run.final, run.x, run.y))
    rows += [{"part": "configurational temperature", "knob": which, "x": long * cfg.dt,
              "value": levels.configurational_temperature(p, x, y, cfg.activation,
                                                          cfg.weight_decay)}
             for which, p, x, y in temperature]
    learned = network_hermite_coefficients(final, cfg.activation, cfg.hermite_degree)
    df = pd.DataFrame(rows)
    inputs = _inputs_table([cfg.seed], [chaos.x])
    shown = pd.concat([df[df["part"] != "statistical"], statistical_mean(df)])
    parts = {name: (g["x"].to_numpy(), g["value"].to_numpy())
             for name, g in shown.groupby("part")}
    fig = mplot.plot_error_budget(parts, e_pop, target.coeffs[:cfg.hermite_degree + 1], learned,
                                  np.arange(long + 1) * cfg.dt, pop.loss, plateau=e_end,
                                  budget_time=cfg.steps * cfg.dt,
                                  **budget_figure_readings(df, cfg, inputs))
    figures = save_figure(fig, out_dir / "error-budget")
    tables = [io.write_table(df, out_dir / "error-budget.parquet"),
              io.write_table(inputs, out_dir / "error-budget_inputs.parquet")]
    slope_N = loglog_slope(chaos.N, chaos.function_gap[:, -1])
    t_c, rate, rate_pred = clock_reading(df)
    summary = {"test_error_population": e_pop, "test_error_t_end": e_end,
               "optimisation_gap_at_budget_time": e_pop - e_end,
               "statistical": dict(zip(map(str, cfg.M_values), map(float, stat), strict=True)),
               "particle_slope_vs_N": slope_N, "initial_rate": [rate, rate_pred],
               "configurational_temperature": float(
                   df.loc[df["part"] == "configurational temperature", "value"].mean()),
               "hermite_tail_K2": float(tail[min(2, cfg.K_max)]),
               "n_clusters_90": clusters.n_atoms(0.9)}
    return ExperimentResult("error-budget", out_dir, figures, tables, summary)
