"""Record spectra of any torch model during training, in two lines, off the training thread.

>>> tracker = SpectrumTracker(model, out="runs/spectra")   # doctest: +SKIP
>>> for x, y in loader:                                    # doctest: +SKIP
...     loss = loss_fn(model(x), y); loss.backward(); opt.step(); opt.zero_grad()
...     tracker.step()
>>> tracker.close()                                        # doctest: +SKIP
>>> df = read_spectra("runs/spectra")                      # doctest: +SKIP

Conventions
-----------
Steps
    ``tracker.step()`` closes iteration ``s`` (``s = 0, 1, ...``). At a
    scheduled ``s`` the forward hooks keep (a detached copy of) the outputs of
    the tracked modules seen during iteration ``s``, up to ``max_samples``
    rows, and ``step()`` copies the tracked weight matrices (after that
    iteration's update).
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
    ``step()`` only copies tensors (on their own device) and queues them;
    it waits only while the queued copies exceed ``max_pending_bytes``
    (256 MiB by default), which bounds the memory a backlog holds while the
    worker catches up (the default schedule's first steps come faster than their
    records are computed); a background thread computes the spectra on that device
    (``spectra.gram_eigenvalues(..., precision="auto")``: float32 Gram
    first, redone in float64 when the smallest eigenvalue is below ``1e-4``
    of the largest, where float32 round-off, ``~6e-8`` of the largest, would
    exceed 0.1 %) and writes the rows; the fits and tests (host numpy, which
    holds the GIL) run in a helper process shared by the process's trackers
    (``summary_process=False``: in the thread). On a
    CPU tensor the Gram is float64 from the start. Layers with
    ``min(rows, cols) > max_dense`` get the top ``top or 256`` eigenvalues by
    randomized SVD (``torch.svd_lowrank``); their MP fit and outlier test,
    which need the whole spectrum, are skipped with that reason.
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
    counted in ``tracker.skipped``, with the reason.
Files (``out=DIR``)
    ``DIR/rows/step-<step>.parquet``: one file per recorded step, each
    written atomically (temporary name, then rename), so every file there is
    whole even if the process is killed; ``read_spectra(DIR)`` reads them
    all. ``DIR/record.json``: settings, the layer table (name, kind, the rule
    that made the matrix, its shape; activation axes), status, skipped
    summaries. ``state_dict()`` / ``load_state_dict()`` carry the step, so a
    run resumed from a checkpoint continues the same dataset: files of steps
    at or after the resumed step (written by the interrupted run after its
    checkpoint) are removed, then rewritten as training replays those steps.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn import _validate as v
from specdyn._torch import to_numpy
from specdyn.measure._summary_process import Options, Spectrum, shared_helper, summarize_all
from specdyn.measure.layers import (
    ActivationSite,
    WeightMatrix,
    activation_sites,
    select_modules,
    weight_matrices,
)
from specdyn.measure.spectra import gram_eigenvalues
from specdyn.schedule import Schedule

__all__ = ["SpectrumTracker", "read_spectra"]

COLUMNS = ["step", "layer", "quantity", "rank", "value", "verdict"]
_DTYPES = {"step": "int64", "layer": "string", "quantity": "string", "rank": "int64",
           "value": "float64", "verdict": "string"}
_STATE_VERSION = 1
#: The tracker's default schedule: about 10 steps a decade, with no end.
DEFAULT_SCHEDULE = Schedule.per_decade(10)
_Row = tuple[int, str, str, int, float, str]


def _schedule(schedule: Any, steps: int | None) -> Callable[[int], bool]:
    """The tracker's ``step -> bool`` from its ``schedule`` and ``steps`` arguments."""
    if isinstance(schedule, str):  # "log" would read as Schedule.log, a count: no strings
        raise ValueError(f"schedule must be a Schedule, a list of steps, an int count (with "
                         f"steps=) or a callable step -> bool; got {schedule!r} (about 10 "
                         "steps a decade, the default, is Schedule.per_decade(10))")
    if callable(schedule):
        return schedule
    elif isinstance(schedule, Iterable) and not isinstance(schedule, (Sequence, np.ndarray)):
        schedule = list(schedule)  # a set or a generator of steps
    return Schedule.of(schedule, name="schedule").predicate(steps, name="schedule")


