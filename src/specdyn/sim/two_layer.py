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
from specdyn.schedule import Schedule, ScheduleLike
from specdyn.settings import AlignedSetting, Setting
from specdyn.sim import gram as _gram
from specdyn.sim import protocol
from specdyn.sim.linear import setting_dim
from specdyn.sim.parameterization import Parameterization, get_parameterization
from specdyn.sim.trajectory import Trajectory
from specdyn.sim.two_layer_engine import TwoLayerEngine, TwoLayerState, init_weights

__all__ = ["OPTIMIZERS", "PRECISIONS", "RECORDS", "postact_spectrum", "train_two_layer"]

OPTIMIZERS = ("gd", "sgd", "online")
RECORDS = ("preact", "postact", "weights")
PRECISIONS = (None, "tf32", "bf16")

Tensor = Any

#: loss above this multiple of the initial loss scale counts as divergence
_BLOWUP = 1e6
#: host syncs for the divergence check at least this often (steps)
_CHECK_EVERY = 256

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
    B: int | None = None,
    checkpoints: ScheduleLike = None,
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
    DivergenceError
        The loss became non-finite or grew by ``1e6``; ``.step`` is the first bad
        step, ``.record`` the trajectory recorded before it (``None`` if empty).
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
        if B is not None:
            raise ValueError("B must be None for optimizer='gd' (full batch); use "
                             "optimizer='sgd' for mini-batches")
        batch = M
    elif optimizer == "sgd":
        if B is None:
            raise ValueError("B (the batch size) is required for optimizer='sgd' (an integer "
                             f"in [1, M={M}])")
        batch = v.positive_int("B", B)
        if batch > M:
            raise ValueError(f"B must lie in [1, M={M}] for optimizer='sgd', "
                             f"got {batch}")
    else:
        batch = M if B is None else v.positive_int("B", B)
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
    ckpts = Schedule.of(checkpoints).resolve(steps)
    if teacher is None:
        teacher = PowerLawTeacher(setting if isinstance(setting, AlignedSetting)
                                  else setting.with_D(D))
    P = teacher.P

    # ---- setup
    start = time.perf_counter()
    data_seed, weight_seed = protocol.seed_streams(seed, 2)  # the same streams as train_linear
    X, Y = teacher.sample_torch(M, seed=data_seed, dtype=dtype, device=dev)
    if optimizer == "online":
        sigma_pop, c_pop = teacher.population()
        stats = _gram.Stats.build(sigma_pop, c_pop, teacher.output_second_moment())
    else:
        xs, ys = to_numpy(X, np.float64), to_numpy(Y, np.float64)
        stats = _gram.Stats.build(xs.T @ xs / M, xs.T @ ys / M, ys.T @ ys / M)
    W, A = init_weights(N, D, P, setting.sigma_w, setting.sigma_a, par, weight_seed, dtype,
                        dev)
    compute = t.bfloat16 if precision == "bf16" else None
    eng = TwoLayerEngine(act, par, dt, batch, compute)
    state0 = eng.init(W, A)
    (batch_seed,) = protocol.seed_streams(seed, 1, scheme="tagged")
    rng = np.random.default_rng(batch_seed)
    sampler = _OnlineSampler(teacher, batch, dtype, dev, int(rng.integers(2**62))) \
        if optimizer == "online" else None
    loss_scale = 0.5 * float(np.trace(stats.syy)) + 1e-300
    a_mf = par.output_scale * setting.gamma0 * N  # A in mean-field units
    bx, by = teacher.basis_x, teacher.basis_y
    identity = teacher.rotation is None

    rec_times, rec_steps, rec_loss = [], [], []
    series: dict[str, list[np.ndarray]] = {r: [] for r in rec}
    diags: dict[str, list[np.ndarray]] = {"xi": [], "eta": [], "zeta": []}

    def snapshot(state: TwoLayerState, step: int) -> None:
        loss, phi = eng.evaluate(state, X, Y, "postact" in rec)
        W64 = state.W.double()
        A64 = state.A.double() * a_mf
        gw = to_numpy(W64.T @ W64 / N)
        ga = to_numpy(A64.T @ A64 / N)
        gwa = to_numpy(W64.T @ A64 / N)
        # a checkpoint's own test (the scan watches the batch losses): never record a NaN
        if protocol.first_divergent(np.concatenate(([loss], gw.ravel(), ga.ravel()))) is not None:
            raise _divergence(step, loss)
        rec_times.append(step * dt)
        rec_steps.append(step)
        rec_loss.append(loss)
        if "preact" in rec:
            series["preact"].append(_gram.spectrum(stats, gw))
        if "weights" in rec:
            series["weights"].append(symmetric_eigenvalues(gw, symmetrize=True))
        if "postact" in rec and phi is not None:
            series["postact"].append(postact_spectrum(phi, N))
        for name, arr in zip(("xi", "eta", "zeta"),
                             _gram.teacher_diagonals(gw, ga, gwa, bx, by, identity),
                             strict=True):
            diags[name].append(arr)

    def trajectory() -> Trajectory:
        meta = protocol.record_meta(
            "two_layer", seed=seed, dtype=dtype, device=dev, start=start, steps=steps,
            activation=act.name, parameterization=asdict(par), optimizer=optimizer,
            B=batch, N=N, M=M, D=D, P=P, dt=dt, precision=precision,
            setting=setting.to_dict(), teacher=teacher.to_dict())
        return Trajectory(
            times=np.asarray(rec_times, dtype=np.float64),
            steps=np.asarray(rec_steps, dtype=np.int64),
            loss=np.asarray(rec_loss, dtype=np.float64),
            series={k: _stack(vals) for k, vals in series.items()},
            diagonals={k: _stack(vals) for k, vals in diags.items()},
            meta=meta,
        )

    losses = t.zeros(max(steps, 1), dtype=t.float64, device=dev)
    perm = [X, Y, M]  # sgd epoch state: shuffled X, Y and the position in them
    hint = ", or use dtype=float64" if dtype == t.float32 else ""

    def _divergence(step: int, loss: float) -> protocol.DivergenceError:
        return protocol.DivergenceError(
            f"training diverged at step {step} (t = {step * dt:g}, loss "
            f"{loss:.3g}); the step is too large for this setting: reduce dt (now "
            f"{dt:g}, try dt={dt / 4:g}){hint}", step)

    def step(state: TwoLayerState, k: int) -> TwoLayerState:
        if optimizer == "gd":
            xb, yb = X_c, Y_c
        elif optimizer == "sgd":
            if perm[2] >= M:
                order = t.as_tensor(rng.permutation(M), device=dev)
                perm[:] = [X_c[order], Y_c[order], 0]
            xb, yb = perm[0][perm[2]:perm[2] + batch], perm[1][perm[2]:perm[2] + batch]
            perm[2] += batch
        else:
            assert sampler is not None
            xb, yb = sampler.draw()
        state, losses[k - 1] = eng.step(state, (xb, yb))  # loss of the weights after k - 1 steps
        return state

    # losses[k - 1] is the loss after k - 1 updates: at step k the history ends before k
    check = protocol.scan_check(lambda lo, k: losses[lo:k], _BLOWUP * loss_scale,
                                lambda j: _divergence(j, float(losses[j])))

    old_prec = t.get_float32_matmul_precision()
    try:
        if precision == "tf32":
            t.set_float32_matmul_precision("high")
        X_c = X.to(eng.cdt) if compute is not None else X
        Y_c = Y.to(eng.cdt) if compute is not None else Y
        protocol.drive(state0, step, steps, ckpts, observe=snapshot,
                       check=check, check_every=_CHECK_EVERY,
                       progress=progress and steps >= 500, desc="two-layer",
                       partial=lambda: trajectory() if rec_steps else None)
    finally:
        t.set_float32_matmul_precision(old_prec)
    return trajectory()


# --------------------------------------------------------------------------- helpers


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


def postact_spectrum(phi: Tensor, N: int) -> np.ndarray:
    """Nonzero eigenvalues of ``phi phi^T / (M N)`` via the smaller Gram, decreasing."""
    # phi^T's Gram is phi phi^T (on a tie, M == N, that one: the order of the products
    # is kept); float64, symmetrised, on phi's device
    return gram_eigenvalues(phi.T, divisor=phi.shape[0] * N, symmetrize=True)


def _stack(vals: list[np.ndarray]) -> np.ndarray:
    if not vals:
        return np.zeros((0, 0))
    return np.stack(vals)
