"""The particle engine of the mean-field simulators: groups of particles driven by measures.

Shared by :func:`specdyn.sim.mean_field_langevin` and
:func:`specdyn.sim.propagation_of_chaos` (see :mod:`specdyn.sim.langevin` for
the model, the free energy and the update). A particle is a row
``[a, w_1, ..., w_D]``; :class:`ParticleEngine` steps all particles of all
:class:`Block` s at once, with hand-written gradients, and draws their initial
particles and Langevin noise itself (:meth:`ParticleEngine.init`,
:meth:`ParticleEngine.sample`); :class:`ParticleConfig` holds what both entry
points' configs share, :class:`LangevinUpdate` the update they make.
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
from specdyn.sim.config import SimConfig
from specdyn.sim.divergence import Divergence, Watch, dt_advice
from specdyn.sim.protocol import DerivedSeed, Engine, EngineDefaults, StreamLayout, derive_seed
from specdyn.sim.registry import engine as register_engine

__all__ = ["Block", "GivenNoise", "LangevinUpdate", "ParticleConfig", "ParticleEngine",
           "ParticleState", "as_init"]

Tensor = Any  # torch.Tensor (torch is imported lazily)
NoiseSource = Callable[[int], Any] | np.ndarray | Any


@dataclass(frozen=True, kw_only=True)
@v.constrained_fields(dt=v.POSITIVE, temperature=v.NONNEGATIVE, weight_decay=v.NONNEGATIVE,
                      steps=v.Int(0))
class LangevinUpdate:
    """The noisy-GD update of the particle runs and how many times it is made.

    One step moves every particle ``theta_i`` (a row ``[a, w]``) by
    ``- dt grad dF/dmu(mu_N, theta_i) + sqrt(2 tau dt) xi_i`` (the Euler-Maruyama step
    of the mean-field Langevin SDE, :mod:`specdyn.sim.langevin`); the run makes
    ``steps`` of them, to time ``t = steps * dt``. Shared by
    :func:`~specdyn.sim.mean_field_langevin` and
    :func:`~specdyn.sim.propagation_of_chaos` (their ``update``); change one field with
    ``dataclasses.replace(update, steps=...)``.

    Attributes
    ----------
    dt
        Flow time per step (``> 0``); time ``t = step * dt``. The per-particle
        learning rate of the network loss is ``dt * N``.
    temperature
        ``tau >= 0``: noise ``sqrt(2 tau dt) xi`` per step (0 is plain GD).
    weight_decay
        ``lambda' >= 0`` of the penalty ``(lambda'/2) ||theta||^2``.
    steps
        Number of steps (``>= 0``).
    """

    dt: float = 0.05
    temperature: float = 0.02
    weight_decay: float = 0.05
    steps: int = 1000


#: ``init`` as scales ``(s_a, s_w)`` of the Gaussian draw (each ``>= 0``)
INIT_SCALES = v.Tuple(v.NONNEGATIVE, length=2)


@dataclass(frozen=True, kw_only=True)
@v.constrained_fields(activation=v.Instance(Activation, names=ACTIVATIONS), D=v.SIZE,
                      M=v.Int(1, optional=True), update=v.Instance(LangevinUpdate),
                      init=v.Free("(s_a, s_w), the scales of the Gaussian draw (each >= 0); "
                                  "mean_field_langevin also takes (N, D+1) particles"),
                      population_size=v.SIZE, label_noise=v.NONNEGATIVE)
class ParticleConfig(SimConfig):
    """What the particle runs' configs share (:class:`~specdyn.sim.langevin.LangevinConfig`,
    :class:`~specdyn.sim.chaos.ChaosConfig`): the model, the data, the update and the
    initial draw.

    Attributes
    ----------
    activation
        A name of :data:`specdyn.models.activations.ACTIVATIONS` or an ``Activation``.
    D
        Input dimension (``>= 1``).
    M
        Training-set size; ``None`` for the population, approximated by a fixed
        sample of ``population_size`` inputs drawn once.
    update
        The noisy-GD update and its number of steps, a :class:`LangevinUpdate`
        (``dt``, ``temperature``, ``weight_decay``, ``steps``: documented there).
    init
        ``(s_a, s_w)``: the initial particles are drawn ``a ~ N(0, s_a^2)``,
        ``w ~ N(0, s_w^2 I_D / D)`` (each scale ``>= 0``);
        :class:`~specdyn.sim.langevin.LangevinConfig` also takes an explicit
        ``(N, D+1)`` array of particles, rows ``[a, w]``.
    population_size
        The size of the population's fixed Monte-Carlo sample (``M = None``).
    label_noise
        Standard deviation of Gaussian noise added to the labels.
    options
        The run's options (:class:`~specdyn.sim.config.SimConfig`): ``checkpoints``
        ``None`` is ``Schedule.even(11)`` (11 evenly spaced steps, first and last
        included); the seed's streams are the data, the initial particles and the noise
        (so the data do not depend on ``N``); ``dtype`` float64 by default, ``device``
        CUDA when present.
    """

    activation: str | Activation
    D: int
    M: int | None = None
    update: LangevinUpdate = LangevinUpdate()
    init: tuple[float, float] | np.ndarray = (1.0, 1.0)
    population_size: int = 4096
    label_noise: float = 0.0


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


def as_init(init: Any, N: int, D: int) -> tuple[float, float] | np.ndarray:
    """``init`` checked: the scales ``(s_a, s_w)`` of the Gaussian draw (a pair of floats,
    each ``>= 0``), or the caller's particles ``(N, D+1)`` (a float64 host copy); a bad one
    is one ``ValueError`` line naming ``init``."""
    try:
        ndim = len(init.shape) if hasattr(init, "shape") else np.ndim(init)
    except ValueError:  # a ragged sequence
        raise ValueError(f"init must be scales (s_a, s_w) or an array of shape (N, D+1) = "
                         f"{(N, D + 1)}, got a ragged sequence") from None
    if isinstance(init, str):  # the old init="gaussian": the draw is now its scales
        raise ValueError(f"init must be scales (s_a, s_w) of the Gaussian draw or an array of "
                         f"shape (N, D+1) = {(N, D + 1)}, got {init!r}")
    if ndim <= 1:
        scales: tuple[float, float] = INIT_SCALES.check("init", init)
        return scales
    theta = v.real_array("init", to_numpy(init))
    if theta.shape != (N, D + 1):
        raise ValueError(f"init must be scales (s_a, s_w) or an array of shape (N, D+1) = "
                         f"{(N, D + 1)}, got {theta.shape}")
    return np.array(theta, dtype=np.float64)  # a writable copy


def gaussian_particles(N: int, D: int, init_scale: tuple[float, float],
                       generator: np.random.Generator) -> np.ndarray:
    """``N`` particles ``a ~ N(0, s_a^2)``, ``w ~ N(0, s_w^2 I_D / D)`` (rows ``[a, w]``,
    float64) drawn from the numpy ``generator``."""
    s_a, s_w = init_scale
    theta = generator.standard_normal((N, D + 1))
    theta[:, 0] *= s_a
    theta[:, 1:] *= s_w / math.sqrt(D)
    return theta


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
    stacked), ``loss_before``, each block's ``(R,)`` group losses of the particles
    the update was made from (a by-product of the forward pass; ``None`` for the
    state of :meth:`ParticleEngine.init`), and the ``updates`` made so far."""

    theta: Tensor
    loss_before: list[Tensor] | None = None
    updates: int = 0


