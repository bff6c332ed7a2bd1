"""Two full-batch gradient steps on the first layer of a wide two-layer network.

Setting (linear-width regime, ``related-notes.md`` section 2; Ba et al. 2022,
Moniri et al. 2023, who write ``d`` for our ``D``, ``n`` for ``M`` and ``eta``
for ``lr``)::

    f(x) = N^(-1/2) a^T sigma(W x),    W: N x D,   a: N (fixed, not trained),
    a_i ~ N(0, 1/N),   rows of W0 ~ N(0, I_D / D),   x ~ N(0, I_D),
    y = sigma*(beta . x)  (a single-index :class:`~specdyn.data.HermiteTarget`).

Each step uses a batch ``X`` (``M x D``) with labels ``y`` and residual
``r = y - f(X)`` and updates

    W <- W + lr * G,    G = (1/M) diag(a) [sigma'(W X^T) o 1 r^T] X,

i.e. ``G = -sqrt(N) dL/dW`` for ``L = (1/2M) ||y - f(X)||^2``: the step size
``lr`` multiplies ``sqrt(N)`` times the negative gradient. The step sizes are
``lr_k = N^alpha_k`` with ``alpha_k in [0, 1/2)``. The second step uses a
fresh batch (independent of the first) or reuses the first batch.

At this scaling the first step adds to ``W0`` a rank-one spike
``lr1 mu1 a g1^T`` (``mu1 = E sigma'(z)``, ``g1 = X1^T r0 / M``) plus terms of
operator norm ``O(N^(alpha1 - 1/2))``; see :func:`one_step_spike_strength`.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from specdyn import _torch
from specdyn import _validate as v
from specdyn.data.hermite import HermiteTarget, gaussian_expectation
from specdyn.models.activations import Activation, get_activation
from specdyn.sim.config import SimConfig
from specdyn.sim.loop import run
from specdyn.sim.protocol import Outcome, Record, Streams, record_meta, seed_streams
from specdyn.sim.two_step_engine import (
    TwoStepData,
    TwoStepEngine,
    TwoStepGradient,
    TwoStepState,
    draw_data,
    resolve_target,
)

__all__ = ["TwoStepConfig", "TwoStepData", "TwoStepEngine", "TwoStepGradient", "TwoStepResult",
           "TwoStepState", "activation_mu1", "draw_data", "gd_steps", "gd_steps_row",
           "one_step_spike_strength"]


@dataclass(frozen=True)
class TwoStepResult(Record):
    """Weights after zero, one and two GD steps, and what produced them (numpy, float64).

    Attributes
    ----------
    W0, W1, W2
        ``(N, D)`` first-layer weights at initialisation, after step 1, after step 2.
    a
        ``(N,)`` fixed second-layer weights (``a_i ~ N(0, 1/N)``).
    beta
        ``(D,)`` unit target direction.
    lrs, alphas
        Step sizes ``(lr1, lr2)`` and exponents ``alpha_k = log lr_k / log N``.
    reuse_batch
        Whether step 2 reused the batch of step 1.
    g
        ``(2, D)``: ``g_k = X_k^T r_{k-1} / M``, the data vector of step ``k``
        (its rank-one part is ``lr_k mu1 a g_k^T``).
    loss
        ``(3,)`` training loss ``(1/2M) ||y - f(X)||^2`` on the batch of step 1
        at ``W0, W1, W2`` (NaN where a run with ``losses=False`` skipped it).
    meta
        The fixed keys of :func:`~specdyn.sim.protocol.record_meta`, then sizes,
        activation, target.
    """

    W0: np.ndarray
    W1: np.ndarray
    W2: np.ndarray
    a: np.ndarray
    beta: np.ndarray
    lrs: tuple[float, float]
    alphas: tuple[float, float]
    reuse_batch: bool
    g: np.ndarray
    loss: np.ndarray

    @property
    def weights(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(W0, W1, W2)``."""
        return self.W0, self.W1, self.W2


@v.constrained(n_quad=v.SIZE)
def activation_mu1(activation: str | Activation, n_quad: int = 200) -> float:
    """``mu1 = E[sigma'(z)]`` for ``z ~ N(0, 1)`` (Gauss-Hermite quadrature).

    By Stein's lemma this is also ``E[z sigma(z)]``, the first Hermite
    coefficient of ``sigma``.
    """
    act = get_activation(activation)
    torch = _torch.torch()

    def dsig(z: np.ndarray) -> np.ndarray:
        return _torch.to_numpy(act.deriv(torch.from_numpy(z)))

    return gaussian_expectation(dsig, n_quad)


