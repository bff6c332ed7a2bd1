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

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from specdyn import _validate as v
from specdyn._torch import to_numpy
from specdyn._torch import torch as _torch
from specdyn.data.teacher import PowerLawTeacher
from specdyn.measure import gram_eigenvalues
from specdyn.models.activations import ACTIVATIONS, Activation, get_activation
from specdyn.settings import Setting
from specdyn.sim import gram as _gram
from specdyn.sim.config import SimConfig
from specdyn.sim.inputs import RunInputs, Setup
from specdyn.sim.loop import run
from specdyn.sim.options import RunOptions
from specdyn.sim.parameterization import (
    PARAMETERIZATIONS,
    Parameterization,
    get_parameterization,
)
from specdyn.sim.recording import (
    Observable,
    PerState,
    SpectrumRecorder,
    eigenvalues,
    gram_spectrum_of,
    low_rank_eigenvalues,
)
from specdyn.sim.registry import entry_point
from specdyn.sim.system import SETTING, TEACHER, System
from specdyn.sim.trajectory import Trajectory
from specdyn.sim.two_layer_engine import OPTIMIZERS, TwoLayerEngine, TwoLayerState

if TYPE_CHECKING:
    from typing import Unpack

    from specdyn.sim.options import RunKeywords

__all__ = ["OPTIMIZERS", "PRECISIONS", "RECORDS", "TwoLayerConfig", "postact_spectrum",
           "train_two_layer", "two_layer_recorder"]

RECORDS = ("preact", "postact", "weights")
PRECISIONS = (None, "tf32", "bf16")

Tensor = Any


