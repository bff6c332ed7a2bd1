"""The weight-space engine of a two-layer network with any activation (hand-written passes).

Used by :func:`specdyn.sim.train_two_layer` (model, parameterisations and
spectra are described there): :class:`TwoLayerEngine` holds the passes and
passes of ``f(x) = s A^T phi(W x)`` and makes one GD/SGD update of a
:class:`TwoLayerState` (the weights, a value, and the scratch buffers of the
passes, which belong to the state) with five matrix products and
no autograd; :func:`init_weights` draws the initial weights from the linear
engines' generator (:func:`~specdyn.sim.gram.weight_generator`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from specdyn import _validate as v
from specdyn._torch import torch as _torch
from specdyn.models.activations import ACTIVATIONS, Activation
from specdyn.sim import gram as _gram
from specdyn.sim.parameterization import Parameterization

__all__ = ["TwoLayerEngine", "TwoLayerState", "init_weights"]

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
    """

    Wt: Tensor
    At: Tensor
    Ar: Tensor
    loss_before: Tensor | None = None
    work: _Work | None = field(default=None, compare=False, repr=False)

    @property
    def W(self) -> Tensor:
        """First-layer weights ``W`` (``N x D`` view)."""
        return self.Wt.T

    @property
    def A(self) -> Tensor:
        """Second-layer weights ``A`` (``N x P``)."""
        return self.Ar


class TwoLayerEngine:
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
    protocol's name for that convention.

    :meth:`init` (generator) draws the initial weights (:func:`init_weights`, from a CPU
    ``torch.Generator``) of the engine's ``sizes`` ``(N, D, P)`` and ``init_scale``
    ``(sigma_w, sigma_a)`` in ``dtype`` on ``device``; :meth:`state_of` is the state of
    weights given by the caller (tests, benchmarks).
    """

    #: Its row of :data:`~specdyn.sim.protocol.ENGINE_DEFAULTS`: the check interval and
    #: divergence factor the driver uses for it.
    defaults: ClassVar[str] = "two_layer"

    @v.constrained(dt=v.POSITIVE, B=v.SIZE)
    def __init__(self, act: Activation, par: Parameterization, dt: float, B: int,
                 compute: Any = None, *, sizes: tuple[int, int, int] | None = None,
                 init_scale: tuple[float, float] = (1.0, 1.0), dtype: Any = None,
                 device: Any = None) -> None:
        self.t = _torch()
        self.act, self.par, self.dt, self.B = act, par, float(dt), int(B)
        self.s = float(par.output_scale)
        self.compute = compute
        self.kind = self._kind(act)
        self.sizes, self.init_scale = sizes, init_scale
        self.dtype, self.device = dtype, device

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

    def step(self, state: TwoLayerState, batch: tuple[Tensor, Tensor]) -> TwoLayerState:
        """One update on ``batch = (X, Y)``: the new state, holding the loss before it."""
        loss, gWt, gAt = self.gradients(state, *batch)
        if gWt.dtype != state.Wt.dtype:
            gWt, gAt = gWt.to(state.Wt.dtype), gAt.to(state.At.dtype)
        aw, aa = -self.dt * self.par.lr_w, -self.dt * self.par.lr_a
        # out of place (the state is a value); the same arithmetic as add_, so Ar == At^T
        return TwoLayerState(state.Wt.add(gWt, alpha=aw), state.At.add(gAt, alpha=aa),
                             state.Ar.add(gAt.T, alpha=aa), loss, work=state.work)

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