@dataclass(frozen=True)
class Block:
    """``R`` groups of ``N`` consecutive particles; ``driver`` is the block (with
    ``R == 1``) whose measure drives them, ``None`` when each group drives itself;
    ``follows`` is the block whose first ``R N`` particles and noise they start from and
    share (the synchronous coupling), ``None`` when they draw their own."""

    R: int
    N: int
    driver: int | None = None
    follows: int | None = None


class GivenNoise:
    """Noise increments of the caller's, as a particle run's batch "generator": a callable
    ``noise(step) -> (rows, D+1)`` or an array ``(steps, rows, D+1)`` (checked here, before
    any work), read at the index of the update."""

    def __init__(self, noise: NoiseSource, shape: tuple[int, int], steps: int, dtype: Any,
                 device: Any) -> None:
        torch = _torch()
        self.shape, self.kw = shape, {"dtype": dtype, "device": device}
        self.fn: Callable[[int], Any] | None = noise if callable(noise) else None
        self.arr: Any = None
        if self.fn is None:
            arr = torch.as_tensor(noise, **self.kw)
            if tuple(arr.shape) != (steps, *shape):
                raise ValueError(f"noise must be a callable or an array of shape (steps, N, "
                                 f"d+1) = {(steps, *shape)}, got {tuple(arr.shape)}")
            if not bool(torch.isfinite(arr).all()):  # a guard on input, not divergence
                raise ValueError("noise must be finite")
            self.arr = arr

    def __call__(self, k: int) -> Tensor:
        """The increments of update ``k + 1`` (0-based ``k``)."""
        if self.fn is None:
            return self.arr[k]
        xi = _torch().as_tensor(self.fn(k), **self.kw)
        if tuple(xi.shape) != self.shape:
            raise ValueError(f"noise(step) must return shape {self.shape}, got "
                             f"{tuple(xi.shape)}")
        return xi


