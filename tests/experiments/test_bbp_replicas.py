"""bbp-escape's replicas: the table is reproducible, and its pilot level is the one an
independent Monte Carlo of population GD's exact map gives."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from specdyn.experiments.outlier_escape.config import BBPEscapeConfig
from specdyn.experiments.outlier_escape.replicas import (
    RECORDS,
    predicted_level,
    replica_claims,
    replica_deviations,
    replica_steps,
    replica_table,
)
from specdyn.theory import outlier_escape as oe


def test_replica_table_is_bit_reproducible_and_one_row_a_replica_and_step() -> None:
    cfg = BBPEscapeConfig(P=40, D=80, theta=0.02, lr=0.2, replicas=3)
    steps = replica_steps(cfg, 1.1)
    assert 2 <= steps.size <= RECORDS and np.all(np.diff(steps) > 0)
    a, b = replica_table(cfg, 1.1), replica_table(cfg, 1.1)
    pd.testing.assert_frame_equal(a, b)
    assert len(a) == 3 * steps.size and set(a["step"]) == set(steps)
    assert np.isfinite(a["value"]).all()
    other = replica_table(dataclasses.replace(cfg, seed=1), 1.1)
    assert not np.allclose(a["value"], other["value"])
    assert replica_deviations(a, cfg).shape == (3,)


def test_pilot_level_matches_a_monte_carlo_of_the_exact_map() -> None:
    """Population GD on ``W*`` is ``W_t = a_t W0 + (1 - a_t) W*``, ``a_t = (1 - lr)^t``:
    draws of ``W0`` in numpy (no engine, no torch) give the deviation level the pilot
    seeds measured through the engine, to the Monte Carlo's resolution."""
    cfg = BBPEscapeConfig()
    steps = replica_steps(cfg, 1.1)
    rng = np.random.default_rng(12345)
    u = rng.standard_normal(cfg.P)
    v = rng.standard_normal(cfg.D)
    W_star = cfg.theta * np.outer(u / np.linalg.norm(u), v / np.linalg.norm(v))
    path = oe.population_gd_path(cfg.theta, cfg.sigma0, cfg.P / cfg.D, cfg.lr, steps)
    a = (1.0 - cfg.lr) ** steps
    draws = 96
    rel = np.empty((draws, steps.size))
    for r in range(draws):
        W0 = rng.standard_normal((cfg.P, cfg.D)) * (cfg.sigma0 / np.sqrt(cfg.D))
        for j, at in enumerate(a):
            W = at * W0 + (1.0 - at) * W_star
            rel[r, j] = np.sqrt(np.linalg.eigvalsh(W @ W.T)[-1]) / path.singular_value[j] - 1
    level = float(np.sqrt(np.mean(rel * rel)))
    pilot = predicted_level(cfg)[0]
    # a level of 32 draws has a log sd of about 0.12: 0.07 at 96 draws, 0.04 the pilot
    # mean's; 0.25 is over 3 sd of their difference, and a factor sqrt(2) is 5
    assert level == pytest.approx(pilot, rel=0.25)


def test_replica_claim_is_two_sided() -> None:
    """A table on its theory fails, so do deviations at half or twice their size; the
    pilot-sized one holds."""
    cfg = BBPEscapeConfig()
    steps = replica_steps(cfg, 1.1)
    th = oe.population_gd_path(cfg.theta, cfg.sigma0, cfg.P / cfg.D, cfg.lr, steps)
    pilot = predicted_level(cfg)[0]
    signs = np.tile([1.0, -1.0], 8)  # 16 replicas, each off by the pilot's level
    rows = [{"replica": r, "step": int(t), "quantity": "sv1",
             "value": s * (1.0 + signs[r] * pilot)}
            for r in range(16) for t, s in zip(steps, th.singular_value, strict=True)]
    df = pd.DataFrame(rows)

    def held(scale: float) -> bool:
        d = df.copy()
        pred = np.tile(th.singular_value, 16)
        d["value"] = pred + scale * (d["value"].to_numpy() - pred)
        return replica_claims(d, cfg)[0].held

    assert held(1.0)
    assert not held(0.0) and not held(0.5) and not held(2.0)


def test_level_factor_follows_the_replicas_and_the_pilot() -> None:
    """3.3 sd of the log ratio: fewer replicas, or a pilot scaled from another width, give a
    wider band."""
    from specdyn.experiments.outlier_escape.replicas import level_factor

    quick = BBPEscapeConfig()
    f32 = level_factor(quick)
    assert f32 == pytest.approx(np.exp(3.3 * np.sqrt(1 / 64 + 1 / (2 * 8 * 32))))
    assert level_factor(dataclasses.replace(quick, replicas=8)) > f32
    assert level_factor(dataclasses.replace(quick, P=400, D=800)) > f32
    assert predicted_level(dataclasses.replace(quick, P=400, D=800))[0] == pytest.approx(
        predicted_level(quick)[0] * np.sqrt(600 / 800))
