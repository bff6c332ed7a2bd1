"""Finite-width two-layer networks with any activation: a fast weight-space engine.

The student is ``f(x) = s * A^T phi(W x)`` (``W``: ``N x D``, ``A``: ``N x P``),
with the output multiplier ``s``, init variances and learning rates of a
:mod:`~specdyn.sim.parameterization`, trained on a
:class:`~specdyn.data.teacher.PowerLawTeacher` by

- ``"gd"``: full-batch gradient descent on ``M`` fixed samples;
- ``"sgd"``: mini-batch SGD on the same ``M`` samples, reshuffled every epoch
  (one step = one mini-batch; the last batch of an epoch may be smaller);
- ``"online"``: one-pass SGD, ``batch_size`` fresh samples every step (the
  population limit); the ``M`` fixed samples are then only a probe set for the
  recorded loss and post-activation spectra.

The loss of a batch of ``B`` samples is ``L = (1/2B) sum_m ||f(x_m) - y_m||^2``
and a step is ``W -= dt lr_w dL/dW``, ``A -= dt lr_a dL/dA``; the time is
``t = steps * dt`` (for the mean-field parameterisation this is the paper's
gradient-flow time).

The forward and backward passes are written by hand: five matrix products a
step with the parameters stored so that every product is row-major, in-place
elementwise passes into preallocated buffers (row blocks on the CPU so they stay
in cache), no autograd, and a host sync only every 256 steps and at
checkpoints (the divergence check). Spectra recorded at checkpoints, all
float64, decreasing:

- ``"preact"``: nonzero eigenvalues of ``H H^T / (M N)``, ``H = X W^T``,
  computed as those of the ``D x D`` matrix ``Sigma^(1/2) (W^T W / N) Sigma^(1/2)``
  with ``Sigma = X^T X / M`` (population ``Sigma`` for ``"online"``); ``D`` values,
  zero-padded when ``M < D``. Uncentred, as in the paper's Appendix G.
- ``"postact"``: nonzero eigenvalues of ``Phi Phi^T / (M N)``, ``Phi = phi(X W^T)``
  on the ``M`` fixed samples, through the smaller of the ``M x M`` and ``N x N``
  Grams; ``min(M, N)`` values, uncentred.
- ``"weights"``: eigenvalues of ``W^T W / N`` (the nonzero ones of ``W W^T / N``), ``D`` values.

Per-mode diagonals in the teacher basis, as for the linear engines:
``"eta"`` (``Gw``), ``"xi"`` (``Gwa``), ``"zeta"`` (``Ga``), with ``A`` expressed in
mean-field units (``A_mf = s gamma0 N A``, the readout that gives the same ``f``
in the paper's Eq. (1)).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from specdyn import _validate as v
from specdyn._progress import progress as _progress
from specdyn._torch import resolve_device, resolve_dtype
from specdyn._torch import torch as _torch
from specdyn.data.teacher import PowerLawTeacher
from specdyn.models.activations import ACTIVATIONS, Activation, get_activation
from specdyn.settings import AlignedSetting, Setting
from specdyn.sim import _gram
from specdyn.sim._run import DivergenceError, resolve_checkpoints, run_seeds, setting_dim
from specdyn.sim.parameterization import Parameterization, get_parameterization
from specdyn.sim.trajectory import Trajectory

OPTIMIZERS = ("gd", "sgd", "online")
RECORDS = ("preact", "postact", "weights")
PRECISIONS = (None, "tf32", "bf16")

Tensor = Any

#: loss above this multiple of the initial loss scale counts as divergence
_BLOWUP = 1e6
#: host syncs for the divergence check at least this often (steps)
_CHECK_EVERY = 256
#: rows per block of the CPU passes (a 128 x N block of float32 is 0.5 MB at N = 1024)
_CPU_ROWS = 128


class TrainingDivergedError(DivergenceError):
    """A run whose loss became non-finite or exploded; ``step`` is the first bad step.

    ``trajectory`` holds the checkpoints recorded before the divergence (all finite).
    """

    def __init__(self, message: str, step: int, trajectory: Trajectory | None) -> None:
        super().__init__(message)
        self.step = step
        self.trajectory = trajectory


# --------------------------------------------------------------------------- engine


class _Engine:
    """Weights, buffers and the hand-written passes of one two-layer network.

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


# --------------------------------------------------------------------------- driver


