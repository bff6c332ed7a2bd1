"""The mean-field experiments run end to end on tiny configs and write their outputs."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from specdyn.experiments.mean_field.config import AtomsConfig, BudgetConfig, ChaosConfig
from specdyn.runs import get, run_experiment


def test_propagation_of_chaos_experiment(tmp_path: Path) -> None:
    cfg = ChaosConfig(N_values=(4, 8, 16), reference_N=128, replicas=1, M=16, steps=6,
                      seeds=(0, 1), even_checkpoints=3)
    res = run_experiment("propagation-of-chaos", tmp_path, config=cfg)
    df = pd.read_parquet(res.tables[0])
    assert set(df["N"]) == {4, 8, 16} and set(df["seed"]) == {0, 1}
    assert (df.loc[df["step"] == 0, "sq_distance"] == 0).all()
    assert len(res.summary["slope_per_seed"]) == 2
    assert all(p.exists() for p in res.figures)
    assert (tmp_path / "propagation-of-chaos" / "record.json").exists()


def test_sparse_atoms_experiment(tmp_path: Path) -> None:
    cfg = AtomsConfig(N=20, M=32, steps=10, even_checkpoints=3)
    res = run_experiment("sparse-atoms", tmp_path, config=cfg)
    particles = pd.read_parquet(res.tables[0])
    assert len(particles) == 20 and {"a", "w1", "w2", "w3", "cluster"} <= set(particles)
    assert 0 <= res.summary["top2_mass"] <= 1
    assert all(p.exists() for p in res.figures)


def test_error_budget_experiment(tmp_path: Path) -> None:
    cfg = BudgetConfig(N=16, steps=4, M_values=(8, 16), population_size=64, M_test=64,
                       chaos_M=16, chaos_N_values=(4, 8), chaos_reference_N=64, chaos_steps=4,
                       K_max=3, hermite_degree=4, init_M=16)
    res = run_experiment("error-budget", tmp_path, config=cfg)
    df = pd.read_parquet(res.tables[0])
    assert set(df["part"]) == {"statistical", "optimisation", "particle", "sparse residual",
                               "K-cluster residual", "init scale"}
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
