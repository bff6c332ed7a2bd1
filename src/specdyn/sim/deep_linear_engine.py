"""The engine of a deep linear student: one GD/SGD update of every layer, as a value.

Used by :func:`specdyn.sim.train_deep_linear` (model, parameterisations and the
Gauss-Newton sharpness are described in :mod:`specdyn.sim.deep_linear`):
:class:`DeepLinearEngine` makes one update of a :class:`DeepLinearState` (the
weights, their prefix products, their loss and the run's data set).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from specdyn import _torch
from specdyn import _validate as v
from specdyn.measure.spectra import decompose
from specdyn.sim.divergence import Divergence, Watch
from specdyn.sim.linear_student_engine import METHODS, StudentData
from specdyn.sim.protocol import DerivedSeed, Engine, EngineDefaults, StreamLayout
from specdyn.sim.registry import engine as register_engine

__all__ = ["DEEP_PARAMETERIZATIONS", "DeepLinearEngine", "DeepLinearScaling", "DeepLinearState",
           "scaling"]

Tensor = Any


#: the deep students' parameterisations (the two-layer engine's are
#: :data:`specdyn.sim.parameterization.PARAMETERIZATIONS`, a different family)
DEEP_PARAMETERIZATIONS = ("mup", "ntk", "standard")


@dataclass(frozen=True)
class DeepLinearScaling:
    """Init standard deviations, forward multipliers and the effective learning rate.

    ``dims`` are ``(D, N, ..., N, P)``; layer ``l`` maps ``dims[l]`` to ``dims[l+1]``.
    """

    name: str
    dims: tuple[int, ...]
    init_std: tuple[float, ...]
    multipliers: tuple[float, ...]
    lr_eff: float


@v.constrained(parameterization=v.Choice(*DEEP_PARAMETERIZATIONS), depth=v.SIZE, N=v.SIZE,
               D=v.SIZE, P=v.SIZE, lr=v.POSITIVE, sigma0=v.POSITIVE, gamma0=v.POSITIVE)
def scaling(parameterization: str, *, depth: int, N: int, D: int, P: int, lr: float,
            sigma0: float = 1.0, gamma0: float = 1.0) -> DeepLinearScaling:
    """The multipliers of ``parameterization`` (module table) for width ``N``."""
    name, L, d, p, eta0, s0, g0 = parameterization, depth, D, P, lr, sigma0, gamma0
    dims = (d, *([N] * (L - 1)), p)
    fan = dims[:-1]
    if name == "standard":
        std = tuple(s0 / math.sqrt(f) for f in fan)
        mult = tuple(1.0 for _ in fan)
        lr_eff = eta0
    else:
        std = tuple(s0 for _ in fan)
        mult_l = [1.0 / math.sqrt(f) for f in fan]
        lr_eff = eta0
        if name == "mup" and L > 1:
            mult_l[-1] = 1.0 / (g0 * N)
            lr_eff = eta0 * g0 * g0 * N
        mult = tuple(mult_l)
    return DeepLinearScaling(name, dims, std, mult, lr_eff)


@dataclass(frozen=True)
class DeepLinearState:
    """The state of a deep-linear run, a value (never updated in place).

    Attributes
    ----------
    weights
        The raw weights ``W_1, ..., W_L`` (``W_l`` is ``dims[l] x dims[l-1]``).
    prefixes
        ``prefixes[l] = W_l ... W_1`` (``dims[l] x D``; ``prefixes[0] = I``), kept
        for the next update.
    loss
        0-d loss of these weights (see :class:`DeepLinearRun`), on the device.
    data
        The data set of ``"gd"``/``"sgd"`` (drawn by :meth:`DeepLinearEngine.init`
        after the weights; ``X`` ``M x D``, ``Y`` ``M x P``, ``Sig``, ``C`` and
        ``sig_half`` of ``X``), carried unchanged; ``None`` for the population methods.
    """

    weights: tuple[Tensor, ...]
    prefixes: tuple[Tensor, ...]
    loss: Tensor
    data: StudentData | None = None


def _example(method: str) -> Any:
    """A depth-3 muP student of a rank-one 3 x 4 teacher (float64, CPU): the examples."""
    import torch

    T = torch.zeros(3, 4, dtype=torch.float64)
    T[0, 0] = 2.0
    sc = scaling("mup", depth=3, N=6, D=4, P=3, lr=0.05)
    return (sc, T, method), {"M": 15, "B": 5, "noise_std": 0.1}


@register_engine(examples={m: functools.partial(_example, m) for m in METHODS})
class DeepLinearEngine(Engine[DeepLinearState, "tuple[Tensor, Tensor] | None"]):
    """A deep linear student under one parameterisation: the protocol's pair.

    :meth:`init` (generator) draws the initial weights and then the data set (that
    order keeps recorded runs) and gives the first :class:`DeepLinearState`,
    which carries the data set (the engine keeps no run data and no generator);
    :meth:`sample` (state, generator) draws the batch of the next update (``None`` for
    ``"population"`` and ``"gd"``); :meth:`step` (state, batch) makes one update
    ``W_l <- W_l - lr_eff dL/dW_l`` of every layer and returns a new state.
    :meth:`sharpness` is the Gauss-Newton top eigenvalue of a state (module
    docstring). Sizes and the method are those of :func:`train_deep_linear`,
    which validates them.

    Parameters
    ----------
    scaling
        The parameterisation (:func:`scaling`).
    teacher
        ``W*`` (``P x D`` tensor; its dtype and device are the run's).
    method
        One of :data:`~specdyn.sim.linear_student_engine.METHODS`.
    M, B, noise_std
        Data-set size (``"gd"``, ``"sgd"``), batch size (``"sgd"``, ``"online"``),
        label noise.
    weights
        Initial weights to start from in place of the draw (one ``dims[l+1] x dims[l]``
        array per layer; :meth:`init` still makes the draw, so the data that follow are
        the same), or ``None``.

    Notes
    -----
    The generators are ``torch.Generator`` on the teacher's device: :meth:`init` draws
    from the run's stream 0, which the recorder continues (its power-iteration and
    subspace starts, the order of the recorded runs), and :meth:`sample` from stream 1 of
    its own, so recording never changes the batches. A run watches the loss against its
    start.
    """

    defaults: ClassVar[EngineDefaults] = EngineDefaults(check_every=20)
    streams: ClassVar[StreamLayout] = StreamLayout(init=0, record=0, batch=1)

    @v.constrained(method=v.Choice(*METHODS), M=v.Int(0), B=v.Int(0), noise_std=v.NONNEGATIVE)
    def __init__(self, scaling: DeepLinearScaling, teacher: Tensor, method: str, *,
                 M: int = 0, B: int = 0, noise_std: float = 0.0,
                 weights: Sequence[ArrayLike] | None = None) -> None:
        t = self.t = _torch.torch()
        self.sc, self.Ws, self.method = scaling, teacher, method
        self.M, self.B, self.noise, self.weights = M, B, noise_std, weights
        self.kw = {"dtype": teacher.dtype, "device": teacher.device}
        self.L = len(scaling.multipliers)
        self.ctot = float(np.prod(scaling.multipliers))
        P, D = teacher.shape
        self.eye_d, self.eye_p = t.eye(D, **self.kw), t.eye(P, **self.kw)

    def generator(self, role: str, seed: DerivedSeed) -> Any:
        """A ``torch.Generator`` on the teacher's device."""
        return self.t.Generator(device=self.Ws.device).manual_seed(seed)

    def divergence(self, state0: DeepLinearState) -> Divergence[DeepLinearState]:
        """The loss against its start."""
        return Divergence("deep linear student", f"lower lr (lr_eff now {self.sc.lr_eff:g}; "
                          "lr_eff * sharpness must stay below 2)", None,
                          (Watch("loss", lambda s: s.loss, scale=float(state0.loss)),))

    def init(self, generator: Any) -> DeepLinearState:
        """Initial weights (entries ``N(0, init_std_l^2)``, or the engine's ``weights`` in
        their place: the draw is made either way), then the data set of ``"gd"``/``"sgd"``,
        from ``generator``."""
        t, dims, sc, gen = self.t, self.sc.dims, self.sc, generator
        W = [t.randn(dims[i + 1], dims[i], generator=gen, **self.kw) * sc.init_std[i]
             for i in range(self.L)]
        if self.weights is not None:
            W = [t.as_tensor(w, **self.kw) for w in self.weights]
        data = None
        if self.method in ("gd", "sgd"):
            n, (P, D) = self.M, self.Ws.shape
            X = t.randn(n, D, generator=gen, **self.kw)
            Y = X @ self.Ws.T + self.noise * t.randn(n, P, generator=gen, **self.kw)
            sig = X.T @ X / n
            ev, evec, _ = decompose(sig, vectors=True, increasing=True)
            data = StudentData(X, Y, sig, Y.T @ X / n, (evec * ev.clamp_min(0).sqrt()) @ evec.T)
        return self._state(tuple(W), data)

    def _moments(self, data: StudentData | None) -> tuple[Tensor, Tensor, Tensor]:
        """``(Sigma, C, Sigma^(1/2))`` of the data set, or of the population (``I``, ``W*``)."""
        if data is None:
            return self.eye_d, self.Ws, self.eye_d
        assert data.Sig is not None and data.C is not None and data.sig_half is not None
        return data.Sig, data.C, data.sig_half

    def _state(self, W: tuple[Tensor, ...], data: StudentData | None) -> DeepLinearState:
        pre = self.prefixes(W)
        weff = self.ctot * pre[-1]
        # residual form: no cancellation, so tiny losses stay accurate (and >= 0)
        if data is not None:
            loss = 0.5 * ((data.X @ weff.T - data.Y) ** 2).sum() / self.M
        else:
            loss = 0.5 * ((weff - self.Ws) ** 2).sum()
        return DeepLinearState(W, pre, loss, data)

    def prefixes(self, W: Sequence[Tensor]) -> tuple[Tensor, ...]:
        """``(I, W_1, W_2 W_1, ..., W_L ... W_1)``."""
        out = [self.eye_d]
        for Wl in W:
            out.append(Wl @ out[-1])
        return tuple(out)

    def suffixes(self, W: Sequence[Tensor]) -> tuple[Tensor, ...]:
        """``out[l] = W_L ... W_{l+1}`` (``P x dims[l]``); ``out[L] = I``."""
        out = [self.eye_p]
        for Wl in reversed(W):
            out.append(out[-1] @ Wl)
        return tuple(out[::-1])

    def sample(self, state: DeepLinearState, generator: Any) -> tuple[Tensor, Tensor] | None:
        """The batch ``(x, y)`` of the update of ``state``, from ``generator``: ``B`` fresh
        samples (``"online"``) or ``B`` distinct rows of ``state.data`` (``"sgd"``);
        ``None`` otherwise."""
        t, B, gen = self.t, self.B, generator
        P, D = self.Ws.shape
        if self.method == "online":
            xb = t.randn(B, D, generator=gen, **self.kw)
            yb = xb @ self.Ws.T
            if self.noise > 0:
                yb = yb + self.noise * t.randn(B, P, generator=gen, **self.kw)
            return xb, yb
        if self.method == "sgd":
            assert state.data is not None
            idx = t.randperm(self.M, generator=gen, device=self.Ws.device)[:B]
            return state.data.X[idx], state.data.Y[idx]
        return None

    def step(self, state: DeepLinearState, batch: tuple[Tensor, Tensor] | None = None
             ) -> DeepLinearState:
        """One update of every layer on ``batch`` (from :meth:`sample`; ``None`` for the
        full-batch methods)."""
        W, pre, c = state.weights, state.prefixes, self.ctot
        suf = self.suffixes(W)
        weff = c * pre[-1]
        if self.method in ("population", "gd"):
            sig, cxy, _ = self._moments(state.data)
            E = weff @ sig - cxy
        else:
            if batch is None:
                raise ValueError(f"method {self.method!r} needs a batch (engine.sample(state))")
            xb, yb = batch
            E = (xb @ weff.T - yb).T @ xb / self.B
        lr = self.sc.lr_eff
        return self._state(tuple(W[i] - lr * (c * suf[i + 1].T @ (E @ pre[i].T))
                                 for i in range(self.L)), state.data)

    def sharpness(self, state: DeepLinearState, x0: Tensor, iters: int
                  ) -> tuple[Tensor, Tensor]:
        """``(lambda, x)``: the Gauss-Newton top eigenvalue of ``state`` by ``iters``
        power-iteration steps from ``x0`` (``P x D``), and the last iterate."""
        L, pre, suf = self.L, state.prefixes, self.suffixes(state.weights)
        A = [suf[i + 1] @ suf[i + 1].T for i in range(L)]  # P x P
        half = self._moments(state.data)[2]
        Bm = [half @ (pre[i].T @ pre[i]) @ half for i in range(L)]  # D x D
        x = x0 / x0.norm()
        lam = x.new_zeros(())
        for _ in range(iters):
            y = sum(A[i] @ x @ Bm[i] for i in range(L)) * (self.ctot * self.ctot)
            lam = (x * y).sum()
            x = y / y.norm().clamp_min(1e-300)
        return lam, x
