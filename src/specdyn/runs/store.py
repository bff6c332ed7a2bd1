"""Result folders: the one home of their layout, and reading them back.

An experiment run (``run_experiment(name, OUT_ROOT)``) owns one folder::

    OUT_ROOT/NAME/               the last finished result: figures, Parquet tables,
                                 and record.json (status "finished", config, version,
                                 commit, host, wall time, summary, claims)
    OUT_ROOT/NAME.failed.json    the record of a later attempt that failed, if any
    OUT_ROOT/.NAME.lock          held while a run writes (removed afterwards)
    OUT_ROOT/.NAME.*.tmp         a run in progress (a leftover is removed by the next run)

A run writes into a fresh temporary folder beside its target and replaces the
target only when it finished (:func:`transaction`, from
:mod:`specdyn.runs.transaction`, which holds the lock and the atomic replacement),
so a failed or killed rerun leaves the previous finished result whole.

A sweep owns one folder::

    OUT/sweep.json               the spec and the list of points (run id, setting)
    OUT/sweep.toml               a copy of the sweep file, when there was one
    OUT/data/<run_id>.parquet    the point's tidy rows (only when it finished)
    OUT/runs/<run_id>.json       the point's run record (status, error, summary, ...)

Each point's files are written atomically by the sweep's parent process,
data first and record last, so a point counts as finished exactly when its
record says so. A folder holds one grid: a sweep of other points is refused.

Both kinds of folder are locked while written: a second writer gets
:class:`FolderBusyError` at once, naming the holder's PID.
:func:`load_table` and :func:`load_records` (behind :func:`specdyn.runs.load`
and ``specdyn results``) return only data whose record is ``finished``.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn import io, provenance
from specdyn.runs.spec import Point, SweepSpec
from specdyn.runs.transaction import FAILED_SUFFIX as FAILED_SUFFIX
from specdyn.runs.transaction import FolderBusyError as FolderBusyError
from specdyn.runs.transaction import failed_record_path as failed_record_path
from specdyn.runs.transaction import lock as lock
from specdyn.runs.transaction import lock_path as lock_path
from specdyn.runs.transaction import record_failure as record_failure
from specdyn.runs.transaction import remove_leftovers as remove_leftovers
from specdyn.runs.transaction import transaction as transaction

__all__ = ["DATA", "RECORD", "RUNS", "SWEEP_FILE", "SWEEP_META", "TIDY_COLUMNS", "Outcome",
           "data_path", "experiment_name", "experiment_records", "is_experiment", "is_sweep",
           "load_records", "load_table", "load_tracker", "open_sweep", "point_status",
           "record_files", "record_path", "sweep_status", "tidy_table", "write_point",
           "write_spec"]

RECORD = "record.json"
SWEEP_META = "sweep.json"
SWEEP_FILE = "sweep.toml"
DATA = "data"
RUNS = "runs"
#: Columns every sweep table has after ``run_id`` and the config fields.
TIDY_COLUMNS = ("step", "t", "k", "quantity", "value")


# --------------------------------------------------------------------------- sweep points


def record_path(out: Path, rid: str) -> Path:
    """The run record of point ``rid`` in the sweep folder ``out``."""
    return out / RUNS / f"{rid}.json"


def data_path(out: Path, rid: str) -> Path:
    """The tidy table of point ``rid`` in the sweep folder ``out``."""
    return out / DATA / f"{rid}.parquet"


def point_status(out: Path, rid: str) -> str:
    """``finished``, ``failed`` or ``pending`` (no record, or a record without its data)."""
    rec = record_path(out, rid)
    if not rec.exists():
        return "pending"
    try:
        status = io.read_json(rec).get("status", "pending")
    except (OSError, ValueError):
        return "pending"
    if status == "finished" and not data_path(out, rid).exists():
        return "pending"
    return str(status)


def open_sweep(out: Path, spec: SweepSpec) -> None:
    """Check that ``out`` can take ``spec`` and clean it (call with the lock held).

    A folder holding a sweep of another experiment or of other points is
    refused (``ValueError``) before any work; temporary files of an
    interrupted write are removed.
    """
    meta = out / SWEEP_META
    if meta.exists():
        try:
            old = io.read_json(meta)
        except (OSError, ValueError) as err:
            raise ValueError(f"{str(meta)!r} is not a readable sweep record ({err}); "
                             "choose another folder") from None
        if old.get("experiment") != spec.experiment:
            raise ValueError(f"out folder {str(out)!r} holds a sweep of experiment "
                             f"{old.get('experiment')!r}, not {spec.experiment!r}; "
                             "choose another folder")
        ids = {p.get("run_id") for p in old.get("points", [])}
        new = {p.run_id for p in spec.points}
        if ids != new:
            raise ValueError(f"out folder {str(out)!r} holds another grid of "
                             f"{spec.experiment!r} ({len(ids - new)} of its {len(ids)} points "
                             f"are not in this sweep, {len(new - ids)} of these {len(new)} "
                             "are not in it); choose another folder")
    for sub in (out, out / DATA, out / RUNS):
        for p in sub.glob(".*.tmp") if sub.is_dir() else ():
            p.unlink(missing_ok=True)


def write_spec(out: Path, spec: SweepSpec) -> None:
    """Write ``sweep.json`` (and a copy of the sweep file) into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    io.write_json(spec.to_dict(), out / SWEEP_META)
    if spec.source is not None and Path(spec.source).exists():
        with io.atomic_open(out / SWEEP_FILE) as fh:
            fh.write(Path(spec.source).read_text(encoding="utf-8"))


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


