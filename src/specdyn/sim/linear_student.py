"""Single-layer linear students trained by GD, mini-batch SGD or online SGD.

Model (``docs/related-works.md`` section 1; its notes write ``N x M`` for our ``P x D``):
student ``W`` (``P x D``), input ``x ~ N(0, I_D)``, teacher labels
``y = W* x + noise_std * eps`` with ``eps ~ N(0, I_P)``, loss
``(1 / 2B) sum_b ||W x_b - y_b||^2`` over a batch of ``B``; the update is
``W <- W - lr * grad``. ``W0`` has i.i.d. ``N(0, sigma0^2 / D)`` entries.

How a student sees its teacher is one :class:`Sampling` (the ``sampling=`` of both linear
students): its ``method``, the data set's ``M``, the batch ``B`` and ``noise_std``.

Methods
-------
``"population"``
    Exact population gradient ``W - W*`` (``Sigma = I``; label noise is irrelevant).
``"gd"``
    Full-batch GD on a fixed data set of ``M`` samples.
``"sgd"``
    Mini-batch SGD on that data set, batch ``B`` in ``[1, M]``,
    batches drawn uniformly with replacement of samples across steps (a fresh
    random subset without repeats every step).
``"online"``
    A fresh batch of ``B`` Gaussian samples every step.

``replicas`` independent students (own init and data stream) run side by side
(batched tensors), so that mean-square quantities can be averaged. A run whose
mean squared error exceeds ``divergence_factor`` times its start (or stops
being finite) raises :class:`~specdyn.sim.divergence.DivergenceError`, whose
``record`` holds the run up to the first bad step (its squared error kept
when finite).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from specdyn import _torch
from specdyn import _validate as v
from specdyn.measure.spectra import decompose, device_eigenvalues
from specdyn.schedule import Schedule
from specdyn.sim import protocol
from specdyn.sim.config import SimConfig
from specdyn.sim.inputs import RunInputs, Setup
from specdyn.sim.linear_student_engine import METHODS, LinearStudentEngine, LinearStudentState
from specdyn.sim.loop import run
from specdyn.sim.options import RunOptions
from specdyn.sim.protocol import Outcome
from specdyn.sim.recording import Observable, Recorded, SpectrumRecorder
from specdyn.sim.registry import entry_point

if TYPE_CHECKING:
    from typing import Unpack

    from specdyn.sim.options import RunKeywords

__all__ = ["LinearStudentConfig", "LinearStudentRun", "Sampling", "StudentConfig",
           "rank_one_teacher", "teacher_matrix", "train_linear_student"]

Tensor = Any


@v.constrained(P=v.SIZE, D=v.SIZE, theta=v.NONNEGATIVE, seed=v.SEED)
def rank_one_teacher(P: int, D: int, theta: float, seed: int = 0
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(W*, u, v)`` with ``W* = theta u v^T`` (``P x D``), ``u``, ``v`` uniform unit
    vectors (float64)."""
    n, m, th = P, D, theta
    rng = np.random.default_rng(protocol.derive_seed(seed))
    u = rng.standard_normal(n)
    u /= np.linalg.norm(u)
    w = rng.standard_normal(m)
    w /= np.linalg.norm(w)
    return th * np.outer(u, w), u, w


@dataclass(frozen=True)
class LinearStudentRun(protocol.Record):
    """Record of one run (host float64 arrays).

    Attributes
    ----------
    sq_error
        ``(steps + 1, R)`` ``||W_t - W*||_F^2`` of every replica at every step.
    steps
        ``(n,)`` steps at which spectra were recorded.
    singular_values
        ``(n, k)`` singular values of ``W`` (replica 0), decreasing; ``k`` is
        ``top_k`` or ``min(P, D)`` for the full spectrum.
    left_overlap2, right_overlap2
        ``(n,)`` squared overlaps of the top left/right singular vectors of
        ``W`` (replica 0) with the teacher's top singular vectors (``nan`` for a
        zero teacher).
    meta
        The fixed keys of :func:`~specdyn.sim.protocol.record_meta`, then method,
        sizes, lr, batch size.
    """

    sq_error: np.ndarray
    steps: np.ndarray
    singular_values: np.ndarray
    left_overlap2: np.ndarray
    right_overlap2: np.ndarray

    @property
    def mean_sq_error(self) -> np.ndarray:
        """``(steps + 1,)`` replica average of the squared error."""
        return np.asarray(self.sq_error.mean(axis=1))


