"""Mean-field Langevin dynamics under muP (the third related work; docs/mean-field.md).

Three experiments:

* ``propagation-of-chaos``: per-particle squared distance between ``N``-particle
  systems and their synchronously coupled mean-field copies, against ``N`` on
  log axes, with the fitted slope (claim: ``O(1/N)`` uniformly in time), the
  spread over seeds, and the exact levels after the first step and at ``t = 0``.
* ``sparse-atoms``: a two-atom teacher learnt at small temperature; particles
  at the end coloured by |a|-weighted direction cluster against the teacher's
  atoms, the mass in the heaviest clusters over time, and the atoms against the
  zero-temperature lasso with free directions (population and the run's own data).
* ``error-budget``: statistical (against M), optimisation (against t),
  particle (against N) and sparse-residual (against K) parts of the error, the
  clock (the initial rate) and the Gibbs temperature (equipartition).

Default target ``f*(x) = tanh(2 x1) + 0.5 He2(x1)`` and the default student
activation ``tanh-shift`` (``tanh(z + 1/2)``): a plain ``tanh`` network has no
bias and is odd, so it cannot represent the even ``He2`` part at all.

One module a concern, imported in this order (each imports only those above it):

- ``config``: the notes' Langevin setting (``NotesLangevin``, the physics' one home) and
  the config dataclasses inheriting it (``ChaosConfig``, ``AtomsConfig``,
  ``BudgetConfig``), their declared constraints and ``--full`` sizes, and the notes'
  target (``notes_target``);
- ``readings``: what the claims read off the tables and particles (the growth of
  ``N x`` a distance, the realisation-symmetry moves, the error parts' trends and spreads);
- ``levels``: the exact levels the prefactor and clock claims compare with, from the
  initial law and the data, without the engine;
- ``atoms``: sparse-atoms' claims and the finite-M theory table;
- ``claims``: propagation-of-chaos's and error-budget's claims, and the registry's
  ``*_claims_of``: pure functions of a table and its config;
- ``wrong``: the wrong models of each class, and why the other classes cannot occur;
- ``run``: the registered runs (``@register``): tables, figures, summaries.

Importing this package imports ``run``, which registers the three experiments.
"""

from __future__ import annotations

from specdyn.experiments.mean_field import run  # noqa: F401  (registers the three experiments)

# Nothing is exported: the experiments are used by name through specdyn.runs, their
# configs and claims from their modules.
__all__: list[str] = []
