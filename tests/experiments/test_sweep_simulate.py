"""The ``simulate`` and ``regime-map`` experiments and the phase-diagram plot."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from specdyn import runs, theory
from specdyn.experiments.regime_map.config import RegimeMapConfig
from specdyn.experiments.regime_map.readings import theory_labels
from specdyn.experiments.simulate.config import SimulateConfig
from specdyn.experiments.simulate.run import run_simulate as simulate
from specdyn.plot.phase import Boundary, grid_table, phase_diagram
from specdyn.runs import run_experiment
from specdyn.theory import feature_boundary, lazy_boundary


# The regime each setting is in, from the paper's conditions (sigma_a = 1, S = sigma_a^2 +
# sigma_w^2, gamma0_ratio = gamma0 theta0 / S): feature learning when sigma_a >> sigma_w and
# gamma0 theta0 >> S (Sec. 4, Appendix E); lazy when gamma0 theta0 << sqrt(sigma_w^2
# (2 sigma_w^2 + sigma_a^2)) (Eq. 33): here 0.05 * 2 = 0.1 << sqrt(3).
@pytest.mark.parametrize("ratio, sigma_w, regime", [(2.0, 0.1, "feature-learning"),
                                                    (0.05, 1.0, "lazy"),
                                                    (20.0, 0.1, "feature-learning")])
def test_simulate_matches_theory_at_infinite_width(tmp_path: Path, ratio: float,
                                                   sigma_w: float, regime: str) -> None:
    cfg = SimulateConfig(D=16, N=None, steps=400, checkpoints=12, kmax=8,
                         gamma0_ratio=ratio, sigma_w=sigma_w, figure=False)
    res = simulate(cfg, tmp_path)
    s = res.summary
    # t = 0, N = inf: rho_k = sigma_w^2 lambda_k exactly, so the fit returns alpha
    assert s["alpha_fit_initial"] == pytest.approx(cfg.alpha, abs=1e-12)
    # discrete GD at dt b_1 = 0.5 against the gradient-flow theory: the exponent
    # change agrees to first order in dt (observed <= 0.022; 0.05 leaves room)
    assert s["delta_alpha"] == pytest.approx(s["delta_alpha_theory"], abs=0.05)
    assert s["regime"] == regime
    if regime == "lazy":  # Eq. (34): the exponent stays alpha
        assert abs(s["delta_alpha"]) < 0.05
    df = runs.load(tmp_path)
    assert {"preact", "rho_theory", "alpha_fit", "alpha_fit_theory", "loss"} <= set(
        df["quantity"])
    assert list(df.columns) == ["step", "t", "k", "quantity", "value"]
    assert np.isfinite(df["value"]).all()


@pytest.mark.parametrize(("gamma0_ratio", "sigma_w"), [(0.05, 1.0), (2.0, 0.1)])
def test_auto_time_step_is_stable_fraction_of_fastest_rate(gamma0_ratio: float,
                                                           sigma_w: float) -> None:
    # oracle: the fastest relaxation rate measured on the exact flow, from how fast
    # xi_1 closes its gap to the fixed point late in training (not the rate formula)
    cfg = SimulateConfig(gamma0_ratio=gamma0_ratio, sigma_w=sigma_w)
    s = cfg.setting()
    dt = cfg.time_step()
    t = 30.0 * dt  # = 15 relaxation times of mode 1 if dt = 0.5 / b_1
    gap = [float(theory.xi(s, 1, np.inf) - theory.xi(s, 1, tt)) for tt in (t, t + dt)]
    b1 = np.log(gap[0] / gap[1]) / dt
    assert dt * b1 == pytest.approx(0.5, rel=1e-3)
    assert SimulateConfig(dt=0.3).time_step() == 0.3


def test_simulate_config_errors_name_the_field() -> None:
    with pytest.raises(ValueError, match="kmax"):
        SimulateConfig(D=8, kmax=16)
    with pytest.raises(ValueError, match="sigma_w"):
        SimulateConfig(sigma_w=0.0)


@pytest.mark.parametrize("r", [0.05, 0.2, 0.7, 1.5, 3.0])
def test_lazy_boundary_is_eq33_and_splits_theory_labels(r: float) -> None:
    # the drawn curve against the paper's Eq. (33) written out with sigma_a = 2
    sa = 2.0
    sw = r * sa
    s_ = sw**2 + sa**2
    g_eq33 = np.sqrt(sw**2 * (2 * sw**2 + sa**2)) / s_
    assert lazy_boundary(np.array([r]))[0] == pytest.approx(g_eq33, rel=1e-12)
    cfg = RegimeMapConfig(sigma_a=sa)
    labels = theory_labels(cfg, np.array([r]), np.array([g_eq33 / 1.05, g_eq33 * 1.05]))
    assert labels["regime"].tolist()[0] == "lazy"
    assert labels["regime"].tolist()[1] != "lazy"
    # feature learning needs sigma_w < sigma_a and gamma0 theta0 > S
    above = theory_labels(cfg, np.array([r]), np.array([1.05]))["regime"].iloc[0]
    assert (above == "feature-learning") == (r < 1)
    assert np.isnan(feature_boundary(np.array([r]))[0]) == (r >= 1)


def test_regime_map_small_grid_lazy_flat_feature_learning_moves(tmp_path: Path) -> None:
    # gamma_min = 0.005: a factor 10 below the lazy boundary (g = 0.05 at r = 0.05)
    cfg = RegimeMapConfig(ratio_min=0.05, ratio_max=2.0, n_ratio=2, gamma_min=0.005,
                          gamma_max=20.0, n_gamma=2, D=16, N=None, steps=300, checkpoints=10,
                          kmax=8, executor="inline", theory_resolution=12)
    res = run_experiment("regime-map", tmp_path, config=cfg)
    assert all(p.exists() for p in res.figures) and {p.suffix for p in res.figures} == {
        ".png", ".pdf"}
    pts = pd.read_parquet(res.tables[0]).set_index(["sigma_ratio", "gamma_ratio"])
    assert len(pts) == 4
    lazy = pts[pts["regime"] == "lazy"]
    fl = pts[pts["regime"] == "feature-learning"]
    assert len(lazy) >= 1 and len(fl) == 1
    # Eq. (34): in the lazy regime the exponent stays at alpha; in the feature-learning
    # corner it moves by O(1) (towards 3 alpha + beta, then alpha + beta or so)
    assert (lazy["delta_alpha"] < 0.1).all()
    assert (fl["delta_alpha"] > 1.0).all()
    # the simulations went through a sweep folder: one finished record per grid point
    recs = runs.load_records(tmp_path / "regime-map" / "sweep")
    assert (recs["status"] == "finished").all()
    assert sorted(recs[recs["seed"] == cfg.seed]["run_id"]) == sorted(pts["run_id"])
    # and one more a point for the spread seed, whose deviations the table records
    assert len(recs) == 2 * len(pts) and pts["dev_spread"].notna().all()


def test_regime_map_interrupted_after_its_sweep_resumes_without_recomputing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The map's run is a transaction, but its sweep lives outside it and resumes."""
    import specdyn.plot.phase as phase
    import specdyn.runs.executors as ex

    cfg = RegimeMapConfig(ratio_min=0.05, ratio_max=2.0, n_ratio=2, gamma_min=0.005,
                          gamma_max=20.0, n_gamma=1, D=8, N=None, steps=50, checkpoints=5,
                          kmax=4, executor="inline", theory_resolution=4)

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("interrupted while drawing")

    monkeypatch.setattr(phase, "phase_diagram", broken)
    with pytest.raises(RuntimeError, match="interrupted"):
        run_experiment("regime-map", tmp_path, config=cfg)
    assert not (tmp_path / "regime-map").exists()        # nothing half-written
    caches = list(tmp_path.glob(".regime-map.sweep-*"))
    assert len(caches) == 1                               # the finished simulations stay
    monkeypatch.undo()

    calls: list[object] = []
    orig = ex.run_point
    monkeypatch.setattr(ex, "run_point", lambda *a, **k: calls.append(a) or orig(*a, **k))
    res = run_experiment("regime-map", tmp_path, config=cfg)
    assert calls == []                                    # every point came from the sweep
    assert len(pd.read_parquet(res.tables[0])) == 2
    assert (tmp_path / "regime-map" / "sweep" / "runs").is_dir()
    assert not list(tmp_path.glob(".regime-map.sweep-*"))  # moved into the result


