"""Test-session setup.

CI runs the suite with ``pytest -n 2`` on two cores. Each worker keeps to one
BLAS/OpenMP thread: two workers each spinning two OpenMP threads on two cores
slow the torch and LAPACK tests down by an order of magnitude. The variables
are set before numpy or torch is imported by any test module.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
