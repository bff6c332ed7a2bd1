"""Teachers and input distributions: samplers and population statistics; real data sets
(:mod:`specdyn.data.real`) and their decomposition for the aligned theory
(:mod:`specdyn.data.empirical`)."""

from specdyn.data.empirical import DataDecomposition, DataTeacher, aligned_setting, decompose
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
    "DataDecomposition",
    "DataTeacher",
    "HermiteTarget",
    "PowerLawTeacher",
    "RealData",
    "aligned_setting",
    "decompose",
    "digits",
    "gaussian_expectation",
    "hermite_basis",
    "hermite_coefficients",
    "hermite_eval",
    "image_patches",
    "random_direction",
    "text_ngrams",
]
