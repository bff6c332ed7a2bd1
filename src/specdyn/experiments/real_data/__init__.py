"""``real-data``: the core paper's theory on real data's own spectra (issue 32).

Image patches and digits (and the spectrum of character bigrams) against linear and ReLU
networks trained on them. One module a concern, imported in this order (each imports
only those above it):

- ``config``: the two regimes (``REGIMES``), the config dataclass (``RealDataConfig``),
  its declared constraints, ``--full`` size and the tests' ``tiny`` size;
- ``claims``: the tolerances, the readings of the tables (``series``,
  ``aligned_error``, ``all_error``) and the claims, pure functions of the tables and
  the config;
- ``run``: the registered run (``@register``): training, tables, figures and summary.

Importing this package imports ``run``, which registers ``real-data``.
"""

from __future__ import annotations

from specdyn.experiments.real_data import run  # noqa: F401  (registers real-data)

# Nothing is exported: the experiment is used by name through specdyn.runs, its config
# and claims from their modules.
__all__: list[str] = []
