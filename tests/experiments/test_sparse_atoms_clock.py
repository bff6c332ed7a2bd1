"""sparse-atoms' clock: the population mean-field flow it is compared with, and the claim's
resolution of a run at another speed (issue 47)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from specdyn.experiments.mean_field.atoms import (
    CLOCK_T,
    clock_claim,
    flow_drift,
    flow_unclaimed,
)
from specdyn.experiments.mean_field.config import AtomsConfig
from specdyn.theory.mean_field import relu_gram


def _population_risk(theta: np.ndarray, atoms: np.ndarray, lam: float) -> float:
    """``F = (1/2) E (f - f*)^2 + (lam/2) mean |theta|^2`` of the particles ``theta``,
    ``x ~ N(0, I)``, from the arc-cosine Gram of :func:`relu_gram` (the oracle)."""
    n = len(theta)
    rows = np.vstack([theta[:, 1:], atoms[:, 1:]])
    c = np.r_[theta[:, 0] / n, -atoms[:, 0]] * np.linalg.norm(rows, axis=1)
    return 0.5 * float(c @ relu_gram(rows) @ c) + 0.5 * lam * float(np.sum(theta ** 2)) / n


def test_flow_drift_is_minus_n_times_the_gradient_of_the_population_risk() -> None:
    """Each particle moves along ``-N dF/dtheta_i``: central differences of the risk."""
    cfg = AtomsConfig()
    atoms = cfg.teacher_atoms()
    theta = np.random.default_rng(7).standard_normal((6, cfg.D + 1))
    others = np.vstack([theta / [len(theta), *np.ones(cfg.D)], atoms * [-1.0, *np.ones(cfg.D)]])
    drift = flow_drift(theta, others, cfg.weight_decay)
    h = 1e-6
    fd = np.zeros_like(theta)
    for i in range(theta.shape[0]):
        for j in range(theta.shape[1]):
            up, down = theta.copy(), theta.copy()
            up[i, j] += h
            down[i, j] -= h
            fd[i, j] = -len(theta) * (_population_risk(up, atoms, cfg.weight_decay)
                                      - _population_risk(down, atoms, cfg.weight_decay)) / (2 * h)
    # central differences of a smooth function at h = 1e-6: about 1e-9 relative
    np.testing.assert_allclose(drift, fd, rtol=1e-6, atol=1e-8)


def _mass_table(times: list[float], unclaimed: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({"step": np.arange(len(times)), "t": times, "k": 2,
                         "top_mass": 1.0 - unclaimed})


def test_clock_claim_tells_the_flow_from_the_flow_at_half_the_speed() -> None:
    """The flow's own masses at t = 5, 10, 15 hold (ratio 1); read at t / 2 (a run at half
    the speed) they fail: the tolerance resolves a factor 2 of the clock."""
    cfg = AtomsConfig()
    times = [5.0, 10.0, CLOCK_T]
    flow = flow_unclaimed(cfg, tuple(times))
    right = clock_claim(_mass_table(times, flow), cfg)
    assert right.held and abs(right.measured / np.exp(np.log(flow).mean()) - 1) < 1e-12, right
    half = flow_unclaimed(cfg, tuple(t / 2 for t in times))
    slow = clock_claim(_mass_table(times, half), cfg)
    assert not slow.held, slow
    # the flow concentrates: its unclaimed mass falls over the transient
    assert np.all(np.diff(np.r_[half[0], flow]) < 0), (half, flow)
