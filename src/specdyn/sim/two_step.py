"""Two full-batch gradient steps on the first layer of a wide two-layer network.

Setting (linear-width regime, ``related-notes.md`` section 2; Ba et al. 2022,
Moniri et al. 2023, who write ``d`` for our ``D``, ``n`` for ``M`` and ``eta``
for ``lr``)::

    f(x) = N^(-1/2) a^T sigma(W x),    W: N x D,   a: N (fixed, not trained),
    a_i ~ N(0, 1/N),   rows of W0 ~ N(0, I_D / D),   x ~ N(0, I_D),
    y = sigma*(beta . x)  (a single-index :class:`~specdyn.data.HermiteTarget`).

Each step uses a batch ``X`` (``M x D``) with labels ``y`` and residual
``r = y - f(X)`` and updates

    W <- W + lr * G,    G = (1/M) diag(a) [sigma'(W X^T) o 1 r^T] X,

i.e. ``G = -sqrt(N) dL/dW`` for ``L = (1/2M) ||y - f(X)||^2``: the step size
``lr`` multiplies ``sqrt(N)`` times the negative gradient. The step sizes are
``lr_k = N^alpha_k`` with ``alpha_k in [0, 1/2)``. The second step uses a
fresh batch (independent of the first) or reuses the first batch.

At this scaling the first step adds to ``W0`` a rank-one spike
``lr1 mu1 a g1^T`` (``mu1 = E sigma'(z)``, ``g1 = X1^T r0 / M``) plus terms of
operator norm ``O(N^(alpha1 - 1/2))``; see :func:`one_step_spike_strength`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from specdyn import _torch
from specdyn import _validate as v
from specdyn.data.hermite import HermiteTarget, gaussian_expectation, random_direction
from specdyn.models.activations import Activation, get_activation
from specdyn.sim.protocol import (
    Record,
    RunOptions,
    divergence_error,
    drive,
    first_divergent,
    record_meta,
    seed_streams,
)

__all__ = ["TwoStepData", "TwoStepEngine", "TwoStepGradient", "TwoStepResult", "TwoStepState",
           "activation_mu1", "draw_data", "gd_steps", "gd_steps_row", "one_step_spike_strength"]


@dataclass(frozen=True)
class TwoStepResult(Record):
    """Weights after zero, one and two GD steps, and what produced them (numpy, float64).

    Attributes
    ----------
    W0, W1, W2
        ``(N, D)`` first-layer weights at initialisation, after step 1, after step 2.
    a
        ``(N,)`` fixed second-layer weights (``a_i ~ N(0, 1/N)``).
    beta
        ``(D,)`` unit target direction.
    lrs, alphas
        Step sizes ``(lr1, lr2)`` and exponents ``alpha_k = log lr_k / log N``.
    reuse_batch
        Whether step 2 reused the batch of step 1.
    g
        ``(2, D)``: ``g_k = X_k^T r_{k-1} / M``, the data vector of step ``k``
        (its rank-one part is ``lr_k mu1 a g_k^T``).
    loss
        ``(3,)`` training loss ``(1/2M) ||y - f(X)||^2`` on the batch of step 1
        at ``W0, W1, W2`` (NaN where a run with ``losses=False`` skipped it).
    meta
        The fixed keys of :func:`~specdyn.sim.protocol.record_meta`, then sizes,
        activation, target.
    """

    W0: np.ndarray
    W1: np.ndarray
    W2: np.ndarray
    a: np.ndarray
    beta: np.ndarray
    lrs: tuple[float, float]
    alphas: tuple[float, float]
    reuse_batch: bool
    g: np.ndarray
    loss: np.ndarray

    @property
    def weights(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(W0, W1, W2)``."""
        return self.W0, self.W1, self.W2


Tensor = Any


