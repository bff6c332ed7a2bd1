"""Teachers and input distributions: samplers and population statistics."""

from specdyn.data.hermite import (
    HermiteTarget,
    gaussian_expectation,
    hermite_basis,
    hermite_coefficients,
    hermite_eval,
    random_direction,
)
from specdyn.data.teacher import PowerLawTeacher

__all__ = [
    "HermiteTarget",
    "PowerLawTeacher",
    "gaussian_expectation",
    "hermite_basis",
    "hermite_coefficients",
    "hermite_eval",
    "random_direction",
]
