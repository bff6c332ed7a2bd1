"""Finite-width training: every engine on one run protocol (:mod:`specdyn.sim.protocol`).

Every entry point is ``config -> (engine, recorder) ->`` :func:`run`: its typed keywords
become a checked config dataclass (declared constraints, :mod:`specdyn.sim.config`); a
:class:`Setup` builds the engine (an ``init``/``sample``/``step`` triple on values, with its
own defaults and divergence watch) and the recorder (:class:`SpectrumRecorder`: named
observables, plain functions of the state measured by :mod:`specdyn.measure`) from the
run's inputs (:class:`RunInputs`: the seed, dtype, device and every stream, resolved once by
:func:`run` from the :class:`RunOptions`), and the one loop :func:`run` drives them:
:func:`train_linear` (:class:`LinearConfig`; :class:`GramEngine`, :class:`WeightEngine`),
:func:`train_weight_decay` (:class:`WeightDecayConfig`; :class:`WeightDecayEngine`),
:func:`train_two_layer` (:class:`TwoLayerConfig`; :class:`TwoLayerEngine`),
:func:`train_deep_network` (:class:`DeepNetworkConfig`; :class:`DeepNetworkEngine`),
:func:`train_linear_student` (:class:`LinearStudentConfig`; :class:`LinearStudentEngine`),
:func:`train_deep_linear` (:class:`DeepLinearConfig`; :class:`DeepLinearEngine`),
:func:`mean_field_langevin` and :func:`propagation_of_chaos` (:class:`LangevinConfig`,
:class:`ChaosConfig`; :class:`ParticleEngine`), :func:`gd_steps` and
:func:`gd_steps_row` (:class:`TwoStepConfig`; :class:`TwoStepEngine`). The registries
(:func:`entry_points`, :func:`engines`; :mod:`specdyn.sim.registry`) list them. A concept
that several parameters share is one small checked object: the particle runs take their
update as one :class:`LangevinUpdate` (``dt``, temperature, weight decay, steps), both
linear students how they see their teacher as one :class:`Sampling` (method, ``M``,
``B``, label noise), and the deep one what it records as one
:class:`DeepLinearRecording`.
Sizes follow the vocabulary of ``docs/concepts.md``: ``D`` inputs, ``P``
outputs, ``N`` width, ``M`` samples, ``B`` batch, ``dt`` flow step, ``lr``
plain step size.
"""

from specdyn.sim.chaos import ChaosConfig, ChaosRun, propagation_of_chaos
from specdyn.sim.config import SimConfig
from specdyn.sim.deep_linear import (
    DeepLinearConfig,
    DeepLinearRecording,
    DeepLinearRun,
    escape_step,
    train_deep_linear,
)
from specdyn.sim.deep_linear_engine import (
    DeepLinearEngine,
    DeepLinearScaling,
    DeepLinearState,
    scaling,
)
from specdyn.sim.deep_network import (
    DeepNetworkConfig,
    layer_scales,
    preactivation_exponents,
    train_deep_network,
)
from specdyn.sim.deep_network_engine import DeepNetworkEngine, DeepNetworkState, LayerScales
from specdyn.sim.gram import GramEngine, GramState
from specdyn.sim.inputs import RunInputs, Setup
from specdyn.sim.langevin import LangevinConfig, LangevinRun, mean_field_langevin
from specdyn.sim.linear import LinearConfig, WeightEngine, WeightState, train_linear
from specdyn.sim.linear_student import (
    LinearStudentConfig,
    LinearStudentRun,
    Sampling,
    rank_one_teacher,
    train_linear_student,
)
from specdyn.sim.linear_student_engine import (
    LinearStudentEngine,
    LinearStudentState,
    StudentData,
)
from specdyn.sim.loop import run
from specdyn.sim.options import RunKeywords
from specdyn.sim.overlay import theory_agreement, theory_spectra
from specdyn.sim.parameterization import (
    PARAMETERIZATIONS,
    Parameterization,
    get_parameterization,
)
from specdyn.sim.particles import Block, LangevinUpdate, ParticleEngine, ParticleState
from specdyn.sim.protocol import (
    META_KEYS,
    DerivedSeed,
    DivergenceError,
    Engine,
    EngineDefaults,
    Outcome,
    Record,
    Recorder,
    RunOptions,
    StreamLayout,
    Streams,
    derive_seed,
    record_meta,
    seed_streams,
)
from specdyn.sim.recording import (
    Observable,
    PerState,
    Recorded,
    SpectrumRecorder,
    eigenvalues,
    gram_spectrum_of,
    low_rank_eigenvalues,
)
from specdyn.sim.registry import EngineEntry, EntryPoint, engines, entry_points
from specdyn.sim.system import System
from specdyn.sim.trajectory import DIAGONALS, Trajectory, TrajectoryRows
from specdyn.sim.two_layer import TwoLayerConfig, train_two_layer
from specdyn.sim.two_layer_engine import TwoLayerEngine, TwoLayerState, init_weights
from specdyn.sim.two_step import (
    TwoStepConfig,
    TwoStepEngine,
    TwoStepGradient,
    TwoStepResult,
    TwoStepState,
    activation_mu1,
    gd_steps,
    gd_steps_row,
    one_step_spike_strength,
)
from specdyn.sim.weight_decay import (
    WeightDecayConfig,
    WeightDecayEngine,
    WeightDecayState,
    train_weight_decay,
)

