"""Fresh-batch replicas of ``batch-reuse``: the size of the noise a fresh second batch
learns, resolved by many independent small runs.

The run's own table holds a handful of fresh runs a target (9 overlaps at the quick size),
so the RMS of their overlap over the noise level (:func:`.reuse_claims.fresh_noise_level`)
is known to a factor 2 only, and overlaps 0.7 times their size pass. Here each target of
information exponent >= 2 runs :data:`FRESH_REPLICAS` more times with a fresh batch at
``N = FRESH_REPLICA_N`` (the run's aspect ratios and step exponents), and each run's
step-2 direction along ``a^2`` (``q_2^T (W2 - W1)``, the first direction the second step
adds; no outlier search, so a run is a few hundredths of a second) is read against
``beta``: 150 overlaps resolve their RMS to about 6 %.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd

from specdyn.data.hermite import HermiteTarget
from specdyn.experiments.two_step.config import ReuseConfig
from specdyn.experiments.two_step.reuse_claims import fresh_learns_name, fresh_noise_level
from specdyn.measure.weight_outliers import orthonormal_powers
from specdyn.runs.claims import Claim, sized
from specdyn.sim.protocol import derive_seed
from specdyn.sim.two_step import gd_steps

__all__ = ["FRESH_REPLICAS", "FRESH_REPLICA_FACTOR", "FRESH_REPLICA_N", "FRESH_REPLICA_PILOT",
           "FRESH_TABLE", "fresh_replica_claim", "fresh_replica_rms", "fresh_replica_table",
           "pilot_applies", "replica_targets"]

#: The replicas' table: one row a run.
FRESH_TABLE = "batch-reuse_fresh.parquet"
#: The replicas' width (``D``, ``M`` at the run's aspect ratios).
FRESH_REPLICA_N = 500
#: Fresh runs a target of information exponent >= 2.
FRESH_REPLICAS = 50
#: The RMS of ``overlap / level`` over the replicas at the quick config, the mean over run
#: seeds 40-49 and 101-104 (14 x 150 runs; no judged run's seed): 1.169 (1.079-1.261; seeds
#: 101-104 by target: He2 1.31, He2+He3 1.20, He3 0.90). Not 1: the level is the low-rank
#: part's with the step-2 weight ``psi`` taken constant, while ``q_2^T (W2 - W1)`` also
#: holds the update's fluctuating part and ``psi`` varies with the first step's shift, by
#: target; so the pilot, not the formula, predicts this reading. The seed scan's 21-32,
#: held out, read 1.10-1.32 (log sd over the 22 seeds with 40-49: 0.044).
FRESH_REPLICA_PILOT = 1.169
#: The settings the pilot was measured at (the quick and ``--full`` configs'); the
#: replicas' reading depends on each of them, so at others no claim is made.
FRESH_REPLICA_PILOT_AT = {"alpha1": 0.35, "alpha2": 0.45, "activation": "tanh-shift",
                          "targets": ("He2", "He2+He3", "He3"), "aspect": (1.0, 1.0)}
#: The claim's factor: the RMS of ``n`` Gaussian coordinates has a log sd of
#: ``1 / sqrt(2 n)``, 0.058 for 150 overlaps (over seeds: 0.044); 1.25 is 3.9 of the
#: first, 5 of the second. Overlaps 0.7 times their size fail on all 23 seeds (0, 21-32,
#: 40-49; they would pass above 1.34).
FRESH_REPLICA_FACTOR = 1.25


def replica_targets(cfg: ReuseConfig) -> list[str]:
    """The run's targets of information exponent >= 2 (whose fresh overlaps are noise)."""
    return [n for n in cfg.targets if (HermiteTarget.named(n).information_exponent or 0) >= 2]


