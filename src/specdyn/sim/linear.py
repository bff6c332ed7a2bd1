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

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from specdyn import _validate as v
from specdyn._torch import to_numpy
from specdyn.data.teacher import PowerLawTeacher
from specdyn.schedule import ScheduleLike
from specdyn.settings import AlignedSetting, PowerLawSetting, Setting
from specdyn.sim import gram as _gram
from specdyn.sim import protocol
from specdyn.sim.protocol import DerivedSeed
from specdyn.sim.trajectory import Trajectory

__all__ = ["WeightEngine", "WeightState", "setting_dim", "train_linear"]

_FLOW_RTOL = 1e-10


def setting_dim(setting: Setting, teacher: PowerLawTeacher | None) -> int:
    """The number of modes ``D`` of a run, checking the setting against the teacher."""
    if isinstance(setting, AlignedSetting):
        D = setting.D
    elif isinstance(setting, PowerLawSetting):
        if setting.D is None:
            if teacher is None:
                raise ValueError("setting.D must be set (or a teacher given) to simulate")
            D = teacher.D
        else:
            D = setting.D
    else:
        raise ValueError(f"setting must be a PowerLawSetting or AlignedSetting, "
                         f"got {type(setting).__name__}")
    if teacher is not None:
        if not isinstance(teacher, PowerLawTeacher):
            raise ValueError(f"teacher must be a PowerLawTeacher, got {type(teacher).__name__}")
        if teacher.D != D:
            raise ValueError(f"teacher.D = {teacher.D} does not match the setting's D = {D}")
    return D


@v.constrained(N=v.Int(1, optional=True), M=v.Int(1, optional=True), steps=v.SIZE,
               dt=v.POSITIVE, method=v.Choice("gd", "flow"), engine=v.Choice("gram", "weights"),
               seed=v.Int(0, optional=True))
