"""Two GD steps in the linear-width regime (specdyn.sim.two_step).

Oracles: torch autograd for the update rule; the rectangular signal-plus-noise
formulas (``specdyn.theory.rmt.rectangular_spike``, independent code) for the
step-1 spike.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from specdyn.data import HermiteTarget
from specdyn.measure.weight_outliers import weight_outliers
from specdyn.sim import (
    DivergenceError,
    activation_mu1,
    gd_steps,
    gd_steps_row,
    one_step_spike_strength,
    seed_streams,
)
from specdyn.sim.two_step import draw_data
from specdyn.theory.rmt import rectangular_spike


@pytest.mark.parametrize("reuse", [False, True])
def test_update_is_sqrtN_times_negative_autograd_gradient(reuse: bool) -> None:
    torch = pytest.importorskip("torch")
    d, n, N = 7, 11, 5
    etas = (0.7, 1.3)
    tgt = HermiteTarget.named("He2+He3", D=d, seed=1)
    res = gd_steps(d, n, N, lrs=etas, target=tgt, reuse_batch=reuse, seed=3)
    # rebuild the same draws (documented order: W0, a, X1, then X2 if fresh)
    rng = np.random.default_rng(seed_streams(3, 2)[0])  # stream 0: the weights and data
    W0 = rng.standard_normal((N, d)) / math.sqrt(d)
    a = torch.tensor(rng.standard_normal(N) / math.sqrt(N))
    X1 = rng.standard_normal((n, d))
    X2 = X1 if reuse else rng.standard_normal((n, d))
    np.testing.assert_array_equal(res.W0, W0)
    W = torch.tensor(W0, requires_grad=True)
    for eta, X in zip(etas, (X1, X2), strict=True):
        Xt, y = torch.tensor(X), torch.tensor(tgt(X))
        f = (a @ torch.tanh(W @ Xt.T + 0.5)) / math.sqrt(N)
        loss = 0.5 * torch.mean((y - f) ** 2)
        (grad,) = torch.autograd.grad(loss, W)
        W = (W - eta * math.sqrt(N) * grad).detach().requires_grad_(True)
        if eta == etas[0]:
            np.testing.assert_allclose(res.W1, W.detach().numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(res.W2, W.detach().numpy(), rtol=1e-12, atol=1e-14)


def test_fresh_and_reused_share_the_first_step() -> None:
    kw = dict(alphas=(0.2, 0.3), target="He1", seed=5)
    fresh = gd_steps(30, 40, 20, reuse_batch=False, **kw)
    reused = gd_steps(30, 40, 20, reuse_batch=True, **kw)
    np.testing.assert_array_equal(fresh.W1, reused.W1)
    assert not np.allclose(fresh.W2, reused.W2)
    assert fresh.lrs == pytest.approx((20**0.2, 20**0.3))
    assert reused.alphas == pytest.approx((0.2, 0.3))


@pytest.mark.parametrize("reuse", [False, True])
def test_step2_direction_does_not_depend_on_alpha2(reuse: bool) -> None:
    # the claim a grid row rests on: G2 is the gradient at W1, so W2 - W1 = lr2 G2 with
    # G2 the same for every alpha2 (per-cell runs, no sharing)
    kw = dict(target="He2+He3", reuse_batch=reuse, seed=2)
    runs = [gd_steps(30, 40, 20, alphas=(0.3, a2), **kw) for a2 in (0.05, 0.25, 0.45)]
    G2 = [(r.W2 - r.W1) / r.lrs[1] for r in runs]
    assert np.abs(G2[0]).max() > 1e-3  # a real step
    for G in G2[1:]:
        np.testing.assert_allclose(G, G2[0], rtol=1e-10, atol=1e-13)
    # ... while a different alpha1 moves it
    other = gd_steps(30, 40, 20, alphas=(0.2, 0.25), **kw)
    assert not np.allclose((other.W2 - other.W1) / other.lrs[1], G2[0], atol=1e-6)


@pytest.mark.parametrize("reuse", [False, True])
def test_a_row_gives_the_per_cell_runs_bit_for_bit(reuse: bool) -> None:
    sizes, a1, a2s = (30, 40, 20), 0.33, (0.45, 0.05, 0.25)
    kw = dict(activation="tanh-shift", target="He2+He3", reuse_batch=reuse, seed=4,
              device="cpu")
    data = draw_data(*sizes, target="He2+He3", reuse_batch=reuse, seed=4, device="cpu")
    row = list(gd_steps_row(*sizes, a1, a2s, data=data, **kw))
    assert len(row) == len(a2s)
    for a2, shared in zip(a2s, row, strict=True):
        cell = gd_steps(*sizes, alphas=(a1, a2), **kw)
        assert shared.alphas == cell.alphas and shared.lrs == cell.lrs
        for name in ("W0", "W1", "W2", "a", "beta", "g", "loss"):
            np.testing.assert_array_equal(getattr(shared, name), getattr(cell, name),
                                          err_msg=name)
        # hence the same W2 spectrum, to the last bit
        np.testing.assert_array_equal(np.linalg.svd(shared.W2, compute_uv=False),
                                      np.linalg.svd(cell.W2, compute_uv=False))
    assert not np.allclose(row[0].W2, row[1].W2)  # the cells do differ


@pytest.mark.parametrize("reuse", [False, True])
def test_losses_false_skips_only_the_loss_passes(reuse: bool) -> None:
    kw = dict(alphas=(0.3, 0.4), target="He1", reuse_batch=reuse, seed=6)
    full = gd_steps(30, 40, 20, **kw)
    lean = gd_steps(30, 40, 20, losses=False, **kw)
    for name in ("W1", "W2", "g"):
        np.testing.assert_array_equal(getattr(lean, name), getattr(full, name))
    assert np.isfinite(full.loss).all()
    # the loss of W0 comes with the first update; W1's with the second when it reuses
    # batch 1; the rest needed a pass of their own and are NaN
    known = [0, 1] if reuse else [0]
    np.testing.assert_array_equal(lean.loss[known], full.loss[known])
    assert np.isnan(np.delete(lean.loss, known)).all()


def test_bad_row() -> None:
    with pytest.raises(ValueError, match="^alpha2 "):
        gd_steps_row(4, 4, 4, 0.1, ())
    with pytest.raises(ValueError, match=r"^alpha2\[1\] "):
        gd_steps_row(4, 4, 4, 0.1, (0.2, 0.5))
    with pytest.raises(ValueError, match="^alpha1 "):
        gd_steps_row(4, 4, 4, 0.5, (0.2,))


def test_mu1_of_tanh_shift_matches_riemann_sum() -> None:
    z = np.linspace(-12, 12, 200001)
    w = np.exp(-z * z / 2) * (z[1] - z[0]) / math.sqrt(2 * math.pi)
    assert activation_mu1("tanh-shift") == pytest.approx(float(np.sum(w / np.cosh(z + 0.5) ** 2)),
                                                         abs=1e-9)


@pytest.mark.slow
def test_one_step_spike_matches_rectangular_prediction() -> None:
    # d = n = N = 2000 (c = 1), alpha1 = 0.2: the tolerance is 3 % on the
    # singular value and 0.05 on the squared overlaps; finite-size corrections are
    # O(N^(alpha1 - 1/2)) on the bulk and O(N^(-1/2)) on the overlaps.
    res = gd_steps(2000, 2000, 2000, alphas=(0.2, 0.0), target="He1", seed=0)
    theta = one_step_spike_strength(res)
    pred = rectangular_spike(theta, 1.0)
    assert pred.detected
    u = res.a / np.linalg.norm(res.a)
    v = res.g[0] / np.linalg.norm(res.g[0])
    o = weight_outliers(res.W1, u, v, n_reference=1)
    assert o.count == 1
    assert o.values[0] == pytest.approx(pred.singular_value, rel=0.03)
    assert o.left_overlap2[0, 0] == pytest.approx(pred.left_overlap2, abs=0.05)
    assert o.right_alignment[0] == pytest.approx(pred.right_overlap2, abs=0.05)


def test_one_step_spike_non_square() -> None:
    # c = N/d = 1/2 separates the left (a) and right (g1) overlap formulas; smaller
    # sizes, so the tolerance is wider (5 % and 0.07, ~2 N^(-1/2) with N = 600)
    res = gd_steps(1200, 1200, 600, alphas=(0.25, 0.0), target="He1", seed=1)
    pred = rectangular_spike(one_step_spike_strength(res), 0.5)
    o = weight_outliers(res.W1, res.a, res.g[0], n_reference=1)
    assert o.count == 1
    assert o.values[0] == pytest.approx(pred.singular_value, rel=0.05)
    assert o.left_overlap2[0, 0] == pytest.approx(pred.left_overlap2, abs=0.07)
    assert o.right_alignment[0] == pytest.approx(pred.right_overlap2, abs=0.07)
    assert abs(pred.left_overlap2 - pred.right_overlap2) > 0.02  # the two formulas differ here


def test_divergence_is_reported_with_the_step() -> None:
    with pytest.raises(DivergenceError, match="step 2") as info:
        gd_steps(5, 5, 5, lrs=(1e200, 1e200), activation="quadratic", seed=0)
    assert info.value.step == 2


@pytest.mark.parametrize(("kwargs", "name"), [
    (dict(alphas=(0.5, 0.1)), r"^alphas\[0\] "),
    (dict(alphas=(-0.1, 0.1)), r"^alphas\[0\] "),
    (dict(alphas=(0.1, 0.55)), r"^alphas\[1\] "),
    (dict(lrs=(1.0, 0.0)), r"^lrs\[1\] "),
    (dict(lrs=(1.0, 1.0), alphas=(0.1, 0.1)), "lrs"),
    (dict(), "lrs"),
])
def test_bad_step_sizes(kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        gd_steps(4, 4, 4, **kwargs)


@pytest.mark.parametrize("name", ["D", "M", "N"])
def test_bad_sizes(name: str) -> None:
    sizes = {"D": 4, "M": 4, "N": 4, name: 0}
    with pytest.raises(ValueError, match=name):
        gd_steps(sizes["D"], sizes["M"], sizes["N"], alphas=(0.1, 0.1))


def test_bad_target() -> None:
    with pytest.raises(ValueError, match="^target must be one of 'He1'"):
        gd_steps(4, 4, 4, alphas=(0.1, 0.1), target="He7")
    with pytest.raises(ValueError, match="dimension"):
        gd_steps(4, 4, 4, alphas=(0.1, 0.1), target=HermiteTarget([0, 1], direction=np.ones(3)))
    with pytest.raises(ValueError, match="coeffs"):
        gd_steps(4, 4, 4, alphas=(0.1, 0.1), target=HermiteTarget([]))
