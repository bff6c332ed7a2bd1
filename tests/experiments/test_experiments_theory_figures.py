"""The theory figures run end to end and write figures, data and a settings record."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from specdyn import PowerLawSetting, io, theory
from specdyn.experiments.theory_figures import oracle
from specdyn.experiments.theory_figures.config import Fig3Config, FirstLayerConfig
from specdyn.experiments.theory_figures.readings import premise_window, sequence_modes
from specdyn.runs import WRONG_KINDS, builtin_names, get, run_experiment


@pytest.mark.parametrize("name, cfg", [
    ("fig3", Fig3Config(n_k=30, n_t=40, n_slices=3)),
    ("fig5", FirstLayerConfig(n_k=30, n_t=40, n_curves=4)),
    ("fig6", FirstLayerConfig(n_k=30, n_t=40)),
])
def test_theory_figure_writes_outputs(tmp_path: Path, name: str, cfg: object) -> None:
    res = run_experiment(name, tmp_path, config=cfg)
    for p in res.figures + res.tables:
        assert p.exists() and p.stat().st_size > 0
    assert {p.suffix for p in res.figures} == {".png", ".pdf"}
    rec = io.read_json(tmp_path / name / "record.json")
    assert rec["status"] == "finished" and rec["config"]["experiment"] == name
    assert rec["config"]["n_k"] == 30 and rec["specdyn_version"]
    df = pd.read_parquet(res.tables[0])
    assert {"k", "t", "quantity", "value"} <= set(df.columns)
    assert np.isfinite(df["value"]).all()


def test_fig3_data_is_the_theory(tmp_path: Path) -> None:
    cfg = Fig3Config(n_k=12, n_t=10, n_slices=2)
    res = run_experiment("fig3", tmp_path, config=cfg)
    df = pd.read_parquet(res.tables[0])
    sub = df[(df.panel == "fig2-setting") & (df.quantity == "alpha_eff")]
    s = PowerLawSetting.paper(0.1, 2.0)
    np.testing.assert_allclose(sub["value"], theory.alpha_eff(s, sub["k"].to_numpy(),
                                                              sub["t"].to_numpy()), rtol=1e-12)


def test_fig3_deep_panel_reaches_the_four_plateaus_in_their_regions(tmp_path: Path) -> None:
    """Paper Fig. 3(a, b): in the deep feature-learning setting each region of Eq. (31)
    has a plateau at its exponent. Checked on the written table: at least 10 % of the
    cells that ``theory.region`` labels I, II, IIIa, IIIb lie within 0.05 of alpha,
    3 alpha + beta, alpha + beta, alpha + beta/2 (alpha = beta = 1)."""
    cfg = Fig3Config(n_k=120, n_t=120, n_slices=2)
    res = run_experiment("fig3", tmp_path, config=cfg)
    df = pd.read_parquet(res.tables[0])
    sub = df[(df.panel == "deep-feature-learning") & (df.quantity == "alpha_eff")]
    s = cfg.settings()["deep-feature-learning"]
    labels = theory.region(s, sub["k"].to_numpy(), sub["t"].to_numpy())
    aeff = sub["value"].to_numpy()
    for name, value in {"I": 1.0, "II": 4.0, "IIIa": 2.0, "IIIb": 1.5}.items():
        dev = np.abs(aeff[labels == name] - value)
        assert dev.size > 50, name
        assert np.mean(dev <= 0.05) >= 0.1, (name, np.quantile(dev, 0.1))
    plateaus = [c for c in res.claims if "plateau" in c.name and c.name.startswith("(a)")]
    assert len(plateaus) == 4 and all(c.held for c in plateaus)
    rec = io.read_json(tmp_path / "fig3" / "record.json")
    assert len(rec["claims"]) == len(res.claims)
    assert all(c["source"] for c in rec["claims"])


def test_fig3_paper_fig2_setting_misses_the_plateaus(tmp_path: Path) -> None:
    """Why panel (a) exists: at sigma_w = 0.1, gamma0 = 2 S/theta0 alpha_eff never
    reaches 3 alpha + beta = 4 (it peaks near 3.74)."""
    s = PowerLawSetting.paper(0.1, 2.0)
    k, t = Fig3Config().axes()
    assert theory.alpha_eff(s, k[:, None], t[None, :]).max() < 3.9


def test_unknown_experiment_lists_valid_names() -> None:
    with pytest.raises(ValueError, match="valid names: .*fig3"):
        get("fig99")


def test_bad_config_value_is_refused() -> None:
    with pytest.raises(ValueError, match="n_k"):
        Fig3Config(n_k=1)


def test_premise_window_is_empty_at_1e_3_and_its_mode_reaches_the_plateau_at_1e_4() -> None:
    """Eq. (32)'s IIIa sequence needs a mode whose Region II passage and IIIa end are both
    deep enough for the tolerance: none at sigma_w = 1e-3 (the old deep panel, peak 3.87),
    and the window's middle at 1e-4 peaks within 0.05 of 3 alpha + beta and ends within
    0.05 of alpha + beta (the exact theory on a fine time axis, not the grid)."""
    tol = 0.05
    lo, hi = premise_window(PowerLawSetting.paper(1e-3, 1e3), tol)
    assert lo > hi
    s = PowerLawSetting.paper(1e-4, 1e3)
    lo, hi = premise_window(s, tol)
    assert 1e6 < lo < hi < 1e14  # inside [k_l, k_u]
    k_mode = np.sqrt(lo * hi)
    a = theory.alpha_eff(s, k_mode, np.logspace(0, 20, 4000))
    assert 4.0 - tol <= a.max() <= 4.0
    assert abs(theory.alpha_eff(s, k_mode, np.inf) - 2.0) <= tol
    k = np.logspace(0, 10, 240)
    assert np.isnan(sequence_modes(PowerLawSetting.paper(1e-3, 1e3), k, tol)["IIIa"])


def test_oracle_evaluations_agree_with_the_closed_forms() -> None:
    """The claims' independent evaluations against the closed forms they check: the
    fixed-point formula, the ODE's exponent, the quadrature of Eq. (181) and of Eq. (69)."""
    s = oracle.app_g_setting(1.0, 1.0, 0.1, 1.0, 2.0)
    assert s == PowerLawSetting.paper(0.1, 2.0)  # App. G written out = the library's setting
    k = np.logspace(0, 8, 50)
    np.testing.assert_allclose(oracle.alpha_eff_inf(s, k), theory.alpha_eff(s, k, np.inf),
                               atol=1e-12)
    t = np.logspace(-1, 5, 30)
    for km in (1.0, 30.0):
        np.testing.assert_allclose(oracle.alpha_eff(s, km, t), theory.alpha_eff(s, km, t),
                                   atol=1e-5)
        np.testing.assert_allclose(oracle.alpha_eff_first_layer(s, km, t),
                                   theory.alpha_eff_first_layer(s, km, t), atol=1e-5)
    assert oracle.time_to_level(s, 10.0, "k_learn") == pytest.approx(
        float(theory.t_learn(s, 10.0)), rel=1e-9)
    C = 0.5 * s.gamma0 * s.theta0 * 10.0 ** -0.5
    t_c = oracle.time_to_xi_first_layer(s, 10.0, C)
    assert theory.xi_first_layer(s, 10.0, t_c) == pytest.approx(C, rel=1e-9)


@pytest.mark.parametrize("name", builtin_names())
def test_every_wrong_kind_is_registered_or_declared_not_applicable(name: str) -> None:
    """Every experiment meets each class of plausible mistake (``WRONG_KINDS``) with a
    registered wrong model of that kind, or says why the class does not apply to it."""
    exp = get(name)
    kinds = {w.kind for w in exp.wrong_models if w.kind}
    assert kinds | set(exp.wrong_na) == set(WRONG_KINDS), (kinds, set(exp.wrong_na))
    assert not kinds & set(exp.wrong_na)
