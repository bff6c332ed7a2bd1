"""Claims that a wrong result would fail: the core paper's experiments.

Each experiment's claim function is a pure function of the tables it writes. Here
each one is fed a small correct table (the exact theory standing in for a perfect
simulation, or a small run's own output), which must pass every claim the project
expects to hold (not ``disputed``, not ``full_only``), and then deliberately wrong
tables (a constant spectrum, a shuffled one, the plain theory in place of the
simulation, a sign flip, swapped labels), each of which must fail at least one of
those claims.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from specdyn import theory
from specdyn.experiments.finite_size_theory.claims import (
    effective_claims,
    finite_size_claims,
)
from specdyn.experiments.finite_size_theory.config import (
    FiniteSizeConfig as FSTConfig,
)
from specdyn.experiments.linear_figures.claims import fig2_claims
from specdyn.experiments.linear_figures.claims import finite_size_slope_claims as size_slope_claims
from specdyn.experiments.linear_figures.config import Fig2Config, FiniteSizeConfig
from specdyn.experiments.nonlinear_figures.claims import fig4_claims
from specdyn.experiments.nonlinear_figures.config import Fig4Config
from specdyn.experiments.nonlinear_figures.run import theory_slopes
from specdyn.experiments.regime_map.claims import regime_map_claims
from specdyn.experiments.regime_map.config import RegimeMapConfig
from specdyn.experiments.regime_map.readings import cell_labels
from specdyn.experiments.simulate.claims import simulate_claims
from specdyn.experiments.simulate.config import SimulateConfig
from specdyn.experiments.theory_figures.claims import fig3_claims
from specdyn.experiments.theory_figures.claims_first_layer import fig5_claims, fig6_claims
from specdyn.experiments.theory_figures.config import Fig3Config, FirstLayerConfig
from specdyn.experiments.theory_figures.tables import fig3_table
from specdyn.measure.exponents import fit_exponents, two_point_exponent
from specdyn.runs import run_experiment
from specdyn.runs.claims import Claim
from specdyn.theory.discrete import grams_gd, rho_gd
from specdyn.theory.effective import effective_setting


def expected(claims: list[Claim]) -> list[Claim]:
    """The claims the project expects to hold at this size."""
    return [c for c in claims if not c.disputed and not c.full_only]


def assert_passes(claims: list[Claim]) -> None:
    exp = expected(claims)
    assert exp, "no claim is expected to hold"
    bad = [c for c in exp if not c.held]
    assert not bad, bad


def assert_passes_but_size(claims: list[Claim]) -> None:
    """A table equal to the theory (up to the GD step): every expected claim holds but a
    two-sided one (``aspect == "size"``: the finite-size deviation's), which fails it: a
    simulation equal to its theory is as wrong as one far from it."""
    exp = expected(claims)
    size = [c for c in exp if c.aspect == "size"]
    assert any(not c.held for c in size), size
    bad = [c for c in exp if c.aspect != "size" and not c.held]
    assert not bad, bad


def assert_fails(claims: list[Claim], why: str) -> None:
    assert not all(c.held for c in expected(claims)), f"{why}: every expected claim held"


RNG = np.random.default_rng(20261204)


def shuffled(values: np.ndarray) -> np.ndarray:
    out = np.array(values, copy=True)
    RNG.shuffle(out)
    return out


# ---------------------------------------------------------------- fig2 ---------------------


def _fig2_tables(cfg: Fig2Config, rho_sim: Callable[[np.ndarray, np.ndarray], np.ndarray]
                 ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """fig2's two tables with the theory as ``rho_theory`` and ``rho_sim(k, t)`` as the
    simulation, at log-spaced times up to ``cfg.steps``."""
    s = cfg.setting()
    t = np.unique(np.round(np.r_[0.0, np.geomspace(1.0, cfg.steps, 25)]))  # at whole steps
    k = np.arange(1, cfg.D + 1, dtype=float)
    th = theory.rho(s, k[None, :], t[:, None])
    sim = rho_sim(k, t)
    spectra = pd.DataFrame({"t": np.repeat(t, cfg.D), "k": np.tile(k, t.size),
                            "rho_sim": sim.ravel(), "rho_theory": th.ravel()})
    t_gd = t[t <= 4 * theory.t_learn(s, 2.0)]
    alpha = pd.concat([
        pd.DataFrame({"t": t, "source": "theory-local-k1-2-checkpoints",
                      "alpha_eff": two_point_exponent(th)}),
        pd.DataFrame({"t": t_gd, "source": "engine-infinite-k1-2",  # the Gram engine's map
                      "alpha_eff": two_point_exponent(rho_gd(s, [1.0, 2.0], np.round(
                          t_gd / cfg.dt), cfg.dt))}),
        pd.DataFrame({"t": t, "source": "simulation-local-k1-2",
                      "alpha_eff": two_point_exponent(sim)})], ignore_index=True)
    return spectra, alpha


def test_fig2_claims_fail_on_wrong_tables() -> None:
    cfg = Fig2Config(D=32, M=64, N=64, steps=500)
    s = cfg.setting()

    def exact(k: np.ndarray, t: np.ndarray) -> np.ndarray:
        return theory.rho(s, k[None, :], t[:, None])

    assert_passes_but_size(fig2_claims(*_fig2_tables(cfg, exact), cfg))
    wrong = {
        "constant spectrum": lambda k, t: np.ones((t.size, k.size)),
        "frozen at t = 0": lambda k, t: np.repeat(exact(k, t)[:1], t.size, axis=0),
        "ranks shuffled": lambda k, t: np.stack([shuffled(r) for r in exact(k, t)]),
        "exponent sign flipped": lambda k, t: 1.0 / exact(k, t),
    }
    for why, f in wrong.items():
        assert_fails(fig2_claims(*_fig2_tables(cfg, f), cfg), why)


def test_finite_size_claims_fail_on_wrong_slopes() -> None:
    cfg = FiniteSizeConfig(sizes=(64, 256, 1024, 4096), n_seeds=2)

    def table(err: Callable[[float], float]) -> pd.DataFrame:
        return pd.DataFrame([{"axis": a, "size": n, "seed": r, "median_abs_log": err(n)}
                             for a in ("N", "M") for n in cfg.sizes for r in range(2)])

    assert_passes(size_slope_claims(table(lambda n: 2.0 / np.sqrt(n)), cfg))
    assert_fails(size_slope_claims(table(lambda n: 0.1), cfg), "constant error")
    assert_fails(size_slope_claims(table(lambda n: 2e-3 * np.sqrt(n)), cfg), "sign flip")
    assert_fails(size_slope_claims(table(lambda n: 2.0 / n), cfg), "1/N, not 1/sqrt(N)")


# ---------------------------------------------------------------- fig4 ---------------------


def _fig4_table(cfg: Fig4Config, sim: Callable[[str, np.ndarray, np.ndarray, np.ndarray],
                                              np.ndarray]) -> pd.DataFrame:
    """fig4's slopes table with the theories from ``cfg`` and ``sim(regime, lin, eff, t)``
    as the simulated slope."""
    t = np.r_[0.0, np.geomspace(1.0, cfg.steps, 30)]
    rows = []
    for regime, s in cfg.settings().items():
        lin = theory_slopes(s, t, cfg.kmin, cfg.kmax)
        eff = theory_slopes(effective_setting(s, cfg.activation), t, cfg.kmin, cfg.kmax)
        rows.append(pd.DataFrame({"regime": regime, "t": t, "slope_sim": sim(regime, lin, eff, t),
                                  "slope_linear_theory": lin,
                                  "slope_linear_theory_effective_gamma0": eff}))
    return pd.concat(rows, ignore_index=True)


def test_fig4_claims_fail_on_wrong_tables() -> None:
    cfg = Fig4Config()
    # a ReLU student as the project measures it: the linear theory at gamma0 / c1
    assert_passes(fig4_claims(_fig4_table(cfg, lambda r, lin, eff, t: eff), cfg))
    wrong = {
        "the plain theory in place of the simulation": lambda r, lin, eff, t: lin,
        "constant slope alpha": lambda r, lin, eff, t: np.full_like(t, cfg.alpha),
        "sign flipped": lambda r, lin, eff, t: -eff,
        "times reversed": lambda r, lin, eff, t: eff[::-1],
    }
    for why, f in wrong.items():
        assert_fails(fig4_claims(_fig4_table(cfg, f), cfg), why)
    # regimes swapped: the lazy run's slope in place of the feature-learning one
    df = _fig4_table(cfg, lambda r, lin, eff, t: eff)
    df["regime"] = df["regime"].map({"lazy": "feature-learning", "feature-learning": "lazy"})
    assert_fails(fig4_claims(df, cfg), "regimes swapped")


# ------------------------------------------------------- fig3, fig5, fig6 -------------------


@pytest.fixture(scope="module")
def theory_tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple]:
    out = tmp_path_factory.mktemp("theory")
    cfg3 = Fig3Config(n_k=120, n_t=120, n_slices=2)
    tables = {"fig3": (fig3_table(cfg3), cfg3)}  # the table fig3 writes, without its figure
    cfgs = {"fig5": FirstLayerConfig(n_k=60, n_t=60, n_curves=4),
            "fig6": FirstLayerConfig(n_t=80)}  # the quick k step: boundaries read to a step
    for name, cfg in cfgs.items():
        res = run_experiment(name, out, config=cfg)
        tables[name] = (pd.read_parquet(res.tables[0]), cfg)
    return tables


def _with(df: pd.DataFrame, mask: pd.Series, values: np.ndarray | float) -> pd.DataFrame:
    out = df.copy()
    out.loc[mask, "value"] = values
    return out


def test_fig3_claims_fail_on_wrong_tables(theory_tables: dict[str, tuple]) -> None:
    df, cfg = theory_tables["fig3"]
    assert_passes(fig3_claims(df, cfg))
    deep = (df.panel == "deep-feature-learning") & (df.quantity == "alpha_eff")
    lazy = (df.panel == "lazy") & (df.quantity == "alpha_eff")
    assert_fails(fig3_claims(_with(df, deep, cfg.alpha), cfg), "constant alpha_eff")
    assert_fails(fig3_claims(_with(df, deep, shuffled(df.loc[deep, "value"].to_numpy())), cfg),
                 "shuffled alpha_eff")
    assert_fails(fig3_claims(_with(df, deep, -df.loc[deep, "value"]), cfg), "sign flip")
    # the deep panel's map in place of the well-lazy one: far from alpha
    below = (df.panel == "lazy-below-bound") & (df.quantity == "alpha_eff")
    assert_fails(fig3_claims(_with(df, below, df.loc[deep, "value"].to_numpy()), cfg),
                 "a feature-learning map labelled lazy")
    # alpha_eff(t = inf) flat: k_u and k_l of the Fig. 2 setting nowhere to be seen
    inf = df.quantity == "alpha_eff_t_inf"
    assert_fails(fig3_claims(_with(df, inf, cfg.alpha), cfg), "flat t = inf exponent")
    assert lazy.any()


def test_fig5_claims_fail_on_wrong_tables(theory_tables: dict[str, tuple]) -> None:
    df, cfg = theory_tables["fig5"]
    assert_passes(fig5_claims(df, cfg))
    late = df.t == df.t.max()
    first = df.loc[df.t == 0.0].sort_values("k")["value"].to_numpy()
    assert_fails(fig5_claims(_with(df, late, 1.0), cfg), "constant spectrum")
    assert_fails(fig5_claims(_with(df, late, first), cfg), "frozen at t = 0")
    assert_fails(fig5_claims(_with(df, late, 1.0 / df.loc[late, "value"]), cfg), "sign flip")
    assert_fails(fig5_claims(_with(df, late, shuffled(df.loc[late, "value"].to_numpy())), cfg),
                 "shuffled modes")


def test_fig6_claims_fail_on_wrong_tables(theory_tables: dict[str, tuple]) -> None:
    df, cfg = theory_tables["fig6"]
    assert_passes(fig6_claims(df, cfg))
    grid = df.quantity == "alpha_eff_first_layer"
    assert_fails(fig6_claims(_with(df, grid, cfg.alpha), cfg), "constant alpha_eff")
    assert_fails(fig6_claims(_with(df, grid, shuffled(df.loc[grid, "value"].to_numpy())), cfg),
                 "shuffled alpha_eff")
    swapped = df.copy()
    swapped["region"] = swapped["region"].map({"I": "III", "III": "I", "II": "II"})
    assert_fails(fig6_claims(swapped, cfg), "region labels swapped")


# ------------------------------------------------ simulate, regime-map ---------------------


def _simulate_table(cfg: SimulateConfig, preact: Callable[[np.ndarray], np.ndarray]
                    ) -> pd.DataFrame:
    """simulate's table of a GD run at N = M = inf (the discrete-time theory: spectrum and
    Gram diagonals) with ``preact(spectrum)`` as the recorded spectrum."""
    s = cfg.setting()
    dt = cfg.time_step()
    steps = np.unique(np.round(np.r_[0.0, np.geomspace(1.0, cfg.steps, 25)])).astype(int)
    t = steps * dt
    k = np.arange(1, cfg.D + 1, dtype=float)
    th = theory.rho(s, k[None, :], t[:, None])
    gd = grams_gd(s, k, steps, dt)
    sim = preact(gd["rho"])

    def rows(q: str, values: np.ndarray) -> pd.DataFrame:
        return pd.DataFrame({"step": np.repeat(steps, cfg.D), "t": np.repeat(t, cfg.D),
                             "k": np.tile(k, t.size), "quantity": q, "value": values.ravel()})

    fits = [pd.DataFrame({"step": steps, "t": t, "k": 0, "quantity": q,
                          "value": fit_exponents(x, cfg.kmin, cfg.kmax)})
            for q, x in (("alpha_fit", sim), ("alpha_fit_theory", th))]
    return pd.concat([rows("preact", sim), rows("rho_theory", th),
                      *(rows(q, gd[q]) for q in ("xi", "eta", "zeta")), *fits],
                     ignore_index=True)


def test_simulate_claims_fail_on_wrong_tables() -> None:
    cfg = SimulateConfig(D=32, steps=2000)
    assert_passes_but_size(simulate_claims(_simulate_table(cfg, lambda th: th), cfg))
    assert_fails(simulate_claims(_simulate_table(cfg, lambda th: np.ones_like(th)), cfg),
                 "constant spectrum")
    assert_fails(simulate_claims(_simulate_table(
        cfg, lambda th: np.repeat(th[:1], th.shape[0], axis=0)), cfg), "frozen at t = 0")
    assert_fails(simulate_claims(_simulate_table(
        cfg, lambda th: np.stack([shuffled(r) for r in th])), cfg), "shuffled ranks")


def test_regime_map_claims_fail_on_wrong_tables() -> None:
    cfg = RegimeMapConfig()
    r, g = np.meshgrid(np.geomspace(0.05, 3.0, 4), np.geomspace(0.03, 30.0, 4), indexing="ij")
    cells = pd.DataFrame({"sigma_ratio": r.ravel(), "gamma_ratio": g.ravel()})
    regime = np.array(cell_labels(cfg, cells))
    rank = {"lazy": 0.0, "intermediate": 1.0, "feature-learning": 2.0}
    theory_change = np.array([0.02 + 0.6 * rank[x] for x in regime]) + 0.01 * g.ravel() ** 0.1
    learned = np.array([0.3 + 20.0 * rank[x] for x in regime])  # R_k: below 1 when lazy
    dev = 0.02 * np.where(np.arange(regime.size) % 2, 1.0, -1.0)
    t_th = 10.0 ** np.linspace(1.0, 3.0, regime.size)
    points = cells.assign(regime=regime, delta_alpha=theory_change + dev,
                          delta_alpha_theory=theory_change, R_max=learned,
                          dev_spread=1.2 * dev, spec_dev=0.07, spec_dev_spread=0.06,
                          t_half=t_th * 1.05, t_half_theory=t_th)
    assert_passes(regime_map_claims(points, cfg))
    swapped = points.assign(regime=points["regime"].map(
        {"lazy": "feature-learning", "feature-learning": "lazy", "intermediate": "intermediate"}))
    assert_fails(regime_map_claims(swapped, cfg), "regime labels swapped")
    assert_fails(regime_map_claims(points.assign(delta_alpha=0.3), cfg),
                 "constant simulated change")
    assert_fails(regime_map_claims(points.assign(delta_alpha=shuffled(theory_change)), cfg),
                 "shuffled grid points")
    assert_fails(regime_map_claims(points.assign(delta_alpha=theory_change, spec_dev=0.0), cfg),
                 "a simulation that is its theory")
    assert_fails(regime_map_claims(points.assign(spec_dev=0.25), cfg), "fluctuations x3.6")
    assert_fails(regime_map_claims(points.assign(t_half=2.0 * t_th), cfg), "clock off by 2")


# ------------------------------------------------ finite-size-theory -----------------------


def _moments_table(seeds: int, std_scale: float = 1.0, bias: str = "theory") -> pd.DataFrame:
    """A compare() table of an exact theory measured with ``seeds`` seeds: the measured
    std and bias scatter by their own sampling errors around the prediction."""
    rng = np.random.default_rng(7)
    n = 400
    std_th = rng.uniform(0.01, 0.05, n)
    std_sim = std_th * (1.0 + rng.standard_normal(n) / np.sqrt(2.0 * (seeds - 1))) * std_scale
    se = std_sim / np.sqrt(seeds)
    shift = rng.choice([-1.0, 1.0], n) * rng.uniform(0.0, 20.0, n) * se
    measured = {"theory": shift, "zero": np.zeros(n), "flipped": -shift}[bias]
    return pd.DataFrame({"N": 1024, "M": np.nan, "t": 1.0, "seeds": seeds, "valid": True,
                         "std_sim": std_sim, "se_sim": se,
                         "std_theory": std_th, "shift_theory": shift,
                         "bias_sim": measured + se * rng.standard_normal(n)})


def test_finite_size_theory_claims_fail_on_wrong_tables() -> None:
    # the table has no t = 0 cells: the theory's t = 0 oracle is checked on a run's table
    # (test_experiments_finite_size_theory.py)
    assert_passes([c for c in finite_size_claims(_moments_table(64))[0]
                   if c.key != "t = 0 std oracle"])
    assert_fails(finite_size_claims(_moments_table(64, std_scale=1.5))[0], "std 50 % off")
    assert_fails(finite_size_claims(_moments_table(64, bias="zero"))[0], "no mean shift")
    assert_fails(finite_size_claims(_moments_table(64, bias="flipped"))[0], "shift sign flip")


def test_effective_theory_claims_fail_on_wrong_tables() -> None:
    cfg = FSTConfig(activations=("relu", "tanh"))
    t = np.geomspace(1.0, 1500.0, 20)
    eff = 1.0 + 0.7 * (1 - np.exp(-t / 30.0))
    lin = 1.0 + 1.5 * (1 - np.exp(-t / 30.0))

    def table(relu: np.ndarray, tanh: np.ndarray) -> pd.DataFrame:
        return pd.concat([pd.DataFrame({"activation": a, "regime": "feature-learning", "t": t,
                                        "slope_sim": sim, "slope_effective": eff,
                                        "slope_linear": lin, "c1_start": 0.5, "c1_end": 0.5})
                          for a, sim in (("relu", relu), ("tanh", tanh))], ignore_index=True)

    # ReLU follows the effective theory, tanh departs from it more and more (its c1 drifts)
    drift = eff - 0.6 * np.log1p(t) / np.log1p(t[-1])
    assert_passes(effective_claims(table(eff + 0.02, drift), cfg))
    assert_fails(effective_claims(table(lin, drift), cfg), "plain theory as ReLU's slope")
    assert_fails(effective_claims(table(eff, eff), cfg), "tanh following the effective theory")
    # an offset that does not grow is no breakdown as training goes on
    assert_fails(effective_claims(table(eff + 0.02, eff + 0.5), cfg), "constant tanh offset")


def test_claim_functions_are_pure(tmp_path: Path) -> None:
    """The same table gives the same claims, and the table is left as it was."""
    cfg = Fig4Config()
    df = _fig4_table(cfg, lambda r, lin, eff, t: eff)
    before = df.copy()
    assert fig4_claims(df, cfg) == fig4_claims(df, cfg)
    pd.testing.assert_frame_equal(df, before)


def test_fig3_k_l_is_found_where_alpha_eff_rises_not_where_it_falls_toward_k_u() -> None:
    """On a deep grid reaching past k_u (sigma_w = 1e-3, k_u = 1e12), alpha_eff(t = inf)
    passes the k_l level twice: rising at k_l, falling again toward k_u. The claim measures the
    rise (the --full run measured the fall before: 6 decades off)."""
    cfg = Fig3Config(deep_sigma_w=1e-3, deep_k_max=1e12, deep_t_max=1e19, n_k=160, n_t=160)
    [c] = [c for c in fig3_claims(fig3_table(cfg), cfg) if c.name.startswith(
        "(deep-feature-learning) k_l")]
    assert c.held, c
