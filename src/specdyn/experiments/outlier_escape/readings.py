"""What bbp-escape's SGD and nonlinear claims read off ``bbp-escape_stochastic.parquet``:
each run's measured series and the prediction they are held against.

* SGD (:func:`sgd_reading`): :func:`specdyn.theory.outlier_escape.online_sgd_path`, the
  population path on the bulk that online SGD's mean-square recursion keeps.
* The nonlinear layer (:func:`nonlinear_reading`), own derivation: with ``a`` fixed and
  ``f = O(N^(-1/2))`` the residual is the label, so each update ``lr G`` adds
  ``lr mu1 a g^T`` (``mu1 = E[phi'(z)]``, ``g = X^T y / B``) plus a full-rank remainder of
  entry size ``O(lr / sqrt(N B))``; summed over ``t`` fresh batches the rank-one parts add
  to ``lr mu1 a (t c1 beta + xi_t)``, ``c1 = E[z y]``, ``||xi_t||^2 = t D E[y^2] / B``. On
  ``W0`` (i.i.d. ``N(0, 1/D)``, the rectangular bulk of ``c = N / D``) that is a spike of
  strength ``theta_t = lr |mu1| ||a|| sqrt(t^2 c1^2 + t D E[y^2] / B)``: an outlier once
  ``theta_t > c^(1/4)``, at ``s(theta_t)``; its right vector lies along ``t c1 beta +
  xi_t``, at squared overlap ``t c1^2 / (t c1^2 + D E[y^2] / B)`` with ``beta``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from specdyn.data.hermite import HermiteTarget, gaussian_expectation
from specdyn.experiments.outlier_escape.config import BBPEscapeConfig
from specdyn.models import get_activation
from specdyn.sim import activation_mu1
from specdyn.theory import outlier_escape as oe
from specdyn.theory import rmt


@dataclass(frozen=True)
class EscapeReading:
    """One run's measured series (by step) beside its prediction, at the same steps."""

    steps: np.ndarray
    measured: pd.DataFrame  # columns sv1, sv2, ..., left_overlap2, right_overlap2, flagged
    edge: np.ndarray
    outlier: np.ndarray
    left2: np.ndarray
    right2: np.ndarray
    crossing: float  # the first step the prediction has an outlier (NaN: never)

    def clear(self, factor: float) -> np.ndarray:
        """Steps where the predicted outlier exceeds ``factor`` times the edge."""
        return self.outlier > factor * self.edge


def _series(df: pd.DataFrame, run: str) -> pd.DataFrame:
    sel = df[(df["run"] == run) & (df["quantity"] != "a_norm")]
    wide = sel.pivot(index="step", columns="quantity", values="value").sort_index()
    return wide.assign(flagged=sel.groupby("step")["flagged"].first().reindex(wide.index))


def sgd_reading(df: pd.DataFrame, cfg: BBPEscapeConfig) -> EscapeReading:
    """The SGD run against :func:`~specdyn.theory.outlier_escape.online_sgd_path`."""
    m = _series(df, "sgd")
    t = m.index.to_numpy(dtype=float)
    path = oe.online_sgd_path(cfg.sgd_theta, cfg.sigma0, cfg.sgd_P, cfg.sgd_D, cfg.sgd_lr,
                              cfg.sgd_B, cfg.sgd_noise, t)
    det = np.asarray(path.detected, dtype=bool)
    return EscapeReading(t, m, path.bulk_edge, np.where(det, path.singular_value,
                                                       path.bulk_edge),
                         path.left_overlap2, path.right_overlap2,
                         float(t[det][0]) if det.any() else float("nan"))


def nonlinear_reading(df: pd.DataFrame, cfg: BBPEscapeConfig) -> EscapeReading:
    """The nonlinear run against the rank-one accumulation (module docstring)."""
    m = _series(df, "nonlinear")
    t = m.index.to_numpy(dtype=float)
    a_rows = df[(df["run"] == "nonlinear") & (df["quantity"] == "a_norm")]["value"]
    a_norm = float(a_rows.iloc[0]) if len(a_rows) else float("nan")
    mu1 = activation_mu1(get_activation(cfg.nonlinear_activation))
    target = HermiteTarget.named("He1")
    c1 = gaussian_expectation(lambda z: z * target.link(z))
    noise = cfg.nonlinear_D * target.second_moment / cfg.nonlinear_B
    theta = cfg.nonlinear_lr * abs(mu1) * a_norm * np.sqrt(t * t * c1 * c1 + t * noise)
    c = cfg.nonlinear_N / cfg.nonlinear_D
    with np.errstate(divide="ignore", invalid="ignore"):
        spike = rmt.rectangular_spike(theta, c)
        along = np.where(t > 0, t * c1 * c1 / (t * c1 * c1 + noise), 0.0)
    det = np.asarray(spike.detected, dtype=bool)
    edge = np.full_like(t, float(rmt.rectangular_bulk_edge(c)))
    return EscapeReading(t, m, edge, np.asarray(spike.singular_value, dtype=float),
                         np.asarray(spike.left_overlap2, dtype=float),
                         np.asarray(spike.right_overlap2, dtype=float) * along,
                         float(t[det][0]) if det.any() else float("nan"))
