"""An oracle of the Tracy-Widom margin by which ``two-step-phase``'s theory counts a spike as
resolved (:meth:`~specdyn.theory.two_step_spikes.StepTwoSpikes.edge_margin`): the top
singular value of sampled ``W0``-like matrices, whose spread the margin's scale must have.

The count's margin is a convention inside the theory function the claims and the figure
both call (a factor 2 lost in the change from the eigenvalue ``lambda`` of ``G^T G`` to
the singular value ``sqrt(lambda / D)`` passes both); the sample does not go through it.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd

from specdyn.experiments.two_step.config import PhaseConfig
from specdyn.measure.eigen import decompose
from specdyn.runs.claims import OWN, Claim, sized
from specdyn.sim.protocol import derive_seed
from specdyn.theory.rmt import TW1_SD, rectangular_bulk_edge
from specdyn.theory.two_step_spikes import StepTwoSpikes

__all__ = ["EDGE_DRAWS", "EDGE_FACTOR", "EDGE_TABLE", "edge_claim", "edge_table"]

#: The table of the sampled top singular values.
EDGE_TABLE = "two-step-phase_edge.parquet"
#: Inputs ``D`` of the sampled matrices (``N = D`` times the run's aspect ratio ``N / D``):
#: small enough for a few seconds of CPU, large enough for the Tracy-Widom law (its
#: centering and scaling err by ``O(D^(-2/3))``, about 2 % here).
EDGE_D = 500
#: Matrices sampled.
EDGE_DRAWS = 200
#: The claim's factor: the sample sd of ``R`` draws has a log sd of about
#: ``sqrt((1 + kurtosis / 2) / (2 R))`` (0.05 for TW1 at ``R = 200``); 1.25 is 4.4 of it,
#: beside the law's 2 % at this size (pilot seeds 1-3: 0.94-1.04 of the prediction).
EDGE_FACTOR = 1.25


def edge_table(cfg: PhaseConfig) -> pd.DataFrame:
    """``EDGE_DRAWS`` top singular values of ``G / sqrt(D)``, ``G`` an ``N x D`` standard
    Gaussian matrix at ``D = EDGE_D`` and the run's aspect ratio (``W0``'s law in
    ``sim.two_step``: rows ``N(0, I / D)``)."""
    D = EDGE_D
    N = max(1, round(D * cfg.N / cfg.D))
    rng = np.random.default_rng(derive_seed(cfg.seed, "edge-oracle"))
    top = []
    for _ in range(EDGE_DRAWS):
        G = rng.standard_normal((N, D))
        lam = decompose(G.T @ G if N >= D else G @ G.T, top=1, method="lanczos",
                        generator=rng).values[0]
        top.append(math.sqrt(float(lam) / D))
    return pd.DataFrame({"N": N, "D": D, "draw": np.arange(EDGE_DRAWS), "s_max": top})


def edge_claim(edge: pd.DataFrame) -> Claim:
    """The sampled sd of ``W0``'s top singular value against the count's margin: one
    Tracy-Widom scale (:meth:`StepTwoSpikes.edge_margin` on a bulk of ``W0``'s level, 1)
    times TW1's sd."""
    N, D = int(edge["N"].iloc[0]), int(edge["D"].iloc[0])
    bulk = StepTwoSpikes(theta=np.zeros(1), rows=np.zeros(1), bulk=np.zeros(1), noise=1.0,
                         ratio=N / D, N=N)
    scale = bulk.edge_margin(1.0)
    s = edge["s_max"].to_numpy(np.float64)
    claim = sized(
        "W0's top singular value: sampled sd against the count's Tracy-Widom scale x sd(TW1)",
        float(np.std(s, ddof=1)), scale * TW1_SD, EDGE_FACTOR, source=OWN,
        predicted_by="StepTwoSpikes.edge_margin(1) (Johnstone's scaling of the largest "
                     "eigenvalue, carried to the singular value) times TW1's sd",
        aspect="oracle", key="Tracy-Widom margin against sampled W0",
        note=f"{len(s)} draws of a {N} x {D} standard Gaussian matrix / sqrt(D) (W0's law); "
             f"the theory resolves a spike 3 of these scales above the edge; their mean sits "
             f"{(float(np.mean(s)) - float(rectangular_bulk_edge(N / D))) / scale:.2f} scales "
             "from the edge "
             "(TW1's mean: -1.21); an oracle of the theory, not of the run: the run's tables "
             "meet it whatever they hold, its partner is the count the margin sets")
    return replace(claim, partner="step-2 count = the finite-N theory's count")
