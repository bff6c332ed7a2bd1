"""The weight-space engine of a two-layer network with any activation (hand-written passes).

Used by :func:`specdyn.sim.train_two_layer` (model, parameterisations and
spectra are described there): :class:`TwoLayerEngine` holds the passes
of ``f(x) = s A^T phi(W x)`` and makes one GD/SGD update of a
:class:`TwoLayerState` (the weights, a value, and the scratch buffers of the
passes, which belong to the state) with five matrix products and
no autograd; :meth:`TwoLayerEngine.sample` draws each update's batch (the whole set,
the next slice of a reshuffled epoch, or fresh samples); :func:`init_weights` draws the
initial weights from the linear engines' generator
(:func:`~specdyn.sim.gram.weight_generator`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

import numpy as np

from specdyn import _validate as v
from specdyn._torch import torch as _torch
from specdyn.models.activations import ACTIVATIONS, Activation
from specdyn.sim import gram as _gram
from specdyn.sim.divergence import Divergence, Watch, dt_advice
from specdyn.sim.parameterization import Parameterization
from specdyn.sim.protocol import DerivedSeed, Engine, EngineDefaults, StreamLayout, derive_seed
from specdyn.sim.registry import engine as register_engine

if TYPE_CHECKING:
    from specdyn.data.teacher import PowerLawTeacher

__all__ = ["OPTIMIZERS", "Batch", "TwoLayerEngine", "TwoLayerState", "init_weights",
           "network_divergence"]

#: The two-layer engine's optimisers (see :func:`specdyn.sim.train_two_layer`).
OPTIMIZERS = ("gd", "sgd", "online")

Tensor = Any

#: rows per block of the CPU passes (a 128 x N block of float32 is 0.5 MB at N = 1024)
_CPU_ROWS = 128


@dataclass(frozen=True, eq=False)
class _Work:
    """The scratch buffers of the passes (sized by ``TwoLayerEngine.init``): ``rows x N``
    preactivations ``H``, ``dL/dphi`` ``G``, ``rows x P`` residuals ``R``, ``phi'(H)``
    (generic activations), the gradients ``gWt`` (``D x N``), ``gAt`` (``P x N``), and
    the compute dtype ``cdt`` and block size ``rows``. Contents are undefined between
    passes: they are no part of a state's value."""

    cdt: Any
    rows: int
    H: Tensor
    G: Tensor
    R: Tensor
    dphi: Tensor | None
    gWt: Tensor
    gAt: Tensor


@dataclass(frozen=True)
class TwoLayerState:
    """The state of a two-layer network run: its weights, a value (never updated in place).

    Stored as the engine multiplies them: ``Wt = W^T`` (``D x N``), ``At = A^T``
    (``P x N``) and ``Ar = A`` (``N x P``, row-major, equal to ``At^T``), so that
    every ``B x N`` matrix of a step is a row-major operand or output of its
    product, the fast case for BLAS. ``loss_before`` is the batch loss of the
    weights the update was made from (0-d, no host sync; ``None`` for the state
    of :meth:`TwoLayerEngine.init`): the gradient pass gives it for free, while
    the loss of these weights would cost another forward pass. ``work`` holds the
    scratch buffers of the passes, allocated once by :meth:`TwoLayerEngine.init`
    and handed from each state to the next (not compared, not part of the value:
    a step reads only ``Wt``, ``At``, ``Ar`` of the given state and writes none).
    ``updates`` and ``epoch`` say where an ``"sgd"`` run stands in its epoch (the
    sampler's state, in the run's state: :meth:`TwoLayerEngine.sample` reads them).
    """

    Wt: Tensor
    At: Tensor
    Ar: Tensor
    loss_before: Tensor | None = None
    work: _Work | None = field(default=None, compare=False, repr=False)
    #: updates made so far (the position in an ``"sgd"`` epoch)
    updates: int = 0
    #: the current ``"sgd"`` epoch: the samples ``(X, Y)`` reshuffled (``None`` otherwise)
    epoch: tuple[Tensor, Tensor] | None = None

    @property
    def W(self) -> Tensor:
        """First-layer weights ``W`` (``N x D`` view)."""
        return self.Wt.T

    @property
    def A(self) -> Tensor:
        """Second-layer weights ``A`` (``N x P``)."""
        return self.Ar