def train_linear(
    setting: Setting,
    N: int | None,
    M: int | None,
    steps: int,
    dt: float = 1.0,
    method: str = "gd",
    engine: str = "gram",
    checkpoints: ScheduleLike = None,
    seed: int | None = None,
    dtype: Any = None,
    device: Any = None,
    teacher: PowerLawTeacher | None = None,
    progress: bool | None = None,
    options: protocol.RunOptions | None = None,
) -> Trajectory:
    """Train the two-layer linear network and record spectra at checkpoints.

    Parameters
    ----------
    setting
        The system (``lambda_k``, ``mu_k``, ``sigma_w``, ``sigma_a``, ``gamma0``);
        a ``PowerLawSetting`` needs ``D`` set unless a ``teacher`` is given.
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
        ``"gram"`` (exact Gram-space update, cost O(D^3) a step) or ``"weights"``
        (weight-space torch GD with hand-written gradients; needs finite ``N``;
        with finite ``M`` it uses the data matrix each step, with ``M = None``
        the population gradient ``G = Lambda Theta - Lambda W^T A/(gamma0 N)``).
    checkpoints
        A :class:`~specdyn.schedule.Schedule`, ``None`` (0 and 60
        log-spaced steps), an int count of log-spaced steps, or explicit integer
        steps in ``[0, steps]``. GD always runs all ``steps`` (checked for
        divergence to the end); the flow is evaluated at the checkpoint times.
    seed
        Seeds the data sample and the initial weights (independent streams);
        the same seed gives the same data and weights in both engines (default 0).
    dtype, device
        Torch dtype (default float64) and device (default CUDA if present) of
        the GD loop. Spectra are always computed in float64 on the host.
    teacher
        Data model (default ``PowerLawTeacher(setting)``: aligned, ``P = D``).
        Its ``lambda_k``, ``mu_k`` and bases define the data; the setting supplies
        ``sigma_w``, ``sigma_a`` and ``gamma0``. Its ``D`` must match the setting's.
    progress
        Show a progress bar (default off; for runs of ``PROGRESS_MIN_STEPS`` = 500 steps
        or more).
    options
        The run's :class:`~specdyn.sim.protocol.RunOptions` (seed, dtype, device,
        progress, checkpoints, and the divergence check's ``check_every`` and
        ``divergence_factor``), instead of the shorthand keywords above (not both).

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
    D = setting_dim(setting, teacher)
    if engine == "weights" and N is None:
        raise ValueError("N must be a finite width for engine='weights' (N=None needs 'gram')")
    if engine == "weights" and method == "flow":
        raise ValueError("method='flow' is only available with engine='gram'")
    opts = protocol.run_options("linear", options, seed=seed, dtype=dtype, device=device,
                                progress=progress, checkpoints=checkpoints)
    seed, dtype, device = opts.seed, opts.dtype, opts.device
    ck = opts.schedule(steps)
    if teacher is None:
        teacher = PowerLawTeacher(setting if isinstance(setting, AlignedSetting)
                                  else setting.with_D(D))
    from specdyn._torch import resolve_device, resolve_dtype

    tdtype = resolve_dtype(dtype)
    tdevice = resolve_device(device)

    start = time.perf_counter()
    data_seed, weight_seed = protocol.seed_streams(seed, 2)
    P = teacher.P
    if M is None:
        sigma, c = teacher.population()
        stats = _gram.Stats.build(sigma, c, teacher.output_second_moment())
        xy = None
    else:
        x, y = teacher.sample(M, data_seed)
        stats = _gram.Stats.build(x.T @ x / M, x.T @ y / M, y.T @ y / M)
        xy = (x, y)
    run = _Run(setting, teacher, stats, ck, dt)
    if method == "flow":
        diagonal = _flow(run, N, weight_seed)
        extra: dict[str, Any] = {"flow_solver": "Radau (per mode)" if diagonal else "DOP853",
                                 "rtol": _FLOW_RTOL}
        tdtype, tdevice = "float64", "cpu"
    else:
        extra = {}

    def meta() -> dict[str, Any]:
        return protocol.record_meta(
            engine, seed=seed, dtype=tdtype, device=tdevice, start=start, steps=steps,
            method=method, N=N, M=M, D=D, P=P, dt=dt, setting=setting.to_dict(),
            teacher=teacher.to_dict(), **extra)

    def partial() -> Trajectory | None:  # the record of a diverged run (the driver sets it)
        return run.trajectory(meta()) if run.rows else None

    if method == "gd":
        if engine == "gram":
            _gram_gd(run, N, steps, weight_seed, tdtype, tdevice, opts, partial)
        else:
            assert N is not None
            _weights_gd(run, N, steps, xy, weight_seed, tdtype, tdevice, opts, partial)
    return run.trajectory(meta())


class _Run:
    """Checkpoint recorder shared by the engines (float64 host measurements)."""

    def __init__(self, setting: Setting, teacher: PowerLawTeacher, stats: _gram.Stats,
                 ck: np.ndarray, dt: float) -> None:
        self.setting, self.teacher, self.stats, self.ck, self.dt = setting, teacher, stats, ck, dt
        self.gamma0 = setting.gamma0
        self.identity = teacher.rotation is None
        self.rows: list[tuple[int, float, np.ndarray, tuple[np.ndarray, ...]]] = []

    def record(self, step: int, gw: np.ndarray, ga: np.ndarray, gwa: np.ndarray,
               loss: float | None = None) -> None:
        if loss is None:
            loss = _gram.loss_from_grams(self.stats, gwa, self.gamma0)
        diag = _gram.teacher_diagonals(gw, ga, gwa, self.teacher.basis_x, self.teacher.basis_y,
                                       self.identity)
        self.rows.append((step, loss, _gram.spectrum(self.stats, gw), diag))

    def trajectory(self, meta: dict[str, Any]) -> Trajectory:
        steps = np.array([r[0] for r in self.rows], dtype=np.int64)
        return Trajectory(
            times=steps * self.dt,
            steps=steps,
            loss=np.array([r[1] for r in self.rows]),
            series={"preact": np.stack([r[2] for r in self.rows])},
            diagonals={name: np.stack([r[3][i] for r in self.rows])
                       for i, name in enumerate(("xi", "eta", "zeta"))},
            meta=meta,
        )


def _loss_check(run: _Run, history: Any, start: float, factor: float
                ) -> Callable[[Any, int], Any]:
    """The driver's ``check`` of both engines: the first of the losses ``history`` (entry
    ``k``: the loss after ``k`` steps, NaN when the weights are not finite, filled by the
    steps on the device) that is not finite or above ``factor`` times ``start``."""
    return protocol.Divergence("training", protocol.dt_advice(run.dt), run.dt).check(
        lambda lo, k: history[lo:k + 1], start, factor, "loss")


def _watched_loss(loss: Any, weights: Any) -> Any:
    """The loss, or NaN when a weight is not finite (a NaN ``Gw`` can hide behind a finite
    loss): the per-step entry of the divergence history, on the device (no host sync)."""
    # one reduction, no weight-sized temporary: a NaN or infinite entry makes the sum NaN
    # or infinite, 0 * it NaN; a finite sum gives 0 * sum = +-0, and loss + +-0 is the
    # loss bit for bit. (A sum of finite weights that overflows, entries ~1e308 / count,
    # also reads NaN: weights that size are far past any loss limit.)
    return loss + 0.0 * weights.sum()


def _gram_gd(run: _Run, N: int | None, steps: int, weight_seed: DerivedSeed, tdtype: Any,
             tdevice: Any, opts: protocol.RunOptions, partial: Callable[[], Any]) -> None:
    s = run.setting
    eng = _gram.GramEngine(run.stats, run.gamma0, run.dt, tdtype, tdevice, N=N,
                           sigma_w=s.sigma_w, sigma_a=s.sigma_a)
    t = eng.t
    state0 = eng.init(_gram.weight_generator(weight_seed))
    grams0 = state0.start
    assert grams0 is not None
    history = t.empty(steps + 1, dtype=tdtype, device=tdevice)
    history[0] = _watched_loss(eng.loss_tensor(state0), state0.Gw)
    scan = _loss_check(run, history, _gram.loss_from_grams(run.stats, grams0[2], run.gamma0),
                       opts.factor)

    def step(state: _gram.GramState, k: int) -> _gram.GramState:
        new = eng.step(state)
        history[k] = _watched_loss(eng.loss_tensor(new), new.Gw)
        return new

    def check(state: _gram.GramState, k: int) -> _gram.GramState:
        scan(state, k)
        # each checked state is re-symmetrised (removes the roundoff of the products)
        return eng.symmetrize(state) if k > 0 else state

    def observe(state: _gram.GramState, k: int) -> None:
        # checkpoint 0 is the float64 draw itself, not its device copy
        run.record(k, *(grams0 if k == 0 else eng.to_host(state)))

    protocol.drive(state0, step, steps, run.ck, observe=observe, check=check, options=opts,
                   partial=partial, desc="gram GD")


@dataclass(frozen=True)
class WeightState:
    """The state of a weight-space linear run, a value: ``W`` (``N x D``), ``A``
    (``N x P``), the gradient factor ``G`` and the ``loss`` (0-d), both of these weights
    (see :class:`WeightEngine`)."""

    W: Any
    A: Any
    G: Any
    loss: Any


class WeightEngine:
    """Weight-space full-batch GD of the two-layer linear network (hand-written gradients).

    The reference the Gram engine is tested against. The state is a
    :class:`WeightState`: the weights, the gradient factor
    ``G = X^T E / M`` (``E = Y - f(X)``; the population ``Lambda Theta - Lambda B``
    when ``xy`` is ``None``) and the loss, both of the current weights.
    :meth:`step` returns a new state and leaves the given one as it was
    (learning rate ``nu = N``: ``W' = W + c A G^T``, ``A' = A + c W G``,
    ``c = dt / gamma0``; out of place, the same arithmetic as the in-place
    ``addmm_``/``add_`` it replaced, so the numbers are unchanged). :meth:`init`
    (generator) draws width-``N`` weights from a CPU ``torch.Generator``
    (:func:`~specdyn.sim.gram.weight_generator`: the Gram engine's draw).
    """

    #: Its row of :data:`~specdyn.sim.protocol.ENGINE_DEFAULTS`: the check interval and
    #: divergence factor the driver uses for it.
    defaults: ClassVar[str] = "linear"

    @v.constrained(gamma0=v.POSITIVE, dt=v.POSITIVE, N=v.SIZE, sigma_w=v.NONNEGATIVE,
                   sigma_a=v.NONNEGATIVE)
    def __init__(self, stats: _gram.Stats, gamma0: float, dt: float,
                 xy: tuple[np.ndarray, np.ndarray] | None, dtype: Any = None,
                 device: Any = None, *, N: int, sigma_w: float, sigma_a: float) -> None:
        from specdyn._torch import resolve_device, resolve_dtype, torch

        t = self.t = torch()
        self.N, self.sigma_w, self.sigma_a = N, sigma_w, sigma_a
        self.dtype, self.device = resolve_dtype(dtype), resolve_device(device)
        self.gamma0, self.c = gamma0, dt / gamma0
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
        W2 = W.add(A @ G.T, alpha=self.c)  # W' = W + c A G^T (the old A)
        return WeightState(W2, A2, *self._grad_and_loss(W2, A2))

    def grams(self, state: WeightState) -> _gram.Grams:
        """Float64 host ``(Gw, Ga, Gwa)``."""
        W, A = state.W, state.A
        N = W.shape[0]
        Wd, Ad = W.to("cpu", self.t.float64), A.to("cpu", self.t.float64)
        return to_numpy(Wd.T @ Wd) / N, to_numpy(Ad.T @ Ad) / N, to_numpy(Wd.T @ Ad) / N


def _weights_gd(run: _Run, N: int, steps: int, xy: tuple[np.ndarray, np.ndarray] | None,
                weight_seed: DerivedSeed, tdtype: Any, tdevice: Any, opts: protocol.RunOptions,
                partial: Callable[[], Any]) -> None:
    s = run.setting
    eng = WeightEngine(run.stats, run.gamma0, run.dt, xy, tdtype, tdevice, N=N,
                       sigma_w=s.sigma_w, sigma_a=s.sigma_a)
    t = eng.t
    state0 = eng.init(_gram.weight_generator(weight_seed))
    history = t.empty(steps + 1, dtype=eng.dtype, device=eng.device)
    history[0] = _watched_loss(state0.loss, state0.W)
    scan = _loss_check(run, history, float(state0.loss), opts.factor)

    def step(state: WeightState, k: int) -> WeightState:
        new = eng.step(state)
        history[k] = _watched_loss(new.loss, new.W)
        return new

    def observe(state: WeightState, k: int) -> None:
        run.record(k, *eng.grams(state), loss=float(state.loss))

    protocol.drive(state0, step, steps, run.ck, observe=observe, check=scan, options=opts,
                   partial=partial, desc="weight GD")


def _flow(run: _Run, N: int | None, weight_seed: DerivedSeed) -> bool:
    """Gradient flow of the Grams; returns whether the per-mode (diagonal) path was used."""
    s = run.setting
    D, P = run.stats.c.shape
    bx, by = run.teacher.basis_x, run.teacher.basis_y
    sig_b = bx.T @ run.stats.sigma @ bx
    c_b = bx.T @ run.stats.c @ by
    r = min(D, P)
    scale = max(np.abs(sig_b).max(), 1e-300)
    off_sig = np.abs(sig_b - np.diag(np.diagonal(sig_b))).max() / scale
    c_off = c_b.copy()
    c_off[np.arange(r), np.arange(r)] = 0.0
    off_c = np.abs(c_off).max() / max(np.abs(c_b).max(), 1e-300)
    diagonal = N is None and off_sig < 1e-12 and off_c < 1e-12
    times = run.ck * run.dt
    if diagonal:
        lam = np.diagonal(sig_b).copy()
        cdiag = np.zeros(D)
        cdiag[:r] = np.diagonal(c_b)[:r]
        init = (np.zeros(D), np.full(D, s.sigma_w**2), np.full(D, s.sigma_a**2))
        atol = 1e-14 * max(s.S, 1.0)
        states, _ = _gram.solve_flow_diagonal(lam, cdiag, run.gamma0, init, times,
                                              _FLOW_RTOL, atol)
        for step, st in zip(run.ck, states, strict=True):
            xi, eta, zeta = st
            gwa_b = np.zeros((D, P))
            gwa_b[np.arange(r), np.arange(r)] = xi[:r]
            ga_b = s.sigma_a**2 * np.eye(P)
            ga_b[np.arange(r), np.arange(r)] = zeta[:r]
            run.record(int(step), bx @ np.diag(eta) @ bx.T, by @ ga_b @ by.T, bx @ gwa_b @ by.T)
    else:
        grams0 = _gram.initial_grams(N, D, P, s.sigma_w, s.sigma_a,
                                     _gram.weight_generator(weight_seed))
        states3, _ = _gram.solve_flow_full(run.stats, run.gamma0, grams0, times, _FLOW_RTOL,
                                           1e-14 * max(s.S, 1.0))
        for step, g in zip(run.ck, states3, strict=True):
            run.record(int(step), *g)
    return diagonal
