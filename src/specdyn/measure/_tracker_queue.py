"""The tracker's worker thread and the queue in front of it: what happens when it falls behind.

:class:`RecordQueue` hands the copies of each record (a ``Job``) to one background
thread, which calls the tracker's ``handle(job)``. Its policy is
:mod:`specdyn.measure.tracker`'s "When the worker falls behind":

``"coalesce"``
    Records queue while their copies fit in ``max_pending_bytes``; a record that
    falls due beyond that bound replaces the newest waiting ones (never a
    *kept* record: the first decade of the schedule, ``keep(step)``) until it
    fits. ``submit`` waits only while the records waiting beyond the bound are
    all kept ones (a record alone larger than the bound, as a large model's on a
    GPU: one running and one waiting), so the copies held stay bounded. Across
    ranks (``agreed=True``) a rank cannot drop a record on its own (the others
    would enter its collectives): ``submit`` only queues, and the ranks agree at
    the start of each record which waiting records to skip (:meth:`waiting`,
    :meth:`take_through`); ``submit`` then waits only while the copies exceed
    twice the bound (or three records: one computed, two waiting, so that a
    record can be skipped).
``"block"``
    Every record is kept; ``submit`` waits while the copies exceed the bound.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from specdyn.measure._tracker_hooks import Job

__all__ = ["KEPT_DECADE", "RecordQueue", "Waiting", "coalesced_note", "first_decade"]

#: The first decade of a schedule, never coalesced: its steps below this many times the
#: schedule's first positive step (0 .. 9 for ``Schedule.per_decade`` and ``Schedule.log``).
KEPT_DECADE = 10


def first_decade(scheduled: Callable[[int], bool], limit: int = 10**5
                 ) -> Callable[[int], bool]:
    """``step -> bool``: whether ``step`` lies in the schedule's first decade (kept).

    The first positive scheduled step is looked for up to ``limit``; a schedule
    with none there keeps step 0 only.
    """
    first = next((s for s in range(1, limit) if scheduled(s)), None)
    bound = KEPT_DECADE * first if first is not None else 1
    return lambda step: step < bound


def coalesced_note(coalesced: list[tuple[int, int]], n_records: int) -> str:
    """The one line ``close()`` prints when records were coalesced: how many, which, and
    how to keep them."""
    steps = sorted(s for s, _ in coalesced)
    return (f"SpectrumTracker: {len(steps)} of {len(steps) + n_records} scheduled records were "
            f"coalesced into later ones (steps {steps[0]} .. {steps[-1]}; the list is in "
            "tracker.coalesced and record.json) because the measurement fell behind training; "
            "to keep every one pass policy='block' (training then waits), track fewer layers "
            "(modules=...) or use a sparser schedule (e.g. Schedule.per_decade(5))")


@dataclass(frozen=True)
class Waiting:
    """What waits behind the record being computed: how many, the newest step, whether
    the copies held exceed the bound."""

    count: int
    newest: int
    over: bool


class RecordQueue:
    """Jobs waiting for the worker thread, bounded by the policy; the thread runs
    ``handle(job)`` and hands an error it raises to ``on_error``.

    ``keep(step)``: a record the ``"coalesce"`` policy never drops; ``agreed``: drops
    are agreed across ranks by the worker (module docstring), not made by ``submit``.
    """

    def __init__(self, policy: str, max_pending_bytes: int, handle: Callable[[Job], None],
                 on_error: Callable[[BaseException], None], *,
                 keep: Callable[[int], bool] = lambda step: False, agreed: bool = False
                 ) -> None:
        self.policy, self.max_pending_bytes = policy, max_pending_bytes
        self.handle, self.on_error = handle, on_error
        self.keep, self.agreed = keep, agreed
        self.jobs: deque[Job] = deque()
        self.cv = threading.Condition()
        self.busy = self.stopping = False
        self.running: Job | None = None
        self.pending_bytes = self.peak_pending_bytes = 0
        self.thread = threading.Thread(target=self._work, name="specdyn-tracker", daemon=True)
        self.thread.start()

    def submit(self, job: Job) -> list[int]:
        """Queue ``job``; return the steps of the waiting records it replaced (coalesce)."""
        replaced: list[int] = []
        with self.cv:
            if self.policy == "coalesce" and not self.agreed:
                # the newest waiting records first: the earlier ones (and the kept first
                # decade) stay, the new one replaces what lies just before it
                for old in reversed(list(self.jobs)):
                    if self.pending_bytes + job.nbytes <= self.max_pending_bytes:
                        break
                    if self.keep(old.step):
                        continue
                    self.jobs.remove(old)
                    self.pending_bytes -= old.nbytes
                    job.coalesced += old.coalesced + [old.step]
                    replaced.append(old.step)
                job.coalesced.sort()
                # kept records beyond the bound: wait for them rather than hold more copies
                while (self.jobs and self.pending_bytes + job.nbytes > self.max_pending_bytes
                       and all(self.keep(old.step) for old in self.jobs)):
                    self.cv.wait()
            else:
                bound = self.max_pending_bytes
                if self.policy == "coalesce":  # agreed: drops wait for the ranks' next record
                    bound = max(2 * bound, 3 * job.nbytes)
                while self.pending_bytes > 0 and self.pending_bytes + job.nbytes > bound:
                    self.cv.wait()
            self.pending_bytes += job.nbytes
            self.peak_pending_bytes = max(self.peak_pending_bytes, self.pending_bytes)
            self.jobs.append(job)
            self.cv.notify_all()
        return sorted(replaced)

    def waiting(self) -> Waiting:
        """The records waiting behind the running one (for the ranks' agreement)."""
        with self.cv:
            newest = self.jobs[-1].step if self.jobs else -1
            return Waiting(len(self.jobs), newest,
                           self.pending_bytes > self.max_pending_bytes)

    def take_through(self, step: int) -> list[Job]:
        """Remove the waiting jobs up to ``step`` (which must be queued): the worker runs
        the last instead of the one it holds, whose bytes are released with the others."""
        with self.cv:
            taken = []
            while self.jobs and self.jobs[0].step <= step:
                taken.append(self.jobs.popleft())
            if not taken or taken[-1].step != step:
                raise RuntimeError(f"SpectrumTracker: step {step} is not queued on this rank")
            if self.running is not None:
                self.pending_bytes -= self.running.nbytes
            for job in taken[:-1]:
                self.pending_bytes -= job.nbytes
            self.running = taken[-1]
            self.cv.notify_all()
            return taken

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
                job = self.running = self.jobs.popleft()
                self.busy = True
                # a submit waiting for the queue to empty (kept records beyond the bound)
                # may go on now: without this it would wait for the whole record
                self.cv.notify_all()
            try:
                self.handle(job)
            except BaseException as err:  # noqa: BLE001 - handed to the training thread
                self.on_error(err)
            finally:
                with self.cv:
                    if self.running is not None:
                        self.pending_bytes -= self.running.nbytes
                    self.running = None
                    self.busy = False
                    self.cv.notify_all()