def network_divergence(dt: float, loss_scale: float, float32: bool,
                       weights: Callable[[Any], Sequence[Tensor]]) -> Divergence[Any]:
    """What a network trained on batches watches (:class:`TwoLayerEngine`,
    :class:`~specdyn.sim.deep_network_engine.DeepNetworkEngine`): the batch loss
    (``loss_before``) against ``loss_scale`` (the zero-output loss ``0.5 tr(Syy)``), and, at
    each check, the ``weights(state)`` finite (a state's own loss is known only after the
    next update)."""
    hint = ", or use dtype=float64" if float32 else ""
    return Divergence("training", dt_advice(dt) + hint, dt, (
        Watch("batch loss", lambda s: s.loss_before, scale=loss_scale,
              scale_name="the zero-output loss", lag=1),
        # w - w is 0 where w is finite, NaN elsewhere: one reduction per matrix
        Watch("weights", lambda s: sum((w - w).sum() for w in weights(s)), each_step=False,
              says="the weights are not finite")))


class Batch(NamedTuple):
    """A batch of :class:`TwoLayerEngine`: inputs ``X`` (``B x D``), targets ``Y``
    (``B x P``) and, for ``"sgd"``, the reshuffled epoch it was cut from (the next state
    carries it)."""

    X: Tensor
    Y: Tensor
    epoch: tuple[Tensor, Tensor] | None = None


def _example(act: str, optimizer: str = "gd", B: int = 6) -> Any:
    """A width-10 muP network on 6 samples (``D = 4``, ``P = 3``, float64, CPU)."""
    from specdyn.sim.parameterization import get_parameterization

    t = _torch()
    g = t.Generator().manual_seed(derive_seed(1))
    X = t.randn(6, 4, generator=g, dtype=t.float64)
    Y = t.randn(6, 3, generator=g, dtype=t.float64)
    return (ACTIVATIONS[act], get_parameterization("mup", 10, 2.0), 0.3, B), {
        "sizes": (10, 4, 3), "init_scale": (1.0, 1.0), "dtype": t.float64, "device": "cpu",
        "optimizer": optimizer, "data": (X, Y)}


@register_engine(examples={"relu": lambda: _example("relu"), "tanh": lambda: _example("tanh"),
                           "sgd": lambda: _example("tanh", "sgd", 4)})
