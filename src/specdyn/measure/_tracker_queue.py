"""The tracker's worker thread and the queue in front of it: what happens when it falls behind.

:class:`RecordQueue` hands the copies of each record (a ``Job``) to one background
thread, which calls the tracker's ``handle(job)``. Its policy (``"coalesce"``: at most
one record waits, a newer one replaces it; ``"block"``: every record is kept, ``submit``
waits while the queued copies exceed ``max_pending_bytes``) is
:mod:`specdyn.measure.tracker`'s "When the worker falls behind".
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable

from specdyn.measure._tracker_hooks import Job

__all__ = ["RecordQueue"]


class RecordQueue:
    """Jobs waiting for the worker thread, bounded by the policy; the thread runs
    ``handle(job)`` and hands an error it raises to ``on_error``."""

    def __init__(self, policy: str, max_pending_bytes: int, handle: Callable[[Job], None],
                 on_error: Callable[[BaseException], None]) -> None:
        self.policy, self.max_pending_bytes = policy, max_pending_bytes
        self.handle, self.on_error = handle, on_error
        self.jobs: deque[Job] = deque()
        self.cv = threading.Condition()
        self.busy = self.stopping = False
        self.pending_bytes = self.peak_pending_bytes = 0
        self.thread = threading.Thread(target=self._work, name="specdyn-tracker", daemon=True)
        self.thread.start()

    def submit(self, job: Job) -> list[int]:
        """Queue ``job``; return the steps of the waiting records it replaced (coalesce)."""
        replaced: list[int] = []
        with self.cv:
            if self.policy == "coalesce":
                while self.jobs:  # waiting, not started: the newer record replaces it
                    old = self.jobs.popleft()
                    self.pending_bytes -= old.nbytes
                    job.coalesced += old.coalesced + [old.step]
                    replaced.append(old.step)
            else:
                while (self.pending_bytes > 0
                       and self.pending_bytes + job.nbytes > self.max_pending_bytes):
                    self.cv.wait()
            self.pending_bytes += job.nbytes
            self.peak_pending_bytes = max(self.peak_pending_bytes, self.pending_bytes)
            self.jobs.append(job)
            self.cv.notify_all()
        return replaced

    def drain(self) -> None:
        """Wait until the worker has nothing queued or running."""
        with self.cv:
            while self.thread.is_alive() and (self.jobs or self.busy):
                self.cv.wait()

    def stop(self) -> None:
        """Stop the thread once the queue is empty (after :meth:`drain`)."""
        with self.cv:
            self.stopping = True
            self.cv.notify_all()
        self.thread.join()

    def _work(self) -> None:
        while True:
            with self.cv:
                while not self.jobs and not self.stopping:
                    self.cv.wait()
                if not self.jobs:
                    return
                job = self.jobs.popleft()
                self.busy = True
            try:
                self.handle(job)
            except BaseException as err:  # noqa: BLE001 - handed to the training thread
                self.on_error(err)
            finally:
                with self.cv:
                    self.pending_bytes -= job.nbytes
                    self.busy = False
                    self.cv.notify_all()
