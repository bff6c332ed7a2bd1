"""Record spectra of any torch model during training, in two lines, off the training thread.

>>> tracker = SpectrumTracker(model, out="runs/spectra")   # doctest: +SKIP
>>> for x, y in loader:                                    # doctest: +SKIP
...     loss = loss_fn(model(x), y); loss.backward(); opt.step(); opt.zero_grad()
...     tracker.step()
>>> tracker.close()                                        # doctest: +SKIP
>>> df = read_spectra("runs/spectra")                      # doctest: +SKIP

The tracker is nine pieces, each in its own module: this one (the public
class); its settings (:mod:`specdyn.measure.tracker_config`); its worker thread
and queue policy (:mod:`specdyn.measure._tracker_queue`); what is copied and when
(:mod:`specdyn.measure._tracker_hooks`); the folder it writes
(:mod:`specdyn.measure._tracker_files`); the math of a record, its spectra
and precision policy (:mod:`specdyn.measure._tracker_measure`, on the
batched routines of :mod:`specdyn.measure.spectra`); the summaries, in
the helper process or the worker thread
(:mod:`specdyn.measure._summary_process`); and, under ``torch.distributed``,
the ranks' rounds (:mod:`specdyn.measure._tracker_ranks`) with their
reductions and sharded weights (:mod:`specdyn.measure._tracker_reduce`,
:mod:`specdyn.measure._tracker_shards`).

Conventions
-----------
Steps
    ``tracker.step()`` closes iteration ``s`` (``s = 0, 1, ...``). At a
    scheduled ``s`` the forward hooks keep (a detached copy of) the outputs of
    the tracked modules seen during iteration ``s`` (of a widening ``Linear``,
    its input and weight: ``_tracker_measure``), up to ``max_samples`` rows,
    and ``step()`` copies the tracked weight matrices (after that iteration's
    update). ``close()`` (and leaving a ``with`` block without an exception)
    records the last step ``step()`` closed when the schedule missed it
    (weights only: its forward pass had no hooks), so a run always ends with a
    record.
Hooks
    The forward hooks exist only around a scheduled step: ``step()``
    registers them when the *next* step is scheduled and the record removes
    them, so every other forward pass takes torch's hook-free path (with the
    hooks always registered they cost ~3 % of a cheap training step). An
    explicit ``record()`` at a step that is not scheduled measures the
    weights only (its activations are listed in ``skipped``, with the reason)
    unless ``arm()`` was called before that step's forward pass.
Layers
    Which matrices and outputs are measured, and how each is read (Q/K/V
    split of attention, GPT-2 ``Conv1D``, embeddings, convolutions; sample
    and feature axes), is stated in :mod:`specdyn.measure.layers`, an open
    registry: ``register_layer(MyLayer, matrices, kind=...)`` makes a module
    type of your own tracked like the built-in ones.
Settings
    Every setting is a field of :class:`~specdyn.measure.TrackerConfig` (its
    docstring documents each): ``SpectrumTracker(model, out=..., ...)`` and
    ``SpectrumTracker(model, config=TrackerConfig(out=..., ...))`` are the same.
Activations
    Spectrum: eigenvalues of the centred covariance ``H_c^T H_c / n``
    (n samples), decreasing; MP ratio ``p / (n - 1)``.
Weights
    The ``out x in`` matrix ``W``; spectrum: eigenvalues of ``W^T W / out``
    (``weight_spectrum(W, "rows")``), so i.i.d. entries of variance ``s2`` give
    Marchenko-Pastur with ``ratio = in / out``.
Where the work happens
    Training thread: ``step()`` only copies tensors (on their own device)
    and hands the copies to the worker. Worker thread: the spectra, on the
    copies' device (on a CUDA device on the worker's own stream, which waits
    for an event recorded after the copies: the training stream never queues
    behind a record's kernels; ``_tracker_hooks.SideStreams``), on an
    accelerator all matrices of one shape in one batched ``eigvalsh``
    (``spectra.batched_gram_eigenvalues``; on a CPU one at a time), float32
    first where float32 resolves what the summaries read
    (``precision="auto"``, the rule and the cheaper Grams of large and
    low-rank layers: :mod:`specdyn.measure._tracker_measure`). Then the row
    files. Helper process (shared by the process's trackers, started when the
    tracker is built, so that its start-up overlaps the first steps;
    ``summary_process=False``: the worker thread): the fits and tests, host
    numpy, which holds the GIL.
When the worker falls behind
    ``policy="coalesce"`` (default): records queue behind the one being
    computed while their copies fit in ``max_pending_bytes`` (256 MiB by
    default), so ``step()`` never waits and every scheduled step is measured
    whenever the worker keeps up on average; beyond the bound a record that
    falls due replaces the newest waiting ones (their copies are dropped),
    except the first decade of the schedule (steps below ten times its first
    positive step: 0 .. 9 for the default), which is always kept (``step()``
    waits for it only when its records alone exceed the bound). Each
    replaced step is listed in ``coalesced`` (``(step, replaced_by)``),
    ``skipped`` and ``record.json`` (``"coalesced"``); the table holds
    measured steps only; ``close()`` prints one line saying how many were
    coalesced, which, and how to keep them. ``policy="block"``: every record
    is computed; ``step()`` waits while the queued copies exceed
    ``max_pending_bytes``.
Distributed training
    Under ``torch.distributed`` (initialised, more than one process;
    ``distributed=None``, the default) every rank builds the tracker on its
    model at the same point: rank 0 writes ``out`` (``out`` is ``None`` on the
    others, whose ``table()`` is empty), module outputs are measured over the
    global batch (each rank's rows, at most ``ceil(max_samples / world)``),
    weights sharded by ``fully_shard`` from the ranks' pieces without a
    gather, replicated (DDP) weights by rank 0; every rank enters the same
    collectives, coalescing is agreed, and a rank that closes early answers
    the others' records until all have closed
    (:mod:`specdyn.measure._tracker_ranks`).
Table and files
    Tidy rows ``(step, layer, quantity, rank, value, verdict)`` of measured
    steps, in memory or streamed to ``out=DIR`` (one Parquet file a step,
    written atomically, and ``record.json``); the quantities, the layout and
    resuming from a checkpoint (``state_dict()`` / ``load_state_dict()``):
    :mod:`specdyn.measure._tracker_files`.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd

from specdyn import _validate as v
from specdyn.measure import _tracker_files as files
from specdyn.measure._summary_process import Options, shared_helper
from specdyn.measure._tracker_files import Row, frame, read_spectra, read_tracker_record
from specdyn.measure._tracker_hooks import Hooks, Job, SideStreams, schedule_predicate
from specdyn.measure._tracker_measure import RecordMath
from specdyn.measure._tracker_queue import RecordQueue, coalesced_note, first_decade
from specdyn.measure._tracker_ranks import FINAL, RECORD, Ranks, ranks_for
from specdyn.measure._tracker_shards import is_sharded
from specdyn.measure.layers import tracked_layers
from specdyn.measure.tracker_config import DEFAULT_SCHEDULE, POLICIES, TrackerConfig

__all__ = ["POLICIES", "SpectrumTracker", "read_spectra", "read_tracker_record"]

_STATE_VERSION = 1

_COALESCED = ("coalesced (policy='coalesce'): the copies waiting for the worker exceeded "
              "max_pending_bytes when a newer record fell due and replaced this one")


class SpectrumTracker:
    """Record activation and weight spectra of a torch model at scheduled steps.

    Parameters
    ----------
    model
        A ``torch.nn.Module``.
    modules, schedule, **settings
        The settings of :class:`~specdyn.measure.TrackerConfig` (which documents each),
        as keywords (``modules`` and ``schedule`` also by position);
    config
        or all of them as one :class:`~specdyn.measure.TrackerConfig` (not both ways).

    Attributes
    ----------
    config
        The tracker's :class:`~specdyn.measure.TrackerConfig`.
    rank, world
        This process's rank and the number of ranks (0 and 1 outside
        ``torch.distributed``); rank 0 writes.
    measure_cpu_s
        CPU seconds spent measuring (spectra, fits, tests) by the thread that did
        it, plus the summary process's CPU for this tracker's records.
    peak_pending_bytes
        The largest backlog of queued copies so far, in bytes (at most
        ``max_pending_bytes``, or one record when a record alone is larger;
        ``"coalesce"`` across ranks: twice that, or three records).
    coalesced
        ``(step, replaced_by)`` of each record the ``"coalesce"`` policy dropped.
    record_costs
        One dict a computed record: ``step``, ``copy_s`` (training thread; on an
        accelerator the time to launch the copies), ``spectra_s``,
        ``summaries_s``, ``write_s`` (wall seconds) and ``spectra_cpu_s``,
        ``summaries_cpu_s`` (with the summary process's), ``write_cpu_s``
        (CPU seconds of the thread that did it; torch's intra-op pool not
        counted; a float64 redo counts as spectra), ``redone_float64`` (matrices
        tried in float32 and redone in float64).
    capture
        The hooks (registered only around scheduled steps, see ``arm()``) keep
        module outputs only while this is true (default); the framework
        adapters turn it off outside training steps, so that evaluation
        batches never enter a training step's activations.

    Errors
    ------
    Non-finite weights or activations (a diverged run) raise
    ``FloatingPointError`` naming the layer and the step, from the next call
    to ``step()``, ``record()``, ``flush()``, ``table()`` or ``close()``; rows
    of earlier steps stay in ``out``.
    """

    def __init__(self, model: Any, modules: Any = None, schedule: Any = DEFAULT_SCHEDULE, *,
                 config: TrackerConfig | None = None, **settings: Any) -> None:
        if not hasattr(model, "named_modules"):
            raise ValueError(f"model must be a torch.nn.Module, got {type(model).__name__}")
        cfg = self.config = TrackerConfig.of(config, modules, schedule, settings)
        self.model = model
        self.steps = cfg.steps
        self._scheduled = schedule_predicate(cfg.schedule, self.steps)
        self._kept = first_decade(self._scheduled)  # never coalesced
        self.max_samples, self.top, self.max_dense = cfg.max_samples, cfg.top, cfg.max_dense
        self.fit, self.outliers, self.background = cfg.fit, cfg.outliers, cfg.background
        self._options = Options(fit=cfg.fit, n_boot=cfg.n_boot, outliers=cfg.outliers,
                                alpha=cfg.alpha, top=cfg.top, max_dense=cfg.max_dense)
        callbacks = cfg.callbacks()
        self.matrices, self.sites = tracked_layers(model, cfg.modules, weights=cfg.weights,
                                                   activations=cfg.activations, heads=cfg.heads)
        dist = ranks_for(cfg.distributed)
        self._ranks = None if dist is None else Ranks(
            dist, self.matrices, self.sites, max_samples=cfg.max_samples,
            max_dense=cfg.max_dense, top=cfg.top, key=cfg.key(model),
            coalesce=cfg.policy == "coalesce", keep=self._kept)
        if self._ranks is None and any(is_sharded(m.get()) for m in self.matrices):
            raise ValueError("the model's weights are sharded across ranks (DTensor): leave "
                             "distributed=None (or True) with torch.distributed initialised")
        self.rank = 0 if self._ranks is None else self._ranks.rank
        self.world = 1 if self._ranks is None else self._ranks.world
        writer = self.rank == 0
        self._callbacks = callbacks if writer else []

        self.current_step = 0
        self.skipped: list[tuple[int, str, str, str]] = []
        self.coalesced: list[tuple[int, int]] = []
        self.record_costs: list[dict[str, float]] = []
        self.n_records = 0
        self.measure_cpu_s = 0.0
        self._last_recorded: int | None = None
        self._rows: list[Row] = []
        self._active = False
        self.capture = True
        self._hooks = Hooks(self.sites, cfg.max_samples if self._ranks is None
                            else self._ranks.local_samples, lambda: self.capture)
        if self._ranks is not None:  # module outputs are reduced over ranks as they are
            self._hooks.inputs = False
        self._error: BaseException | None = None
        self._failed = False
        self._closed = False
        self._resumed = False
        self.out = None if cfg.out is None or not writer else Path(cfg.out)
        self._existing: int | None = None
        if self.out is not None:
            self._existing = files.open_folder(self.out, self.layer_table(), cfg.overwrite)
            self._write_record("running")
        self._streams = SideStreams()  # the worker's CUDA streams (none on a CPU)
        # Fits and tests in the shared helper process (specdyn.measure._summary_process),
        # started now: its start-up (about a second) overlaps the first steps.
        in_helper = writer and self.background and cfg.summary_process and (cfg.fit or cfg.outliers)
        self._math = RecordMath(
            self.sites, max_dense=self.max_dense, top=self.top, precision=cfg.precision,
            options=self._options, in_helper=in_helper)
        if in_helper:
            shared_helper()
        # the worker thread and the jobs waiting for it (module docstring: its policy)
        self._queue = RecordQueue(cfg.policy, cfg.max_pending_bytes, self._handle,
                                  self._hand_over, keep=self._kept,
                                  agreed=self._ranks is not None) if self.background else None
        self._active = self._scheduled(0)
        if self._active:
            self.arm()

    @property
    def peak_pending_bytes(self) -> int:
        """The largest backlog of queued copies so far, in bytes (class docstring)."""
        return 0 if self._queue is None else self._queue.peak_pending_bytes

    # -- setup ---------------------------------------------------------------
    def layer_table(self) -> dict[str, list[dict[str, Any]]]:
        """What is tracked and how each matrix / output is read (also in ``record.json``)."""
        return {"weights": [m.as_row() for m in self.matrices],
                "activations": [s.as_row() for s in self.sites]}

    def settings(self) -> dict[str, Any]:
        """The tracker's settings (in ``record.json``)."""
        return self.config.recorded(self.model)

    def _write_record(self, status: str, error: str | None = None) -> None:
        if self.out is None:
            return
        from specdyn.provenance import run_record

        extra: dict[str, Any] = {
            "kind": "spectrum_tracker", "layers": self.layer_table(),
            "step": self.current_step, "n_records": self.n_records,
            "coalesced": [list(c) for c in self.coalesced[-1000:]],
            "skipped": [list(s) for s in self.skipped[-1000:]]}
        if self._ranks is not None:
            extra["ranks"] = {"world": self.world, "rows_per_rank": self._ranks.local_samples,
                              "sharded": [m.name for m in self._ranks.sharded]}
        files.write_record(self.out, run_record(self.settings(), status=status, error=error,
                                                extra=extra))

    # -- public API ----------------------------------------------------------
    def arm(self) -> None:
        """Register the forward hooks now (``step()`` does it before each scheduled step).

        For an explicit ``record()`` at a step the schedule does not include:
        call ``arm()`` before that step's forward pass and the record measures
        its module outputs too (without it, weights only). The hooks go again
        at the next ``record()`` or ``step()``.
        """
        if self._closed:
            raise ValueError("arm: the tracker is closed")
        self._hooks.arm()

    def step(self) -> None:
        """Close the current iteration: copy what a scheduled record needs, then advance.

        The hooks are registered only if the next step is scheduled.
        """
        self._raise_pending()
        if self._active and not self._failed:
            self.record()
        elif self._hooks.armed:  # armed by arm() for a record that did not come
            self._hooks.disarm()
        self.current_step += 1
        self._active = self._scheduled(self.current_step)
        if self._active and not self._failed:
            self.arm()

    def record(self) -> None:
        """Measure now (at ``current_step``) whatever is available, schedule or not.

        Weights always; module outputs if the hooks were armed for this step
        (a scheduled step, or ``arm()`` before its forward pass), else those
        are listed in ``skipped``. The step then counts as recorded:
        ``step()`` does not record it again. Across ranks every rank must call
        it at the same step.
        """
        self._raise_pending()
        if self._closed:
            raise ValueError("record: the tracker is closed")
        self._record(self.current_step, "step {s} is not scheduled (call tracker.arm() before "
                                        "its forward pass to record them)")

    def _record(self, s: int, unarmed: str, final: bool = False) -> None:
        """Copy the weights and what the hooks kept at step ``s`` and hand them over."""
        if self.out is not None and not self._resumed:
            files.refuse_mixing(self.out, self._existing, s)
        t0 = time.perf_counter()
        ranks = self._ranks
        mats = self.matrices if ranks is None else ranks.replicated if ranks.writer else []
        W = [(m.name, m.get().clone()) for m in mats]
        armed = self._hooks.armed
        acts, factors = self._hooks.take()
        self._active = False
        if not armed:
            why = "hooks not armed: " + unarmed.format(s=s)
            self.skipped.extend((s, site.name, "activation", why) for site in self.sites)
            acts, factors = [], {}
        job = Job(s, W, acts, copy_s=time.perf_counter() - t0, factors=factors,
                  shards=[] if ranks is None else ranks.pieces(), final=final)
        self._last_recorded = s
        if self._queue is None:
            self._run(job)
            self._raise_pending()
            return
        self._streams.mark(job)
        for old in self._queue.submit(job):  # the policy (module docstring)
            self.skipped.append((old, "*", "record", _COALESCED))

    def flush(self) -> None:
        """Wait until every queued measurement is written; raise a worker error, if any."""
        if self._queue is not None:
            self._queue.drain()
        self._raise_pending()

    def table(self) -> pd.DataFrame:
        """All records as a tidy DataFrame ``(step, layer, quantity, rank, value, verdict)``:
        measured steps only (rank 0's; empty on the other ranks)."""
        self.flush()
        if self.out is not None:
            return read_spectra(self.out)
        return frame(self._rows)

    def state_dict(self) -> dict[str, Any]:
        """What a checkpoint needs to resume this record (waits for queued work first)."""
        self.flush()
        return {"version": _STATE_VERSION, "step": self.current_step,
                "layers": [m.name for m in self.matrices] + [s.name for s in self.sites],
                "n_records": self.n_records}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue from a checkpoint's ``state_dict()``: same dataset, no duplicated step.

        Rows at or after the resumed step (written by the interrupted run after
        its checkpoint) are removed; training replays those steps.
        """
        if not isinstance(state, dict) or state.get("version") != _STATE_VERSION:
            raise ValueError("load_state_dict: state must come from SpectrumTracker.state_dict()")
        layers = [m.name for m in self.matrices] + [s.name for s in self.sites]
        if state.get("layers") != layers:
            raise ValueError("load_state_dict: the saved tracker measured other layers; build "
                             "the tracker with the same model, modules and options")
        self.flush()
        step = v.positive_int("state['step']", state["step"], minimum=0)
        self.current_step = step
        self.n_records = int(state.get("n_records", 0))
        self._last_recorded = step - 1 if step > 0 else None  # the checkpoint's own history
        self._hooks.disarm()
        self._active = self._scheduled(step)
        if self._active:
            self.arm()
        if self.out is not None:
            files.drop_rows_from(self.out, step)
            self._write_record("running")
        else:
            self._rows = [r for r in self._rows if r[0] < step]
        self._resumed = True

    def close(self, *, final: bool = True) -> None:
        """Record the last step if the schedule missed it, finish queued work, write the record.

        ``final=False`` skips that last record (the context manager passes it
        when the block raised). Rows stay. Prints one line (rank 0) when the
        ``"coalesce"`` policy dropped scheduled steps. Across ranks it returns
        once every rank has closed (it answers the others' records meanwhile).
        """
        if self._closed:
            return
        last = self.current_step - 1
        if (final and not self._failed and self._error is None and self.matrices and last >= 0
                and (self._last_recorded is None or self._last_recorded < last)):
            self._hooks.disarm()  # its forward pass is over: weights only
            self._record(last, "step {s}, the last, was not scheduled; close() recorded its "
                               "weights", final=True)
        self._closed = True
        self._hooks.disarm()
        try:
            self.flush()
        finally:
            try:
                if self._ranks is not None and not self._failed:
                    self._ranks.answer_until_all_closed()
            finally:
                if self._queue is not None:
                    self._queue.stop()
                if not self._failed:
                    self._write_record("finished")
                if self.coalesced and self.rank == 0:
                    print(coalesced_note(self.coalesced, self.n_records), file=sys.stderr)

    def __enter__(self) -> SpectrumTracker:
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        self.close(final=exc_type is None)

    # -- worker --------------------------------------------------------------
    def _raise_pending(self) -> None:
        err, self._error = self._error, None
        if err is not None:
            raise err

    def _handle(self, job: Job) -> None:  # the worker thread's work (RecordQueue)
        if not self._failed:
            self._run(job)

    def _hand_over(self, err: BaseException) -> None:  # raised in the training thread next
        self._error = err

    def _run(self, job: Job) -> None:
        t0 = time.thread_time()
        cost = {"step": float(job.step), "copy_s": job.copy_s}
        try:
            with self._streams.use(job):
                given, more = [], []
                if self._ranks is not None:  # agree with the other ranks, reduce their parts
                    r = self._ranks.round(job, FINAL if job.final else RECORD,
                                          queue=self._queue, switched=self._streams.wait)
                    self.skipped += [(s, "*", "record", _COALESCED) for s in r.coalesced]
                    if r.job is None:  # close()'s record, dropped: the ranks disagree
                        self.skipped.extend(r.skipped)
                        return
                    job, given, more = r.job, r.spectra, r.skipped
                    cost["step"] = float(job.step)
                here = job if self._ranks is None else dataclasses.replace(  # rank 0: the rest
                    job, activations=[], factors={}, shards=[])
                rows, skipped, helper_cpu = (self._math.measure(here, cost, self.out, given)
                                             if self.rank == 0 else ([], [], 0.0))
            self.skipped.extend(more + skipped)
            self.measure_cpu_s += helper_cpu
        except FloatingPointError as err:
            self._failed = True
            self._error = err
            self._write_record("failed", str(err))
            return
        finally:
            self.measure_cpu_s += time.thread_time() - t0
        w0, wc = time.perf_counter(), time.thread_time()
        self.coalesced += [(s, job.step) for s in job.coalesced]
        if self.out is not None:
            files.write_rows(self.out, job.step, frame(rows))
        else:
            self._rows.extend(rows)
        cost["write_s"], cost["write_cpu_s"] = time.perf_counter() - w0, time.thread_time() - wc
        self.record_costs.append(cost)
        self.n_records += 1
        if self._callbacks:
            df = frame(rows)
            for cb in self._callbacks:
                cb(df)
