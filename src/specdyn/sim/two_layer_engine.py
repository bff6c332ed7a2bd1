"""The weight-space engine of a two-layer network with any activation (hand-written passes).

Used by :func:`specdyn.sim.train_two_layer` (model, parameterisations and
spectra are described there): :class:`TwoLayerEngine` holds the weights and
preallocated buffers of ``f(x) = s A^T phi(W x)`` and makes one GD/SGD update a
step with five matrix products and no autograd; :func:`init_weights` draws the
initial weights from the linear engines' stream.
"""

from __future__ import annotations

from typing import Any

from specdyn._torch import torch as _torch
from specdyn.models.activations import ACTIVATIONS, Activation
from specdyn.sim import gram as _gram
from specdyn.sim.parameterization import Parameterization

__all__ = ["TwoLayerEngine", "init_weights"]

Tensor = Any

#: rows per block of the CPU passes (a 128 x N block of float32 is 0.5 MB at N = 1024)
_CPU_ROWS = 128



class TwoLayerEngine:
    """Weights, buffers and the hand-written passes of one two-layer network.

    The engine object is the run's state (its weights are updated in place):
    :meth:`init` builds it, :meth:`step` makes one update on a batch.

    The parameters are stored transposed, ``Wt = W^T`` (``D x N``) and
    ``At = A^T`` (``P x N``), in ``dtype``: then every ``B x N`` matrix of a step
    is a row-major operand or output of its product, the fast case for BLAS.
    The products run in ``compute`` dtype (``dtype``, or bfloat16 when asked)
    into preallocated buffers. On the CPU a batch is processed in blocks of
    ``_CPU_ROWS`` rows (gradients accumulated over blocks), so that the ``B x N``
    temporaries of the elementwise passes stay in cache; on a GPU in one block.
    """

    def __init__(self, W: Tensor, A: Tensor, act: Activation, par: Parameterization,
                 batch: int, compute: Any = None) -> None:
        t = _torch()
        self.t = t
        self.Wt, self.At = W.T.contiguous(), A.T.contiguous()
        # A is also kept row-major: product 2 (phi A) is then a plain NN product too
        self.Ar = A.contiguous().clone()
        self.act, self.par = act, par
        self.s = float(par.output_scale)
        self.cdt = W.dtype if compute is None else compute
        N, D = W.shape
        P = A.shape[1]
        kw = {"dtype": self.cdt, "device": W.device}
        # CPU: row blocks of _CPU_ROWS keep the B x N temporaries in cache; GPU: one block
        self.rows = batch if W.device.type != "cpu" else min(batch, _CPU_ROWS)
        batch = self.rows
        self.H = t.empty(batch, N, **kw)  # preactivations, then phi in place
        self.G = t.empty(batch, N, **kw)  # dL/dphi, then dL/dH in place
        self.R = t.empty(batch, P, **kw)  # residuals
        # phi'(H) for activations without an in-place backward
        self.dphi = t.empty(batch, N, **kw) if self._kind(act) == "generic" else None
        self.gWt = t.empty(D, N, **kw)
        self.gAt = t.empty(P, N, **kw)
        self.kind = self._kind(act)

    @classmethod
    def init(cls, W: Tensor, A: Tensor, act: Activation, par: Parameterization, batch: int,
             compute: Any = None) -> TwoLayerEngine:
        """The state holding initial weights ``W`` (``N x D``), ``A`` (``N x P``)."""
        return cls(W, A, act, par, batch, compute)

    @staticmethod
    def _kind(act: Activation) -> str:
        # fast in-place paths only for the built-in linear and ReLU
        builtin = act is ACTIVATIONS.get(act.name)
        return act.name if builtin and act.name in ("linear", "relu") else "generic"

    @property
    def W(self) -> Tensor:
        """First-layer weights ``W`` (``N x D`` view)."""
        return self.Wt.T

    @property
    def A(self) -> Tensor:
        """Second-layer weights ``A`` (``N x P``)."""
        return self.Ar

    def gradients(self, X: Tensor, Y: Tensor) -> Tensor:
        """Fill ``gWt``, ``gAt`` with ``(dL/dW)^T``, ``(dL/dA)^T`` on the batch; return ``L``.

        ``L = (1/2B) sum_m ||s A^T phi(W x_m) - y_m||^2`` as a 0-d tensor (no sync).
        Five products: ``H = X W^T``; ``R = s phi(H) A - Y``; ``G = R A^T``;
        ``(dL/dA)^T = (s/B) R^T phi``; ``(dL/dW)^T = (s/B) X^T (G * phi'(H))``.
        """
        t = self.t
        b = X.shape[0]
        Wt = self.Wt if self.cdt == self.Wt.dtype else self.Wt.to(self.cdt)
        At = self.At if self.cdt == self.At.dtype else self.At.to(self.cdt)
        Ar = self.Ar if self.cdt == self.Ar.dtype else self.Ar.to(self.cdt)
        if X.dtype != self.cdt:
            X, Y = X.to(self.cdt), Y.to(self.cdt)
        Xt = X.T.contiguous()  # D x B (small): row-major left operand of product 5
        gAt, gWt = self.gAt, self.gWt
        loss = X.new_zeros((), dtype=t.float32 if self.cdt == t.bfloat16 else self.cdt)
        for lo in range(0, b, self.rows):  # row blocks: B x N temporaries stay in cache
            hi = min(lo + self.rows, b)
            n = hi - lo
            H, G, R = self.H[:n], self.G[:n], self.R[:n]
            t.mm(X[lo:hi], Wt, out=H)  # 1: preactivations
            if self.kind == "linear":
                phi = H
            elif self.kind == "relu":
                phi = t.relu_(H)  # in place; phi > 0 exactly where phi'(H) = 1
            else:
                assert self.dphi is not None
                dphi = self.dphi[:n]
                dphi.copy_(self.act.deriv(H))
                phi = self.act.fn(H)
            t.addmm(Y[lo:hi], phi, Ar, beta=-1, alpha=self.s, out=R)  # 2: s phi A - Y
            loss = loss + (R.float() if self.cdt == t.bfloat16 else R).square().sum()
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
        return loss * (0.5 / b)

    def step(self, X: Tensor, Y: Tensor, dt: float) -> Tensor:
        """One update on the batch; returns the loss before it."""
        loss = self.gradients(X, Y)
        gWt, gAt = self.gWt, self.gAt
        if self.cdt != self.Wt.dtype:
            gWt, gAt = gWt.to(self.Wt.dtype), gAt.to(self.At.dtype)
        self.Wt.add_(gWt, alpha=-dt * self.par.lr_w)
        self.At.add_(gAt, alpha=-dt * self.par.lr_a)
        self.Ar.add_(gAt.T, alpha=-dt * self.par.lr_a)  # same arithmetic: stays equal to At^T
        return loss

    def evaluate(self, X: Tensor, Y: Tensor, want_phi: bool) -> tuple[float, Tensor | None]:
        """Loss on ``(X, Y)`` (fresh buffers, any size) and optionally ``phi(X W^T)``."""
        phi = self.act.fn(X @ self.Wt)
        R = self.s * (phi @ self.Ar) - Y
        loss = float(R.double().square().sum()) * 0.5 / X.shape[0]
        return loss, (phi if want_phi else None)


def init_weights(N: int, D: int, P: int, sigma_w: float, sigma_a: float, par: Parameterization,
                 seed: int, dtype: Any, device: Any) -> tuple[Tensor, Tensor]:
    """Initial ``(W, A)``: the same standard normals as the linear engines' (same seed),
    scaled by ``sigma_w * par.w_std`` and ``sigma_a * par.a_std``."""
    t = _torch()
    ws, as_ = [], []
    for w, a in _gram.weight_chunks(N, D, P, 1.0, 1.0, seed):
        ws.append(w)
        as_.append(a)
    W = (sigma_w * par.w_std) * t.cat(ws)
    A = (sigma_a * par.a_std) * t.cat(as_)
    return (W.to(device=device, dtype=dtype).contiguous(),
            A.to(device=device, dtype=dtype).contiguous())