def train_two_layer(
    setting: Setting,
    activation: str | Activation = "relu",
    *,
    N: int,
    M: int,
    steps: int,
    dt: float = 1.0,
    parameterization: str | Parameterization = "mean-field",
    optimizer: str = "gd",
    batch_size: int | None = None,
    checkpoints: int | Sequence[int] | np.ndarray | None = None,
    record: Sequence[str] = RECORDS,
    seed: int = 0,
    dtype: Any = None,
    device: Any = None,
    teacher: PowerLawTeacher | None = None,
    progress: bool = True,
    precision: str | None = None,
) -> Trajectory:
    """Train ``f(x) = s A^T phi(W x)`` on a power-law teacher and record spectra.

    Parameters
    ----------
    setting
        :class:`~specdyn.settings.PowerLawSetting` (with ``D``) or
        :class:`~specdyn.settings.AlignedSetting`: spectra, ``sigma_w``,
        ``sigma_a`` and ``gamma0``.
    activation
        A name (``linear``, ``relu``, ``tanh``, ``gelu``, ``erf``, ...) or an
        :class:`~specdyn.models.activations.Activation` (any torch callable and its
        derivative).
    N, M, steps
        Width, number of fixed samples (training set, or probe set for
        ``"online"``), number of updates.
    dt
        Step size; time ``t = step * dt``.
    parameterization
        ``"mean-field"`` (the paper's), ``"mup"``, ``"ntk"``, ``"standard"`` or a
        :class:`~specdyn.sim.parameterization.Parameterization`.
    optimizer
        ``"gd"``, ``"sgd"`` or ``"online"`` (see the module docstring).
    batch_size
        Mini-batch size: required for ``"sgd"`` (``1..M``), optional for
        ``"online"`` (fresh samples a step, any size, default ``M``), not
        allowed for ``"gd"``.
    checkpoints
        ``None`` (0 and 60 log-spaced steps), an int count of log-spaced steps, or
        explicit integer steps in ``[0, steps]`` (as :func:`specdyn.sim.train_linear`).
    record
        Subset of ``("preact", "postact", "weights")``.
    seed
        Seeds the weights (same stream as :func:`specdyn.sim.train_linear`), the
        data, the shuffles and the fresh samples.
    dtype
        ``float32`` or ``float64`` (default) for the parameters and products.
    device
        Torch device; default CUDA when present.
    teacher
        The data; default ``PowerLawTeacher(setting)`` (``P = D``, coordinate bases).
    progress
        Show a progress bar (for runs of 500 steps or more).
    precision
        ``None``, ``"tf32"`` (TF32 matrix products) or ``"bf16"`` (bfloat16 products,
        float32 master weights); CUDA only.

    Returns
    -------
    Trajectory
        ``series`` as recorded, ``diagonals`` ``xi``, ``eta``, ``zeta`` and
        ``meta`` (sizes, parameterisation multipliers, wall time, ...).

    Raises
    ------
    ValueError
        Bad arguments (before any work).
    TrainingDivergedError
        The loss became non-finite or grew by ``1e6``; names the step.
    """
    t = _torch()
    # ---- validation, before any work
    D = setting_dim(setting, teacher)  # setting/teacher types and sizes
    act = get_activation(activation)
    N = v.positive_int("N", N)
    M = v.positive_int("M", M)
    steps = v.positive_int("steps", steps)
    dt = v.positive("dt", dt)
    par = get_parameterization(parameterization, N, setting.gamma0)
    optimizer = v.choice("optimizer", optimizer, OPTIMIZERS)
    if optimizer == "gd":
        if batch_size is not None:
            raise ValueError("batch_size must be None for optimizer='gd' (full batch); use "
                             "optimizer='sgd' for mini-batches")
        batch = M
    elif optimizer == "sgd":
        if batch_size is None:
            raise ValueError("batch_size is required for optimizer='sgd' (an integer in "
                             f"[1, M={M}])")
        batch = v.positive_int("batch_size", batch_size)
        if batch > M:
            raise ValueError(f"batch_size must lie in [1, M={M}] for optimizer='sgd', "
                             f"got {batch}")
    else:
        batch = M if batch_size is None else v.positive_int("batch_size", batch_size)
    seed = v.positive_int("seed", seed, minimum=0)
    if isinstance(record, str):
        record = (record,)
    rec = tuple(record)
    for r in rec:
        v.choice("record", r, RECORDS)
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of None, 'tf32', 'bf16'; got {precision!r}")
    dtype = resolve_dtype(dtype)
    if dtype not in (t.float32, t.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}; use "
                         "precision='bf16' for bfloat16 products")
    dev = resolve_device(device)
    if precision is not None:
        if dev.type != "cuda":
            raise ValueError(f"precision={precision!r} needs a CUDA device, got {dev}")
        if dtype != t.float32:
            raise ValueError(f"precision={precision!r} needs dtype=float32")
    ckpts = resolve_checkpoints(checkpoints, steps)
    if teacher is None:
        teacher = PowerLawTeacher(setting if isinstance(setting, AlignedSetting)
                                  else setting.with_D(D))
    P = teacher.P

    # ---- setup
    start = time.perf_counter()
    data_seed, weight_seed = run_seeds(seed)  # the same streams as train_linear
    X, Y = teacher.sample_torch(M, seed=data_seed, dtype=dtype, device=dev)
    if optimizer == "online":
        sigma_pop, c_pop = teacher.population()
        stats = _gram.Stats.build(sigma_pop, c_pop, teacher.output_second_moment())
    else:
        xs, ys = X.double().cpu().numpy(), Y.double().cpu().numpy()
        stats = _gram.Stats.build(xs.T @ xs / M, xs.T @ ys / M, ys.T @ ys / M)
    W, A = init_weights(N, D, P, setting.sigma_w, setting.sigma_a, par, weight_seed, dtype,
                        dev)
    compute = t.bfloat16 if precision == "bf16" else None
    eng = _Engine(W, A, act, par, batch, compute)
    rng = np.random.default_rng([seed, 0x5D])
    sampler = _OnlineSampler(teacher, batch, dtype, dev, int(rng.integers(2**62))) \
        if optimizer == "online" else None
    loss_scale = 0.5 * float(np.trace(stats.syy)) + 1e-300
    a_mf = par.output_scale * setting.gamma0 * N  # A in mean-field units
    bx, by = teacher.basis_x, teacher.basis_y
    identity = teacher.rotation is None

    rec_times, rec_steps, rec_loss = [], [], []
    series: dict[str, list[np.ndarray]] = {r: [] for r in rec}
    diags: dict[str, list[np.ndarray]] = {"xi": [], "eta": [], "zeta": []}

    def snapshot(step: int) -> None:
        loss, phi = eng.evaluate(X, Y, "postact" in rec)
        W64 = eng.W.double()
        A64 = eng.A.double() * a_mf
        gw = (W64.T @ W64 / N).cpu().numpy()
        ga = (A64.T @ A64 / N).cpu().numpy()
        gwa = (W64.T @ A64 / N).cpu().numpy()
        if not (math.isfinite(loss) and np.isfinite(gw).all() and np.isfinite(ga).all()):
            raise _Diverged(step, loss)
        rec_times.append(step * dt)
        rec_steps.append(step)
        rec_loss.append(loss)
        if "preact" in rec:
            series["preact"].append(_gram.spectrum(stats, gw))
        if "weights" in rec:
            series["weights"].append(_sym_eigs(gw))
        if "postact" in rec and phi is not None:
            series["postact"].append(_postact_spectrum(phi, N))
        for name, arr in zip(("xi", "eta", "zeta"),
                             _gram.teacher_diagonals(gw, ga, gwa, bx, by, identity),
                             strict=True):
            diags[name].append(arr)

    def trajectory() -> Trajectory:
        meta = {
            "engine": "two-layer", "activation": act.name, "parameterization": asdict(par),
            "optimizer": optimizer, "batch_size": batch, "N": N, "M": M, "D": D, "P": P,
            "dt": dt, "steps": steps, "seed": seed, "dtype": str(dtype).replace("torch.", ""),
            "device": str(dev), "precision": precision, "setting": setting.to_dict(),
            "teacher": teacher.to_dict(),
            "wall_time_s": time.perf_counter() - start,
        }
        return Trajectory(
            times=np.asarray(rec_times, dtype=np.float64),
            steps=np.asarray(rec_steps, dtype=np.int64),
            loss=np.asarray(rec_loss, dtype=np.float64),
            series={k: _stack(vals) for k, vals in series.items()},
            diagonals={k: _stack(vals) for k, vals in diags.items()},
            meta=meta,
        )

    losses = t.zeros(max(steps, 1), dtype=t.float64, device=dev)
    ck_set = set(int(c) for c in ckpts)
    perm_X, perm_Y, pos = X, Y, M  # sgd epoch state
    old_prec = t.get_float32_matmul_precision()
    last_checked = 0
    try:
        if precision == "tf32":
            t.set_float32_matmul_precision("high")
        X_c = X.to(eng.cdt) if compute is not None else X
        Y_c = Y.to(eng.cdt) if compute is not None else Y
        if 0 in ck_set:
            snapshot(0)
        for i in _progress(range(steps), total=steps, desc="two-layer",
                           enabled=progress and steps >= 500):
            if optimizer == "gd":
                xb, yb = X_c, Y_c
            elif optimizer == "sgd":
                if pos >= M:
                    perm = t.as_tensor(rng.permutation(M), device=dev)
                    perm_X, perm_Y, pos = X_c[perm], Y_c[perm], 0
                xb, yb = perm_X[pos:pos + batch], perm_Y[pos:pos + batch]
                pos += batch
            else:
                assert sampler is not None
                xb, yb = sampler.draw()
            losses[i] = eng.step(xb, yb, dt)
            done = i + 1
            if done in ck_set or done - last_checked >= _CHECK_EVERY or done == steps:
                _check_losses(losses, last_checked, done, loss_scale)
                last_checked = done
                if done in ck_set:
                    snapshot(done)
    except _Diverged as err:
        traj = trajectory() if rec_steps else None
        hint = ", or use dtype=float64" if dtype == t.float32 else ""
        raise TrainingDivergedError(
            f"training diverged at step {err.step} (t = {err.step * dt:g}, loss "
            f"{err.loss:.3g}); the step is too large for this setting: reduce dt (now "
            f"{dt:g}, try dt={dt / 4:g}){hint}", err.step, traj) from None
    finally:
        t.set_float32_matmul_precision(old_prec)
    return trajectory()


