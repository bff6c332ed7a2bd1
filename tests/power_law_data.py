"""Synthetic data with a known answer for the tests of ``specdyn data`` and ``study``."""

from __future__ import annotations

import numpy as np
from scipy.stats import ortho_group


def power_law_data(rotated: bool, *, D: int = 16, M: int = 400, alpha: float = 1.3,
                   beta: float = 0.7, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``X`` with covariance exactly ``B diag(k^-alpha) B^T`` (centred columns) and ``Y = X
    Theta``, ``Theta`` of singular values ``k^-beta/2`` in ``B`` (aligned: ``mu_k =
    k^-beta``) or in an independent basis (rotated: the teacher's own spectrum keeps
    ``beta``, its strength per input mode does not)."""
    rng = np.random.default_rng(seed)
    k = np.arange(1, D + 1, dtype=float)
    q, _ = np.linalg.qr(rng.standard_normal((M, D)))
    q, _ = np.linalg.qr(q - q.mean(axis=0))
    B = ortho_group.rvs(D, random_state=seed)
    X = np.sqrt(M) * (q * k ** (-alpha / 2)) @ B.T
    Bt = ortho_group.rvs(D, random_state=seed + 7) if rotated else B
    By = ortho_group.rvs(D, random_state=seed + 1)
    return X, X @ (Bt @ np.diag(k ** (-beta / 2)) @ By.T)
