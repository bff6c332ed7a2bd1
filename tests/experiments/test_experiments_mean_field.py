"""The mean-field experiments run end to end on tiny configs and write their outputs; the
exact levels their prefactor and clock claims compare with, against closed forms and the
engine."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from specdyn.experiments.mean_field import levels
from specdyn.experiments.mean_field.config import (
    AtomsConfig,
    BudgetConfig,
    ChaosConfig,
    notes_target,
)
from specdyn.runs import get, run_experiment


def test_propagation_of_chaos_experiment(tmp_path: Path) -> None:
    cfg = ChaosConfig(N_values=(4, 8, 16), reference_N=128, replicas=1, M=16, steps=6,
                      seeds=(0, 1), even_checkpoints=3)
    res = run_experiment("propagation-of-chaos", tmp_path, config=cfg)
    df = pd.read_parquet(res.tables[0])
    assert set(df["N"]) == {4, 8, 16} and set(df["seed"]) == {0, 1}
    assert (df.loc[df["step"] == 0, "sq_distance"] == 0).all()
    assert set(df["step"]) == {0, 1, 3, 6}  # the even checkpoints and the first step
    assert len(res.summary["slope_per_seed"]) == 2
    inputs = pd.read_parquet(res.tables[1])
    assert len(inputs) == 2 * 16 and {"seed", "x1", "x5"} <= set(inputs)
    assert all(p.exists() for p in res.figures)
    assert (tmp_path / "propagation-of-chaos" / "record.json").exists()


def test_sparse_atoms_experiment(tmp_path: Path) -> None:
    cfg = AtomsConfig(N=20, M=32, steps=10, even_checkpoints=3)
    res = run_experiment("sparse-atoms", tmp_path, config=cfg)
    particles = pd.read_parquet(res.tables[0])
    assert len(particles) == 20 and {"a", "w1", "w2", "w3", "cluster"} <= set(particles)
    theory = pd.read_parquet(res.tables[3])
    assert sorted(theory["teacher"].unique()) == ["two-atom", "weak"] and len(theory) == 5
    assert 0 <= res.summary["top2_mass"] <= 1
    assert all(p.exists() for p in res.figures)


def test_error_budget_experiment(tmp_path: Path) -> None:
    cfg = BudgetConfig(N=16, steps=4, M_values=(8, 16), population_size=64, M_test=64,
                       chaos_M=16, chaos_N_values=(4, 8), chaos_reference_N=64, chaos_steps=4,
                       K_max=3, hermite_degree=4, init_M=16)
    res = run_experiment("error-budget", tmp_path, config=cfg)
    df = pd.read_parquet(res.tables[0])
    assert set(df["part"]) == {"statistical", "optimisation", "particle", "particle at t = 0",
                               "sparse residual", "K-cluster residual", "init scale",
                               "configurational temperature", "initial rate, theory"}
    assert sorted(df.loc[df["part"] == "statistical", "seed"].unique()) == [0, 1, 2]
    assert 0.0 in set(df.loc[df["part"] == "optimisation", "x"])
    # the Hermite tail is non-increasing in K
    tail = df[df["part"] == "sparse residual"].sort_values("x")["value"].to_numpy()
    assert (tail[1:] <= tail[:-1] + 1e-15).all()
    assert all(p.exists() for p in res.figures)


@pytest.mark.parametrize(("cls", "field", "value"),
                         [(ChaosConfig, "N_values", (10,)), (ChaosConfig, "temperature", -1.0),
                          (AtomsConfig, "D", 1), (AtomsConfig, "activation", "sigmoid"),
                          (BudgetConfig, "dt", 0.0), (BudgetConfig, "init_scales", (1.0,)),
                          (BudgetConfig, "init_scales", (1.0, 0.0)),
                          (AtomsConfig, "D", 2)])
def test_configs_reject_bad_values(cls: type, field: str, value: object) -> None:
    with pytest.raises(ValueError, match=field):
        cls(**{field: value})


def test_full_configs_are_registered() -> None:
    for name in ("propagation-of-chaos", "sparse-atoms", "error-budget"):
        exp = get(name)
        assert type(exp.config(full=True)) is exp.config_cls


# --------------------------------------------------------------------------------------
# the levels the prefactor claims compare with, against closed forms and the engine

def _inputs(M: int = 40, D: int = 3, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((M, D))


def test_initial_function_gap_is_the_linear_closed_form() -> None:
    # sigma(z) = z: E (w . x)^2 = s_w^2 |x|^2 / D
    x, (s_a, s_w) = _inputs(), (0.7, 1.3)
    got = levels.initial_function_gap("linear", x, (s_a, s_w), (10, 40), 1000)
    want = (1 / np.array([10, 40]) + 1 / 1000) * s_a**2 * s_w**2 * np.mean(
        np.sum(x * x, axis=1)) / x.shape[1]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_first_step_distance_is_the_linear_closed_form() -> None:
    # sigma(z) = z, w ~ N(0, q I), q = s_w^2 / D: K = s_a^2 q X X^T, J = (q + s_a^2) X X^T,
    # own term s_a^2 q^2 (tr(C)^2 + 2 tr(C^2)) + 3 s_a^4 q tr(C^2), C = X^T X / M
    x, (s_a, s_w), dt = _inputs(), (0.8, 1.1), 0.05
    M, D = x.shape
    q = s_w**2 / D
    G = x @ x.T
    C = x.T @ x / M
    cross = s_a**2 * q * (q + s_a**2) * np.sum(G * G) / M**2
    own = s_a**2 * q**2 * (np.trace(C)**2 + 2 * np.trace(C @ C)) + 3 * s_a**4 * q * np.trace(C @ C)
    N = np.array([20.0, 80.0])
    want = dt**2 * (((N - 1) / N**2 + 1 / 500) * cross + own / N**2)
    got = levels.first_step_distance("linear", x, (s_a, s_w), N, 500, dt, samples=65536)
    # Monte Carlo over 2^16 weights: fourth moments, about 2 % relative
    np.testing.assert_allclose(got, want, rtol=0.06)


def test_first_step_distance_matches_the_coupling_engine() -> None:
    """The level against the engine's own first step, averaged over many systems."""
    from specdyn.sim import LangevinUpdate, propagation_of_chaos

    target = notes_target()
    run = propagation_of_chaos("tanh-shift", target, (8, 32), 3, 30,
                               update=LangevinUpdate(dt=0.05, steps=1), reference_N=2048,
                               replicas=64, checkpoints=[0, 1], seed=3)
    want = levels.first_step_distance("tanh-shift", run.x, (1.0, 1.0), run.N, 2048, 0.05)
    # 64 x 32 / N systems of each size share one reference: a few % spread
    np.testing.assert_allclose(run.sq_distance[:, 1], want, rtol=0.3)
    gap = levels.initial_function_gap("tanh-shift", run.x, (1.0, 1.0), run.N, 2048)
    np.testing.assert_allclose(run.function_gap[:, 0], gap, rtol=0.3)


