"""Test-session setup.

CI runs the suite with ``pytest -n 2`` on two cores. Each worker keeps to one
BLAS/OpenMP thread: two workers each spinning two OpenMP threads on two cores
slow the torch and LAPACK tests down by an order of magnitude. The variables
are set before numpy or torch is imported by any test module.

The experiments' quick runs are made once per session and shared by the tests that
read them (``quick_run``, see ``quick_runs.py``); those tests are collected first, each
experiment's together, the slowest first.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import pytest  # noqa: E402 - after the thread variables, as every import here
from quick_runs import QuickRuns, experiment_of, order  # noqa: E402


@pytest.fixture(scope="session")
def _quick_runs(tmp_path_factory: pytest.TempPathFactory) -> QuickRuns:
    base = tmp_path_factory.getbasetemp()
    # an xdist worker's basetemp is <the session's basetemp>/<worker id>: one for all workers
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    return QuickRuns(root / "quick-runs")


@pytest.fixture()
def quick_run(request: pytest.FixtureRequest, _quick_runs: QuickRuns) -> QuickRuns:
    """``quick_run(name)``: the session's one quick run of experiment ``name``."""
    if experiment_of(request.node.nodeid) is None:
        pytest.fail(f"{request.node.nodeid} reads a shared quick run: list its test in "
                    "quick_runs.QUICK_RUN_TESTS (parametrized by the experiment's name), "
                    "so that an experiment's tests are collected together", pytrace=False)
    return _quick_runs


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    order(items)

