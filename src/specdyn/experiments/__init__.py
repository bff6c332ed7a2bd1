"""Named experiments (paper figures, related works, sweeps).

Importing this package registers every experiment listed in ``_MODULES``; add a
module name there to plug a new experiment into ``specdyn reproduce``.
"""

from __future__ import annotations

import importlib

from specdyn.experiments.claims import Claim, within
from specdyn.experiments.registry import (
    Experiment,
    ExperimentResult,
    builtin_names,
    get,
    names,
    recheck_claims,
    register,
    run_experiment,
)

_MODULES = [
    "theory_figures",
    "simulate",
    "regime_map",
    "linear_figures",
    "nonlinear_figures",
    "outlier_escape",
    "mean_field",
    "two_step",
    "finite_size_theory",
]

for _m in _MODULES:
    importlib.import_module(f"specdyn.experiments.{_m}")

__all__ = [
    "Claim",
    "Experiment",
    "ExperimentResult",
    "builtin_names",
    "get",
    "names",
    "recheck_claims",
    "register",
    "run_experiment",
    "within",
]
