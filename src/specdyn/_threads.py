"""The environment variables that size the thread pools of OpenMP, MKL and OpenBLAS.

One list for every place that sizes them: ``specdyn reproduce`` (its threads),
the sweep's local workers (a share of the cores each) and the tracker's summary
process (one thread).
"""

from __future__ import annotations

__all__ = ["THREAD_ENV"]

#: Environment variables that size the thread pools of OpenMP, MKL and OpenBLAS.
THREAD_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