def one_step_spike_strength(result: TwoStepResult, activation: str | Activation | None = None
                            ) -> float:
    """``theta1 = lr1 |mu1| ||a|| ||g1||`` of the rank-one part of the first step.

    With ``W0 = G0 / sqrt(D)`` (``G0`` standard Gaussian, ``N x D``) the step-1
    weights are ``W1 ~ G0/sqrt(D) + theta1 u v^T`` with ``u = a/||a||`` and
    ``v = g1/||g1||``: Benaych-Georges & Nadakuditi's rectangular model with
    ``n = N`` rows, ``m = D`` columns and ``c = N/D`` (see
    :func:`specdyn.theory.rmt.rectangular_spike`). Left overlaps are with ``a``,
    right overlaps with ``g1``.
    """
    act = result.meta["activation"] if activation is None else activation
    mu1 = activation_mu1(act)
    return float(result.lrs[0] * abs(mu1) * np.linalg.norm(result.a)
                 * np.linalg.norm(result.g[0]))


def _resolve_steps(N: int, lrs: tuple[float, float] | None,
                   alphas: tuple[float, float] | None) -> tuple[tuple[float, float],
                                                                tuple[float, float]]:
    if (lrs is None) == (alphas is None):
        raise ValueError("give exactly one of lrs=(lr1, lr2) or alphas=(alpha1, alpha2)")
    if alphas is not None:
        if len(alphas) != 2:
            raise ValueError(f"alphas must be a pair (alpha1, alpha2), got {alphas!r}")
        a1 = v.in_range("alpha1", alphas[0], 0.0, 0.5, hi_open=True)
        a2 = v.in_range("alpha2", alphas[1], 0.0, 0.5, hi_open=True)
        return (float(N) ** a1, float(N) ** a2), (a1, a2)
    assert lrs is not None
    if len(lrs) != 2:
        raise ValueError(f"lrs must be a pair (lr1, lr2), got {lrs!r}")
    e1 = v.positive("lr1", lrs[0])
    e2 = v.positive("lr2", lrs[1])
    logn = math.log(N) if N > 1 else 1.0
    return (e1, e2), (math.log(e1) / logn, math.log(e2) / logn)


@dataclass(frozen=True, kw_only=True)
@v.constrained_fields(D=v.SIZE, M=v.SIZE, N=v.SIZE, reuse_batch=v.Bool(), losses=v.Bool())
class TwoStepConfig(SimConfig):
    """How :func:`gd_steps` and :func:`gd_steps_row` run: every parameter but the step sizes.

    Attributes
    ----------
    D, M, N
        Input dimension, batch size (samples per step), width (each ``>= 1``).
    activation
        A name from :data:`specdyn.models.activations.ACTIVATIONS` or an
        :class:`Activation`; the default ``"tanh-shift"`` (``tanh(z + 1/2)``)
        has every Hermite coefficient non-zero.
    target
        A :class:`HermiteTarget` or one of its names (``"He1"``, ``"He2"``,
        ``"He3"``, ``"He2+He3"``, ``"tanh"``). A target without a direction
        gets one uniform on the sphere, drawn from the seed.
    reuse_batch
        ``False``: step 2 draws a fresh batch; ``True``: it reuses step 1's.
    losses
        ``False``: skip the forward passes that only the loss needs (one at ``W2``,
        one at ``W1`` for a fresh batch); those entries of ``loss`` are NaN.
    options
        The run's options (:class:`~specdyn.sim.config.SimConfig`): the seed seeds
        ``numpy.random.default_rng`` (``W0``, ``a`` and the batches are drawn on the host
        in float64, so a run is the same on every device); ``dtype`` (default float64)
        and ``device`` (default CUDA when present); the checkpoints are the three states.
    """

    D: int
    M: int
    N: int
    activation: str | Activation = "tanh-shift"
    target: HermiteTarget | str = "He1"
    reuse_batch: bool = False
    losses: bool = True


