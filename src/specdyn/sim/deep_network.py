"""Deep networks with any activation: each hidden layer's preactivation spectrum in training.

The student has ``L`` hidden layers of width ``N`` (:mod:`specdyn.sim.deep_network_engine`),
trained by full-batch GD on ``M`` samples of a
:class:`~specdyn.data.teacher.PowerLawTeacher`, in the parameterisations of the two-layer
engine (:mod:`specdyn.sim.parameterization`; ``L = 1`` is that network):

============  ==========================  ===================================  ==========
matrix        init std                    multiplier                           rate
============  ==========================  ===================================  ==========
first         ``sigma_w w_std``           1                                    ``lr_w``
hidden        ``sigma_w`` (``standard``:  ``1/sqrt(N)`` (``standard``: 1)      ``lr_w``
              ``sigma_w / sqrt(N)``)
readout       ``sigma_a a_std``           ``s`` (the output scale)             ``lr_a``
============  ==========================  ===================================  ==========

A hidden layer takes the fan-in convention of its parameterisation's readout
(``standard`` puts ``1/sqrt(N)`` in the init, the others in a multiplier) and the first
layer's rate, so its preactivations stay O(1) at every width. The paper's Fig. 4
measurement, each hidden layer's preactivation exponent over training, is
:func:`preactivation_exponents` of the record.
"""

from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from specdyn import _validate as v
from specdyn.data.teacher import PowerLawTeacher
from specdyn.measure.exponents import fit_power_law
from specdyn.models.activations import ACTIVATIONS, Activation, get_activation
from specdyn.settings import Setting
from specdyn.sim.config import SimConfig
from specdyn.sim.deep_network_engine import DeepNetworkEngine, DeepNetworkState, LayerScales
from specdyn.sim.inputs import RunInputs, Setup
from specdyn.sim.loop import run
from specdyn.sim.options import RunOptions
from specdyn.sim.parameterization import PARAMETERIZATIONS, Parameterization, get_parameterization
from specdyn.sim.recording import Observable, PerState, SpectrumRecorder, gram_spectrum_of
from specdyn.sim.registry import entry_point
from specdyn.sim.system import SETTING, TEACHER, System
from specdyn.sim.trajectory import Trajectory

if TYPE_CHECKING:
    from typing import Unpack

    from specdyn.sim.options import RunKeywords

__all__ = ["DeepNetworkConfig", "layer_scales", "preactivation_exponents", "train_deep_network"]


@v.constrained(depth=v.SIZE, N=v.SIZE, sigma_w=v.NONNEGATIVE, sigma_a=v.NONNEGATIVE)
def layer_scales(par: Parameterization, *, depth: int, N: int, sigma_w: float,
                 sigma_a: float) -> LayerScales:
    """The :class:`~specdyn.sim.deep_network_engine.LayerScales` of a two-layer
    parameterisation (at width ``N``) for ``depth`` hidden layers (module table)."""
    if depth > 1 and par.name not in PARAMETERIZATIONS:
        raise ValueError(f"depth must be 1 for a custom Parameterization ({par.name!r} has no "
                         f"hidden-layer rule), got {depth}")
    fan = 1.0 / math.sqrt(N)
    hidden = (sigma_w * fan, 1.0) if par.name == "standard" else (sigma_w, fan)
    return LayerScales(init_std=(sigma_w * par.w_std, *[hidden[0]] * (depth - 1),
                                 sigma_a * par.a_std),
                       multipliers=(1.0, *[hidden[1]] * (depth - 1), par.output_scale),
                       lrs=(par.lr_w, *[par.lr_w] * (depth - 1), par.lr_a))


@dataclass(frozen=True, kw_only=True)
@v.constrained_fields(activation=v.Instance(Activation, names=ACTIVATIONS), depth=v.SIZE,
                      N=v.SIZE, M=v.SIZE, steps=v.SIZE, dt=v.POSITIVE,
                      parameterization=v.Instance(Parameterization, names=PARAMETERIZATIONS))
class DeepNetworkConfig(SimConfig):
    """How :func:`train_deep_network` trains: every parameter, once.

    Attributes
    ----------
    activation
        A name of :data:`specdyn.models.activations.ACTIVATIONS` (``"linear"`` is the
        identity) or an :class:`~specdyn.models.activations.Activation`.
    depth
        ``L >= 1`` hidden layers.
    N, M, steps
        Width, training samples, full-batch GD steps.
    dt
        Step size; time ``t = step * dt``.
    parameterization
        ``"mean-field"`` (the paper's), ``"mup"``, ``"ntk"``, ``"standard"`` (module
        table), or a :class:`~specdyn.sim.parameterization.Parameterization` for
        ``depth = 1``.
    options
        The run's options (:class:`~specdyn.sim.config.SimConfig`): ``checkpoints``
        ``None`` is 0 and 60 log-spaced steps; the seed's streams are those of
        :func:`specdyn.sim.train_two_layer` (the same data).
    """

    activation: str | Activation = "relu"
    depth: int
    N: int
    M: int
    steps: int
    dt: float = 1.0
    parameterization: str | Parameterization = "mean-field"


