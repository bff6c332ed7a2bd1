"""Propagation of chaos: ``N``-particle systems coupled to their mean-field copies.

:func:`propagation_of_chaos` runs, in lock-step on one device, a large
reference population (the stand-in for the mean-field limit), ``N``-particle
systems for several ``N``, and mean-field copies of their particles (same
initial condition and same Brownian increments, drift from the reference
measure): Sznitman's synchronous coupling. The model and the update are those
of :mod:`specdyn.sim.langevin`; the engine is
:class:`specdyn.sim.particles.ParticleEngine`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from specdyn import _validate as v
from specdyn._torch import resolve_device, resolve_dtype, to_numpy
from specdyn._torch import torch as _torch
from specdyn.measure.transport import wasserstein2_squared
from specdyn.models.activations import Activation, get_activation
from specdyn.schedule import Schedule, ScheduleLike
from specdyn.sim.langevin import Target
from specdyn.sim.particles import (
    COMMON,
    Block,
    ParticleEngine,
    ParticleState,
    blowup_check,
    check_init_scale,
    fill_history,
    initial_particles,
    make_data,
)
from specdyn.sim.protocol import (
    Record,
    RunOptions,
    drive,
    record_meta,
    run_options,
    seed_streams,
)

__all__ = ["ChaosRun", "propagation_of_chaos"]


@dataclass(frozen=True)
class ChaosRun(Record):
    """Synchronous coupling of ``N``-particle systems to mean-field copies.

    Attributes
    ----------
    N
        ``(K,)`` system sizes.
    steps, times
        ``(C,)`` checkpoint steps and times ``t = step * dt``.
    sq_distance
        ``(K, C)`` per-particle squared distance
        ``(1/N) sum_i ||theta_i^N(t) - bar theta_i(t)||^2`` between each system
        and its mean-field copies (an upper bound of ``W2^2`` of the two
        empirical measures); expected ``O(1/N)`` uniformly in ``t``.
    w2_distance
        ``(K, C)`` exact ``W2^2`` between each system's empirical measure and
        that of its ``N`` copies (optimal assignment; ``<= sq_distance``),
        averaged over replicas; ``None`` unless ``w2=True``. Unlike the paired
        distance it forgives relabelling (a particle and its copy ending in
        different but equally populated places).
    function_gap
        ``(K, C)`` ``(1/M) sum_m (f_N(x_m) - f_ref(x_m))^2`` on the data.
    reference_loss
        ``(steps+1,)`` data term of the reference population (in the partial
        record of a diverged run, up to its last checkpoint).
    reference_N
        Size of the reference population.
    reference_particles
        ``(C, reference_N, D+1)`` reference states (``None`` unless kept).
    system_particles
        For each ``N``, ``(C, N, D+1)`` states of its first replica (``None``
        unless kept).
    x, y
        The data all systems were trained on.
    meta
        The fixed keys of :func:`~specdyn.sim.protocol.record_meta`, then the
        run's parameters.
    """

    N: np.ndarray
    steps: np.ndarray
    times: np.ndarray
    sq_distance: np.ndarray
    w2_distance: np.ndarray | None
    function_gap: np.ndarray
    reference_loss: np.ndarray
    reference_N: int
    reference_particles: np.ndarray | None
    system_particles: list[np.ndarray] | None
    x: np.ndarray
    y: np.ndarray




@v.constrained(reference_N=v.SIZE, replicas=v.SIZE, **COMMON)
def propagation_of_chaos(
    activation: str | Activation,
    target: Target,
    N_values: Sequence[int],
    D: int,
    M: int | None = 400,
    *,
    dt: float = 0.05,
    temperature: float = 0.02,
    weight_decay: float = 0.05,
    steps: int = 200,
    seed: int | None = None,
    reference_N: int = 8000,
    replicas: int = 1,
    checkpoints: ScheduleLike = None,
    init_scale: tuple[float, float] = (1.0, 1.0),
    population_size: int = 4096,
    label_noise: float = 0.0,
    keep_reference: bool = False,
    keep_systems: bool = False,
    w2: bool = False,
    dtype: Any = None,
    device: Any = None,
    progress: bool | None = None,
    options: RunOptions | None = None,
) -> ChaosRun:
    """Distance of ``N``-particle systems to their mean-field copies (synchronous coupling).

    Three kinds of particles move together on the same data:

    * the *reference*: ``reference_N`` particles with their own initial draw
      and noise, a stand-in for the mean-field law ``mu_t``;
    * the *copies* ``bar theta_i``, ``i < max(N_values)``: driven by the
      reference measure's drift ``grad dF/dmu(mu_ref, .)``;
    * for each ``N``, a system of ``N`` particles driven by its own empirical
      measure. There are ``R_N = replicas * max(N_values) // N`` independent
      systems of each size, the ``j``-th sharing start and noise with copies
      ``jN..(j+1)N-1``, and distances are averaged over them: every ``N``
      costs ``replicas * max(N_values)`` particles and is estimated from
      ``replicas * max(N_values)`` independent initial particles (a single
      system's distance is a heavy-tailed variable, dominated by the few
      directions of ``f_N - f_ref`` that the dynamics amplifies).

    The copies do not depend on ``N`` (each is a deterministic function of its
    own start and noise and of the reference), so one set serves every ``N``.
    The measured ``(1/N) sum_i ||theta_i - bar theta_i||^2`` includes, besides
    the ``O(1/N)`` chaos term, a floor of order ``1/reference_N`` from the
    reference's own fluctuation; keep ``max(N_values) <= reference_N / 8``.

    Other parameters are those of :func:`specdyn.sim.mean_field_langevin`
    (``checkpoints`` defaults to ``Schedule.even(11)`` there too; ``options``, a
    :class:`~specdyn.sim.protocol.RunOptions`, replaces the shorthand keywords
    ``seed``, ``dtype``, ``device``, ``progress`` and ``checkpoints``). Returns a
    :class:`ChaosRun`; raises :class:`~specdyn.sim.protocol.DivergenceError` as
    it does, its ``record`` the :class:`ChaosRun` of the checkpoints taken before
    the divergence (reference loss up to the last of them).
    """
    torch = _torch()
    act = get_activation(activation)
    Ns = sorted({v.positive_int("N_values", N) for N in N_values})
    if not Ns:
        raise ValueError("N_values must list at least one system size >= 1")
    check_init_scale(init_scale)
    opts = run_options("particles", options, seed=seed, dtype=dtype, device=device,
                       progress=progress, checkpoints=checkpoints)
    seed, dtype, device = opts.seed, opts.dtype, opts.device
    ckpt = opts.schedule(steps, Schedule.even(11))
    start = time.perf_counter()
    s_data, s_init_ref, s_init, s_noise_ref, s_noise = seed_streams(seed, 5)
    x_np, y_np = make_data(target, D, M, population_size, label_noise, s_data)
    n_max = max(Ns) * replicas  # size of the pool of copies
    ref0 = initial_particles("gaussian", reference_N, D, init_scale, s_init_ref)
    sys0 = initial_particles("gaussian", n_max, D, init_scale, s_init)
    dev = resolve_device(device)
    tdtype = resolve_dtype(dtype)
    g_ref = torch.Generator(device=dev).manual_seed(s_noise_ref)
    g_sys = torch.Generator(device=dev).manual_seed(s_noise)

    # block 0: reference; block 1: the pool of copies (driven by block 0); block 2+i:
    # R_i = n_max / N_i self-driven systems of N_i particles, replica j starting from (and
    # sharing the noise of) copies j N_i .. (j+1) N_i - 1
    reps = [n_max // N for N in Ns]
    blocks = [Block(1, reference_N), Block(1, n_max, driver=0),
              *(Block(R, N) for R, N in zip(reps, Ns, strict=True))]
    x = torch.as_tensor(x_np, dtype=tdtype, device=dev)
    y = torch.as_tensor(y_np, dtype=tdtype, device=dev)
    engine = ParticleEngine(act, x, y, blocks, dt, temperature, weight_decay)
    state = engine.state_of(np.concatenate([ref0, sys0, *(sys0[:R * N] for R, N in
                                                      zip(reps, Ns, strict=True))]))
    # ---- the run: ref_loss[k] and theta_max[k] after k steps, filled by the steps
    ref_loss = torch.empty(steps + 1, dtype=tdtype, device=dev)
    theta_max = torch.empty(steps + 1, dtype=tdtype, device=dev)
    theta_max[0] = state.theta.abs().max()
    if steps == 0:  # no update fills the loss of the only state
        ref_loss[0] = engine.loss(state)
    recorder = _Recorder(engine, Ns, reps, D, ckpt, dt, ref_loss, w2, keep_reference,
                         keep_systems, x_np, y_np, lambda: record_meta(
                             "propagation_of_chaos", seed=seed, dtype=tdtype, device=dev,
                             start=start, steps=steps, activation=act.name, D=D, M=M, dt=dt,
                             temperature=temperature, weight_decay=weight_decay,
                             reference_N=reference_N, replicas=reps,
                             population_size=population_size if M is None else None,
                             label_noise=label_noise))
    noise = _CoupledNoise(reference_N, n_max, D, reps, Ns, g_ref, g_sys, tdtype, dev) \
        if temperature > 0 else None

    def step(st: ParticleState, k: int) -> ParticleState:
        new = engine.step(st, noise.draw() if noise else None)
        fill_history(engine, new, k, steps, ref_loss, theta_max)
        return new

    drive(state, step, steps, ckpt, observe=recorder.snapshot,
          check=blowup_check(theta_max, ref_loss, steps, dt, opts.factor), options=opts,
          desc="chaos", partial=recorder.partial)
    return recorder.run(steps + 1)


class _CoupledNoise:
    """The increments of one step: the reference's from ``g_ref``, the pool of copies' from
    ``g_sys``, and each self-driven system's those of the copies it starts from (the
    synchronous coupling)."""

    def __init__(self, reference_N: int, n_max: int, D: int, reps: list[int], Ns: list[int],
                 g_ref: Any, g_sys: Any, dtype: Any, device: Any) -> None:
        self.ref_shape, self.sys_shape = (reference_N, D + 1), (n_max, D + 1)
        self.sizes = [R * N for R, N in zip(reps, Ns, strict=True)]
        self.g_ref, self.g_sys = g_ref, g_sys
        self.kw = {"dtype": dtype, "device": device}

    def draw(self) -> Any:
        """The ``(rows, D + 1)`` increments of all blocks, in the engine's row order."""
        torch = _torch()
        xr = torch.randn(self.ref_shape, generator=self.g_ref, **self.kw)
        xs = torch.randn(self.sys_shape, generator=self.g_sys, **self.kw)
        return torch.cat([xr, xs, *(xs[:n] for n in self.sizes)])


