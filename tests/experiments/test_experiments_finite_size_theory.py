"""The finite-size-theory experiment, at a tiny size (plumbing, tables, claims, figure)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from specdyn import theory
from specdyn.experiments.finite_size_theory.config import FiniteSizeConfig
from specdyn.runs import run_experiment


def test_finite_size_experiment_tables_claims_and_figure(tmp_path: Path) -> None:
    cfg = FiniteSizeConfig(D=6, N_values=(2048,), M_values=(2048,), seeds=6, times=(0.0, 10.0),
                           activations=("relu",), nl_D=16, nl_N=64, nl_M=64, nl_steps=30,
                           kmin=2, kmax=8)
    res = run_experiment("finite-size-theory", tmp_path, config=cfg)
    df = pd.read_parquet(res.out_dir / "finite-size-theory.parquet")
    assert len(df) == 2 * 2 * 6 and set(df["seeds"]) == {6}
    row = df[(df["N"] == 2048) & (df["t"] == 10.0) & (df["k"] == 2)].iloc[0]
    m = theory.finite_size_moments(cfg.setting(), 2, 10.0, N=2048)
    assert np.isclose(row["std_theory"], m.std) and np.isclose(row["shift_theory"], m.mean_shift)
    names = [c.name for c in res.claims]
    assert len(names) == 7 and names[-1].startswith("relu lazy")
    assert all(p.exists() for p in res.figures) and {p.suffix for p in res.figures} == {".png",
                                                                                        ".pdf"}
    eff = pd.read_parquet(res.out_dir / "finite-size-theory_effective.parquet")
    assert set(eff["regime"]) == {"feature-learning", "lazy"}
    assert np.isfinite(eff[["slope_sim", "slope_effective"]].to_numpy()).all()
