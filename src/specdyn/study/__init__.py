"""Your own data against the theory: one call, :func:`study`, behind ``specdyn data``.

The study of a data set ``(X, Y)``: its decomposition (:mod:`specdyn.data.empirical`),
its exponents with intervals (:mod:`specdyn.measure.data_spectra`), and per regime the
aligned theory on the data's own spectra (:mod:`specdyn.theory`), the exact reference
(the infinite-width flow on the data's own covariances) and, optionally, networks
trained on the data (:mod:`specdyn.sim`); tables, a summary, a figure and files.

A library layer above ``sim`` (it trains networks) and beside ``runs`` and ``plot`` (it
writes its files as one transaction and draws its figure); the ``real-data``
experiment and the command line build on it.
"""

from __future__ import annotations

from specdyn.study.data_study import DataStudy, ModelStudy, study
from specdyn.study.regime import REGIMES

__all__ = ["REGIMES", "DataStudy", "ModelStudy", "study"]
