"""One quick run of every registered experiment per test session, shared by the tests.

Five tests check every registered experiment on the folder its quick default writes
(``QUICK_RUN_TESTS``), and two the console of all of them together:

- ``test_experiments_claims.py::test_quick_experiment_claims_hold``: its claims hold;
- ``test_claims_mutation_all.py``: its claims fail on wrong (constant, shuffled) tables;
- ``test_wrong_models.py``: its claims fail on each plausible wrong model it registers;
- ``test_experiments_claims.py::test_claim_texts_carry_no_commits_or_issue_numbers``: the
  texts the console prints of its claims carry no commit hashes or issue numbers;
- ``test_experiments_figure_layout.py::test_experiment_figure_has_no_clutter``: every
  figure it saves passes :func:`specdyn.plot.check.figure_problems`, checked as it is
  saved (the run is made under :func:`specdyn.plot.check.on_save`);
- ``test_reproduce_console.py``: what ``specdyn reproduce`` prints for all the runs names
  no commit and no issue, and fits in about 80 lines.

They ask the fixture ``quick_run`` (``tests/conftest.py``) for the run instead of making
their own: each experiment runs once, into ``quick-runs/NAME/NAME`` under the session's
temporary folder, and the five read that folder (never write it). Across pytest-xdist
workers the run is made under a lock (:func:`specdyn.runs.store.lock`, waited for): the
first worker to ask runs it, another finds it finished and reads it, whatever ``--dist``.

Order (``tests/conftest.py``): the quick-run tests are collected first, each
experiment's five together, the slowest experiment first (``SLOWEST_FIRST``), then those
that read every experiment's run (parameter :data:`ALL`: the console of ``specdyn
reproduce``). pytest-xdist's default ``--dist load`` hands each worker a chunk of
consecutive tests first, so one worker takes an experiment's five tests (the first makes
the run, the others read it) and the long runs start first; the many short tests after
them are handed out as the workers free up, so that both end together. A group split
between the workers costs the second a wait at the lock, never a second run. (``--dist
loadgroup`` with ``xdist_group`` marks would pin the groups, but pytest-xdist 3.8 does
not see the marks under pytest 9.2, pytest-xdist issue 1386, and it hands the other
tests out one by one, so that a module's module-scoped fixture, the docs site or the
wheel, is built on both workers.)
"""

from __future__ import annotations

import contextlib
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: The tests that read a shared quick run, as ``FILE::FUNCTION``, each parametrized by the
#: experiment's name (or by :data:`ALL`); the ``quick_run`` fixture fails a test not listed
#: here.
QUICK_RUN_TESTS = (
    "test_experiments_claims.py::test_quick_experiment_claims_hold",
    "test_claims_mutation_all.py::test_every_expected_claim_fails_on_constant_and_shuffled_tables",
    "test_experiments_figure_layout.py::test_experiment_figure_has_no_clutter",
    "test_wrong_models.py::test_every_wrong_model_fails_an_expected_claim",
    "test_experiments_claims.py::test_claim_texts_carry_no_commits_or_issue_numbers",
    "test_reproduce_console.py::test_quick_console_names_no_commit_or_issue",
    "test_reproduce_console.py::test_quick_console_fits_80_lines",
)

#: The parameter of a quick-run test that reads every experiment's run (the console of a
#: whole ``specdyn reproduce``): collected after every experiment's own tests, so that in a
#: full session it finds the runs made.
ALL = "all"

#: Quick runs by wall time on a 2-core box (``pytest --durations``), longest first; only
#: the order in which the tests are handed out depends on it. Those not named go after.
SLOWEST_FIRST = ("finite-size-theory", "regime-map", "fig4", "lr-transfer", "error-budget",
                 "real-data", "fig3", "fig2", "finite-size", "two-step-phase", "batch-reuse",
                 "propagation-of-chaos", "trainability", "bbp-escape", "sparse-atoms")

#: Seconds between two tries at a lock another worker holds.
_POLL_S = 0.5


def experiment_of(nodeid: str) -> str | None:
    """The experiment whose shared quick run the test ``nodeid`` reads, or None."""
    head, sep, param = nodeid.partition("[")
    if not sep or head.rsplit("/", 1)[-1] not in QUICK_RUN_TESTS:
        return None
    return param.rsplit("]", 1)[0]


@dataclass(frozen=True)
class QuickRun:
    """A finished quick run: its folder and the problems of each figure it saved."""

    name: str
    folder: Path
    #: (file stem, problems found by ``figure_problems``), one per saved figure
    figures: list[tuple[str, list[str]]]


class QuickRuns:
    """``quick_run(name)``: the one quick run of ``name`` in this session (made if need be).

    A run that raised fails every test that asks for it, with its traceback.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._seen: dict[str, dict[str, Any]] = {}

    def __call__(self, name: str) -> QuickRun:
        if name not in self._seen:
            self._seen[name] = self._made(name)
        done = self._seen[name]
        if done["error"]:
            pytest.fail(f"the quick run of {name} failed:\n{done['error']}", pytrace=False)
        return QuickRun(name, self.root / name / name,
                        [(stem, list(probs)) for stem, probs in done["figures"]])

    def _made(self, name: str) -> dict[str, Any]:
        from specdyn import io

        base = self.root / name
        checks = base / "checks.json"
        with _waited_lock(base / "run"):
            if not checks.exists():
                io.write_json(_run(name, base), checks)
            return io.read_json(checks)


def _run(name: str, base: Path) -> dict[str, Any]:
    """Run ``name`` at its quick default into ``base``: its figures' problems, its error."""
    from specdyn.plot.check import figure_problems, on_save
    from specdyn.runs import run_experiment

    figures: list[tuple[str, list[str]]] = []

    def check(fig: Figure, stem: Path) -> None:
        figures.append((stem.name, figure_problems(fig)))

    try:
        with on_save(check):
            run_experiment(name, base)
    except Exception:  # recorded: another worker then fails the same way, not runs again
        return {"error": traceback.format_exc(), "figures": figures}
    return {"error": "", "figures": figures}


@contextlib.contextmanager
def _waited_lock(folder: Path) -> Iterator[None]:
    """Hold ``folder``'s write lock, waiting while another process (worker) holds it."""
    from specdyn.runs import store

    while True:
        held = contextlib.ExitStack()
        try:
            held.enter_context(store.lock(folder))
        except store.FolderBusyError:
            time.sleep(_POLL_S)
            continue
        with held:
            yield
        return


def order(items: list[pytest.Item]) -> None:
    """Put the quick-run tests first, each experiment's together, the slowest first."""
    rank = {n: i for i, n in enumerate(SLOWEST_FIRST)}
    first: dict[str, int] = {}
    for item in items:
        name = experiment_of(item.nodeid)
        if name is not None:
            first.setdefault(name, len(first))

    def key(item: pytest.Item) -> tuple[int, int, int]:
        name = experiment_of(item.nodeid)
        if name is None:
            return (2, 0, 0)
        if name == ALL:
            return (1, 0, 0)
        return (0, rank.get(name, len(rank)), first[name])

    items.sort(key=key)  # stable: the others keep their order