@dataclass(frozen=True)
@v.constrained_fields(method=v.Choice(*METHODS), M=v.Int(1, optional=True),
                      B=v.Int(1, optional=True), noise_std=v.NONNEGATIVE)
class Sampling:
    """How a linear student sees its teacher: the method, its data set and batch, the label
    noise. One object for both linear students (:func:`train_linear_student`,
    :func:`~specdyn.sim.deep_linear.train_deep_linear`, their ``sampling=``); checked when
    made, ``B`` against the data set's size when the run knows it.

    ``Sampling()`` is the exact population gradient; ``Sampling("gd", M=1000)`` full-batch
    GD on 1000 samples; ``Sampling("sgd", M=1000, B=32, noise_std=0.1)`` mini-batches of a
    noisy data set; ``Sampling("online", B=32)`` a fresh batch every step.

    Attributes
    ----------
    method
        One of :data:`~specdyn.sim.linear_student_engine.METHODS`: ``"population"`` (exact
        population gradient, the default), ``"gd"`` (full batch on ``M`` samples),
        ``"sgd"`` (batch ``B`` in ``[1, M]``) or ``"online"`` (a fresh batch of ``B``
        every step).
    M
        Data-set size for ``"gd"`` and ``"sgd"`` (``>= 1``; ignored otherwise). The single
        layer's given ``inputs`` set it (``M``, if given too, must match).
    B
        Batch size, required for ``"sgd"`` (in ``[1, M]``) and ``"online"`` (``>= 1``;
        ignored otherwise).
    noise_std
        Label noise standard deviation (``>= 0``).
    """

    method: str = "population"
    M: int | None = field(default=None, kw_only=True)
    B: int | None = field(default=None, kw_only=True)
    noise_std: float = field(default=0.0, kw_only=True)

    def __post_init__(self) -> None:
        if self.method in ("sgd", "online") and self.B is None:
            raise ValueError(f"B (the batch size) must be given for method {self.method!r}")

    def data_size(self, rows: int | None = None) -> int:
        """The data set's size for ``"gd"``/``"sgd"``: the ``rows`` of given inputs (which
        ``M``, if given, must match) or ``M`` (then required); 0 for the other methods."""
        if self.method not in ("gd", "sgd"):
            return 0
        if rows is not None:
            if self.M is not None and self.M != rows:
                raise ValueError(f"M={self.M!r} disagrees with inputs ({rows} rows)")
            return rows
        if self.M is None:
            raise ValueError(f"M must be given (an integer >= 1) for method {self.method!r}")
        return self.M

    def batch_size(self, M: int) -> int:
        """The batch ``B`` of ``"sgd"`` (checked to lie in ``[1, M]``, ``M`` the data set's
        size) and ``"online"``; 0 otherwise."""
        if self.method not in ("sgd", "online"):
            return 0
        assert self.B is not None  # required for these methods (checked when made)
        if self.method == "sgd" and self.B > M:
            raise ValueError(f"B must lie in [1, M={M}], got {self.B!r}")
        return self.B


@dataclass(frozen=True, kw_only=True)
@v.constrained_fields(lr=v.POSITIVE, steps=v.SIZE, sigma0=v.POSITIVE,
                      sampling=v.Instance(Sampling))
class StudentConfig(SimConfig):
    """What the linear students' configs share (:class:`LinearStudentConfig`,
    :class:`~specdyn.sim.deep_linear.DeepLinearConfig`): the rate, the length, the init
    scale and how the data are seen.

    Attributes
    ----------
    lr
        Step size ``> 0`` (the deep students' base rate ``eta0``).
    steps
        Number of updates, ``>= 1`` (all are run).
    sigma0
        Init scale ``> 0`` (each student's model says how it scales the draw).
    sampling
        The method, its data set ``M`` and batch ``B``, the label noise ``noise_std``: a
        :class:`Sampling`, documented there (default ``Sampling()``, the exact population
        gradient).
    """

    lr: float
    steps: int
    sigma0: float = 1.0
    sampling: Sampling = Sampling()