@dataclass(frozen=True)
class TwoStepState:
    """The state of a two-step run, a value (never updated in place).

    Attributes
    ----------
    W
        ``(N, D)`` first-layer weights.
    a
        ``(N,)`` fixed second-layer weights: drawn by :meth:`TwoStepEngine.init` with
        ``W0``, carried unchanged from state to state (the engine keeps no run data).
    updates
        Updates made so far (0, 1 or 2): the next one uses ``lrs[updates]``.
    g
        ``(D,)`` ``X^T r / M`` of the last update (``None`` before the first).
    loss_before
        0-d: the loss ``(1/2M) ||y - f(X)||^2`` of the weights the last update was
        made from, on its batch (the protocol's convention; the update's forward pass
        gives it for free; ``None`` before the first).
    """

    W: Tensor
    a: Tensor
    updates: int = 0
    g: Tensor | None = None
    loss_before: Tensor | None = None


@dataclass(frozen=True)
class TwoStepGradient:
    """What an update at a state on a batch adds, before its step size: a value.

    Attributes
    ----------
    G
        ``(N, D)``: ``(1/M) diag(a) [sigma'(W X^T) o 1 r^T] X`` (the update is ``lr G``).
    g
        ``(D,)``: ``X^T r / M``.
    loss_before
        0-d: ``(1/2M) ||y - f(X)||^2`` at the state, on the batch.
    """

    G: Tensor
    g: Tensor
    loss_before: Tensor


class TwoStepEngine:
    """First-layer GD of ``f(x) = N^(-1/2) a^T sigma(W x)`` with ``a`` fixed: the protocol's pair.

    :meth:`init` (generator) draws the initial weights ``W0`` and then the second layer
    ``a`` and gives the first :class:`TwoStepState` (which carries ``a``);
    :meth:`sample` (state, generator) draws a batch ``(X, y)`` of ``M`` samples of the
    target; :meth:`step` (state, batch) makes update ``updates + 1`` on the batch with
    step size ``lrs[updates]`` (module docstring) and returns a new state; :meth:`loss`
    is the training loss of a state on a batch.

    The generator is numpy's (``numpy.random.default_rng``, the caller's: the engine
    holds none); the draws are made on the host in float64 (the run is the same on
    every device) and moved to the engine's dtype and device. One generator through
    ``init``, ``sample`` (and ``sample`` again for a fresh second batch) draws ``W0``,
    ``a``, ``X1``, ``X2`` in the order of :func:`draw_data`, so a hand-written loop
    gives :func:`gd_steps`' numbers bit for bit (``tests/sim/test_sim_engines.py``).

    Parameters
    ----------
    act
        The activation ``sigma``.
    lrs
        Step sizes of the updates, in order.
    N, D, M
        Width, input dimension and batch size (the sizes :meth:`init` and :meth:`sample`
        draw; :func:`gd_steps` validates them).
    target
        The :class:`~specdyn.data.HermiteTarget` (with its direction) that labels a batch.
    dtype, device
        Torch dtype (default float64) and device (default CUDA when present) of the run.
    """

    #: Its row of :data:`~specdyn.sim.protocol.ENGINE_DEFAULTS`: the check interval and
    #: divergence factor the driver uses for it.
    defaults: ClassVar[str] = "two_step"

    def __init__(self, act: Activation, lrs: tuple[float, ...], *, N: int, D: int, M: int,
                 target: HermiteTarget, dtype: Any = None, device: Any = None) -> None:
        self.act, self.lrs = act, tuple(lrs)
        self.N, self.D, self.M, self.target = N, D, M, target
        self.dtype, self.device = _torch.resolve_dtype(dtype), _torch.resolve_device(device)
        self.inv_sqrt_width = 1.0 / math.sqrt(N)

    def init(self, generator: np.random.Generator) -> TwoStepState:
        """The state of ``W0`` and then ``a`` drawn from the numpy ``generator``."""
        W0, a = _draw_weights(self.N, self.D, generator)
        return TwoStepState(self._put(W0), self._put(a))

    def sample(self, state: TwoStepState, generator: np.random.Generator
               ) -> tuple[Tensor, Tensor]:
        """A batch ``(X, y)`` (``M x D``, ``M``) drawn from the numpy ``generator``
        (whatever the state: the batches are i.i.d.)."""
        X, y = _draw_batch(self.M, self.D, self.target, generator)
        return self._put(X), self._put(y)

    def _put(self, arr: np.ndarray) -> Tensor:
        return _on_run(arr, self.dtype, self.device)

    def forward(self, state: TwoStepState, X: Tensor) -> tuple[Tensor, Tensor]:
        """``(W X^T, f(X))`` at ``state``: the ``(N, M)`` preactivations and the ``(M,)``
        outputs."""
        pre = state.W @ X.T
        return pre, self.inv_sqrt_width * (state.a @ self.act.fn(pre))

    def loss(self, state: TwoStepState, X: Tensor, y: Tensor) -> float:
        """``(1/2M) ||y - f(X)||^2`` at ``state`` (one host sync)."""
        _, f = self.forward(state, X)
        return float(0.5 * _torch.torch().mean((y - f) ** 2))

    def step(self, state: TwoStepState, batch: tuple[Tensor, Tensor]) -> TwoStepState:
        """Update ``state.updates + 1`` on ``batch = (X, y)``."""
        return self.apply(state, self.gradient(state, batch))

    def gradient(self, state: TwoStepState, batch: tuple[Tensor, Tensor]) -> TwoStepGradient:
        """The update direction at ``state`` on ``batch = (X, y)``, whatever the step size.

        :meth:`step` is ``apply(state, gradient(state, batch))``; a caller that makes
        the same update from one state with several step sizes (a grid row over
        ``alpha2``) computes this once.
        """
        X, y = batch
        M = X.shape[0]
        pre, f = self.forward(state, X)
        r = y - f
        # G = (1/M) diag(a) [sigma'(W X^T) o 1 r^T] X
        G = (state.a[:, None] * self.act.deriv(pre) * r[None, :]) @ X / M
        # the loss before the update, as loss() computes it (same bits, no host sync)
        return TwoStepGradient(G, X.T @ r / M, 0.5 * _torch.torch().mean(r ** 2))

    def apply(self, state: TwoStepState, grad: TwoStepGradient) -> TwoStepState:
        """Update ``state.updates + 1`` along ``grad`` (:meth:`gradient` at ``state``),
        with step size ``lrs[state.updates]``."""
        return TwoStepState(state.W + self.lrs[state.updates] * grad.G, state.a,
                            state.updates + 1, grad.g, grad.loss_before)