# --------------------------------------------------------------------------- helpers


class _Diverged(Exception):
    def __init__(self, step: int, loss: float) -> None:
        super().__init__(step)
        self.step, self.loss = step, loss


def _check_losses(losses: Tensor, lo: int, hi: int, scale: float) -> None:
    """Raise :class:`_Diverged` at the first step in ``[lo, hi)`` with a bad loss."""
    seg = losses[lo:hi]
    bad = ~(seg.abs() <= _BLOWUP * scale)  # NaN-safe: NaN <= x is False
    if bool(bad.any()):
        first = int(bad.nonzero()[0, 0])
        # the loss of step i is measured before update i, i.e. on the weights after i steps
        raise _Diverged(lo + first, float(seg[first]))


class _OnlineSampler:
    """Fresh ``(X, Y)`` batches from the teacher, drawn on the device (no host traffic)."""

    def __init__(self, teacher: PowerLawTeacher, batch: int, dtype: Any, device: Any,
                 seed: int) -> None:
        t = _torch()
        self.t = t
        self.gen = t.Generator(device=device).manual_seed(seed)
        self.batch, self.dtype, self.device = batch, dtype, device
        self.sqrt_lam = t.as_tensor(np.sqrt(teacher.lam), dtype=dtype, device=device)
        self.rotate = None if teacher.rotation is None else \
            t.as_tensor(np.array(teacher.basis_x.T), dtype=dtype, device=device)
        self.theta = t.as_tensor(np.array(teacher.theta), dtype=dtype, device=device)
        self.noise = teacher.noise_std
        self.P = teacher.P

    def draw(self) -> tuple[Tensor, Tensor]:
        t = self.t
        x = t.randn(self.batch, self.sqrt_lam.numel(), generator=self.gen, dtype=self.dtype,
                    device=self.device)
        x.mul_(self.sqrt_lam)
        if self.rotate is not None:
            x = x @ self.rotate
        y = x @ self.theta
        if self.noise > 0:
            y.add_(t.randn(self.batch, self.P, generator=self.gen, dtype=self.dtype,
                           device=self.device), alpha=self.noise)
        return x, y


def _sym_eigs(m: np.ndarray) -> np.ndarray:
    w = np.linalg.eigvalsh(0.5 * (m + m.T))
    return np.clip(w, 0.0, None)[::-1].copy()


def _postact_spectrum(phi: Tensor, N: int) -> np.ndarray:
    """Nonzero eigenvalues of ``phi phi^T / (M N)`` via the smaller Gram, decreasing."""
    t = _torch()
    p = phi.double()
    M = p.shape[0]
    g = p @ p.T if M <= N else p.T @ p
    g = 0.5 * (g + g.T) / (M * N)
    w = t.linalg.eigvalsh(g).cpu().numpy()
    return np.clip(w, 0.0, None)[::-1].copy()


def _stack(vals: list[np.ndarray]) -> np.ndarray:
    if not vals:
        return np.zeros((0, 0))
    return np.stack(vals)
