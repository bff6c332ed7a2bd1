"""The particle engine of the mean-field simulators: groups of particles driven by measures.

Shared by :func:`specdyn.sim.mean_field_langevin` and
:func:`specdyn.sim.propagation_of_chaos` (see :mod:`specdyn.sim.langevin` for
the model, the free energy and the update). A particle is a row
``[a, w_1, ..., w_D]``; :class:`ParticleEngine` steps all particles of all
:class:`Block` s at once, with hand-written gradients.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from specdyn import _validate as v
from specdyn._torch import to_numpy
from specdyn._torch import torch as _torch
from specdyn.models.activations import ACTIVATIONS, Activation
from specdyn.sim import protocol
from specdyn.sim.protocol import DerivedSeed, first_divergent

__all__ = ["Block", "ParticleEngine", "ParticleState"]

Tensor = Any  # torch.Tensor (torch is imported lazily)
NoiseSource = Callable[[int], Any] | np.ndarray | Any

#: The declared constraints shared by the particle entry points (checked where declared).
COMMON = {"dt": v.POSITIVE, "temperature": v.NONNEGATIVE, "weight_decay": v.NONNEGATIVE,
          "steps": v.Int(0), "D": v.SIZE, "M": v.Int(1, optional=True),
          "population_size": v.SIZE, "label_noise": v.NONNEGATIVE, "seed": v.Int(0, optional=True)}


def as_host(a: Any) -> np.ndarray:
    """A float64 host copy (writable: ``torch.from_numpy`` needs writable memory)."""
    return np.array(to_numpy(a), dtype=np.float64)


# --------------------------------------------------------------------------------------
# inputs

def declared_dim(target: Any) -> int | None:
    for attr in ("d", "dim", "input_dim"):
        val = getattr(target, attr, None)
        if isinstance(val, (int, np.integer)) and not isinstance(val, bool):
            return int(val)
    direction = getattr(target, "direction", None)
    if direction is not None:
        return int(np.asarray(direction).shape[-1])
    return None


def target_values(target: Any, x: np.ndarray) -> np.ndarray:
    """``target(x)`` as a finite float64 ``(M,)`` array; errors name ``target``."""
    d = x.shape[1]
    if not callable(target):
        raise ValueError(f"target must be a callable of x with shape (M, D), got {target!r}")
    dim = declared_dim(target)
    if dim is not None and dim != d:
        raise ValueError(f"target takes inputs of dimension {dim}, but D = {d}")
    try:
        y = as_host(target(x.copy()))
    except (IndexError, ValueError, TypeError, RuntimeError) as err:
        raise ValueError(f"target cannot be evaluated on inputs of dimension D = {d}: {err}"
                         ) from None
    if y.shape == (len(x), 1):
        y = y[:, 0]
    if y.shape != (len(x),):
        raise ValueError(f"target must return one value per input row, shape ({len(x)},), "
                         f"got {y.shape}")
    if not np.isfinite(y).all():  # a guard on input, not divergence
        raise ValueError("target must be finite at the sampled inputs")
    return y


def make_data(target: Any, D: int, M: int | None, population_size: int, label_noise: float,
              seed: DerivedSeed) -> tuple[np.ndarray, np.ndarray]:
    """``M`` inputs ``x ~ N(0, I_D)`` (``population_size`` when ``M`` is ``None``), labels."""
    rng = np.random.default_rng(seed)
    m = population_size if M is None else M
    x = rng.standard_normal((m, D))
    y = target_values(target, x)
    if label_noise > 0:
        y = y + label_noise * rng.standard_normal(m)
    return x, y


def initial_particles(init: Any, N: int, D: int, init_scale: tuple[float, float],
                      seed: DerivedSeed) -> np.ndarray:
    """``init="gaussian"``: ``a ~ N(0, s_a^2)``, ``w ~ N(0, s_w^2 I_D / D)``; or an array."""
    d = D
    if isinstance(init, str):
        v.choice("init", init, ("gaussian",))
        return gaussian_particles(N, D, init_scale, np.random.default_rng(seed))
    theta = v.real_array("init", as_host(init))
    if theta.shape != (N, d + 1):
        raise ValueError(f"init must be 'gaussian' or an array of shape (N, d+1) = "
                         f"{(N, d + 1)}, got {theta.shape}")
    return theta.copy()


def gaussian_particles(N: int, D: int, init_scale: tuple[float, float],
                       generator: np.random.Generator) -> np.ndarray:
    """``N`` particles ``a ~ N(0, s_a^2)``, ``w ~ N(0, s_w^2 I_D / D)`` (rows ``[a, w]``,
    float64) drawn from the numpy ``generator``."""
    s_a, s_w = init_scale
    theta = generator.standard_normal((N, D + 1))
    theta[:, 0] *= s_a
    theta[:, 1:] *= s_w / math.sqrt(D)
    return theta


def check_init_scale(init_scale: tuple[float, float]) -> None:
    """``init_scale`` must be a pair ``(s_a, s_w)`` of reals ``>= 0``."""
    if len(init_scale) != 2:
        raise ValueError(f"init_scale must be a pair (s_a, s_w), got {init_scale!r}")
    v.nonnegative("init_scale[0]", init_scale[0])
    v.nonnegative("init_scale[1]", init_scale[1])


# --------------------------------------------------------------------------------------
# the engine: groups of particles, each driven by the measure of one group

def _tanh_chain(s: Tensor, r: Tensor) -> Tensor:
    # r * (1 - s^2) in one fused pass (autograd's own tanh backward kernel)
    return _torch().ops.aten.tanh_backward(r, s)


# r * sigma'(z) from s = sigma(z) for built-ins where that saves passes over (M, P)
_CHAIN_FROM_VALUE = {"tanh": _tanh_chain, "tanh-shift": _tanh_chain}


@dataclass(frozen=True)
class ParticleState:
    """The state of a particle run, a value: ``theta`` (rows ``[a, w]``, all blocks
    stacked) and ``loss_before``, each block's ``(R,)`` group losses of the particles
    the update was made from (a by-product of the forward pass; ``None`` for the
    state of :meth:`ParticleEngine.init`)."""

    theta: Tensor
    loss_before: list[Tensor] | None = None


@dataclass(frozen=True)
class Block:
    """``R`` groups of ``N`` consecutive particles; ``driver`` is the block (with
    ``R == 1``) whose measure drives them, ``None`` when each group drives itself."""

    R: int
    N: int
    driver: int | None = None


def fill_history(engine: ParticleEngine, state: ParticleState, k: int, steps: int, loss: Tensor,
                 theta_max: Tensor) -> None:
    """After update ``k`` (1-based) made ``state``: write ``loss[k - 1]`` (block 0's first
    group loss before the update), ``theta_max[k]`` (max |theta| after it) and, after the
    last update, ``loss[steps]`` (the final state's own) into the run's device histories
    (the caller's buffers, no host sync). The entry points' step functions call it after
    :meth:`ParticleEngine.step`, which writes nothing."""
    assert state.loss_before is not None
    loss[k - 1] = state.loss_before[0][0]
    theta_max[k] = state.theta.abs().max()
    if k == steps:  # no later update gives the last state's loss
        loss[steps] = engine.loss(state)


class ParticleEngine:
    """Particles in blocks of equal-size groups; one step costs one activation pass.

    The protocol's pair: :meth:`init` gives the :class:`ParticleState`,
    :meth:`step` (state, noise increments) one Euler-Maruyama step of size ``dt``,
    returning a new state (out of place: the old state stays valid) that carries
    each block's ``(R,)`` group losses *before* the step as ``loss_before``.

    Groups of a block are stored consecutively, so their functions and
    gradients are batched contractions over an ``(M, R, N)`` view (no gather).

    :meth:`init` (generator) draws every block's particles in order from a numpy
    ``Generator`` (:func:`gaussian_particles` with the engine's ``init_scale``, the draw
    of ``mean_field_langevin``); :meth:`state_of` is the state of particles given by
    the caller (``propagation_of_chaos``, whose blocks share one draw and whose
    reference comes from its own stream).
    """

    #: Its row of :data:`~specdyn.sim.protocol.ENGINE_DEFAULTS`: the check interval and
    #: divergence factor the driver uses for it.
    defaults: ClassVar[str] = "particles"

    @v.constrained(dt=v.POSITIVE, temperature=v.NONNEGATIVE, weight_decay=v.NONNEGATIVE)
    def __init__(self, act: Activation, x: Tensor, y: Tensor, blocks: Sequence[Block],
                 dt: float, temperature: float, weight_decay: float, *,
                 init_scale: tuple[float, float] | None = None) -> None:
        if init_scale is not None:
            check_init_scale(init_scale)
        self.init_scale = init_scale
        self._einsum = _torch().einsum
        self.act = act
        self.x, self.y = x, y
        self.M = x.shape[0]
        self.blocks = list(blocks)
        for b in self.blocks:
            if b.driver is not None and self.blocks[b.driver].R != 1:
                raise ValueError("a driving block must hold a single group")
        sizes = [b.R * b.N for b in self.blocks]
        self.starts = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        self.dt, self.wd = dt, weight_decay
        self.noise_scale = math.sqrt(2.0 * temperature * dt)
        registered = ACTIVATIONS.get(act.name)
        self.chain_from_value = (_CHAIN_FROM_VALUE.get(act.name)
                                 if registered is act else None)

    def init(self, generator: np.random.Generator) -> ParticleState:
        """The state of particles drawn from the numpy ``generator``, block by block
        (:func:`gaussian_particles`)."""
        if self.init_scale is None:
            raise ValueError("init_scale must be given as (s_a, s_w) for init to draw the "
                             "particles; use state_of(particles) for particles of your own")
        D = self.x.shape[1]
        return self.state_of(np.concatenate([
            gaussian_particles(b.R * b.N, D, self.init_scale, generator) for b in self.blocks]))

    def state_of(self, particles: Any) -> ParticleState:
        """The state of ``particles`` (rows ``[a, w]``, all blocks stacked), as a tensor of
        the data's dtype and device."""
        return ParticleState(_torch().as_tensor(particles, dtype=self.x.dtype,
                                                device=self.x.device))

    def rows(self, i: int) -> slice:
        """The rows of block ``i`` in the state."""
        return slice(int(self.starts[i]), int(self.starts[i + 1]))

    def _block_forward(self, theta: Tensor, i: int) -> tuple[Tensor, Tensor, Tensor]:
        b = self.blocks[i]
        th = theta[self.rows(i)]
        z = self.x @ th[:, 1:].T
        s = self.act.fn(z)
        if b.R == 1:
            f = (s @ th[:, :1]) / b.N
        else:
            f = self._einsum("mrn,rn->mr", s.view(self.M, b.R, b.N),
                             th[:, 0].view(b.R, b.N)) / b.N
        return f, z, s

    def functions(self, state: ParticleState) -> list[Tensor]:
        """Each block's group functions on the data, ``(M, R)`` per block."""
        return [self._block_forward(state.theta, i)[0] for i in range(len(self.blocks))]

    def loss(self, state: ParticleState) -> Tensor:
        """Block 0's (first group's) data loss ``(1/2M) sum_m (f(x_m) - y_m)^2``, 0-d."""
        return 0.5 * (self.functions(state)[0][:, 0] - self.y).pow(2).mean()

    def step(self, state: ParticleState, xi: Tensor | None) -> ParticleState:
        """One noisy GD step; the new state holds the per-block losses (R,) before it."""
        theta = state.theta
        fwd = [self._block_forward(theta, i) for i in range(len(self.blocks))]
        res = [f - self.y[:, None] for f, _, _ in fwd]
        grad = theta * self.wd
        for i, b in enumerate(self.blocks):
            _, z, s = fwd[i]
            r = res[i if b.driver is None else b.driver]  # (M, R) or (M, 1)
            rows = self.rows(i)
            if b.R == 1:
                grad[rows, 0] += (s.T @ r[:, 0]) / self.M
            else:
                grad[rows, 0] += self._einsum("mrn,mr->rn", s.view(self.M, b.R, b.N),
                                              r).reshape(-1) / self.M
            # r_m sigma'(z_mi), r broadcast over each group's particles (no copy of r)
            shape = (self.M, b.R, b.N)
            r3 = r.view(self.M, b.R, 1).expand(shape)
            if self.chain_from_value is not None:
                dr = self.chain_from_value(s.view(shape), r3)
            else:
                dr = self.act.deriv(z).reshape(shape) * r3
            dr = dr.reshape(self.M, b.R * b.N)
            grad[rows, 1:] += (self.x.T @ dr).T * (theta[rows, 0] / self.M)[:, None]
        new = theta - self.dt * grad
        if xi is not None and self.noise_scale > 0:
            new = new + self.noise_scale * xi
        return ParticleState(new, [0.5 * (r * r).mean(0) for r in res])


#: what the particle runs' divergence error advises beyond a smaller dt
ESCAPE_ADVICE = (" or increase weight_decay; a large temperature or an unbounded activation "
                 "(quadratic, relu) with a large target also makes particles escape")


def blowup_check(theta_max: Tensor, loss: Tensor, steps: int, dt: float, factor: float
                 ) -> Callable[[ParticleState, int], ParticleState]:
    """The driver's ``check`` of the particle runs (histories filled by :func:`fill_history`):
    the first of the states ``0..k`` whose max |theta| is non-finite or above ``factor``
    (parameters are O(1) in mean-field units: scale 1), or whose loss is not finite (the
    earlier of the two; the loss of state ``j`` is known once update ``j + 1`` is made, or
    the run has ended)."""
    limit = protocol.divergence_limit(1.0, factor)
    says = protocol.Divergence("mean-field Langevin run", protocol.dt_advice(dt) + ESCAPE_ADVICE,
                               dt)

    def check(state: ParticleState, k: int) -> ParticleState:
        j = first_divergent(theta_max[:k + 1], limit)
        known = k + 1 if k == steps else k  # loss entries filled so far
        i = first_divergent(loss[:known]) if known else None
        if i is not None and (j is None or i < j):
            raise says.error(i, protocol.watched("loss", float(loss[i]), factor))
        if j is not None:
            raise says.error(j, protocol.watched("max |theta|", float(theta_max[j]), factor,
                                                 None))
        return state
    return check


def noise_fn(noise: NoiseSource, N: int, d: int, steps: int, gen: Any, dtype: Any,
              device: Any) -> Callable[[int], Tensor]:
    torch = _torch()
    shape = (N, d + 1)
    if noise is None:
        def draw(k: int) -> Tensor:
            return torch.randn(shape, generator=gen, dtype=dtype, device=device)
        return draw
    if callable(noise):
        def call(k: int) -> Tensor:
            xi = noise(k)
            xi = torch.as_tensor(xi, dtype=dtype, device=device)
            if tuple(xi.shape) != shape:
                raise ValueError(f"noise(step) must return shape {shape}, got {tuple(xi.shape)}")
            return xi
        return call
    arr = torch.as_tensor(noise, dtype=dtype, device=device)
    if tuple(arr.shape) != (steps, *shape):
        raise ValueError(f"noise must be a callable or an array of shape (steps, N, d+1) = "
                         f"{(steps, *shape)}, got {tuple(arr.shape)}")
    if not bool(torch.isfinite(arr).all()):  # a guard on input, not divergence
        raise ValueError("noise must be finite")
    return lambda k: arr[k]