def _draw_weights(N: int, D: int, generator: np.random.Generator
                  ) -> tuple[np.ndarray, np.ndarray]:
    """``W0`` (rows ``N(0, I_D / D)``) and then ``a`` (``N(0, 1/N)``), host float64: the
    one draw of the weights (:meth:`TwoStepEngine.init`, :func:`draw_data`)."""
    W0 = generator.standard_normal((N, D)) / math.sqrt(D)
    return W0, generator.standard_normal(N) / math.sqrt(N)


def _draw_batch(M: int, D: int, target: HermiteTarget, generator: np.random.Generator
                ) -> tuple[np.ndarray, np.ndarray]:
    """``X`` (``M x D``, standard Gaussian) and its labels ``target(X)``, host float64: the
    one draw of a batch (:meth:`TwoStepEngine.sample`, :func:`draw_data`)."""
    X = generator.standard_normal((M, D))
    return X, np.asarray(target(X))


def _on_run(arr: np.ndarray, dtype: Any, device: Any) -> Tensor:
    """A host draw moved to the run's (resolved) dtype and device."""
    return _torch.torch().from_numpy(arr).to(device=device, dtype=dtype)


@v.constrained(n_quad=v.SIZE)
def activation_mu1(activation: str | Activation, n_quad: int = 200) -> float:
    """``mu1 = E[sigma'(z)]`` for ``z ~ N(0, 1)`` (Gauss-Hermite quadrature).

    By Stein's lemma this is also ``E[z sigma(z)]``, the first Hermite
    coefficient of ``sigma``.
    """
    act = get_activation(activation)
    torch = _torch.torch()

    def dsig(z: np.ndarray) -> np.ndarray:
        return _torch.to_numpy(act.deriv(torch.from_numpy(z)))

    return gaussian_expectation(dsig, n_quad)