def _example() -> Any:
    """Three blocks (a population, two groups of two, two particles it drives) of tanh
    particles on 12 samples (float64, CPU): the engine's example."""
    torch = _torch()
    g = torch.Generator().manual_seed(derive_seed(0))
    X = torch.randn(12, 3, generator=g, dtype=torch.float64)
    blocks = [Block(1, 6), Block(2, 2), Block(1, 2, driver=0)]
    return (ACTIVATIONS["tanh"], X, torch.tanh(X[:, 0]), blocks, 0.1, 0.01, 0.05), {
        "init_scale": (1.0, 1.0)}


@register_engine(examples={"langevin": _example})
class ParticleEngine(Engine[ParticleState, "Tensor | None"]):
    """Particles in blocks of equal-size groups; one step costs one activation pass.

    The protocol's pair: :meth:`init` gives the :class:`ParticleState`,
    :meth:`step` (state, noise increments) one Euler-Maruyama step of size ``dt``,
    returning a new state (out of place: the old state stays valid) that carries
    each block's ``(R,)`` group losses *before* the step as ``loss_before``.

    Groups of a block are stored consecutively, so their functions and
    gradients are batched contractions over an ``(M, R, N)`` view (no gather).

    :meth:`init` (generator) draws the particles of every block that does not follow
    another, in order, from a numpy ``Generator`` (:func:`gaussian_particles` with the
    engine's ``init_scale``, the draw of ``mean_field_langevin``), or each from its own
    when given one generator per such block (``propagation_of_chaos``: the reference and
    the pool of copies); a following block starts as the first particles of the block it
    follows. :meth:`sample` draws the noise likewise from device ``torch.Generator`` s
    (or reads the engine's ``noise``, a :class:`GivenNoise`); ``None`` at zero
    temperature. :meth:`state_of` is the state of particles given by the caller; an engine
    given ``particles`` starts from them. A run watches ``max |theta|`` against 1
    (mean-field units) and block 0's loss for finiteness (the last state's too).
    """

    defaults: ClassVar[EngineDefaults] = EngineDefaults(check_every=50)
    # mean_field_langevin's streams: data, initial particles, noise
    streams: ClassVar[StreamLayout] = StreamLayout(data=0, init=1, batch=2)

    @v.constrained(dt=v.POSITIVE, temperature=v.NONNEGATIVE, weight_decay=v.NONNEGATIVE,
                   init_scale=v.Tuple(v.NONNEGATIVE, length=2, optional=True))
    def __init__(self, act: Activation, x: Tensor, y: Tensor, blocks: Sequence[Block],
                 dt: float, temperature: float, weight_decay: float, *,
                 init_scale: tuple[float, float] | None = None, particles: Any = None,
                 noise: GivenNoise | None = None) -> None:
        self.init_scale, self.particles, self.noise = init_scale, particles, noise
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

    def generator(self, role: str, seed: DerivedSeed) -> Any:
        """numpy's ``Generator`` for the initial particles, a device ``torch.Generator`` for
        the noise."""
        if role == "init":
            return np.random.default_rng(seed)
        return _torch().Generator(device=self.x.device).manual_seed(seed)

    def _by_block(self, generator: Any, draw: Callable[[int, Any], Any]) -> list[Any]:
        """``draw(rows, gen)`` for each block that draws (one generator for all, or one each),
        the first rows of its leader's for a following block; in block order."""
        gens = iter(generator if isinstance(generator, tuple) else ())
        out: list[Any] = []
        for b in self.blocks:
            rows = b.R * b.N
            if b.follows is not None:
                out.append(out[b.follows][:rows])
            else:
                out.append(draw(rows, next(gens) if isinstance(generator, tuple)
                                else generator))
        return out

    def init(self, generator: Any) -> ParticleState:
        """The state of particles drawn from the numpy ``generator`` (or one per drawing
        block), block by block (:func:`gaussian_particles`); of the engine's ``particles``
        when it was given some (the generator is then not drawn from)."""
        if self.particles is not None:
            return self.state_of(self.particles)
        if self.init_scale is None:
            raise ValueError("init_scale must be given as (s_a, s_w) for init to draw the "
                             "particles; use state_of(particles) for particles of your own")
        D, scale = self.x.shape[1], self.init_scale
        return self.state_of(np.concatenate(self._by_block(
            generator, lambda rows, g: gaussian_particles(rows, D, scale, g))))

    def sample(self, state: ParticleState, generator: Any) -> Tensor | None:
        """The noise increments ``xi`` of the next update (``None`` at zero temperature):
        the engine's :class:`GivenNoise` read at ``state.updates``, or standard normals drawn like
        :meth:`init` 's particles (one device generator, or one per drawing block)."""
        if self.noise_scale == 0:
            return None
        if self.noise is not None:
            return self.noise(state.updates)
        torch, shape = _torch(), self.x.shape[1] + 1
        kw = {"dtype": self.x.dtype, "device": self.x.device}
        parts = self._by_block(generator, lambda rows, g: torch.randn(
            (rows, shape), generator=g, **kw))
        return parts[0] if len(parts) == 1 else torch.cat(parts)

    def divergence(self, state0: ParticleState) -> Divergence[ParticleState]:
        """``max |theta|`` against 1 (parameters are O(1) in mean-field units), and block 0's
        first group loss for finiteness (the loss of state ``j`` is known once update
        ``j + 1`` is made, or the run has ended); the earlier bad one is reported."""
        return Divergence("mean-field Langevin run", dt_advice(self.dt) + ESCAPE_ADVICE,
                          self.dt, (
                              Watch("max |theta|", lambda s: s.theta.abs().max(), scale=1.0,
                                    scale_name=None),
                              Watch("loss", _block0_loss_before, lag=1, final=self.loss)))

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
        return ParticleState(new, [0.5 * (r * r).mean(0) for r in res], state.updates + 1)


def _block0_loss_before(state: ParticleState) -> Tensor:
    """Block 0's first group loss of the particles the update was made from."""
    assert state.loss_before is not None  # a state made by step
    return state.loss_before[0][0]


#: what the particle runs' divergence error advises beyond a smaller dt
ESCAPE_ADVICE = (" or increase weight_decay; a large temperature or an unbounded activation "
                 "(quadratic, relu) with a large target also makes particles escape")