class _Recorder:
    """The checkpoints of a coupling run (per system size: paired squared distance, exact
    ``W2^2`` when asked, function gap; the kept particles) and the :class:`ChaosRun` of those
    taken so far, with the reference loss ``ref_loss`` (a device tensor the steps fill)."""

    def __init__(self, engine: ParticleEngine, Ns: list[int], reps: list[int], D: int,
                 ckpt: np.ndarray, dt: float, ref_loss: Any, w2: bool, keep_reference: bool,
                 keep_systems: bool, x_np: np.ndarray, y_np: np.ndarray, meta: Any) -> None:
        self.engine, self.Ns, self.reps, self.D = engine, Ns, reps, D
        self.ckpt, self.dt, self.ref_loss, self.w2 = ckpt, dt, ref_loss, w2
        self.keep_reference, self.keep_systems = keep_reference, keep_systems
        self.x_np, self.y_np, self.meta = x_np, y_np, meta
        self.dist = np.zeros((len(Ns), len(ckpt)))
        self.w2d = np.zeros((len(Ns), len(ckpt)))
        self.gap = np.zeros((len(Ns), len(ckpt)))
        self.ref_saved: list[np.ndarray] = []
        self.sys_saved: list[list[np.ndarray]] = [[] for _ in Ns]
        self.want = {int(s): j for j, s in enumerate(ckpt)}
        self.done = 0  # checkpoints recorded so far
        self.ref_rows, self.copy_rows = engine.rows(0), engine.rows(1)

    def snapshot(self, st: ParticleState, k: int) -> None:
        """Record checkpoint ``k``: each system's distances to its copies, the kept states."""
        engine, D, th = self.engine, self.D, st.theta
        j = self.want[k]
        self.done = j + 1
        fs = engine.functions(st)
        copies = th[self.copy_rows]
        for i, (R, N) in enumerate(zip(self.reps, self.Ns, strict=True)):
            diff = th[engine.rows(2 + i)] - copies[:R * N]
            # mean over replicas of (1/N) sum_i ||.||^2 == mean over all R N particles
            self.dist[i, j] = float((diff * diff).sum(1).mean())
            self.gap[i, j] = float((fs[2 + i] - fs[0]).pow(2).mean())
            if self.w2:  # exact W2^2 per replica (optimal assignment), averaged
                sys_r = to_numpy(th[engine.rows(2 + i)]).reshape(R, N, D + 1)
                cop_r = to_numpy(copies[:R * N]).reshape(R, N, D + 1)
                self.w2d[i, j] = sum(wasserstein2_squared(a, b, method="assignment")
                                     for a, b in zip(sys_r, cop_r, strict=True)) / R
        if self.keep_reference:
            self.ref_saved.append(to_numpy(th[self.ref_rows], np.float64))
        if self.keep_systems:
            for i, N in enumerate(self.Ns):
                self.sys_saved[i].append(to_numpy(th[engine.rows(2 + i)][:N], np.float64))

    def run(self, upto: int) -> ChaosRun:
        """The record of the checkpoints so far, reference loss ``[0, upto)``."""
        j, ckpt = self.done, self.ckpt
        return ChaosRun(N=np.asarray(self.Ns), steps=ckpt[:j], times=ckpt[:j] * self.dt,
                        sq_distance=self.dist[:, :j],
                        w2_distance=self.w2d[:, :j] if self.w2 else None,
                        function_gap=self.gap[:, :j],
                        reference_loss=to_numpy(self.ref_loss[:upto], np.float64),
                        reference_N=self.engine.blocks[0].N,
                        reference_particles=np.stack(self.ref_saved) if self.keep_reference
                        else None,
                        system_particles=[np.stack(s) for s in self.sys_saved]
                        if self.keep_systems else None,
                        x=self.x_np, y=self.y_np, meta=self.meta())

    def partial(self) -> ChaosRun | None:
        """The record of a diverged run: up to its last checkpoint (``None`` before any)."""
        return self.run(int(self.ckpt[self.done - 1])) if self.done else None