def one_step_spike_strength(result: TwoStepResult, activation: str | Activation | None = None
                            ) -> float:
    """``theta1 = lr1 |mu1| ||a|| ||g1||`` of the rank-one part of the first step.

    With ``W0 = G0 / sqrt(D)`` (``G0`` standard Gaussian, ``N x D``) the step-1
    weights are ``W1 ~ G0/sqrt(D) + theta1 u v^T`` with ``u = a/||a||`` and
    ``v = g1/||g1||``: Benaych-Georges & Nadakuditi's rectangular model with
    ``n = N`` rows, ``m = D`` columns and ``c = N/D`` (see
    :func:`specdyn.theory.rmt.rectangular_spike`). Left overlaps are with ``a``,
    right overlaps with ``g1``.
    """
    act = result.meta["activation"] if activation is None else activation
    mu1 = activation_mu1(act)
    return float(result.lrs[0] * abs(mu1) * np.linalg.norm(result.a)
                 * np.linalg.norm(result.g[0]))


@dataclass(frozen=True)
class TwoStepData:
    """What a two-step run draws from its seed, whatever its step sizes: reusable across cells.

    ``W0_np``, ``a_np`` (host float64, as drawn), the target ``tgt`` and its unit
    direction ``beta``, and the run's tensors on its device and dtype: ``W0``,
    ``a``, the batches ``(X1, y1)``, ``(X2, y2)`` (the same tensors when the batch
    is reused). Made by :func:`draw_data`; :func:`gd_steps` with ``data=`` uses it
    instead of drawing (a grid over step sizes draws once per seed, and moves the
    data to the device once).
    """

    D: int
    M: int
    N: int
    seed: int
    reuse_batch: bool
    tgt: HermiteTarget
    beta: np.ndarray
    W0_np: np.ndarray
    a_np: np.ndarray
    W0: Tensor
    a: Tensor
    X1: Tensor
    y1: Tensor
    X2: Tensor
    y2: Tensor
    dtype: Any
    device: Any


@v.constrained(D=v.SIZE, M=v.SIZE, N=v.SIZE, seed=v.SEED)
def draw_data(D: int, M: int, N: int, *, target: HermiteTarget | str = "He1",
              reuse_batch: bool = False, seed: int = 0, dtype: Any = None,
              device: Any = None) -> TwoStepData:
    """The initial weights, second layer and batches of :func:`gd_steps` for ``seed``.

    Drawn on the host in float64 (``numpy.random.default_rng``, in the order
    ``W0, a, X1``, then ``X2`` for a fresh batch; the target direction from the
    second seed stream), so a run is the same on every device; then moved once to
    ``device`` in ``dtype`` (defaults as :func:`gd_steps`).
    """
    data_seed, target_seed = seed_streams(seed, 2)
    tgt = _resolve_target(target, D, target_seed)
    dev = _torch.resolve_device(device)
    dt = _torch.resolve_dtype(dtype)
    rng = np.random.default_rng(data_seed)
    # the draws of TwoStepEngine.init and .sample, in their order, keeping the host copies
    W0_np, a_np = _draw_weights(N, D, rng)
    batch1 = _draw_batch(M, D, tgt, rng)
    batch2 = batch1 if reuse_batch else _draw_batch(M, D, tgt, rng)

    def put(arr: np.ndarray) -> Any:
        return _on_run(arr, dt, dev)

    X1, y1 = put(batch1[0]), put(batch1[1])
    X2, y2 = (X1, y1) if reuse_batch else (put(batch2[0]), put(batch2[1]))
    return TwoStepData(D=D, M=M, N=N, seed=seed, reuse_batch=bool(reuse_batch), tgt=tgt,
                       beta=np.asarray(tgt.direction), W0_np=W0_np, a_np=a_np, W0=put(W0_np),
                       a=put(a_np), X1=X1, y1=y1, X2=X2, y2=y2, dtype=dt, device=dev)