__all__ = [
    "Block",
    "ChaosConfig",
    "ChaosRun",
    "DIAGONALS",
    "DeepLinearConfig",
    "DeepLinearEngine",
    "DeepLinearRecording",
    "DeepLinearRun",
    "DeepLinearScaling",
    "DeepLinearState",
    "DeepNetworkConfig",
    "DeepNetworkEngine",
    "DeepNetworkState",
    "DerivedSeed",
    "DivergenceError",
    "Engine",
    "EngineDefaults",
    "EngineEntry",
    "EntryPoint",
    "GramEngine",
    "GramState",
    "LangevinConfig",
    "LangevinRun",
    "LangevinUpdate",
    "LayerScales",
    "LinearConfig",
    "LinearStudentConfig",
    "LinearStudentEngine",
    "LinearStudentRun",
    "LinearStudentState",
    "META_KEYS",
    "Observable",
    "Outcome",
    "PARAMETERIZATIONS",
    "Parameterization",
    "ParticleEngine",
    "ParticleState",
    "PerState",
    "Record",
    "Recorded",
    "Recorder",
    "RunInputs",
    "RunKeywords",
    "RunOptions",
    "Sampling",
    "Setup",
    "SimConfig",
    "SpectrumRecorder",
    "StreamLayout",
    "Streams",
    "StudentData",
    "System",
    "Trajectory",
    "TrajectoryRows",
    "TwoLayerConfig",
    "TwoLayerEngine",
    "TwoLayerState",
    "TwoStepConfig",
    "TwoStepEngine",
    "TwoStepGradient",
    "TwoStepResult",
    "TwoStepState",
    "WeightDecayConfig",
    "WeightDecayEngine",
    "WeightDecayState",
    "WeightEngine",
    "WeightState",
    "activation_mu1",
    "derive_seed",
    "eigenvalues",
    "engines",
    "entry_points",
    "escape_step",
    "gd_steps",
    "gd_steps_row",
    "get_parameterization",
    "gram_spectrum_of",
    "init_weights",
    "layer_scales",
    "low_rank_eigenvalues",
    "mean_field_langevin",
    "one_step_spike_strength",
    "preactivation_exponents",
    "propagation_of_chaos",
    "rank_one_teacher",
    "record_meta",
    "run",
    "scaling",
    "seed_streams",
    "theory_agreement",
    "theory_spectra",
    "train_deep_linear",
    "train_deep_network",
    "train_linear",
    "train_linear_student",
    "train_two_layer",
    "train_weight_decay",
]