def _example() -> Any:
    from specdyn.settings import FEATURE_LEARNING

    return (FEATURE_LEARNING.setting(D=6),), {"depth": 2, "N": 8, "M": 8, "steps": 40,
                                                     "device": "cpu"}


@entry_point(DeepNetworkConfig, example=_example)
@v.constrained(setting=SETTING, teacher=TEACHER)
def train_deep_network(setting: Setting, activation: str | Activation = "relu", *, depth: int,
                       N: int, M: int, steps: int, dt: float = 1.0,
                       parameterization: str | Parameterization = "mean-field",
                       teacher: PowerLawTeacher | None = None,
                       options: RunOptions | None = None,
                       **shorthands: Unpack[RunKeywords]) -> Trajectory:
    """Train a deep network on a power-law teacher; record each hidden layer's spectrum.

    Parameters
    ----------
    setting
        The system (spectra, ``sigma_w``, ``sigma_a``, ``gamma0``), as for
        :func:`specdyn.sim.train_two_layer`.
    activation, depth, N, M, steps, dt, parameterization
        The network and its training (:class:`DeepNetworkConfig`, where each is
        documented).
    teacher
        The data; default ``PowerLawTeacher(setting)``.
    options, **shorthands
        The run's :class:`~specdyn.sim.options.RunOptions`, or its fields as keywords.

    Returns
    -------
    Trajectory
        ``series["preact<l>"]`` (``l = 1..L``): the nonzero eigenvalues of
        ``Z_l Z_l^T / (M N)`` (``Z_l``, the ``M x N`` preactivations of hidden layer ``l``
        on the training set; uncentred, decreasing, ``min(M, N)`` values), and the
        training loss; :func:`preactivation_exponents` fits their exponents.
    """
    cfg = DeepNetworkConfig.of_call(locals(), entry="train_deep_network")
    system = System.of(setting, teacher)
    act = get_activation(cfg.activation)
    par = get_parameterization(cfg.parameterization, cfg.N, setting.gamma0)
    scales = layer_scales(par, depth=cfg.depth, N=cfg.N, sigma_w=setting.sigma_w,
                          sigma_a=setting.sigma_a)

    def build(inputs: RunInputs) -> tuple[DeepNetworkEngine,
                                          SpectrumRecorder[DeepNetworkState, Trajectory]]:
        X, Y = system.sample_torch(cfg.M, inputs)  # train_two_layer's data stream
        eng = DeepNetworkEngine(act, scales, cfg.dt,
                                (system.D, *[cfg.N] * cfg.depth, system.P), (X, Y),
                                loss_scale=0.5 * float((Y * Y).sum()) / cfg.M)
        forward: PerState[DeepNetworkState, Any] = PerState(
            lambda st: eng.forward(st.weights, X))
        spectrum = gram_spectrum_of(lambda z: z.shape[0] * z.shape[1])

        def loss(st: DeepNetworkState) -> float:
            return 0.5 * float(((forward(st)[1] - Y) ** 2).double().sum()) / X.shape[0]

        layers = {f"preact{l + 1}": Observable(functools.partial(_layer, forward, l), spectrum)
                  for l in range(cfg.depth)}
        return eng, SpectrumRecorder({"loss": loss, **layers}, dt=eng.dt, meta={
            "activation": act.name, "parameterization": asdict(par),
            "layer_scales": asdict(scales), "depth": cfg.depth, "N": cfg.N, "M": cfg.M,
            "dt": cfg.dt, **system.meta()})

    return run(Setup("deep_network", DeepNetworkEngine.streams, build), steps=cfg.steps,
               options=cfg.options, desc="deep network")


def _layer(forward: PerState[DeepNetworkState, Any], l: int, state: DeepNetworkState) -> Any:
    """The preactivations of hidden layer ``l`` (0-based) of ``state``."""
    return forward(state)[0][l]


@v.constrained(kmin=v.SIZE, kmax=v.SIZE)
def preactivation_exponents(traj: Trajectory, kmin: int = 2, kmax: int = 20) -> pd.DataFrame:
    """Each layer's preactivation exponent over training: the paper's Fig. 4 measurement.

    The rank exponent ``a`` of ``lambda_k ~ C k^-a`` (:func:`~specdyn.measure.fit_power_law`
    over the ranks ``kmin..kmax``) of every ``preact<l>`` series of ``traj`` (a
    :func:`train_deep_network` or :func:`~specdyn.sim.train_two_layer` record) at every
    checkpoint: a tidy table ``step, t, layer, exponent, ci_low, ci_high``, ``layer`` 1-based.
    """
    if kmax <= kmin:
        raise ValueError(f"kmax must be > kmin={kmin}, got {kmax}")
    rows = []
    for name, spectra in traj.series.items():
        if not name.startswith("preact"):
            continue
        layer = int(name[len("preact"):] or 1)
        for step, t, lam in zip(traj.steps, traj.times, spectra, strict=True):
            fit = fit_power_law(lam[:kmax], kmin=kmin, kmax=kmax)
            rows.append({"step": int(step), "t": float(t), "layer": layer,
                         "exponent": fit.exponent, "ci_low": fit.ci_low, "ci_high": fit.ci_high})
    return pd.DataFrame(rows, columns=["step", "t", "layer", "exponent", "ci_low", "ci_high"])
