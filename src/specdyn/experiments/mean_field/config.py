"""The mean-field experiments' configs: propagation-of-chaos, sparse-atoms and error-budget,
their declared constraints and ``--full`` sizes, and the notes' default target.

Config fields follow ``docs/concepts.md``: ``D`` inputs (the notes' ``d``), ``M``
training samples (``n``), ``N`` particles, ``dt`` the Langevin flow step (``eta``).
The defaults are the quick size, :func:`full_chaos`, :func:`full_atoms` and
:func:`full_budget` the paper-sized one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from specdyn import _validate as v
from specdyn.data.hermite import HermiteTarget, hermite_coefficients

if TYPE_CHECKING:
    from specdyn.sim import LangevinUpdate

_ACTS = ("linear", "relu", "tanh", "gelu", "erf", "quadratic", "tanh-shift")


def notes_target(degree: int = 40) -> HermiteTarget:
    """``f*(x) = tanh(2 x1) + 0.5 He2(x1)`` as a :class:`~specdyn.data.hermite.HermiteTarget`.

    Coefficients in the orthonormal basis ``h_k = He_k / sqrt(k!)`` up to
    ``degree`` (``He2 = sqrt(2) h2``); the exact link is kept as ``fn``.
    """
    c = hermite_coefficients(lambda z: np.tanh(2 * z), degree)
    c[2] += 0.5 * math.sqrt(2.0)

    def fn(z: np.ndarray) -> np.ndarray:
        return np.tanh(2 * z) + 0.5 * (z * z - 1)

    return HermiteTarget(c, fn=fn, name="tanh(2z) + 0.5 He2(z)")


@dataclass(frozen=True)
@v.constrained_fields(activation=v.Choice(*_ACTS), D=v.SIZE, dt=v.POSITIVE,
                      temperature=v.NONNEGATIVE, weight_decay=v.NONNEGATIVE, steps=v.SIZE)
class NotesLangevin:
    """The mean-field Langevin setting of the related notes (section 3), the one home of
    its physics: ``D = 5`` inputs, Langevin step ``dt = 0.05``, temperature ``0.02`` and
    weight decay ``0.05``; every mean-field config inherits these fields (a subclass sets
    its own defaults where its experiment needs another setting, as ``sparse-atoms``).
    """

    activation: str = "tanh-shift"
    D: int = 5
    dt: float = 0.05
    temperature: float = 0.02
    weight_decay: float = 0.05
    steps: int = 60

    def langevin_update(self, steps: int | None = None) -> LangevinUpdate:
        """The particle runs' update of this setting: ``dt``, ``temperature``,
        ``weight_decay`` and ``steps`` (this config's, unless given)."""
        from specdyn.sim import LangevinUpdate

        return LangevinUpdate(dt=self.dt, temperature=self.temperature,
                              weight_decay=self.weight_decay,
                              steps=self.steps if steps is None else steps)


# --------------------------------------------------------------------------------------
# propagation of chaos

@dataclass(frozen=True)
@v.constrained_fields(M=v.SIZE,
                      N_values=v.Tuple(v.SIZE, min_len=2, why="two sizes at least, to fit a slope"),
                      reference_N=v.SIZE, replicas=v.SIZE,
                      seeds=v.Tuple(v.Int(strict=True), min_len=1), even_checkpoints=v.Int(2))
class ChaosConfig(NotesLangevin):
    """Coupled distance against N; defaults are the quick version (~30 s on one core).

    ``even_checkpoints`` is a count of evenly spaced steps from 0 to ``steps``
    (``Schedule.even``), to which the run adds step 1 (the first-step level claim); a plain
    ``checkpoints`` key is a log-spaced count everywhere.
    """

    M: int = 100
    N_values: tuple[int, ...] = (25, 50, 100, 200, 400, 800)
    reference_N: int = 4000
    replicas: int = 4
    seeds: tuple[int, ...] = (0, 1, 2)
    even_checkpoints: int = 7


def full_chaos() -> ChaosConfig:
    """propagation-of-chaos at the paper's size (``--full``)."""
    return ChaosConfig(M=400, steps=400, reference_N=16000, replicas=4, seeds=(0, 1, 2, 3, 4),
                       N_values=(25, 50, 100, 200, 400, 800, 1600), even_checkpoints=11)

# --------------------------------------------------------------------------------------
# sparse atoms

@dataclass(frozen=True)
@v.constrained_fields(D=v.Int(3, why="a two-atom teacher and a weak third atom along e3"),
                      M=v.SIZE,
                      N=v.SIZE, teacher_a=v.Tuple(v.Real(), length=2), teacher_scale=v.POSITIVE,
                      weak_a=v.Real(),
                      threshold_deg=v.Real(0.0, 90.0, lo_open=True), seed=v.SEED,
                      even_checkpoints=v.Int(2))
class AtomsConfig(NotesLangevin):
    """Two-atom teacher ``a1 sigma(s e1 . x) + a2 sigma(s e2 . x)`` learnt at small temperature.

    A second run (the S* threshold claims) adds a weak third atom ``weak_a sigma(s e3 . x)``
    to the same teacher, same settings and seed.

    ``even_checkpoints`` is a count of evenly spaced steps from 0 to ``steps``
    (``Schedule.even``); a plain ``checkpoints`` key is a log-spaced count everywhere.
    ``M = 1600`` samples: at 400 the coefficient claims' sampling error left them on
    either side of their tolerance by the seed (``atoms.ATOMS_M_REVISED``). Not the
    notes' setting: ReLU, three inputs, a small temperature and a larger weight decay, so
    that the long-time measure is (nearly) atomic.
    """

    activation: str = "relu"
    D: int = 3
    M: int = 1600
    N: int = 200
    dt: float = 0.05
    temperature: float = 1e-4
    weight_decay: float = 0.1
    steps: int = 1000
    teacher_a: tuple[float, float] = (1.0, -1.0)
    teacher_scale: float = 1.0
    #: Coefficient of the weak third atom: below the lasso threshold (about
    #: 2 weight_decay here, :func:`~specdyn.theory.mean_field.lasso_threshold_coefficients`)
    weak_a: float = 0.1
    threshold_deg: float = 20.0
    seed: int = 0
    even_checkpoints: int = 11

    def teacher_atoms(self) -> np.ndarray:
        """``(2, D+1)`` rows ``[a_k, w_k]``: ``w_1 = s e1``, ``w_2 = s e2``."""
        atoms = np.zeros((2, self.D + 1))
        atoms[:, 0] = self.teacher_a
        atoms[0, 1] = atoms[1, 2] = self.teacher_scale
        return atoms

    def weak_teacher_atoms(self) -> np.ndarray:
        """``(3, D+1)``: :meth:`teacher_atoms` and the weak atom ``[weak_a, s e3]``."""
        weak = np.zeros((1, self.D + 1))
        weak[0, 0], weak[0, 3] = self.weak_a, self.teacher_scale
        return np.vstack([self.teacher_atoms(), weak])


def full_atoms() -> AtomsConfig:
    """sparse-atoms at the paper's size (``--full``)."""
    return AtomsConfig(D=5, N=1000, M=2000, steps=4000, even_checkpoints=21)


# --------------------------------------------------------------------------------------
# error budget

@dataclass(frozen=True)
@v.constrained_fields(N=v.SIZE, long_factor=v.Int(2),
                      M_values=v.Tuple(v.SIZE, min_len=1), statistical_seeds=v.SIZE,
                      population_size=v.SIZE,
                      M_test=v.SIZE, chaos_M=v.SIZE, chaos_N_values=v.Tuple(v.SIZE),
                      chaos_reference_N=v.SIZE, chaos_steps=v.SIZE, chaos_replicas=v.SIZE,
                      K_max=v.SIZE, hermite_degree=v.SIZE, seed=v.SEED,
                      init_scales=v.Tuple(v.POSITIVE, min_len=2,
                                          why="two init scales at least, to compare"),
                      init_M=v.SIZE, init_early_steps=v.Int(1, optional=True))
class BudgetConfig(NotesLangevin):
    """Error parts against M, t, N and K (quick defaults, ~30 s on one core).

    GELU by default: with no bias, every student misses much of the even
    ``He2`` part of the target; at ``t = 40`` GELU reaches a test error of
    about 0.30 against 0.46 for ``tanh-shift`` (E[f*^2] = 1.14).

    ``init_scales``: initial scales ``s_a = s_w`` of runs on ``init_M`` samples to
    ``t_end`` (the "no initialization-only residual" claims); their early test error is
    read after ``init_early_steps`` steps, ``t_early = init_early_steps dt`` (``None``: the
    budget's ``steps``). ``--full`` keeps the quick budget's time, 200 steps (t = 10): its
    own budget time, 50, is late enough that the init is already forgotten, and the claim
    would compare two noise-level spreads.

    ``statistical_seeds``: the statistical part is the mean over that many seeds (``seed``,
    ``seed + 1``, ...) of the test error on ``M`` samples: one seed's test error moves by
    about as much as the part itself at the larger ``M``.
    """

    activation: str = "gelu"
    steps: int = 200
    N: int = 200
    long_factor: int = 4
    M_values: tuple[int, ...] = (50, 100, 200, 400, 800)
    statistical_seeds: int = 3
    population_size: int = 2048
    M_test: int = 4000
    chaos_M: int = 100
    chaos_N_values: tuple[int, ...] = (25, 50, 100, 200, 400)
    chaos_reference_N: int = 2000
    chaos_steps: int = 60
    chaos_replicas: int = 2
    K_max: int = 8
    hermite_degree: int = 10
    seed: int = 0
    init_scales: tuple[float, ...] = (0.25, 1.0, 4.0)
    init_M: int = 400
    init_early_steps: int | None = None

    @property
    def early_steps(self) -> int:
        """The step of ``t_early``: ``init_early_steps``, or the budget's ``steps``."""
        return self.steps if self.init_early_steps is None else self.init_early_steps

    def __post_init__(self) -> None:
        super().__post_init__()  # type: ignore[misc]  # the inherited fields' checks
        long = self.long_factor * self.steps
        if self.init_early_steps is not None and not self.init_early_steps < long:
            raise ValueError(f"init_early_steps must be below t_end's step long_factor x "
                             f"steps = {long}, got {self.init_early_steps}")


def full_budget() -> BudgetConfig:
    """error-budget at the paper's size (``--full``)."""
    return BudgetConfig(N=1000, steps=1000, chaos_replicas=4,
                        M_values=(50, 100, 200, 400, 800, 1600, 3200),
                        population_size=8192, M_test=20000, chaos_M=400,
                        chaos_N_values=(25, 50, 100, 200, 400, 800), chaos_reference_N=8000,
                        chaos_steps=400,  # init_M stays 400: three more runs to t_end
                        init_early_steps=200)  # the quick budget's time, t = 10
