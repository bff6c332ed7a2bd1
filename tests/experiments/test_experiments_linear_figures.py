"""The fig2 and finite-size experiments at tiny sizes: files, tables, round trips."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from specdyn import io, theory
from specdyn.experiments.linear_figures.config import Fig2Config, FiniteSizeConfig
from specdyn.runs import get, run_experiment
from specdyn.runs.config import config_from_dict, config_to_dict
from specdyn.settings import PowerLawSetting


def test_fig2_quick_run_writes_data_and_agrees(tmp_path: Path) -> None:
    cfg = Fig2Config(D=16, N=256, M=256, steps=300, checkpoints=12, n_curves=4)
    res = run_experiment("fig2", tmp_path, config=cfg)
    out = tmp_path / "fig2"
    for name in ("fig2.png", "fig2.pdf", "fig2.parquet", "fig2_alpha.parquet",
                 "fig2_agreement.parquet", "fig2_settings.json", "record.json"):
        assert (out / name).exists(), name
    spec = pd.read_parquet(out / "fig2.parquet")
    assert set(spec.columns) == {"step", "t", "k", "rho_sim", "rho_theory"}
    # the stored theory is theory.rho itself (independent evaluation here)
    s = PowerLawSetting.paper(0.1, 2.0, D=16)
    row = spec[spec.step == spec.step.max()].sort_values("k")
    np.testing.assert_allclose(row.rho_theory, theory.rho(s, row.k.to_numpy(float),
                                                          row.t.iloc[0]), rtol=1e-12)
    # finite N, M = 256 with D = 16: the spectrum is within 25% of theory for the median mode
    assert res.summary["final_median_abs_log"] < 0.25
    settings = io.read_json(out / "fig2_settings.json")
    assert settings["run"]["engine"] == "gram" and settings["config"]["N"] == 256


def test_finite_size_quick_run(tmp_path: Path) -> None:
    cfg = FiniteSizeConfig(D=8, sizes=(32, 512), t_max=50.0, checkpoints=4, n_seeds=1)
    res = run_experiment("finite-size", tmp_path, config=cfg)
    df = pd.read_parquet(tmp_path / "finite-size" / "finite-size.parquet")
    assert len(df) == 4 and set(df.axis) == {"N", "M"}
    assert res.summary["slope_median_vs_N"] < 0 and res.summary["slope_median_vs_M"] < 0
    assert (tmp_path / "finite-size" / "finite-size.png").exists()


@pytest.mark.parametrize("name, cls", [("fig2", Fig2Config), ("finite-size", FiniteSizeConfig)])
def test_configs_round_trip_and_full_sizes(name: str, cls: type) -> None:
    exp = get(name)
    for cfg in (exp.config(), exp.config(full=True)):
        assert config_from_dict(cls, config_to_dict(cfg)) == cfg
    if name == "fig2":
        full = exp.config(full=True)
        assert (full.D, full.N, full.M) == (512, 8192, 4096) and full.steps >= 30_000


@pytest.mark.parametrize("field, value", [("D", 0), ("N", -1), ("dt", 0.0), ("dtype", "int8"),
                                          ("n_curves", 1), ("D", 2)])
def test_fig2_config_bad_values(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=field):
        dataclasses.replace(Fig2Config(), **{field: value})
