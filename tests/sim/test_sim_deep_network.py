"""The deep network engine against independent oracles.

- With the identity activation and the deep linear student's scaling it is the deep linear
  engine (its prefix-product gradients, written another way): losses and weights to 1e-10.
- With one hidden layer it is the two-layer engine (its five-product passes), in each
  parameterisation: weights to 1e-10 (roundoff of another order of the sums).
- Its gradients are autograd's on the same loss (one update recovers them).
- Its first layer's preactivation spectrum (the Gram of ``Z_1``) is the two-layer engine's
  ``"preact"`` (the ``D x D`` identity ``Sigma^(1/2) Gw Sigma^(1/2)``), and the Fig. 4
  measurement (:func:`preactivation_exponents`) reads it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from specdyn.data.teacher import PowerLawTeacher
from specdyn.models.activations import get_activation
from specdyn.settings import PowerLawSetting
from specdyn.sim import (
    DeepLinearEngine,
    DeepNetworkEngine,
    DeepNetworkState,
    LayerScales,
    Outcome,
    RunOptions,
    Streams,
    TwoLayerEngine,
    derive_seed,
    gram,
    layer_scales,
    preactivation_exponents,
    run,
    scaling,
    train_deep_network,
)
from specdyn.sim.parameterization import PARAMETERIZATIONS, get_parameterization

F64: dict[str, Any] = {"dtype": torch.float64, "device": "cpu"}
FL = PowerLawSetting.paper(0.1, 2.0, D=16)


class _Last:
    def snapshot(self, state: Any, step: int) -> None:
        pass

    def finish(self, outcome: Outcome[Any]) -> Outcome[Any]:
        return outcome


@pytest.mark.parametrize("par", ["mup", "ntk", "standard"])
def test_identity_activation_is_the_deep_linear_engine(par: str) -> None:
    # depth-3 linear student (two hidden layers), full batch on M samples: the same weights
    # and data in both engines, 60 updates through the one loop
    T = np.zeros((4, 5))
    T[0, 0], T[1, 1] = 2.0, 1.0
    sc = scaling(par, depth=3, N=8, D=5, P=4, lr=0.05 if par != "standard" else 0.2)
    lin = DeepLinearEngine(sc, torch.as_tensor(T, **F64), "gd", M=20, noise_std=0.1)
    s0 = lin.init(torch.Generator().manual_seed(3))
    assert s0.data is not None
    deep = DeepNetworkEngine(get_activation("linear"), LayerScales(
        sc.init_std, sc.multipliers, (sc.lr_eff,) * 3), 1.0, sc.dims, (s0.data.X, s0.data.Y))
    opts = RunOptions(checkpoints=[0])
    a = run(lin, _Last(), steps=60, options=opts, start=s0)
    b = run(deep, _Last(), steps=60, options=opts, start=DeepNetworkState(s0.weights))
    la = a.history["loss"][:60].numpy()  # the loss of states 0..59
    lb = b.history["batch loss"][:60].numpy()  # the same, from the update after each
    np.testing.assert_allclose(lb, la, rtol=1e-10)
    assert la[-1] < 0.5 * la[0]  # it learned: not a match of two idle runs
    for wa, wb in zip(a.state.weights, b.state.weights, strict=True):
        np.testing.assert_allclose(wb.numpy(), wa.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("par", PARAMETERIZATIONS)
def test_one_hidden_layer_is_the_two_layer_engine(par: str) -> None:
    g = torch.Generator().manual_seed(1)
    N, D, P, M = 12, 5, 3, 17
    W, A = torch.randn(N, D, generator=g, **F64), torch.randn(N, P, generator=g, **F64)
    X, Y = torch.randn(M, D, generator=g, **F64), torch.randn(M, P, generator=g, **F64)
    p = get_parameterization(par, N, 1.7)
    act = get_activation("tanh")
    two = TwoLayerEngine(act, p, 0.3, M, **F64)
    deep = DeepNetworkEngine(act, layer_scales(p, depth=1, N=N, sigma_w=1.0, sigma_a=1.0),
                             0.3, (D, N, P), (X, Y))
    s2, sd = two.state_of(W, A), DeepNetworkState((W, A.T.contiguous()))
    for _ in range(20):
        s2, sd = two.step(s2, (X, Y)), deep.step(sd, (X, Y))
        np.testing.assert_allclose(float(sd.loss_before), float(s2.loss_before), rtol=1e-10)
    # another order of the same sums: roundoff (2e-12 seen after 20 steps), far below 1e-10
    np.testing.assert_allclose(sd.weights[0].numpy(), s2.W.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(sd.weights[1].numpy(), s2.A.T.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("act", ["tanh", "relu", "gelu", "quadratic"])
def test_the_update_is_minus_dt_lr_times_autograd_s_gradient(act: str) -> None:
    g = torch.Generator().manual_seed(2)
    dims = (4, 6, 5, 6, 3)
    sc = LayerScales((1.0,) * 4, (1.0, 0.4, 0.5, 0.3), (1.0, 2.0, 3.0, 0.5))
    X, Y = torch.randn(11, 4, generator=g, **F64), torch.randn(11, 3, generator=g, **F64)
    eng = DeepNetworkEngine(get_activation(act), sc, 0.1, dims, (X, Y))
    s0 = eng.init(g)
    ws = [w.clone().requires_grad_(True) for w in s0.weights]
    _, f = eng.forward(tuple(ws), X)
    loss = 0.5 * ((f - Y) ** 2).sum() / X.shape[0]
    grads = torch.autograd.grad(loss, ws)
    s1 = eng.step(s0, (X, Y))
    assert float(s1.loss_before) == pytest.approx(float(loss.detach()), rel=1e-14)
    for w0, w1, gr, lr in zip(s0.weights, s1.weights, grads, sc.lrs, strict=True):
        np.testing.assert_allclose(((w0 - w1) / (0.1 * lr)).numpy(), gr.numpy(), rtol=1e-9,
                                   atol=1e-12)


def test_depth_one_preactivation_spectrum_is_the_two_layer_route() -> None:
    # the Gram of Z_1 = X W_1^T (the deep network's recorder) against the D x D identity
    # Sigma^(1/2) Gw Sigma^(1/2) of the two-layer and linear engines (sim.gram.spectrum), on
    # the run's own data and first weights (rebuilt from the seed's streams)
    N, M = 24, 40
    traj = train_deep_network(FL, "relu", depth=1, N=N, M=M, steps=1, checkpoints=[0],
                              seed=5, device="cpu")
    X, _ = PowerLawTeacher(FL).sample_torch(M, seed=derive_seed(5, 0), dtype=torch.float64,
                                            device="cpu")
    sc = layer_scales(get_parameterization("mean-field", N, FL.gamma0), depth=1, N=N,
                      sigma_w=FL.sigma_w, sigma_a=FL.sigma_a)
    eng = DeepNetworkEngine(get_activation("relu"), sc, 1.0, (16, N, 16), (X, X))
    W1 = eng.init(Streams.derive(eng, 5).init).weights[0].numpy()
    x = X.numpy()
    want = gram.spectrum(gram.Stats.build(x.T @ x / M, x.T @ x / M, x.T @ x / M),
                         W1.T @ W1 / N)
    got = traj.series["preact1"][0]
    np.testing.assert_allclose(got[:16], want, rtol=1e-9)  # rank D = 16 < min(M, N)
    assert np.all(got[16:] <= 1e-12 * got[0])


def test_the_fig4_measurement_reads_each_layer_over_training() -> None:
    # feature learning at depth 2: every layer at every checkpoint, and the first layer's
    # fitted exponent is fit_power_law's on its spectrum (the documented call)
    from specdyn.measure import fit_power_law

    traj = train_deep_network(FL, "tanh", depth=2, N=64, M=128, steps=200, checkpoints=4,
                              device="cpu")
    table = preactivation_exponents(traj, kmin=2, kmax=10)
    assert set(table.layer) == {1, 2} and len(table) == 2 * len(traj.steps)
    assert list(table.columns) == ["step", "t", "layer", "exponent", "ci_low", "ci_high"]
    last = table[(table.layer == 1) & (table.step == traj.steps[-1])].iloc[0]
    fit = fit_power_law(traj.series["preact1"][-1][:10], kmin=2, kmax=10)
    assert last.exponent == fit.exponent
    # the first layer's spectrum starts at the input's exponent alpha = 1 (the fit over
    # ranks 2..10 of a finite draw reads it within 0.25) and steepens as the top modes learn
    first = table[table.layer == 1].sort_values("step").exponent.to_numpy()
    assert abs(first[0] - 1.0) < 0.25 and first[-1] > first[0]
    with pytest.raises(ValueError, match="^kmax must be > kmin"):
        preactivation_exponents(traj, kmin=5, kmax=5)
