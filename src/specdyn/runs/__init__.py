"""The run machinery: registry, configs, sweeps, the result store and claims.

Everything that runs an experiment and keeps its results, whatever the
experiment: the registry (:func:`register`, :func:`get`, :func:`run_experiment`),
typed configs and their TOML form (:mod:`~specdyn.runs.config`), sweep grids
(:mod:`~specdyn.runs.spec`), where their points run
(:mod:`~specdyn.runs.executors`), the one home of the folder layout and its
transactions (:mod:`~specdyn.runs.store`), and the claims an experiment checks on
its own output (:mod:`~specdyn.runs.claims`). The experiments themselves live in
:mod:`specdyn.experiments` and are found through an entry point, so this package
never imports them.
"""

from __future__ import annotations

from specdyn.runs.claims import Claim, sized, within
from specdyn.runs.registry import (
    WRONG_KINDS,
    Experiment,
    ExperimentResult,
    Measured,
    WrongModel,
    builtin_names,
    get,
    names,
    register,
)
from specdyn.runs.run import ROW_EXTRAS, recheck_claims, run_experiment, run_experiments
from specdyn.runs.store import load_records
from specdyn.runs.store import load_table as load
from specdyn.runs.sweep import run_sweep

__all__ = [
    "ROW_EXTRAS",
    "WRONG_KINDS",
    "Claim",
    "Experiment",
    "ExperimentResult",
    "Measured",
    "WrongModel",
    "builtin_names",
    "get",
    "load",
    "load_records",
    "names",
    "recheck_claims",
    "register",
    "run_experiment",
    "run_experiments",
    "run_sweep",
    "sized",
    "within",
]
