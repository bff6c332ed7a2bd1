"""Deep linear students under muP, NTK and standard parameterisations.

Model: ``f(x) = m_L W_L m_{L-1} W_{L-1} ... m_1 W_1 x`` with ``W_1`` (``N x D``),
``W_l`` (``N x N``) for ``1 < l < L``, ``W_L`` (``P x N``); depth ``L >= 1``
(``L = 1`` is a single ``P x D`` layer, the same in every parameterisation).
Teacher ``y = W* x + noise_std * eps``, ``x ~ N(0, I_D)``, loss
``(1/2) E||f(x) - y||^2`` (population) or its average over a sample; every
weight is updated by plain GD/SGD ``W_l <- W_l - lr_eff * dL/dW_l``.

Parameterisations (``sigma0`` scales every init; ``lr`` is the base rate ``eta0``):

============  =======================  ==============================  ===================
name          init of ``W_l`` entries  multipliers ``m_l``             ``lr_eff``
============  =======================  ==============================  ===================
mup           ``N(0, sigma0^2)``       ``1/sqrt(fan_in)``, last        ``eta0 gamma0^2 N``
                                       ``1/(gamma0 N)``
ntk           ``N(0, sigma0^2)``       ``1/sqrt(fan_in)``              ``eta0``
standard      ``N(0, sigma0^2/fan_in)``  1                             ``eta0``
============  =======================  ==============================  ===================

``mup`` is the mean-field (maximal-update) scaling of ``docs/related-works.md`` section 1
(``f = (gamma0 N)^-1 w^T h``, ``eta = eta0 gamma0^2 N``): the hidden weights move
by O(1) in spectral norm relative to their bulk, so outliers escape in a
width-independent time. ``ntk`` has the same kernel scale but weights move by
O(1/sqrt N): the escape is delayed and disappears as ``N`` grows. ``standard``
(PyTorch-like fan-in init, one global rate) has an NTK that grows with ``N``:
the stable ``eta0`` shrinks like ``1/N``.

The loss sharpness is reported as the top eigenvalue of the Gauss-Newton
matrix ``J^T Sigma J`` (``J``: parameters -> ``W_eff``), i.e. of the NTK on
the ``P x D`` output space, computed exactly by power iteration with
hand-written Kronecker products: ``E -> c^2 sum_l A_l E Sigma^(1/2) B_l Sigma^(1/2)``
with ``A_l = S_l S_l^T`` (``S_l = W_L ... W_{l+1}``), ``B_l = Q_l^T Q_l``
(``Q_l = W_{l-1} ... W_1``), ``c = prod m_l``. GD on a quadratic model is stable iff
``lr_eff * sharpness < 2`` (the edge of stability ``2 / lr_eff``). It equals the
Hessian's top eigenvalue at an interpolating minimum.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from specdyn import _torch
from specdyn import _validate as v
from specdyn.measure.spectra import decompose, device_eigenvalues
from specdyn.schedule import Schedule, ScheduleLike
from specdyn.sim import protocol
from specdyn.sim.deep_linear_engine import (
    DEEP_PARAMETERIZATIONS,
    DeepLinearEngine,
    DeepLinearScaling,
    DeepLinearState,
    scaling,
)
from specdyn.sim.inputs import RunInputs, Setup
from specdyn.sim.linear_student import Sampling, StudentConfig, teacher_matrix
from specdyn.sim.loop import run
from specdyn.sim.options import RunOptions
from specdyn.sim.protocol import Outcome
from specdyn.sim.recording import Observable, Recorded, SpectrumRecorder
from specdyn.sim.registry import entry_point
from specdyn.theory import rmt

if TYPE_CHECKING:
    from typing import Unpack

    from specdyn.sim.options import RunKeywords

__all__ = ["DeepLinearConfig", "DeepLinearRecording", "DeepLinearRun", "escape_step",
           "train_deep_linear"]

@dataclass(frozen=True)
class DeepLinearRun(protocol.Record):
    """Record of one deep-linear run (host float64 arrays).

    Attributes
    ----------
    loss
        ``(steps + 1,)`` loss at every step (population loss
        ``(1/2)||W_eff - W*||_F^2``, without the constant label-noise term, for
        ``"population"`` and ``"online"``; the empirical loss for ``"gd"`` and
        ``"sgd"``).
    steps
        ``(n,)`` steps at which spectra were recorded.
    singular_values
        One ``(n, k_l)`` array per layer: top singular values of the raw weight
        ``W_l``, decreasing.
    bulk_edge
        ``(L,)`` Marchenko-Pastur edge of each layer's singular values at init,
        ``init_std * (sqrt(rows) + sqrt(cols))``.
    sharpness_steps, sharpness
        Steps and top Gauss-Newton (NTK) eigenvalue, in the units of
        ``lr_eff`` (stable iff ``lr_eff * sharpness < 2``).
    scaling
        The parameterisation used.
    weights
        Final raw weights (empty in the partial record of a diverged run, whose
        ``loss`` ends at the first bad step, non-finite values dropped).
    meta
        The fixed keys of :func:`~specdyn.sim.protocol.record_meta`, then method,
        sizes, lr_eff.
    """

    loss: np.ndarray
    steps: np.ndarray
    singular_values: list[np.ndarray]
    bulk_edge: np.ndarray
    sharpness_steps: np.ndarray
    sharpness: np.ndarray
    scaling: DeepLinearScaling
    weights: list[np.ndarray]


@v.constrained(edge=v.POSITIVE, margin=v.NONNEGATIVE)
def escape_step(steps: ArrayLike, top_singular_value: ArrayLike, edge: float,
                margin: float = 0.05) -> int | None:
    """First recorded step whose top singular value exceeds ``(1 + margin) * edge``.

    A simple, width-uniform escape criterion for weight matrices whose bulk
    stays near its initial Marchenko-Pastur edge; ``None`` if it never happens.
    """
    st = np.asarray(steps)
    sv = v.real_array("top_singular_value", top_singular_value)
    e, mg = edge, margin
    hit = np.nonzero(sv > (1.0 + mg) * e)[0]
    return int(st[hit[0]]) if hit.size else None


@dataclass(frozen=True, kw_only=True)
@v.constrained_fields(layers=v.Tuple(v.Int(0), optional=True), top_k=v.SIZE,
                      spectra=v.Choice("auto", "exact", "subspace"),
                      sharpness=v.Free("a schedule (as checkpoints), or None"),
                      power_iters=v.SIZE)
class DeepLinearRecording:
    """What a :func:`train_deep_linear` run records besides its loss, and how (its
    ``recording=``; checked when made, the layer indices against the depth when run).

    The singular values are recorded at the run's ``checkpoints`` (its
    :class:`~specdyn.sim.options.RunOptions`), the sharpness on its own schedule:
    ``DeepLinearRecording(layers=[1], top_k=2)`` keeps the top two singular values of the
    second layer; ``DeepLinearRecording(sharpness=Schedule.every(10))`` adds the
    Gauss-Newton top eigenvalue every 10 steps.

    Attributes
    ----------
    layers
        Which layers (0-based) to record (default all).
    top_k
        Singular values kept per layer.
    spectra
        ``"exact"`` (eigenvalues of the smaller Gram matrix), ``"subspace"``
        (warm-started block power iteration with Rayleigh-Ritz, 8 sweeps per
        record on ``top_k + 4`` vectors: accurate for separated outliers, an
        underestimate inside a dense bulk edge), or ``"auto"`` (exact up to
        ``min(rows, cols) = 256``, subspace above).
    sharpness
        When to compute the Gauss-Newton top eigenvalue (a schedule as
        ``checkpoints``; ``None``: never).
    power_iters
        Power-iteration steps per sharpness evaluation (warm-started).
    """

    layers: Sequence[int] | None = None
    top_k: int = 4
    spectra: str = "auto"
    sharpness: ScheduleLike = None
    power_iters: int = 60


@dataclass(frozen=True, kw_only=True)
@v.constrained_fields(depth=v.SIZE, N=v.SIZE, parameterization=v.Choice(*DEEP_PARAMETERIZATIONS),
                      gamma0=v.POSITIVE, recording=v.Instance(DeepLinearRecording))
class DeepLinearConfig(StudentConfig):
    """How :func:`train_deep_linear` trains: :class:`~specdyn.sim.linear_student.StudentConfig`
    's fields (``lr`` is the base rate ``eta0``, the applied rate ``scaling(...).lr_eff``;
    ``steps``; ``sigma0`` the init scale; ``sampling``, a
    :class:`~specdyn.sim.linear_student.Sampling`: ``method``, ``M``, ``B``,
    ``noise_std``) and these.

    Attributes
    ----------
    depth, N
        ``L >= 1`` weight matrices, hidden width ``N >= 1``.
    parameterization
        ``"mup"``, ``"ntk"`` or ``"standard"`` (module table).
    gamma0
        The muP output scale (``> 0``).
    recording
        What is recorded and how: a :class:`DeepLinearRecording` (``layers``, ``top_k``,
        ``spectra``, ``sharpness``, ``power_iters``), documented there.
    options
        The run's options (:class:`~specdyn.sim.config.SimConfig`): ``checkpoints``,
        when to record singular values, a :class:`~specdyn.schedule.Schedule` (e.g.
        ``Schedule.every(10)``), an int count of log-spaced steps, explicit steps, or
        ``None`` (never); the divergence check's default: the loss above ``1e6`` times
        its start, checked every 20 steps.
    """

    depth: int
    N: int
    parameterization: str
    gamma0: float = 1.0
    recording: DeepLinearRecording = DeepLinearRecording()


def _example() -> Any:
    return (np.eye(3, 4),), {"depth": 2, "N": 4, "parameterization": "mup", "lr": 0.1,
                             "steps": 40, "sampling": Sampling("gd", M=10), "device": "cpu"}


@entry_point(DeepLinearConfig, example=_example)
def train_deep_linear(teacher: ArrayLike, *, depth: int, N: int, parameterization: str,
                      lr: float, steps: int, sigma0: float = 1.0, gamma0: float = 1.0,
                      sampling: Sampling = Sampling(),
                      recording: DeepLinearRecording = DeepLinearRecording(),
                      init: Sequence[ArrayLike] | None = None,
                      options: RunOptions | None = None,
                      **shorthands: Unpack[RunKeywords]) -> DeepLinearRun:
    """Train a deep linear student on ``teacher`` (``P x D``) and record spectra.

    Parameters
    ----------
    teacher
        ``W*``, a ``P x D`` array.
    depth, N, parameterization, lr, steps, sigma0, gamma0
        The student and its training (:class:`DeepLinearConfig`, where each is
        documented).
    sampling
        How the student sees the teacher (:class:`~specdyn.sim.linear_student.Sampling`:
        ``method``, ``M``, ``B``, ``noise_std``); default ``Sampling()``, the exact
        population gradient.
    recording
        What is recorded, and how (:class:`DeepLinearRecording`: ``layers``, ``top_k``,
        ``spectra``, ``sharpness``, ``power_iters``); default every layer's top 4
        singular values at the checkpoints, no sharpness.
    init
        Optional initial weights (one array per layer, shapes ``dims[l+1] x dims[l]``)
        replacing the random init (the scaling's multipliers and rates still apply).
    options, **shorthands
        The run's :class:`~specdyn.sim.options.RunOptions`, or its fields ``checkpoints``
        (when to record singular values; ``None``: never), ``seed``, ``dtype``, ``device``,
        ``progress`` as keywords (not both ways).

    Raises
    ------
    DivergenceError
        The loss became non-finite or exceeded the divergence factor times its
        start; ``.step`` is the first bad step, ``.record`` a :class:`DeepLinearRun`
        of the steps before it (``weights`` empty).
    """
    cfg = DeepLinearConfig.of_call(locals(), entry="train_deep_linear")
    smp, want = cfg.sampling, cfg.recording
    W_star = teacher_matrix(teacher)
    P, D = W_star.shape
    sc = scaling(cfg.parameterization, depth=cfg.depth, N=cfg.N, D=D, P=P, lr=cfg.lr,
                 sigma0=cfg.sigma0, gamma0=cfg.gamma0)
    L, T, opts = len(sc.multipliers), cfg.steps, cfg.options
    n = smp.data_size()
    batch = smp.batch_size(n)
    lay = list(range(L)) if want.layers is None else [int(x) for x in want.layers]
    for li in lay:
        if not 0 <= li < L:
            raise ValueError(f"layers must hold indices in [0, {L - 1}], got {want.layers!r}")
    none = np.zeros(0, dtype=np.int64)
    rec = none if opts.checkpoints is None else opts.schedule(T)
    shp = none if want.sharpness is None else Schedule.of(want.sharpness).resolve(T)

    dims = sc.dims
    init_w = None
    if init is not None:
        if len(init) != L:
            raise ValueError(f"init must hold {L} arrays (one per layer), got {len(init)}")
        init_w = [v.real_array(f"init[{i}]", w0) for i, w0 in enumerate(init)]
        for i, a in enumerate(init_w):
            if a.shape != (dims[i + 1], dims[i]):
                raise ValueError(f"init[{i}] must have shape {(dims[i + 1], dims[i])}, "
                                 f"got {a.shape}")
    edges = np.array([sc.init_std[i] * math.sqrt(dims[i])
                      * float(rmt.rectangular_bulk_edge(dims[i + 1] / dims[i]))
                      for i in range(L)])

    def build(given: RunInputs) -> tuple[DeepLinearEngine,
                                         SpectrumRecorder[DeepLinearState, DeepLinearRun]]:
        torch = _torch.torch()
        eng = DeepLinearEngine(sc, torch.as_tensor(W_star, dtype=given.dtype,
                                                   device=given.device),
                               smp.method, M=n, B=batch, noise_std=smp.noise_std,
                               weights=init_w)
        draws = _RecordDraws(given.generators(eng).record, eng)
        top = _TopSingularValues(draws, lay, want.top_k, want.spectra)
        return eng, SpectrumRecorder({
            "singular_values": Observable(lambda st: st.weights, top, when=set(rec.tolist())),
            "sharpness": Observable(lambda st: st, lambda st: draws.sharpness(
                st, want.power_iters), when=set(shp.tolist()))},
            record=lambda recorded, outcome: _deep_run(recorded, outcome, eng, edges[lay],
                                                       want.top_k, rec, len(lay)),
            meta={"method": smp.method, "depth": L, "N": int(cfg.N), "D": D, "P": P,
                  "layers": lay, "M": n or None, "B": batch or None,
                  "noise_std": smp.noise_std, "lr_eff": sc.lr_eff})

    return run(Setup("deep_linear", DeepLinearEngine.streams, build), steps=T, options=opts,
               checkpoints=np.union1d(rec, shp))


class _RecordDraws:
    """The draws of a deep-linear run's ``record`` generator (the continuation of the init's
    stream), in the recorded order: the sharpness's power-iteration start first, then each
    subspace layer's start block at that layer's first record; never the batches'. Holds
    the power iteration's iterate (warm-started from record to record)."""

    def __init__(self, generator: Any, eng: DeepLinearEngine) -> None:
        self.gen, self.eng, self.kw = generator, eng, eng.kw
        self.pi_vec: Any = None  # drawn at the first record of either kind

    def start(self) -> None:
        """Draw the power iteration's start (once, before any other draw)."""
        if self.pi_vec is None:
            P, D = self.eng.Ws.shape
            self.pi_vec = _torch.torch().randn(P, D, generator=self.gen, **self.kw)

    def block(self, rows: int, cols: int) -> Any:
        """A ``rows x cols`` standard normal start block (after the power iteration's)."""
        self.start()
        return _torch.torch().randn(rows, cols, generator=self.gen, **self.kw)

    def sharpness(self, state: DeepLinearState, iters: int) -> float:
        """The Gauss-Newton top eigenvalue of ``state`` (warm-started power iteration)."""
        self.start()
        lam, self.pi_vec = self.eng.sharpness(state, self.pi_vec, iters)
        return float(lam)