def gd_steps(D: int, M: int, N: int, lrs: tuple[float, float] | None = None,
             alphas: tuple[float, float] | None = None, *, data: TwoStepData | None = None,
             **options: Any) -> TwoStepResult:
    """Two GD steps on the first layer of ``f(x) = N^(-1/2) a^T sigma(W x)``.

    See the module docstring for the model, the update and the scalings.

    Parameters
    ----------
    D, M, N
        Input dimension, batch size, width (:class:`TwoStepConfig`).
    lrs, alphas
        Exactly one: the step sizes ``(lr1, lr2)`` (> 0), or exponents
        ``(alpha1, alpha2)`` in ``[0, 1/2)`` giving ``lr_k = N^alpha_k``.
    data
        The draw of :func:`draw_data` for these sizes, ``target``, ``reuse_batch``,
        ``seed``, dtype and device (checked), used instead of drawing again: the
        same numbers, bit for bit, as without it.
    **options
        The other fields of :class:`TwoStepConfig` (``activation``, ``target``,
        ``reuse_batch``, ``losses``), the run options' shorthands (``seed``, ``dtype``,
        ``device``) or ``options``.

    Returns
    -------
    TwoStepResult
        Host numpy float64 arrays.

    Raises
    ------
    DivergenceError
        If the weights stop being finite (``.step`` is 1 or 2, the message has a
        suggestion; no partial record).
    """
    cfg = TwoStepConfig.of({"D": D, "M": M, "N": N, **options}, entry="gd_steps")
    (lr1, lr2), (al1, al2) = _resolve_steps(N, lrs, alphas)
    return next(_row_runs(cfg, (lr1, al1), [(lr2, al2)], data))


#: A step-size exponent (the steps are ``N^alpha``), in ``[0, 1/2)``.
_EXPONENT = v.Real(0.0, 0.5, hi_open=True)


@v.constrained(alpha1=_EXPONENT, alpha2=v.Tuple(_EXPONENT, min_len=1))
def gd_steps_row(D: int, M: int, N: int, alpha1: float, alpha2: Sequence[float], *,
                 data: TwoStepData | None = None, **options: Any) -> Iterator[TwoStepResult]:
    """``gd_steps(D, M, N, alphas=(alpha1, a2), ...)`` for each ``a2`` in ``alpha2``, in order.

    A row of a grid over ``(alpha1, alpha2)``: ``W1 = W0 + N^alpha1 G1`` and the
    step-2 direction ``G2`` (the gradient at ``W1`` on the second batch) depend on
    ``alpha1`` and the seed only, so they are computed once, by the first result,
    and each cell adds ``W2 = W1 + N^alpha2 G2``: the same operations as
    :func:`gd_steps`, so the same numbers, bit for bit (every result's ``W0``,
    ``W1`` and ``a`` are the same arrays). The arguments are those of
    :func:`gd_steps` (``alpha1``, each ``alpha2`` in ``[0, 1/2)``).

    Returns
    -------
    Iterator[TwoStepResult]
        Lazy: a result is made when asked for, so a caller that keeps one ``W2`` at a
        time holds one. The first result's ``meta["wall_time_s"]`` includes the
        row's shared work (draw, step 1, ``G2``).
    """
    cfg = TwoStepConfig.of({"D": D, "M": M, "N": N, **options}, entry="gd_steps_row")
    second = [_resolve_steps(N, None, (alpha1, a2)) for a2 in alpha2]
    (lr1, _), (al1, _) = second[0]
    return _row_runs(cfg, (lr1, al1), [(lrs[1], als[1]) for lrs, als in second], data)


def _row_runs(cfg: TwoStepConfig, first: tuple[float, float],
              second: Sequence[tuple[float, float]], data: TwoStepData | None
              ) -> Iterator[TwoStepResult]:
    """The runs of step sizes ``(lr1, lr2)`` for each ``(lr2, alpha2)`` in ``second``
    (``first = (lr1, alpha1)``): each cell one run of a :class:`TwoStepEngine` on the
    row's draw, the cells sharing step 1 and the step-2 direction (the engines' ``memo``).
    A generator, so its work starts at the first ``next``."""
    start = time.perf_counter()
    lr1, al1 = first
    D, M, N, opts = cfg.D, cfg.M, cfg.N, cfg.options
    act = get_activation(cfg.activation)
    if data is None:
        data = draw_data(D, M, N, target=cfg.target, reuse_batch=cfg.reuse_batch,
                         seed=opts.seed, dtype=opts.dtype, device=opts.device)
    else:
        _check_data(data, cfg)
    memo: dict[Any, Any] = {}  # the row's shared work: step 1, the step-2 direction, W1, loss1
    for j, (lr2, al2) in enumerate(second):
        cell_start = start if j == 0 else time.perf_counter()
        eng = TwoStepEngine(act, (lr1, lr2), N=N, D=D, M=M, target=data.tgt, dtype=data.dtype,
                            device=data.device, memo=memo)
        meta = functools.partial(
            record_meta, "two_step", seed=opts.seed, dtype=data.dtype, device=data.device,
            start=cell_start, steps=2, D=D, M=M, N=N, activation=act.name,
            target=repr(data.tgt), information_exponent=data.tgt.information_exponent)
        result = run(eng, _Recorder(eng, data, cfg, memo, (al1, al2), meta), steps=2,
                     options=opts, checkpoints=np.arange(3),
                     streams=Streams(init=data, batch=data))
        assert result is not None  # None only for a diverged run, which raised
        yield result


