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

import math
import time
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

from specdyn import _validate as v
from specdyn._torch import resolve_device, resolve_dtype
from specdyn.data.teacher import PowerLawTeacher
from specdyn.measure.exponents import fit_power_law
from specdyn.measure.spectra import gram_eigenvalues
from specdyn.models.activations import Activation, get_activation
from specdyn.settings import AlignedSetting, Setting
from specdyn.sim import protocol
from specdyn.sim.config import SimConfig
from specdyn.sim.deep_network_engine import DeepNetworkEngine, DeepNetworkState, LayerScales
from specdyn.sim.linear import setting_dim
from specdyn.sim.loop import run
from specdyn.sim.parameterization import PARAMETERIZATIONS, Parameterization, get_parameterization
from specdyn.sim.protocol import Outcome
from specdyn.sim.trajectory import Trajectory, TrajectoryRows

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
@v.constrained_fields(depth=v.SIZE, N=v.SIZE, M=v.SIZE, steps=v.SIZE, dt=v.POSITIVE)
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


def train_deep_network(setting: Setting, activation: str | Activation = "relu", *,
                       teacher: PowerLawTeacher | None = None, **options: Any) -> Trajectory:
    """Train a deep network on a power-law teacher; record each hidden layer's spectrum.

    Parameters
    ----------
    setting
        The system (spectra, ``sigma_w``, ``sigma_a``, ``gamma0``), as for
        :func:`specdyn.sim.train_two_layer`.
    activation
        The activation (:class:`DeepNetworkConfig`).
    teacher
        The data; default ``PowerLawTeacher(setting)``.
    **options
        The fields of :class:`DeepNetworkConfig` (``depth``, ``N``, ``M``, ``steps``
        required), the run options' shorthands or ``options``.

    Returns
    -------
    Trajectory
        ``series["preact<l>"]`` (``l = 1..L``): the nonzero eigenvalues of
        ``Z_l Z_l^T / (M N)`` (``Z_l``, the ``M x N`` preactivations of hidden layer ``l``
        on the training set; uncentred, decreasing, ``min(M, N)`` values), and the
        training loss; :func:`preactivation_exponents` fits their exponents.
    """
    cfg = DeepNetworkConfig.of({"activation": activation, **options},
                               entry="train_deep_network")
    opts, N, M = cfg.options, cfg.N, cfg.M
    D = setting_dim(setting, teacher)
    act = get_activation(cfg.activation)
    par = get_parameterization(cfg.parameterization, N, setting.gamma0)
    scales = layer_scales(par, depth=cfg.depth, N=N, sigma_w=setting.sigma_w,
                          sigma_a=setting.sigma_a)
    if teacher is None:
        teacher = PowerLawTeacher(setting if isinstance(setting, AlignedSetting)
                                  else setting.with_D(D))
    start = time.perf_counter()
    dtype, dev = resolve_dtype(opts.dtype), resolve_device(opts.device)
    X, Y = teacher.sample_torch(M, seed=DeepNetworkEngine.streams.seed(opts.seed, "data"),
                                dtype=dtype, device=dev)
    eng = DeepNetworkEngine(act, scales, cfg.dt, (D, *[N] * cfg.depth, teacher.P), (X, Y),
                            loss_scale=0.5 * float((Y * Y).sum()) / M)
    names = [f"preact{l + 1}" for l in range(cfg.depth)]
    rows = TrajectoryRows(cfg.dt, names, lambda: protocol.record_meta(
        "deep_network", seed=opts.seed, dtype=dtype, device=dev, start=start,
        steps=cfg.steps, activation=act.name, parameterization=asdict(par),
        layer_scales=asdict(scales), depth=cfg.depth, N=N, M=M, D=D, P=teacher.P, dt=cfg.dt,
        setting=setting.to_dict(), teacher=teacher.to_dict()), diagonals=())
    return run(eng, _Recorder(eng, rows, names), steps=cfg.steps, options=opts,
               desc="deep network")


class _Recorder:
    """Each hidden layer's preactivation spectrum and the loss at the checkpoints."""

    def __init__(self, eng: DeepNetworkEngine, rows: TrajectoryRows, names: list[str]) -> None:
        self.eng, self.rows, self.names = eng, rows, names

    def snapshot(self, state: DeepNetworkState, step: int) -> None:
        """Record checkpoint ``step``."""
        X, Y = self.eng.data
        z, f = self.eng.forward(state.weights, X)
        loss = 0.5 * float(((f - Y) ** 2).double().sum()) / X.shape[0]
        self.rows.add(step, loss, {name: gram_eigenvalues(
            zl.T, divisor=zl.shape[0] * zl.shape[1], symmetrize=True)
            for name, zl in zip(self.names, z, strict=True)})

    def finish(self, outcome: Outcome[DeepNetworkState]) -> Trajectory:
        """The checkpoints taken."""
        return self.rows.trajectory()


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
