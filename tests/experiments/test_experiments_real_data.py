"""``real-data``: a small run's claims hold on its own tables; the linked config rules."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import pytest

from specdyn.experiments.real_data.claims import real_data_claims
from specdyn.experiments.real_data.config import RealDataConfig, tiny
from specdyn.runs import run_experiment


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    out = tmp_path_factory.mktemp("real")
    res = run_experiment("real-data", out, config=dataclasses.replace(tiny(), figure=True))
    return out / "real-data", res.claims


def testtiny_run_writes_its_tables_and_figures(tiny_run: tuple[Path, list]) -> None:
    folder, _ = tiny_run
    for name in ("real-data.parquet", "real-data_modes.parquet", "real-data_fits.parquet",
                 "real-data.png", "real-data_glance.png", "record.json"):
        assert (folder / name).exists(), name
    df = pd.read_parquet(folder / "real-data.parquet")
    assert set(df.task) == {"patches", "digits"}
    assert set(df.quantity) == {"rho_sim", "rho_theory", "spectrum_sim", "spectrum_theory"}
    assert set(df.student[df.task == "patches"]) == {"linear", "relu"}
    modes = pd.read_parquet(folder / "real-data_modes.parquet")
    assert set(modes.task) == {"patches", "digits", "text"}
    fits = pd.read_parquet(folder / "real-data_fits.parquet")
    assert {"alpha", "alpha_plus_beta", "beta"} <= set(fits.quantity)
    regions = pd.read_parquet(folder / "real-data_regions.parquet")
    # the theory's regions: lazy runs stay in Region I, feature learning reaches Region III
    lazy = regions[regions.regime == "lazy"]
    fl = regions[(regions.regime == "feature-learning") & (regions.task == "patches")]
    assert set(lazy.region) == {"I"}
    assert {"I", "II"} <= set(fl.region) and fl.region.str.startswith("III").any()


def testtiny_run_claims_hold_except_the_disputed(tiny_run: tuple[Path, list]) -> None:
    _, claims = tiny_run
    assert len(claims) == 13
    for c in claims:
        assert c.source.strip()
        if c.disputed:
            continue
        assert c.held, c


def test_claims_fail_when_the_network_is_replaced_by_its_initial_state(
        tiny_run: tuple[Path, list]) -> None:
    """A network that never learns (every checkpoint = t = 0) fails the feature-learning
    claims: the comparison with the theory and the transient."""
    folder, _ = tiny_run
    df = pd.read_parquet(folder / "real-data.parquet")
    modes = pd.read_parquet(folder / "real-data_modes.parquet")
    fits = pd.read_parquet(folder / "real-data_fits.parquet")
    sim = df.quantity == "rho_sim"
    first = df[sim & (df.step == 0)].set_index(["task", "student", "regime", "k"]).value
    frozen = df.copy()
    keys = pd.MultiIndex.from_frame(frozen.loc[sim, ["task", "student", "regime", "k"]])
    frozen.loc[sim, "value"] = first.reindex(keys).to_numpy()
    claims = {c.name: c for c in real_data_claims(frozen, modes, fits, tiny())}
    assert not claims["patches, linear, FL: rho_k(t) vs theory at aligned modes"].held
    assert not claims["patches, linear, FL: exponent rises (alpha -> 3alpha+beta)"].held


@pytest.mark.parametrize(("changes", "start"), [
    ({"patches_M": 1001}, "patches_M"),
    ({"patch": 6, "kmax_patches": 36}, "kmax_patches"),
    ({"kmax_digits": 61}, "kmax_digits"),
])
def test_linked_config_rules(changes: dict, start: str) -> None:
    with pytest.raises(ValueError, match=rf"^{start}\b") as info:
        RealDataConfig(**changes)
    assert "\n" not in str(info.value)