class TwoLayerEngine(Engine[TwoLayerState, Batch]):
    """The hand-written passes of a two-layer network (buffers preallocated, in the state).

    The protocol's pair: :meth:`init` gives the :class:`TwoLayerState` of initial
    weights, :meth:`step` (state, batch) one GD/SGD update of time ``dt``,
    returning a new state (the old one stays valid: the update is out of place,
    which costs no measurable time beside the five products, see BENCHMARKS.md)
    that carries the loss before it (see below).

    The products run in ``compute`` dtype (the weights' dtype, or bfloat16 when
    asked) into scratch buffers allocated by :meth:`init` and carried by the
    states (``TwoLayerState.work``); the engine itself holds no buffer. On the CPU a
    batch is processed in blocks of ``_CPU_ROWS`` rows (gradients accumulated
    over blocks), so that the ``B x N`` temporaries of the elementwise passes
    stay in cache; on a GPU in one block. ``B`` is the batch size (the most rows a
    batch of :meth:`step` has; it sizes the buffers).

    The loss of the weights *before* the update comes free with the gradients
    (a 0-d tensor, no host sync): the new state keeps it as ``loss_before``, the
    protocol's name for that convention. A run watches that batch loss against
    ``loss_scale`` (the zero-output loss ``0.5 tr(Syy)``) and, at each check, that the
    weights are finite (the state's own loss is known only after the next update).

    :meth:`init` (generator) draws the initial weights (:func:`init_weights`, from a CPU
    ``torch.Generator``) of the engine's ``sizes`` ``(N, D, P)`` and ``init_scale``
    ``(sigma_w, sigma_a)`` in ``dtype`` on ``device``; :meth:`state_of` is the state of
    weights given by the caller (tests, benchmarks). :meth:`sample` (state, generator)
    draws the batch of the next update for the engine's ``optimizer`` from its ``data``
    ``(X, Y)`` (the training set: the whole of it for ``"gd"``; the next slice of an
    epoch reshuffled by a numpy generator for ``"sgd"``) or, for ``"online"``, ``B``
    fresh samples of ``teacher`` drawn on the device.
    """

    defaults: ClassVar[EngineDefaults] = EngineDefaults(check_every=256)
    # data and weights: train_linear's streams 0 and 1; the batches: stream 2
    streams: ClassVar[StreamLayout] = StreamLayout(data=0, init=1, batch=2)

    @v.constrained(dt=v.POSITIVE, B=v.SIZE, optimizer=v.Choice(*OPTIMIZERS))
    def __init__(self, act: Activation, par: Parameterization, dt: float, B: int,
                 compute: Any = None, *, sizes: tuple[int, int, int] | None = None,
                 init_scale: tuple[float, float] = (1.0, 1.0), dtype: Any = None,
                 device: Any = None, optimizer: str = "gd",
                 data: tuple[Tensor, Tensor] | None = None,
                 teacher: PowerLawTeacher | None = None, loss_scale: float = 1.0) -> None:
        self.t = _torch()
        self.act, self.par, self.dt, self.B = act, par, float(dt), int(B)
        self.s = float(par.output_scale)
        self.compute = compute
        self.kind = self._kind(act)
        self.sizes, self.init_scale = sizes, init_scale
        self.dtype, self.device = dtype, device
        self.optimizer, self.loss_scale = optimizer, loss_scale
        # the data in the products' dtype (bf16 when asked)
        self._data = None if data is None else tuple(
            x.to(compute) if compute is not None else x for x in data)
        self._online = None if teacher is None or optimizer != "online" else \
            _OnlineSampler(teacher, self.B, dtype, device)

    def generator(self, role: str, seed: DerivedSeed) -> Any:
        """The weights' CPU ``torch.Generator`` (:func:`~specdyn.sim.gram.weight_generator`);
        the batches': numpy's for ``"sgd"`` (the epochs' permutations), a device
        ``torch.Generator`` for ``"online"``, none for ``"gd"``."""
        if role != "batch":
            return _gram.weight_generator(seed)
        if self.optimizer == "sgd":
            return np.random.default_rng(seed)
        return self.t.Generator(device=self.device).manual_seed(seed) \
            if self.optimizer == "online" else None

    def sample(self, state: TwoLayerState, generator: Any) -> Batch:
        """The batch of the update of ``state``, drawn from ``generator`` (see the class)."""
        if self.optimizer == "online":
            if self._online is None:
                raise ValueError("optimizer='online' needs the teacher to draw from")
            return Batch(*self._online.draw(generator))
        if self._data is None:
            raise ValueError("sample needs the engine's data (X, Y)")
        X, Y = self._data
        if self.optimizer == "gd":
            return Batch(X, Y)
        M, b = X.shape[0], self.B
        pos = state.updates % -(-M // b)  # the batch's place in its epoch
        epoch = state.epoch
        if pos == 0 or epoch is None:  # a new epoch: one permutation of the samples
            order = self.t.as_tensor(generator.permutation(M), device=X.device)
            epoch = (X[order], Y[order])
        lo = pos * b
        return Batch(epoch[0][lo:lo + b], epoch[1][lo:lo + b], epoch)

    def divergence(self, state0: TwoLayerState) -> Divergence[TwoLayerState]:
        """The batch loss (``loss_before``) against ``loss_scale``, and the weights finite."""
        return network_divergence(self.dt, self.loss_scale, state0.Wt.dtype == self.t.float32,
                                  lambda s: (s.Wt, s.At))

    def init(self, generator: Any) -> TwoLayerState:
        """The state of initial weights drawn from ``generator`` (:func:`init_weights`)."""
        if self.sizes is None:
            raise ValueError("sizes must be given as (N, D, P) for init to draw the weights; "
                             "use state_of(W, A) for weights of your own")
        N, D, P = self.sizes
        return self.state_of(*init_weights(N, D, P, *self.init_scale, self.par, generator,
                                           self.dtype, self.device))

    def state_of(self, W: Tensor, A: Tensor) -> TwoLayerState:
        """The state of initial weights ``W`` (``N x D``), ``A`` (``N x P``) (never
        modified), with the scratch buffers of the passes for their sizes, dtype and
        device."""
        t = self.t
        cdt = W.dtype if self.compute is None else self.compute
        N, D = W.shape
        P = A.shape[1]
        kw = {"dtype": cdt, "device": W.device}
        # CPU: row blocks of _CPU_ROWS keep the B x N temporaries in cache; GPU: one block
        rows = self.B if W.device.type != "cpu" else min(self.B, _CPU_ROWS)
        work = _Work(
            cdt, rows,
            H=t.empty(rows, N, **kw),  # preactivations, then phi in place
            G=t.empty(rows, N, **kw),  # dL/dphi, then dL/dH in place
            R=t.empty(rows, P, **kw),  # residuals
            # phi'(H) for activations without an in-place backward
            dphi=t.empty(rows, N, **kw) if self.kind == "generic" else None,
            gWt=t.empty(D, N, **kw), gAt=t.empty(P, N, **kw))
        # A is also kept row-major: product 2 (phi A) is then a plain NN product too
        return TwoLayerState(W.T.contiguous(), A.T.contiguous(), A.contiguous(), work=work)

    @staticmethod
    def _kind(act: Activation) -> str:
        # fast in-place paths only for the built-in linear and ReLU
        builtin = act is ACTIVATIONS.get(act.name)
        return act.name if builtin and act.name in ("linear", "relu") else "generic"

    def gradients(self, state: TwoLayerState, X: Tensor, Y: Tensor
                  ) -> tuple[Tensor, Tensor, Tensor]:
        """``(L, (dL/dW)^T, (dL/dA)^T)`` at ``state`` on the batch (the gradients are the
        state's ``work`` buffers ``gWt``, ``gAt``: valid until its next pass).

        ``L = (1/2B) sum_m ||s A^T phi(W x_m) - y_m||^2`` as a 0-d tensor (no sync).
        Five products: ``H = X W^T``; ``R = s phi(H) A - Y``; ``G = R A^T``;
        ``(dL/dA)^T = (s/B) R^T phi``; ``(dL/dW)^T = (s/B) X^T (G * phi'(H))``.
        """
        t = self.t
        b = X.shape[0]
        wk = state.work
        if wk is None:
            raise ValueError("a TwoLayerState without its work buffers: make states with "
                             "TwoLayerEngine.init (and step)")
        cdt = wk.cdt
        Wt, At, Ar = state.Wt, state.At, state.Ar
        if cdt != Wt.dtype:
            Wt, At, Ar = Wt.to(cdt), At.to(cdt), Ar.to(cdt)
        if X.dtype != cdt:
            X, Y = X.to(cdt), Y.to(cdt)
        Xt = X.T.contiguous()  # D x B (small): row-major left operand of product 5
        gAt, gWt = wk.gAt, wk.gWt
        loss = X.new_zeros((), dtype=t.float32 if cdt == t.bfloat16 else cdt)
        for lo in range(0, b, wk.rows):  # row blocks: B x N temporaries stay in cache
            hi = min(lo + wk.rows, b)
            n = hi - lo
            H, G, R = wk.H[:n], wk.G[:n], wk.R[:n]
            t.mm(X[lo:hi], Wt, out=H)  # 1: preactivations
            if self.kind == "linear":
                phi = H
            elif self.kind == "relu":
                phi = t.relu_(H)  # in place; phi > 0 exactly where phi'(H) = 1
            else:
                assert wk.dphi is not None
                dphi = wk.dphi[:n]
                dphi.copy_(self.act.deriv(H))
                phi = self.act.fn(H)
            t.addmm(Y[lo:hi], phi, Ar, beta=-1, alpha=self.s, out=R)  # 2: s phi A - Y
            loss = loss + (R.float() if cdt == t.bfloat16 else R).square().sum()
            t.mm(R, At, out=G)  # 3: dL/dphi up to s/B (uses A before its update)
            if lo == 0:
                t.mm(R.T, phi, out=gAt)  # 4: (dL/dA)^T up to s/B
            else:
                gAt.addmm_(R.T, phi)
            if self.kind == "relu":  # G *= 1[phi > 0], one fused in-place pass
                t.ops.aten.threshold_backward.grad_input(G, phi, 0, grad_input=G)
            elif self.kind == "generic":
                G.mul_(dphi)
            if lo == 0:
                t.mm(Xt[:, lo:hi], G, out=gWt)  # 5: (dL/dW)^T up to s/B
            else:
                gWt.addmm_(Xt[:, lo:hi], G)
        gAt.mul_(self.s / b)
        gWt.mul_(self.s / b)
        return loss * (0.5 / b), gWt, gAt

    def step(self, state: TwoLayerState, batch: Batch | tuple[Tensor, Tensor]
             ) -> TwoLayerState:
        """One update on ``batch = (X, Y)`` (a :class:`Batch`): the new state, holding the
        loss before it."""
        loss, gWt, gAt = self.gradients(state, batch[0], batch[1])
        if gWt.dtype != state.Wt.dtype:
            gWt, gAt = gWt.to(state.Wt.dtype), gAt.to(state.At.dtype)
        aw, aa = -self.dt * self.par.lr_w, -self.dt * self.par.lr_a
        # out of place (the state is a value); the same arithmetic as add_, so Ar == At^T
        epoch = batch.epoch if isinstance(batch, Batch) and batch.epoch is not None \
            else state.epoch
        return TwoLayerState(state.Wt.add(gWt, alpha=aw), state.At.add(gAt, alpha=aa),
                             state.Ar.add(gAt.T, alpha=aa), loss, work=state.work,
                             updates=state.updates + 1, epoch=epoch)

    def evaluate(self, state: TwoLayerState, X: Tensor, Y: Tensor, want_phi: bool
                 ) -> tuple[float, Tensor | None]:
        """Loss at ``state`` on ``(X, Y)`` (fresh buffers, any size) and optionally
        ``phi(X W^T)``."""
        phi = self.act.fn(X @ state.Wt)
        R = self.s * (phi @ state.Ar) - Y
        loss = float(R.double().square().sum()) * 0.5 / X.shape[0]
        return loss, (phi if want_phi else None)


@v.constrained(N=v.SIZE, D=v.SIZE, P=v.SIZE, sigma_w=v.NONNEGATIVE, sigma_a=v.NONNEGATIVE)
def init_weights(N: int, D: int, P: int, sigma_w: float, sigma_a: float, par: Parameterization,
                 generator: Any, dtype: Any, device: Any) -> tuple[Tensor, Tensor]:
    """Initial ``(W, A)``: the same standard normals as the linear engines' (a CPU
    ``torch.Generator`` seeded alike, :func:`~specdyn.sim.gram.weight_generator`),
    scaled by ``sigma_w * par.w_std`` and ``sigma_a * par.a_std``."""
    t = _torch()
    ws, as_ = [], []
    for w, a in _gram.weight_chunks(N, D, P, 1.0, 1.0, generator):
        ws.append(w)
        as_.append(a)
    W = (sigma_w * par.w_std) * t.cat(ws)
    A = (sigma_a * par.a_std) * t.cat(as_)
    return (W.to(device=device, dtype=dtype).contiguous(),
            A.to(device=device, dtype=dtype).contiguous())




class _OnlineSampler:
    """Fresh ``(X, Y)`` batches of ``teacher``, drawn on the device (no host traffic) from
    the caller's device generator."""

    def __init__(self, teacher: PowerLawTeacher, batch: int, dtype: Any, device: Any) -> None:
        t = _torch()
        self.t = t
        self.batch, self.dtype, self.device = batch, dtype, device
        self.sqrt_lam = t.as_tensor(np.sqrt(teacher.lam), dtype=dtype, device=device)
        self.rotate = None if teacher.rotation is None else \
            t.as_tensor(np.array(teacher.basis_x.T), dtype=dtype, device=device)
        self.theta = t.as_tensor(np.array(teacher.theta), dtype=dtype, device=device)
        self.noise = teacher.noise_std
        self.P = teacher.P

    def draw(self, generator: Any) -> tuple[Tensor, Tensor]:
        t = self.t
        x = t.randn(self.batch, self.sqrt_lam.numel(), generator=generator, dtype=self.dtype,
                    device=self.device)
        x.mul_(self.sqrt_lam)
        if self.rotate is not None:
            x = x @ self.rotate
        y = x @ self.theta
        if self.noise > 0:
            y.add_(t.randn(self.batch, self.P, generator=generator, dtype=self.dtype,
                           device=self.device), alpha=self.noise)
        return x, y
