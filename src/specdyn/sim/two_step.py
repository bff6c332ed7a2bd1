"""Two full-batch gradient steps on the first layer of a wide two-layer network.

Setting (linear-width regime, ``docs/related-works.md`` section 2; Ba et al. 2022,
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

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from specdyn import _torch
from specdyn import _validate as v
from specdyn.data.hermite import NAMED_TARGETS, HermiteTarget, gaussian_expectation
from specdyn.models.activations import ACTIVATIONS, Activation, get_activation
from specdyn.sim.config import SimConfig
from specdyn.sim.inputs import RunInputs, Setup
from specdyn.sim.loop import run
from specdyn.sim.options import RunOptions
from specdyn.sim.protocol import Outcome, Record
from specdyn.sim.recording import Recorded, SpectrumRecorder
from specdyn.sim.registry import entry_point
from specdyn.sim.two_step_engine import (
    TwoStepData,
    TwoStepEngine,
    TwoStepGradient,
    TwoStepState,
    draw_data,
    resolve_target,
)

if TYPE_CHECKING:
    from typing import Unpack

    from specdyn.sim.options import RunKeywords

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


#: A step-size exponent (the steps are ``N^alpha``), in ``[0, 1/2)``.
_EXPONENT = v.Real(0.0, 0.5, hi_open=True)


def _resolve_steps(N: int, lrs: tuple[float, float] | None,
                   alphas: tuple[float, float] | None) -> tuple[tuple[float, float],
                                                                tuple[float, float]]:
    """``((lr1, lr2), (alpha1, alpha2))`` of exactly one of the (declared, checked) pairs."""
    if (lrs is None) == (alphas is None):
        raise ValueError("give exactly one of lrs=(lr1, lr2) or alphas=(alpha1, alpha2)")
    if alphas is not None:
        a1, a2 = alphas
        return (float(N) ** a1, float(N) ** a2), (a1, a2)
    assert lrs is not None
    e1, e2 = lrs
    logn = math.log(N) if N > 1 else 1.0
    return (e1, e2), (math.log(e1) / logn, math.log(e2) / logn)


@dataclass(frozen=True, kw_only=True)
@v.constrained_fields(D=v.SIZE, M=v.SIZE, N=v.SIZE,
                      activation=v.Instance(Activation, names=ACTIVATIONS),
                      target=v.Instance(HermiteTarget, names=NAMED_TARGETS),
                      reuse_batch=v.Bool(), losses=v.Bool())
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


def _example() -> Any:
    return (40, 40, 40), {"alphas": (0.1, 0.1), "device": "cpu"}


@entry_point(TwoStepConfig, example=_example)
@v.constrained(lrs=v.Tuple(v.POSITIVE, length=2, optional=True),
               alphas=v.Tuple(_EXPONENT, length=2, optional=True))
def gd_steps(D: int, M: int, N: int, lrs: tuple[float, float] | None = None,
             alphas: tuple[float, float] | None = None, *,
             activation: str | Activation = "tanh-shift", target: HermiteTarget | str = "He1",
             reuse_batch: bool = False, losses: bool = True, data: TwoStepData | None = None,
             options: RunOptions | None = None,
             **shorthands: Unpack[RunKeywords]) -> TwoStepResult:
    """Two GD steps on the first layer of ``f(x) = N^(-1/2) a^T sigma(W x)``.

    See the module docstring for the model, the update and the scalings.

    Parameters
    ----------
    D, M, N, activation, target, reuse_batch, losses
        Input dimension, batch size, width, the network and what is recorded
        (:class:`TwoStepConfig`, where each is documented).
    lrs, alphas
        Exactly one: the step sizes ``(lr1, lr2)`` (> 0), or exponents
        ``(alpha1, alpha2)`` in ``[0, 1/2)`` giving ``lr_k = N^alpha_k``.
    data
        The draw of :func:`draw_data` for these sizes, ``target``, ``reuse_batch``,
        ``seed``, dtype and device (checked), used instead of drawing again: the
        same numbers, bit for bit, as without it.
    options, **shorthands
        The run's :class:`~specdyn.sim.options.RunOptions`, or its fields ``seed``,
        ``dtype``, ``device`` as keywords (not both ways).

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
    cfg = TwoStepConfig.of_call(locals(), entry="gd_steps")
    (lr1, lr2), (al1, al2) = _resolve_steps(N, lrs, alphas)
    return next(_row_runs(cfg, (lr1, al1), [(lr2, al2)], data))


def _row_example() -> Any:
    return (40, 40, 40, 0.1, (0.1, 0.2)), {"device": "cpu"}


@entry_point(TwoStepConfig, example=_row_example)
@v.constrained(alpha1=_EXPONENT, alpha2=v.Tuple(_EXPONENT, min_len=1))
def gd_steps_row(D: int, M: int, N: int, alpha1: float, alpha2: Sequence[float], *,
                 activation: str | Activation = "tanh-shift",
                 target: HermiteTarget | str = "He1", reuse_batch: bool = False,
                 losses: bool = True, data: TwoStepData | None = None,
                 options: RunOptions | None = None,
                 **shorthands: Unpack[RunKeywords]) -> Iterator[TwoStepResult]:
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
    cfg = TwoStepConfig.of_call(locals(), entry="gd_steps_row")
    second = [_resolve_steps(N, None, (alpha1, a2)) for a2 in alpha2]
    (lr1, _), (al1, _) = second[0]
    return _row_runs(cfg, (lr1, al1), [(lrs[1], als[1]) for lrs, als in second], data)


