"""The public engines of the single-layer, deep-linear and two-step runs, used on their own.

Each engine driven by a hand-written loop gives its entry point's record bit for
bit (the entry points are thin over them), and each obeys an invariant known in
closed form: plain GD on ``(1/2)||W - W*||^2`` contracts the error by ``1 - lr``
a step; a zero step size leaves the weights unchanged.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from specdyn.data import HermiteTarget
from specdyn.models.activations import get_activation
from specdyn.sim import (
    DeepLinearEngine,
    DeepLinearState,
    LinearStudentEngine,
    LinearStudentState,
    Sampling,
    TwoStepEngine,
    TwoStepState,
    gd_steps,
    rank_one_teacher,
    scaling,
    seed_streams,
    train_deep_linear,
    train_linear_student,
)
from specdyn.sim.protocol import first_divergent

torch = pytest.importorskip("torch")
F64 = {"dtype": torch.float64, "device": "cpu"}


@pytest.mark.parametrize("method", ["population", "gd", "sgd", "online"])
def test_linear_student_engine_by_hand_is_the_entry_point(method: str) -> None:
    W_star, _, _ = rank_one_teacher(5, 8, 2.0, seed=1)
    kw = dict(sampling=Sampling(method, M=20, B=4, noise_std=0.1), lr=0.2, steps=12,
              replicas=3, seed=4, device="cpu")
    run = train_linear_student(W_star, **kw, checkpoints=[12], top_k=None)
    gen = torch.Generator().manual_seed(seed_streams(4, 1)[0])  # the run's one stream
    eng = LinearStudentEngine(torch.as_tensor(W_star, **F64), method, 0.2, M=20, B=4,
                              noise_std=0.1, replicas=3, sigma0=1.0)
    state = eng.init(gen)
    errs = [state.sq_error]
    for _ in range(12):
        new = eng.step(state, eng.sample(state, gen))
        assert isinstance(new, LinearStudentState) and new is not state
        assert new.data is state.data  # the data set rides along, unchanged
        state = new
        errs.append(state.sq_error)
    np.testing.assert_array_equal(torch.stack(errs).numpy(), run.sq_error)
    sv = np.linalg.svd(state.W[0].numpy(), compute_uv=False)
    np.testing.assert_allclose(run.singular_values[-1], sv, rtol=1e-10)


def test_linear_student_population_gd_contracts_the_error_by_one_minus_lr() -> None:
    W_star, _, _ = rank_one_teacher(4, 6, 1.5, seed=2)
    eng = LinearStudentEngine(torch.as_tensor(W_star, **F64), "population", 0.3, replicas=2,
                              sigma0=0.7)
    gen = torch.Generator().manual_seed(0)
    state = eng.init(gen)
    e0 = state.sq_error.numpy()
    assert eng.sample(state, gen) is None  # the population gradient needs no batch
    assert state.data is None  # nor a data set
    for t in range(1, 6):
        state = eng.step(state)
        np.testing.assert_allclose(state.sq_error.numpy(), 0.7 ** (2 * t) * e0, rtol=1e-12)


@pytest.mark.parametrize("method", ["population", "gd", "sgd", "online"])
def test_deep_linear_engine_by_hand_is_the_entry_point(method: str) -> None:
    T = np.zeros((3, 4))
    T[0, 0] = 2.0
    kw = dict(depth=3, N=6, parameterization="mup", lr=0.05, seed=2)
    run = train_deep_linear(T, **kw, steps=10, sampling=Sampling(method, M=15, B=5,
                                                                 noise_std=0.1), device="cpu")
    # the run's streams: the init's (0, which recording continues) and the batches' (1)
    init_gen, batch_gen = (torch.Generator().manual_seed(s) for s in seed_streams(2, 2))
    sc = scaling("mup", depth=3, N=6, D=4, P=3, lr=0.05)
    eng = DeepLinearEngine(sc, torch.as_tensor(T, **F64), method, M=15, B=5, noise_std=0.1)
    state = eng.init(init_gen)
    losses = [state.loss]
    for _ in range(10):
        before = [w.clone() for w in state.weights]
        new = eng.step(state, eng.sample(state, batch_gen))
        assert isinstance(new, DeepLinearState)
        assert all(torch.equal(a, b) for a, b in zip(state.weights, before, strict=True))
        state = new
        losses.append(state.loss)
    np.testing.assert_array_equal(torch.stack(losses).numpy(), run.loss)
    for got, want in zip(state.weights, run.weights, strict=True):
        np.testing.assert_array_equal(got.numpy(), want)
    # the state's prefix products are those of its weights
    prod = state.weights[2] @ state.weights[1] @ state.weights[0]
    np.testing.assert_allclose(state.prefixes[-1].numpy(), prod.numpy(), rtol=1e-12)


def test_deep_linear_engine_depth_one_contracts_the_loss() -> None:
    T = np.array([[1.0, -2.0, 0.5]])
    sc = scaling("standard", depth=1, N=1, D=3, P=1, lr=0.25)
    eng = DeepLinearEngine(sc, torch.as_tensor(T, **F64), "population")
    state = eng.init(torch.Generator().manual_seed(1))
    l0 = float(state.loss)
    for t in range(1, 6):
        state = eng.step(state)
        assert float(state.loss) == pytest.approx(0.75 ** (2 * t) * l0, rel=1e-12)


@pytest.mark.parametrize("reuse", [False, True])
def test_two_step_engine_by_hand_is_gd_steps(reuse: bool) -> None:
    # oracles: gd_steps itself, and the documented draw order (W0, a, X1, then X2 if
    # fresh) written out by hand. A loop over the engine's init / sample / step with one
    # numpy generator gives gd_steps' weights, data vectors and losses to the last bit
    D, M, N, seed = 6, 9, 5, 3
    res = gd_steps(D, M, N, alphas=(0.2, 0.3), reuse_batch=reuse, seed=seed, device="cpu")
    data_seed, target_seed = seed_streams(seed, 2)
    tgt = HermiteTarget.named("He1", D=D, seed=target_seed)
    rng = np.random.default_rng(data_seed)
    W0, a = rng.standard_normal((N, D)) / math.sqrt(D), rng.standard_normal(N) / math.sqrt(N)
    X1 = rng.standard_normal((M, D))
    X2 = X1 if reuse else rng.standard_normal((M, D))
    eng = TwoStepEngine(get_activation("tanh-shift"), res.lrs, N=N, D=D, M=M, target=tgt,
                        device="cpu")
    gen = np.random.default_rng(data_seed)  # the caller's generator, through the engine
    state = eng.init(gen)
    np.testing.assert_array_equal(state.W.numpy(), W0)
    np.testing.assert_array_equal(state.a.numpy(), a)
    np.testing.assert_array_equal(res.W0, W0)
    first = eng.sample(state, gen)
    batches = [first, first if reuse else eng.sample(state, gen)]
    for (X, y), want in zip(batches, (X1, X2), strict=True):
        np.testing.assert_array_equal(X.numpy(), want)
        np.testing.assert_array_equal(y.numpy(), np.asarray(tgt(want)))
    losses = [eng.loss(state, *batches[0])]
    for k, batch in enumerate(batches, start=1):
        state = eng.step(state, batch)
        assert isinstance(state, TwoStepState) and state.updates == k
        assert state.g is not None and state.loss_before is not None
        np.testing.assert_array_equal(state.g.numpy(), res.g[k - 1])
        np.testing.assert_array_equal(state.W.numpy(), res.W1 if k == 1 else res.W2)
        losses.append(eng.loss(state, *batches[0]))
        if k == 1:  # the loss of W0 on batch 1, which the first update gives for free
            assert float(state.loss_before) == losses[0]
    np.testing.assert_array_equal(state.a.numpy(), res.a)
    np.testing.assert_array_equal(np.array(losses), res.loss)
    assert not np.array_equal(res.W2, res.W1)  # two real steps (not a vacuous match)


def test_two_step_engine_uses_the_step_size_of_each_update() -> None:
    g = np.random.default_rng(0)
    eng = TwoStepEngine(get_activation("tanh"), (0.0, 1.0), N=4, D=3, M=7,
                        target=HermiteTarget.named("He1", D=3, seed=0), **F64)
    s0 = eng.init(g)
    batch = eng.sample(s0, g)
    one = eng.step(s0, batch)
    assert torch.equal(one.W, s0.W)  # lr1 = 0: the first update moves nothing
    assert not torch.equal(eng.step(one, batch).W, s0.W)


def test_first_divergent_without_a_limit_finds_the_first_non_finite_entry() -> None:
    assert first_divergent(np.array([1e300, np.inf, np.nan])) == 1
    assert first_divergent(np.array([1e308, -1e308])) is None
    assert first_divergent(torch.tensor([1.0, float("-inf")], dtype=torch.float32)) == 1
    assert first_divergent(np.array([1.0, 20.0]), 10.0) == 1
