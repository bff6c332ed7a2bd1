"""Record spectra of any torch model during training, in two lines, off the training thread.

>>> tracker = SpectrumTracker(model, out="runs/spectra")   # doctest: +SKIP
>>> for x, y in loader:                                    # doctest: +SKIP
...     loss = loss_fn(model(x), y); loss.backward(); opt.step(); opt.zero_grad()
...     tracker.step()
>>> tracker.close()                                        # doctest: +SKIP
>>> df = read_spectra("runs/spectra")                      # doctest: +SKIP

The tracker is five pieces, each in its own module: this one (the public
class, its worker thread and its queue policy); what is copied and when
(:mod:`specdyn.measure._tracker_hooks`); the folder it writes
(:mod:`specdyn.measure._tracker_files`); the math of a record, its spectra
and precision policy (:mod:`specdyn.measure._tracker_measure`, on the
batched routines of :mod:`specdyn.measure.spectra`); and the summaries, in
the helper process or the worker thread
(:mod:`specdyn.measure._summary_process`).

Conventions
-----------
Steps
    ``tracker.step()`` closes iteration ``s`` (``s = 0, 1, ...``). At a
    scheduled ``s`` the forward hooks keep (a detached copy of) the outputs of
    the tracked modules seen during iteration ``s`` (of a widening ``Linear``,
    its input and weight: below), up to ``max_samples`` rows, and ``step()``
    copies the tracked weight matrices (after that iteration's update).
    ``close()`` (and leaving a ``with`` block without an exception) records
    the last step ``step()`` closed when the schedule missed it (weights
    only: its forward pass had no hooks), so a run always ends with a record.
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
    and feature axes), is stated in :mod:`specdyn.measure.layers`.
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
    accelerator all matrices of one shape in one batched
    ``eigvalsh`` (``spectra.batched_gram_eigenvalues``; on a CPU one at a
    time). Precision (``precision="auto"``):
    float32 Grams and eigenvalues first, then a check *a posteriori*, matrix by
    matrix, of what its summaries read: float32 eigenvalues are off by at most
    about ``rank_tolerance(lambda_1, shape, float32)`` (``lambda_1 max(n, p)
    eps32``), and the power-law fit's window, its window search (the fit redone
    without the eigenvalues float32 does not resolve may not move the exponent
    by more than a quarter of its interval) and the MP noise variance must be
    resolved at that error (``_summary_process.float32_suffices``); a matrix
    that fails is redone in float64, its summaries with it, and starts in
    float64 at the next record (until its float64 spectrum shows float32 would
    do at twice the float32 bound: a margin, so that a matrix at the rule's
    boundary does not alternate); a matrix whose smaller side is below 128 is
    done in float64 at once (its float64 Gram costs less than the check);
    ``precision="float64"``: float64 throughout. On a CPU a Gram is formed as
    its lower block triangle, what ``eigvalsh`` reads. The output of a
    ``Linear(d_in, d_out)`` or an ``Embedding``, whose rank is at most
    ``d_in`` or its number of rows, is first projected on its range when that
    bound is below half its smaller side, so a ``d_in + 10``-square Gram is
    diagonalised instead of a ``d_out``-square one. A widening ``Linear``
    (``d_in < d_out``; ``_tracker_hooks.takes_input``) is cheaper still: its
    hook keeps the input rows and the weight of that forward pass instead of
    the output (a smaller copy), and the output's spectrum comes from the
    ``d_in``-square ``L^T X_c^T X_c L``, ``W^T W = L L^T`` (Cholesky; the QR
    factor ``R`` of the centred input and ``R W^T`` when ``W^T W`` is
    singular: ``spectra.linear_output_eigenvalues``, about a quarter of the
    work); its float32 error bound is scaled by ``c^2`` (QR: ``c``), ``c =
    ||X_c|| ||W|| / ||Y_c||``. Then the row files.
    Helper process (shared by the process's trackers;
    ``summary_process=False``: the worker thread): the fits and tests, host
    numpy, which holds the GIL. Layers with
    ``min(rows, cols) > max_dense`` get the top ``top or 256`` eigenvalues by
    randomized SVD (``spectra.top_gram_eigenvalues``, its sketch drawn from
    a local generator: the tracker never reads or changes torch's or numpy's
    global random state); their MP fit and outlier test, which need the
    whole spectrum, are skipped with that reason.
When the worker falls behind
    ``policy="coalesce"`` (default): at most one record waits behind the
    one being computed; a record that falls due while one is waiting
    replaces it (the waiting record's copies are dropped), so ``step()``
    never waits for the worker and the copies held are at most two records.
    Each replaced step is listed in ``skipped`` and ``record.json``
    (``"coalesced"``), and gets one row ``(step, "*", "record_coalesced",
    0, <the step that replaced it>, "")`` in the table. ``policy="block"``:
    every record is computed; ``step()`` waits while the queued copies
    exceed ``max_pending_bytes`` (256 MiB by default).
Table
    Tidy rows ``(step, layer, quantity, rank, value, verdict)``. ``quantity``
    is ``"<kind>_eigenvalue"`` (``rank`` = 1, 2, ... decreasing) or a
    per-layer summary with ``rank = 0``: ``<kind>_<column>`` for each of the
    ``SUMMARY_COLUMNS`` of :func:`~specdyn.measure.summary.summarize_spectrum`
    (the columns of ``analyze``, same names, same values:
    ``exponent``, ``exponent_ci_low``, ``exponent_ci_high``, ``exponent_r2``,
    ``exponent_kmin``, ``exponent_kmax``, ``exponent_amplitude`` (``C`` in
    ``lambda_k = C k^-a``), ``exponent_short_window`` (0 / 1),
    ``density_exponent``, ``mp_sigma2``, ``mp_edge``, ``mp_ks``,
    ``n_outliers``, ``cap_reached`` (0 / 1), ``max_outliers``, ``lambda_max``;
    docs/concepts.md), and ``<kind>_samples`` (activation rows), where
    ``<kind>`` is ``activation`` or ``weight``. ``verdict`` is the layer's
    verdict at that step (``layer_verdict``), repeated on each of its rows. A
    summary that cannot be computed (e.g. a spectrum too short for a fit) is left out and
    counted in ``tracker.skipped``, with the reason. ``record_coalesced``
    rows: see above.
Files (``out=DIR``)
    ``DIR/rows/step-<step>.parquet``: one file per recorded step, each
    written atomically (temporary name, then rename), so every file there is
    whole even if the process is killed; ``read_spectra(DIR)`` reads them
    all. ``DIR/record.json``: settings, the layer table (name, kind, the rule
    that made the matrix, its shape; activation axes), status, skipped
    summaries, coalesced steps. ``state_dict()`` / ``load_state_dict()`` carry
    the step, so a run resumed from a checkpoint continues the same dataset:
    files of steps at or after the resumed step (written by the interrupted
    run after its checkpoint) are removed, then rewritten as training replays
    those steps. Layout and writes: :mod:`specdyn.measure._tracker_files`.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from specdyn import _validate as v
from specdyn.measure import _tracker_files as files
from specdyn.measure._summary_process import Options
from specdyn.measure._tracker_files import Row, frame, read_spectra, read_tracker_record
from specdyn.measure._tracker_hooks import Hooks, Job, SideStreams, schedule_predicate
from specdyn.measure._tracker_measure import RecordMath
from specdyn.measure.layers import (
    ActivationSite,
    WeightMatrix,
    activation_sites,
    select_modules,
    weight_matrices,
)
from specdyn.measure.spectra import PRECISIONS
from specdyn.schedule import Schedule

__all__ = ["POLICIES", "SpectrumTracker", "read_spectra", "read_tracker_record"]

_STATE_VERSION = 1
#: The tracker's default schedule: about 10 steps a decade, with no end.
DEFAULT_SCHEDULE = Schedule.per_decade(10)
#: What ``step()`` does when the worker falls behind (module docstring).
POLICIES = ("coalesce", "block")

_COALESCED = ("coalesced (policy='coalesce'): the worker was still computing an earlier "
              "record when a newer one fell due and replaced this one")


class SpectrumTracker:
    """Record activation and weight spectra of a torch model at scheduled steps.

    Parameters
    ----------
    model
        A ``torch.nn.Module``.
    modules
        ``None``: every weight matrix of the model and the outputs of every
        Linear, Conv, Embedding, MultiheadAttention and GPT-2 Conv1D module.
        A name pattern or list of patterns (``"blocks.*.attn"``, ``fnmatch``
        rules) or modules: the matrices inside the selected modules and the
        outputs of the selected modules. A ``{name: module}`` dict as well.
    schedule
        When to measure: a :class:`~specdyn.schedule.Schedule` (default
        ``Schedule.per_decade(10)``: steps 0, 1, 2, ..., 8, 10, 13, 16, ...);
        a list of steps; a callable ``step -> bool``; or an ``int``, which is
        what it is everywhere in specdyn, a *count* of log-spaced steps
        (``Schedule.log``), so it needs ``steps``. For every ``n`` steps pass
        ``Schedule.every(n)``.
    steps
        The index of the run's last ``step()``, if known (a loop of ``T``
        iterations calls ``step()`` for ``s = 0 .. T - 1``: pass ``T - 1``).
        With it the schedule resolves over ``0 .. steps`` exactly as a
        simulator's ``checkpoints`` over a run of ``steps`` updates (an int
        count always includes ``steps``; ``every``/``per_decade`` add it).
        ``None``: unknown; then an int count is refused.
    out
        Folder for the streamed Parquet rows and ``record.json``; ``None``
        keeps the rows in memory (``table()``).
    max_samples
        At most this many activation rows per module and step (the first ones seen).
    weights, activations
        What to record.
    heads
        Also split attention Q, K, V per head.
    top
        Keep only the ``top`` largest eigenvalues of each spectrum in the table
        (the fits and outlier tests use the whole spectrum).
    max_dense
        Layers with ``min(rows, cols)`` above this get only their top
        ``top or 256`` eigenvalues (randomized SVD), no MP fit.
    fit, outliers
        Whether to add power-law fits and Marchenko-Pastur outlier counts.
    n_boot
        Bootstrap resamples for the exponent intervals (small keeps it cheap).
    alpha
        Level of the outlier test.
    background
        Compute in a background thread (``step()`` returns at once); ``False``
        computes inside ``step()``.
    policy
        What ``step()`` does when the worker falls behind: ``"coalesce"``
        (default: never wait; a due record replaces one still waiting, and the
        replaced step is recorded as coalesced) or ``"block"`` (every record
        is computed; wait while the queued copies exceed ``max_pending_bytes``).
    max_pending_bytes
        With ``policy="block"``: bound on the bytes of copies queued for the
        background thread (default 256 MiB): ``step()`` waits only while a new
        record would take the backlog beyond it (a single record larger than
        the bound is still queued, alone). ``0`` waits for each record to finish.
    precision
        ``"auto"`` (float32 Grams and eigenvalues, float64 for the matrices
        whose summaries read eigenvalues float32 does not resolve) or
        ``"float64"``; see the module docstring.
    summary_process
        With ``background``: compute the fits and tests (many small numpy and
        scipy calls, which hold the GIL and so slow a training step of many
        small torch calls) in one helper process shared by this process's
        trackers (:mod:`specdyn.measure._summary_process`, started at the first
        record); ``False`` computes them in the worker thread. Same rows.
    on_record
        A callable or list of callables ``f(rows)``, called (in the worker
        thread) with the DataFrame of each recorded step once it is written;
        e.g. ``specdyn.integrations.TensorBoardLogger(log_dir)``.
    overwrite
        Replace rows already in ``out`` instead of refusing to mix runs.

    Attributes
    ----------
    measure_cpu_s
        CPU seconds spent measuring (spectra, fits, tests) by the thread that did
        it, plus the summary process's CPU for this tracker's records.
    peak_pending_bytes
        The largest backlog of queued copies so far, in bytes (``"block"``: at
        most ``max_pending_bytes``, or one record when a record alone is
        larger; ``"coalesce"``: at most two records).
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
                 steps: int | None = None, out: str | Path | None = None, max_samples: int = 2048,
                 weights: bool = True, activations: bool = True, heads: bool = False,
                 top: int | None = None, max_dense: int = 2048, fit: bool = True,
                 outliers: bool = True, n_boot: int = 50, alpha: float = 0.05,
                 background: bool = True, policy: str = "coalesce",
                 max_pending_bytes: int = 256 * 2**20, precision: str = "auto",
                 summary_process: bool = True, on_record: Any = None,
                 overwrite: bool = False) -> None:
        if not hasattr(model, "named_modules"):
            raise ValueError(f"model must be a torch.nn.Module, got {type(model).__name__}")
        self.model = model
        self.steps = None if steps is None else v.positive_int("steps", steps, minimum=0)
        self._scheduled = schedule_predicate(schedule, self.steps)
        self.max_samples = v.positive_int("max_samples", max_samples, minimum=2)
        self.weights = bool(weights)
        self.activations = bool(activations)
        if not (self.weights or self.activations):
            raise ValueError("weights and activations cannot both be False: nothing to record")
        self.heads = bool(heads)
        self.top = None if top is None else v.positive_int("top", top)
        self.max_dense = v.positive_int("max_dense", max_dense, minimum=3)
        self.fit = bool(fit)
        self.outliers = bool(outliers)
        self.n_boot = v.positive_int("n_boot", n_boot, minimum=0)
        self.alpha = v.in_range("alpha", alpha, 0.0, 1.0, lo_open=True, hi_open=True)
        self.background = bool(background)
        self.policy = v.choice("policy", policy, POLICIES)
        self.max_pending_bytes = v.positive_int("max_pending_bytes", max_pending_bytes,
                                                minimum=0)
        self.precision = v.choice("precision", precision, PRECISIONS)
        self.summary_process = bool(summary_process)
        self._options = Options(fit=self.fit, n_boot=self.n_boot, outliers=self.outliers,
                                alpha=self.alpha, top=self.top, max_dense=self.max_dense)
        self._callbacks = self._as_callbacks(on_record)

        selected = self._resolve(model, modules)
        self.matrices: list[WeightMatrix] = (
            weight_matrices(model, selected, heads=self.heads) if self.weights else [])
        self.sites: list[ActivationSite] = (
            activation_sites(model, selected) if self.activations else [])
        if self.weights and not self.matrices and not self.activations:
            held = "; ".join(  # name the layers and their shapes: that is what to change
                f"{n!r} ({type(mod).__name__}): " + (", ".join(
                    f"{p} {tuple(t.shape)}" for p, t in mod.named_parameters(recurse=False))
                    or "no parameters")
                for n, mod in list((selected or {"<model>": model}).items())[:8])
            raise ValueError(f"modules: the selection holds no weight matrix (every parameter "
                             f"is 1-D or there is none): {held}; select other modules")
        if not (self.matrices or self.sites):
            raise ValueError("modules: nothing to track in the selection")

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
        self._hooks = Hooks(self.sites, self.max_samples, lambda: self.capture)
        self._error: BaseException | None = None
        self._failed = False
        self._closed = False
        self._resumed = False
        self.out = None if out is None else Path(out)
        self._existing: int | None = None
        if self.out is not None:
            self._existing = files.open_folder(self.out, self.layer_table(), bool(overwrite))
            self._write_record("running")
        # Jobs waiting for the worker; what bounds them is the policy (module docstring).
        self._jobs: deque[Job] = deque()
        self._cv = threading.Condition()
        self._busy = False
        self._stop = False
        self._pending_bytes = 0
        self.peak_pending_bytes = 0
        self._thread: threading.Thread | None = None
        self._streams = SideStreams()  # the worker's CUDA streams (none on a CPU)
        # Fits and tests in the shared helper process (see specdyn.measure._summary_process),
        # started at the first record that needs it.
        self._math = RecordMath(
            self.sites, max_dense=self.max_dense, top=self.top, precision=self.precision,
            options=self._options,
            in_helper=self.background and self.summary_process and (self.fit or self.outliers))
        if self.background:
            self._thread = threading.Thread(target=self._work, name="specdyn-tracker",
                                            daemon=True)
            self._thread.start()
        self._active = self._scheduled(0)
        if self._active:
            self.arm()

    # -- setup ---------------------------------------------------------------
    @staticmethod
    def _as_callbacks(on_record: Any) -> list[Callable[[pd.DataFrame], Any]]:
        if on_record is None:
            return []
        cbs = list(on_record) if isinstance(on_record, (list, tuple)) else [on_record]
        for cb in cbs:
            if not callable(cb):
                raise ValueError(f"on_record must be a callable rows -> None or a list of "
                                 f"them, got {type(cb).__name__}")
        return cbs

    @staticmethod
    def _resolve(model: Any, modules: Any) -> dict[str, Any] | None:
        if modules is None:
            return None
        if isinstance(modules, dict):
            return {str(k): m for k, m in modules.items()}
        items = [modules] if isinstance(modules, str) else list(modules)
        named = dict(model.named_modules())
        out: dict[str, Any] = {}
        for item in items:
            if isinstance(item, str):
                out.update(select_modules(model, item))
            else:
                name = next((n for n, m in named.items() if m is item), None)
                if name is None:
                    raise ValueError("modules: every module must belong to the model")
                out[name] = item
        if not out:
            raise ValueError("modules must name at least one module")
        return out

    def layer_table(self) -> dict[str, list[dict[str, Any]]]:
        """What is tracked and how each matrix / output is read (also in ``record.json``)."""
        return {"weights": [m.as_row() for m in self.matrices],
                "activations": [s.as_row() for s in self.sites]}

    def settings(self) -> dict[str, Any]:
        """The tracker's settings (in ``record.json``)."""
        return {"steps": self.steps, "max_samples": self.max_samples, "weights": self.weights,
                "activations": self.activations, "heads": self.heads, "top": self.top,
                "max_dense": self.max_dense, "fit": self.fit, "outliers": self.outliers,
                "n_boot": self.n_boot, "alpha": self.alpha, "policy": self.policy,
                "max_pending_bytes": self.max_pending_bytes, "precision": self.precision,
                "model": type(self.model).__name__}

    def _write_record(self, status: str, error: str | None = None) -> None:
        if self.out is None:
            return
        from specdyn.provenance import run_record

        files.write_record(self.out, run_record(
            self.settings(), status=status, error=error,
            extra={"kind": "spectrum_tracker", "layers": self.layer_table(),
                   "step": self.current_step, "n_records": self.n_records,
                   "coalesced": [list(c) for c in self.coalesced[-1000:]],
                   "skipped": [list(s) for s in self.skipped[-1000:]]}))

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
        ``step()`` does not record it again.
        """
        self._raise_pending()
        if self._closed:
            raise ValueError("record: the tracker is closed")
        self._record(self.current_step, "step {s} is not scheduled (call tracker.arm() before "
                                        "its forward pass to record them)")

    def _record(self, s: int, unarmed: str) -> None:
        """Copy the weights and what the hooks kept at step ``s`` and hand them over."""
        if self._existing is not None and not self._resumed and s <= self._existing:
            raise ValueError(
                f"out={str(self.out)!r} already holds rows up to step {self._existing} of an "
                "earlier run: call tracker.load_state_dict(saved_state) to continue it, pass "
                "overwrite=True to replace it, or choose a new folder")
        t0 = time.perf_counter()
        W = [(m.name, m.get().clone()) for m in self.matrices]
        armed = self._hooks.armed
        acts, factors = self._hooks.take()
        self._active = False
        if not armed:
            why = "hooks not armed: " + unarmed.format(s=s)
            self.skipped.extend((s, site.name, "activation", why) for site in self.sites)
            acts, factors = [], {}
        job = Job(s, W, acts, copy_s=time.perf_counter() - t0, factors=factors)
        self._last_recorded = s
        if self._thread is None:
            self._run(job)
            self._raise_pending()
            return
        self._streams.mark(job)
        self._submit(job)

    def _submit(self, job: Job) -> None:
        """Queue ``job`` for the worker under the policy (module docstring)."""
        with self._cv:
            if self.policy == "coalesce":
                while self._jobs:  # waiting, not started: the newer record replaces it
                    old = self._jobs.popleft()
                    self._pending_bytes -= old.nbytes
                    job.coalesced += old.coalesced + [old.step]
                    self.skipped.append((old.step, "*", "record", _COALESCED))
            else:
                while (self._pending_bytes > 0
                       and self._pending_bytes + job.nbytes > self.max_pending_bytes):
                    self._cv.wait()
            self._pending_bytes += job.nbytes
            self.peak_pending_bytes = max(self.peak_pending_bytes, self._pending_bytes)
            self._jobs.append(job)
            self._cv.notify_all()

    def _drain(self) -> None:
        """Wait until the worker has nothing queued or running."""
        with self._cv:
            while self._thread is not None and self._thread.is_alive() \
                    and (self._jobs or self._busy):
                self._cv.wait()

    def flush(self) -> None:
        """Wait until every queued measurement is written; raise a worker error, if any."""
        self._drain()
        self._raise_pending()

    def table(self) -> pd.DataFrame:
        """All records as a tidy DataFrame ``(step, layer, quantity, rank, value, verdict)``."""
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
        when the block raised). Rows stay.
        """
        if self._closed:
            return
        last = self.current_step - 1
        if (final and not self._failed and self._error is None and self.matrices and last >= 0
                and (self._last_recorded is None or self._last_recorded < last)):
            self._hooks.disarm()  # its forward pass is over: weights only
            self._record(last, "step {s}, the last, was not scheduled; close() recorded its "
                               "weights")
        self._closed = True
        self._hooks.disarm()
        try:
            self.flush()
        finally:
            if self._thread is not None:
                with self._cv:
                    self._stop = True
                    self._cv.notify_all()
                self._thread.join()
                self._thread = None
            if not self._failed:
                self._write_record("finished")

    def __enter__(self) -> SpectrumTracker:
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        self.close(final=exc_type is None)

    # -- worker --------------------------------------------------------------
    def _raise_pending(self) -> None:
        err, self._error = self._error, None
        if err is not None:
            raise err

    def _work(self) -> None:
        while True:
            with self._cv:
                while not self._jobs and not self._stop:
                    self._cv.wait()
                if not self._jobs:
                    return
                job = self._jobs.popleft()
                self._busy = True
            try:
                if not self._failed:
                    self._run(job)
            except BaseException as err:  # noqa: BLE001 - handed to the training thread
                self._error = err
            finally:
                with self._cv:
                    self._pending_bytes -= job.nbytes
                    self._busy = False
                    self._cv.notify_all()

    def _run(self, job: Job) -> None:
        t0 = time.thread_time()
        cost = {"step": float(job.step), "copy_s": job.copy_s}
        try:
            with self._streams.use(job):
                rows, skipped, helper_cpu = self._math.measure(job, cost, self.out)
            self.skipped.extend(skipped)
            self.measure_cpu_s += helper_cpu
        except FloatingPointError as err:
            self._failed = True
            self._error = err
            self._write_record("failed", str(err))
            return
        finally:
            self.measure_cpu_s += time.thread_time() - t0
        w0, wc = time.perf_counter(), time.thread_time()
        rows += [(s, "*", "record_coalesced", 0, float(job.step), "") for s in job.coalesced]
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


