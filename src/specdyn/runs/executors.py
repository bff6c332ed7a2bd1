"""Where a sweep's points run: inline, a local process pool, or Dask.

Every executor takes a list of :class:`~specdyn.runs.spec.Point` and
yields one :class:`Outcome` per point as points finish. Workers write no
files and need no shared file system: they return the point's tidy table to
the parent, which alone stores it (:mod:`specdyn.runs.store`).

``"local"`` (default)
    ``concurrent.futures.ProcessPoolExecutor`` on this machine, one
    single-process pool per worker slot, so that a worker that dies (killed,
    out of memory) is known to have died with its own point: that point is
    tried again on a fresh process, at most three times in all, then
    recorded as failed; the other points are not affected.
``"dask"``
    Dask distributed: a ``LocalCluster`` of worker processes, or, with an
    ``address``, an existing cluster (a scheduler started by hand, by
    dask-jobqueue on SLURM/PBS, or by dask-kubernetes). Dask reschedules the
    tasks of a dead worker itself and gives up after three deaths
    (``KilledWorker``), which is recorded as a failure of that point.
``"inline"``
    One point after another in this process: for debugging, and for sweeps
    run from inside a worker process (which may not start processes itself).

On exit or interrupt every executor stops its workers: a point finishing
after the parent left would be computed for nothing.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import logging
import multiprocessing
import os
import signal
import socket
import tempfile
import threading
import time
import traceback
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd

from specdyn._cancel import raise_if_cancelled
from specdyn._threads import limit_threads
from specdyn.runs.config import build_config
from specdyn.runs.registry import experiment_named
from specdyn.runs.spec import Point
from specdyn.runs.store import Outcome, tidy_table

#: How many times a point (a task) may be running when its worker process dies.
MAX_WORKER_DEATHS = 3

T = TypeVar("T")
R = TypeVar("R")


def run_point(point: Point) -> Outcome:
    """Run one point in the current process and return its tidy table (never raises).

    The experiment writes into a temporary folder that is removed afterwards;
    its Parquet tables are read back and stacked into tidy rows (see
    :func:`specdyn.runs.store.tidy_table`). An exception inside the
    experiment becomes a ``failed`` outcome carrying the traceback.
    """
    start = time.perf_counter()
    try:
        exp = experiment_named(point.experiment, point.module)
        cfg = build_config(exp.config_cls, point.config, lambda key: f"run {point.run_id}")
        with tempfile.TemporaryDirectory(prefix=f"specdyn-{point.run_id}-") as tmp:
            result = exp.run(cfg, Path(tmp))
            tables = [pd.read_parquet(p) for p in result.tables if Path(p).suffix == ".parquet"]
        table = tidy_table(tables, point)
        summary = dict(result.summary)
        status, error = "finished", None
    except Exception:
        raise_if_cancelled()  # inline: a cancel a library reported as its own error
        table, summary = None, {}
        status, error = "failed", traceback.format_exc()
    return Outcome(point.run_id, status, time.perf_counter() - start, table, summary, error,
                   socket.gethostname(), os.getpid())


def execute(points: list[Point], executor: str, workers: int, *, address: str | None = None,
            timeout: float = 5.0) -> Iterator[Outcome]:
    """Outcomes of ``points`` on ``executor``, as they finish.

    A Dask scheduler is reached (or a cluster started) here, before the first
    point runs: an unreachable ``address`` raises ``ConnectionError`` at once.
    Close the iterator to stop the workers early.
    """
    if executor == "inline":
        return (run_point(p) for p in points)
    if executor == "dask":
        client, cluster = _start_dask(workers, address, timeout)
        return _execute_dask(points, client, cluster)
    return _execute_local(points, workers)


# --------------------------------------------------------------------------- local


def _mp_context() -> multiprocessing.context.BaseContext:
    # forkserver: workers fork from a clean server with specdyn preloaded (fast, thread-safe);
    # spawn where there is no forkserver (Windows)
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["specdyn.runs.executors"])
        return ctx
    return multiprocessing.get_context("spawn")


def _worker_init(parent: int, threads: int) -> None:
    # Ctrl-C (and SIGTERM from `timeout` or a batch scheduler) goes to the whole process
    # group; only the parent handles it, and it stops the workers itself
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    # The cores are shared out between the workers (as Dask's nanny does): default-sized
    # pools in every worker spin against each other, measured 20x slower with 2 workers
    # on 2 cores (BENCHMARKS.md, Sweeps)
    limit_threads(threads)
    threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True).start()


def _exit_with_parent(parent: int) -> None:
    # a concurrent.futures worker holds both ends of its call queue, so it would wait for
    # ever once its parent is SIGKILLed: end it when the parent is gone. The parent's
    # sentinel (a pipe it holds open) says so at once and also when the parent is a zombie
    # not yet reaped (its pid still answers os.kill): a worker left idle after the pool
    # broke (the forkserver killed by the same SIGTERM) would otherwise keep the output
    # pipe of the parent's caller open
    import multiprocessing.connection

    parent_process = multiprocessing.parent_process()
    if parent_process is not None and parent_process.sentinel is not None:
        multiprocessing.connection.wait([parent_process.sentinel])
        os._exit(1)
    while True:  # pragma: no cover - no sentinel (not started by multiprocessing)
        time.sleep(0.5)
        try:
            os.kill(parent, 0)
        except ProcessLookupError:
            os._exit(1)
        except PermissionError:  # pragma: no cover - the pid was reused by another user
            os._exit(1)


class _Slot:
    """One worker slot: a single-process pool, so a broken pool names its one task."""

    def __init__(self, ctx: multiprocessing.context.BaseContext, threads: int) -> None:
        self.pool = cf.ProcessPoolExecutor(1, mp_context=ctx, initializer=_worker_init,
                                           initargs=(os.getpid(), threads))
        self.pid = self.pool.submit(os.getpid).result()  # to stop a point it is running
        self.task: Any = None
        self.future: cf.Future[Any] | None = None

    def close(self) -> None:
        if self.future is not None and not self.future.done():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)  # the point it runs is not wanted any more
        self.pool.shutdown(wait=True, cancel_futures=True)


def _died(p: Point, deaths: int) -> Outcome:
    return Outcome(p.run_id, "failed", 0.0, error=(
        f"the worker process died {deaths} times while running this point "
        "(killed, out of memory or crashed); nothing was recorded from it"))


def _point_key(p: Point) -> str:
    return p.run_id


def _execute_local(points: list[Point], workers: int) -> Iterator[Outcome]:
    """Run points on ``workers`` single-process pools, yielding outcomes as they finish."""
    n = min(workers, len(points))
    threads = max(1, (os.cpu_count() or 1) // max(n, 1))
    return run_local(points, run_point, workers, key=_point_key, died=_died, threads=threads)


def run_local(tasks: Sequence[T], fn: Callable[[T], R], workers: int, *,
              key: Callable[[T], str], died: Callable[[T, int], R], threads: int
              ) -> Iterator[R]:
    """``fn(task)`` of every task on ``workers`` single-process pools, as they finish.

    ``fn`` (a module-level function: it is pickled) must not raise; a task whose
    worker process dies is tried again on a fresh process, at most
    :data:`MAX_WORKER_DEATHS` times in all (``key`` names it), then ``died(task,
    deaths)`` stands for its result. Each worker ignores SIGINT and SIGTERM (the
    parent stops the workers itself, killing those still running, when the iterator
    is closed or raises) and sizes its thread pools to ``threads``.
    """
    ctx = _mp_context()
    queue = deque(tasks)
    deaths: Counter[str] = Counter()
    slots: list[_Slot] = []
    try:
        slots = [_Slot(ctx, threads) for _ in range(min(workers, len(tasks)))]
        while queue or any(s.future is not None for s in slots):
            for i, s in enumerate(slots):
                if s.future is None and queue:
                    task = queue.popleft()
                    try:
                        s.future = s.pool.submit(fn, task)
                    except cf.BrokenExecutor:  # died while idle: a fresh slot
                        s.close()
                        slots[i] = s = _Slot(ctx, threads)
                        s.future = s.pool.submit(fn, task)
                    s.task = task
            busy = {s.future: s for s in slots if s.future is not None}
            done, _ = cf.wait(busy, return_when=cf.FIRST_COMPLETED)
            for fut in done:
                s = busy[fut]
                done_task, s.task, s.future = s.task, None, None
                try:
                    yield fut.result()
                    continue
                except cf.BrokenExecutor:
                    pass
                # the slot's process died with this task: try it again on a fresh process
                s.close()
                slots[slots.index(s)] = _Slot(ctx, threads)
                deaths[key(done_task)] += 1
                if deaths[key(done_task)] >= MAX_WORKER_DEATHS:
                    yield died(done_task, deaths[key(done_task)])
                else:
                    queue.appendleft(done_task)
    finally:
        for s in slots:
            s.close()


# --------------------------------------------------------------------------- dask


def connect_dask(address: str, timeout: float = 5.0) -> Any:
    """A ``distributed.Client`` on the scheduler at ``address``, or ``ConnectionError`` fast."""
    try:
        from distributed import Client
    except ImportError:  # pragma: no cover - dask is an optional dependency
        raise ValueError("executor 'dask' needs dask and distributed: "
                         "pip install 'specdyn[dask]'") from None
    try:
        return Client(address, timeout=timeout)
    except (OSError, TimeoutError) as err:
        raise ConnectionError(f"cannot reach the Dask scheduler at {address} within "
                              f"{timeout:g} s: {err}") from None


def _start_dask(workers: int, address: str | None, timeout: float) -> tuple[Any, Any]:
    """``(client, cluster)``: a new LocalCluster of worker processes, or the one at ``address``."""
    if address is not None:
        return connect_dask(address, timeout), None
    try:
        from distributed import LocalCluster
    except ImportError:  # pragma: no cover
        raise ValueError("executor 'dask' needs dask and distributed: "
                         "pip install 'specdyn[dask]'") from None
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           dashboard_address=None, silence_logs=logging.ERROR)
    try:
        return connect_dask(cluster.scheduler_address, timeout), cluster
    except BaseException:
        cluster.close()
        raise


def _execute_dask(points: list[Point], client: Any, cluster: Any) -> Iterator[Outcome]:
    """Run points on a Dask client, yielding as they finish; closes client (and cluster)."""
    from distributed import as_completed

    futures = []
    try:
        by_key = {}
        for p in points:
            fut = client.submit(run_point, p, key=f"specdyn-point-{p.run_id}", pure=False)
            futures.append(fut)
            by_key[fut.key] = p
        for fut in as_completed(futures):
            p = by_key[fut.key]
            try:
                yield fut.result()
            except Exception:
                # KilledWorker after repeated worker deaths, lost connection, ...
                yield Outcome(p.run_id, "failed", 0.0, error=traceback.format_exc())
            fut.release()
    finally:
        try:
            client.cancel(futures)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
