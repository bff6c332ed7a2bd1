"""The engine of a deep network with any activation: ``L`` hidden layers, hand-written passes.

``f(x) = m_{L+1} W_{L+1} phi(z_L)``, ``z_l = m_l W_l phi(z_{l-1})``, ``phi(z_0) = x``
(``W_1``: ``N x D``, ``W_l``: ``N x N``, ``W_{L+1}``: ``P x N``), full-batch GD on
``(1/2M) sum_m ||f(x_m) - y_m||^2`` with ``W_l -= dt lr_l dL/dW_l``; the per-layer init
standard deviations, multipliers and rates are a :class:`LayerScales`
(:mod:`specdyn.sim.deep_network`). Used by :func:`specdyn.sim.train_deep_network`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from specdyn import _validate as v
from specdyn._torch import torch as _torch
from specdyn.models.activations import Activation
from specdyn.sim.divergence import Divergence
from specdyn.sim.gram import weight_generator
from specdyn.sim.protocol import DerivedSeed, Engine, EngineDefaults, StreamLayout, derive_seed
from specdyn.sim.registry import engine as register_engine
from specdyn.sim.two_layer_engine import network_divergence

__all__ = ["DeepNetworkEngine", "DeepNetworkState", "LayerScales"]

Tensor = Any


@dataclass(frozen=True)
class LayerScales:
    """Per weight matrix, first to readout: init std, forward multiplier ``m_l``, rate ``lr_l``."""

    init_std: tuple[float, ...]
    multipliers: tuple[float, ...]
    lrs: tuple[float, ...]


@dataclass(frozen=True)
class DeepNetworkState:
    """The weights ``W_1 .. W_{L+1}`` (a value) and the batch loss of those the update was
    made from (``None`` for the first state)."""

    weights: tuple[Tensor, ...]
    loss_before: Tensor | None = None


def _example() -> Any:
    """Two tanh hidden layers of width 6 under muP (``gamma0 = 1.5``) on 9 samples (``D = 4``,
    ``P = 2``, float64, CPU)."""
    from specdyn.models.activations import ACTIVATIONS

    t = _torch()
    g = t.Generator().manual_seed(derive_seed(3))
    X, Y = t.randn(9, 4, generator=g, dtype=t.float64), t.randn(9, 2, generator=g,
                                                                dtype=t.float64)
    scales = LayerScales(init_std=(1.0, 1.0, 1 / 9), multipliers=(1.0, 6 ** -0.5, 1.0),
                         lrs=(6.0, 6.0, 1 / 13.5))
    return (ACTIVATIONS["tanh"], scales, 0.2, (4, 6, 6, 2), (X, Y)), {}


@register_engine(examples={"gd": _example})
class DeepNetworkEngine(Engine[DeepNetworkState, "tuple[Tensor, Tensor]"]):
    """Full-batch GD of the deep network on ``data = (X, Y)``: the protocol's triple.

    :meth:`init` draws ``W_l`` (``dims[l] x dims[l-1]``, ``dims = (D, N, ..., N, P)``) as
    standard normals times ``init_std[l]`` from a CPU ``torch.Generator``, in layer order;
    a run watches the batch loss against ``loss_scale`` and the weights finite (as the
    two-layer engine's).
    """

    defaults: ClassVar[EngineDefaults] = EngineDefaults(check_every=256)
    streams: ClassVar[StreamLayout] = StreamLayout(data=0, init=1)  # train_two_layer's

    @v.constrained(dt=v.POSITIVE, loss_scale=v.POSITIVE)
    def __init__(self, act: Activation, scales: LayerScales, dt: float, dims: tuple[int, ...],
                 data: tuple[Tensor, Tensor], *, loss_scale: float = 1.0) -> None:
        self.act, self.sc, self.dt, self.dims, self.data = act, scales, dt, dims, data
        self.loss_scale = loss_scale

    def generator(self, role: str, seed: DerivedSeed) -> Any:
        """The weights' CPU ``torch.Generator`` (:func:`~specdyn.sim.gram.weight_generator`)."""
        return weight_generator(seed)

    def init(self, generator: Any) -> DeepNetworkState:
        """Initial weights drawn from ``generator``, layer by layer."""
        t, X, d = _torch(), self.data[0], self.dims
        return DeepNetworkState(tuple(
            (t.randn(d[i + 1], d[i], generator=generator, dtype=t.float64) * std).to(X)
            for i, std in enumerate(self.sc.init_std)))

    def sample(self, state: DeepNetworkState, generator: Any) -> tuple[Tensor, Tensor]:
        """The whole training set (full-batch GD)."""
        return self.data

    def forward(self, weights: tuple[Tensor, ...], X: Tensor) -> tuple[list[Tensor], Tensor]:
        """The preactivations ``z_1 .. z_L`` (``M x N`` each) and the outputs (``M x P``)."""
        z, h, m = [], X, self.sc.multipliers
        for W, ml in zip(weights[:-1], m[:-1], strict=True):
            z.append(ml * (h @ W.T))
            h = self.act.fn(z[-1])
        return z, m[-1] * (h @ weights[-1].T)

    def step(self, state: DeepNetworkState, batch: tuple[Tensor, Tensor]) -> DeepNetworkState:
        """One GD update on ``batch = (X, Y)``: the new weights and the loss before it."""
        X, Y = batch
        W, m, M = state.weights, self.sc.multipliers, X.shape[0]
        z, f = self.forward(W, X)
        R = f - Y  # M x P: dL/df up to 1/M
        g, grads = R, []
        for i in range(len(W) - 1, -1, -1):  # readout first, back to layer 1
            h = X if i == 0 else self.act.fn(z[i - 1])
            grads.append(m[i] * (g.T @ h) / M)
            if i:
                g = (m[i] * (g @ W[i])) * self.act.deriv(z[i - 1])
        new = tuple(w - (self.dt * lr) * gw for w, lr, gw in zip(W, self.sc.lrs, grads[::-1],
                                                                   strict=True))
        return DeepNetworkState(new, 0.5 * (R * R).sum() / M)

    def divergence(self, state0: DeepNetworkState) -> Divergence[DeepNetworkState]:
        """The batch loss against ``loss_scale``; the weights finite at each check."""
        return network_divergence(self.dt, self.loss_scale,
                                  state0.weights[0].dtype == _torch().float32,
                                  lambda s: s.weights)