def test_phase_diagram_averages_seeds_and_draws_labels() -> None:
    df = pd.DataFrame({"a": [1, 1, 2, 2, 1, 2], "b": [1, 2, 1, 2, 1, 2],
                       "v": [1.0, 2.0, 3.0, 4.0, 3.0, 6.0],
                       "lab": ["x", "y", "x", "y", "x", "z"]})
    tab = grid_table(df, "a", "b", "v")
    assert tab.loc[1, 1] == 2.0 and tab.loc[2, 2] == 5.0  # (1 + 3)/2 and (4 + 6)/2
    fig = phase_diagram(df, "a", "b", "v", boundaries=[Boundary("b", lambda x: x)])
    assert len(fig.axes) == 2  # the map and its colour bar
    fig = phase_diagram(df, "a", "b", "lab")
    legend = fig.axes[0].get_legend()
    assert legend is not None and {t.get_text() for t in legend.get_texts()} >= {"x", "y"}
    with pytest.raises(ValueError, match="column 'nope'"):
        phase_diagram(df, "a", "b", "nope")


def test_paper_setting_used_by_simulate() -> None:
    # oracle: the paper's units (Appendix G) written out, not PowerLawSetting.paper
    cfg = SimulateConfig(sigma_w=0.3, gamma0_ratio=1.5, alpha=1.2, beta=0.8, D=16, kmax=8)
    s = cfg.setting()
    mu0 = 1.0 / sum(k**-2.0 for k in range(1, 200_001))  # 1 / zeta(alpha + beta), to 5e-6
    S = 0.3**2 + 1.0**2
    assert (s.alpha, s.beta, s.sigma_w, s.sigma_a, s.D, s.lambda0) == (1.2, 0.8, 0.3, 1.0, 16, 1.0)
    assert s.mu0 == pytest.approx(mu0, rel=1e-5)
    assert s.gamma0 == pytest.approx(1.5 * S / np.sqrt(mu0), rel=1e-5)
