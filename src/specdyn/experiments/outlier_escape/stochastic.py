"""bbp-escape beyond population GD of a linear layer: the same escape under online SGD and
through a nonlinear layer, recorded for the claims of
:func:`specdyn.experiments.outlier_escape.claims.stochastic_claims`.

* ``sgd``: a linear student (:func:`specdyn.sim.train_linear_student`, method ``online``)
  with label noise, every step's singular values and overlaps;
* ``nonlinear``: online SGD on the first layer ``W`` of ``f(x) = N^(-1/2) a^T phi(W x)``
  (``a`` fixed; the public :class:`specdyn.sim.TwoStepEngine` with one step size per update,
  a fresh batch of a He1 teacher each step), every step's singular values of ``W``, the
  squared overlap of the top right singular vector with the teacher's direction and of the
  top left one with ``a``, and the Tracy-Widom count on ``W``'s spectrum.

One long table, ``bbp-escape_stochastic.parquet``: ``run, step, quantity, value, flagged``
(``quantity`` ``sv1..sv<top_k>``, ``left_overlap2``, ``right_overlap2`` and, for the
nonlinear run, ``a_norm``, the norm of its second layer, at step 0).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from specdyn._torch import to_numpy
from specdyn.data.hermite import HermiteTarget
from specdyn.experiments.outlier_escape.config import BBPEscapeConfig
from specdyn.measure.outliers import find_outliers
from specdyn.measure.spectra import decompose
from specdyn.models import get_activation
from specdyn.sim import (
    Outcome,
    RunOptions,
    Sampling,
    StreamLayout,
    Streams,
    TwoStepEngine,
    TwoStepState,
    rank_one_teacher,
    run,
    train_linear_student,
)
from specdyn.sim.protocol import derive_seed

#: The table of the two runs.
TABLE = "bbp-escape_stochastic.parquet"
#: Both runs record every ``RECORD_EVERY``-th step (each record is a full SVD with vectors;
#: the predicted crossings lie 16-18 steps in, so the escape is read to 2 steps).
RECORD_EVERY = 2
#: The nonlinear run's streams: the first draw and the batches from one generator, the
#: run seed's node ``"nonlinear"`` (the target's direction is node ``"nonlinear-direction"``).
_NONLINEAR_STREAMS = StreamLayout(init="nonlinear", batch="nonlinear")


def _rows(run: str, step: int, sv: np.ndarray, top_k: int, flagged: int,
          **extra: float) -> list[dict[str, Any]]:
    rows = [{"run": run, "step": step, "quantity": f"sv{j + 1}", "value": float(sv[j]),
             "flagged": flagged} for j in range(min(top_k, sv.size))]
    rows += [{"run": run, "step": step, "quantity": q, "value": float(x), "flagged": flagged}
             for q, x in extra.items()]
    return rows


def sgd_run(cfg: BBPEscapeConfig) -> list[dict[str, Any]]:
    """The linear student under online SGD with label noise: its rows of the table."""
    W_star, _, _ = rank_one_teacher(cfg.sgd_P, cfg.sgd_D, cfg.sgd_theta,
                                    seed=derive_seed(cfg.seed, "sgd-teacher"))
    run = train_linear_student(W_star, lr=cfg.sgd_lr, steps=cfg.sgd_steps, sigma0=cfg.sigma0,
                               sampling=Sampling("online", B=cfg.sgd_B,
                                                 noise_std=cfg.sgd_noise),
                               checkpoints=list(range(0, cfg.sgd_steps + 1, RECORD_EVERY)),
                               top_k=cfg.top_k,
                               seed=derive_seed(cfg.seed, "sgd"))
    rows: list[dict[str, Any]] = []
    for i, step in enumerate(run.steps):
        rows += _rows("sgd", int(step), run.singular_values[i], cfg.top_k, 0,
                      left_overlap2=run.left_overlap2[i], right_overlap2=run.right_overlap2[i])
    return rows


def nonlinear_run(cfg: BBPEscapeConfig) -> list[dict[str, Any]]:
    """Online SGD through a nonlinear layer: its rows of the table (the run driven by
    :func:`specdyn.sim.run`, its streams :data:`_NONLINEAR_STREAMS`)."""
    import torch

    target = HermiteTarget.named("He1", D=cfg.nonlinear_D,
                                 seed=derive_seed(cfg.seed, "nonlinear-direction"))
    engine = TwoStepEngine(get_activation(cfg.nonlinear_activation),
                           (cfg.nonlinear_lr,) * cfg.nonlinear_steps, N=cfg.nonlinear_N,
                           D=cfg.nonlinear_D, M=cfg.nonlinear_B, target=target,
                           dtype=torch.float64)
    steps = cfg.nonlinear_steps
    checkpoints = sorted({*range(0, steps + 1, RECORD_EVERY), steps})
    return run(engine, _SpikeRecorder(cfg, np.asarray(target.direction)), steps=steps,
               options=RunOptions(seed=cfg.seed), checkpoints=checkpoints,
               streams=Streams.derive(engine, cfg.seed, _NONLINEAR_STREAMS))


class _SpikeRecorder:
    """The nonlinear run's rows at each checkpoint: the first layer's singular values,
    the Tracy-Widom count and the top pair's overlaps with ``a`` and the direction."""

    def __init__(self, cfg: BBPEscapeConfig, beta: np.ndarray) -> None:
        self.cfg, self.beta = cfg, beta
        self.a: np.ndarray | None = None
        self.rows: list[dict[str, Any]] = []

    def snapshot(self, state: TwoStepState, step: int) -> None:
        """Record checkpoint ``step`` (the output weights ``a`` at the first)."""
        cfg = self.cfg
        if self.a is None:
            self.a = to_numpy(state.a, np.float64)
            self.rows.append({"run": "nonlinear", "step": 0, "quantity": "a_norm",
                              "value": float(np.linalg.norm(self.a)), "flagged": 0})
        a = self.a
        dec = decompose(to_numpy(state.W, np.float64), singular=True, vectors=True)
        sv, u, vt = np.asarray(dec.values), np.asarray(dec.vectors), np.asarray(dec.right).T
        # the Tracy-Widom test as the population run applies it to its P x D student
        flagged = find_outliers(sv ** 2 / cfg.nonlinear_N, cfg.nonlinear_D / cfg.nonlinear_N,
                                alpha=cfg.alpha).n_outliers
        self.rows += _rows("nonlinear", step, sv, cfg.top_k, int(flagged),
                           left_overlap2=(u[:, 0] @ a) ** 2 / (a @ a),
                           right_overlap2=(vt[0] @ self.beta) ** 2)

    def finish(self, outcome: Outcome[TwoStepState]) -> list[dict[str, Any]]:
        """The rows recorded."""
        return self.rows


