"""Thread pools of OpenMP, MKL, OpenBLAS and torch: one list of their variables, one policy.

``specdyn reproduce`` (its ``--threads``), the sweep's local workers (a share of
the cores each) and the tracker's summary process (one thread) size them here.
"""

from __future__ import annotations

import os
import sys

import threadpoolctl

from specdyn import _validate as v

__all__ = ["THREAD_ENV", "limit_threads"]

#: Environment variables that size the thread pools of OpenMP, MKL and OpenBLAS.
THREAD_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def limit_threads(n: int) -> None:
    """Size the thread pools of this process and of the children it starts to ``n``.

    ``n`` wins over thread variables already set: the caller has decided it (a
    ``--threads`` flag, or a sweep worker's share of the cores), and pools of the
    default size in several processes spin against each other. The environment
    serves libraries loaded later (and children); threadpoolctl resizes the BLAS
    already loaded, and torch is resized only when loaded (it reads
    ``OMP_NUM_THREADS`` at import, so none is imported here).
    ``OMP_WAIT_POLICY=PASSIVE``, unless set, stops idle OpenMP threads spinning.
    """
    n = v.positive_int("threads", n)
    for var in THREAD_ENV:
        os.environ[var] = str(n)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    threadpoolctl.threadpool_limits(n)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(n)
