"""Finite-width two-layer networks with any activation: a fast weight-space engine.

The student is ``f(x) = s * A^T phi(W x)`` (``W``: ``N x D``, ``A``: ``N x P``),
with the output multiplier ``s``, init variances and learning rates of a
:mod:`~specdyn.sim.parameterization`, trained on a
:class:`~specdyn.data.teacher.PowerLawTeacher` by

- ``"gd"``: full-batch gradient descent on ``M`` fixed samples;
- ``"sgd"``: mini-batch SGD on the same ``M`` samples, reshuffled every epoch
  (one step = one mini-batch; the last batch of an epoch may be smaller);
- ``"online"``: one-pass SGD, ``B`` fresh samples every step (the
  population limit); the ``M`` fixed samples are then only a probe set for the
  recorded loss and post-activation spectra.

The loss of a batch of ``B`` samples is ``L = (1/2B) sum_m ||f(x_m) - y_m||^2``
and a step is ``W -= dt lr_w dL/dW``, ``A -= dt lr_a dL/dA``; the time is
``t = steps * dt`` (for the mean-field parameterisation this is the paper's
gradient-flow time).

The forward and backward passes (:class:`specdyn.sim.two_layer_engine.TwoLayerEngine`)
are written by hand: five matrix products a
step with the parameters stored so that every product is row-major, in-place
elementwise passes into preallocated buffers (row blocks on the CPU so they stay
in cache), no autograd, and a host sync only every ``check_every`` steps (256,
:data:`~specdyn.sim.protocol.ENGINE_DEFAULTS`) and at checkpoints (the divergence
check). Spectra recorded at checkpoints, all
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

import time
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from specdyn import _validate as v
from specdyn._torch import resolve_device, resolve_dtype, to_numpy
from specdyn._torch import torch as _torch
from specdyn.data.teacher import PowerLawTeacher
from specdyn.measure.spectra import gram_eigenvalues, symmetric_eigenvalues
from specdyn.models.activations import Activation, get_activation
from specdyn.schedule import ScheduleLike
from specdyn.settings import AlignedSetting, Setting
from specdyn.sim import gram as _gram
from specdyn.sim import protocol
from specdyn.sim.linear import setting_dim
from specdyn.sim.parameterization import Parameterization, get_parameterization
from specdyn.sim.protocol import DerivedSeed
from specdyn.sim.trajectory import Trajectory
from specdyn.sim.two_layer_engine import TwoLayerEngine, TwoLayerState

__all__ = ["OPTIMIZERS", "PRECISIONS", "RECORDS", "postact_spectrum", "train_two_layer"]

OPTIMIZERS = ("gd", "sgd", "online")
RECORDS = ("preact", "postact", "weights")
PRECISIONS = (None, "tf32", "bf16")

Tensor = Any

# --------------------------------------------------------------------------- driver


@v.constrained(N=v.SIZE, M=v.SIZE, steps=v.SIZE, dt=v.POSITIVE, optimizer=v.Choice(*OPTIMIZERS),
               B=v.Int(1, optional=True), record=v.Subset(*RECORDS), seed=v.Int(0, optional=True),
               precision=v.Choice(*PRECISIONS))
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
    B: int | None = None,
    checkpoints: ScheduleLike = None,
    record: Sequence[str] = RECORDS,
    seed: int | None = None,
    dtype: Any = None,
    device: Any = None,
    teacher: PowerLawTeacher | None = None,
    progress: bool | None = None,
    precision: str | None = None,
    options: protocol.RunOptions | None = None,
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
    B
        Mini-batch size: required for ``"sgd"`` (``1..M``), optional for
        ``"online"`` (fresh samples a step, any size, default ``M``), not
        allowed for ``"gd"``.
    checkpoints
        A :class:`~specdyn.schedule.Schedule`, ``None`` (0 and 60 log-spaced
        steps), an int count of log-spaced steps, or explicit integer steps in
        ``[0, steps]`` (as :func:`specdyn.sim.train_linear`); all ``steps`` run.
    record
        Subset of ``("preact", "postact", "weights")``.
    seed
        Seeds the weights (same stream as :func:`specdyn.sim.train_linear`), the
        data, the shuffles and the fresh samples (default 0).
    dtype
        ``float32`` or ``float64`` (default) for the parameters and products.
    device
        Torch device; default CUDA when present.
    teacher
        The data; default ``PowerLawTeacher(setting)`` (``P = D``, coordinate bases).
    progress
        Show a progress bar (default off; for runs of ``PROGRESS_MIN_STEPS`` = 500 steps
        or more).
    precision
        ``None``, ``"tf32"`` (TF32 matrix products) or ``"bf16"`` (bfloat16 products,
        float32 master weights); CUDA only.
    options
        The run's :class:`~specdyn.sim.protocol.RunOptions` (seed, dtype, device,
        progress, checkpoints, and the divergence check's ``check_every`` and
        ``divergence_factor``), instead of the shorthand keywords above (not both).

    Returns
    -------
    Trajectory
        ``series`` as recorded, ``diagonals`` ``xi``, ``eta``, ``zeta`` and
        ``meta`` (sizes, parameterisation multipliers, wall time, ...).

    Raises
    ------
    ValueError
        Bad arguments (before any work).
    DivergenceError
        The loss became non-finite or grew by ``1e6``; ``.step`` is the first bad
        step, ``.record`` the trajectory recorded before it (``None`` if empty).
    """
    t = _torch()
    # ---- validation, before any work (the declared constraints above, then these rules)
    opts = protocol.run_options("two_layer", options, seed=seed, dtype=dtype, device=device,
                                progress=progress, checkpoints=checkpoints)
    seed, dtype, device = opts.seed, opts.dtype, opts.device
    D = setting_dim(setting, teacher)  # setting/teacher types and sizes
    act = get_activation(activation)
    par = get_parameterization(parameterization, N, setting.gamma0)
    batch = _batch_size(optimizer, B, M)
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
    ckpts = opts.schedule(steps)
    if teacher is None:
        teacher = PowerLawTeacher(setting if isinstance(setting, AlignedSetting)
                                  else setting.with_D(D))

    # ---- setup: data and weights from the streams of train_linear, then the batch stream
    start = time.perf_counter()
    # streams 0 and 1 are train_linear's (the same data and weights), stream 2 the batches
    data_seed, weight_seed, batch_seed = protocol.seed_streams(seed, 3)
    X, Y = teacher.sample_torch(M, seed=data_seed, dtype=dtype, device=dev)
    if optimizer == "online":
        sigma_pop, c_pop = teacher.population()
        stats = _gram.Stats.build(sigma_pop, c_pop, teacher.output_second_moment())
    else:
        xs, ys = to_numpy(X, np.float64), to_numpy(Y, np.float64)
        stats = _gram.Stats.build(xs.T @ xs / M, xs.T @ ys / M, ys.T @ ys / M)
    eng = TwoLayerEngine(act, par, dt, batch, t.bfloat16 if precision == "bf16" else None,
                         sizes=(N, D, teacher.P), init_scale=(setting.sigma_w, setting.sigma_a),
                         dtype=dtype, device=dev)
    state0 = eng.init(_gram.weight_generator(weight_seed))
    batches = _Batches(optimizer, teacher, X, Y, batch, batch_seed, eng.compute)
    rec = _Recorder(eng, stats, teacher, X, Y, par.output_scale * setting.gamma0 * N,
                    record, dt, lambda: protocol.record_meta(
                        "two_layer", seed=seed, dtype=dtype, device=dev, start=start,
                        steps=steps, activation=act.name, parameterization=asdict(par),
                        optimizer=optimizer, B=batch, N=N, M=M, D=D, P=teacher.P, dt=dt,
                        precision=precision, setting=setting.to_dict(),
                        teacher=teacher.to_dict()))

    # ---- the run: losses[k - 1] is the loss after k - 1 updates, filled by the steps
    losses = t.zeros(max(steps, 1), dtype=t.float64, device=dev)

    def step(state: TwoLayerState, k: int) -> TwoLayerState:
        state = eng.step(state, batches.next())
        losses[k - 1] = state.loss_before
        return state

    hint = ", or use dtype=float64" if dtype == t.float32 else ""
    says = protocol.Divergence("training", protocol.dt_advice(dt) + hint, dt)
    scan = says.check(lambda lo, k: losses[lo:k], 0.5 * float(np.trace(stats.syy)),
                      opts.factor, "batch loss", scale="the zero-output loss")

    def check(state: TwoLayerState, k: int) -> TwoLayerState:
        scan(state, k)  # the batch losses of the states before k
        # state k's own loss is not known before update k + 1: its weights are tested here
        # (w - w is 0 where w is finite, NaN elsewhere), before any checkpoint records it
        if protocol.first_divergent(((state.Wt - state.Wt).sum()
                                     + (state.At - state.At).sum()).reshape(1)) is not None:
            raise says.error(k, "the weights are not finite")
        return state
    old_prec = t.get_float32_matmul_precision()
    try:
        if precision == "tf32":
            t.set_float32_matmul_precision("high")
        protocol.drive(state0, step, steps, ckpts, observe=rec.snapshot, check=check,
                       options=opts, desc="two-layer",
                       partial=lambda: rec.trajectory() if rec.steps else None)
    finally:
        t.set_float32_matmul_precision(old_prec)
    return rec.trajectory()


