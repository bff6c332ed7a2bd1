"""Exact finite-width, finite-sample training of the two-layer linear network.

The student is ``f(x) = A^T W x / (gamma0 N)`` (mean-field scaling) with
``W`` ``N x D``, ``A`` ``N x P``, initial entries ``N(0, sigma_w^2)`` and
``N(0, sigma_a^2)``, trained by full-batch gradient descent on
``L = (1/2M) sum_m ||f(x_m) - y_m||^2`` with learning rate ``nu = N`` and step
``dt``, so that one step advances the theory's time by ``dt`` (``t = step * dt``).

Two engines:

- ``engine="gram"`` evolves the Gram matrices ``Gw = W^T W/N``, ``Ga = A^T A/N``,
  ``Gwa = W^T A/N`` by the exact Gram-space GD update (eight ``D``-sized
  matrix products a step, independent of ``N`` and ``M``), or integrates their
  gradient flow (``method="flow"``).
- ``engine="weights"`` trains ``W`` and ``A`` in torch with hand-written
  gradients; the reference the Gram engine is tested against.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from specdyn import _validate as v
from specdyn.data.teacher import PowerLawTeacher
from specdyn.settings import Setting
from specdyn.sim import gram as _gram
from specdyn.sim.config import SimConfig
from specdyn.sim.divergence import Divergence
from specdyn.sim.inputs import RunInputs, Setup
from specdyn.sim.loop import run
from specdyn.sim.options import RunOptions
from specdyn.sim.protocol import Engine, EngineDefaults, Outcome, StreamLayout
from specdyn.sim.recording import Observable, PerState, SpectrumRecorder, low_rank_eigenvalues
from specdyn.sim.registry import engine as register_engine
from specdyn.sim.registry import entry_point
from specdyn.sim.system import SETTING, TEACHER, System
from specdyn.sim.trajectory import Trajectory

if TYPE_CHECKING:
    from typing import Unpack

    from specdyn.sim.options import RunKeywords

__all__ = ["LinearConfig", "WeightEngine", "WeightState", "linear_recorder", "train_linear"]

_FLOW_RTOL = 1e-10


@dataclass(frozen=True, kw_only=True)
@v.constrained_fields(N=v.Int(1, optional=True), M=v.Int(1, optional=True), steps=v.SIZE,
                      dt=v.POSITIVE, method=v.Choice("gd", "flow"),
                      engine=v.Choice("gram", "weights"))
class LinearConfig(SimConfig):
    """How :func:`train_linear` trains the two-layer linear network: every parameter, once.

    Attributes
    ----------
    N
        Width, or ``None`` for infinite width (Grams start at ``sigma_w^2 I``,
        ``sigma_a^2 I``, ``0``).
    M
        Number of training samples, or ``None`` for the population limit
        (``Sigma = Lambda``, ``C = Lambda Theta``).
    steps
        Number of GD steps; the run covers ``t in [0, steps * dt]``.
    dt
        Step size; learning rate ``nu = N``, one step advances ``t`` by ``dt``.
    method
        ``"gd"`` (discrete full-batch GD, exact) or ``"flow"`` (gradient flow,
        ``engine="gram"`` only). The flow integrates the decoupled per-mode ODE
        with an implicit solver (Radau, ``rtol = 1e-10``) when the problem is
        diagonal in the teacher basis (``N = None``, ``M = None``, aligned
        teacher) and the full Gram ODE with explicit DOP853 otherwise (which
        needs many steps at late times: the flow is stiff). The flow is always
        float64 on the CPU.
    engine
        ``"gram"`` (:class:`~specdyn.sim.gram.GramEngine`, the exact Gram-space update,
        cost O(D^3) a step) or ``"weights"`` (:class:`WeightEngine`, weight-space torch
        GD with hand-written gradients; needs finite ``N``; with finite ``M`` it uses the
        data matrix each step, with ``M = None`` the population gradient
        ``G = Lambda Theta - Lambda W^T A/(gamma0 N)``).
    options
        The run's options (:class:`~specdyn.sim.config.SimConfig`); ``checkpoints``
        ``None`` is 0 and 60 log-spaced steps. GD always runs all ``steps`` (checked for
        divergence to the end); the flow is evaluated at the checkpoint times. The seed
        seeds the data sample and the initial weights (independent streams, the two-layer
        engine's); ``dtype``, ``device`` are those of the GD loop (spectra are always
        float64 on the host).
    """

    N: int | None
    M: int | None
    steps: int
    dt: float = 1.0
    method: str = "gd"
    engine: str = "gram"

    def __post_init__(self) -> None:
        if self.engine == "weights" and self.N is None:
            raise ValueError("N must be a finite width for engine='weights' (N=None needs "
                             "'gram')")
        if self.engine == "weights" and self.method == "flow":
            raise ValueError("method='flow' is only available with engine='gram'")


def _example() -> Any:
    from specdyn.settings import FEATURE_LEARNING

    return (FEATURE_LEARNING.setting(D=6), 8, 8, 40), {"progress": False,
                                                              "device": "cpu"}


@entry_point(LinearConfig, example=_example)
@v.constrained(setting=SETTING, teacher=TEACHER)
def train_linear(setting: Setting, N: int | None, M: int | None, steps: int, *,
                 teacher: PowerLawTeacher | None = None, dt: float = 1.0, method: str = "gd",
                 engine: str = "gram", options: RunOptions | None = None,
                 **shorthands: Unpack[RunKeywords]) -> Trajectory:
    """Train the two-layer linear network and record spectra at checkpoints.

    Parameters
    ----------
    setting
        The system (``lambda_k``, ``mu_k``, ``sigma_w``, ``sigma_a``, ``gamma0``);
        a ``PowerLawSetting`` needs ``D`` set unless a ``teacher`` is given.
    N, M, steps, dt, method, engine
        Width, samples, steps, step size, GD or flow, and the engine
        (:class:`LinearConfig`, where each is documented).
    teacher
        Data model (default ``PowerLawTeacher(setting)``: aligned, ``P = D``).
        Its ``lambda_k``, ``mu_k`` and bases define the data; the setting supplies
        ``sigma_w``, ``sigma_a`` and ``gamma0``. Its ``D`` must match the setting's.
    options, **shorthands
        The run's :class:`~specdyn.sim.options.RunOptions`, or its fields as keywords.

    Returns
    -------
    Trajectory
        ``series["preact"]``: eigenvalues of ``Sigma^(1/2) Gw Sigma^(1/2)`` (the
        nonzero eigenvalues of ``H H^T/(MN)``), decreasing; ``diagonals``
        ``xi, eta, zeta`` in the teacher basis; the training loss.

    Raises
    ------
    ValueError
        Bad arguments (before any work).
    DivergenceError
        The run diverged; the message and ``.step`` name the first bad step,
        ``.record`` holds the checkpoints recorded before it.
    """
    cfg = LinearConfig.of_call(locals(), entry="train_linear")
    system = System.of(setting, teacher)
    ck = cfg.options.schedule(cfg.steps)
    if cfg.method == "flow":
        return _flow(cfg, system, ck)

    def build(inputs: RunInputs) -> tuple[Engine[Any, None], SpectrumRecorder[Any, Trajectory]]:
        data = None if cfg.M is None else system.sample(cfg.M, inputs)
        stats, s = system.stats(data), system.setting
        eng: _gram.GramEngine | WeightEngine
        if cfg.engine == "gram":
            eng = _gram.GramEngine(stats, s.gamma0, cfg.dt, inputs.dtype, inputs.device,
                                   N=cfg.N, sigma_w=s.sigma_w, sigma_a=s.sigma_a)
        else:
            assert cfg.N is not None
            eng = WeightEngine(stats, s.gamma0, cfg.dt, data, inputs.dtype, inputs.device,
                               N=cfg.N, sigma_w=s.sigma_w, sigma_a=s.sigma_a)
        return eng, linear_recorder(PerState(eng.host), stats, system, dt=eng.dt,
                                    meta=_meta(cfg, system))

    return run(Setup(cfg.engine, _gram.GramEngine.streams, build), steps=cfg.steps,
               options=cfg.options, checkpoints=ck, desc=f"{cfg.engine} GD")


def _meta(cfg: LinearConfig, system: System) -> dict[str, Any]:
    return {"method": cfg.method, "N": cfg.N, "M": cfg.M, "dt": cfg.dt, **system.meta()}


def linear_recorder(grams: Any, stats: _gram.Stats, system: System, *, dt: float,
                    meta: dict[str, Any]) -> SpectrumRecorder[Any, Trajectory]:
    """The recorder of a two-layer linear run, from a state's float64 host Grams.

    ``grams(state) -> ((Gw, Ga, Gwa), loss)`` (``loss`` ``None``: computed from the Grams);
    records ``"preact"`` (eigenvalues of ``Sigma^(1/2) Gw Sigma^(1/2)``, those at or below
    the rank tolerance set to 0), the teacher-basis diagonals ``xi``, ``eta``, ``zeta``
    and the loss: the :class:`~specdyn.sim.trajectory.Trajectory` of
    :func:`train_linear`, and of any engine of the same network whose state gives its
    Grams.
    """
    teacher, gamma0 = system.teacher, system.setting.gamma0

    def loss(state: Any) -> float:
        (_, _, gwa), value = grams(state)
        return _gram.loss_from_grams(stats, gwa, gamma0) if value is None else value

    return SpectrumRecorder({
        "loss": loss,
        "preact": Observable(lambda st: stats.sigma_half @ grams(st)[0][0] @ stats.sigma_half,
                             low_rank_eigenvalues),
        "diagonals": lambda st: _gram.teacher_diagonals(grams(st)[0], teacher),
    }, dt=dt, meta=meta)


@dataclass(frozen=True)
class WeightState:
    """The state of a weight-space linear run, a value: ``W`` (``N x D``), ``A``
    (``N x P``), the gradient factor ``G`` and the ``loss`` (0-d), both of these weights
    (see :class:`WeightEngine`)."""

    W: Any
    A: Any
    G: Any
    loss: Any


def _engine_example(population: bool) -> Any:
    """A width-8 network on 12 samples (``D = 3``, ``P = 2``) or their population (CPU)."""
    return (_gram.example_stats(), 1.0, 0.05, None if population else _gram.example_data()), {
        "device": "cpu", "N": 8, "sigma_w": 0.5, "sigma_a": 1.0}


@register_engine(examples={"population": lambda: _engine_example(True),
                           "data": lambda: _engine_example(False)})
class WeightEngine(Engine[WeightState, None]):
    """Weight-space full-batch GD of the two-layer linear network (hand-written gradients).

    The reference the Gram engine is tested against. The state is a
    :class:`WeightState`: the weights, the gradient factor
    ``G = X^T E / M`` (``E = Y - f(X)``; the population ``Lambda Theta - Lambda B``
    when ``xy`` is ``None``) and the loss, both of the current weights.
    :meth:`step` returns a new state and leaves the given one as it was
    (learning rate ``nu = N``: ``W' = W + c A G^T``, ``A' = A + c W G``,
    ``c = dt / gamma0``; out of place: ``addmm`` for ``A``, ``add`` for ``W``). :meth:`init`
    (generator) draws width-``N`` weights from a CPU ``torch.Generator``
    (:func:`~specdyn.sim.gram.weight_generator`: the Gram engine's draw).
    """

    defaults: ClassVar[EngineDefaults] = _gram.GramEngine.defaults  # the Gram engine's
    streams: ClassVar[StreamLayout] = _gram.GramEngine.streams  # the same data and weights

    @v.constrained(gamma0=v.POSITIVE, dt=v.POSITIVE, N=v.SIZE, sigma_w=v.NONNEGATIVE,
                   sigma_a=v.NONNEGATIVE)
    def __init__(self, stats: _gram.Stats, gamma0: float, dt: float,
                 xy: tuple[np.ndarray, np.ndarray] | None, dtype: Any = None,
                 device: Any = None, *, N: int, sigma_w: float, sigma_a: float) -> None:
        from specdyn._torch import resolve_device, resolve_dtype, torch

        t = self.t = torch()
        self.N, self.sigma_w, self.sigma_a = N, sigma_w, sigma_a
        self.dtype, self.device = resolve_dtype(dtype), resolve_device(device)
        self.gamma0, self.dt, self.c = gamma0, dt, dt / gamma0
        if xy is not None:
            self.X = t.as_tensor(xy[0], dtype=self.dtype, device=self.device)
            self.Y = t.as_tensor(xy[1], dtype=self.dtype, device=self.device)
        else:
            self.X = self.Y = None
            self.sigma = t.as_tensor(stats.sigma, dtype=self.dtype, device=self.device)
            self.cm = t.as_tensor(stats.c, dtype=self.dtype, device=self.device)
            self.syy_tr = float(np.trace(stats.syy))

    def _grad_and_loss(self, W: Any, A: Any) -> tuple[Any, Any]:
        scale = 1.0 / (self.gamma0 * W.shape[0])
        if self.X is not None:
            M = self.X.shape[0]
            E = self.Y - (self.X @ W.T) @ A * scale  # residuals, M x P
            return self.X.T @ E / M, 0.5 * (E * E).sum() / M  # G = X^T E / M
        B = (W.T @ A) * scale
        SB = self.sigma @ B
        return self.cm - SB, 0.5 * self.syy_tr - (self.cm * B).sum() + 0.5 * (B * SB).sum()

    def init(self, generator: Any) -> WeightState:
        """Initial weights from ``generator`` (the same draw as the Gram engine's)."""
        D, P = (self.X.shape[1], self.Y.shape[1]) if self.X is not None else self.cm.shape
        chunks = list(_gram.weight_chunks(self.N, D, P, self.sigma_w, self.sigma_a,
                                          generator))
        W = self.t.cat([w for w, _ in chunks]).to(self.device, self.dtype)
        A = self.t.cat([a for _, a in chunks]).to(self.device, self.dtype)
        return WeightState(W, A, *self._grad_and_loss(W, A))

    def step(self, state: WeightState, batch: Any = None) -> WeightState:
        """One full-batch GD step (``batch`` is unused)."""
        W, A, G = state.W, state.A, state.G
        A2 = self.t.addmm(A, W, G, alpha=self.c)  # A' = A + c W G
        W2 = W.add(A @ G.T, alpha=self.c)  # W' = W + c A G^T (A before this step)
        return WeightState(W2, A2, *self._grad_and_loss(W2, A2))

    def divergence(self, state0: WeightState) -> Divergence[WeightState]:
        """The training loss (NaN when a weight is not finite), against its start."""
        return _gram.loss_divergence(self.dt, float(state0.loss),
                                     lambda s: _gram.watched_loss(s.loss, s.W))

    def host(self, state: WeightState) -> tuple[_gram.Grams, float | None]:
        """A checkpoint's float64 host Grams and its loss."""
        return self.grams(state), float(state.loss)

    def grams(self, state: WeightState) -> _gram.Grams:
        """Float64 host ``(Gw, Ga, Gwa)``."""
        return _gram.weight_grams(state.W, state.A)


def _flow(cfg: LinearConfig, system: System, ck: np.ndarray) -> Trajectory:
    """Gradient flow of the Grams, evaluated at the checkpoint times (an ODE solve, not a
    loop of steps), float64 on the host: the per-mode (diagonal) path when the problem is
    diagonal in the teacher basis, the full Gram ODE otherwise."""
    inputs = RunInputs.of(cfg.options, _gram.GramEngine.streams)  # checked, then unused
    stats = system.stats(None if cfg.M is None else system.sample(cfg.M, inputs))
    s, N, teacher = system.setting, cfg.N, system.teacher
    D, P = stats.c.shape
    bx, by = teacher.basis_x, teacher.basis_y
    sig_b = bx.T @ stats.sigma @ bx
    c_b = bx.T @ stats.c @ by
    r = min(D, P)
    scale = max(np.abs(sig_b).max(), 1e-300)
    off_sig = np.abs(sig_b - np.diag(np.diagonal(sig_b))).max() / scale
    c_off = c_b.copy()
    c_off[np.arange(r), np.arange(r)] = 0.0
    off_c = np.abs(c_off).max() / max(np.abs(c_b).max(), 1e-300)
    diagonal = N is None and off_sig < 1e-12 and off_c < 1e-12
    times = ck * cfg.dt
    recorder = linear_recorder(lambda host: host, stats, system, dt=cfg.dt, meta={
        **_meta(cfg, system), "flow_solver": "Radau (per mode)" if diagonal else "DOP853",
        "rtol": _FLOW_RTOL})
    if diagonal:
        lam = np.diagonal(sig_b).copy()
        cdiag = np.zeros(D)
        cdiag[:r] = np.diagonal(c_b)[:r]
        init = (np.zeros(D), np.full(D, s.sigma_w**2), np.full(D, s.sigma_a**2))
        atol = 1e-14 * max(s.S, 1.0)
        states, _ = _gram.solve_flow_diagonal(lam, cdiag, s.gamma0, init, times, _FLOW_RTOL,
                                              atol)
        for step, st in zip(ck, states, strict=True):
            xi, eta, zeta = st
            gwa_b = np.zeros((D, P))
            gwa_b[np.arange(r), np.arange(r)] = xi[:r]
            ga_b = s.sigma_a**2 * np.eye(P)
            ga_b[np.arange(r), np.arange(r)] = zeta[:r]
            recorder.snapshot(((bx @ np.diag(eta) @ bx.T, by @ ga_b @ by.T, bx @ gwa_b @ by.T),
                               None), int(step))
    else:
        grams0 = _gram.initial_grams(N, D, P, s.sigma_w, s.sigma_a,
                                     _gram.weight_generator(inputs.seed_of("init")))
        states3, _ = _gram.solve_flow_full(stats, s.gamma0, grams0, times, _FLOW_RTOL,
                                           1e-14 * max(s.S, 1.0))
        for step, g in zip(ck, states3, strict=True):
            recorder.snapshot((g, None), int(step))
    meta = RunInputs(inputs.seed, "float64", "cpu", inputs.streams, inputs.start).meta(
        cfg.engine, cfg.steps)
    return recorder.finish(Outcome(None, cfg.steps, meta=meta))