def read_spectra(out: str | Path) -> pd.DataFrame:
    """Every row a ``SpectrumTracker(..., out=DIR)`` wrote, sorted by step, layer, quantity, rank.

    Only whole files are read (a write interrupted by a crash leaves a hidden
    temporary file, which is ignored).
    """
    rows = Path(out) / "rows"
    if not rows.is_dir():
        raise ValueError(f"no tracker rows in {str(out)!r} (expected {str(rows)!r}); was it "
                         "written by SpectrumTracker(model, out=...)?")
    files = sorted(f for f in rows.glob("step-*.parquet"))
    if not files:
        return _frame([])
    df = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    df = df.astype(_DTYPES)
    return df.sort_values(["step", "layer", "quantity", "rank"], kind="stable",
                          ignore_index=True)


def _frame(rows: list[_Row]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=COLUMNS).astype(_DTYPES)


def _step_of(path: Path) -> int:
    return int(path.stem.split("-", 1)[1])


@dataclass
class _Job:
    step: int
    weights: list[tuple[str, Any]]
    activations: list[tuple[str, Any]]
    nbytes: int = field(init=False)

    def __post_init__(self) -> None:
        # the copies this job holds (on their device) until the worker is done with it
        self.nbytes = (sum(_nbytes(W) for _, W in self.weights)
                       + sum(_nbytes(h) for _, buf in self.activations for h in buf))


def _nbytes(t: Any) -> int:
    return int(t.nelement()) * int(t.element_size())


