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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from specdyn import _validate as v
from specdyn._torch import to_numpy
from specdyn._torch import torch as _torch
from specdyn.measure.transport import wasserstein2_squared
from specdyn.models.activations import Activation, get_activation
from specdyn.schedule import Schedule
from specdyn.sim.inputs import RunInputs, Setup
from specdyn.sim.langevin import Target
from specdyn.sim.loop import run
from specdyn.sim.options import RunOptions
from specdyn.sim.particles import (
    INIT_SCALES,
    Block,
    LangevinUpdate,
    ParticleConfig,
    ParticleEngine,
    ParticleState,
    make_data,
)
from specdyn.sim.protocol import Outcome, Record, StreamLayout
from specdyn.sim.recording import Recorded, SpectrumRecorder
from specdyn.sim.registry import entry_point

if TYPE_CHECKING:
    from typing import Unpack

    from specdyn.sim.options import RunKeywords

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
        averaged over replicas; ``None`` unless ``record`` names it. Unlike the paired
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
        ``(C, reference_N, D+1)`` reference states (``None`` unless ``record`` names
        it).
    system_particles
        For each ``N``, ``(C, N, D+1)`` states of its first replica (``None``
        unless ``record`` names it).
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


#: The update of a run that names none: 200 steps of the particle runs' default.
_DEFAULT_UPDATE = LangevinUpdate(steps=200)
#: The optional fields of a :class:`ChaosRun` that ``record`` may ask for.
OPTIONAL_RECORDS = ("w2_distance", "reference_particles", "system_particles")


@dataclass(frozen=True, kw_only=True)
@v.constrained_fields(N_values=v.Tuple(v.SIZE, min_len=1), reference_N=v.SIZE, replicas=v.SIZE,
                      record=v.Subset(*OPTIONAL_RECORDS), init=INIT_SCALES)
class ChaosConfig(ParticleConfig):
    """How :func:`propagation_of_chaos` runs: :class:`~specdyn.sim.particles.ParticleConfig`
    's fields (``M`` default 400; ``update`` default ``LangevinUpdate(steps=200)``, its
    fields in :class:`~specdyn.sim.particles.LangevinUpdate`; ``init`` only the scales
    ``(s_a, s_w)``) and these.

    Attributes
    ----------
    N_values
        The system sizes (each ``>= 1``).
    reference_N
        Size of the reference population, the stand-in for the mean-field law.
    replicas
        Systems of each size per ``max(N_values)`` copies (see the function).
    record
        The optional fields of the :class:`ChaosRun` to fill (the others are ``None``):
        ``"w2_distance"``, the exact ``W2^2`` of each system to its copies (optimal
        assignment); ``"reference_particles"``, ``"system_particles"``, the reference's
        states and each size's first replica's states at the checkpoints. A name or a
        sequence of them; none by default.
    """

    M: int | None = 400
    update: LangevinUpdate = _DEFAULT_UPDATE
    init: tuple[float, float] = (1.0, 1.0)
    N_values: Sequence[int]
    reference_N: int = 8000
    replicas: int = 1
    record: Sequence[str] = ()


def _tanh1(x: np.ndarray) -> np.ndarray:
    return np.tanh(x[:, 0])


def _example() -> Any:
    return ("tanh", _tanh1, [2], 2, 10), {"update": LangevinUpdate(steps=40), "reference_N": 16,
                                          "device": "cpu"}