def _row_runs(cfg: TwoStepConfig, first: tuple[float, float],
              second: Sequence[tuple[float, float]], data: TwoStepData | None
              ) -> Iterator[TwoStepResult]:
    """The runs of step sizes ``(lr1, lr2)`` for each ``(lr2, alpha2)`` in ``second``
    (``first = (lr1, alpha1)``): each cell one run of a :class:`TwoStepEngine` on the
    row's draw (made by the first cell's build, or given), the cells sharing step 1 and
    the step-2 direction (the engines' ``memo``). A generator, so its work starts at the
    first ``next``."""
    lr1, al1 = first
    act = get_activation(cfg.activation)
    # the row's shared work: its draw, step 1, the step-2 direction, W1, loss1
    memo: dict[Any, Any] = {}
    for lr2, al2 in second:
        def build(inputs: RunInputs, lr2: float = lr2, al2: float = al2
                  ) -> tuple[TwoStepEngine, SpectrumRecorder[TwoStepState, TwoStepResult]]:
            if "data" not in memo:
                memo["data"] = _row_data(cfg, data, inputs)
            row: TwoStepData = memo["data"]
            eng = TwoStepEngine(act, (lr1, lr2), N=cfg.N, D=cfg.D, M=cfg.M, target=row.tgt,
                                dtype=row.dtype, device=row.device, memo=memo, data=row)
            return eng, _two_step_recorder(eng, row, cfg, memo, (al1, al2), {
                "D": cfg.D, "M": cfg.M, "N": cfg.N, "activation": act.name,
                "target": repr(row.tgt), "information_exponent":
                row.tgt.information_exponent})

        result = run(Setup("two_step", TwoStepEngine.streams, build), steps=2,
                     options=cfg.options, checkpoints=np.arange(3))
        assert result is not None  # None only for a diverged run, which raised
        yield result


def _row_data(cfg: TwoStepConfig, data: TwoStepData | None, inputs: RunInputs) -> TwoStepData:
    """The row's draw: ``data`` checked against the run (else the run would silently
    differ), or drawn from the run's seed, dtype and device."""
    if data is None:
        return draw_data(cfg.D, cfg.M, cfg.N, target=cfg.target, reuse_batch=cfg.reuse_batch,
                         seed=inputs.seed, dtype=inputs.dtype, device=inputs.device)
    if not isinstance(data, TwoStepData):
        raise ValueError(f"data must be a TwoStepData (draw_data), got {type(data).__name__}")
    want = {"D": cfg.D, "M": cfg.M, "N": cfg.N, "seed": inputs.seed,
            "reuse_batch": bool(cfg.reuse_batch), "dtype": inputs.dtype,
            "device": inputs.device}
    got = {k: getattr(data, k) for k in want}
    tgt = resolve_target(cfg.target, cfg.D, inputs.seed_of("data"))
    if repr(tgt) != repr(data.tgt) or not np.array_equal(np.asarray(tgt.direction), data.beta):
        got["target"], want["target"] = repr(data.tgt), repr(tgt)
    if got != want:
        bad = sorted(k for k in want if got[k] != want[k])
        raise ValueError(f"data was drawn for other settings: {', '.join(bad)} differ "
                         f"(data {[got[k] for k in bad]}, run {[want[k] for k in bad]})")
    return data


def _two_step_recorder(eng: TwoStepEngine, data: TwoStepData, cfg: TwoStepConfig,
                       memo: dict[Any, Any], alphas: tuple[float, float], meta: dict[str, Any]
                       ) -> SpectrumRecorder[TwoStepState, TwoStepResult]:
    """The recorder of a two-step cell: host copies of the weights at the three states
    (``W0`` the draw itself, ``W1`` the row's, kept in ``memo``), the data vectors, and the
    states, from which the losses on batch 1 are made at the end (the passes that give
    them, once a row where shared)."""
    def weights(state: TwoStepState) -> np.ndarray:
        if state.updates == 0:
            return data.W0_np
        if state.updates == 1 and "W1" not in memo:
            memo["W1"] = _torch.to_numpy(state.W, np.float64)
        return memo["W1"] if state.updates == 1 else _torch.to_numpy(state.W, np.float64)

    def result(rec: Recorded, outcome: Outcome[TwoStepState]) -> TwoStepResult:
        """The cell's result (``None`` for a diverged run: two steps or none)."""
        if outcome.diverged is not None:
            return None  # type: ignore[return-value]  # the error it rides on is raised
        # the losses on batch 1: the forward passes of the updates give those of W0 (and
        # of W1 when step 2 reuses batch 1); one more pass each for the others (W1's once
        # a row), skipped (NaN) unless asked for
        s1, s2 = rec.values["state"][1], rec.values["state"][2]
        assert s1.loss_before is not None and s2.loss_before is not None
        X1, y1, losses = data.X1, data.y1, cfg.losses
        if cfg.reuse_batch:
            loss1 = float(s2.loss_before)
        elif not losses:
            loss1 = math.nan
        else:
            if "loss1" not in memo:
                memo["loss1"] = eng.loss(s1, X1, y1)
            loss1 = memo["loss1"]
        loss2 = eng.loss(s2, X1, y1) if losses else math.nan
        W = rec.values["W"]
        return TwoStepResult(W0=W[0], W1=W[1], W2=W[2], a=data.a_np, beta=data.beta,
                             lrs=(eng.lrs[0], eng.lrs[1]), alphas=alphas,
                             reuse_batch=bool(cfg.reuse_batch),
                             g=np.stack([g for g in rec.values["g"] if g is not None]),
                             loss=np.asarray([float(s1.loss_before), loss1, loss2]),
                             meta=rec.meta)

    return SpectrumRecorder({
        "g": lambda st: None if st.g is None else _torch.to_numpy(st.g, np.float64),
        "W": weights, "state": lambda st: st}, record=result, meta=meta)
