"""The two-layer linear network trained by full-batch GD with weight decay.

The network of :func:`~specdyn.sim.train_linear`, ``f(x) = A^T W x / (gamma0 N)``
(mean-field scaling, learning rate ``nu = N``, step ``dt``: ``t = steps * dt``), with the
penalty ``(weight_decay / 2) (||W||^2 + ||A||^2) / N = (weight_decay / 2) (tr Gw + tr Ga)``
added to the loss. One step is

    W' = r W + c A G^T,    A' = r A + c W G,    r = 1 - dt weight_decay,  c = dt / gamma0,

``G = X^T E / M`` (``E = Y - f(X)``; the population ``Lambda Theta - Lambda B`` for
``M = None``): the linear step with every weight shrunk by ``r`` first. It still closes on
the Grams, and at a fixed point the learned map ``B = Gwa / gamma0`` is the minimiser of
the loss plus ``gamma0 weight_decay ||B||_*`` (the penalty's bound, reached by balanced
weights): in the aligned population case each mode soft-thresholded,
``B_kk = max(theta_k - gamma0 weight_decay / lambda_k, 0)``. The record is
:func:`~specdyn.sim.train_linear`'s: the spectrum of ``Sigma^(1/2) Gw Sigma^(1/2)``, the
teacher-basis diagonals and the training loss (without the penalty).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from specdyn import _validate as v
from specdyn._torch import torch as _torch
from specdyn.data.teacher import PowerLawTeacher
from specdyn.settings import Setting
from specdyn.sim import gram as _gram
from specdyn.sim.config import SimConfig
from specdyn.sim.divergence import Divergence
from specdyn.sim.inputs import RunInputs, Setup
from specdyn.sim.linear import linear_recorder
from specdyn.sim.loop import run
from specdyn.sim.options import RunOptions
from specdyn.sim.protocol import Engine, EngineDefaults, StreamLayout
from specdyn.sim.recording import PerState, SpectrumRecorder
from specdyn.sim.registry import engine, entry_point
from specdyn.sim.system import SETTING, TEACHER, System
from specdyn.sim.trajectory import Trajectory

if TYPE_CHECKING:
    from typing import Unpack

    from specdyn.sim.options import RunKeywords

__all__ = ["WeightDecayConfig", "WeightDecayEngine", "WeightDecayState", "train_weight_decay"]


@dataclass(frozen=True)
class WeightDecayState:
    """The weights ``W`` (``N x D``), ``A`` (``N x P``), the gradient factor ``G`` and the
    training ``loss`` (0-d, without the penalty), the last two of these weights."""

    W: Any
    A: Any
    G: Any
    loss: Any


@engine(examples={"data": lambda: ((_gram.example_data(), 1.0, 0.05, 0.1),
                                   {"N": 8, "sigma_w": 0.5, "sigma_a": 1.0, "device": "cpu"})})
class WeightDecayEngine(Engine[WeightDecayState, None]):
    """Full-batch GD with weight decay on ``data = (X, Y)`` (module docstring); ``init``
    draws the linear engines' weights (:func:`~specdyn.sim.gram.weight_chunks`)."""

    defaults: ClassVar[EngineDefaults] = _gram.GramEngine.defaults
    streams: ClassVar[StreamLayout] = _gram.GramEngine.streams  # train_linear's data, weights

    @v.constrained(gamma0=v.POSITIVE, dt=v.POSITIVE, weight_decay=v.NONNEGATIVE, N=v.SIZE,
                   sigma_w=v.NONNEGATIVE, sigma_a=v.NONNEGATIVE)
    def __init__(self, data: tuple[np.ndarray, np.ndarray], gamma0: float, dt: float,
                 weight_decay: float, *, N: int, sigma_w: float, sigma_a: float,
                 dtype: Any = None, device: Any = None) -> None:
        t = self.t = _torch()
        self.X, self.Y = (t.as_tensor(a, dtype=dtype, device=device) for a in data)
        self.N, self.sigma_w, self.sigma_a = N, sigma_w, sigma_a
        self.gamma0, self.dt, self.c, self.r = gamma0, dt, dt / gamma0, 1.0 - dt * weight_decay

    def _state(self, W: Any, A: Any) -> WeightDecayState:
        E = self.Y - (self.X @ W.T) @ A * (1.0 / (self.gamma0 * self.N))  # residuals, M x P
        M = self.X.shape[0]
        return WeightDecayState(W, A, self.X.T @ E / M, 0.5 * (E * E).sum() / M)

    def init(self, generator: Any) -> WeightDecayState:
        """Initial weights from ``generator`` (:func:`~specdyn.sim.gram.weight_chunks`)."""
        D, P = self.X.shape[1], self.Y.shape[1]
        chunks = list(_gram.weight_chunks(self.N, D, P, self.sigma_w, self.sigma_a, generator))
        return self._state(*(self.t.cat(part).to(self.X) for part in zip(*chunks, strict=True)))

    def step(self, state: WeightDecayState, batch: None = None) -> WeightDecayState:
        """One GD step with weight decay (full batch: ``batch`` is unused)."""
        W, A, G = state.W, state.A, state.G
        return self._state(W.mul(self.r).add(A @ G.T, alpha=self.c),
                           self.t.addmm(A, W, G, beta=self.r, alpha=self.c))

    def divergence(self, state0: WeightDecayState) -> Divergence[WeightDecayState]:
        """The training loss (NaN when a weight is not finite), against its start."""
        return _gram.loss_divergence(self.dt, float(state0.loss),
                                     lambda s: _gram.watched_loss(s.loss, s.W))

    def grams(self, state: WeightDecayState) -> tuple[_gram.Grams, float]:
        """Float64 host ``(Gw, Ga, Gwa)`` of ``state``, and its training loss."""
        return _gram.weight_grams(state.W, state.A), float(state.loss)