def _batch_size(optimizer: str, B: int | None, M: int) -> int:
    """The batch of a step: ``M`` for ``"gd"`` (``B`` must be ``None``), ``B`` in ``[1, M]``
    for ``"sgd"``, ``B`` (default ``M``) for ``"online"``."""
    if optimizer == "gd":
        if B is not None:
            raise ValueError("B must be None for optimizer='gd' (full batch); use "
                             "optimizer='sgd' for mini-batches")
        return M
    if optimizer == "sgd":
        if B is None:
            raise ValueError("B (the batch size) is required for optimizer='sgd' (an integer "
                             f"in [1, M={M}])")
        if B > M:
            raise ValueError(f"B must lie in [1, M={M}] for optimizer='sgd', got {B}")
        return B
    return M if B is None else B


class _Batches:
    """The batch of each update: the whole set (``"gd"``), the next slice of a reshuffled
    epoch (``"sgd"``, one permutation from ``rng`` per epoch) or fresh samples
    (``"online"``, a device generator): both from the batch stream ``seed``."""

    def __init__(self, optimizer: str, teacher: PowerLawTeacher, X: Tensor, Y: Tensor,
                 batch: int, seed: DerivedSeed, compute: Any) -> None:
        self.optimizer, self.batch = optimizer, batch
        self.rng = np.random.default_rng(seed)
        self.sampler = _OnlineSampler(teacher, batch, X.dtype, X.device,
                                      seed) if optimizer == "online" else None
        # the data in the products' dtype (bf16 when asked)
        self.X = X.to(compute) if compute is not None else X
        self.Y = Y.to(compute) if compute is not None else Y
        self.M = X.shape[0]
        self.epoch = [self.X, self.Y, self.M]  # shuffled X, Y and the position in them

    def next(self) -> tuple[Tensor, Tensor]:
        """The batch of the next update."""
        if self.optimizer == "gd":
            return self.X, self.Y
        if self.optimizer == "sgd":
            ep, b = self.epoch, self.batch
            if ep[2] >= self.M:
                order = _torch().as_tensor(self.rng.permutation(self.M), device=self.X.device)
                ep[:] = [self.X[order], self.Y[order], 0]
            xb, yb = ep[0][ep[2]:ep[2] + b], ep[1][ep[2]:ep[2] + b]
            ep[2] += b
            return xb, yb
        assert self.sampler is not None
        return self.sampler.draw()