def write_point(out: Path, point: Point, outcome: Outcome) -> None:
    """Store one point's outcome: data first, then the record (the commit mark)."""
    data = data_path(out, point.run_id)
    if outcome.status == "finished" and outcome.table is not None:
        io.write_table(outcome.table, data)
    elif data.exists():
        data.unlink()
    record = provenance.run_record(
        {"experiment": point.experiment, **point.config}, seed=point.seed,
        wall_time=outcome.wall_time, status=outcome.status, error=outcome.error,
        extra={"run_id": point.run_id, "module": point.module, "setting": point.setting,
               "summary": outcome.summary, "host": outcome.host or socket.gethostname(),
               "pid": outcome.pid, "rows": 0 if outcome.table is None else len(outcome.table)},
    )
    io.write_json(record, record_path(out, point.run_id))


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


# --------------------------------------------------------------------------- reading


def is_sweep(path: Path) -> bool:
    """Whether ``path`` is a sweep folder."""
    return (path / SWEEP_META).is_file() or (path / DATA).is_dir()


def is_experiment(path: Path) -> bool:
    """Whether ``path`` is one experiment's folder (it holds ``record.json``, no ``runs/``)."""
    return (path / RECORD).is_file() and not (path / RUNS).is_dir()


def experiment_records(out_root: Path) -> list[Path]:
    """The run records of a ``specdyn reproduce`` folder: ``NAME/record.json``, then
    ``NAME.failed.json`` (a failed attempt, beside a kept earlier result or alone)."""
    finished = sorted(d / RECORD for d in out_root.iterdir()
                      if d.is_dir() and (d / RECORD).is_file())
    return finished + sorted(out_root.glob(f"*{FAILED_SUFFIX}"))


def experiment_name(record: Path) -> str:
    """The experiment a record of :func:`experiment_records` belongs to."""
    return record.parent.name if record.name == RECORD else record.name[: -len(FAILED_SUFFIX)]


def record_files(path: Path) -> list[Path]:
    """Every run-record or sweep file a results folder may hold (existing or not)."""
    return [*sorted((path / RUNS).glob("*.json")), path / RECORD, path / SWEEP_META]


def _sweep_ids(out: Path) -> list[str]:
    """The run ids of the sweep's points (its records' ids if ``sweep.json`` is missing)."""
    meta = out / SWEEP_META
    if meta.exists():
        return [str(p["run_id"]) for p in _read_json(meta).get("points", [])]
    return sorted(f.stem for f in (out / RUNS).glob("*.json")) if (out / RUNS).is_dir() else []


def sweep_status(out: str | os.PathLike[str]) -> pd.DataFrame:
    """One row per point of the sweep in ``out``: run id, setting, status (pending included)."""
    out_dir = Path(out)
    meta = out_dir / SWEEP_META
    if not meta.exists():
        raise ValueError(f"{str(out_dir)!r} is not a sweep folder (no sweep.json)")
    rows = []
    for p in _read_json(meta).get("points", []):
        rows.append({**p, "status": point_status(out_dir, p["run_id"])})
    return pd.DataFrame(rows)


