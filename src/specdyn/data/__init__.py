"""Teachers and input distributions: samplers and population statistics; real data sets
(:mod:`specdyn.data.real`), a user's ``(X, Y)`` from files and its checks
(:mod:`specdyn.data.files`), and their decomposition for the theory
(:mod:`specdyn.data.empirical`)."""

from specdyn.data.empirical import (
    DataDecomposition,
    DataTeacher,
    aligned_setting,
    decompose_data,
)
from specdyn.data.files import MIN_SAMPLES, check_xy, load_xy
from specdyn.data.hermite import (
    HermiteTarget,
    gaussian_expectation,
    hermite_basis,
    hermite_coefficients,
    hermite_eval,
    random_direction,
)
from specdyn.data.real import RealData, digits, image_patches, text_ngrams
from specdyn.data.teacher import PowerLawTeacher

__all__ = [
    "MIN_SAMPLES",
    "DataDecomposition",
    "DataTeacher",
    "HermiteTarget",
    "PowerLawTeacher",
    "RealData",
    "aligned_setting",
    "check_xy",
    "decompose_data",
    "digits",
    "gaussian_expectation",
    "hermite_basis",
    "hermite_coefficients",
    "hermite_eval",
    "image_patches",
    "load_xy",
    "random_direction",
    "text_ngrams",
]
