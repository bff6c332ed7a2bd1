"""Run one experiment into its folder as a transaction; check a finished folder again.

:func:`run_experiment` is what ``specdyn reproduce`` and ``specdyn run`` call:
the experiment's tables, figures and JSON record appear in ``out_root/NAME`` all
at once, or not at all. :func:`run_experiments` runs several, one after another or each
in its own worker process, and yields a plain row for each (what ``specdyn reproduce``
prints and records). :func:`recheck_claims` computes the claims of a finished folder
again with the current code.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io as _io
import time
import traceback
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from specdyn import io, provenance
from specdyn._cancel import raise_if_cancelled
from specdyn.runs import store
from specdyn.runs.claims import Claim
from specdyn.runs.config import config_from_dict, config_to_dict
from specdyn.runs.executors import run_local
from specdyn.runs.registry import ExperimentResult, get


def run_experiment(name: str, out_root: str | Path = "specdyn-out", *, full: bool = False,
                   config: Any = None) -> ExperimentResult:
    """Run one experiment into ``out_root/name`` as a transaction, with its JSON run record.

    The experiment writes into a fresh temporary folder beside
    ``out_root/name``, which replaces the folder in one rename only when the
    run finished (see :mod:`specdyn.runs.store`); the folder is locked
    meanwhile, so a second run into it is refused at once
    (:class:`~specdyn.runs.transaction.FolderBusyError`, naming the holder's
    PID). The record (``record.json``) holds the exact config, the specdyn
    version and commit, the host, the wall time, the summary and the claims.

    A failure leaves the previous finished result untouched: it is recorded
    beside it in ``out_root/name.failed.json`` (status ``failed``, with the
    traceback) and then re-raised.
    """
    exp = get(name)
    cfg = exp.config(full) if config is None else config
    if not isinstance(cfg, exp.config_cls):
        raise ValueError(f"config for {name!r} must be a {exp.config_cls.__name__}")
    target = Path(out_root) / name
    cfg_dict = config_to_dict(cfg)
    seed = cfg_dict.get("seed")
    provenance.git_commit()  # the commit the run starts from (kept: HEAD may move meanwhile)
    with store.transaction(target) as tmp:
        start = time.perf_counter()
        try:
            result = exp.run(cfg, tmp)
            if exp.claims is not None:
                result = dataclasses.replace(result, claims=exp.claims(cfg, tmp))
        except Exception:
            raise_if_cancelled()  # a cancel a library reported as its own error: no failure
            store.record_failure(target, provenance.run_record(
                {"experiment": name, **cfg_dict}, seed=seed,
                wall_time=time.perf_counter() - start, status="failed",
                error=traceback.format_exc()))
            raise
        wall = time.perf_counter() - start
        io.write_json(
            provenance.run_record({"experiment": name, **cfg_dict}, seed=seed, wall_time=wall,
                                  extra={"figures": [p.name for p in result.figures],
                                         "tables": [p.name for p in result.tables],
                                         "summary": result.summary,
                                         "claims": [c.to_dict() for c in result.claims]}),
            tmp / store.RECORD,
        )

    def moved(p: Path) -> Path:
        return target / Path(p).relative_to(tmp) if Path(p).is_relative_to(tmp) else Path(p)

    return dataclasses.replace(result, out_dir=target, figures=[moved(p) for p in result.figures],
                               tables=[moved(p) for p in result.tables])


#: The keys of a row of :func:`run_experiments` that are not part of ``claims.json``.
ROW_EXTRAS = ("error", "out_dir", "files", "output")


def _experiment_row(name: str, out_root: str | Path, config: Any) -> dict[str, Any]:
    """Run one experiment (:func:`run_experiment`) as the row :func:`run_experiments`
    yields (without ``output``); never raises but for a cancel."""
    start = time.perf_counter()
    try:
        res = run_experiment(name, out_root, config=config)
    except Exception as err:  # keep going: one failed figure must not lose the others
        raise_if_cancelled()  # ... but a cancel a library reported as an error stops all
        record = store.failed_record_path(Path(out_root) / name)  # a busy folder: none
        return {"experiment": name, "status": "failed",
                "wall_time_s": time.perf_counter() - start, "claims": [],
                "error": f"{type(err).__name__}: {err}"
                         + (f"; traceback in {record}" if record.exists() else "")}
    return {"experiment": name, "status": "finished",
            "wall_time_s": time.perf_counter() - start,
            "claims": [c.to_dict() for c in res.claims], "out_dir": str(res.out_dir),
            "files": [p.name for p in res.figures + res.tables]}


def _row_in_worker(task: tuple[str, str, Any]) -> dict[str, Any]:
    # a worker's prints and warnings are kept for the parent to show under the
    # experiment's line (two experiments' output would interleave on one terminal)
    buf = _io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        row = _experiment_row(*task)
    return {**row, "output": buf.getvalue()}


def _task_name(task: tuple[str, str, Any]) -> str:
    return task[0]


def _worker_died(task: tuple[str, str, Any], deaths: int) -> dict[str, Any]:
    return {"experiment": task[0], "status": "failed", "wall_time_s": 0.0, "claims": [],
            "error": f"its worker process died {deaths} times (killed, out of memory or "
                     "crashed); the folder keeps its previous result"}


def run_experiments(names: Sequence[str], out_root: str | Path, configs: Mapping[str, Any],
                    *, jobs: int = 1, threads: int = 1) -> Iterator[dict[str, Any]]:
    """Run experiments into ``out_root`` (:func:`run_experiment` each), yielding a plain row
    for each: ``experiment``, ``status`` (``"finished"`` or ``"failed"``), ``wall_time_s``,
    ``claims`` (their dicts) and, not recorded in ``claims.json`` (:data:`ROW_EXTRAS`),
    ``error`` (one line, naming the traceback's file), ``out_dir``, ``files`` and
    ``output``. A failed experiment is a row, not an exception (a cancel still stops all).

    ``jobs == 1``: one after another in this process, in order. ``jobs > 1``: each in a
    worker process of its own, ``jobs`` at once with ``threads`` threads each, rows
    yielded as the experiments finish, with ``output`` (what the experiment printed);
    a worker that dies is tried again (three times in all, as a sweep's point is), then
    its row is a failure. The numbers do not depend on ``jobs``: every experiment draws
    from its own seed. Closing the iterator stops the workers (a killed experiment leaves
    its folder's previous result).
    """
    if jobs <= 1 or len(names) <= 1:
        for name in names:
            raise_if_cancelled()  # a cancel that a callback swallowed in the last one
            yield _experiment_row(name, out_root, configs[name])
        return
    tasks = [(name, str(out_root), configs[name]) for name in names]
    yield from run_local(tasks, _row_in_worker, jobs, key=_task_name, died=_worker_died,
                         threads=threads)


def recheck_claims(folder: str | Path) -> list[Claim]:
    """The claims of a finished experiment folder, computed again by the current code.

    Reads the experiment's name and config from ``folder/record.json`` and calls
    its registered ``claims`` function on the tables in ``folder``: the claims of
    a long run (a ``--full`` size, say) can be checked by a later version without
    running it again. An experiment without a ``claims`` function, or a folder
    that did not finish, is a ``ValueError``.
    """
    folder = Path(folder)
    rec = io.read_json(folder / store.RECORD)
    if rec.get("status") != "finished":
        raise ValueError(f"{folder}: the run did not finish (status {rec.get('status')!r})")
    data = dict(rec["config"])
    exp = get(data.pop("experiment"))
    if exp.claims is None:
        raise ValueError(f"experiment {exp.name!r} has no claims function to check again")
    cfg: Any = config_from_dict(exp.config_cls, data, source=str(folder / store.RECORD))
    return exp.claims(cfg, folder)