def _resolve_steps(N: int, lrs: tuple[float, float] | None,
                   alphas: tuple[float, float] | None) -> tuple[tuple[float, float],
                                                                tuple[float, float]]:
    if (lrs is None) == (alphas is None):
        raise ValueError("give exactly one of lrs=(lr1, lr2) or alphas=(alpha1, alpha2)")
    if alphas is not None:
        if len(alphas) != 2:
            raise ValueError(f"alphas must be a pair (alpha1, alpha2), got {alphas!r}")
        a1 = v.in_range("alpha1", alphas[0], 0.0, 0.5, hi_open=True)
        a2 = v.in_range("alpha2", alphas[1], 0.0, 0.5, hi_open=True)
        return (float(N) ** a1, float(N) ** a2), (a1, a2)
    assert lrs is not None
    if len(lrs) != 2:
        raise ValueError(f"lrs must be a pair (lr1, lr2), got {lrs!r}")
    e1 = v.positive("lr1", lrs[0])
    e2 = v.positive("lr2", lrs[1])
    logn = math.log(N) if N > 1 else 1.0
    return (e1, e2), (math.log(e1) / logn, math.log(e2) / logn)


def _resolve_target(target: HermiteTarget | str, D: int, seed: int) -> HermiteTarget:
    if isinstance(target, str):
        return HermiteTarget.named(target, D=D, seed=seed)
    if not isinstance(target, HermiteTarget):
        raise ValueError(f"target must be a HermiteTarget or a name, got {type(target).__name__}")
    if target.direction is None:
        return target.with_direction(random_direction(D, seed))
    if target.direction.shape[0] != D:
        raise ValueError(f"target direction has dimension {target.direction.shape[0]}, "
                         f"but D = {D}")
    return target


@v.constrained(D=v.SIZE, M=v.SIZE, N=v.SIZE, seed=v.SEED, losses=v.Bool())
def gd_steps(D: int, M: int, N: int, lrs: tuple[float, float] | None = None,
             alphas: tuple[float, float] | None = None, *,
             activation: str | Activation = "tanh-shift",
             target: HermiteTarget | str = "He1", reuse_batch: bool = False, seed: int = 0,
             dtype: Any = None, device: Any = None, data: TwoStepData | None = None,
             losses: bool = True) -> TwoStepResult:
    """Two GD steps on the first layer of ``f(x) = N^(-1/2) a^T sigma(W x)``.

    See the module docstring for the model, the update and the scalings.

    Parameters
    ----------
    D, M, N
        Input dimension, batch size (samples per step), width (each >= 1).
    lrs, alphas
        Exactly one: the step sizes ``(lr1, lr2)`` (> 0), or exponents
        ``(alpha1, alpha2)`` in ``[0, 1/2)`` giving ``lr_k = N^alpha_k``.
    activation
        A name from :data:`specdyn.models.activations.ACTIVATIONS` or an
        :class:`Activation`; the default ``"tanh-shift"`` (``tanh(z + 1/2)``)
        has every Hermite coefficient non-zero.
    target
        A :class:`HermiteTarget` or one of its names (``"He1"``, ``"He2"``,
        ``"He3"``, ``"He2+He3"``, ``"tanh"``). A target without a direction
        gets one uniform on the sphere, drawn from ``seed``.
    reuse_batch
        ``False``: step 2 draws a fresh batch; ``True``: it reuses step 1's.
    seed
        Seeds ``numpy.random.default_rng``; ``W0``, ``a`` and the batches are
        drawn on the host in float64, so a run is the same on every device.
    dtype, device
        Torch dtype (default float64) and device (default CUDA when present).
    data
        The draw of :func:`draw_data` for these sizes, ``target``, ``reuse_batch``,
        ``seed``, dtype and device (checked), used instead of drawing again: the
        same numbers, bit for bit, as without it.
    losses
        ``False``: skip the forward passes that only the loss needs (one at ``W2``,
        one at ``W1`` for a fresh batch); those entries of ``loss`` are NaN.

    Returns
    -------
    TwoStepResult
        Host numpy float64 arrays.

    Raises
    ------
    DivergenceError
        If the weights stop being finite (``.step`` is 1 or 2, the message has a
        suggestion; no partial record).
    """
    (lr1, lr2), (al1, al2) = _resolve_steps(N, lrs, alphas)
    return next(_row_runs(D, M, N, (lr1, al1), [(lr2, al2)], activation=activation,
                          target=target, reuse_batch=reuse_batch, seed=seed, dtype=dtype,
                          device=device, data=data, losses=losses))


