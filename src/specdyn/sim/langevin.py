"""Mean-field Langevin dynamics of a wide two-layer network under muP (particles).

Conventions
-----------
* A particle is ``theta = (a, w)`` in ``R^(1+D)``, stored as one row
  ``[a, w_1, ..., w_D]``; ``N`` particles form an ``(N, D+1)`` array.
* Mean-field (muP) output scaling: ``f_N(x) = (1/N) sum_i a_i sigma(w_i . x)``.
* Data: ``M`` inputs ``x_m ~ N(0, I_D)`` with labels ``y_m = f*(x_m) (+ noise)``:
  a fixed training set of ``M`` samples (empirical risk), or with ``M=None``
  the population, approximated by a *fixed* Monte-Carlo sample of
  ``population_size`` inputs drawn once (not fresh samples each step, so that
  runs are deterministic given the seed and coupled systems see the same risk).
* Free energy (without the entropy term)
  ``F(mu) = (1/2M) sum_m (f_mu(x_m) - y_m)^2 + (lambda'/2) E_mu ||theta||^2``,
  with first variation ``dF/dmu(theta) = (1/M) sum_m r_m a sigma(w.x_m)
  + (lambda'/2)||theta||^2``, ``r = f_mu - y``.
* One step (Euler-Maruyama of the mean-field Langevin SDE, flow time ``dt``),
  for every particle
  ``theta_i <- theta_i - dt grad_theta dF/dmu(mu_N, theta_i) + sqrt(2 tau dt) xi_i``
  with ``tau`` the temperature and ``xi_i ~ N(0, I_{D+1})``. Since
  ``d F(mu_N) / d theta_i = (1/N) grad dF/dmu(theta_i)``, this is noisy GD on
  the network's loss with per-particle learning rate ``dt * N``. Time is
  ``t = step * dt``; for ``tau > 0`` the stationary measure is
  ``mu_inf ~ exp(-dF/dmu / tau)``. (The related papers write ``d`` for ``D``,
  ``n`` for ``M`` and ``eta`` for ``dt``.)

Gradients are written by hand (no autograd) in
:class:`specdyn.sim.particles.ParticleEngine`: with ``Z = X W^T``,
``grad_a = (1/M) sigma(Z)^T r + lambda' a`` and
``grad_w_i = (a_i/M) sum_m r_m sigma'(z_mi) x_m + lambda' w_i``.
:func:`specdyn.sim.propagation_of_chaos` (in :mod:`specdyn.sim.chaos`) couples
``N``-particle systems to their mean-field copies with the same engine.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from specdyn import _validate as v
from specdyn._torch import resolve_device, resolve_dtype, to_numpy
from specdyn._torch import torch as _torch
from specdyn.models.activations import Activation, get_activation
from specdyn.schedule import Schedule, ScheduleLike
from specdyn.sim import protocol
from specdyn.sim.particles import (
    COMMON,
    Block,
    NoiseSource,
    ParticleEngine,
    ParticleState,
    blowup_check,
    check_init_scale,
    fill_history,
    initial_particles,
    make_data,
    noise_fn,
    target_values,
)

Target = Callable[[np.ndarray], ArrayLike]

__all__ = [
    "LangevinRun",
    "mean_field_langevin",
]


@dataclass(frozen=True)
class LangevinRun(protocol.Record):
    """Checkpoints of one mean-field Langevin run (host numpy, float64).

    Attributes
    ----------
    steps, times
        ``(C,)`` checkpoint step numbers and times ``t = step * dt``.
    particles
        ``(C, N, D+1)`` particle states, rows ``[a, w_1..w_D]``.
    loss
        ``(steps+1,)`` data term ``(1/2M) sum_m (f_N(x_m) - y_m)^2`` of the
        state *before* each step (entry ``k`` is the state after ``k`` steps).
    penalty
        ``(C,)`` weight-decay term ``(lambda'/2) (1/N) sum_i ||theta_i||^2``.
    x, y
        The training inputs ``(M, D)`` and labels ``(M,)`` the run used.
    meta
        The fixed keys of :func:`~specdyn.sim.protocol.record_meta`, then dt,
        temperature, weight_decay, N, D, M (None for the population), activation.
    """

    steps: np.ndarray
    times: np.ndarray
    particles: np.ndarray
    loss: np.ndarray
    penalty: np.ndarray
    x: np.ndarray
    y: np.ndarray

    @property
    def final(self) -> np.ndarray:
        """Particles at the last checkpoint, ``(N, D+1)``."""
        return self.particles[-1]




@v.constrained(N=v.SIZE, **COMMON)
def mean_field_langevin(
    activation: str | Activation,
    target: Target,
    N: int,
    D: int,
    M: int | None = None,
    *,
    dt: float = 0.05,
    temperature: float = 0.02,
    weight_decay: float = 0.05,
    steps: int = 1000,
    seed: int | None = None,
    noise: NoiseSource = None,
    checkpoints: ScheduleLike = None,
    init: str | ArrayLike = "gaussian",
    init_scale: tuple[float, float] = (1.0, 1.0),
    population_size: int = 4096,
    label_noise: float = 0.0,
    data: tuple[ArrayLike, ArrayLike] | None = None,
    dtype: Any = None,
    device: Any = None,
    progress: bool | None = None,
    options: protocol.RunOptions | None = None,
) -> LangevinRun:
    """Noisy GD of ``N`` particles in the mean-field (muP) scaling.

    Parameters
    ----------
    activation
        A name of :data:`specdyn.models.activations.ACTIVATIONS` or an ``Activation``.
    target
        ``f*``: a callable mapping a numpy ``(M, D)`` array to ``(M,)`` (e.g. a
        :class:`specdyn.data.hermite.HermiteTarget` or an :class:`AtomTeacher`).
    N, D
        Number of particles (>= 1) and input dimension (>= 1).
    M
        Training-set size; ``None`` for the population, approximated by a fixed
        sample of ``population_size`` inputs drawn once.
    dt
        Flow time per step (> 0); time ``t = step * dt``. The per-particle
        learning rate of the network loss is ``dt * N``.
    temperature
        ``tau >= 0``: noise ``sqrt(2 tau dt) xi`` per step (0 is plain GD).
    weight_decay
        ``lambda' >= 0`` of the penalty ``(lambda'/2) ||theta||^2``.
    steps, seed
        Number of steps (>= 0) and the seed (default 0) of three independent streams:
        data, initial particles and noise (so the data do not depend on ``N``).
    noise
        Standard normal increments ``xi`` (unscaled): ``None`` draws them; a
        callable ``noise(step) -> (N, D+1)``; or an array ``(steps, N, D+1)``.
        Passing the same increments to two systems couples them synchronously.
    checkpoints
        A :class:`~specdyn.schedule.Schedule` (``None``: ``Schedule.even(11)``,
        11 evenly spaced steps, first and last included), an int count of
        log-spaced steps, or explicit step numbers in ``[0, steps]``.
    init, init_scale
        ``"gaussian"``: ``a ~ N(0, s_a^2)``, ``w ~ N(0, s_w^2 I_D / D)`` with
        ``(s_a, s_w) = init_scale``; or an explicit ``(N, D+1)`` array.
    label_noise
        Standard deviation of Gaussian noise added to the labels.
    data
        Optional explicit ``(x, y)`` training data (overrides ``M``, ``target``
        is then only checked for its dimension).
    dtype, device
        Torch dtype (float64 default) and device (CUDA when present).
    progress
        Show a progress bar (default off).
    options
        The run's :class:`~specdyn.sim.protocol.RunOptions` (seed, dtype, device,
        progress, checkpoints, and the divergence check's ``check_every`` and
        ``divergence_factor``), instead of the shorthand keywords (not both).

    Returns
    -------
    LangevinRun

    Raises
    ------
    ValueError
        On bad input, before any work.
    DivergenceError
        When a parameter becomes non-finite or its size exceeds ``1e6`` (the
        particle engine's :data:`~specdyn.sim.protocol.ENGINE_DEFAULTS`), or the loss
        stops being finite (checked by the driver, the final state's too; the message
        gives the step and a suggestion; ``.record`` holds the checkpoints taken before it).
    """
    torch = _torch()
    act = get_activation(activation)
    check_init_scale(init_scale)
    opts = protocol.run_options("particles", options, seed=seed, dtype=dtype, device=device,
                                progress=progress, checkpoints=checkpoints)
    seed, dtype, device = opts.seed, opts.dtype, opts.device
    ckpt = opts.schedule(steps, Schedule.even(11))
    start = time.perf_counter()
    s_data, s_init, s_noise = protocol.seed_streams(seed, 3)
    if data is None:
        x_np, y_np = make_data(target, D, M, population_size, label_noise, s_data)
    else:
        x_np = v.real_array("data[0]", data[0])
        y_np = v.real_array("data[1]", data[1])
        if x_np.ndim != 2 or x_np.shape[1] != D or y_np.shape != (x_np.shape[0],):
            raise ValueError(f"data must be (x (M, D={D}), y (M,)), got {x_np.shape}, "
                             f"{y_np.shape}")
        target_values(target, x_np[:2])
        M = x_np.shape[0]
    if not isinstance(init, str):  # particles of the caller's, checked before any work
        particles0 = initial_particles(init, N, D, init_scale, s_init)
    else:
        v.choice("init", init, ("gaussian",))
    dev = resolve_device(device)
    tdtype = resolve_dtype(dtype)
    gen = torch.Generator(device=dev).manual_seed(s_noise)
    draw = noise_fn(noise, N, D, steps, gen, tdtype, dev)

    x = torch.as_tensor(x_np, dtype=tdtype, device=dev)
    y = torch.as_tensor(y_np, dtype=tdtype, device=dev)
    engine = ParticleEngine(act, x, y, [Block(1, N)], dt, temperature, weight_decay,
                            init_scale=init_scale)
    state = (engine.init(np.random.default_rng(s_init)) if isinstance(init, str)
             else engine.state_of(particles0))
    # ---- the run: loss[k] (data term) and theta_max[k] after k steps, filled by the steps
    loss = torch.empty(steps + 1, dtype=tdtype, device=dev)
    theta_max = torch.empty(steps + 1, dtype=tdtype, device=dev)
    theta_max[0] = state.theta.abs().max()
    if steps == 0:  # no update fills the loss of the only state
        loss[0] = engine.loss(state)
    recorder = _Recorder(ckpt, dt, weight_decay, loss, x_np, y_np, lambda: protocol.record_meta(
        "mean_field_langevin", seed=seed, dtype=tdtype, device=dev, start=start,
        steps=steps, activation=act.name, N=N, D=D, M=M,
        population_size=population_size if M is None else None, dt=dt,
        temperature=temperature, weight_decay=weight_decay, label_noise=label_noise,
        init_scale=tuple(init_scale)))
    use_noise = temperature > 0

    def step(st: ParticleState, k: int) -> ParticleState:
        new = engine.step(st, draw(k - 1) if use_noise else None)
        fill_history(engine, new, k, steps, loss, theta_max)
        return new

    protocol.drive(state, step, steps, ckpt, observe=recorder.snapshot,
                   check=blowup_check(theta_max, loss, steps, dt, opts.factor), options=opts,
                   desc="langevin", partial=recorder.partial)
    return recorder.run(steps + 1)


class _Recorder:
    """The checkpoints of a Langevin run (particles and weight-decay penalty, host float64)
    and the :class:`LangevinRun` of those taken so far, with the data-term ``loss`` (a
    device tensor the steps fill)."""

    def __init__(self, ckpt: np.ndarray, dt: float, weight_decay: float, loss: Any,
                 x_np: np.ndarray, y_np: np.ndarray, meta: Any) -> None:
        self.ckpt, self.dt, self.weight_decay, self.loss = ckpt, dt, weight_decay, loss
        self.x_np, self.y_np, self.meta = x_np, y_np, meta
        self.saved: list[np.ndarray] = []
        self.penalty: list[float] = []

    def snapshot(self, st: ParticleState, k: int) -> None:
        """Record checkpoint ``k``: the particles and the penalty."""
        th = st.theta
        self.saved.append(to_numpy(th, np.float64))
        self.penalty.append(0.5 * self.weight_decay * float((th * th).sum(1).mean()))

    def run(self, upto: int) -> LangevinRun:
        """The record of the checkpoints so far and the loss ``[0, upto)``."""
        done = self.ckpt[:len(self.saved)]
        return LangevinRun(steps=done, times=done * self.dt, particles=np.stack(self.saved),
                           loss=to_numpy(self.loss[:upto], np.float64),
                           penalty=np.asarray(self.penalty), x=self.x_np, y=self.y_np,
                           meta=self.meta())

    def partial(self) -> LangevinRun | None:
        """The record of a diverged run: up to its last checkpoint (``None`` before any)."""
        return self.run(int(self.ckpt[len(self.saved) - 1])) if self.saved else None