class _TopSingularValues:
    """The top ``k`` singular values of the recorded layers' weights (host float64), one
    name per layer (``sv<j>``): exact (the smaller Gram) or by warm-started subspace
    iteration (8 sweeps on ``k + 4`` vectors), as ``spectra`` says."""

    def __init__(self, draws: _RecordDraws, layers: list[int], k: int, spectra: str) -> None:
        self.draws, self.layers, self.k, self.spectra = draws, layers, k, spectra
        self.blocks: dict[int, Any] = {}  # subspace iteration's block of each layer

    def __call__(self, weights: tuple[Any, ...]) -> dict[str, np.ndarray]:
        return {f"sv{j}": _torch.to_numpy(self.top(weights[li], li), np.float64)
                for j, li in enumerate(self.layers)}

    def top(self, Wl: Any, li: int) -> Any:
        """The top ``k`` singular values of layer ``li``'s weight ``Wl`` (device tensor)."""
        small = min(Wl.shape)
        if self.spectra == "exact" or (self.spectra == "auto" and small <= 256):
            gram = Wl @ Wl.T if Wl.shape[0] <= Wl.shape[1] else Wl.T @ Wl
            return device_eigenvalues(gram).sqrt()[:self.k]
        torch = _torch.torch()
        b = min(self.k + 4, small)
        if li not in self.blocks:
            self.blocks[li] = self.draws.block(Wl.shape[1], b)
        Q = torch.linalg.qr(self.blocks[li]).Q
        for _ in range(8):
            Q = torch.linalg.qr(Wl.T @ (Wl @ Q)).Q
        self.blocks[li] = Q
        return decompose(Wl @ Q, singular=True, top=self.k).values


