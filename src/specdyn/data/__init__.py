"""Teachers and input distributions: samplers and population statistics; real data sets
(:mod:`specdyn.data.real`), a user's ``(X, Y)`` from files and its checks
(:mod:`specdyn.data.files`), their moments accumulated in blocks of rows
(:mod:`specdyn.data.moments`), their decomposition for the theory
(:mod:`specdyn.data.empirical`) and its sampling covariance (:mod:`specdyn.data.sampling`)."""

from specdyn.data.empirical import (
    CrossModes,
    DataDecomposition,
    DataTeacher,
    aligned_setting,
    decompose_data,
)
from specdyn.data.files import (
    MIN_SAMPLES,
    NpyRows,
    check_moments,
    check_shapes,
    check_xy,
    load_xy,
)
from specdyn.data.hermite import (
    HermiteTarget,
    gaussian_expectation,
    hermite_basis,
    hermite_coefficients,
    hermite_eval,
    random_direction,
)
from specdyn.data.moments import DataMoments, accumulate
from specdyn.data.real import RealData, digits, image_patches, text_ngrams
from specdyn.data.sampling import log_spectra_covariance
from specdyn.data.teacher import PowerLawTeacher

__all__ = [
    "MIN_SAMPLES",
    "NpyRows",
    "CrossModes",
    "DataDecomposition",
    "DataMoments",
    "DataTeacher",
    "HermiteTarget",
    "PowerLawTeacher",
    "RealData",
    "accumulate",
    "aligned_setting",
    "check_moments",
    "check_shapes",
    "check_xy",
    "decompose_data",
    "digits",
    "gaussian_expectation",
    "hermite_basis",
    "hermite_coefficients",
    "hermite_eval",
    "image_patches",
    "load_xy",
    "log_spectra_covariance",
    "random_direction",
    "text_ngrams",
]