#: A step-size exponent (the steps are ``N^alpha``), in ``[0, 1/2)``.
_EXPONENT = v.Real(0.0, 0.5, hi_open=True)


@v.constrained(D=v.SIZE, M=v.SIZE, N=v.SIZE, seed=v.SEED, alpha1=_EXPONENT,
               alpha2=v.Tuple(_EXPONENT, min_len=1), losses=v.Bool())
def gd_steps_row(D: int, M: int, N: int, alpha1: float, alpha2: Sequence[float], *,
                 activation: str | Activation = "tanh-shift",
                 target: HermiteTarget | str = "He1", reuse_batch: bool = False,
                 seed: int = 0, dtype: Any = None, device: Any = None,
                 data: TwoStepData | None = None, losses: bool = True
                 ) -> Iterator[TwoStepResult]:
    """``gd_steps(D, M, N, alphas=(alpha1, a2), ...)`` for each ``a2`` in ``alpha2``, in order.

    A row of a grid over ``(alpha1, alpha2)``: ``W1 = W0 + N^alpha1 G1`` and the
    step-2 direction ``G2`` (the gradient at ``W1`` on the second batch) depend on
    ``alpha1`` and the seed only, so they are computed once, by the first result,
    and each cell adds ``W2 = W1 + N^alpha2 G2``: the same operations as
    :func:`gd_steps`, so the same numbers, bit for bit (every result's ``W0``,
    ``W1`` and ``a`` are the same arrays). The arguments are those of
    :func:`gd_steps` (``alpha1``, each ``alpha2`` in ``[0, 1/2)``).

    Returns
    -------
    Iterator[TwoStepResult]
        Lazy: a result is made when asked for, so a caller that keeps one ``W2`` at a
        time holds one. The first result's ``meta["wall_time_s"]`` includes the
        row's shared work (draw, step 1, ``G2``).
    """
    second = [_resolve_steps(N, None, (alpha1, a2)) for a2 in alpha2]
    (lr1, _), (al1, _) = second[0]
    return _row_runs(D, M, N, (lr1, al1), [(lrs[1], als[1]) for lrs, als in second],
                     activation=activation, target=target, reuse_batch=reuse_batch,
                     seed=seed, dtype=dtype, device=device, data=data, losses=losses)


