"""simulate's clock read on several networks: the pilot it is judged against, the band's
width in the number of networks, and a learning rate a few percent off."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from specdyn.experiments.simulate.clock import (
    CLOCK_BAND,
    CLOCK_K,
    CLOCK_PILOT,
    clock_claim,
    clock_pilot,
    clock_ratio,
    clock_replica_table,
    diagonal,
)
from specdyn.experiments.simulate.config import SimulateConfig, full_simulate
from specdyn.sim.linear import train_linear

_CFG = replace(SimulateConfig(), clock_replicas=3, init_replicas=0, figure=False)


def _run(cfg: SimulateConfig, dt_factor: float = 1.0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The run's table (its xi rows) and its clock replicas', at ``dt_factor`` times the
    config's step (the config still saying its own)."""
    made = replace(cfg, dt=dt_factor * cfg.time_step())
    traj = train_linear(made.setting(), made.N, made.M, made.steps, dt=made.time_step(),
                        checkpoints=made.checkpoints, seed=made.seed, progress=False)
    return traj.to_frame(), clock_replica_table(made)


def test_pilot_is_the_runs_size_whatever_its_seed_and_replicas() -> None:
    assert clock_pilot(replace(_CFG, seed=7, clock_replicas=0)) == CLOCK_PILOT["quick"]
    assert clock_pilot(replace(_CFG, N=1024)) is None  # another size: no pilot
    full = CLOCK_PILOT["full"]
    assert clock_pilot(full_simulate()) == (full if math.isfinite(full[0]) else None)


def test_clock_holds_on_the_run_and_its_replicas_and_narrows_with_them() -> None:
    df, clock = _run(_CFG)
    assert sorted(clock["replica"].unique()) == [0, 1, 2]
    assert set(clock["quantity"]) == {"xi"}
    claim = clock_claim(df, _CFG, clock)
    assert claim.held, claim
    ratios = [clock_ratio(diagonal(df, "xi"), _CFG)[0]]
    ratios += [clock_ratio(diagonal(g, "xi"), _CFG)[0] for _, g in clock.groupby("replica")]
    assert claim.measured == pytest.approx(np.mean(ratios))
    m, sd = CLOCK_PILOT["quick"]
    assert claim.expected == f"in [{m - CLOCK_K * sd / 2:g}, {m + CLOCK_K * sd / 2:g}]"
    alone = clock_claim(df, replace(_CFG, N=1024), None)  # no pilot: one network's band
    assert alone.expected == f"in [{CLOCK_BAND[0]:g}, {CLOCK_BAND[1]:g}]"


@pytest.mark.parametrize("dt_factor", [1.05, 1 / 1.05])
def test_clock_fails_on_a_learning_rate_five_percent_off(dt_factor: float) -> None:
    cfg = replace(_CFG, clock_replicas=8)
    df, clock = _run(cfg, dt_factor)
    assert not clock_claim(df, cfg, clock).held
