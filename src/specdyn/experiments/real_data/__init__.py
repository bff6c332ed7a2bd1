"""``real-data``: the core paper's theory on real data's own spectra, and your own data.

Image patches (shifted and blurred targets), digits and text against linear, ReLU and
SGD-trained networks, beside the aligned theory and the exact reference; the same study
of any ``(X, Y)`` behind ``specdyn data``. One module a concern, imported in this order
(each imports only those above it):

- ``data_study``: the study of one ``(X, Y)`` (:func:`study`: checks, decomposition,
  exponents, misalignment, the theory, the exact reference, a stable step, optional
  training; tables, summary, figure, files); ``compare``: a trained network beside the
  theory and the reference per mode (:func:`compare_modes`);
- ``config``: the regimes, the config dataclass (``RealDataConfig``), its declared
  constraints, ``--full`` size and the tests' ``tiny`` size;
- ``tasks``: the seven data sets and their studies; ``networks``: the ReLU student's lazy
  runs and the SGD MLP and CNN (their first layer through ``SpectrumTracker``);
- ``claims``: the tolerances, the readings of the tables and the claims, pure functions of
  the tables and the config; ``wrong_models``: the wrong answers they must catch;
- ``run``: the registered run (``@register``): tables, figures and summary.

Importing this package imports ``run``, which registers ``real-data``.
"""

from __future__ import annotations

from specdyn.experiments.real_data import run  # noqa: F401  (registers real-data)
from specdyn.experiments.real_data.compare import compare_modes
from specdyn.experiments.real_data.data_study import (
    REGIMES,
    DataStudy,
    ModelStudy,
    study,
)

# The experiment is used by name through specdyn.runs; the study of your own data from here.
# (a Regime is specdyn.settings.Regime)
__all__ = ["REGIMES", "DataStudy", "ModelStudy", "compare_modes", "study"]
