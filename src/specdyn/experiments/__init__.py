"""The experiments that ship with specdyn: paper figures and related works.

Importing this package registers every experiment of the modules listed in
``_MODULES`` with :mod:`specdyn.runs`, which finds this package through the
``specdyn.experiments`` entry point (``pyproject.toml``); run them with
``specdyn reproduce`` or :func:`specdyn.runs.run_experiment`. Each topic is a
package of ``config``, ``claims`` and ``run`` modules, none over 500 lines
(``tests/project/test_experiment_modules.py``; ``docs/concepts.md`` shows the
layout); add its name to ``_MODULES`` to plug a new experiment in; a separate
package plugs its own in with an entry point of the same group.
"""

from __future__ import annotations

import importlib

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
    "real_data",
]

for _m in _MODULES:
    importlib.import_module(f"specdyn.experiments.{_m}")

# Nothing is exported: the experiments are used by name through specdyn.runs.
__all__: list[str] = []
