"""The engine of the single-layer linear students: GD, SGD or online SGD as a value.

Used by :func:`specdyn.sim.train_linear_student` (the model and the methods are described in
:mod:`specdyn.sim.linear_student`) and, for its data set and methods, by the deep
students (:mod:`specdyn.sim.deep_linear_engine`): :class:`LinearStudentEngine` makes one
update of a :class:`LinearStudentState` (the replicas' weights, their squared errors and
the run's data set, a :class:`StudentData`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from specdyn import _torch
from specdyn import _validate as v
from specdyn.sim import protocol
from specdyn.sim.divergence import Divergence, Watch
from specdyn.sim.protocol import DerivedSeed, Engine, EngineDefaults, StreamLayout
from specdyn.sim.registry import engine as register_engine

__all__ = ["METHODS", "LinearStudentEngine", "LinearStudentState", "StudentData"]

#: training methods of the linear students (single-layer and deep)
METHODS = ("population", "gd", "sgd", "online")


Tensor = Any


@dataclass(frozen=True)
class StudentData:
    """The fixed data set of a ``"gd"``/``"sgd"`` run (device tensors, never modified).

    Attributes
    ----------
    X, Y
        Inputs ``(..., M, D)`` and labels ``(..., M, P)`` (leading axis: replicas, for
        :class:`LinearStudentEngine`; none for the deep engine).
    Sig, C
        ``X^T X / M`` and ``Y^T X / M`` for ``"gd"`` (``None`` for ``"sgd"``).
    sig_half
        Symmetric square root of ``Sig`` (the deep engine's sharpness; else ``None``).
    """

    X: Tensor
    Y: Tensor
    Sig: Tensor | None = None
    C: Tensor | None = None
    sig_half: Tensor | None = None


@dataclass(frozen=True)
class LinearStudentState:
    """The state of a linear-student run, a value (never updated in place).

    Attributes
    ----------
    W
        ``(R, P, D)`` weights of the ``R`` replicas.
    sq_error
        ``(R,)`` ``||W - W*||_F^2`` of each replica (0-d reductions on the device, no
        host sync): the protocol's ``loss`` of these weights, under its own name.
    data
        The data set of ``"gd"``/``"sgd"`` (drawn by :meth:`LinearStudentEngine.init`
        after the weights), carried unchanged from state to state; ``None`` for
        ``"population"`` and ``"online"``.
    """

    W: Tensor
    sq_error: Tensor
    data: StudentData | None = None

def _example_teacher() -> Any:
    """A 2 x 5 teacher (float64, CPU): the students' engine examples."""
    import torch

    g = torch.Generator().manual_seed(protocol.derive_seed(2))
    return torch.randn(2, 5, generator=g, dtype=torch.float64)


def _engine_example(method: str) -> Any:
    return (_example_teacher(), method, 0.2), {"M": 20, "B": 4, "noise_std": 0.1,
                                               "replicas": 3, "sigma0": 1.0}


@register_engine(examples={m: functools.partial(_engine_example, m) for m in METHODS})
class LinearStudentEngine(Engine[LinearStudentState, "tuple[Tensor, Tensor] | None"]):
    """Single-layer linear students under GD, SGD or online SGD: the protocol's triple.

    The first :class:`LinearStudentState` (from :meth:`init`) holds the weights drawn
    from the generator, then the data set drawn after them (the order of the recorded
    runs), which every later state carries (the engine keeps no run data, no generator);
    :meth:`sample` (state, generator) draws the batch of the next update (``None`` for
    ``"population"`` and ``"gd"``, which need none); :meth:`step` (state, batch)
    makes one update ``W <- W - lr * grad`` and returns a new state. ``R`` replicas run side by side
    (batched tensors), each with its own data. Sizes and the method are those of
    :func:`train_linear_student`, which validates them.

    Parameters
    ----------
    teacher
        ``W*`` (``P x D`` tensor; its dtype and device are the run's).
    method
        One of :data:`METHODS`.
    lr
        Step size.
    M, B
        Data-set size (``"gd"``, ``"sgd"``) and batch size (``"sgd"``, ``"online"``).
    noise_std, replicas
        Label noise and the number ``R`` of students.
    sigma0
        Initial weight scale: entries ``N(0, sigma0^2 / D)``.
    inputs
        The data set's inputs (``M x D``, shared by the replicas) for ``"gd"``/``"sgd"``,
        or ``None`` to draw them in :meth:`init`.

    Notes
    -----
    The generators of :meth:`init` and :meth:`sample` are ``torch.Generator`` on the
    teacher's device: one generator, the run's stream 0, drawn in turn (the batches
    continue the init's draws, the order of the recorded runs). A run watches the
    replicas' mean squared error against its start (factor ``1e8``).
    """

    defaults: ClassVar[EngineDefaults] = EngineDefaults(check_every=50,
                                                        divergence_factor=1e8)
    streams: ClassVar[StreamLayout] = StreamLayout(init=0, batch=0)

    @v.constrained(method=v.Choice(*METHODS), lr=v.POSITIVE, M=v.Int(0), B=v.Int(0),
                   noise_std=v.NONNEGATIVE, replicas=v.SIZE, sigma0=v.POSITIVE)
    def __init__(self, teacher: Tensor, method: str, lr: float, *, M: int = 0, B: int = 0,
                 noise_std: float = 0.0, replicas: int = 1, sigma0: float = 1.0,
                 inputs: Tensor | None = None) -> None:
        self.t = _torch.torch()
        self.Ws, self.method, self.lr = teacher, method, lr
        self.M, self.B, self.noise, self.R = M, B, noise_std, replicas
        self.sigma0, self.inputs = sigma0, inputs
        self.kw = {"dtype": teacher.dtype, "device": teacher.device}

    def init(self, generator: Any) -> LinearStudentState:
        """Initial weights (entries ``N(0, sigma0^2 / D)``), then the data set of
        ``"gd"``/``"sgd"`` (the engine's ``inputs``, or drawn), from ``generator``."""
        t, R, n, gen = self.t, self.R, self.M, generator
        P, D = self.Ws.shape
        W = t.randn(R, P, D, generator=gen, **self.kw) * (self.sigma0 / np.sqrt(D))
        data = None
        if self.method in ("gd", "sgd"):
            if self.inputs is None:
                X = t.randn(R, n, D, generator=gen, **self.kw)
            else:
                X = self.inputs.expand(R, n, D).contiguous()
            Y = X @ self.Ws.T + self.noise * t.randn(R, n, P, generator=gen, **self.kw)
            if self.method == "gd":
                data = StudentData(X, Y, X.transpose(1, 2) @ X / n,  # R x D x D
                                   Y.transpose(1, 2) @ X / n)  # R x P x D
            else:
                data = StudentData(X, Y)
        return LinearStudentState(W, self._sq_error(W), data)

    def _sq_error(self, W: Tensor) -> Tensor:
        return ((W - self.Ws) ** 2).sum(dim=(1, 2))

    def generator(self, role: str, seed: DerivedSeed) -> Any:
        """A ``torch.Generator`` on the teacher's device."""
        return self.t.Generator(device=self.Ws.device).manual_seed(seed)

    def divergence(self, state0: LinearStudentState) -> Divergence[LinearStudentState]:
        """The replicas' mean squared error against its start."""
        return Divergence("linear student", f"lower lr (now {self.lr:g}) below the stability "
                          "threshold", None, (Watch("mean squared error", lambda s: s.sq_error,
                                                    scale=float(state0.sq_error.mean())),))

    def sample(self, state: LinearStudentState, generator: Any
               ) -> tuple[Tensor, Tensor] | None:
        """The batch ``(x, y)`` (``R x B x D``, ``R x B x P``) of the update of ``state``,
        from ``generator``: fresh samples (``"online"``) or ``B`` distinct rows of each
        replica's data (``"sgd"``, from ``state.data``)."""
        t, R, B, gen = self.t, self.R, self.B, generator
        P, D = self.Ws.shape
        if self.method == "online":
            xb = t.randn(R, B, D, generator=gen, **self.kw)
            yb = xb @ self.Ws.T
            if self.noise > 0:
                yb = yb + self.noise * t.randn(R, B, P, generator=gen, **self.kw)
            return xb, yb
        if self.method == "sgd":
            assert state.data is not None
            idx = t.argsort(t.rand(R, self.M, generator=gen, device=self.Ws.device),
                            dim=1)[:, :B]
            return (t.gather(state.data.X, 1, idx[..., None].expand(R, B, D)),
                    t.gather(state.data.Y, 1, idx[..., None].expand(R, B, P)))
        return None

    def step(self, state: LinearStudentState, batch: tuple[Tensor, Tensor] | None = None
             ) -> LinearStudentState:
        """One update on ``batch`` (from :meth:`sample`; ``None`` for the full-batch methods)."""
        W = state.W
        if self.method == "population":
            G = W - self.Ws
        elif self.method == "gd":
            assert state.data is not None
            G = W @ state.data.Sig - state.data.C
        else:
            if batch is None:
                raise ValueError(f"method {self.method!r} needs a batch "
                                 "(engine.sample(state, generator))")
            xb, yb = batch
            G = (xb @ W.transpose(1, 2) - yb).transpose(1, 2) @ xb / self.B
        W = W - self.lr * G
        return LinearStudentState(W, self._sq_error(W), state.data)
