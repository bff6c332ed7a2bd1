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
                 "fig2_agreement.parquet", "fig2_spread.parquet", "fig2_settings.json",
                 "record.json"):
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
    # the spread seeds: other seeds than the judged one, through the transient only
    spread = pd.read_parquet(out / "fig2_spread.parquet")
    assert spread.seed.nunique() == cfg.spread_seeds and spread.t.max() <= 4 * theory.t_learn(
        s, 2.0)
    by = {c.key: c for c in res.claims}
    assert by["theory column: ODE oracle"].held and by["theory column: ODE oracle"].aspect == \
        "oracle"
    assert by["transient deviation: spread seeds' size"].aspect == "size"


def _spectra_table(rng: np.random.Generator, sd: float, seeds: int = 1) -> pd.DataFrame:
    """Tables of ``seeds`` runs whose log spectrum is Eq. (12)'s plus noise of size ``sd``."""
    s = PowerLawSetting.paper(0.1, 2.0, D=16)
    t = np.array([0.0, 1.0, 3.0, 10.0, 30.0])
    k = np.arange(1, 17)
    tt, kk = np.meshgrid(t, k, indexing="ij")
    th = theory.rho(s, kk.astype(float), tt)
    return pd.concat([pd.DataFrame({"seed": i, "t": tt.ravel(), "k": kk.ravel(),
                                    "rho_theory": th.ravel(),
                                    "rho_sim": (th * np.exp(sd * rng.standard_normal(th.shape))
                                                ).ravel()}) for i in range(seeds)])


def test_transient_deviation_is_two_sided() -> None:
    """The spread claim's reading: a run with the spread seeds' noise level measures their
    level; one equal to its theory measures 0, one with 1.5 times the noise 1.5 times it."""
    from specdyn.experiments.linear_figures.claims import SPREAD_FACTOR
    from specdyn.experiments.linear_figures.readings import spread_prediction, transient_deviation
    from specdyn.runs import sized

    rng = np.random.default_rng(47)
    judged, spread = _spectra_table(rng, 0.1), _spectra_table(rng, 0.1, seeds=6)
    predicted, each = spread_prediction(judged, spread, 30.0)
    assert len(each) == 6 and predicted == pytest.approx(0.1, rel=0.1)
    theory_at = judged.set_index(["t", "k"]).rho_theory

    def held(df: pd.DataFrame) -> bool:
        return sized("x", transient_deviation(df, theory_at, 30.0), predicted, SPREAD_FACTOR,
                     source="own", predicted_by="spread").held

    assert held(judged)
    assert not held(judged.assign(rho_sim=judged.rho_theory))
    assert not held(judged.assign(rho_sim=judged.rho_theory
                                  * (judged.rho_sim / judged.rho_theory) ** 1.5))
    # checkpoints after the transient do not count
    late = judged.assign(rho_sim=np.where(judged.t > 30.0, 0.0, judged.rho_sim))
    assert transient_deviation(late, theory_at, 10.0) == transient_deviation(judged, theory_at,
                                                                             10.0)


def test_finite_size_quick_run(tmp_path: Path) -> None:
    cfg = FiniteSizeConfig(D=8, sizes=(32, 512), t_max=50.0, checkpoints=4, n_seeds=1)
    res = run_experiment("finite-size", tmp_path, config=cfg)
    df = pd.read_parquet(tmp_path / "finite-size" / "finite-size.parquet")
    assert len(df) == 4 and set(df.axis) == {"N", "M"}
    assert res.summary["slope_median_vs_N"] < 0 and res.summary["slope_median_vs_M"] < 0
    assert (tmp_path / "finite-size" / "finite-size.png").exists()
    cells = pd.read_parquet(tmp_path / "finite-size" / "finite-size_cells.parquet")
    assert len(cells) == 4 * 4 * 8  # runs x checkpoints x ranks
    by = {c.key: c for c in res.claims}
    assert {"error level, finite N", "error level, finite M"} <= set(by)
    assert all(by[f"error level, finite {a}"].aspect == "prefactor" for a in "NM")


def test_finite_size_level_reads_valid_cells_against_the_theory() -> None:
    """The level claim's reading: cells drawn from the finite-size theory's own moments
    measure its RMS, and 1 in units of each cell's predicted size; errors twice theirs read
    2; a table equal to Eq. (12) measures 0."""
    from specdyn.experiments.linear_figures.readings import finite_size_level

    s = PowerLawSetting.paper(0.1, 2.0, D=8)
    rng = np.random.default_rng(3)
    t = np.array([10.0, 100.0])
    k = np.arange(1, 9)
    rows = []
    for size in (1024, 4096):
        m = theory.finite_size_moments(s, k[None, :], t[:, None], N=size)
        th = theory.rho(s, k[None, :].astype(float), t[:, None])
        for seed in range(200):
            log_dev = m.mean_shift + m.std * rng.standard_normal(th.shape)
            rows.append(pd.DataFrame({"axis": "N", "size": size, "seed": seed,
                                      "t": np.repeat(t, 8), "k": np.tile(k, 2),
                                      "rho_sim": (th * np.exp(log_dev)).ravel(),
                                      "rho_theory": th.ravel()}))
    cells = pd.concat(rows, ignore_index=True)
    lv = finite_size_level(cells, s, "N", np.array([1024, 4096]))
    assert lv.cells > 0 and lv.measured == pytest.approx(lv.predicted, rel=0.05)
    assert lv.standardized == pytest.approx(1.0, rel=0.05)
    doubled = finite_size_level(cells.assign(rho_sim=cells.rho_theory * (
        cells.rho_sim / cells.rho_theory) ** 2), s, "N", np.array([1024, 4096]))
    assert doubled.standardized == pytest.approx(2.0 * lv.standardized, rel=1e-9)
    zero = finite_size_level(cells.assign(rho_sim=cells.rho_theory), s, "N",
                             np.array([1024, 4096]))
    assert zero.measured == 0.0 and zero.standardized == 0.0


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
