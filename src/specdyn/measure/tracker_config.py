"""The settings of a :class:`~specdyn.measure.SpectrumTracker`: one checked config.

``SpectrumTracker(model, modules, schedule, **settings)`` (the keyword call) and
``SpectrumTracker(model, config=TrackerConfig(...))`` are the same tracker: the keywords
become a :class:`TrackerConfig` (:meth:`TrackerConfig.of`), whose fields declare their
allowed values (:func:`specdyn._validate.constrained_fields`, one ``ValueError`` line
naming a bad one, before anything is hooked or written) and whose docstring documents
every setting once.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specdyn import _validate as v
from specdyn.measure.spectra import PRECISIONS
from specdyn.schedule import Schedule

__all__ = ["DEFAULT_SCHEDULE", "POLICIES", "TrackerConfig"]

#: The tracker's default schedule: about 10 steps a decade, with no end.
DEFAULT_SCHEDULE = Schedule.per_decade(10)
#: What ``step()`` does when the worker falls behind (:mod:`specdyn.measure.tracker`).
POLICIES = ("coalesce", "block")

_FLAGS = ("weights", "activations", "heads", "fit", "outliers", "background", "summary_process",
          "overwrite")


@dataclass(frozen=True, kw_only=True)
@v.constrained_fields(steps=v.Int(0, optional=True), max_samples=v.Int(2),
                      top=v.Int(1, optional=True), max_dense=v.Int(3), n_boot=v.Int(0),
                      alpha=v.Real(0.0, 1.0, lo_open=True, hi_open=True),
                      policy=v.Choice(*POLICIES), max_pending_bytes=v.Int(0),
                      precision=v.Choice(*PRECISIONS))
class TrackerConfig:
    """What a :class:`~specdyn.measure.SpectrumTracker` records, when, and how: every setting.

    Attributes
    ----------
    modules
        ``None``: every weight matrix of the model and the outputs of every module of a
        registered type (:func:`~specdyn.measure.register_layer`; built in: Linear, Conv,
        Embedding, MultiheadAttention and GPT-2 Conv1D). A name pattern or list of
        patterns (``"blocks.*.attn"``, ``fnmatch`` rules) or modules: the matrices inside
        the selected modules and the outputs of the selected modules. A
        ``{name: module}`` dict as well.
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
        What to record (not both ``False``).
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
        (default: records queue while their copies fit in ``max_pending_bytes``,
        beyond it a due record replaces the newest waiting ones, never one of the
        schedule's first decade, for which alone ``step()`` may wait; each
        replaced step is listed as coalesced and ``close()`` says how many) or
        ``"block"`` (every record is computed; wait while the queued copies
        exceed ``max_pending_bytes``).
    max_pending_bytes
        Bound on the bytes of copies queued for the background thread (default
        256 MiB): ``"coalesce"`` replaces waiting records beyond it, ``"block"``
        waits (a single record larger than the bound is still queued, alone).
        ``0``: one record computed and one waiting (``"block"``: none waiting).
    precision
        ``"auto"`` (float32 Grams and eigenvalues, float64 for the matrices
        whose summaries read eigenvalues float32 does not resolve) or
        ``"float64"``; see :mod:`specdyn.measure._tracker_measure`.
    summary_process
        With ``background``: compute the fits and tests (many small numpy and
        scipy calls, which hold the GIL and so slow a training step of many
        small torch calls) in one helper process shared by this process's
        trackers (:mod:`specdyn.measure._summary_process`, started when the
        tracker is built; across ranks, on rank 0 only); ``False`` computes them
        in the worker thread. Same rows.
    on_record
        A callable or list of callables ``f(rows)``, called (in the worker
        thread) with the DataFrame of each recorded step once it is written;
        e.g. ``specdyn.integrations.TensorBoardLogger(log_dir)``.
    overwrite
        Replace rows already in ``out`` instead of refusing to mix runs.
    distributed
        ``None`` (default): rank-aware when ``torch.distributed`` is initialised
        with more than one process (every rank builds the tracker, at the same
        point: building it is collective; rank 0 writes; spectra over the global
        batch and of sharded weights: :mod:`specdyn.measure._tracker_ranks`);
        ``True``: insist on it; ``False``: this process alone (a tracker on one
        rank only, or each rank its own tracker and ``out``).
    """

    modules: Any = None
    schedule: Any = DEFAULT_SCHEDULE
    steps: int | None = None
    out: str | Path | None = None
    max_samples: int = 2048
    weights: bool = True
    activations: bool = True
    heads: bool = False
    top: int | None = None
    max_dense: int = 2048
    fit: bool = True
    outliers: bool = True
    n_boot: int = 50
    alpha: float = 0.05
    background: bool = True
    policy: str = "coalesce"
    max_pending_bytes: int = 256 * 2**20
    precision: str = "auto"
    summary_process: bool = True
    on_record: Any = None
    overwrite: bool = False
    distributed: bool | None = None

    def __post_init__(self) -> None:
        for name in _FLAGS:  # flags read as truth values, as they always were
            object.__setattr__(self, name, bool(getattr(self, name)))
        if not (self.weights or self.activations):
            raise ValueError("weights and activations cannot both be False: nothing to record")
        if self.distributed not in (None, True, False):
            raise ValueError(f"distributed must be None (automatic), True or False, got "
                             f"{self.distributed!r}")

    @classmethod
    def of(cls, config: TrackerConfig | None, modules: Any, schedule: Any,
           settings: dict[str, Any]) -> TrackerConfig:
        """The config of a constructor call: ``config`` as given, or the keyword call's
        ``modules``, ``schedule`` and ``settings`` (not both ways)."""
        if config is not None:
            if not isinstance(config, TrackerConfig):
                raise ValueError(f"config must be a TrackerConfig, got {type(config).__name__}")
            if settings or modules is not None or schedule is not DEFAULT_SCHEDULE:
                raise ValueError("config: give the tracker's settings either as config= or as "
                                 "keywords, not both (dataclasses.replace(config, ...) merges)")
            return config
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(settings) - names)
        if unknown:
            raise ValueError(f"{unknown[0]} is not a setting of SpectrumTracker (its settings: "
                             f"{', '.join(sorted(names))})")
        return cls(modules=modules, schedule=schedule, **settings)

    def callbacks(self) -> list[Callable[[Any], Any]]:
        """``on_record`` as a list of callables (checked)."""
        if self.on_record is None:
            return []
        cbs = list(self.on_record) if isinstance(self.on_record, (list, tuple)) \
            else [self.on_record]
        for cb in cbs:
            if not callable(cb):
                raise ValueError(f"on_record must be a callable rows -> None or a list of "
                                 f"them, got {type(cb).__name__}")
        return cbs

    def key(self, model: Any) -> str:
        """What every rank's tracker must share: the recorded settings and the schedule."""
        sched = "callable" if callable(self.schedule) else repr(self.schedule)
        return json.dumps(self.recorded(model), sort_keys=True, default=str) + sched

    def recorded(self, model: Any) -> dict[str, Any]:
        """The settings a run's ``record.json`` keeps (and the model's type)."""
        keep = ("steps", "max_samples", "weights", "activations", "heads", "top", "max_dense",
                "fit", "outliers", "n_boot", "alpha", "policy", "max_pending_bytes", "precision")
        return {**{k: getattr(self, k) for k in keep}, "model": type(model).__name__}
