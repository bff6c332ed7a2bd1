"""The outlier-escape experiments run end to end on tiny configs and write their outputs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from specdyn import Schedule
from specdyn.experiments.outlier_escape.config import (
    BBPEscapeConfig,
    LRTransferConfig,
    TrainabilityConfig,
)
from specdyn.runs import get, run_experiment
from specdyn.runs.config import config_from_dict, config_to_dict
from specdyn.sim import DeepLinearRecording, train_deep_linear


def test_bbp_escape_tiny(tmp_path) -> None:
    cfg = BBPEscapeConfig(P=80, D=160, theta=0.02, lr=0.2, top_k=3)
    res = run_experiment("bbp-escape", tmp_path, config=cfg)
    assert all(p.exists() for p in res.figures + res.tables)
    assert (tmp_path / "bbp-escape" / "record.json").exists()
    df = pd.read_parquet(res.tables[0])
    assert {"step", "quantity", "source", "value"} <= set(df.columns)
    assert np.isfinite(df["value"]).all()
    assert res.summary["flagged_before_t_star"] == 0


def test_trainability_tiny_records_diverged_cells(tmp_path) -> None:
    cfg = TrainabilityConfig(P=8, D=8, B=2, steps=60, n_lr=4, n_var=2, replicas=2,
                             two_layer_N=8, two_layer_D=4, two_layer_steps=40)
    res = run_experiment("trainability", tmp_path, config=cfg)
    df = pd.read_parquet(res.tables[0])
    assert len(df) == 2 * 4 * 2
    assert set(df["status"]) <= {"converged", "stalled", "diverged"}
    assert (df["status"] == "diverged").any()  # divergence is a cell, not an exception
    div = df[df["status"] == "diverged"]
    assert div["diverged_step"].notna().all()
    # the two-layer cells of a row (one init variance) share their initial weights (the
    # row's seed key has no column), so their initial sharpness is one number
    two = df[df["model"] == "two-layer"]
    per_row = two.groupby("init_var")["sharpness_init"].nunique()
    assert len(per_row) == cfg.n_var and (per_row == 1).all()


def test_lr_transfer_tiny(tmp_path) -> None:
    cfg = LRTransferConfig(N_values=(16, 32), steps=5, n_lr=3, escape_steps=5, D=4,
                           escape_seeds=1, ntk_lr_min=20.0, escape_runs=("mup:0.05:4",))
    res = run_experiment("lr-transfer", tmp_path, config=cfg)
    sweep = pd.read_parquet(res.tables[0])
    assert len(sweep) == 2 * 2 * 3
    assert sweep["diverged"].any()  # ntk at lr >= 20 diverges: recorded, sweep intact
    assert all(p.exists() for p in res.figures)


@pytest.mark.parametrize("name", ["bbp-escape", "trainability", "lr-transfer"])
def test_configs_round_trip_and_full_variant(name: str) -> None:
    exp = get(name)
    for cfg in (exp.config(), exp.config(full=True)):
        assert config_from_dict(exp.config_cls, config_to_dict(cfg)) == cfg


@pytest.mark.parametrize("cls, kwargs, field", [
    (BBPEscapeConfig, dict(lr=0.0), "lr"),
    (BBPEscapeConfig, dict(P=0), "P"),
    (TrainabilityConfig, dict(B=0), "^B "),
    (TrainabilityConfig, dict(lr_range=(1.0, 0.5)), "lr_range"),
    (LRTransferConfig, dict(N_values=(128, 0)), "N_values"),
    (LRTransferConfig, dict(depth=1), "depth"),
    (LRTransferConfig, dict(escape_runs=("mup:0.1",)), "escape_runs"),
    (LRTransferConfig, dict(escape_runs=("mup:-0.1:4",)), "escape_runs"),
])
def test_bad_config_names_field(cls, kwargs, field) -> None:
    with pytest.raises(ValueError, match=field):
        cls(**kwargs)


def test_subspace_spectra_match_exact_for_outliers() -> None:
    W = np.zeros((8, 8))
    W[0, 0] = 4.0
    kw = dict(depth=3, N=96, parameterization="mup", lr=0.05, steps=30,
              checkpoints=Schedule.every(1), seed=1)
    ex = train_deep_linear(W, recording=DeepLinearRecording(layers=[1], top_k=2,
                                                            spectra="exact"), **kw)
    sub = train_deep_linear(W, recording=DeepLinearRecording(layers=[1], top_k=2,
                                                             spectra="subspace"), **kw)
    top_ex, top_sub = ex.singular_values[0][:, 0], sub.singular_values[0][:, 0]
    assert np.all(top_sub <= top_ex * (1 + 1e-9))  # Rayleigh-Ritz never overshoots
    out = top_ex > 1.2 * ex.bulk_edge[0]
    assert out.sum() >= 5
    np.testing.assert_allclose(top_sub[out], top_ex[out], rtol=1e-6)
