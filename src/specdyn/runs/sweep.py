"""Sweeps: one experiment run over a grid of settings and seeds, stored as one tidy table.

:func:`run_sweep` ties the three parts together: the grid
(:mod:`specdyn.runs.spec`: sweep files, :func:`~specdyn.runs.spec.make_sweep`),
where its points run (:mod:`specdyn.runs.executors`: ``local``,
``dask``, ``inline``) and where the results go
(:mod:`specdyn.runs.store`: one folder per sweep, locked while written,
one Parquet table and one JSON record per point).

Re-running a sweep into the same folder runs only the points without a
finished record (and the failed ones with ``retry_failed=True``); the folder
must hold the same grid. An interrupted or killed sweep keeps every finished
point and leaves no partial file.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from specdyn import _validate as v
from specdyn import provenance
from specdyn._progress import progress as _progress
from specdyn.runs import store
from specdyn.runs.executors import execute
from specdyn.runs.spec import EXECUTORS, SweepSpec, check_address, load_sweep
from specdyn.runs.store import Outcome


@dataclass
class SweepReport:
    """Counts of a sweep call: how many points, how many skipped, finished, failed."""

    out: Path
    total: int
    skipped: int
    finished: int
    failed: int
    wall_time: float
    failed_ids: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return (f"{self.total} points: {self.skipped} already done, {self.finished} finished, "
                f"{self.failed} failed now ({self.wall_time:.1f} s) -> {self.out}")


def run_sweep(spec: SweepSpec | str | os.PathLike[str], out: str | os.PathLike[str], *,
              executor: str | None = None, workers: int | None = None,
              address: str | None = None, retry_failed: bool = False, progress: bool = True,
              timeout: float = 5.0) -> SweepReport:
    """Run every unfinished point of ``spec`` and store the results in ``out``.

    Parameters
    ----------
    spec
        A :class:`~specdyn.runs.spec.SweepSpec` or the path of a sweep file.
    out
        The sweep's folder (created if needed). Points with a finished record
        there are skipped; so are failed ones unless ``retry_failed``. A folder
        holding another grid is refused (``ValueError``), and so is a folder
        another process is writing
        (:class:`~specdyn.runs.transaction.FolderBusyError`, naming its PID),
        both before any point runs.
    executor
        ``"local"`` (a process pool; the default), ``"dask"`` or ``"inline"``
        (in this process, one point after another). Given an
        ``address``, the executor is Dask. The file's ``[sweep]`` values are
        used where an argument is ``None``.
    workers
        Number of worker processes (local, or the Dask ``LocalCluster``); the
        default is the number of CPUs (at most the number of points).
    address
        ``tcp://HOST:PORT`` of a running Dask scheduler to join. Unreachable
        within ``timeout`` seconds: ``ConnectionError`` naming the address,
        before any point runs.
    progress
        Show a progress bar over points.

    Returns
    -------
    SweepReport
        Counts; the per-point results are in ``out`` (:func:`specdyn.runs.load`).
    """
    if not isinstance(spec, SweepSpec):
        spec = load_sweep(spec)
    opts = spec.options
    address = address if address is not None else opts.get("address")
    workers = workers if workers is not None else opts.get("workers")
    if executor is None:
        executor = opts.get("executor") or ("dask" if address is not None else "local")
    if address is not None:
        check_address(address)
    executor = v.choice("executor", executor, EXECUTORS)
    if address is not None and executor != "dask":
        raise ValueError("address is for executor 'dask' only")
    if workers is not None:
        workers = v.positive_int("workers", workers)
    timeout = v.positive("timeout", timeout)
    out_dir = Path(out)
    if out_dir.exists() and not out_dir.is_dir():
        raise ValueError(f"out {str(out_dir)!r} is a file, not a folder")

    start = time.perf_counter()
    provenance.git_commit()  # the commit the sweep starts from (kept: HEAD may move meanwhile)
    with store.lock(out_dir):
        store.open_sweep(out_dir, spec)
        todo, skipped = [], 0
        for p in spec.points:
            status = store.point_status(out_dir, p.run_id)
            if status == "finished" or (status == "failed" and not retry_failed):
                skipped += 1
            else:
                todo.append(p)
        report = SweepReport(out_dir, len(spec.points), skipped, 0, 0, 0.0)
        stream: Iterator[Outcome] = iter(())
        if todo:
            n_workers = workers or max(1, min(len(todo), os.cpu_count() or 1))
            # connects to (or starts) a Dask cluster before anything is written: fail fast
            stream = execute(todo, executor, n_workers, address=address, timeout=timeout)
        try:
            store.write_spec(out_dir, spec)
            by_id = {p.run_id: p for p in todo}
            for outcome in _progress(stream, total=len(todo), desc=f"sweep {spec.experiment}",
                                     enabled=progress and bool(todo)):
                store.write_point(out_dir, by_id[outcome.run_id], outcome)
                if outcome.status == "finished":
                    report.finished += 1
                else:
                    report.failed += 1
                    report.failed_ids.append(outcome.run_id)
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()  # stops the executor's workers
    report.wall_time = time.perf_counter() - start
    return report
