"""The experiments that ship with specdyn: paper figures and related works.

Importing this package registers the experiments of every topic package below it
(a package with a ``run.py``; :func:`specdyn._experiment_index.topics`) with
:mod:`specdyn.runs`, which finds this package through the ``specdyn.experiments``
entry point (``pyproject.toml``); run them with ``specdyn reproduce`` or
:func:`specdyn.runs.run_experiment`. Each topic is a package of ``config``,
``claims`` and ``run`` modules (``tests/project/test_experiment_modules.py``;
``docs/concepts.md`` shows the layout); a new topic package is found by its
folder, with no list to edit. A separate package plugs its own experiments in
with an entry point of the same group.
"""

from __future__ import annotations

import importlib

from specdyn._experiment_index import topics as _topics

for _topic in _topics():
    importlib.import_module(f"specdyn.experiments.{_topic}")

# Nothing is exported: the experiments are used by name through specdyn.runs.
__all__: list[str] = []
