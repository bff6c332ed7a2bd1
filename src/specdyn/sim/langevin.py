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

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from specdyn import _validate as v
from specdyn._torch import to_numpy
from specdyn._torch import torch as _torch
from specdyn.models.activations import Activation, get_activation
from specdyn.schedule import Schedule
from specdyn.sim import protocol
from specdyn.sim.inputs import RunInputs, Setup
from specdyn.sim.loop import run
from specdyn.sim.options import RunOptions
from specdyn.sim.particles import (
    Block,
    GivenNoise,
    LangevinUpdate,
    NoiseSource,
    ParticleConfig,
    ParticleEngine,
    ParticleState,
    as_init,
    make_data,
    target_values,
)
from specdyn.sim.protocol import Outcome
from specdyn.sim.recording import Recorded, SpectrumRecorder
from specdyn.sim.registry import entry_point

if TYPE_CHECKING:
    from typing import Unpack

    from specdyn.sim.options import RunKeywords

Target = Callable[[np.ndarray], ArrayLike]

__all__ = ["LangevinConfig", "LangevinRun", "mean_field_langevin"]


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
        temperature, weight_decay, N, D, M (None for the population), activation,
        population_size, label_noise and init_scale (``(s_a, s_w)``; None for particles
        of the caller's).
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




@dataclass(frozen=True, kw_only=True)
@v.constrained_fields(N=v.SIZE)
class LangevinConfig(ParticleConfig):
    """How :func:`mean_field_langevin` runs: :class:`~specdyn.sim.particles.ParticleConfig`
    's fields (the update's in :class:`~specdyn.sim.particles.LangevinUpdate`) and the
    number of particles ``N`` (``>= 1``); ``init`` is the scales ``(s_a, s_w)`` of the
    Gaussian draw or an explicit ``(N, D+1)`` array of particles (checked against ``N``
    and ``D``, kept as a float64 host copy)."""

    N: int

    def __post_init__(self) -> None:
        super().__post_init__()  # type: ignore[misc]  # the inherited fields' checks
        object.__setattr__(self, "init", as_init(self.init, self.N, self.D))


def _tanh1(x: np.ndarray) -> np.ndarray:
    return np.tanh(x[:, 0])


def _example() -> Any:
    return ("tanh", _tanh1, 4, 2, 10), {"update": LangevinUpdate(steps=40), "device": "cpu"}


#: the update of a run that names none (ParticleConfig's default)
_DEFAULT_UPDATE = LangevinUpdate()


@entry_point(LangevinConfig, example=_example)
def mean_field_langevin(activation: str | Activation, target: Target, N: int, D: int,
                        M: int | None = None, *, update: LangevinUpdate = _DEFAULT_UPDATE,
                        init: tuple[float, float] | ArrayLike = (1.0, 1.0),
                        population_size: int = 4096, label_noise: float = 0.0,
                        noise: NoiseSource = None,
                        data: tuple[ArrayLike, ArrayLike] | None = None,
                        options: RunOptions | None = None,
                        **shorthands: Unpack[RunKeywords]) -> LangevinRun:
    """Noisy GD of ``N`` particles in the mean-field (muP) scaling.

    Parameters
    ----------
    activation, N, D, M, update, init, population_size, label_noise
        The model, its sizes, the update and the initial particles (:class:`LangevinConfig`
        and :class:`~specdyn.sim.particles.ParticleConfig`, where each is documented; ``M``
        ``None``: the population; ``update`` a
        :class:`~specdyn.sim.particles.LangevinUpdate`: ``dt``, ``temperature``,
        ``weight_decay``, ``steps``; ``init`` the scales ``(s_a, s_w)`` of the Gaussian
        draw or an explicit ``(N, D+1)`` array).
    target
        ``f*``: a callable mapping a numpy ``(M, D)`` array to ``(M,)`` (e.g. a
        :class:`specdyn.data.hermite.HermiteTarget` or an :class:`AtomTeacher`).
    noise
        Standard normal increments ``xi`` (unscaled): ``None`` draws them; a
        callable ``noise(step) -> (N, D+1)``; or an array ``(steps, N, D+1)``.
        Passing the same increments to two systems couples them synchronously.
    data
        Optional explicit ``(x, y)`` training data (overrides ``M``, ``target``
        is then only checked for its dimension).
    options, **shorthands
        The run's :class:`~specdyn.sim.options.RunOptions`, or its fields as keywords.

    Returns
    -------
    LangevinRun

    Raises
    ------
    ValueError
        On bad input, before any work.
    DivergenceError
        When a parameter becomes non-finite or its size exceeds ``1e6`` (the
        particle engine's :class:`~specdyn.sim.options.EngineDefaults`), or the loss
        stops being finite (checked by the loop, the final state's too; the message
        gives the step and a suggestion; ``.record`` holds the checkpoints taken before it).
    """
    cfg = LangevinConfig.of_call(locals(), entry="mean_field_langevin")
    act = get_activation(cfg.activation)
    up = cfg.update
    ckpt = cfg.options.schedule(up.steps, Schedule.even(11))
    given = None
    if data is not None:
        x_np = v.real_array("data[0]", data[0])
        y_np = v.real_array("data[1]", data[1])
        if x_np.ndim != 2 or x_np.shape[1] != D or y_np.shape != (x_np.shape[0],):
            raise ValueError(f"data must be (x (M, D={D}), y (M,)), got {x_np.shape}, "
                             f"{y_np.shape}")
        target_values(target, x_np[:2])
        given, M = (x_np, y_np), x_np.shape[0]
    # the scales of the draw, or the caller's particles (checked by the config)
    scales = cfg.init if isinstance(cfg.init, tuple) else None
    particles0 = None if isinstance(cfg.init, tuple) else cfg.init

    def build(inputs: RunInputs) -> tuple[ParticleEngine,
                                          SpectrumRecorder[ParticleState, LangevinRun]]:
        torch, tdtype, dev = _torch(), inputs.dtype, inputs.device
        x_np, y_np = given if given is not None else make_data(
            target, D, M, cfg.population_size, cfg.label_noise, inputs.seed_of("data"))
        engine = ParticleEngine(
            act, torch.as_tensor(x_np, dtype=tdtype, device=dev),
            torch.as_tensor(y_np, dtype=tdtype, device=dev), [Block(1, N)], up.dt,
            up.temperature, up.weight_decay, init_scale=scales, particles=particles0,
            noise=None if noise is None else GivenNoise(noise, (N, D + 1), up.steps, tdtype,
                                                        dev))
        return engine, SpectrumRecorder({
            "particles": lambda st: to_numpy(st.theta, np.float64),
            "penalty": lambda st: 0.5 * up.weight_decay * float(
                (st.theta * st.theta).sum(1).mean())},
            record=lambda rec, outcome: _langevin_run(rec, outcome, ckpt, up.dt, (N, D + 1),
                                                      x_np, y_np),
            meta={"activation": act.name, "N": N, "D": D, "M": M,
                  "population_size": cfg.population_size if M is None else None,
                  "dt": up.dt, "temperature": up.temperature,
                  "weight_decay": up.weight_decay, "label_noise": cfg.label_noise,
                  "init_scale": scales})

    return run(Setup("mean_field_langevin", ParticleEngine.streams, build), steps=up.steps,
               options=cfg.options, checkpoints=ckpt, desc="langevin")


def _langevin_run(rec: Recorded, outcome: Outcome[ParticleState], ckpt: np.ndarray, dt: float,
                  shape: tuple[int, int], x_np: np.ndarray, y_np: np.ndarray) -> LangevinRun:
    """The record: the checkpoints so far and the loss of every step (of a diverged run, up
    to its last checkpoint)."""
    done = ckpt[:len(rec.steps)]
    upto = outcome.steps + 1 if outcome.diverged is None else \
        int(done[-1]) if len(done) else 0
    return LangevinRun(steps=done, times=done * dt, particles=rec.array("particles",
                                                                        (0, *shape)),
                       loss=to_numpy(outcome.history["loss"][:upto], np.float64),
                       penalty=np.asarray(rec.values.get("penalty", [])), x=x_np, y=y_np,
                       meta=rec.meta)