def _read_json(path: Path) -> Any:
    try:
        return io.read_json(path)
    except ValueError as err:
        raise ValueError(f"{str(path)!r} is not valid JSON ({err})") from None


def _read_table(path: Path) -> pd.DataFrame:
    try:
        return pd.read_parquet(path)
    except Exception as err:  # pyarrow raises its own types for a corrupt file
        raise ValueError(f"{str(path)!r} is not a readable Parquet table "
                         f"({type(err).__name__}: {err})") from None


def load_table(path: str | os.PathLike[str]) -> pd.DataFrame:
    """The finished results at ``path`` as one DataFrame (see :func:`specdyn.runs.load`)."""
    p = Path(path)
    if p.is_file():
        if p.suffix != ".parquet":
            raise ValueError(f"path must be a .parquet file or a results folder, got {str(p)!r}")
        return _read_table(p)
    if not p.is_dir():
        raise ValueError(f"path {str(p)!r} does not exist")
    if is_sweep(p):
        ids = sorted(rid for rid in _sweep_ids(p) if point_status(p, rid) == "finished")
        if not ids:
            return pd.DataFrame()
        return pd.concat([_read_table(data_path(p, rid)) for rid in ids], ignore_index=True)
    rec = p / RECORD
    if rec.exists():
        status = _read_json(rec).get("status")
        if status != "finished":
            raise ValueError(f"{str(p)!r} holds no finished result: its record says "
                             f"{status!r} ({rec})")
    files = sorted(f for f in p.glob("*.parquet") if not f.name.startswith("."))
    if not files:
        raise ValueError(f"no Parquet tables in {str(p)!r}")
    if len(files) == 1:
        return _read_table(files[0])
    return pd.concat([_read_table(f).assign(table=f.stem) for f in files], ignore_index=True)


def load_records(path: str | os.PathLike[str]) -> pd.DataFrame:
    """The run records at ``path``, one row per run (see :func:`specdyn.runs.load_records`)."""
    p = Path(path)
    failed = failed_record_path(p)
    if is_sweep(p):
        files = [record_path(p, rid) for rid in sorted(_sweep_ids(p))]
        files = [f for f in files if f.exists()]
    elif (p / RECORD).is_file() or failed.is_file():
        files = [f for f in (p / RECORD, failed) if f.is_file()]
    elif p.is_file() and p.suffix == ".json":
        files = [p]
    else:
        raise ValueError(f"no run records in {str(p)!r} (expected runs/*.json or record.json)")
    rows = []
    for f in files:
        rec = _read_json(f)
        row: dict[str, Any] = {
            "run_id": rec.get("run_id", p.name if f in (p / RECORD, failed) else f.stem),
            "status": rec.get("status"),
            "wall_time_s": rec.get("wall_time_s"),
            "host": rec.get("host"),
            "seed": rec.get("seed"),
        }
        row.update(rec.get("setting") or {})
        for key, value in (rec.get("summary") or {}).items():
            row[f"summary.{key}"] = value
        err = rec.get("error")
        row["error"] = err.strip().splitlines()[-1] if err else None
        row["config"] = rec.get("config")
        rows.append(row)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- tracker folders


def load_tracker(path: str | os.PathLike[str]) -> tuple[pd.DataFrame, dict[str, Any]]:
    """A tracker folder's measured rows and its ``record.json`` (``{}`` when there is none).

    The rows are those of :func:`specdyn.measure.read_spectra` (whole files
    only) less the ``record_coalesced`` markers of records the ``"coalesce"``
    policy dropped: those steps are listed in the record's ``"coalesced"``.
    The folder's layout and its atomic writes live with the tracker, in
    ``specdyn.measure`` (which sits below ``runs``), on :mod:`specdyn.io`'s
    atomic writes.
    """
    from specdyn.measure.tracker import read_spectra, read_tracker_record

    folder = Path(path)
    df = read_spectra(folder)
    df = df[df["quantity"] != "record_coalesced"].reset_index(drop=True)
    return df, read_tracker_record(folder) or {}