def stochastic_table(cfg: BBPEscapeConfig) -> pd.DataFrame:
    """Both runs' rows, one long table (:data:`TABLE`)."""
    return pd.DataFrame(sgd_run(cfg) + nonlinear_run(cfg))


def stochastic_panels(df: pd.DataFrame, cfg: BBPEscapeConfig) -> list[dict[str, Any]]:
    """What the figure draws of the two runs' claims: measured and predicted, per run
    (:func:`specdyn.plot.outlier_escape.plot_stochastic_escape`)."""
    from specdyn.experiments.outlier_escape.readings import nonlinear_reading, sgd_reading
    from specdyn.theory import outlier_escape as oe

    panels = []
    for reading, title, ref in (
            (sgd_reading(df, cfg), f"online SGD, batch {cfg.sgd_B}, label noise "
             f"{cfg.sgd_noise:g}: SGD keeps a bulk", "population GD's bulk edge"),
            (nonlinear_reading(df, cfg), f"{cfg.nonlinear_activation} layer, online SGD: "
             "the accumulated rank-one spike", None)):
        m = reading.measured
        hit = reading.steps[m["flagged"].to_numpy() > 0]
        ref_edge = None
        if ref is not None:
            ref_edge = oe.population_gd_path(cfg.sgd_theta, cfg.sigma0, cfg.sgd_P / cfg.sgd_D,
                                             cfg.sgd_lr, reading.steps).bulk_edge
        panels.append({"title": title, "steps": reading.steps, "sv1": m["sv1"].to_numpy(),
                       "sv2": m["sv2"].to_numpy(), "edge": reading.edge,
                       "outlier": reading.outlier, "detected": reading.outlier > reading.edge,
                       "crossing": reading.crossing,
                       "flagged": float(hit[0]) if ref is None and hit.size else None,
                       "ref_edge": ref_edge, "ref_label": ref})
    return panels
