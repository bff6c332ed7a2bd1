"""The oracle of two-step-phase's Tracy-Widom margin: sampled W0 against the count's scale."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from specdyn.experiments.two_step.config import PhaseConfig
from specdyn.experiments.two_step.edge import EDGE_D, EDGE_DRAWS, edge_claim, edge_table
from specdyn.runs import get
from specdyn.runs.wrong import patched
from specdyn.theory.rmt import TW1_SD
from specdyn.theory.two_step_spikes import StepTwoSpikes


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return edge_table(PhaseConfig())


def test_edge_table_is_w0s_law(table: pd.DataFrame) -> None:
    """Square at the quick aspect ratio; the top singular value near the edge 2 (1 + sqrt(c)),
    below it by about TW1's mean in scales."""
    assert (table["N"] == EDGE_D).all() and (table["D"] == EDGE_D).all()
    assert len(table) == EDGE_DRAWS and table["draw"].is_unique
    assert abs(table["s_max"].mean() - 2.0) < 0.05


def test_edge_claim_holds_on_the_sample_at_the_runs_aspect_ratio(table: pd.DataFrame) -> None:
    claim = edge_claim(table)
    assert claim.held and claim.aspect == "oracle", claim
    wide = edge_table(replace(PhaseConfig(), N=2000, D=1000))
    assert (wide["N"] == 2 * EDGE_D).all()
    assert edge_claim(wide).held
    assert abs(wide["s_max"].mean() - (1 + np.sqrt(2.0))) < 0.05  # the edge 1 + sqrt(N / D)


def test_edge_claim_fails_on_a_margin_off_by_a_modest_factor(table: pd.DataFrame) -> None:
    doubled = next(m for m in get("two-step-phase").wrong_models if m.name == "TW margin x2")
    with patched(doubled.patch):
        assert not edge_claim(table).held
    assert edge_claim(table).held
    for factor in (0.7, 1.4):  # the sample's spread off by 1.4 either way
        mean = table["s_max"].mean()
        assert not edge_claim(table.assign(s_max=mean + factor * (table["s_max"] - mean))).held


def test_the_margin_is_three_sampled_scales(table: pd.DataFrame) -> None:
    """The count's margin (3 scales) in units of the sampled sd / sd(TW1)."""
    bulk = StepTwoSpikes(theta=np.zeros(1), rows=np.zeros(1), bulk=np.zeros(1), noise=1.0,
                         ratio=1.0, N=EDGE_D)
    sampled_scale = table["s_max"].std(ddof=1) / TW1_SD
    assert bulk.edge_margin(3.0) / sampled_scale == pytest.approx(3.0, rel=0.2)
