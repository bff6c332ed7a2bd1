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
from specdyn.schedule import Schedule
from specdyn.sim.langevin import Target
from specdyn.sim.loop import run
from specdyn.sim.particles import Block, ParticleConfig, ParticleEngine, ParticleState, make_data
from specdyn.sim.protocol import Outcome, Record, StreamLayout, Streams, record_meta

__all__ = ["ChaosConfig", "ChaosRun", "propagation_of_chaos"]

#: The streams of a coupling run: data; the reference's and the systems' initial particles;
#: the reference's and the systems' noise.
STREAMS = StreamLayout(data=0, init=(1, 2), batch=(3, 4))


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




@dataclass(frozen=True, kw_only=True)
@v.constrained_fields(N_values=v.Tuple(v.SIZE, min_len=1), reference_N=v.SIZE, replicas=v.SIZE,
                      keep_reference=v.Bool(), keep_systems=v.Bool(), w2=v.Bool())
class ChaosConfig(ParticleConfig):
    """How :func:`propagation_of_chaos` runs: :class:`~specdyn.sim.particles.ParticleConfig`
    's fields (``M`` default 400, ``steps`` default 200) and these.

    Attributes
    ----------
    N_values
        The system sizes (each ``>= 1``).
    reference_N
        Size of the reference population, the stand-in for the mean-field law.
    replicas
        Systems of each size per ``max(N_values)`` copies (see the function).
    keep_reference, keep_systems
        Keep the reference's states and each size's first replica's states at the
        checkpoints.
    w2
        Also compute the exact ``W2^2`` of each system to its copies (optimal assignment).
    """

    M: int | None = 400
    steps: int = 200
    N_values: Sequence[int]
    reference_N: int = 8000
    replicas: int = 1
    keep_reference: bool = False
    keep_systems: bool = False
    w2: bool = False


def propagation_of_chaos(activation: str | Activation, target: Target, N_values: Sequence[int],
                         D: int, M: int | None = 400, **options: Any) -> ChaosRun:
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

    The parameters are the fields of :class:`ChaosConfig` (``activation``, ``N_values``,
    ``D``, ``M`` as positions, the others as keywords), the run options' shorthands
    (``checkpoints``, ``seed``, ``dtype``, ``device``, ``progress``) or ``options``;
    ``target`` is that of :func:`specdyn.sim.mean_field_langevin`. Returns a
    :class:`ChaosRun`; raises :class:`~specdyn.sim.divergence.DivergenceError` as
    it does, its ``record`` the :class:`ChaosRun` of the checkpoints taken before
    the divergence (reference loss up to the last of them).
    """
    torch = _torch()
    cfg = ChaosConfig.of({"activation": activation, "N_values": N_values, "D": D, "M": M,
                          **options}, entry="propagation_of_chaos")
    act = get_activation(cfg.activation)
    Ns = sorted(set(cfg.N_values))
    opts, steps = cfg.options, cfg.steps
    ckpt = opts.schedule(steps, Schedule.even(11))
    start = time.perf_counter()
    x_np, y_np = make_data(target, D, M, cfg.population_size, cfg.label_noise,
                           STREAMS.seed(opts.seed, "data"))
    n_max = max(Ns) * cfg.replicas  # size of the pool of copies
    dev = resolve_device(opts.device)
    tdtype = resolve_dtype(opts.dtype)

    # block 0: reference; block 1: the pool of copies (driven by block 0); block 2+i:
    # R_i = n_max / N_i self-driven systems of N_i particles, replica j starting from (and
    # sharing the noise of) copies j N_i .. (j+1) N_i - 1
    reps = [n_max // N for N in Ns]
    blocks = [Block(1, cfg.reference_N), Block(1, n_max, driver=0),
              *(Block(R, N, follows=1) for R, N in zip(reps, Ns, strict=True))]
    x = torch.as_tensor(x_np, dtype=tdtype, device=dev)
    y = torch.as_tensor(y_np, dtype=tdtype, device=dev)
    engine = ParticleEngine(act, x, y, blocks, cfg.dt, cfg.temperature, cfg.weight_decay,
                            init_scale=cfg.init_scale)
    recorder = _Recorder(engine, Ns, reps, D, ckpt, cfg.dt, cfg.w2, cfg.keep_reference,
                         cfg.keep_systems, x_np, y_np, lambda: record_meta(
                             "propagation_of_chaos", seed=opts.seed, dtype=tdtype, device=dev,
                             start=start, steps=steps, activation=act.name, D=D, M=M,
                             dt=cfg.dt, temperature=cfg.temperature,
                             weight_decay=cfg.weight_decay, reference_N=cfg.reference_N,
                             replicas=reps,
                             population_size=cfg.population_size if M is None else None,
                             label_noise=cfg.label_noise))
    return run(engine, recorder, steps=steps, options=opts, checkpoints=ckpt,
               streams=Streams.derive(engine, opts.seed, STREAMS), desc="chaos")


class _Recorder:
    """The checkpoints of a coupling run (per system size: paired squared distance, exact
    ``W2^2`` when asked, function gap; the kept particles) and the :class:`ChaosRun` of those
    taken so far, with the reference loss ``ref_loss`` (a device tensor the steps fill)."""

    def __init__(self, engine: ParticleEngine, Ns: list[int], reps: list[int], D: int,
                 ckpt: np.ndarray, dt: float, w2: bool, keep_reference: bool,
                 keep_systems: bool, x_np: np.ndarray, y_np: np.ndarray, meta: Any) -> None:
        self.engine, self.Ns, self.reps, self.D = engine, Ns, reps, D
        self.ckpt, self.dt, self.w2 = ckpt, dt, w2
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

    def finish(self, outcome: Outcome[ParticleState]) -> ChaosRun:
        """The record of the checkpoints so far, with the reference loss of every step (of a
        diverged run, up to its last checkpoint)."""
        j, ckpt = self.done, self.ckpt
        upto = outcome.steps + 1 if outcome.diverged is None else int(ckpt[j - 1]) if j else 0
        rows = self.engine.blocks[0].N, self.D + 1

        def kept(states: list[np.ndarray], shape: tuple[int, int]) -> np.ndarray:
            return np.stack(states) if states else np.zeros((0, *shape))

        return ChaosRun(N=np.asarray(self.Ns), steps=ckpt[:j], times=ckpt[:j] * self.dt,
                        sq_distance=self.dist[:, :j],
                        w2_distance=self.w2d[:, :j] if self.w2 else None,
                        function_gap=self.gap[:, :j],
                        reference_loss=to_numpy(outcome.history["loss"][:upto], np.float64),
                        reference_N=self.engine.blocks[0].N,
                        reference_particles=kept(self.ref_saved, rows) if self.keep_reference
                        else None,
                        system_particles=[kept(s, (N, self.D + 1)) for s, N in
                                          zip(self.sys_saved, self.Ns, strict=True)]
                        if self.keep_systems else None,
                        x=self.x_np, y=self.y_np, meta=self.meta())