@dataclass(frozen=True, kw_only=True)
@v.constrained_fields(activation=v.Instance(Activation, names=ACTIVATIONS), N=v.SIZE,
                      M=v.SIZE, steps=v.SIZE, dt=v.POSITIVE,
                      parameterization=v.Instance(Parameterization, names=PARAMETERIZATIONS),
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


def _example() -> Any:
    from specdyn.settings import FEATURE_LEARNING

    return (FEATURE_LEARNING.setting(D=6),), {"N": 8, "M": 8, "steps": 40,
                                                     "progress": False, "device": "cpu"}


@entry_point(TwoLayerConfig, example=_example)
@v.constrained(setting=SETTING, teacher=TEACHER)
def train_two_layer(setting: Setting, activation: str | Activation = "relu", *, N: int, M: int,
                    steps: int, dt: float = 1.0,
                    parameterization: str | Parameterization = "mean-field",
                    optimizer: str = "gd", B: int | None = None,
                    record: Sequence[str] = RECORDS, precision: str | None = None,
                    teacher: PowerLawTeacher | None = None, options: RunOptions | None = None,
                    **shorthands: Unpack[RunKeywords]) -> Trajectory:
    """Train ``f(x) = s A^T phi(W x)`` on a power-law teacher and record spectra.

    Parameters
    ----------
    setting
        :class:`~specdyn.settings.PowerLawSetting` (with ``D``) or
        :class:`~specdyn.settings.AlignedSetting`: spectra, ``sigma_w``,
        ``sigma_a`` and ``gamma0``.
    activation, N, M, steps, dt, parameterization, optimizer, B, record, precision
        The network, its sizes and its training (:class:`TwoLayerConfig`, where each is
        documented).
    teacher
        The data; default ``PowerLawTeacher(setting)`` (``P = D``, coordinate bases).
    options, **shorthands
        The run's :class:`~specdyn.sim.options.RunOptions`, or its fields as keywords.

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
    cfg = TwoLayerConfig.of_call(locals(), entry="train_two_layer")
    system = System.of(setting, teacher)
    act = get_activation(cfg.activation)
    par = get_parameterization(cfg.parameterization, cfg.N, setting.gamma0)
    batch = cfg.batch_size()

    def build(inputs: RunInputs) -> tuple[TwoLayerEngine, SpectrumRecorder[Any, Trajectory]]:
        dtype, dev = inputs.dtype, inputs.device  # rules that link them, before any work
        if dtype not in (t.float32, t.float64):
            raise ValueError(f"dtype must be float32 or float64, got {dtype}; use "
                             "precision='bf16' for bfloat16 products")
        if cfg.precision is not None:
            if dev.type != "cuda":
                raise ValueError(f"precision={cfg.precision!r} needs a CUDA device, got {dev}")
            if dtype != t.float32:
                raise ValueError(f"precision={cfg.precision!r} needs dtype=float32")
        X, Y = system.sample_torch(cfg.M, inputs)  # train_linear's data stream
        stats = system.stats(None if cfg.optimizer == "online" else
                             (to_numpy(X, np.float64), to_numpy(Y, np.float64)))
        s = system.setting
        eng = TwoLayerEngine(act, par, cfg.dt, batch,
                             t.bfloat16 if cfg.precision == "bf16" else None,
                             sizes=(cfg.N, system.D, system.P), init_scale=(s.sigma_w, s.sigma_a),
                             dtype=dtype, device=dev, optimizer=cfg.optimizer, data=(X, Y),
                             teacher=system.teacher, loss_scale=0.5 * float(np.trace(stats.syy)))
        meta = {"activation": act.name, "parameterization": asdict(par),
                "optimizer": cfg.optimizer, "B": batch, "N": cfg.N, "M": cfg.M, "dt": cfg.dt,
                "precision": cfg.precision, **system.meta()}
        return eng, two_layer_recorder(eng, stats, system, (X, Y),
                                       par.output_scale * s.gamma0 * cfg.N, cfg.record, meta)

    old_prec = t.get_float32_matmul_precision()
    try:
        if cfg.precision == "tf32":
            t.set_float32_matmul_precision("high")
        return run(Setup("two_layer", TwoLayerEngine.streams, build), steps=cfg.steps,
                   options=cfg.options, checkpoints=cfg.options.schedule(cfg.steps),
                   desc="two-layer")
    finally:
        t.set_float32_matmul_precision(old_prec)


def two_layer_recorder(eng: TwoLayerEngine, stats: _gram.Stats, system: System,
                       data: tuple[Any, Any], a_mf: float, record: Sequence[str],
                       meta: dict[str, Any]) -> SpectrumRecorder[TwoLayerState, Trajectory]:
    """The recorder of a two-layer run: the loss on ``data``, the spectra of ``record`` and
    the teacher-basis diagonals (``A`` in mean-field units, ``A_mf = a_mf A``), float64
    host arrays (module docstring)."""
    X, Y = data
    want_phi = "postact" in record

    def host(state: TwoLayerState) -> tuple[float, Any, _gram.Grams]:
        loss, phi = eng.evaluate(state, X, Y, want_phi)
        W64, N = state.W.double(), state.Wt.shape[1]
        A64 = state.A.double() * a_mf  # A in mean-field units
        return loss, phi, (to_numpy(W64.T @ W64 / N), to_numpy(A64.T @ A64 / N),
                           to_numpy(W64.T @ A64 / N))

    view = PerState(host)
    spectra: dict[str, Observable[TwoLayerState]] = {
        "preact": Observable(lambda st: stats.sigma_half @ view(st)[2][0] @ stats.sigma_half,
                             low_rank_eigenvalues),
        "postact": Observable(lambda st: view(st)[1],
                              gram_spectrum_of(lambda phi: phi.shape[0] * phi.shape[1])),
        "weights": Observable(lambda st: view(st)[2][0], eigenvalues)}
    return SpectrumRecorder({
        "loss": lambda st: view(st)[0], **{name: spectra[name] for name in record},
        "diagonals": lambda st: _gram.teacher_diagonals(view(st)[2], system.teacher)},
        dt=eng.dt, meta=meta)


def postact_spectrum(phi: Any, N: int) -> np.ndarray:
    """Nonzero eigenvalues of ``phi phi^T / (M N)`` via the smaller Gram, decreasing."""
    # phi^T's Gram is phi phi^T (on a tie, M == N, that one: the order of the products
    # is kept); float64, symmetrised, on phi's device
    return gram_eigenvalues(phi.T, divisor=phi.shape[0] * N, symmetrize=True)
