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

``mup`` is the mean-field (maximal-update) scaling of related-notes section 1
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
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

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
from specdyn.sim.linear_student import METHODS, batch_size_for
from specdyn.theory import rmt

__all__ = ["DeepLinearRun", "escape_step", "train_deep_linear"]

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


@v.constrained(depth=v.SIZE, N=v.SIZE, parameterization=v.Choice(*DEEP_PARAMETERIZATIONS),
               lr=v.POSITIVE, steps=v.SIZE, sigma0=v.POSITIVE, gamma0=v.POSITIVE,
               method=v.Choice(*METHODS), M=v.Int(1, optional=True), B=v.Int(1, optional=True),
               noise_std=v.NONNEGATIVE, top_k=v.SIZE,
               spectra=v.Choice("auto", "exact", "subspace"), power_iters=v.SIZE,
               seed=v.Int(0, optional=True))
def train_deep_linear(
    teacher: ArrayLike,
    *,
    depth: int,
    N: int,
    parameterization: str,
    lr: float,
    steps: int,
    sigma0: float = 1.0,
    gamma0: float = 1.0,
    method: str = "population",
    M: int | None = None,
    B: int | None = None,
    noise_std: float = 0.0,
    init: Sequence[ArrayLike] | None = None,
    checkpoints: ScheduleLike = None,
    layers: Sequence[int] | None = None,
    top_k: int = 4,
    spectra: str = "auto",
    sharpness: ScheduleLike = None,
    power_iters: int = 60,
    seed: int | None = None,
    device: Any = None,
    dtype: Any = None,
    progress: bool | None = None,
    options: protocol.RunOptions | None = None,
) -> DeepLinearRun:
    """Train a deep linear student on ``teacher`` (``P x D``) and record spectra.

    Parameters
    ----------
    teacher
        ``W*``, a ``P x D`` array.
    depth, N
        ``L >= 1`` weight matrices, hidden width ``N >= 1``.
    parameterization
        ``"mup"``, ``"ntk"`` or ``"standard"`` (module table).
    lr
        Base learning rate ``eta0 > 0``; the applied rate is ``scaling(...).lr_eff``.
    steps
        Number of updates (>= 1); all are run.
    sigma0, gamma0
        Init scale and muP output scale (> 0).
    method
        ``"population"`` (exact population gradient), ``"gd"`` (full batch on
        ``M`` samples), ``"sgd"`` (batch ``B`` in ``[1, M]``) or
        ``"online"`` (fresh batch of ``B``).
    noise_std
        Label noise (>= 0).
    init
        Optional initial weights (one array per layer, shapes ``dims[l+1] x dims[l]``)
        replacing the random init (the scaling's multipliers and rates still apply).
    checkpoints
        When to record singular values: a :class:`~specdyn.schedule.Schedule`
        (e.g. ``Schedule.every(10)``), an int count of log-spaced steps, explicit
        steps, or ``None`` (never).
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
    seed, device, dtype
        Reproducibility and placement (seed 0, CUDA when present, float64 by default).
    progress
        Show a progress bar (default off).
    options
        The run's :class:`~specdyn.sim.protocol.RunOptions`: seed, dtype, device,
        progress, checkpoints, and the only way to set the divergence check's
        ``check_every`` and ``divergence_factor`` (``None``: this engine's
        :data:`~specdyn.sim.protocol.ENGINE_DEFAULTS`: divergence when the loss
        exceeds ``1e6`` times its start, checked every 20 steps); instead of the
        shorthand keywords (not both).

    Raises
    ------
    DivergenceError
        The loss became non-finite or exceeded the divergence factor times its
        start; ``.step`` is the first bad step, ``.record`` a :class:`DeepLinearRun`
        of the steps before it (``weights`` empty).
    """
    start = time.perf_counter()
    W_star = v.real_array("teacher", teacher)
    if W_star.ndim != 2:
        raise ValueError(f"teacher must be a P x D matrix, got shape {W_star.shape}")
    P, D = W_star.shape
    sc = scaling(parameterization, depth=depth, N=N, D=D, P=P, lr=lr, sigma0=sigma0,
                 gamma0=gamma0)
    L = len(sc.multipliers)
    T, meth, noise, k_top, spec_mode, iters = steps, method, noise_std, top_k, spectra, power_iters
    opts = protocol.run_options("deep_linear", options, seed=seed, dtype=dtype, device=device,
                                progress=progress, checkpoints=checkpoints)
    seed, dtype, device, checkpoints = opts.seed, opts.dtype, opts.device, opts.checkpoints
    n = 0
    if meth in ("gd", "sgd"):
        if M is None:
            raise ValueError(f"M must be given (an integer >= 1) for method {meth!r}")
        n = M
    B = batch_size_for(meth, n, B)
    lay = list(range(L)) if layers is None else [int(x) for x in layers]
    for li in lay:
        if not 0 <= li < L:
            raise ValueError(f"layers must hold indices in [0, {L - 1}], got {layers!r}")
    none = np.zeros(0, dtype=np.int64)
    rec = none if checkpoints is None else opts.schedule(T)
    shp = none if sharpness is None else Schedule.of(sharpness).resolve(T)

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

    # ---- setup: the engine, its first state, then the recorder (which draws from gen)
    torch = _torch.torch()
    dev = _torch.resolve_device(device)
    dt = _torch.resolve_dtype(dtype)
    (gen_seed,) = protocol.seed_streams(seed, 1)
    gen = torch.Generator(device=dev).manual_seed(gen_seed)
    eng = DeepLinearEngine(sc, torch.as_tensor(W_star, dtype=dt, device=dev), meth, M=n, B=B,
                           noise_std=noise, weights=init_w)
    state = eng.init(gen)
    edges = np.array([sc.init_std[i] * math.sqrt(dims[i])
                      * float(rmt.rectangular_bulk_edge(dims[i + 1] / dims[i]))
                      for i in range(L)])
    recorder = _Recorder(eng, state, T, lay, k_top, spec_mode, iters, rec, shp, edges[lay],
                         gen, lambda: protocol.record_meta(
                             "deep_linear", seed=seed, dtype=dt, device=dev, start=start,
                             steps=T, method=meth, depth=L, N=int(N), D=D, P=P, layers=lay,
                             M=n or None, B=B or None, noise_std=noise, lr_eff=sc.lr_eff))

    # ---- the run: losses[t] is the loss after t updates, filled by the steps
    losses = recorder.losses

    def step(state: DeepLinearState, t: int) -> DeepLinearState:
        state = eng.step(state, eng.sample(state, gen))
        losses[t] = state.loss
        return state

    check = protocol.Divergence(
        "deep linear student", f"lower lr (now {lr:g}; lr_eff * sharpness must stay below 2)"
    ).check(lambda lo, t: losses[lo:t + 1], float(losses[0]), opts.factor, "loss",
            record=lambda j: recorder.run(j + 1, None))
    state = protocol.drive(state, step, T, np.union1d(rec, shp), observe=recorder.snapshot,
                           check=check, options=opts)
    return recorder.run(T + 1, state)


