"""The hand-written two-layer engine against independent oracles.

Oracles: the exact linear engines of :mod:`specdyn.sim.linear` (Gram-space and
weight-space GD), torch autograd on an independently written forward pass,
explicit ``M x M`` / ``N x N`` eigen-decompositions for the spectra, and exact
reparameterisation identities between the parameterisations.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch

from specdyn.data.teacher import PowerLawTeacher
from specdyn.models.activations import ACTIVATIONS, Activation, get_activation
from specdyn.settings import PowerLawSetting
from specdyn.sim import TwoLayerEngine, init_weights, seed_streams, train_two_layer
from specdyn.sim.gram import weight_generator
from specdyn.sim.linear import train_linear
from specdyn.sim.parameterization import PARAMETERIZATIONS, get_parameterization
from specdyn.sim.two_layer import postact_spectrum

FL = PowerLawSetting.paper(0.1, 2.0, D=12)  # feature-learning setting of Figs. 2 and 4


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / np.abs(b).max())


# ----------------------------------------------------------------- linear reduction


@pytest.mark.parametrize("engine", ["gram", "weights"])
@pytest.mark.parametrize(("M", "rotation"), [(40, None), (9, None), (40, "random")])
def test_linear_activation_equals_train_linear(engine: str, M: int, rotation: str | None) -> None:
    # same seed => same data and initial weights; linear phi + mean-field = the paper's net.
    # Tolerance 1e-9: both are float64 GD on the same numbers; the Gram engine differs
    # only by roundoff in a different order of products (measured ~1e-13).
    teacher = PowerLawTeacher(FL, rotation=rotation, seed=3)
    ck = [0, 1, 7, 60, 150]
    ref = train_linear(FL, 48, M, 150, dt=1.0, engine=engine, checkpoints=ck, seed=5,
                       teacher=teacher, progress=False, device="cpu")
    got = train_two_layer(FL, "linear", N=48, M=M, steps=150, checkpoints=ck, seed=5,
                          teacher=teacher, progress=False, device="cpu", dtype=torch.float64,
                          record=("preact",))
    assert np.array_equal(got.steps, ref.steps)
    assert _rel(got.series["preact"], ref.series["preact"]) < 1e-9
    assert _rel(got.loss, ref.loss) < 1e-9
    for name in ("xi", "eta", "zeta"):
        assert _rel(got.diagonals[name], ref.diagonals[name]) < 1e-9, name
    # the run learned something: the comparison is not between two frozen networks
    assert ref.loss[-1] < 0.5 * ref.loss[0]


# ----------------------------------------------------------------- gradients vs autograd


def _autograd_grads(act: Activation, s: float, W: torch.Tensor, A: torch.Tensor,
                    X: torch.Tensor, Y: torch.Tensor) -> tuple[torch.Tensor, ...]:
    Wp = W.clone().requires_grad_(True)
    Ap = A.clone().requires_grad_(True)
    f = s * (act.fn(X @ Wp.T) @ Ap)
    loss = 0.5 * ((f - Y) ** 2).sum() / X.shape[0]
    gW, gA = torch.autograd.grad(loss, (Wp, Ap))
    return loss.detach(), gW, gA


_SOFTPLUS = Activation("softplus", torch.nn.functional.softplus, torch.sigmoid)


@pytest.mark.parametrize("par_name", PARAMETERIZATIONS)
@pytest.mark.parametrize("act_name", [*ACTIVATIONS, "custom-softplus"])
def test_gradients_match_autograd(act_name: str, par_name: str) -> None:
    # 1e-10 relative in float64: the two differ only by summation order.
    act = _SOFTPLUS if act_name == "custom-softplus" else get_activation(act_name)
    setting = FL
    N, D, B = 24, setting.D, 17
    par = get_parameterization(par_name, N, setting.gamma0)
    g = torch.Generator().manual_seed(11)
    W = torch.randn(N, D, generator=g, dtype=torch.float64) * 0.7
    A = torch.randn(N, D, generator=g, dtype=torch.float64) * par.a_std
    X = torch.randn(B, D, generator=g, dtype=torch.float64)
    Y = torch.randn(B, D, generator=g, dtype=torch.float64)
    eng = TwoLayerEngine(act, par, dt=1.0, B=32)
    state = eng.state_of(W, A)
    # a batch smaller than the buffers: exercises the slicing
    loss, gWt, gAt = eng.gradients(state, X, Y)
    ref_loss, gW, gA = _autograd_grads(act, par.output_scale, W, A, X, Y)
    assert abs(float(loss) - float(ref_loss)) <= 1e-12 * float(ref_loss)
    assert _rel(gWt.T.numpy(), gW.numpy()) < 1e-10
    assert _rel(gAt.T.numpy(), gA.numpy()) < 1e-10
    # the forward pass must not have touched the parameters
    assert torch.equal(state.W, W) and torch.equal(state.A, A)


def test_step_applies_learning_rates() -> None:
    par = get_parameterization("mup", 10, 2.0)
    g = torch.Generator().manual_seed(0)
    W, A = torch.randn(10, 4, generator=g, dtype=torch.float64), torch.randn(
        10, 3, generator=g, dtype=torch.float64)
    X, Y = torch.randn(6, 4, generator=g, dtype=torch.float64), torch.randn(
        6, 3, generator=g, dtype=torch.float64)
    eng = TwoLayerEngine(get_activation("tanh"), par, dt=0.3, B=6)
    _, gW, gA = _autograd_grads(eng.act, par.output_scale, W, A, X, Y)
    state = eng.state_of(W, A)
    new = eng.step(state, (X, Y))
    loss = new.loss_before  # the protocol's convention: the loss of the weights stepped from
    assert state.loss_before is None
    assert _rel(new.W.numpy(), (W - 0.3 * par.lr_w * gW).numpy()) < 1e-13
    assert _rel(new.A.numpy(), (A - 0.3 * par.lr_a * gA).numpy()) < 1e-13
    assert torch.equal(new.At.T, new.A)  # the two stored layouts of A stay identical
    # the state is a value: the step left the old one (and the caller's W, A) as they were
    assert torch.equal(state.W, W) and torch.equal(state.A, A)
    with pytest.raises(dataclasses.FrozenInstanceError):
        new.Wt = W.T  # type: ignore[misc]
    # stepping the old state again gives the same new state, bit for bit
    again = eng.step(state, (X, Y))
    assert torch.equal(again.Wt, new.Wt) and torch.equal(again.Ar, new.Ar)
    assert float(again.loss_before) == float(loss)
    assert float(loss) == pytest.approx(eng.evaluate(state, X, Y, False)[0], rel=1e-12)


def test_bf16_products_approximate_float32() -> None:
    # the bf16 path (CUDA opt-in) exercised on the CPU: 8-bit mantissa => ~1e-2 agreement
    par = get_parameterization("mean-field", 64, FL.gamma0)
    g = torch.Generator().manual_seed(1)
    W = torch.randn(64, 12, generator=g) * 0.3
    A = torch.randn(64, 12, generator=g)
    X, Y = torch.randn(40, 12, generator=g), torch.randn(40, 12, generator=g)
    e32 = TwoLayerEngine(get_activation("relu"), par, 1.0, 40)
    e16 = TwoLayerEngine(get_activation("relu"), par, 1.0, 40, torch.bfloat16)
    s32, s16 = e32.state_of(W, A), e16.state_of(W, A)
    (l32, gW32, gA32), (l16, gW16, gA16) = e32.gradients(s32, X, Y), e16.gradients(s16, X, Y)
    assert abs(float(l16) / float(l32) - 1) < 2e-2
    assert _rel(gW16.float().numpy(), gW32.numpy()) < 5e-2
    assert _rel(gA16.float().numpy(), gA32.numpy()) < 5e-2
    assert e16.step(s16, (X, Y)).Wt.dtype == torch.float32  # master weights stay float32


# ----------------------------------------------------------------- parameterisations


def test_mup_equals_mean_field_exactly() -> None:
    # muP is mean-field with the 1/(gamma0 N) multiplier moved into A: identical trajectory
    kw = dict(N=40, M=30, steps=80, checkpoints=[0, 5, 80], seed=2, progress=False,
              device="cpu", dtype=torch.float64)
    mf = train_two_layer(FL, "tanh", parameterization="mean-field", **kw)
    mu = train_two_layer(FL, "tanh", parameterization="mup", **kw)
    for name in ("preact", "postact", "weights"):
        assert _rel(mu.series[name], mf.series[name]) < 1e-10, name
    assert _rel(mu.loss, mf.loss) < 1e-10
    assert _rel(mu.diagonals["xi"], mf.diagonals["xi"]) < 1e-10
    assert mf.loss[-1] < 0.5 * mf.loss[0]


def test_ntk_is_mean_field_with_rescaled_gamma0_and_time() -> None:
    # ntk(gamma0, dt) == mean-field(gamma0 / sqrt(N), dt / N), step for step
    N = 36
    kw = dict(N=N, M=25, steps=60, checkpoints=[0, 3, 60], seed=4, progress=False,
              device="cpu", dtype=torch.float64, record=("preact", "weights"))
    ntk = train_two_layer(FL, "gelu", parameterization="ntk", dt=2.0, **kw)
    slow = PowerLawSetting(FL.alpha, FL.beta, FL.sigma_w, FL.sigma_a, FL.gamma0 / math.sqrt(N),
                           FL.lambda0, FL.mu0, FL.D)
    mf = train_two_layer(slow, "gelu", parameterization="mean-field", dt=2.0 / N, **kw)
    for name in ("preact", "weights"):
        assert _rel(ntk.series[name], mf.series[name]) < 1e-10, name
    assert _rel(ntk.loss, mf.loss) < 1e-10


@pytest.mark.parametrize("par_name", PARAMETERIZATIONS)
def test_initial_tangent_kernel_matches_mean_field(par_name: str) -> None:
    # every parameterisation has the mean-field readout kernel at init; all but
    # "standard" also its first-layer kernel. The initial functions differ (O(1/sqrt N)
    # for mean-field/mup, O(1) for ntk/standard), so fix the residual r and compare
    # the velocity df/dt = -K r of one tiny step of each layer.
    N, D, M = 400, FL.D, 30
    teacher = PowerLawTeacher(FL)
    X, Y = teacher.sample_torch(M, seed=0, dtype=torch.float64, device="cpu")
    act = get_activation("relu")

    def velocity(name: str, layer: str) -> torch.Tensor:
        par = get_parameterization(name, N, FL.gamma0)
        W, A = init_weights(N, D, D, FL.sigma_w, FL.sigma_a, par,
                            torch.Generator().manual_seed(0), torch.float64, "cpu")
        eng = TwoLayerEngine(act, par, 1.0, M)
        f0 = par.output_scale * act.fn(X @ W.T) @ A
        # residual f0 - (f0 + Y) = -Y for every parameterisation
        _, gWt, gAt = eng.gradients(eng.state_of(W, A), X, f0 + Y)
        h = 1e-7
        if layer == "w":
            W1, A1 = W - h * par.lr_w * gWt.T, A
        else:
            W1, A1 = W, A - h * par.lr_a * gAt.T
        return (par.output_scale * act.fn(X @ W1.T) @ A1 - f0) / h

    for layer in ("a", "w"):
        ref = velocity("mean-field", layer)
        got = velocity(par_name, layer)
        if par_name == "standard" and layer == "w":
            # the first layer's kernel is exactly 1/N of mean-field's (features nearly frozen)
            assert _rel(got.numpy(), ref.numpy() / N) < 1e-5
        else:
            assert _rel(got.numpy(), ref.numpy()) < 1e-5, layer


# ----------------------------------------------------------------- optimisers


def test_sgd_with_full_batch_equals_gd() -> None:
    # B = M: every epoch is one full-batch step in a shuffled row order
    kw = dict(N=30, M=20, steps=40, checkpoints=[0, 10, 40], seed=1, progress=False,
              device="cpu", dtype=torch.float64)
    gd = train_two_layer(FL, "relu", optimizer="gd", **kw)
    sgd = train_two_layer(FL, "relu", optimizer="sgd", B=20, **kw)
    assert _rel(sgd.series["preact"], gd.series["preact"]) < 1e-10
    assert _rel(sgd.loss, gd.loss) < 1e-10


def test_sgd_is_reproducible_and_seed_dependent() -> None:
    kw = dict(N=30, M=24, steps=30, checkpoints=[0, 30], progress=False, device="cpu",
              optimizer="sgd", B=5, record=("weights",))
    a = train_two_layer(FL, "relu", seed=3, **kw)
    b = train_two_layer(FL, "relu", seed=3, **kw)
    c = train_two_layer(FL, "relu", seed=4, **kw)
    assert np.array_equal(a.series["weights"], b.series["weights"])
    assert not np.allclose(a.series["weights"][-1], c.series["weights"][-1])


def test_online_sgd_approaches_population_gradient_descent() -> None:
    # fresh batches of 4096 samples: the stochastic gradient is within ~1/sqrt(4096) of the
    # population gradient, so the linear network follows train_linear(M=None) to a few %.
    setting = PowerLawSetting.paper(0.1, 2.0, D=6)
    ck = [0, 20, 100]
    ref = train_linear(setting, 32, None, 100, engine="gram", checkpoints=ck, seed=0,
                       progress=False, device="cpu")
    on = train_two_layer(setting, "linear", N=32, M=64, steps=100, optimizer="online",
                         B=4096, checkpoints=ck, seed=0, progress=False,
                         device="cpu", record=("preact",))
    top = slice(0, 3)  # the learned modes
    assert np.allclose(on.series["preact"][:, top], ref.series["preact"][:, top], rtol=0.05)
    # population Sigma at t = 0: same data, may differ in the last bit between BLAS paths
    np.testing.assert_allclose(on.series["preact"][0], ref.series["preact"][0], rtol=1e-12)


# ----------------------------------------------------------------- spectra conventions


@pytest.mark.parametrize(("N", "M"), [(20, 35), (35, 20)])
def test_checkpoint_spectra_equal_explicit_decompositions(N: int, M: int) -> None:
    # step 0 uses the initial weights, which init_weights reproduces from the seed
    setting = FL
    D = setting.D
    tr = train_two_layer(setting, "tanh", N=N, M=M, steps=1, checkpoints=[0], seed=9,
                         progress=False, device="cpu", dtype=torch.float64)
    data_seed, weight_seed = seed_streams(9, 2)
    X, _ = PowerLawTeacher(setting).sample(M, data_seed)
    par = get_parameterization("mean-field", N, setting.gamma0)
    W, _A = init_weights(N, D, D, setting.sigma_w, setting.sigma_a, par,
                         weight_generator(weight_seed), torch.float64, "cpu")
    Wn = W.numpy()
    H = X @ Wn.T
    pre = np.sort(np.linalg.eigvalsh(H @ H.T / (M * N)))[::-1]  # M x M, explicit
    r = min(M, N, D)
    assert _rel(tr.series["preact"][0][:r], pre[:r]) < 1e-10
    assert np.all(tr.series["preact"][0][r:] <= 1e-12 * pre[0])
    phi = np.tanh(H)
    big = phi.T @ phi if M <= N else phi @ phi.T  # the *larger* Gram, as an oracle
    post = np.sort(np.linalg.eigvalsh(big / (M * N)))[::-1][: min(M, N)]
    assert tr.series["postact"].shape == (1, min(M, N))
    assert _rel(tr.series["postact"][0], post) < 1e-10
    wts = np.sort(np.linalg.eigvalsh(Wn @ Wn.T / N))[::-1][: min(N, D)]  # N x N
    assert _rel(tr.series["weights"][0][: min(N, D)], wts) < 1e-10


def test_postact_spectrum_uses_smaller_gram() -> None:
    g = torch.Generator().manual_seed(0)
    phi = torch.rand(7, 30, generator=g, dtype=torch.float64)
    a = postact_spectrum(phi, 30)
    b = postact_spectrum(phi.T.contiguous(), 7)  # N and M swapped: same nonzero spectrum
    assert a.shape == (7,) and b.shape == (7,)
    np.testing.assert_allclose(a * 7 * 30, b * 7 * 30, rtol=1e-12)
    assert np.all(np.diff(a) <= 0)


@pytest.mark.parametrize("par_name", PARAMETERIZATIONS)
@pytest.mark.parametrize(("optimizer", "batch_size"), [("gd", None), ("sgd", 8), ("online", 64)])
def test_every_parameterization_and_optimizer_learns(par_name: str, optimizer: str,
                                                     batch_size: int | None) -> None:
    # float32, 100 steps of dt = 1: every combination must reduce the loss and stay finite
    # ("standard" learns slowest: its first layer is nearly frozen)
    tr = train_two_layer(FL, "relu", N=64, M=48, steps=100, parameterization=par_name,
                         optimizer=optimizer, B=batch_size, checkpoints=[0, 50, 100],
                         progress=False, device="cpu", dtype="float32")
    assert tr.loss[-1] < 0.9 * tr.loss[0]
    assert all(np.isfinite(a).all() for a in tr.series.values())
    assert tr.series["postact"].shape == (3, 48) and tr.series["preact"].shape == (3, FL.D)
    assert tr.meta["parameterization"]["name"] == par_name


@pytest.mark.parametrize("name", ["relu", "tanh", "gelu", "erf"])
def test_numpy_activation_is_the_torch_one_in_float64(name: str) -> None:
    """The numpy form the quadratures use (``specdyn.models.numpy_activation``) is the
    registered torch activation and its derivative, float64 in and out; the derivative
    agrees with a central difference away from kinks."""
    from specdyn.models import get_activation, numpy_activation

    z = np.linspace(-3.0, 3.0, 61) + 0.013
    sigma, dsigma = numpy_activation(name)
    act = get_activation(name)
    tz = torch.from_numpy(z)
    assert sigma(z).dtype == np.float64 and dsigma(z).dtype == np.float64
    np.testing.assert_array_equal(sigma(z), act.fn(tz).numpy())
    np.testing.assert_array_equal(dsigma(z), act.deriv(tz).numpy())
    h = 1e-6
    np.testing.assert_allclose(dsigma(z), (sigma(z + h) - sigma(z - h)) / (2 * h), atol=1e-6)
