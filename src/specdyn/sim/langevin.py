"""Mean-field Langevin dynamics of a wide two-layer network under muP (particles).

Conventions
-----------
* A particle is ``theta = (a, w)`` in ``R^(1+d)``, stored as one row
  ``[a, w_1, ..., w_d]``; ``N`` particles form an ``(N, d+1)`` array.
* Mean-field (muP) output scaling: ``f_N(x) = (1/N) sum_i a_i sigma(w_i . x)``.
* Data: ``M`` inputs ``x_m ~ N(0, I_d)`` with labels ``y_m = f*(x_m) (+ noise)``.
  ``n`` given: a fixed training set of ``n`` samples (empirical risk).
  ``n=None``: the population, approximated by a *fixed* Monte-Carlo sample of
  ``population_size`` inputs drawn once (not fresh samples each step, so that
  runs are deterministic given the seed and coupled systems see the same risk).
* Free energy (without the entropy term)
  ``F(mu) = (1/2M) sum_m (f_mu(x_m) - y_m)^2 + (lambda'/2) E_mu ||theta||^2``,
  with first variation ``dF/dmu(theta) = (1/M) sum_m r_m a sigma(w.x_m)
  + (lambda'/2)||theta||^2``, ``r = f_mu - y``.
* One step (Euler-Maruyama of the mean-field Langevin SDE), for every particle
  ``theta_i <- theta_i - eta grad_theta dF/dmu(mu_N, theta_i) + sqrt(2 tau eta) xi_i``
  with ``tau`` the temperature and ``xi_i ~ N(0, I_{d+1})``. Since
  ``d F(mu_N) / d theta_i = (1/N) grad dF/dmu(theta_i)``, this is noisy GD on
  the network's loss with per-particle learning rate ``eta * N``. Time is
  ``t = step * eta``; for ``tau > 0`` the stationary measure is
  ``mu_inf ~ exp(-dF/dmu / tau)``.

Gradients are written by hand (no autograd): with ``Z = X W^T``,
``grad_a = (1/M) sigma(Z)^T r + lambda' a`` and
``grad_w_i = (a_i/M) sum_m r_m sigma'(z_mi) x_m + lambda' w_i``.

:func:`propagation_of_chaos` runs, in lock-step on one device, a large
reference population (the stand-in for the mean-field limit), ``N``-particle
systems for several ``N``, and mean-field copies of their particles (same
initial condition and same Brownian increments, drift from the reference
measure): Sznitman's synchronous coupling.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from specdyn import _validate as v
from specdyn._progress import progress as _progress
from specdyn._torch import resolve_device, resolve_dtype
from specdyn._torch import torch as _torch
from specdyn.models.activations import ACTIVATIONS, Activation, get_activation
from specdyn.sim._run import DivergenceError

Tensor = Any  # torch.Tensor (torch is imported lazily)
Target = Callable[[np.ndarray], ArrayLike]
NoiseSource = Callable[[int], Any] | np.ndarray | Any

__all__ = [
    "ChaosRun",
    "LangevinBlowUp",
    "LangevinRun",
    "mean_field_langevin",
    "propagation_of_chaos",
]

#: A run stops as diverged once any |parameter| exceeds this (or is not finite).
BLOWUP_LIMIT = 1e6
#: Steps between two (host-synchronising) divergence checks.
_CHECK_EVERY = 50


class LangevinBlowUp(DivergenceError):
    """A mean-field Langevin run diverged; ``step`` is the first step past the limit.

    A :class:`specdyn.sim.DivergenceError`, like the other engines' errors.
    """

    def __init__(self, message: str, step: int) -> None:
        super().__init__(message)
        self.step = step


@dataclass(frozen=True)
class LangevinRun:
    """Checkpoints of one mean-field Langevin run (host numpy, float64).

    Attributes
    ----------
    steps, times
        ``(C,)`` checkpoint step numbers and times ``t = step * eta``.
    particles
        ``(C, N, d+1)`` particle states, rows ``[a, w_1..w_d]``.
    loss
        ``(steps+1,)`` data term ``(1/2M) sum_m (f_N(x_m) - y_m)^2`` of the
        state *before* each step (entry ``k`` is the state after ``k`` steps).
    penalty
        ``(C,)`` weight-decay term ``(lambda'/2) (1/N) sum_i ||theta_i||^2``.
    x, y
        The training inputs ``(M, d)`` and labels ``(M,)`` the run used.
    meta
        eta, temperature, weight_decay, N, d, n (None for the population),
        seed, activation, dtype, device.
    """

    steps: np.ndarray
    times: np.ndarray
    particles: np.ndarray
    loss: np.ndarray
    penalty: np.ndarray
    x: np.ndarray
    y: np.ndarray
    meta: dict[str, Any]

    @property
    def final(self) -> np.ndarray:
        """Particles at the last checkpoint, ``(N, d+1)``."""
        return self.particles[-1]


@dataclass(frozen=True)
class ChaosRun:
    """Synchronous coupling of ``N``-particle systems to mean-field copies.

    Attributes
    ----------
    N
        ``(K,)`` system sizes.
    steps, times
        ``(C,)`` checkpoint steps and times ``t = step * eta``.
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
        ``(steps+1,)`` data term of the reference population.
    reference_N
        Size of the reference population.
    reference_particles
        ``(C, reference_N, d+1)`` reference states (``None`` unless kept).
    system_particles
        For each ``N``, ``(C, N, d+1)`` states of its first replica (``None``
        unless kept).
    x, y
        The data all systems were trained on.
    meta
        The run's parameters.
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
    meta: dict[str, Any]


def _as_host(a: Any) -> np.ndarray:
    if hasattr(a, "detach"):
        a = a.detach().cpu().numpy()
    return np.array(a, dtype=np.float64)  # a copy: torch.from_numpy needs writable memory


# --------------------------------------------------------------------------------------
# inputs

def _declared_dim(target: Any) -> int | None:
    for attr in ("d", "dim", "input_dim"):
        val = getattr(target, attr, None)
        if isinstance(val, (int, np.integer)) and not isinstance(val, bool):
            return int(val)
    direction = getattr(target, "direction", None)
    if direction is not None:
        return int(np.asarray(direction).shape[-1])
    return None


def _target_values(target: Any, x: np.ndarray) -> np.ndarray:
    """``target(x)`` as a finite float64 ``(M,)`` array; errors name ``target``."""
    d = x.shape[1]
    if not callable(target):
        raise ValueError(f"target must be a callable of x with shape (M, d), got {target!r}")
    dim = _declared_dim(target)
    if dim is not None and dim != d:
        raise ValueError(f"target takes inputs of dimension {dim}, but d = {d}")
    try:
        y = _as_host(target(x.copy()))
    except (IndexError, ValueError, TypeError, RuntimeError) as err:
        raise ValueError(f"target cannot be evaluated on inputs of dimension d = {d}: {err}"
                         ) from None
    if y.shape == (len(x), 1):
        y = y[:, 0]
    if y.shape != (len(x),):
        raise ValueError(f"target must return one value per input row, shape ({len(x)},), "
                         f"got {y.shape}")
    if not np.isfinite(y).all():
        raise ValueError("target must be finite at the sampled inputs")
    return y


def _seeds(seed: int, k: int) -> list[int]:
    """``k`` independent 63-bit seeds derived from ``seed`` (data, init, noise, ...)."""
    state = np.random.SeedSequence(seed).generate_state(k, dtype=np.uint64)
    return [int(s) & ((1 << 63) - 1) for s in state]


def _make_data(target: Any, d: int, n: int | None, population_size: int, label_noise: float,
               seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    m = population_size if n is None else n
    x = rng.standard_normal((m, d))
    y = _target_values(target, x)
    if label_noise > 0:
        y = y + label_noise * rng.standard_normal(m)
    return x, y


def _initial_particles(init: Any, N: int, d: int, init_scale: tuple[float, float],
                       seed: int) -> np.ndarray:
    """``init="gaussian"``: ``a ~ N(0, s_a^2)``, ``w ~ N(0, s_w^2 I_d / d)``; or an array."""
    if isinstance(init, str):
        v.choice("init", init, ("gaussian",))
        s_a, s_w = init_scale
        rng = np.random.default_rng(seed)
        theta = rng.standard_normal((N, d + 1))
        theta[:, 0] *= s_a
        theta[:, 1:] *= s_w / math.sqrt(d)
        return theta
    theta = v.real_array("init", _as_host(init))
    if theta.shape != (N, d + 1):
        raise ValueError(f"init must be 'gaussian' or an array of shape (N, d+1) = "
                         f"{(N, d + 1)}, got {theta.shape}")
    return theta.copy()


def _checkpoint_steps(checkpoints: int | Sequence[int], steps: int) -> np.ndarray:
    if isinstance(checkpoints, (int, np.integer)) and not isinstance(checkpoints, bool):
        c = v.positive_int("checkpoints", checkpoints, minimum=2)
        return np.unique(np.rint(np.linspace(0, steps, c)).astype(np.int64))
    arr = np.unique(np.asarray(checkpoints, dtype=np.int64))
    if arr.size == 0 or arr[0] < 0 or arr[-1] > steps:
        raise ValueError(f"checkpoints must be step numbers in [0, steps={steps}], got "
                         f"{np.asarray(checkpoints).tolist()}")
    return arr


def _validate_common(eta: float, temperature: float, weight_decay: float, steps: int,
                     d: int, n: int | None, population_size: int, label_noise: float,
                     init_scale: tuple[float, float]) -> tuple[float, float, float, int, int,
                                                                int | None, int, float]:
    eta = v.positive("eta", eta)
    temperature = v.nonnegative("temperature", temperature)
    weight_decay = v.nonnegative("weight_decay", weight_decay)
    steps = v.positive_int("steps", steps, minimum=0)
    d = v.positive_int("d", d)
    n = None if n is None else v.positive_int("n", n)
    population_size = v.positive_int("population_size", population_size)
    label_noise = v.nonnegative("label_noise", label_noise)
    if len(init_scale) != 2:
        raise ValueError(f"init_scale must be a pair (s_a, s_w), got {init_scale!r}")
    v.nonnegative("init_scale[0]", init_scale[0])
    v.nonnegative("init_scale[1]", init_scale[1])
    return eta, temperature, weight_decay, steps, d, n, population_size, label_noise


# --------------------------------------------------------------------------------------
# the engine: groups of particles, each driven by the measure of one group

def _tanh_chain(s: Tensor, r: Tensor) -> Tensor:
    # r * (1 - s^2) in one fused pass (autograd's own tanh backward kernel)
    return _torch().ops.aten.tanh_backward(r, s)


# r * sigma'(z) from s = sigma(z) for built-ins where that saves passes over (M, P)
_CHAIN_FROM_VALUE = {"tanh": _tanh_chain, "tanh-shift": _tanh_chain}


@dataclass(frozen=True)
class _Block:
    """``R`` groups of ``N`` consecutive particles; ``driver`` is the block (with
    ``R == 1``) whose measure drives them, ``None`` when each group drives itself."""

    R: int
    N: int
    driver: int | None = None


class _Engine:
    """Particles in blocks of equal-size groups; one step costs one activation pass.

    Groups of a block are stored consecutively, so their functions and
    gradients are batched contractions over an ``(M, R, N)`` view (no gather).
    """

    def __init__(self, act: Activation, x: Tensor, y: Tensor, blocks: Sequence[_Block],
                 eta: float, temperature: float, weight_decay: float) -> None:
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
        self.eta, self.wd = eta, weight_decay
        self.noise_scale = math.sqrt(2.0 * temperature * eta)
        registered = ACTIVATIONS.get(act.name)
        self.chain_from_value = (_CHAIN_FROM_VALUE.get(act.name)
                                 if registered is act else None)

    def _rows(self, i: int) -> slice:
        return slice(int(self.starts[i]), int(self.starts[i + 1]))

    def _block_forward(self, theta: Tensor, i: int) -> tuple[Tensor, Tensor, Tensor]:
        b = self.blocks[i]
        th = theta[self._rows(i)]
        z = self.x @ th[:, 1:].T
        s = self.act.fn(z)
        if b.R == 1:
            f = (s @ th[:, :1]) / b.N
        else:
            f = self._einsum("mrn,rn->mr", s.view(self.M, b.R, b.N),
                             th[:, 0].view(b.R, b.N)) / b.N
        return f, z, s

    def functions(self, theta: Tensor) -> list[Tensor]:
        """Each block's group functions on the data, ``(M, R)`` per block."""
        return [self._block_forward(theta, i)[0] for i in range(len(self.blocks))]

    def step(self, theta: Tensor, xi: Tensor | None) -> tuple[Tensor, list[Tensor]]:
        """One noisy GD step; returns ``(new theta, per-block losses (R,) before it)``."""
        fwd = [self._block_forward(theta, i) for i in range(len(self.blocks))]
        res = [f - self.y[:, None] for f, _, _ in fwd]
        grad = theta * self.wd
        for i, b in enumerate(self.blocks):
            _, z, s = fwd[i]
            r = res[i if b.driver is None else b.driver]  # (M, R) or (M, 1)
            rows = self._rows(i)
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
        new = theta - self.eta * grad
        if xi is not None and self.noise_scale > 0:
            new = new + self.noise_scale * xi
        return new, [0.5 * (r * r).mean(0) for r in res]


def _assignment_w2(sys: np.ndarray, cop: np.ndarray) -> float:
    """Mean over replicas ``(R, N, D)`` of the exact ``W2^2`` of equal-size uniform measures."""
    from scipy.optimize import linear_sum_assignment

    out = 0.0
    for a, b in zip(sys, cop, strict=True):
        cost = ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)
        rows, cols = linear_sum_assignment(cost)
        out += float(cost[rows, cols].mean())
    return out / len(sys)


def _blowup_message(step: int, eta: float, what: str) -> str:
    return (f"mean-field Langevin run blew up at step {step} (t = {step * eta:g}): {what}. "
            f"Reduce eta (try eta = {eta / 4:g}) or increase weight_decay; a large "
            f"temperature or an unbounded activation (quadratic, relu) with a large "
            f"target also makes particles escape.")


def _check(theta_max: Tensor, upto: int, eta: float) -> None:
    """Raise at the first step (< ``upto``) whose max |theta| is non-finite or too large."""
    torch = _torch()
    tm = theta_max[:upto]
    bad = ~torch.isfinite(tm) | (tm > BLOWUP_LIMIT)
    if bool(bad.any()):
        k = int(torch.nonzero(bad)[0, 0])
        val = float(tm[k])
        what = ("a parameter became non-finite" if not math.isfinite(val)
                else f"max |theta| = {val:.3g} exceeds {BLOWUP_LIMIT:g}")
        raise LangevinBlowUp(_blowup_message(k, eta, what), k)


def _noise_fn(noise: NoiseSource, N: int, d: int, steps: int, gen: Any, dtype: Any,
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
    if not bool(torch.isfinite(arr).all()):
        raise ValueError("noise must be finite")
    return lambda k: arr[k]


def mean_field_langevin(
    activation: str | Activation,
    target: Target,
    N: int,
    d: int,
    n: int | None = None,
    *,
    eta: float = 0.05,
    temperature: float = 0.02,
    weight_decay: float = 0.05,
    steps: int = 1000,
    seed: int = 0,
    noise: NoiseSource = None,
    checkpoints: int | Sequence[int] = 11,
    init: str | ArrayLike = "gaussian",
    init_scale: tuple[float, float] = (1.0, 1.0),
    population_size: int = 4096,
    label_noise: float = 0.0,
    data: tuple[ArrayLike, ArrayLike] | None = None,
    dtype: Any = None,
    device: Any = None,
    progress: bool = False,
) -> LangevinRun:
    """Noisy GD of ``N`` particles in the mean-field (muP) scaling.

    Parameters
    ----------
    activation
        A name of :data:`specdyn.models.activations.ACTIVATIONS` or an ``Activation``.
    target
        ``f*``: a callable mapping a numpy ``(M, d)`` array to ``(M,)`` (e.g. a
        :class:`specdyn.data.hermite.HermiteTarget` or an :class:`specdyn.models.AtomTeacher`).
    N, d
        Number of particles (>= 1) and input dimension (>= 1).
    n
        Training-set size; ``None`` for the population, approximated by a fixed
        sample of ``population_size`` inputs drawn once.
    eta
        Step size (> 0); time ``t = step * eta``. The per-particle learning
        rate of the network loss is ``eta * N``.
    temperature
        ``tau >= 0``: noise ``sqrt(2 tau eta) xi`` per step (0 is plain GD).
    weight_decay
        ``lambda' >= 0`` of the penalty ``(lambda'/2) ||theta||^2``.
    steps, seed
        Number of steps (>= 0) and the seed of three independent streams: data,
        initial particles and noise (so the data do not depend on ``N``).
    noise
        Standard normal increments ``xi`` (unscaled): ``None`` draws them; a
        callable ``noise(step) -> (N, d+1)``; or an array ``(steps, N, d+1)``.
        Passing the same increments to two systems couples them synchronously.
    checkpoints
        Number of evenly spaced checkpoints (>= 2, first and last included) or
        explicit step numbers in ``[0, steps]``.
    init, init_scale
        ``"gaussian"``: ``a ~ N(0, s_a^2)``, ``w ~ N(0, s_w^2 I_d / d)`` with
        ``(s_a, s_w) = init_scale``; or an explicit ``(N, d+1)`` array.
    label_noise
        Standard deviation of Gaussian noise added to the labels.
    data
        Optional explicit ``(x, y)`` training data (overrides ``n``, ``target``
        is then only checked for its dimension).
    dtype, device
        Torch dtype (float64 default) and device (CUDA when present).
    progress
        Show a progress bar.

    Returns
    -------
    LangevinRun

    Raises
    ------
    ValueError
        On bad input, before any work.
    LangevinBlowUp
        When a parameter becomes non-finite or exceeds :data:`BLOWUP_LIMIT`
        (message gives the step and a suggestion).
    """
    torch = _torch()
    act = get_activation(activation)
    N = v.positive_int("N", N)
    eta, temperature, weight_decay, steps, d, n, population_size, label_noise = (
        _validate_common(eta, temperature, weight_decay, steps, d, n, population_size,
                         label_noise, init_scale))
    ckpt = _checkpoint_steps(checkpoints, steps)
    s_data, s_init, s_noise = _seeds(seed, 3)
    if data is None:
        x_np, y_np = _make_data(target, d, n, population_size, label_noise, s_data)
    else:
        x_np = v.real_array("data[0]", data[0])
        y_np = v.real_array("data[1]", data[1])
        if x_np.ndim != 2 or x_np.shape[1] != d or y_np.shape != (x_np.shape[0],):
            raise ValueError(f"data must be (x (M, d={d}), y (M,)), got {x_np.shape}, "
                             f"{y_np.shape}")
        _target_values(target, x_np[:2])
        n = x_np.shape[0]
    theta0 = _initial_particles(init, N, d, init_scale, s_init)
    dev = resolve_device(device)
    dt = resolve_dtype(dtype)
    gen = torch.Generator(device=dev).manual_seed(s_noise)
    draw = _noise_fn(noise, N, d, steps, gen, dt, dev)

    x = torch.as_tensor(x_np, dtype=dt, device=dev)
    y = torch.as_tensor(y_np, dtype=dt, device=dev)
    engine = _Engine(act, x, y, [_Block(1, N)], eta, temperature, weight_decay)
    theta = torch.as_tensor(theta0, dtype=dt, device=dev)
    loss = torch.empty(steps + 1, dtype=dt, device=dev)
    theta_max = torch.empty(steps + 1, dtype=dt, device=dev)
    saved: list[np.ndarray] = []
    penalty: list[float] = []
    want = set(ckpt.tolist())
    use_noise = temperature > 0
    for k in _progress(range(steps + 1), total=steps + 1, desc="langevin", enabled=progress):
        theta_max[k] = theta.abs().max()
        if k in want:
            _check(theta_max, k + 1, eta)
            saved.append(theta.detach().cpu().numpy().astype(np.float64))
            penalty.append(0.5 * weight_decay * float((theta * theta).sum(1).mean()))
        if k == steps:
            loss[k] = 0.5 * (engine.functions(theta)[0][:, 0] - y).pow(2).mean()
            break
        theta, lk = engine.step(theta, draw(k) if use_noise else None)
        loss[k] = lk[0][0]
        if (k + 1) % _CHECK_EVERY == 0:
            _check(theta_max, k + 1, eta)
    _check(theta_max, steps + 1, eta)
    loss_np = loss.cpu().numpy().astype(np.float64)
    if not np.isfinite(loss_np).all():
        k = int(np.flatnonzero(~np.isfinite(loss_np))[0])
        raise LangevinBlowUp(_blowup_message(k, eta, "the loss became non-finite"), k)
    meta = {"engine": "mean_field_langevin", "activation": act.name, "N": N, "d": d, "n": n,
            "population_size": population_size if n is None else None, "eta": eta,
            "temperature": temperature, "weight_decay": weight_decay, "steps": steps,
            "seed": seed, "label_noise": label_noise, "init_scale": tuple(init_scale),
            "dtype": str(dt), "device": str(dev)}
    return LangevinRun(steps=ckpt, times=ckpt * eta, particles=np.stack(saved), loss=loss_np,
                       penalty=np.asarray(penalty), x=x_np, y=y_np, meta=meta)


def propagation_of_chaos(
    activation: str | Activation,
    target: Target,
    N_values: Sequence[int],
    d: int,
    n: int | None = 400,
    *,
    eta: float = 0.05,
    temperature: float = 0.02,
    weight_decay: float = 0.05,
    steps: int = 200,
    seed: int = 0,
    reference_N: int = 8000,
    replicas: int = 1,
    checkpoints: int | Sequence[int] = 11,
    init_scale: tuple[float, float] = (1.0, 1.0),
    population_size: int = 4096,
    label_noise: float = 0.0,
    keep_reference: bool = False,
    keep_systems: bool = False,
    w2: bool = False,
    dtype: Any = None,
    device: Any = None,
    progress: bool = False,
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

    Other parameters are those of :func:`mean_field_langevin`. Returns a
    :class:`ChaosRun`.
    """
    torch = _torch()
    act = get_activation(activation)
    Ns = sorted({v.positive_int("N_values", N) for N in N_values})
    if not Ns:
        raise ValueError("N_values must list at least one system size >= 1")
    reference_N = v.positive_int("reference_N", reference_N)
    replicas = v.positive_int("replicas", replicas)
    eta, temperature, weight_decay, steps, d, n, population_size, label_noise = (
        _validate_common(eta, temperature, weight_decay, steps, d, n, population_size,
                         label_noise, init_scale))
    ckpt = _checkpoint_steps(checkpoints, steps)
    s_data, s_init_ref, s_init, s_noise_ref, s_noise = _seeds(seed, 5)
    x_np, y_np = _make_data(target, d, n, population_size, label_noise, s_data)
    n_max = max(Ns) * replicas  # size of the pool of copies
    ref0 = _initial_particles("gaussian", reference_N, d, init_scale, s_init_ref)
    sys0 = _initial_particles("gaussian", n_max, d, init_scale, s_init)
    dev = resolve_device(device)
    dt = resolve_dtype(dtype)
    g_ref = torch.Generator(device=dev).manual_seed(s_noise_ref)
    g_sys = torch.Generator(device=dev).manual_seed(s_noise)

    # block 0: reference; block 1: the pool of copies (driven by block 0); block 2+i:
    # R_i = n_max / N_i self-driven systems of N_i particles, replica j starting from (and
    # sharing the noise of) copies j N_i .. (j+1) N_i - 1
    reps = [n_max // N for N in Ns]
    blocks = [_Block(1, reference_N), _Block(1, n_max, driver=0),
              *(_Block(R, N) for R, N in zip(reps, Ns, strict=True))]
    x = torch.as_tensor(x_np, dtype=dt, device=dev)
    y = torch.as_tensor(y_np, dtype=dt, device=dev)
    engine = _Engine(act, x, y, blocks, eta, temperature, weight_decay)
    theta = torch.as_tensor(np.concatenate([ref0, sys0, *(sys0[:R * N] for R, N in
                                                          zip(reps, Ns, strict=True))]),
                            dtype=dt, device=dev)
    ref_loss = torch.empty(steps + 1, dtype=dt, device=dev)
    theta_max = torch.empty(steps + 1, dtype=dt, device=dev)
    dist = np.zeros((len(Ns), len(ckpt)))
    w2d = np.zeros((len(Ns), len(ckpt)))
    gap = np.zeros((len(Ns), len(ckpt)))
    ref_saved: list[np.ndarray] = []
    sys_saved: list[list[np.ndarray]] = [[] for _ in Ns]
    want = {int(s): j for j, s in enumerate(ckpt)}
    use_noise = temperature > 0
    ref_rows, copy_rows = engine._rows(0), engine._rows(1)
    for k in _progress(range(steps + 1), total=steps + 1, desc="chaos", enabled=progress):
        theta_max[k] = theta.abs().max()
        if k in want:
            _check(theta_max, k + 1, eta)
            j = want[k]
            fs = engine.functions(theta)
            copies = theta[copy_rows]
            for i, (R, N) in enumerate(zip(reps, Ns, strict=True)):
                diff = theta[engine._rows(2 + i)] - copies[:R * N]
                # mean over replicas of (1/N) sum_i ||.||^2 == mean over all R N particles
                dist[i, j] = float((diff * diff).sum(1).mean())
                gap[i, j] = float((fs[2 + i] - fs[0]).pow(2).mean())
                if w2:
                    w2d[i, j] = _assignment_w2(
                        theta[engine._rows(2 + i)].cpu().numpy().reshape(R, N, d + 1),
                        copies[:R * N].cpu().numpy().reshape(R, N, d + 1))
            if keep_reference:
                ref_saved.append(theta[ref_rows].cpu().numpy().astype(np.float64))
            if keep_systems:
                for i, N in enumerate(Ns):
                    rows = engine._rows(2 + i)
                    sys_saved[i].append(theta[rows][:N].cpu().numpy().astype(np.float64))
        if k == steps:
            ref_loss[k] = 0.5 * (engine.functions(theta)[0][:, 0] - y).pow(2).mean()
            break
        xi = None
        if use_noise:
            xr = torch.randn((reference_N, d + 1), generator=g_ref, dtype=dt, device=dev)
            xs = torch.randn((n_max, d + 1), generator=g_sys, dtype=dt, device=dev)
            xi = torch.cat([xr, xs, *(xs[:R * N] for R, N in zip(reps, Ns, strict=True))])
        theta, lk = engine.step(theta, xi)
        ref_loss[k] = lk[0][0]
        if (k + 1) % _CHECK_EVERY == 0:
            _check(theta_max, k + 1, eta)
    _check(theta_max, steps + 1, eta)
    meta = {"engine": "propagation_of_chaos", "activation": act.name, "d": d, "n": n,
            "eta": eta, "temperature": temperature, "weight_decay": weight_decay,
            "steps": steps, "seed": seed, "reference_N": reference_N,
            "replicas": reps,
            "population_size": population_size if n is None else None,
            "label_noise": label_noise, "dtype": str(dt), "device": str(dev)}
    return ChaosRun(N=np.asarray(Ns), steps=ckpt, times=ckpt * eta, sq_distance=dist,
                    w2_distance=w2d if w2 else None, function_gap=gap,
                    reference_loss=ref_loss.cpu().numpy().astype(np.float64),
                    reference_N=reference_N,
                    reference_particles=np.stack(ref_saved) if keep_reference else None,
                    system_particles=[np.stack(s) for s in sys_saved] if keep_systems else None,
                    x=x_np, y=y_np, meta=meta)