class _Recorder:
    """The losses of every step (on the device) and the checkpoints of a deep-linear run
    (top singular values of the recorded layers at ``rec``, Gauss-Newton sharpness at
    ``shp``; host float64), and the :class:`DeepLinearRun` of those taken so far.

    It draws from the run's ``generator``: the sharpness's power-iteration start when
    built, each subspace layer's start block at its first checkpoint (that order keeps
    recorded runs)."""

    def __init__(self, eng: DeepLinearEngine, state0: DeepLinearState, steps: int,
                 layers: list[int], top_k: int, spectra: str, power_iters: int,
                 rec: np.ndarray, shp: np.ndarray, edges: np.ndarray, generator: Any,
                 meta: Any) -> None:
        torch = _torch.torch()
        self.kw = eng.kw  # the run's dtype and device (the teacher's)
        self.eng, self.gen, self.meta = eng, generator, meta
        self.layers, self.k, self.spectra, self.iters = layers, top_k, spectra, power_iters
        self.rec_set, self.shp_set = set(rec.tolist()), set(shp.tolist())
        self.edges = edges
        P, D = eng.Ws.shape
        self.pi_vec = torch.randn(P, D, generator=generator, **self.kw)
        self.blocks: dict[int, Any] = {}  # subspace iteration's block of each layer
        self.losses = torch.empty(steps + 1, **self.kw)
        self.losses[0] = state0.loss
        self.steps: list[int] = []
        self.svals: list[list[np.ndarray]] = [[] for _ in layers]
        self.sharp_steps: list[int] = []
        self.sharp: list[float] = []

    def _top_sv(self, Wl: Any, li: int) -> Any:
        """The top ``k`` singular values of layer ``li``'s weight ``Wl`` (device tensor)."""
        small = min(Wl.shape)
        if self.spectra == "exact" or (self.spectra == "auto" and small <= 256):
            gram = Wl @ Wl.T if Wl.shape[0] <= Wl.shape[1] else Wl.T @ Wl
            return device_eigenvalues(gram).sqrt()[:self.k]
        torch = _torch.torch()
        b = min(self.k + 4, small)
        if li not in self.blocks:
            self.blocks[li] = torch.randn(Wl.shape[1], b, generator=self.gen, **self.kw)
        Q = torch.linalg.qr(self.blocks[li]).Q
        for _ in range(8):
            Q = torch.linalg.qr(Wl.T @ (Wl @ Q)).Q
        self.blocks[li] = Q
        return decompose(Wl @ Q, singular=True, top=self.k).values

    def snapshot(self, state: DeepLinearState, step: int) -> None:
        """Record checkpoint ``step``: the spectra and/or the sharpness it is scheduled for."""
        if step in self.rec_set:
            for j, li in enumerate(self.layers):
                self.svals[j].append(_torch.to_numpy(self._top_sv(state.weights[li], li),
                                                     np.float64))
            self.steps.append(step)
        if step in self.shp_set:
            lam, self.pi_vec = self.eng.sharpness(state, self.pi_vec, self.iters)
            self.sharp.append(float(lam))
            self.sharp_steps.append(step)

    def run(self, upto: int, final: DeepLinearState | None) -> DeepLinearRun:
        """The record of the losses ``[0, upto)`` and the checkpoints so far (``final``: the
        last state, whose weights are kept; ``None`` for a diverged run)."""
        loss_np = _torch.to_numpy(self.losses[:upto], np.float64)
        if final is None:  # up to the first bad step, its loss kept when finite
            # trimming the partial record, not a test: scan_check named the step
            loss_np = loss_np[np.isfinite(loss_np)]
        n = len(self.steps)
        return DeepLinearRun(
            loss=loss_np,
            steps=np.asarray(self.steps, dtype=np.int64),
            singular_values=[np.array(s, dtype=np.float64).reshape(n, -1)
                             if n else np.zeros((0, self.k)) for s in self.svals],
            bulk_edge=self.edges,
            sharpness_steps=np.asarray(self.sharp_steps, dtype=np.int64),
            sharpness=np.asarray(self.sharp, dtype=np.float64),
            scaling=self.eng.sc,
            weights=[_torch.to_numpy(w, np.float64) for w in final.weights] if final
            else [],
            meta=self.meta(),
        )