@dataclass(frozen=True, kw_only=True)
@v.constrained_fields(replicas=v.SIZE, top_k=v.Int(1, optional=True), overlaps=v.Bool())
class LinearStudentConfig(StudentConfig):
    """How :func:`train_linear_student` trains: :class:`StudentConfig` 's fields (``lr``,
    ``steps``, ``sigma0``, ``sampling``: a :class:`Sampling`'s ``method``, ``M``, ``B``,
    ``noise_std``) and these.

    Attributes
    ----------
    replicas
        Independent students run together (``>= 1``).
    top_k
        Number of singular values kept (``None``: all ``min(P, D)``).
    overlaps
        Also record singular-vector overlaps with the teacher (needs a full SVD).
    options
        The run's options (:class:`~specdyn.sim.config.SimConfig`); ``checkpoints``
        (when to record spectra) ``None`` is ``Schedule.every(1)``, every step; the
        divergence check's default: the mean squared error above ``1e8`` times its start,
        checked every 50 steps.
    """

    replicas: int = 1
    top_k: int | None = 8
    overlaps: bool = True


def _example() -> Any:
    return (np.eye(3, 4),), {"lr": 0.1, "steps": 40, "sampling": Sampling("sgd", M=10, B=2),
                             "device": "cpu"}


@entry_point(LinearStudentConfig, example=_example)
def train_linear_student(teacher: ArrayLike, *, lr: float, steps: int, sigma0: float = 1.0,
                         sampling: Sampling = Sampling(), replicas: int = 1,
                         top_k: int | None = 8, overlaps: bool = True,
                         inputs: ArrayLike | None = None, options: RunOptions | None = None,
                         **shorthands: Unpack[RunKeywords]) -> LinearStudentRun:
    """Train a single-layer linear student on ``teacher`` and record its spectrum.

    Parameters
    ----------
    teacher
        ``W*``, a ``P x D`` array (any rank).
    lr, steps, sigma0, replicas, top_k, overlaps
        The training and what is recorded (:class:`LinearStudentConfig`, where each is
        documented).
    sampling
        How the student sees the teacher (:class:`Sampling`: ``method``, ``M``, ``B``,
        ``noise_std``); default ``Sampling()``, the exact population gradient.
    inputs
        Optional fixed inputs ``X`` (``M x D``) for ``"gd"``/``"sgd"``, shared by
        all replicas (then ``M`` may be omitted); drawn from the seed otherwise.
    options, **shorthands
        The run's :class:`~specdyn.sim.options.RunOptions`, or its fields as keywords.

    Raises
    ------
    DivergenceError
        ``.step`` is the first bad step, ``.record`` the run before it.
    """
    cfg = LinearStudentConfig.of_call(locals(), entry="train_linear_student")
    smp = cfg.sampling
    W_star = teacher_matrix(teacher)
    P, D = W_star.shape
    X_in = None
    if inputs is not None and smp.method in ("gd", "sgd"):
        X_in = v.real_array("inputs", inputs)
        if X_in.ndim != 2 or X_in.shape[1] != D:
            raise ValueError(f"inputs must be an M x D={D} array, got shape {X_in.shape}")
    n = smp.data_size(None if X_in is None else X_in.shape[0])
    batch = smp.batch_size(n)
    k = min(P, D) if cfg.top_k is None else min(cfg.top_k, min(P, D))

    def build(given: RunInputs) -> tuple[LinearStudentEngine,
                                         SpectrumRecorder[LinearStudentState,
                                                          LinearStudentRun]]:
        torch, dt, dev = _torch.torch(), given.dtype, given.device
        eng = LinearStudentEngine(torch.as_tensor(W_star, dtype=dt, device=dev), smp.method,
                                  cfg.lr, M=n, B=batch, noise_std=smp.noise_std,
                                  replicas=cfg.replicas, sigma0=cfg.sigma0,
                                  inputs=None if X_in is None
                                  else torch.as_tensor(X_in, dtype=dt, device=dev))
        pair = _teacher_pair(W_star, dt, dev) if cfg.overlaps else None
        return eng, SpectrumRecorder(
            {"svd": Observable(lambda st: st.W[0], lambda w0: _top_svd(w0, k, pair,
                                                                      cfg.overlaps))},
            record=lambda rec, outcome: _student_run(rec, outcome, k),
            meta={"method": smp.method, "P": P, "D": D, "lr": cfg.lr, "sigma0": cfg.sigma0,
                  "M": n or None, "B": batch or None, "noise_std": smp.noise_std,
                  "replicas": cfg.replicas})

    return run(Setup("linear_student", LinearStudentEngine.streams, build), steps=cfg.steps,
               options=cfg.options,
               checkpoints=cfg.options.schedule(cfg.steps, Schedule.every(1)))


