"""The weight-decay engine (:func:`specdyn.sim.train_weight_decay`) against three oracles.

1. No decay is :func:`~specdyn.sim.train_linear`'s weight-space GD: the same seed gives the
   same data and weights, and the same numbers bit for bit.
2. The Gram recursion with decay, written here in numpy (``W' = r W + c A G^T``,
   ``A' = r A + c W G`` closed on the Grams), from the run's own first Grams, gives its
   recorded diagonals and spectra to float64 round-off.
3. The fixed point of GD with decay is the minimiser of the convex problem
   ``(1/2) tr(B^T Sigma B) - tr(C^T B) + gamma0 lambda ||B||_*`` (the penalty's bound,
   reached by balanced weights), computed here by proximal gradient on ``B``: an
   independent method. The plausible mistakes (decay halved, decay missing) miss it by
   far more than the tolerance.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from specdyn.settings import PowerLawSetting
from specdyn.sim import (
    DivergenceError,
    System,
    derive_seed,
    gram,
    train_linear,
    train_weight_decay,
)

S = PowerLawSetting.paper(0.1, 2.0, D=4)
CPU: dict[str, Any] = {"device": "cpu"}


def test_no_decay_is_train_linears_weight_space_gd_bit_for_bit() -> None:
    s8 = PowerLawSetting.paper(0.1, 2.0, D=8)
    a = train_weight_decay(s8, 16, 24, 50, dt=0.5, checkpoints=6, seed=1, **CPU)
    b = train_linear(s8, 16, 24, 50, dt=0.5, engine="weights", checkpoints=6, seed=1, **CPU)
    assert np.array_equal(a.spectra, b.spectra) and np.array_equal(a.loss, b.loss)
    assert all(np.array_equal(a.diagonals[k], b.diagonals[k]) for k in b.diagonals)
    decayed = train_weight_decay(s8, 16, 24, 50, dt=0.5, weight_decay=0.05, checkpoints=6,
                                 seed=1, **CPU)
    assert not np.array_equal(decayed.spectra[-1], b.spectra[-1])  # the decay acts
    assert decayed.meta["engine"] == "weight_decay" and decayed.meta["weight_decay"] == 0.05


def _gram_recursion(grams: gram.Grams, stats: gram.Stats, gamma0: float, dt: float,
                    lam: float, steps: int) -> list[gram.Grams]:
    """The Grams after 0..steps steps of GD with decay, by the closed Gram recursion."""
    gw, ga, gwa = grams
    c, r = dt / gamma0, 1.0 - dt * lam
    out = [grams]
    for _ in range(steps):
        G = stats.c - stats.sigma @ gwa / gamma0
        gw, ga, gwa = (r * r * gw + r * c * (G @ gwa.T + gwa @ G.T) + c * c * G @ ga @ G.T,
                       r * r * ga + r * c * (G.T @ gwa + gwa.T @ G) + c * c * G.T @ gw @ G,
                       r * r * gwa + r * c * (gw @ G + G @ ga) + c * c * G @ gwa.T @ G)
        out.append((gw, ga, gwa))
    return out


def test_the_run_is_the_gram_recursion_with_decay() -> None:
    steps, dt, lam = 40, 0.5, 0.08
    tr = train_weight_decay(S, 16, 24, steps, dt=dt, weight_decay=lam,
                            checkpoints=[0, 1, 10, 40], seed=2, **CPU)
    system = System.of(S)
    x, y = system.teacher.sample(24, derive_seed(2, 0))  # the data stream (train_linear's)
    stats = system.stats((x, y))
    # the first Grams: the run's own (its weights are train_linear's draw)
    first = _gram_recursion(gram.initial_grams(16, 4, 4, S.sigma_w, S.sigma_a,
                                               gram.weight_generator(derive_seed(2, 1))),
                            stats, S.gamma0, dt, lam, steps)
    for j, step in enumerate(tr.steps):
        gw, ga, gwa = first[step]
        np.testing.assert_allclose(tr.diagonals["xi"][j], np.diagonal(gwa), rtol=1e-11,
                                   atol=1e-13)
        np.testing.assert_allclose(tr.diagonals["eta"][j], np.diagonal(gw), rtol=1e-11)
        np.testing.assert_allclose(tr.diagonals["zeta"][j], np.diagonal(ga), rtol=1e-11)
        want = np.linalg.eigvalsh(stats.sigma_half @ gw @ stats.sigma_half)[::-1]
        np.testing.assert_allclose(tr.spectra[j], want, rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(tr.loss[j], gram.loss_from_grams(stats, gwa, S.gamma0),
                                   rtol=1e-11)


def _nuclear_prox_minimiser(sigma: np.ndarray, c: np.ndarray, weight: float) -> np.ndarray:
    """``argmin_B (1/2) tr(B^T Sigma B) - tr(C^T B) + weight ||B||_*`` by proximal gradient
    (singular values soft-thresholded), to a step change below 1e-15."""
    B = np.zeros_like(c)
    L = float(np.linalg.eigvalsh(sigma)[-1])
    for _ in range(100_000):
        U, s, Vt = np.linalg.svd(B - (sigma @ B - c) / L)
        new = (U[:, :s.size] * np.maximum(s - weight / L, 0.0)) @ Vt[:s.size]
        if np.abs(new - B).max() < 1e-15:
            return new
        B = new
    raise AssertionError("the proximal iteration did not converge")


def test_the_fixed_point_is_the_nuclear_norm_minimiser() -> None:
    # gamma0 lambda = 0.2 sits between the modes' lambda_k theta_k (0.78, 0.28 / 0.15, 0.10
    # in the population): two modes learned, two cut, and the cut visible in the minimiser
    M, N, seed = 64, 16, 3
    lam = 0.2 / S.gamma0
    tr = train_weight_decay(S, N, M, 3000, dt=0.5, weight_decay=lam, checkpoints=[3000],
                            seed=seed, **CPU)
    x, y = System.of(S).teacher.sample(M, derive_seed(seed, 0))
    sigma, c = x.T @ x / M, x.T @ y / M
    B = _nuclear_prox_minimiser(sigma, c, S.gamma0 * lam)
    assert np.linalg.svd(B, compute_uv=False)[2:].max() < 1e-12  # rank 2: the cut modes
    learned = tr.diagonals["xi"][-1] / S.gamma0  # diag(B) of the run (identity basis)
    # GD converges geometrically (measured here: error 6.0e-5 at 1000 steps, 1.2e-7 at
    # 2000, 2.3e-10 at 3000): 1e-8 at 3000 steps leaves a margin of about 40; the wrong
    # models below are off by 0.23 (decay halved) and 0.46 (no decay)
    tol = 1e-8
    np.testing.assert_allclose(learned, np.diagonal(B), atol=tol)
    # the plausible mistakes miss it by far more: the decay halved, the decay missing
    for wrong in (0.5 * S.gamma0 * lam, 0.0):
        off = np.abs(np.diagonal(_nuclear_prox_minimiser(sigma, c, wrong)) - learned).max()
        assert off > 100 * tol, (wrong, off)


def test_bad_input_and_divergence_name_the_argument_and_the_step() -> None:
    with pytest.raises(ValueError, match=r"^weight_decay must be >= 0"):
        train_weight_decay(S, 8, 8, 10, weight_decay=-0.1, **CPU)
    with pytest.raises(ValueError, match=r"^M must be an integer >= 1"):
        train_weight_decay(S, 8, None, 10, **CPU)  # type: ignore[arg-type]
    with pytest.raises(DivergenceError) as info:
        train_weight_decay(S, 16, 24, 400, dt=60.0, weight_decay=0.01, **CPU)
    assert "diverged at step" in str(info.value) and info.value.record is not None