class _Recorder:
    """The checkpoints of a two-layer run: loss, spectra and teacher-basis diagonals (float64
    host arrays), and the :class:`Trajectory` of those taken so far."""

    def __init__(self, eng: TwoLayerEngine, stats: _gram.Stats, teacher: PowerLawTeacher,
                 X: Tensor, Y: Tensor, a_mf: float, record: Sequence[str], dt: float,
                 meta: Any) -> None:
        self.eng, self.stats, self.X, self.Y = eng, stats, X, Y
        self.a_mf, self.rec, self.dt, self.meta = a_mf, tuple(record), dt, meta
        self.bx, self.by, self.identity = teacher.basis_x, teacher.basis_y, \
            teacher.rotation is None
        self.steps: list[int] = []
        self.loss: list[float] = []
        self.series: dict[str, list[np.ndarray]] = {r: [] for r in self.rec}
        self.diags: dict[str, list[np.ndarray]] = {"xi": [], "eta": [], "zeta": []}

    def snapshot(self, state: TwoLayerState, step: int) -> None:
        """Record checkpoint ``step`` (``state`` after ``step`` updates)."""
        eng, N = self.eng, state.Wt.shape[1]
        loss, phi = eng.evaluate(state, self.X, self.Y, "postact" in self.rec)
        W64 = state.W.double()
        A64 = state.A.double() * self.a_mf  # A in mean-field units
        gw = to_numpy(W64.T @ W64 / N)
        ga = to_numpy(A64.T @ A64 / N)
        gwa = to_numpy(W64.T @ A64 / N)
        self.steps.append(step)
        self.loss.append(loss)
        if "preact" in self.rec:
            self.series["preact"].append(_gram.spectrum(self.stats, gw))
        if "weights" in self.rec:
            self.series["weights"].append(symmetric_eigenvalues(gw, symmetrize=True))
        if "postact" in self.rec and phi is not None:
            self.series["postact"].append(postact_spectrum(phi, N))
        for name, arr in zip(("xi", "eta", "zeta"),
                             _gram.teacher_diagonals(gw, ga, gwa, self.bx, self.by,
                                                     self.identity), strict=True):
            self.diags[name].append(arr)

    def trajectory(self) -> Trajectory:
        """The checkpoints recorded so far."""
        steps = np.asarray(self.steps, dtype=np.int64)
        return Trajectory(
            times=np.asarray([k * self.dt for k in self.steps], dtype=np.float64),
            steps=steps,
            loss=np.asarray(self.loss, dtype=np.float64),
            series={k: _stack(vals) for k, vals in self.series.items()},
            diagonals={k: _stack(vals) for k, vals in self.diags.items()},
            meta=self.meta(),
        )


# --------------------------------------------------------------------------- helpers


class _OnlineSampler:
    """Fresh ``(X, Y)`` batches from the teacher, drawn on the device (no host traffic)."""

    def __init__(self, teacher: PowerLawTeacher, batch: int, dtype: Any, device: Any,
                 seed: DerivedSeed) -> None:
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


def postact_spectrum(phi: Tensor, N: int) -> np.ndarray:
    """Nonzero eigenvalues of ``phi phi^T / (M N)`` via the smaller Gram, decreasing."""
    # phi^T's Gram is phi phi^T (on a tie, M == N, that one: the order of the products
    # is kept); float64, symmetrised, on phi's device
    return gram_eigenvalues(phi.T, divisor=phi.shape[0] * N, symmetrize=True)


def _stack(vals: list[np.ndarray]) -> np.ndarray:
    if not vals:
        return np.zeros((0, 0))
    return np.stack(vals)