def _deep_run(recorded: Recorded, outcome: Outcome[DeepLinearState], eng: DeepLinearEngine,
              edges: np.ndarray, k: int, rec: np.ndarray, n_layers: int) -> DeepLinearRun:
    """The record: the losses up to the end (or the first bad step, its loss kept when
    finite), the checkpoints so far, the last state's weights (none if diverged)."""
    final = outcome.state
    upto = outcome.steps + 1 if outcome.diverged is None else outcome.diverged + 1
    loss_np = _torch.to_numpy(outcome.history["loss"][:upto], np.float64)
    if final is None:  # up to the first bad step, its loss kept when finite
        # trimming the partial record, not a test: the loop named the step
        loss_np = loss_np[np.isfinite(loss_np)]
    wanted = set(rec.tolist())
    steps = [s for s in recorded.steps if s in wanted]
    n = len(steps)
    return DeepLinearRun(
        loss=loss_np,
        steps=np.asarray(steps, dtype=np.int64),
        singular_values=[np.array(recorded.values.get(f"sv{j}", []),
                                  dtype=np.float64).reshape(n, -1)
                         if n else np.zeros((0, k)) for j in range(n_layers)],
        bulk_edge=edges,
        sharpness_steps=np.asarray(recorded.at.get("sharpness", []), dtype=np.int64),
        sharpness=np.asarray(recorded.values.get("sharpness", []), dtype=np.float64),
        scaling=eng.sc,
        weights=[_torch.to_numpy(w, np.float64) for w in final.weights] if final else [],
        meta=recorded.meta,
    )
