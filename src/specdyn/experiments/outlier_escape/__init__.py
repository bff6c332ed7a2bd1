"""Outlier escape during training (related work 1): three experiments.

``bbp-escape``
    Population GD of a linear student on a rank-one teacher: the top singular
    values against the predicted bulk edge and BBP outlier path, predicted and
    measured (first Tracy-Widom-flagged step) escape times, singular-vector
    alignment with the teacher.
``trainability``
    (learning rate, init variance) phase diagrams: a single-layer student under
    online SGD with label noise (measured cells, exact theory boundary) and a
    two-layer linear network in standard parameterisation (measured only, with
    the naive ``2 / sharpness`` line for comparison: catapults converge beyond it).
``lr-transfer``
    Loss after a fixed budget against the base learning rate for several widths
    under muP and NTK (depth-3 linear nets, power-law teacher), and the escape
    step of the hidden layer's top singular value against width.

One module a concern, imported in this order (each imports only those above it):

- ``config``: the config dataclasses (``BBPEscapeConfig``, ``TrainabilityConfig``,
  ``LRTransferConfig``), their declared constraints and ``--full`` sizes, and the
  ``escape_runs`` entries' parsing and labels;
- ``readings``: what bbp-escape's SGD and nonlinear claims read off their table;
- ``trainability``: trainability's claims and what they read (statuses, catapult rows,
  the exact theory's final error and its recursion);
- ``transfer``: lr-transfer's claims and what they read (best learning rates, escape
  steps by width);
- ``claims``: bbp-escape's claims (with the D-transform evaluation of the BBP path), and
  the topic's claims imported from the two above;
- ``run``: the registered runs (``@register``): simulations, tables, figures, summaries.

Importing this package imports ``run``, which registers the three experiments.
"""

from __future__ import annotations

from specdyn.experiments.outlier_escape import run  # noqa: F401  (registers the three)

# Nothing is exported: the experiments are used by name through specdyn.runs, their
# configs and claims from their modules.
__all__: list[str] = []
