"""The two-step experiments' many-draw tables: two-step-phase's Monte-Carlo oracle cell of
the spikes' theory and batch-reuse's fresh replicas, with their claims on tables of known
size."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from specdyn.experiments.two_step.config import PhaseConfig, ReuseConfig, full_reuse
from specdyn.experiments.two_step.fresh_replicas import (
    FRESH_REPLICA_N,
    FRESH_REPLICA_PILOT,
    fresh_replica_claim,
    fresh_replica_rms,
    fresh_replica_table,
    pilot_applies,
    replica_targets,
)
from specdyn.experiments.two_step.oracle_cell import (
    ORACLE_MEAN_TOL,
    ORACLE_N_QUAD,
    ORACLE_SD_PILOT,
    oracle_claims,
    theory_given_a,
)
from specdyn.experiments.two_step.reuse_claims import fresh_noise_level
from specdyn.models import numpy_activation
from specdyn.runs.wrong import patched
from specdyn.theory.two_step_spikes import row_spread, step_two_spikes


def _standard(n: int, seed: int) -> np.ndarray:
    """``n`` draws standardised to mean 0 and sd 1 exactly (a table of known moments)."""
    z = np.random.default_rng(seed).standard_normal(n)
    return (z - z.mean()) / z.std(ddof=1)


@pytest.fixture(scope="module")
def cell() -> pd.DataFrame:
    """A small oracle-cell table (N = D = M = 64, 24 draws of a) without strengths."""
    rng = np.random.default_rng(5)
    return pd.DataFrame([{"N": 64, "D": 64, "M": 64, "alpha1": 0.44, "alpha2": 0.49,
                          "draw": d, "a": rng.standard_normal(64) / 8.0}
                         for d in range(24)])


def test_theory_given_a_is_the_spikes_theory_of_each_draw(cell: pd.DataFrame) -> None:
    cfg = PhaseConfig()
    th = theory_given_a(cell, cfg)
    sigma, dsigma = numpy_activation(cfg.activation)
    one = step_two_spikes(64, 64, 64, 0.44, 0.49, sigma=sigma, dsigma=dsigma,
                          link=lambda z: np.asarray(z), K=5, n_quad=ORACLE_N_QUAD,
                          a=cell["a"].iloc[3])
    assert th[3] == pytest.approx(float(one.measured_rows[1]), rel=1e-12)
    assert np.all(np.isfinite(th)) and np.ptp(th) > 0  # each draw's own a


def test_oracle_claims_see_a_bias_and_a_spread_of_the_wrong_size(cell: pd.DataFrame) -> None:
    """Strengths scattered about the theory at the pilot's sd hold both claims; shifted by
    twice the mean tolerance they fail the mean; equal to the theory, or at 1.8 times the
    pilot's sd, they fail the sd."""
    cfg = PhaseConfig()
    th = theory_given_a(cell, cfg)
    z = _standard(len(cell), 1)

    def claims(dev: np.ndarray) -> list[bool]:
        return [c.held for c in oracle_claims(cell.assign(strength_a2=th * (1 + dev)), cfg)]

    assert claims(ORACLE_SD_PILOT * z) == [True, True]
    assert claims(ORACLE_SD_PILOT * z + 2 * ORACLE_MEAN_TOL) == [False, True]
    assert claims(0.0 * z) == [True, False]
    assert claims(1.8 * ORACLE_SD_PILOT * z) == [True, False]


def test_row_spread_is_w0s_part_and_the_rows_own_in_quadrature() -> None:
    s = np.array([0.0, 0.5, 2.0])
    assert np.allclose(row_spread(s, 0.3), np.sqrt(1 + 0.3 * s ** 2))
    assert row_spread(s, 0.0).tolist() == [1.0, 1.0, 1.0]


def test_the_theory_without_the_rows_spread_misses_the_oracle_cell() -> None:
    """The registered wrong model's patch reaches the theory the oracle reads: at the
    oracle's cell (N = 500, alpha1 = 0.44) it raises the a^2 strength by 7-8 %, beyond
    twice the mean tolerance."""
    cfg = PhaseConfig()
    rng = np.random.default_rng(6)
    cell = pd.DataFrame([{"N": 500, "D": 500, "M": 500, "alpha1": 0.44, "alpha2": 0.49,
                          "draw": d, "a": rng.standard_normal(500) / np.sqrt(500)}
                         for d in range(2)])
    right = theory_given_a(cell, cfg)
    with patched({"specdyn.theory.two_step_spikes.row_spread":
                  lambda s, rho2: np.ones_like(np.asarray(s, dtype=np.float64))}):
        wrong = theory_given_a(cell, cfg)
    assert np.all(wrong / right - 1 > 2 * ORACLE_MEAN_TOL)


def test_fresh_replica_table_is_deterministic_and_reads_noise() -> None:
    cfg = ReuseConfig()
    a = fresh_replica_table(cfg, draws=2)
    assert a.equals(fresh_replica_table(cfg, draws=2))
    assert sorted(set(a["target"])) == sorted(replica_targets(cfg))
    assert "He1" not in set(a["target"])
    assert (a["N"] == FRESH_REPLICA_N).all() and a["overlap_a2"].between(0, 1).all()
    assert np.allclose(a["level"], [fresh_noise_level(t, FRESH_REPLICA_N) for t in a["target"]])
    assert not a.equals(fresh_replica_table(replace(cfg, seed=1), draws=2))


def test_fresh_replica_claim_fails_noise_of_another_size() -> None:
    """Half-normal overlaps at the pilot's RMS hold; 0.7 or 1.5 times them fail."""
    n = 150
    z = np.abs(_standard(n, 2))
    level = 0.1
    ratio = FRESH_REPLICA_PILOT * z / np.sqrt(np.mean(z * z))
    table = pd.DataFrame({"target": "He3", "draw": np.arange(n), "N": 500, "D": 500,
                          "M": 500, "overlap_a2": level * ratio, "level": level})
    assert fresh_replica_rms(table) == pytest.approx(FRESH_REPLICA_PILOT)
    claim = fresh_replica_claim(table, ReuseConfig())
    assert claim.held and claim.partner == "He1: fresh-batch mean overlap"
    for factor in (0.7, 1.5):
        scaled = table.assign(overlap_a2=factor * table["overlap_a2"])
        assert not fresh_replica_claim(scaled, ReuseConfig()).held


def test_pilots_are_claimed_only_at_their_settings(cell: pd.DataFrame) -> None:
    """The replicas' and the oracle sd's pilots hold at the quick and --full configs only;
    elsewhere the replicas make no claim and the oracle only its mean (0 at any setting)."""
    assert pilot_applies(ReuseConfig()) and pilot_applies(full_reuse())
    assert not pilot_applies(replace(ReuseConfig(), alpha1=0.3))
    assert not pilot_applies(replace(ReuseConfig(), targets=("He1", "He3")))
    assert not pilot_applies(replace(ReuseConfig(), D=2000))
    cfg = PhaseConfig()
    table = cell.assign(strength_a2=1.0)  # N = D = M = 64: the pilot's aspect ratios
    assert len(oracle_claims(table, cfg)) == 2
    assert len(oracle_claims(table, replace(cfg, target="He3"))) == 1
    assert len(oracle_claims(table.assign(D=32), cfg)) == 1