def _row_runs(D: int, M: int, N: int, first: tuple[float, float],
              second: Sequence[tuple[float, float]], *, activation: str | Activation,
              target: HermiteTarget | str, reuse_batch: bool, seed: int, dtype: Any,
              device: Any, data: TwoStepData | None, losses: bool
              ) -> Iterator[TwoStepResult]:
    """The runs of step sizes ``(lr1, lr2)`` for each ``(lr2, alpha2)`` in ``second``
    (``first = (lr1, alpha1)``), sharing step 1 and the step-2 direction; checked
    arguments. A generator, so its work starts at the first ``next``."""
    start = time.perf_counter()
    lr1, al1 = first
    act = get_activation(activation)
    opts = RunOptions(seed=seed, dtype=dtype, device=device).for_engine("two_step")
    if data is None:
        data = draw_data(D, M, N, target=target, reuse_batch=reuse_batch, seed=seed,
                         dtype=dtype, device=device)
    else:
        _check_data(data, D, M, N, target, reuse_batch, seed, dtype, device)
    tgt, beta, W0_np, a_np = data.tgt, data.beta, data.W0_np, data.a_np
    dev, dt = data.device, data.dtype
    X1, y1 = data.X1, data.y1
    batches = ((X1, y1), (data.X2, data.y2))
    # the row's shared work, made by its first cell: the state after step 1, its host
    # copy and loss on batch 1, the step-2 direction at it, and the checks passed
    shared: dict[str, Any] = {}

    def cell(lr2: float, al2: float, cell_start: float) -> TwoStepResult:
        eng = TwoStepEngine(act, (lr1, lr2), N=N, D=D, M=M, target=tgt, dtype=dt,
                            device=dev)
        states: list[TwoStepState] = []
        gs: list[np.ndarray] = []
        Ws: list[np.ndarray] = []

        def step(state: TwoStepState, k: int) -> TwoStepState:
            if k == 1:
                if "s1" not in shared:
                    shared["s1"] = eng.step(state, batches[0])
                return shared["s1"]
            if "G2" not in shared:
                shared["G2"] = eng.gradient(state, batches[1])
            return eng.apply(state, shared["G2"])

        def check(state: TwoStepState, k: int) -> TwoStepState:
            if k < 2 and shared.get(f"checked{k}"):  # W0, W1: the row's, checked once
                return state
            if first_divergent(state.W.reshape(-1)) is not None:  # a non-finite weight
                raise divergence_error(
                    "two-step GD", k, "the weights are not finite",
                    f"lower the step size (now lr = {(lr1, lr2)[k - 1]:.4g}) or use a "
                    "bounded activation")
            shared[f"checked{k}"] = True
            return state

        def observe(state: TwoStepState, k: int) -> None:
            if state.g is not None:
                gs.append(_torch.to_numpy(state.g, np.float64))
            # step 0 is the float64 draw itself, not its device copy; step 1 is the row's
            if k == 1 and "W1" not in shared:
                shared["W1"] = _torch.to_numpy(state.W, np.float64)
            Ws.append(W0_np if k == 0 else shared["W1"] if k == 1
                      else _torch.to_numpy(state.W, np.float64))
            states.append(state)

        drive(TwoStepState(data.W0, data.a), step, 2, np.arange(3), observe=observe, check=check,
              options=opts)
        # the losses on batch 1: the forward passes of the updates give those of W0 (and
        # of W1 when step 2 reuses batch 1); one more pass each for the others (W1's once
        # a row), skipped (NaN) unless asked for
        s1, s2 = states[1], states[2]
        assert s1.loss_before is not None and s2.loss_before is not None
        if reuse_batch:
            loss1 = float(s2.loss_before)
        elif not losses:
            loss1 = math.nan
        else:
            if "loss1" not in shared:
                shared["loss1"] = eng.loss(s1, X1, y1)
            loss1 = shared["loss1"]
        loss2 = eng.loss(s2, X1, y1) if losses else math.nan
        meta = record_meta("two_step", seed=seed, dtype=dt, device=dev, start=cell_start,
                           steps=2, D=D, M=M, N=N, activation=act.name, target=repr(tgt),
                           information_exponent=tgt.information_exponent)
        return TwoStepResult(W0=Ws[0], W1=Ws[1], W2=Ws[2], a=a_np, beta=beta,
                             lrs=(lr1, lr2), alphas=(al1, al2),
                             reuse_batch=bool(reuse_batch), g=np.stack(gs),
                             loss=np.asarray([float(s1.loss_before), loss1, loss2]),
                             meta=meta)

    for j, (lr2, al2) in enumerate(second):
        yield cell(lr2, al2, start if j == 0 else time.perf_counter())


def _check_data(data: TwoStepData, D: int, M: int, N: int, target: HermiteTarget | str,
                reuse_batch: bool, seed: int, dtype: Any, device: Any) -> None:
    """``data`` must be the draw of these settings (else the run would silently differ)."""
    if not isinstance(data, TwoStepData):
        raise ValueError(f"data must be a TwoStepData (draw_data), got {type(data).__name__}")
    want = {"D": D, "M": M, "N": N, "seed": seed, "reuse_batch": bool(reuse_batch),
            "dtype": _torch.resolve_dtype(dtype), "device": _torch.resolve_device(device)}
    got = {k: getattr(data, k) for k in want}
    tgt = _resolve_target(target, D, seed_streams(seed, 2)[1])
    if repr(tgt) != repr(data.tgt) or not np.array_equal(np.asarray(tgt.direction), data.beta):
        got["target"], want["target"] = repr(data.tgt), repr(tgt)
    if got != want:
        bad = sorted(k for k in want if got[k] != want[k])
        raise ValueError(f"data was drawn for other settings: {', '.join(bad)} differ "
                         f"(data {[got[k] for k in bad]}, run {[want[k] for k in bad]})")