class _Stop:
    pass


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
    max_pending_bytes
        Bound on the bytes of copies queued for the background thread
        (default 256 MiB): ``step()`` waits only while a new record would take
        the backlog beyond it (a single record larger than the bound is still
        queued, alone). ``0`` waits for each record to finish.
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
        The largest backlog of queued copies so far, in bytes (at most
        ``max_pending_bytes``, or one record when a record alone is larger).
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
                 background: bool = True, max_pending_bytes: int = 256 * 2**20,
                 summary_process: bool = True, on_record: Any = None,
                 overwrite: bool = False) -> None:
        if not hasattr(model, "named_modules"):
            raise ValueError(f"model must be a torch.nn.Module, got {type(model).__name__}")
        self.model = model
        self.steps = None if steps is None else v.positive_int("steps", steps, minimum=0)
        self._scheduled = _schedule(schedule, self.steps)
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
        self.max_pending_bytes = v.positive_int("max_pending_bytes", max_pending_bytes,
                                                minimum=0)
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
        self.n_records = 0
        self.measure_cpu_s = 0.0
        self._rows: list[_Row] = []
        self._active = False
        self.capture = True
        self._buffers: dict[str, list[Any]] = {s.name: [] for s in self.sites}
        self._counts: dict[str, int] = dict.fromkeys(self._buffers, 0)
        self._handles: list[Any] = []
        self._error: BaseException | None = None
        self._failed = False
        self._closed = False
        self._resumed = False
        self.out = None if out is None else Path(out)
        self._existing: int | None = None
        if self.out is not None:
            self._open_out(bool(overwrite))
        # Unbounded queue; what bounds the backlog is the bytes of its copies.
        self._queue: queue.Queue[Any] = queue.Queue()
        self._pending = threading.Condition()
        self._pending_bytes = 0
        self.peak_pending_bytes = 0
        self._thread: threading.Thread | None = None
        # Fits and tests in the shared helper process (see specdyn.measure._summary_process),
        # started at the first record that needs it.
        self._in_helper = self.background and self.summary_process and (self.fit or self.outliers)
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
                "n_boot": self.n_boot, "alpha": self.alpha,
                "max_pending_bytes": self.max_pending_bytes, "model": type(self.model).__name__}

    def _open_out(self, overwrite: bool) -> None:
        assert self.out is not None
        rows = self.out / "rows"
        rec = self.out / "record.json"
        if self.out.exists() and not self.out.is_dir():
            raise ValueError(f"out={str(self.out)!r} exists and is not a folder")
        files = sorted(rows.glob("step-*.parquet")) if rows.is_dir() else []
        if files and overwrite:
            for f in files:
                f.unlink()
            files = []
        if files and rec.is_file():
            from specdyn.io import read_json

            old = read_json(rec).get("layers")
            if old is not None and old != self.layer_table():
                raise ValueError(f"out={str(self.out)!r} holds the record of a run with other "
                                 "layers; choose a new folder or pass overwrite=True")
        self._existing = max((_step_of(f) for f in files), default=None)
        rows.mkdir(parents=True, exist_ok=True)
        self._write_record("running")

    def _write_record(self, status: str, error: str | None = None) -> None:
        if self.out is None:
            return
        from specdyn.io import write_json
        from specdyn.provenance import run_record

        write_json(run_record(self.settings(), status=status, error=error,
                              extra={"kind": "spectrum_tracker", "layers": self.layer_table(),
                                     "step": self.current_step, "n_records": self.n_records,
                                     "skipped": [list(s) for s in self.skipped[-1000:]]}),
                   self.out / "record.json")

    # -- hooks ---------------------------------------------------------------
    def _hook(self, site: ActivationSite) -> Callable[..., None]:
        name, fax = site.name, site.feature_axis

        def hook(_module: Any, _inputs: Any, output: Any) -> None:
            if not self.capture:
                return
            room = self.max_samples - self._counts[name]
            if room <= 0:
                return
            out = output[0] if isinstance(output, (tuple, list)) else output
            if not hasattr(out, "detach") or out.ndim < 2 or not out.is_floating_point():
                return
            h = out.detach()
            h = h.movedim(fax, -1) if fax != -1 else h
            h = h.reshape(-1, h.shape[-1])[:room]
            # Copy: an in-place op later in the forward (e.g. ReLU(inplace=True)) would
            # otherwise change what we recorded.
            self._buffers[name].append(h.clone())
            self._counts[name] += int(h.shape[0])

        return hook

    def _disarm(self) -> None:
        """Remove the hooks and drop what they kept."""
        for h in self._handles:
            h.remove()
        self._handles = []
        for name in self._buffers:
            self._buffers[name], self._counts[name] = [], 0

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
        if not self._handles:
            self._handles = [site.module.register_forward_hook(self._hook(site))
                             for site in self.sites]

    def step(self) -> None:
        """Close the current iteration: queue a measurement if it is scheduled, then advance.

        The hooks are registered only if the next step is scheduled.
        """
        self._raise_pending()
        if self._active and not self._failed:
            self.record()
        elif self._handles:  # armed by arm() for a record that did not come
            self._disarm()
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
        s = self.current_step
        if self._existing is not None and not self._resumed and s <= self._existing:
            raise ValueError(
                f"out={str(self.out)!r} already holds rows up to step {self._existing} of an "
                "earlier run: call tracker.load_state_dict(saved_state) to continue it, pass "
                "overwrite=True to replace it, or choose a new folder")
        W = [(m.name, m.get().clone()) for m in self.matrices]
        armed = bool(self._handles)
        acts = [(site.name, self._buffers[site.name]) for site in self.sites]
        self._disarm()
        self._active = False
        if not armed:
            for site in self.sites:
                self.skipped.append((s, site.name, "activation",
                                     f"hooks not armed: step {s} is not scheduled (call "
                                     "tracker.arm() before its forward pass to record them)"))
            acts = []
        job = _Job(s, W, acts)
        if self._thread is None:
            self._run(job)
            self._raise_pending()
            return
        with self._pending:  # wait only while the backlog's copies exceed the bound
            while (self._pending_bytes > 0
                   and self._pending_bytes + job.nbytes > self.max_pending_bytes):
                self._pending.wait()
            self._pending_bytes += job.nbytes
            self.peak_pending_bytes = max(self.peak_pending_bytes, self._pending_bytes)
        self._queue.put(job)

    def flush(self) -> None:
        """Wait until every queued measurement is written; raise a worker error, if any."""
        if self._thread is not None and self._thread.is_alive():
            self._queue.join()
        self._raise_pending()

    def table(self) -> pd.DataFrame:
        """All records as a tidy DataFrame ``(step, layer, quantity, rank, value, verdict)``."""
        self.flush()
        if self.out is not None:
            return read_spectra(self.out)
        return _frame(self._rows)

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
        self._disarm()
        self._active = self._scheduled(step)
        if self._active:
            self.arm()
        if self.out is not None:
            for f in (self.out / "rows").glob("step-*.parquet"):
                if _step_of(f) >= step:
                    f.unlink()
            self._write_record("running")
        else:
            self._rows = [r for r in self._rows if r[0] < step]
        self._resumed = True

    def close(self) -> None:
        """Remove the hooks, finish queued work and write the final record (rows stay)."""
        if self._closed:
            return
        self._closed = True
        self._disarm()
        try:
            self.flush()
        finally:
            if self._thread is not None:
                self._queue.put(_Stop())
                self._thread.join()
                self._thread = None
            if not self._failed:
                self._write_record("finished")

    def __enter__(self) -> SpectrumTracker:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- worker --------------------------------------------------------------
    def _raise_pending(self) -> None:
        err, self._error = self._error, None
        if err is not None:
            raise err

    def _work(self) -> None:
        while True:
            job = self._queue.get()
            try:
                if isinstance(job, _Stop):
                    return
                if not self._failed:
                    self._run(job)
            except BaseException as err:  # noqa: BLE001 - handed to the training thread
                self._error = err
            finally:
                if isinstance(job, _Job):
                    with self._pending:
                        self._pending_bytes -= job.nbytes
                        self._pending.notify_all()
                self._queue.task_done()

    def _run(self, job: _Job) -> None:
        t0 = time.thread_time()
        try:
            rows, helper_cpu = self._measure_job(job)
            self.measure_cpu_s += helper_cpu
        except FloatingPointError as err:
            self._failed = True
            self._error = err
            self._write_record("failed", str(err))
            return
        finally:
            self.measure_cpu_s += time.thread_time() - t0
        if self.out is not None:
            from specdyn.io import write_table

            write_table(_frame(rows), self.out / "rows" / f"step-{job.step:012d}.parquet")
        else:
            self._rows.extend(rows)
        self.n_records += 1
        if self._callbacks:
            df = _frame(rows)
            for cb in self._callbacks:
                cb(df)

    def _measure_job(self, job: _Job) -> tuple[list[_Row], float]:
        """Rows of one record and the CPU seconds the summary process spent on them."""
        import torch

        spectra: list[Spectrum] = []
        s = job.step
        for name, W in job.weights:
            _check_finite(W, s, name, "weights", self.out)
            n_out, n_in = (int(x) for x in W.shape)
            eigs, complete = self._eigs(W, center=False)
            spectra.append(Spectrum(s, name, "weight", eigs, complete, ratio=n_in / n_out,
                                    n_samples=float(n_out)))
        for name, buf in job.activations:
            if not buf:
                self.skipped.append((s, name, "activation", "no forward pass seen at this step"))
                continue
            H = torch.cat(buf, dim=0)
            _check_finite(H, s, name, "activations", self.out)
            n, p = (int(x) for x in H.shape)
            if n < 2:
                self.skipped.append((s, name, "activation", "fewer than 2 samples"))
                continue
            eigs, complete = self._eigs(H, center=True)
            # Centring leaves n - 1 degrees of freedom.
            spectra.append(Spectrum(s, name, "activation", eigs, complete, ratio=p / (n - 1),
                                    n_samples=float(n - 1), n_rows=n))
        if self._in_helper:
            rows, skipped, cpu = shared_helper().run(spectra, self._options)
        else:
            (rows, skipped), cpu = summarize_all(spectra, self._options), 0.0
        self.skipped.extend(skipped)
        return rows, cpu

    def _eigs(self, X: Any, center: bool) -> tuple[np.ndarray, bool]:
        """Eigenvalues of ``X_c^T X_c / rows`` on X's device; ``complete`` is False for top-k."""
        n, p = (int(x) for x in X.shape)
        if min(n, p) > self.max_dense:
            import torch

            k = min(self.top or 256, min(n, p) - 1)
            Xf = X.float()
            Xc = Xf - Xf.mean(dim=0, keepdim=True) if center else Xf
            gen_state = torch.random.get_rng_state()
            torch.manual_seed(0)  # svd_lowrank draws a random sketch: keep runs reproducible
            try:
                _, S, _ = torch.svd_lowrank(Xc, q=min(k + 10, min(n, p)), niter=4)
            finally:
                torch.random.set_rng_state(gen_state)
            e = to_numpy(S.double() ** 2 / n)[:k]
            return np.sort(e)[::-1], False
        # float32 on an accelerator when the range allows (spectra.gram_eigenvalues)
        return gram_eigenvalues(X, center=center, precision="auto"), True


def _check_finite(x: Any, step: int, layer: str, what: str, out: Path | None) -> None:
    import torch

    if not bool(torch.isfinite(x).all()):
        where = (f"rows of earlier steps are in {str(out / 'rows')!r}" if out is not None
                 else "rows of earlier steps are kept")
        raise FloatingPointError(
            f"SpectrumTracker: {what} of layer {layer!r} are not finite at step {step}: "
            "the run diverged. Lower the learning rate (or add gradient clipping) and "
            f"rerun; nothing was recorded for this step, {where}.")
