"""Sweeps: one experiment run over a grid of settings and seeds, stored as one tidy table.

A sweep file is a run file (see :mod:`specdyn.experiments.config`) with a
``[sweep]`` table::

    experiment = "simulate"
    steps = 2000                              # fixed fields (defaults otherwise)

    [sweep]
    seeds = [0, 1, 2]                         # or a count: seeds = 3 -> 0, 1, 2
    [sweep.axes]
    sigma_w = [0.1, 0.3, 1.0]                 # a list of values
    gamma0_ratio = {log = [0.1, 10.0], num = 5}   # log-spaced (also {lin = ..})
    D = "log:16:256:5"                        # the same as a string; ints are rounded

The points are the Cartesian product of the axes (in file order) times the
seeds. Each point's config is built and validated before anything runs, and
gets a stable run id: the first 12 hex digits of the SHA-256 of its
experiment name and full config (so the same setting always has the same id,
whatever the file or the order of the axes).

Storage (one folder per sweep)::

    OUT/sweep.json            the spec and the list of points (run id, setting)
    OUT/sweep.toml            a copy of the sweep file, when there was one
    OUT/data/<run_id>.parquet the point's tidy rows: run_id, every config field,
                              step, t, k, quantity, value (+ the experiment's
                              own columns); written only when the point finished
    OUT/runs/<run_id>.json    the run record: config, specdyn version, git
                              commit, seed, host, wall time, status, error
                              with traceback, the experiment's summary numbers

Every file is written atomically (temporary file, then rename) by the parent
process only, data first and record last, so a point counts as finished
exactly when its record says so, and an interrupted sweep leaves no partial
file. Re-running a sweep into the same folder runs only the points without a
finished record (and the failed ones with ``retry_failed=True``). Workers need
no shared file system: they return the table to the parent.

Workers find the experiment by name in the registry: the built-in ones, or
those registered by the module named in the file (``module = "pkg.mod"``,
importable on every worker), so your own experiments sweep the same way.

Executors
---------
``"local"`` (default)
    Worker processes on this machine, each with its own pipe. A worker that
    dies (killed, out of memory) is replaced and the point it was running is
    tried again, at most three times in all, then recorded as failed; the
    other points are not affected.
``"dask"``
    Dask distributed: a ``LocalCluster`` of worker processes, or, with
    ``address="tcp://HOST:PORT"``, an existing cluster (a scheduler started by
    hand, by dask-jobqueue on SLURM/PBS, or by dask-kubernetes). Dask reschedules
    the tasks of a dead worker itself and gives up after three deaths
    (``KilledWorker``), which is recorded as a failure of that point.
``"inline"``
    One point after another in this process: for debugging, and for sweeps
    run from inside a worker process (which may not start processes itself).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import itertools
import json
import math
import multiprocessing
import multiprocessing.context
import os
import re
import signal
import socket
import tempfile
import time
import traceback
from collections import Counter, deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.connection import wait as mp_wait
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn import _validate as v
from specdyn import io
from specdyn._progress import progress as _progress
from specdyn.experiments.config import (
    RESERVED_KEYS,
    TomlFile,
    build_config,
    coerce_value,
    config_from_toml,
    config_to_dict,
    field_types,
    read_toml,
)

#: Columns every sweep table has after ``run_id`` and the config fields.
TIDY_COLUMNS = ("step", "t", "k", "quantity", "value")
EXECUTORS = ("local", "dask", "inline")
#: How many times a point may be running when its worker process dies.
MAX_WORKER_DEATHS = 3


# --------------------------------------------------------------------------- spec


@dataclass(frozen=True)
class Axis:
    """One swept config field and its values (already checked against the field's type)."""

    name: str
    values: tuple[Any, ...]


@dataclass(frozen=True)
class Point:
    """One run of a sweep: the full config (a plain dict) and its stable id."""

    run_id: str
    experiment: str
    config: dict[str, Any]
    setting: dict[str, Any]
    seed: int | None = None
    module: str | None = None


@dataclass(frozen=True)
class SweepSpec:
    """A validated sweep: experiment, fixed fields, axes, seeds and the expanded points.

    Build it with :func:`load_sweep` (from a file) or :func:`make_sweep` (in code).
    """

    experiment: str
    base: dict[str, Any]
    axes: tuple[Axis, ...]
    seeds: tuple[int, ...] | None
    points: tuple[Point, ...]
    module: str | None = None
    source: str | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The spec as JSON: everything but the configs of the points."""
        return {
            "experiment": self.experiment,
            "module": self.module,
            "source": self.source,
            "base": self.base,
            "axes": {a.name: list(a.values) for a in self.axes},
            "seeds": None if self.seeds is None else list(self.seeds),
            "points": [{"run_id": p.run_id, **p.setting} for p in self.points],
        }


def run_id(experiment: str, config: Mapping[str, Any]) -> str:
    """Stable id of a run: 12 hex digits of SHA-256 over the experiment name and full config."""
    blob = json.dumps({"experiment": experiment, "config": dict(config)}, sort_keys=True,
                      default=str, allow_nan=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def _experiment(name: str, module: str | None = None) -> Any:
    if module:
        try:
            importlib.import_module(module)
        except ImportError as err:
            raise ValueError(f"module {module!r} (which should register {name!r}) "
                             f"cannot be imported: {err}") from None
    from specdyn import experiments

    return experiments.get(name)


def make_sweep(experiment: str, axes: Mapping[str, Any] | None = None, *,
               base: Mapping[str, Any] | None = None, seeds: Any = None,
               module: str | None = None) -> SweepSpec:
    """A sweep built in code: the same checks and points as a sweep file.

    ``axes`` maps a config field to a list of values, a ``{"log": [lo, hi],
    "num": n}`` / ``{"lin": ...}`` range or a ``"log:LO:HI:N"`` string;
    ``seeds`` is a list of seeds or a count.
    """
    exp = _experiment(experiment, module)
    axes = dict(axes or {})
    base = dict(base or {})

    def where(*key: str) -> str:
        if not key:
            return "sweep"
        head = "sweep" if key[0] in ("axes", "seeds") else "base"
        return head + "".join(f"[{k!r}]" for k in key)

    return _build_spec(exp, base, axes, seeds, module, where, source=None,
                       seeds_given=seeds is not None)


def load_sweep(path: str | os.PathLike[str]) -> SweepSpec:
    """Read and validate a sweep file; every error names the file, line and key.

    Nothing runs here; every point's config is built (and so validated by the
    experiment's config class) before this returns.
    """
    tf = read_toml(path)
    name, module = _head(tf)
    exp = _experiment(name, module)
    sweep = tf.data.get("sweep")
    if sweep is None:
        raise ValueError(f"{tf.where()}: no [sweep] table; a sweep file needs "
                         "[sweep] with seeds and/or [sweep.axes]")
    if not isinstance(sweep, dict):
        raise ValueError(f"{tf.where('sweep')}: 'sweep' must be a table")
    allowed = ("axes", "seeds", "executor", "workers", "address")
    for key in sweep:
        if key not in allowed:
            raise ValueError(f"{tf.where('sweep', key)}: unknown key {key!r} in [sweep]; "
                             f"valid keys: {', '.join(allowed)}")
    axes = sweep.get("axes", {})
    if not isinstance(axes, dict):
        raise ValueError(f"{tf.where('sweep', 'axes')}: 'axes' must be a table of field = values")
    options: dict[str, Any] = {}
    if "executor" in sweep:
        if sweep["executor"] not in EXECUTORS:
            raise ValueError(f"{tf.where('sweep', 'executor')}: executor must be one of "
                             f"{', '.join(map(repr, EXECUTORS))}, got {sweep['executor']!r}")
        options["executor"] = sweep["executor"]
    if "workers" in sweep:
        w = sweep["workers"]
        if isinstance(w, bool) or not isinstance(w, int) or w < 1:
            raise ValueError(f"{tf.where('sweep', 'workers')}: workers must be an integer "
                             f">= 1, got {w!r}")
        options["workers"] = w
    if "address" in sweep:
        if not isinstance(sweep["address"], str):
            raise ValueError(f"{tf.where('sweep', 'address')}: address must be a string "
                             "like 'tcp://HOST:PORT'")
        options["address"] = sweep["address"]
    base = {k: val for k, val in tf.data.items() if k not in RESERVED_KEYS}
    for key, value in base.items():
        if isinstance(value, dict):
            raise ValueError(f"{tf.where(key)}: a table [{key}] is not a config field of "
                             f"{exp.config_cls.__name__}")

    def where(*key: str) -> str:
        if key and key[0] in ("axes", "seeds"):
            return tf.where("sweep", *key)
        return tf.where(*key)

    spec = _build_spec(exp, base, axes, sweep.get("seeds"), module, where, source=str(tf.path),
                       seeds_given="seeds" in sweep)
    return SweepSpec(spec.experiment, spec.base, spec.axes, spec.seeds, spec.points,
                     spec.module, spec.source, options)


def _head(tf: TomlFile) -> tuple[str, str | None]:
    name = tf.data.get("experiment")
    if name is None:
        raise ValueError(f"{tf.where()}: missing key 'experiment' (the experiment to run)")
    if not isinstance(name, str):
        raise ValueError(f"{tf.where('experiment')}: experiment must be a string, got {name!r}")
    module = tf.data.get("module")
    if module is not None and not isinstance(module, str):
        raise ValueError(f"{tf.where('module')}: module must be a string, got {module!r}")
    try:
        _experiment(name, module)
    except ValueError as err:
        raise ValueError(f"{tf.where('experiment')}: {err}") from None
    return name, module


def load_run(path: str | os.PathLike[str]) -> tuple[str, Any]:
    """Read a run file: the experiment's name and its validated config."""
    tf = read_toml(path)
    name, module = _head(tf)
    exp = _experiment(name, module)
    return name, config_from_toml(tf, exp.config_cls, experiment=name)


_RANGE = re.compile(r"^\s*(log|lin):([^:]+):([^:]+):([^:]+)\s*$")


def _axis_values(raw: Any, loc: str) -> list[Any]:
    """One axis: a list, a ``{log|lin = [lo, hi], num = n}`` table or a 'log:lo:hi:n' string."""
    if isinstance(raw, str) and _RANGE.match(raw):
        m = _RANGE.match(raw)
        assert m is not None
        try:
            kind, lo, hi, num = m.group(1), float(m.group(2)), float(m.group(3)), int(m.group(4))
        except ValueError:
            raise ValueError(f"{loc}: range must read 'log:LO:HI:N' or 'lin:LO:HI:N', "
                             f"got {raw!r}") from None
        raw = {kind: [lo, hi], "num": num}
    if isinstance(raw, dict):
        kinds = [k for k in ("log", "lin") if k in raw]
        extra = set(raw) - {"log", "lin", "num"}
        if len(kinds) != 1 or extra or "num" not in raw:
            raise ValueError(f"{loc}: a range is {{log = [LO, HI], num = N}} or "
                             f"{{lin = [LO, HI], num = N}}, got {raw!r}")
        kind = kinds[0]
        ends, num = raw[kind], raw["num"]
        if (not isinstance(ends, list) or len(ends) != 2
                or not all(isinstance(e, (int, float)) and not isinstance(e, bool) for e in ends)):
            raise ValueError(f"{loc}: {kind} must be [LO, HI] (two numbers), got {ends!r}")
        if isinstance(num, bool) or not isinstance(num, int) or num < 1:
            raise ValueError(f"{loc}: num must be an integer >= 1, got {num!r}")
        lo, hi = float(ends[0]), float(ends[1])
        if kind == "log":
            if not (lo > 0 and hi > 0):
                raise ValueError(f"{loc}: a log range needs LO, HI > 0, got [{lo}, {hi}]")
            grid = np.logspace(math.log10(lo), math.log10(hi), num)
        else:
            grid = np.linspace(lo, hi, num)
        # 12 significant digits: readable values, ids that do not hang on the last ulp
        return [float(f"{x:.12g}") for x in grid]
    if isinstance(raw, list):
        return list(raw)
    raise ValueError(f"{loc}: an axis is a list of values or a range "
                     f"({{log = [LO, HI], num = N}}), got {raw!r}")


def _build_spec(exp: Any, base: dict[str, Any], raw_axes: Mapping[str, Any], raw_seeds: Any,
                module: str | None, where: Callable[..., str], *, source: str | None,
                seeds_given: bool) -> SweepSpec:
    cls = exp.config_cls
    types_ = field_types(cls)
    for key in base:
        if key not in types_:
            raise ValueError(f"{where(key)}: unknown key {key!r} for {cls.__name__}; "
                             f"valid keys: {', '.join(types_)}")
    axes: list[Axis] = []
    for name, raw in raw_axes.items():
        loc = where("axes", name)
        if name == "seed":
            raise ValueError(f"{loc}: sweep seeds with [sweep] seeds = [...], not an axis")
        if name not in types_:
            raise ValueError(f"{loc}: experiment {exp.name!r} has no field {name!r} to sweep; "
                             f"its fields: {', '.join(types_)}")
        if name in base:
            raise ValueError(f"{loc}: {name!r} is both an axis and a fixed field "
                             f"({where(name)}); keep one")
        values = _axis_values(raw, loc)
        if not values:
            raise ValueError(f"{loc}: axis {name!r} is empty; give at least one value")
        values = [coerce_value(name, x, types_[name], loc) if not _is_int_type(types_[name])
                  else _as_int(name, x, loc) for x in values]
        values = list(dict.fromkeys(_hashable(x) for x in values))  # drop repeats, keep order
        axes.append(Axis(name, tuple(values)))
    seeds: tuple[int, ...] | None = None
    if seeds_given:
        loc = where("seeds")
        if "seed" not in types_:
            raise ValueError(f"{loc}: experiment {exp.name!r} has no 'seed' field to sweep")
        if "seed" in base:
            raise ValueError(f"{loc}: seeds are set both here and by 'seed' at "
                             f"{where('seed')}; keep one")
        if isinstance(raw_seeds, int) and not isinstance(raw_seeds, bool):
            if raw_seeds < 1:
                raise ValueError(f"{loc}: seeds must be a count >= 1 or a list, got {raw_seeds}")
            seeds = tuple(range(raw_seeds))
        elif isinstance(raw_seeds, (list, tuple)):
            if not raw_seeds:
                raise ValueError(f"{loc}: seeds is empty; give at least one seed")
            bad = [s for s in raw_seeds if isinstance(s, bool) or not isinstance(s, int) or s < 0]
            if bad:
                raise ValueError(f"{loc}: seeds must be integers >= 0, got {bad[0]!r}")
            seeds = tuple(dict.fromkeys(int(s) for s in raw_seeds))
        else:
            raise ValueError(f"{loc}: seeds must be a list of integers or a count, "
                             f"got {raw_seeds!r}")
    names = [a.name for a in axes]

    def point_where(key: str | None) -> str:
        if key is None:
            return where()
        if key in names:
            return where("axes", key)
        if key == "seed" and seeds is not None:
            return where("seeds")
        return where(key)

    points: dict[str, Point] = {}
    for combo in itertools.product(*(a.values for a in axes), *([seeds] if seeds else [])):
        setting = dict(zip(names + (["seed"] if seeds else []), combo, strict=True))
        data = {**base, **{k: _unhashable(x) for k, x in setting.items()}}
        try:
            cfg = build_config(cls, data, point_where)
        except ValueError as err:
            raise ValueError(f"{err} (at the sweep point {setting})") from None
        cfg_dict = config_to_dict(cfg)
        rid = run_id(exp.name, cfg_dict)
        seed = cfg_dict.get("seed")
        points.setdefault(rid, Point(rid, exp.name, cfg_dict, dict(setting),
                                     seed if isinstance(seed, int) else None, module))
    return SweepSpec(exp.name, dict(base), tuple(axes), seeds, tuple(points.values()), module,
                     source)


def _is_int_type(tp: Any) -> bool:
    return tp is int


def _as_int(name: str, x: Any, loc: str) -> int:
    # integer fields accept log/lin ranges: values are rounded to the nearest integer
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ValueError(f"{loc}: key {name!r} must be an integer, got {x!r}")
    if isinstance(x, float) and not math.isfinite(x):
        raise ValueError(f"{loc}: key {name!r} must be a finite integer, got {x!r}")
    return int(round(x))


def _hashable(x: Any) -> Any:
    return tuple(x) if isinstance(x, list) else x


def _unhashable(x: Any) -> Any:
    return list(x) if isinstance(x, tuple) else x


# --------------------------------------------------------------------------- one point


@dataclass
class Outcome:
    """What a worker hands back for one point (no files written there)."""

    run_id: str
    status: str
    wall_time: float
    table: pd.DataFrame | None = None
    summary: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    host: str = ""
    pid: int = 0


def run_point(point: Point) -> Outcome:
    """Run one point in the current process and return its tidy table (never raises).

    The experiment writes into a temporary folder that is removed afterwards;
    its Parquet tables are read back and stacked into tidy rows (see
    :func:`tidy_table`). An exception inside the experiment becomes a
    ``failed`` outcome carrying the traceback.
    """
    start = time.perf_counter()
    try:
        exp = _experiment(point.experiment, point.module)
        cfg = build_config(exp.config_cls, point.config, lambda key: f"run {point.run_id}")
        with tempfile.TemporaryDirectory(prefix=f"specdyn-{point.run_id}-") as tmp:
            result = exp.run(cfg, Path(tmp))
            tables = [pd.read_parquet(p) for p in result.tables if Path(p).suffix == ".parquet"]
        table = tidy_table(tables, point)
        summary = dict(result.summary)
        status, error = "finished", None
    except Exception:
        table, summary = None, {}
        status, error = "failed", traceback.format_exc()
    return Outcome(point.run_id, status, time.perf_counter() - start, table, summary, error,
                   socket.gethostname(), os.getpid())


def tidy_table(tables: Sequence[pd.DataFrame], point: Point) -> pd.DataFrame:
    """Stack an experiment's tables into the sweep's tidy rows for ``point``.

    Columns: ``run_id``, every config field (tuples as JSON text), then
    ``step, t, k, quantity, value`` (missing ones filled with NA) and any other
    columns the experiment wrote. A column the experiment wrote wins over a
    config field of the same name.
    """
    df = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()
    for col in TIDY_COLUMNS:
        if col not in df.columns:
            df[col] = pd.NA if col == "quantity" else np.nan
    front = {"run_id": point.run_id}
    for key, value in point.config.items():
        if key in df.columns:
            continue
        front[key] = json.dumps(value) if isinstance(value, (list, tuple)) else value
    head = pd.DataFrame({k: [val] * len(df) for k, val in front.items()}, index=df.index)
    rest = [c for c in df.columns if c not in TIDY_COLUMNS]
    return pd.concat([head, df[list(TIDY_COLUMNS) + rest]], axis=1)


# --------------------------------------------------------------------------- storage


def _record_path(out: Path, rid: str) -> Path:
    return out / "runs" / f"{rid}.json"


def _data_path(out: Path, rid: str) -> Path:
    return out / "data" / f"{rid}.parquet"


def point_status(out: Path, rid: str) -> str:
    """``finished``, ``failed`` or ``pending`` (no record, or a record without its data)."""
    rec = _record_path(out, rid)
    if not rec.exists():
        return "pending"
    try:
        status = io.read_json(rec).get("status", "pending")
    except (OSError, ValueError):
        return "pending"
    if status == "finished" and not _data_path(out, rid).exists():
        return "pending"
    return str(status)


def _store(out: Path, point: Point, outcome: Outcome) -> None:
    data = _data_path(out, point.run_id)
    if outcome.status == "finished" and outcome.table is not None:
        io.write_table(outcome.table, data)  # data first: the record is the commit mark
    elif data.exists():
        data.unlink()
    record = io.run_record(
        {"experiment": point.experiment, **point.config}, seed=point.seed,
        wall_time=outcome.wall_time, status=outcome.status, error=outcome.error,
        extra={"run_id": point.run_id, "module": point.module, "setting": point.setting,
               "summary": outcome.summary, "host": outcome.host or socket.gethostname(),
               "pid": outcome.pid, "rows": 0 if outcome.table is None else len(outcome.table)},
    )
    io.write_json(record, _record_path(out, point.run_id))


# --------------------------------------------------------------------------- running


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
        A :class:`SweepSpec` or the path of a sweep file.
    out
        The sweep's folder (created if needed). Points with a finished record
        there are skipped; so are failed ones unless ``retry_failed``.
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
        Counts; the per-point results are in ``out`` (:func:`specdyn.io.load`).
    """
    if not isinstance(spec, SweepSpec):
        spec = load_sweep(spec)
    opts = spec.options
    address = address if address is not None else opts.get("address")
    workers = workers if workers is not None else opts.get("workers")
    if executor is None:
        executor = opts.get("executor") or ("dask" if address is not None else "local")
    if address is not None and (not isinstance(address, str) or ":" not in address):
        raise ValueError(f"address must look like 'tcp://HOST:PORT', got {address!r}")
    executor = v.choice("executor", executor, EXECUTORS)
    if address is not None and executor != "dask":
        raise ValueError("address is for executor 'dask' only")
    if workers is not None:
        workers = v.positive_int("workers", workers)
    timeout = v.positive("timeout", timeout)
    out_dir = Path(out)
    _check_folder(out_dir, spec)

    start = time.perf_counter()
    todo, skipped = [], 0
    for p in spec.points:
        status = point_status(out_dir, p.run_id)
        if status == "finished" or (status == "failed" and not retry_failed):
            skipped += 1
        else:
            todo.append(p)
    report = SweepReport(out_dir, len(spec.points), skipped, 0, 0, 0.0)
    stream: Iterator[Outcome] = iter(())
    if todo:
        n_workers = workers or max(1, min(len(todo), os.cpu_count() or 1))
        if executor == "dask":
            # connect (or start the cluster) before writing anything: fail fast
            client, cluster = _start_dask(n_workers, address, timeout)
            stream = _execute_dask(todo, client, cluster)
        elif executor == "inline":
            stream = (run_point(p) for p in todo)
        else:
            stream = _execute_local(todo, n_workers)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        io.write_json(spec.to_dict(), out_dir / "sweep.json")
        if spec.source is not None and Path(spec.source).exists():
            with io.atomic_open(out_dir / "sweep.toml") as fh:
                fh.write(Path(spec.source).read_text(encoding="utf-8"))
        by_id = {p.run_id: p for p in todo}
        for outcome in _progress(stream, total=len(todo), desc=f"sweep {spec.experiment}",
                                 enabled=progress and bool(todo)):
            _store(out_dir, by_id[outcome.run_id], outcome)
            if outcome.status == "finished":
                report.finished += 1
            else:
                report.failed += 1
                report.failed_ids.append(outcome.run_id)
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()  # runs the executor's cleanup even if we never iterated
    report.wall_time = time.perf_counter() - start
    return report


def _check_folder(out: Path, spec: SweepSpec) -> None:
    meta = out / "sweep.json"
    if meta.exists():
        try:
            old = io.read_json(meta).get("experiment")
        except (OSError, ValueError):
            return
        if old != spec.experiment:
            raise ValueError(f"out folder {str(out)!r} holds a sweep of experiment {old!r}, "
                             f"not {spec.experiment!r}; choose another folder")


def _mp_context() -> multiprocessing.context.BaseContext:
    # forkserver: workers fork from a clean server with specdyn preloaded (fast, thread-safe);
    # spawn where there is no forkserver (Windows)
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["specdyn.experiments.sweep"])
        return ctx
    return multiprocessing.get_context("spawn")


def _worker_main(conn: Connection) -> None:
    """Worker process: run the points sent on ``conn`` until told to stop or orphaned."""
    # Ctrl-C goes to the whole process group; only the parent handles it
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            point = conn.recv()
        except (EOFError, OSError):
            return  # the parent is gone
        if point is None:
            return
        try:
            conn.send(run_point(point))
        except (BrokenPipeError, OSError):
            return


class _Worker:
    """One worker process with its own pipe, so a death is attributed to its point only."""

    def __init__(self, ctx: Any) -> None:
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child,), daemon=True,
                                name="specdyn-sweep-worker")
        self.proc.start()
        child.close()  # the parent keeps no write end: a dead worker means EOF, not a hang
        self.point: Point | None = None

    def stop(self) -> None:
        if self.proc.is_alive():
            self.proc.terminate()
        self.proc.join(timeout=5)
        if self.proc.is_alive():  # pragma: no cover - SIGTERM ignored
            self.proc.kill()
            self.proc.join(timeout=5)
        self.conn.close()


def _died(p: Point, deaths: int) -> Outcome:
    return Outcome(p.run_id, "failed", 0.0, error=(
        f"the worker process died {deaths} times while running this point "
        "(killed, out of memory or crashed); nothing was recorded from it"))


def _execute_local(points: list[Point], workers: int) -> Iterator[Outcome]:
    """Run points on ``workers`` processes, yielding outcomes as they finish.

    Each worker has its own pipe (no shared queue whose lock a killed worker
    could leave held), so a worker that dies costs only the point it was
    running: that point is queued again on a fresh worker, at most
    ``MAX_WORKER_DEATHS`` times, then recorded as failed. On exit (or an
    interrupt) the workers are terminated: only the parent records results, so
    a point finishing after the parent left would be computed for nothing.
    """
    ctx = _mp_context()
    queue = deque(points)
    deaths: Counter[str] = Counter()
    pool: list[_Worker] = []
    try:
        pool = [_Worker(ctx) for _ in range(min(workers, len(points)))]
        while queue or any(w.point is not None for w in pool):
            for i, w in enumerate(pool):
                if w.point is None and queue:
                    if not w.proc.is_alive():  # died while idle, or after its point failed
                        w.stop()
                        pool[i] = w = _Worker(ctx)
                    w.point = queue.popleft()
                    with contextlib.suppress(OSError):  # a death shows up in the wait below
                        w.conn.send(w.point)
            busy = [w for w in pool if w.point is not None]
            ready = set(mp_wait([w.conn for w in busy] + [w.proc.sentinel for w in busy]))
            for w in busy:
                if w.conn not in ready and w.proc.sentinel not in ready:
                    continue
                p, w.point = w.point, None
                assert p is not None
                try:
                    outcome = w.conn.recv() if w.conn in ready else None
                except (EOFError, OSError):
                    outcome = None
                if outcome is not None:
                    yield outcome
                    continue
                # the worker died with this point: try the point again on a fresh worker
                w.stop()
                deaths[p.run_id] += 1
                if deaths[p.run_id] >= MAX_WORKER_DEATHS:
                    yield _died(p, deaths[p.run_id])
                else:
                    queue.appendleft(p)
    finally:
        for w in pool:
            if w.point is None and w.proc.is_alive():
                with contextlib.suppress(OSError):
                    w.conn.send(None)  # a clean stop for idle workers
            w.stop()


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
    import logging

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


def sweep_status(out: str | os.PathLike[str]) -> pd.DataFrame:
    """One row per point of the sweep in ``out``: run id, setting, status (pending included)."""
    out_dir = Path(out)
    meta = out_dir / "sweep.json"
    if not meta.exists():
        raise ValueError(f"{str(out_dir)!r} is not a sweep folder (no sweep.json)")
    rows = []
    for p in io.read_json(meta).get("points", []):
        rows.append({**p, "status": point_status(out_dir, p["run_id"])})
    return pd.DataFrame(rows)