def test_initial_gap_scatter_matches_the_coupling_engine() -> None:
    """The derived relative variance of the t = 0 gap (the scatter claims' size) against the
    engine's gaps over independent seeds (each its own inputs, systems and reference)."""
    from specdyn.sim import LangevinUpdate, propagation_of_chaos

    target, Ns, ref, reps = notes_target(), (4, 16), 64, 2
    dev, var = [], []
    for seed in range(100):
        run = propagation_of_chaos("tanh-shift", target, Ns, 3, 20,
                                   update=LangevinUpdate(dt=0.05, steps=1), reference_N=ref,
                                   replicas=reps, checkpoints=[0], seed=seed)
        exact = levels.initial_function_gap("tanh-shift", run.x, (1.0, 1.0), Ns, ref)
        dev.append(run.function_gap[:, 0] / exact - 1.0)
        var.append(levels.initial_gap_scatter("tanh-shift", run.x, (1.0, 1.0), Ns, ref,
                                              max(Ns) * reps, samples=2048))
    # a variance from 100 heavy-tailed draws (2 systems at N = 16): about 20 % relative;
    # the scatter twice or half its size is off by a factor 4 in the variance
    np.testing.assert_allclose(np.mean(np.square(dev), axis=0), np.mean(var, axis=0), rtol=0.4)
    np.testing.assert_allclose(np.mean(dev, axis=0), 0.0, atol=0.1)  # the level unbiased


def test_initial_rate_is_the_linear_closed_form() -> None:
    # sigma(z) = z: K(x, x') = (s_w^2 / D + s_a^2) x . x'
    x, x_test = _inputs(60, 4, 1), _inputs(50, 4, 2)
    y, y_test = x[:, 0] + 0.3 * x[:, 1], x_test[:, 0] + 0.3 * x_test[:, 1]
    s_a, s_w = 0.9, 1.2
    dfdt = (s_w**2 / 4 + s_a**2) * x_test @ (x.T @ y / len(x))
    want = -2 * np.mean(y_test * dfdt)
    got = levels.initial_rate("linear", x, y, x_test, y_test, (s_a, s_w), samples=32768)
    np.testing.assert_allclose(got, want, rtol=0.03)


def test_configurational_temperature_is_the_temperature_at_equilibrium() -> None:
    """Equipartition on the engine's own long run: strong weight decay, quick relaxation."""
    from specdyn.sim import LangevinUpdate, mean_field_langevin

    tau = 0.05
    run = mean_field_langevin("tanh-shift", notes_target(), 64, 2, 20,
                              update=LangevinUpdate(dt=0.02, temperature=tau, weight_decay=1.0,
                                                    steps=3000), seed=0,
                              checkpoints=list(range(1000, 3001, 250)))
    got = np.mean([levels.configurational_temperature(p, run.x, run.y, "tanh-shift", 1.0)
                   for p in run.particles])
    # 9 checkpoints of 64 particles in 3 coordinates; Euler-Maruyama's O(dt) bias ~ 1 %
    assert got == pytest.approx(tau, rel=0.12)
    zero = levels.configurational_temperature(np.zeros((5, 3)), run.x, run.y, "tanh-shift", 1.0)
    assert zero == 0.0


def test_step_noise_temperature_reads_the_injected_noise() -> None:
    """One Euler-Maruyama step written here with a known temperature: the reading less the
    drift is that temperature within its chi-square resolution, and the drift matters."""
    rng = np.random.default_rng(5)
    x = _inputs(M=30, D=3)
    y = np.tanh(x[:, 0])
    p0 = np.column_stack([rng.standard_normal(4000), rng.standard_normal((4000, 3)) / np.sqrt(3)])
    dt, tau, wd = 0.05, 0.03, 0.05
    drift = levels.grad_V(p0, x, y, "tanh-shift", wd)
    p1 = p0 - dt * drift + np.sqrt(2 * tau * dt) * rng.standard_normal(p0.shape)
    got = levels.step_noise_temperature(p0, p1, x, y, "tanh-shift", wd, dt)
    assert abs(got / tau - 1) < 4 * np.sqrt(2 / p0.size)  # 4 sd of a mean of 16000 squares
    # without the drift the reading is off by more than that resolution
    p1_still = p0 + np.sqrt(2 * tau * dt) * rng.standard_normal(p0.shape)
    assert abs(levels.step_noise_temperature(p0, p1_still, x, y, "tanh-shift", wd, dt)
               / tau - 1) > 4 * np.sqrt(2 / p0.size)