def teacher_matrix(teacher: ArrayLike) -> np.ndarray:
    """A linear student's teacher ``W*`` as a float64 ``P x D`` array (checked)."""
    W_star = v.real_array("teacher", teacher)
    if W_star.ndim != 2:
        raise ValueError(f"teacher must be a P x D matrix, got shape {W_star.shape}")
    return W_star


def _teacher_pair(W_star: np.ndarray, dtype: Any, device: Any) -> tuple[Tensor, Tensor] | None:
    """The teacher's top left and right singular vectors on the device (``None`` for a zero
    teacher, whose overlaps are ``nan``)."""
    torch = _torch.torch()
    ss, uu, vv = decompose(W_star, singular=True, vectors=True, top=1)
    if not ss[0] > 0:
        return None
    return (torch.as_tensor(uu[:, 0], dtype=dtype, device=device),
            torch.as_tensor(vv[:, 0], dtype=dtype, device=device))


def _top_svd(w0: Tensor, k: int, pair: tuple[Tensor, Tensor] | None,
             overlaps: bool) -> dict[str, Any]:
    """The top ``k`` singular values of ``w0`` (host float64) and, with ``overlaps``, the
    squared overlaps of its top singular vectors with the teacher's ``pair``."""
    # eigen-decomposition of the smaller Gram matrix: about 3x faster than an SVD
    wide = w0.shape[0] <= w0.shape[1]  # P <= D
    gram = w0 @ w0.T if wide else w0.T @ w0
    out: dict[str, Any] = {}
    if overlaps:
        ev, vec, _ = decompose(gram, vectors=True, increasing=True)
        top = vec[:, -1]
        sv = ev.clamp_min(0).sqrt()
        other = (w0.T @ top if wide else w0 @ top) / sv[-1].clamp_min(1e-300)
        left, right = (top, other) if wide else (other, top)
        nan = float("nan")
        out["left_overlap2"] = nan if pair is None else float((left @ pair[0]) ** 2)
        out["right_overlap2"] = nan if pair is None else float((right @ pair[1]) ** 2)
    else:
        sv = device_eigenvalues(gram).sqrt().flip(0)  # increasing, as eigh's
    return {"singular_values": _torch.to_numpy(sv.flip(0)[:k], np.float64), **out}


def _student_run(rec: Recorded, outcome: Outcome[LinearStudentState], k: int
                 ) -> LinearStudentRun:
    """The record: the squared errors up to the end (or the first bad step: the loop's
    history of the watched quantity) and the checkpoints taken."""
    upto = outcome.steps + 1 if outcome.diverged is None else outcome.diverged + 1
    sq = _torch.to_numpy(outcome.history["mean squared error"][:upto], np.float64)
    if protocol.first_divergent(sq[-1]) is not None:  # a diverged run's first bad step
        sq = sq[:-1]
    n = len(rec.steps)
    return LinearStudentRun(
        sq_error=sq,
        steps=np.asarray(rec.steps, dtype=np.int64),
        singular_values=np.array(rec.values.get("singular_values", []),
                                 dtype=np.float64).reshape(n, k),
        left_overlap2=np.asarray(rec.values.get("left_overlap2", []), dtype=np.float64),
        right_overlap2=np.asarray(rec.values.get("right_overlap2", []), dtype=np.float64),
        meta=rec.meta,
    )