class _Recorder:
    """The three states of a two-step cell and its :class:`TwoStepResult`: host copies of
    the weights (``W0`` the draw itself, ``W1`` the row's, kept in ``memo``), the data
    vectors and the losses on batch 1 (the passes that give them, once a row where
    shared)."""

    def __init__(self, eng: TwoStepEngine, data: TwoStepData, cfg: TwoStepConfig,
                 memo: dict[Any, Any], alphas: tuple[float, float], meta: Any) -> None:
        self.eng, self.data, self.cfg, self.memo, self.meta = eng, data, cfg, memo, meta
        self.alphas = alphas
        self.states: list[TwoStepState] = []
        self.gs: list[np.ndarray] = []
        self.Ws: list[np.ndarray] = []

    def snapshot(self, state: TwoStepState, k: int) -> None:
        """Record state ``k`` (0, 1, 2)."""
        if state.g is not None:
            self.gs.append(_torch.to_numpy(state.g, np.float64))
        if k == 1 and "W1" not in self.memo:
            self.memo["W1"] = _torch.to_numpy(state.W, np.float64)
        self.Ws.append(self.data.W0_np if k == 0 else self.memo["W1"] if k == 1
                       else _torch.to_numpy(state.W, np.float64))
        self.states.append(state)

    def finish(self, outcome: Outcome[TwoStepState]) -> TwoStepResult | None:
        """The cell's result (``None`` for a diverged run: two steps or none)."""
        if outcome.diverged is not None:
            return None
        # the losses on batch 1: the forward passes of the updates give those of W0 (and
        # of W1 when step 2 reuses batch 1); one more pass each for the others (W1's once
        # a row), skipped (NaN) unless asked for
        s1, s2 = self.states[1], self.states[2]
        assert s1.loss_before is not None and s2.loss_before is not None
        X1, y1, losses = self.data.X1, self.data.y1, self.cfg.losses
        if self.cfg.reuse_batch:
            loss1 = float(s2.loss_before)
        elif not losses:
            loss1 = math.nan
        else:
            if "loss1" not in self.memo:
                self.memo["loss1"] = self.eng.loss(s1, X1, y1)
            loss1 = self.memo["loss1"]
        loss2 = self.eng.loss(s2, X1, y1) if losses else math.nan
        return TwoStepResult(W0=self.Ws[0], W1=self.Ws[1], W2=self.Ws[2], a=self.data.a_np,
                             beta=self.data.beta, lrs=(self.eng.lrs[0], self.eng.lrs[1]),
                             alphas=self.alphas,
                             reuse_batch=bool(self.cfg.reuse_batch), g=np.stack(self.gs),
                             loss=np.asarray([float(s1.loss_before), loss1, loss2]),
                             meta=self.meta())


def _check_data(data: TwoStepData, cfg: TwoStepConfig) -> None:
    """``data`` must be the draw of these settings (else the run would silently differ)."""
    if not isinstance(data, TwoStepData):
        raise ValueError(f"data must be a TwoStepData (draw_data), got {type(data).__name__}")
    D, target, seed, opts = cfg.D, cfg.target, cfg.options.seed, cfg.options
    want = {"D": D, "M": cfg.M, "N": cfg.N, "seed": seed,
            "reuse_batch": bool(cfg.reuse_batch), "dtype": _torch.resolve_dtype(opts.dtype),
            "device": _torch.resolve_device(opts.device)}
    got = {k: getattr(data, k) for k in want}
    tgt = resolve_target(target, D, seed_streams(seed, 2)[1])
    if repr(tgt) != repr(data.tgt) or not np.array_equal(np.asarray(tgt.direction), data.beta):
        got["target"], want["target"] = repr(data.tgt), repr(tgt)
    if got != want:
        bad = sorted(k for k in want if got[k] != want[k])
        raise ValueError(f"data was drawn for other settings: {', '.join(bad)} differ "
                         f"(data {[got[k] for k in bad]}, run {[want[k] for k in bad]})")
