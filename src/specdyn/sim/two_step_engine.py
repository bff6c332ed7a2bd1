"""The engine of two full-batch gradient steps on the first layer of a wide two-layer network.

Used by :func:`specdyn.sim.gd_steps` and :func:`specdyn.sim.gd_steps_row` (the model,
the update and the scalings are described in :mod:`specdyn.sim.two_step`):
:class:`TwoStepEngine` makes update ``k`` of a :class:`TwoStepState` on a batch, and
draws the weights and batches on the host (numpy); :func:`draw_data` makes the whole
draw of a seed at once (a :class:`TwoStepData`, which the engine replays), so a grid over
step sizes draws once per seed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from specdyn import _torch
from specdyn import _validate as v
from specdyn.data.hermite import HermiteTarget, random_direction
from specdyn.models.activations import Activation
from specdyn.sim.divergence import Divergence, Watch
from specdyn.sim.protocol import (
    DerivedSeed,
    Engine,
    EngineDefaults,
    StreamLayout,
    seed_streams,
)
from specdyn.sim.registry import engine as register_engine

__all__ = ["TwoStepData", "TwoStepEngine", "TwoStepGradient", "TwoStepState", "draw_data",
           "resolve_target"]

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


def _example() -> Any:
    """A width-4 tanh-shift layer on a He2+He3 target (``D = 3``, float64, CPU)."""
    from specdyn.models.activations import ACTIVATIONS

    tgt = HermiteTarget.named("He2+He3", D=3, seed=0)
    return (ACTIVATIONS["tanh-shift"], (0.5, 1.0)), {"N": 4, "D": 3, "M": 7, "target": tgt,
                                                     "dtype": "float64", "device": "cpu"}


@register_engine(examples={"two-step": _example})
class TwoStepEngine(Engine[TwoStepState, "tuple[Tensor, Tensor]"]):
    """First-layer GD of ``f(x) = N^(-1/2) a^T sigma(W x)`` with ``a`` fixed: the protocol's pair.

    :meth:`init` (generator) draws the initial weights ``W0`` and then the second layer
    ``a`` and gives the first :class:`TwoStepState` (which carries ``a``);
    :meth:`sample` (state, generator) draws a batch ``(X, y)`` of ``M`` samples of the
    target; :meth:`step` (state, batch) makes update ``updates + 1`` on the batch with
    step size ``lrs[updates]`` (module docstring) and returns a new state; :meth:`loss`
    is the training loss of a state on a batch. A run watches the weights (finite or
    not), checked after every update.

    The generator is numpy's (``numpy.random.default_rng``, the caller's: the engine
    holds none); the draws are made on the host in float64 (the run is the same on
    every device) and moved to the engine's dtype and device. One generator through
    ``init``, ``sample`` (and ``sample`` again for a fresh second batch) draws ``W0``,
    ``a``, ``X1``, ``X2`` in the order of :func:`draw_data`, so a hand-written loop
    gives :func:`gd_steps`' numbers bit for bit (``tests/sim/test_sim_engines.py``);
    an engine given ``data`` (a :class:`TwoStepData`) replays that draw instead.

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
    memo
        The cells of a grid row (:func:`gd_steps_row`: engines of one ``lrs[0]`` on one
        draw) share their first update and the second's direction through one dict, keyed
        by the update and its inputs: each is made by the first engine that needs it (the
        same operations, so the numbers are those made without it).
    data
        A draw made before (:func:`draw_data`), which :meth:`init` and :meth:`sample`
        replay (their generators unused), or ``None``.
    """

    defaults: ClassVar[EngineDefaults] = EngineDefaults(check_every=1)
    # W0, a and the batches from stream 0 in turn; the target's direction: stream 1
    streams: ClassVar[StreamLayout] = StreamLayout(init=0, batch=0, data=1)

    @v.constrained(lrs=v.Tuple(v.NONNEGATIVE, min_len=1), N=v.SIZE, D=v.SIZE, M=v.SIZE)
    def __init__(self, act: Activation, lrs: tuple[float, ...], *, N: int, D: int, M: int,
                 target: HermiteTarget, dtype: Any = None, device: Any = None,
                 memo: dict[Any, Any] | None = None, data: TwoStepData | None = None) -> None:
        self.act, self.lrs, self.memo, self.data = act, tuple(lrs), memo, data
        self.N, self.D, self.M, self.target = N, D, M, target
        self.dtype, self.device = _torch.resolve_dtype(dtype), _torch.resolve_device(device)
        self.inv_sqrt_width = 1.0 / math.sqrt(N)

    def init(self, generator: np.random.Generator) -> TwoStepState:
        """The state of ``W0`` and then ``a`` drawn from the numpy ``generator`` (or those of
        the engine's ``data``, the replay of a draw made before)."""
        if self.data is not None:
            return TwoStepState(self.data.W0, self.data.a)
        W0, a = _draw_weights(self.N, self.D, generator)
        return TwoStepState(self._put(W0), self._put(a))

    def sample(self, state: TwoStepState, generator: np.random.Generator
               ) -> tuple[Tensor, Tensor]:
        """A batch ``(X, y)`` (``M x D``, ``M``) drawn from the numpy ``generator``
        (whatever the state: the batches are i.i.d.), or the engine's ``data``'s batch of
        update ``state.updates + 1``."""
        if self.data is not None:
            return (self.data.X1, self.data.y1) if state.updates == 0 else \
                (self.data.X2, self.data.y2)
        X, y = _draw_batch(self.M, self.D, self.target, generator)
        return self._put(X), self._put(y)

    def generator(self, role: str, seed: DerivedSeed) -> np.random.Generator:
        """numpy's ``Generator`` (the draws are made on the host in float64)."""
        return np.random.default_rng(seed)

    def divergence(self, state0: TwoStepState) -> Divergence[TwoStepState]:
        """The weights, finite or not (checked after each update)."""
        lrs = ", ".join(f"{lr:.4g}" for lr in self.lrs)
        return Divergence("two-step GD", f"lower the step sizes (now lr = ({lrs})) or use a "
                          "bounded activation", None, (
                              # w - w is 0 where w is finite, NaN elsewhere
                              Watch("weights", lambda s: (s.W - s.W).sum(), each_step=False,
                                    says="the weights are not finite"),))

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
        """Update ``state.updates + 1`` on ``batch = (X, y)`` (given a ``memo``, the update
        its first engine made from the same state)."""
        if self.memo is None:
            return self.apply(state, self.gradient(state, batch))
        k = state.updates + 1  # this update; all but the last are the row's, shared
        # keyed by the inputs themselves (kept in the entry, so their ids stay theirs)
        key = (k, id(state.W), id(batch[0]))
        if key not in self.memo:
            self.memo[key] = (state.W, batch[0], self.gradient(state, batch), None)
        W, X, grad, made = self.memo[key]
        if made is not None:
            return made
        new = self.apply(state, grad)
        if k < len(self.lrs):
            self.memo[key] = (W, X, grad, new)
        return new

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
    # the engine's streams (TwoStepEngine.streams): the weights and batches 0, the direction 1
    data_seed, target_seed = seed_streams(seed, 2)
    tgt = resolve_target(target, D, target_seed)
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


def resolve_target(target: HermiteTarget | str, D: int, seed: int) -> HermiteTarget:
    """``target`` (a name or a :class:`HermiteTarget`) with its direction in ``D`` dimensions
    (drawn from ``seed`` when it has none)."""
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