@dataclass(frozen=True, kw_only=True)
@v.constrained_fields(N=v.SIZE, M=v.SIZE, steps=v.SIZE, dt=v.POSITIVE,
                      weight_decay=v.NONNEGATIVE)
class WeightDecayConfig(SimConfig):
    """How :func:`train_weight_decay` trains: every parameter, once.

    Attributes
    ----------
    N, M, steps
        Width, training samples, GD steps (the run covers ``t in [0, steps * dt]``).
    dt
        Step size; learning rate ``nu = N``, one step advances ``t`` by ``dt``.
    weight_decay
        ``lambda >= 0`` of the penalty ``(lambda / 2)(tr Gw + tr Ga)``; 0 is
        :func:`~specdyn.sim.train_linear`'s weight-space GD, bit for bit.
    options
        The run's options (:class:`~specdyn.sim.config.SimConfig`): ``checkpoints`` ``None``
        is 0 and 60 log-spaced steps; the seed's streams are :func:`train_linear`'s (the
        same data and weights).
    """

    N: int
    M: int
    steps: int
    dt: float = 1.0
    weight_decay: float = 0.0


def _example() -> Any:
    from specdyn.settings import FEATURE_LEARNING

    return (FEATURE_LEARNING.setting(D=6), 8, 8, 40), {"weight_decay": 0.1,
                                                              "device": "cpu"}


@entry_point(WeightDecayConfig, example=_example)
@v.constrained(setting=SETTING, teacher=TEACHER)
def train_weight_decay(setting: Setting, N: int, M: int, steps: int, *, dt: float = 1.0,
                       weight_decay: float = 0.0, teacher: PowerLawTeacher | None = None,
                       options: RunOptions | None = None,
                       **shorthands: Unpack[RunKeywords]) -> Trajectory:
    """Train the two-layer linear network with weight decay and record its spectra.

    Parameters
    ----------
    setting, teacher
        The system, as for :func:`~specdyn.sim.train_linear`.
    options, **shorthands
        The run's :class:`~specdyn.sim.options.RunOptions`, or its fields as keywords.
    N, M, steps, dt, weight_decay
        :class:`WeightDecayConfig`, where each is documented.

    Returns
    -------
    Trajectory
        :func:`~specdyn.sim.train_linear`'s record: ``series["preact"]``, the diagonals
        ``xi``, ``eta``, ``zeta`` and the training loss (without the penalty).
    """
    cfg = WeightDecayConfig.of_call(locals(), entry="train_weight_decay")
    system = System.of(setting, teacher)

    def build(inputs: RunInputs) -> tuple[WeightDecayEngine,
                                          SpectrumRecorder[WeightDecayState, Trajectory]]:
        data, s = system.sample(cfg.M, inputs), system.setting
        eng = WeightDecayEngine(data, s.gamma0, cfg.dt, cfg.weight_decay, N=cfg.N,
                                sigma_w=s.sigma_w, sigma_a=s.sigma_a, dtype=inputs.dtype,
                                device=inputs.device)
        return eng, linear_recorder(PerState(eng.grams), system.stats(data), system,
                                    dt=eng.dt, meta={"N": cfg.N, "M": cfg.M, "dt": cfg.dt,
                                                     "weight_decay": cfg.weight_decay,
                                                     **system.meta()})

    return run(Setup("weight_decay", WeightDecayEngine.streams, build), steps=cfg.steps,
               options=cfg.options, desc="weight decay")
