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
the engine's :class:`~specdyn.sim.options.EngineDefaults`) and at checkpoints (the
divergence check). Spectra recorded at checkpoints, all float64, decreasing:

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
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from specdyn import _validate as v
from specdyn._torch import resolve_device, resolve_dtype, to_numpy
from specdyn._torch import torch as _torch
from specdyn.data.teacher import PowerLawTeacher
from specdyn.measure.spectra import gram_eigenvalues, symmetric_eigenvalues
from specdyn.models.activations import Activation, get_activation
from specdyn.settings import AlignedSetting, Setting
from specdyn.sim import gram as _gram
from specdyn.sim import protocol
from specdyn.sim.config import SimConfig
from specdyn.sim.linear import setting_dim
from specdyn.sim.loop import run
from specdyn.sim.parameterization import Parameterization, get_parameterization
from specdyn.sim.protocol import Outcome
from specdyn.sim.trajectory import Trajectory, TrajectoryRows
from specdyn.sim.two_layer_engine import OPTIMIZERS, TwoLayerEngine, TwoLayerState

__all__ = ["OPTIMIZERS", "PRECISIONS", "RECORDS", "TwoLayerConfig", "postact_spectrum",
           "train_two_layer"]

RECORDS = ("preact", "postact", "weights")
PRECISIONS = (None, "tf32", "bf16")

Tensor = Any


@dataclass(frozen=True, kw_only=True)
@v.constrained_fields(N=v.SIZE, M=v.SIZE, steps=v.SIZE, dt=v.POSITIVE,
                      optimizer=v.Choice(*OPTIMIZERS), B=v.Int(1, optional=True),
                      record=v.Subset(*RECORDS), precision=v.Choice(*PRECISIONS))
class TwoLayerConfig(SimConfig):
    """How :func:`train_two_layer` trains ``f(x) = s A^T phi(W x)``: every parameter, once.

    Attributes
    ----------
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
    record
        Subset of ``("preact", "postact", "weights")``.
    precision
        ``None``, ``"tf32"`` (TF32 matrix products) or ``"bf16"`` (bfloat16 products,
        float32 master weights); CUDA only.
    options
        The run's options (:class:`~specdyn.sim.config.SimConfig`): ``checkpoints``
        ``None`` is 0 and 60 log-spaced steps (as :func:`specdyn.sim.train_linear`),
        all ``steps`` run; the seed seeds the data and weights (the streams of
        :func:`specdyn.sim.train_linear`), then the shuffles and the fresh samples;
        ``dtype`` is ``float32`` or ``float64`` (default) for the parameters and
        products; ``device`` default CUDA when present.
    """

    activation: str | Activation = "relu"
    N: int
    M: int
    steps: int
    dt: float = 1.0
    parameterization: str | Parameterization = "mean-field"
    optimizer: str = "gd"
    B: int | None = None
    record: Sequence[str] = RECORDS
    precision: str | None = None

    def batch_size(self) -> int:
        """The batch of a step: ``M`` for ``"gd"`` (``B`` must be ``None``), ``B`` in
        ``[1, M]`` for ``"sgd"``, ``B`` (default ``M``) for ``"online"``."""
        B, M = self.B, self.M
        if self.optimizer == "gd":
            if B is not None:
                raise ValueError("B must be None for optimizer='gd' (full batch); use "
                                 "optimizer='sgd' for mini-batches")
            return M
        if self.optimizer == "sgd":
            if B is None:
                raise ValueError("B (the batch size) is required for optimizer='sgd' (an "
                                 f"integer in [1, M={M}])")
            if B > M:
                raise ValueError(f"B must lie in [1, M={M}] for optimizer='sgd', got {B}")
            return B
        return M if B is None else B