@entry_point(ChaosConfig, example=_example)
def propagation_of_chaos(activation: str | Activation, target: Target, N_values: Sequence[int],
                         D: int, M: int | None = 400, *,
                         update: LangevinUpdate = _DEFAULT_UPDATE,
                         init: tuple[float, float] = (1.0, 1.0), population_size: int = 4096,
                         label_noise: float = 0.0, reference_N: int = 8000, replicas: int = 1,
                         record: Sequence[str] = (), options: RunOptions | None = None,
                         **shorthands: Unpack[RunKeywords]) -> ChaosRun:
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

    The parameters are the fields of :class:`ChaosConfig`, where each is documented
    (``activation``, ``N_values``, ``D``, ``M`` as positions, the others as keywords:
    ``update`` a :class:`~specdyn.sim.particles.LangevinUpdate`, ``record`` the optional
    fields of the :class:`ChaosRun` to fill), and the run's options (``options``, or its
    fields ``checkpoints``, ``seed``, ``dtype``, ``device``, ``progress`` as keywords);
    ``target`` is that of :func:`specdyn.sim.mean_field_langevin`. Returns a
    :class:`ChaosRun`; raises :class:`~specdyn.sim.divergence.DivergenceError` as it does,
    its ``record`` the :class:`ChaosRun` of the checkpoints taken before the divergence
    (reference loss up to the last of them).
    """
    cfg = ChaosConfig.of_call(locals(), entry="propagation_of_chaos")
    act, up = get_activation(cfg.activation), cfg.update
    Ns = sorted(set(cfg.N_values))
    ckpt = cfg.options.schedule(up.steps, Schedule.even(11))
    n_max = max(Ns) * cfg.replicas  # size of the pool of copies
    # block 0: reference; block 1: the pool of copies (driven by block 0); block 2+i:
    # R_i = n_max / N_i self-driven systems of N_i particles, replica j starting from (and
    # sharing the noise of) copies j N_i .. (j+1) N_i - 1
    reps = [n_max // N for N in Ns]
    blocks = [Block(1, cfg.reference_N), Block(1, n_max, driver=0),
              *(Block(R, N, follows=1) for R, N in zip(reps, Ns, strict=True))]

    def build(inputs: RunInputs) -> tuple[ParticleEngine,
                                          SpectrumRecorder[ParticleState, ChaosRun]]:
        torch, tdtype, dev = _torch(), inputs.dtype, inputs.device
        x_np, y_np = make_data(target, D, M, cfg.population_size, cfg.label_noise,
                               inputs.seed_of("data"))
        engine = ParticleEngine(act, torch.as_tensor(x_np, dtype=tdtype, device=dev),
                                torch.as_tensor(y_np, dtype=tdtype, device=dev), blocks, up.dt,
                                up.temperature, up.weight_decay, init_scale=cfg.init)
        coupling = _Coupling(engine, Ns, reps, D, cfg.record)
        return engine, SpectrumRecorder(
            {"coupling": coupling},
            record=lambda rec, outcome: coupling.run(rec, outcome, ckpt, up.dt, x_np, y_np),
            meta={"activation": act.name, "D": D, "M": M, "dt": up.dt,
                  "temperature": up.temperature, "weight_decay": up.weight_decay,
                  "reference_N": cfg.reference_N, "replicas": reps,
                  "population_size": cfg.population_size if M is None else None,
                  "label_noise": cfg.label_noise})

    return run(Setup("propagation_of_chaos", STREAMS, build), steps=up.steps,
               options=cfg.options, checkpoints=ckpt, desc="chaos")


class _Coupling:
    """What a coupling run records at a checkpoint (per system size: the paired squared
    distance, the exact ``W2^2`` when asked, the function gap; the kept particles), and the
    :class:`ChaosRun` of those recorded."""

    def __init__(self, engine: ParticleEngine, Ns: list[int], reps: list[int], D: int,
                 record: Sequence[str]) -> None:
        self.engine, self.Ns, self.reps, self.D = engine, Ns, reps, D
        self.w2 = "w2_distance" in record
        self.keep_reference = "reference_particles" in record
        self.keep_systems = "system_particles" in record
        self.ref_rows, self.copy_rows = engine.rows(0), engine.rows(1)

    def __call__(self, st: ParticleState) -> dict[str, Any]:
        """One checkpoint: each system's distances to its copies, the kept states."""
        engine, D, th = self.engine, self.D, st.theta
        fs = engine.functions(st)
        copies = th[self.copy_rows]
        K = len(self.Ns)
        dist, w2d, gap = np.zeros(K), np.zeros(K), np.zeros(K)
        out: dict[str, Any] = {}
        for i, (R, N) in enumerate(zip(self.reps, self.Ns, strict=True)):
            diff = th[engine.rows(2 + i)] - copies[:R * N]
            # mean over replicas of (1/N) sum_i ||.||^2 == mean over all R N particles
            dist[i] = float((diff * diff).sum(1).mean())
            gap[i] = float((fs[2 + i] - fs[0]).pow(2).mean())
            if self.w2:  # exact W2^2 per replica (optimal assignment), averaged
                sys_r = to_numpy(th[engine.rows(2 + i)]).reshape(R, N, D + 1)
                cop_r = to_numpy(copies[:R * N]).reshape(R, N, D + 1)
                w2d[i] = sum(wasserstein2_squared(a, b, method="assignment")
                             for a, b in zip(sys_r, cop_r, strict=True)) / R
            if self.keep_systems:
                out[f"system{i}"] = to_numpy(th[engine.rows(2 + i)][:N], np.float64)
        if self.keep_reference:
            out["reference"] = to_numpy(th[self.ref_rows], np.float64)
        return {"distance": dist, "w2": w2d, "gap": gap, **out}

    def run(self, rec: Recorded, outcome: Outcome[ParticleState], ckpt: np.ndarray, dt: float,
            x_np: np.ndarray, y_np: np.ndarray) -> ChaosRun:
        """The record of the checkpoints so far, with the reference loss of every step (of a
        diverged run, up to its last checkpoint)."""
        j, K, D = len(rec.steps), len(self.Ns), self.D
        upto = outcome.steps + 1 if outcome.diverged is None else int(ckpt[j - 1]) if j else 0
        ref_n = self.engine.blocks[0].N

        def per_size(name: str) -> np.ndarray:
            return rec.array(name, (0, K)).T

        return ChaosRun(N=np.asarray(self.Ns), steps=ckpt[:j], times=ckpt[:j] * dt,
                        sq_distance=per_size("distance"),
                        w2_distance=per_size("w2") if self.w2 else None,
                        function_gap=per_size("gap"),
                        reference_loss=to_numpy(outcome.history["loss"][:upto], np.float64),
                        reference_N=ref_n,
                        reference_particles=rec.array("reference", (0, ref_n, D + 1))
                        if self.keep_reference else None,
                        system_particles=[rec.array(f"system{i}", (0, N, D + 1))
                                          for i, N in enumerate(self.Ns)]
                        if self.keep_systems else None,
                        x=x_np, y=y_np, meta=rec.meta)