def fresh_replica_table(cfg: ReuseConfig, draws: int = FRESH_REPLICAS) -> pd.DataFrame:
    """``draws`` fresh-batch runs a target of :func:`replica_targets` at
    :data:`FRESH_REPLICA_N` (seeds derived from the run's): each run's
    ``|<v, beta>| / |v|`` of ``v = q_2^T (W2 - W1)`` and the noise level it is read
    against."""
    N = FRESH_REPLICA_N
    D, M = max(1, round(N * cfg.D / cfg.N)), max(1, round(N * cfg.M / cfg.N))
    rows = []
    for name in replica_targets(cfg):
        level = fresh_noise_level(name, D)
        for draw in range(draws):
            r = gd_steps(D, M, N, alphas=(cfg.alpha1, cfg.alpha2), activation=cfg.activation,
                         target=name, losses=False,
                         seed=derive_seed(cfg.seed, "fresh-replica", name, draw))
            v = orthonormal_powers(r.a, 2)[:, 1] @ (r.W2 - r.W1)
            beta = np.asarray(r.beta, dtype=np.float64)
            overlap = abs(float(v @ beta)) / float(np.linalg.norm(v) * np.linalg.norm(beta))
            rows.append({"target": name, "draw": draw, "N": N, "D": D, "M": M,
                         "overlap_a2": overlap, "level": level})
    return pd.DataFrame(rows)


def pilot_applies(cfg: ReuseConfig) -> bool:
    """Whether ``cfg`` has the settings :data:`FRESH_REPLICA_PILOT` was measured at."""
    at = {"alpha1": cfg.alpha1, "alpha2": cfg.alpha2, "activation": cfg.activation,
          "targets": tuple(replica_targets(cfg)), "aspect": (cfg.D / cfg.N, cfg.M / cfg.N)}
    return at == FRESH_REPLICA_PILOT_AT


def fresh_replica_rms(table: pd.DataFrame) -> float:
    """The RMS of ``overlap_a2 / level`` over the replicas (NaN without any)."""
    r = table["overlap_a2"].to_numpy(np.float64) / table["level"].to_numpy(np.float64)
    return float(np.sqrt(np.mean(r * r))) if r.size else float("nan")


def fresh_replica_claim(table: pd.DataFrame, cfg: ReuseConfig) -> Claim:
    """The replicas' RMS of ``overlap / level`` against the pilot's, within
    :data:`FRESH_REPLICA_FACTOR` (the registry makes it where :func:`pilot_applies`). Its
    partner, which a shuffled or constant main table fails, is the claim that a fresh batch
    learns the run's information-exponent-1 target (replicas shuffled within a target keep
    their RMS)."""
    n = len(table)
    N, D, M = (int(table[c].iloc[0]) if n else 0 for c in ("N", "D", "M"))
    claim = sized(
        "fresh batch, information exponent >= 2: step-2 direction along a^2, overlap / noise "
        "level, RMS over replicas", fresh_replica_rms(table), FRESH_REPLICA_PILOT,
        FRESH_REPLICA_FACTOR,
        source=('abstract 2: "independent batches restrict learning to directions with an '
                'information exponent of one"'),
        predicted_by="the mean over run seeds 40-49 and 101-104 at the same size (1.08-1.26; "
                     "seeds 101-104 by target: He2 1.31, He2+He3 1.20, He3 0.90)",
        key="fresh replicas' noise level", revised_how="restated",
        revised="added after a referee's wrong model (fresh overlaps 0.7 times their size) "
                "passed the run's 9-overlap RMS; its pilot 1.148 (seeds 101-104) -> 1.169 "
                "(with seeds 40-49) after seed 0's 1.247 and the seed scan's 21-32 were seen",
        note=f"{n} fresh-batch runs at N = {N}, D = {D}, M = {M} "
             f"({', '.join(sorted(set(table['target'])) if n else [])}): |<v, beta>| / |v| "
             "of the second step's direction along a^2 over the noise level sqrt(E[z^2 "
             "sigma*^2] / (D E[sigma*^2])); the run's own few fresh overlaps resolve their "
             f"size to a factor 2, these {n} to about {1 / math.sqrt(2 * max(n, 1)):.0%}: "
             "noise of the wrong size fails; replicas shuffled within a target keep their RMS: "
             "its partner is the information-exponent-1 target's fresh claim")
    return replace(claim, partner=fresh_learns_name(cfg))