def train_two_layer(setting: Setting, activation: str | Activation = "relu", *,
                    teacher: PowerLawTeacher | None = None, **options: Any) -> Trajectory:
    """Train ``f(x) = s A^T phi(W x)`` on a power-law teacher and record spectra.

    Parameters
    ----------
    setting
        :class:`~specdyn.settings.PowerLawSetting` (with ``D``) or
        :class:`~specdyn.settings.AlignedSetting`: spectra, ``sigma_w``,
        ``sigma_a`` and ``gamma0``.
    activation
        The activation (:class:`TwoLayerConfig`).
    teacher
        The data; default ``PowerLawTeacher(setting)`` (``P = D``, coordinate bases).
    **options
        The fields of :class:`TwoLayerConfig` (``N``, ``M``, ``steps`` required), the run
        options' shorthands (``checkpoints``, ``seed``, ``dtype``, ``device``,
        ``progress``) or ``options``.

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
        step, ``.record`` the trajectory recorded before it.
    """
    t = _torch()
    # ---- validation, before any work (the declared constraints, then these rules)
    cfg = TwoLayerConfig.of({"activation": activation, **options}, entry="train_two_layer")
    opts = cfg.options
    D = setting_dim(setting, teacher)  # setting/teacher types and sizes
    act = get_activation(cfg.activation)
    N, M, steps, dt = cfg.N, cfg.M, cfg.steps, cfg.dt
    par = get_parameterization(cfg.parameterization, N, setting.gamma0)
    batch = cfg.batch_size()
    dtype = resolve_dtype(opts.dtype)
    if dtype not in (t.float32, t.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}; use "
                         "precision='bf16' for bfloat16 products")
    dev = resolve_device(opts.device)
    if cfg.precision is not None:
        if dev.type != "cuda":
            raise ValueError(f"precision={cfg.precision!r} needs a CUDA device, got {dev}")
        if dtype != t.float32:
            raise ValueError(f"precision={cfg.precision!r} needs dtype=float32")
    ckpts = opts.schedule(steps)
    if teacher is None:
        teacher = PowerLawTeacher(setting if isinstance(setting, AlignedSetting)
                                  else setting.with_D(D))

    # ---- setup: the data (train_linear's stream), the engine, the recorder
    start = time.perf_counter()
    X, Y = teacher.sample_torch(M, seed=TwoLayerEngine.streams.seed(opts.seed, "data"),
                                dtype=dtype, device=dev)
    if cfg.optimizer == "online":
        sigma_pop, c_pop = teacher.population()
        stats = _gram.Stats.build(sigma_pop, c_pop, teacher.output_second_moment())
    else:
        xs, ys = to_numpy(X, np.float64), to_numpy(Y, np.float64)
        stats = _gram.Stats.build(xs.T @ xs / M, xs.T @ ys / M, ys.T @ ys / M)
    eng = TwoLayerEngine(act, par, dt, batch, t.bfloat16 if cfg.precision == "bf16" else None,
                         sizes=(N, D, teacher.P), init_scale=(setting.sigma_w, setting.sigma_a),
                         dtype=dtype, device=dev, optimizer=cfg.optimizer, data=(X, Y),
                         teacher=teacher, loss_scale=0.5 * float(np.trace(stats.syy)))
    rec = _Recorder(eng, stats, teacher, X, Y, par.output_scale * setting.gamma0 * N,
                    cfg.record, dt, lambda: protocol.record_meta(
                        "two_layer", seed=opts.seed, dtype=dtype, device=dev, start=start,
                        steps=steps, activation=act.name, parameterization=asdict(par),
                        optimizer=cfg.optimizer, B=batch, N=N, M=M, D=D, P=teacher.P, dt=dt,
                        precision=cfg.precision, setting=setting.to_dict(),
                        teacher=teacher.to_dict()))
    old_prec = t.get_float32_matmul_precision()
    try:
        if cfg.precision == "tf32":
            t.set_float32_matmul_precision("high")
        return run(eng, rec, steps=steps, options=opts, checkpoints=ckpts, desc="two-layer")
    finally:
        t.set_float32_matmul_precision(old_prec)


class _Recorder:
    """The checkpoints of a two-layer run: loss, spectra and teacher-basis diagonals (float64
    host arrays), and the :class:`Trajectory` of those taken so far."""

    def __init__(self, eng: TwoLayerEngine, stats: _gram.Stats, teacher: PowerLawTeacher,
                 X: Tensor, Y: Tensor, a_mf: float, record: Sequence[str], dt: float,
                 meta: Any) -> None:
        self.eng, self.stats, self.X, self.Y = eng, stats, X, Y
        self.a_mf, self.rec = a_mf, tuple(record)
        self.bx, self.by, self.identity = teacher.basis_x, teacher.basis_y, \
            teacher.rotation is None
        self.rows = TrajectoryRows(dt, self.rec, meta)

    def snapshot(self, state: TwoLayerState, step: int) -> None:
        """Record checkpoint ``step`` (``state`` after ``step`` updates)."""
        eng, N = self.eng, state.Wt.shape[1]
        loss, phi = eng.evaluate(state, self.X, self.Y, "postact" in self.rec)
        W64 = state.W.double()
        A64 = state.A.double() * self.a_mf  # A in mean-field units
        gw = to_numpy(W64.T @ W64 / N)
        ga = to_numpy(A64.T @ A64 / N)
        gwa = to_numpy(W64.T @ A64 / N)
        series = {}
        if "preact" in self.rec:
            series["preact"] = _gram.spectrum(self.stats, gw)
        if "weights" in self.rec:
            series["weights"] = symmetric_eigenvalues(gw, symmetrize=True)
        if "postact" in self.rec and phi is not None:
            series["postact"] = postact_spectrum(phi, N)
        self.rows.add(step, loss, series, _gram.teacher_diagonals(gw, ga, gwa, self.bx,
                                                                  self.by, self.identity))

    def finish(self, outcome: Outcome[TwoLayerState]) -> Trajectory:
        """The checkpoints taken (all of them, or those before a divergence)."""
        return self.rows.trajectory()


def postact_spectrum(phi: Tensor, N: int) -> np.ndarray:
    """Nonzero eigenvalues of ``phi phi^T / (M N)`` via the smaller Gram, decreasing."""
    # phi^T's Gram is phi phi^T (on a tie, M == N, that one: the order of the products
    # is kept); float64, symmetrised, on phi's device
    return gram_eigenvalues(phi.T, divisor=phi.shape[0] * N, symmetrize=True)
