"""Finite-width training: every engine on one run protocol (:mod:`specdyn.sim.protocol`).

Entry points (thin wrappers over an engine's ``init``/``step`` pair, one
:class:`~specdyn.sim.protocol.RunOptions` and the one driver
:func:`~specdyn.sim.protocol.drive`; their parameters' allowed values are
declared with :func:`specdyn._validate.constrained`): :func:`train_linear`
(:class:`GramEngine`, :class:`WeightEngine`), :func:`train_two_layer`
(:class:`TwoLayerEngine`), :func:`train_linear_student`
(:class:`LinearStudentEngine`), :func:`train_deep_linear`
(:class:`DeepLinearEngine`), :func:`mean_field_langevin` and
:func:`propagation_of_chaos` (:class:`ParticleEngine`), :func:`gd_steps`
(:class:`TwoStepEngine`).
Sizes follow the vocabulary of ``docs/concepts.md``: ``D`` inputs, ``P``
outputs, ``N`` width, ``M`` samples, ``B`` batch, ``dt`` flow step, ``lr``
plain step size.
"""

from specdyn.sim.chaos import ChaosRun, propagation_of_chaos
from specdyn.sim.deep_linear import DeepLinearRun, escape_step, train_deep_linear
from specdyn.sim.deep_linear_engine import (
    DeepLinearEngine,
    DeepLinearScaling,
    DeepLinearState,
    scaling,
)
from specdyn.sim.gram import GramEngine, GramState
from specdyn.sim.langevin import LangevinRun, mean_field_langevin
from specdyn.sim.linear import WeightEngine, WeightState, train_linear
from specdyn.sim.linear_student import (
    LinearStudentEngine,
    LinearStudentRun,
    LinearStudentState,
    StudentData,
    rank_one_teacher,
    train_linear_student,
)
from specdyn.sim.overlay import theory_agreement, theory_spectra
from specdyn.sim.parameterization import (
    PARAMETERIZATIONS,
    Parameterization,
    get_parameterization,
)
from specdyn.sim.particles import Block, ParticleEngine, ParticleState
from specdyn.sim.protocol import (
    META_KEYS,
    DerivedSeed,
    DivergenceError,
    Engine,
    Record,
    RunOptions,
    derive_seed,
    drive,
    seed_streams,
)
from specdyn.sim.trajectory import Trajectory
from specdyn.sim.two_layer import train_two_layer
from specdyn.sim.two_layer_engine import TwoLayerEngine, TwoLayerState, init_weights
from specdyn.sim.two_step import (
    TwoStepEngine,
    TwoStepGradient,
    TwoStepResult,
    TwoStepState,
    activation_mu1,
    gd_steps,
    gd_steps_row,
    one_step_spike_strength,
)

__all__ = [
    "META_KEYS",
    "PARAMETERIZATIONS",
    "Block",
    "ChaosRun",
    "DeepLinearEngine",
    "DerivedSeed",
    "DeepLinearRun",
    "DeepLinearScaling",
    "DeepLinearState",
    "DivergenceError",
    "Engine",
    "GramEngine",
    "GramState",
    "LangevinRun",
    "LinearStudentEngine",
    "LinearStudentRun",
    "LinearStudentState",
    "Parameterization",
    "ParticleEngine",
    "ParticleState",
    "Record",
    "RunOptions",
    "StudentData",
    "Trajectory",
    "TwoLayerEngine",
    "TwoLayerState",
    "TwoStepEngine",
    "TwoStepGradient",
    "TwoStepResult",
    "TwoStepState",
    "WeightEngine",
    "WeightState",
    "activation_mu1",
    "derive_seed",
    "drive",
    "escape_step",
    "gd_steps",
    "gd_steps_row",
    "get_parameterization",
    "init_weights",
    "mean_field_langevin",
    "one_step_spike_strength",
    "propagation_of_chaos",
    "rank_one_teacher",
    "scaling",
    "seed_streams",
    "theory_agreement",
    "theory_spectra",
    "train_deep_linear",
    "train_linear",
    "train_linear_student",
    "train_two_layer",
]
