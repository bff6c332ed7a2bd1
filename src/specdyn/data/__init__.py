"""Teachers and input distributions: samplers and population statistics."""

from specdyn.data.hermite import (  # noqa: F401
    HermiteTarget,
    gaussian_expectation,
    hermite_basis,
    hermite_coefficients,
    hermite_eval,
    random_direction,
)
from specdyn.data.teacher import PowerLawTeacher  # noqa: F401  (issue 3)
