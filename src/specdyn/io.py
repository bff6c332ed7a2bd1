"""Result files: tidy Parquet tables and JSON run records, written atomically.

Every write goes to a temporary file in the destination folder and is then
renamed into place, so an interrupted run never leaves a partial file and
loses nothing that was already finished.
"""

from __future__ import annotations

import functools
import json
import os
import platform
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from specdyn._version import __version__


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _current_umask()


@contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` on success."""
    dest = Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    os.chmod(tmp_path, 0o666 & ~_UMASK)  # mkstemp makes 0600; results are for sharing
    try:
        yield tmp_path
        os.replace(tmp_path, dest)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


@contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w") -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path`` for writing; rename it onto ``path`` on success."""
    with atomic_path(path) as tmp, open(tmp, mode) as fh:
        yield fh
        fh.flush()
        os.fsync(fh.fileno())


def write_table(df: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write ``df`` to Parquet atomically and return the path."""
    with atomic_path(path) as tmp:
        df.to_parquet(tmp, index=False)
    return Path(path)


def write_json(obj: Any, path: str | os.PathLike[str]) -> Path:
    """Write ``obj`` as indented JSON atomically (numpy values converted)."""
    with atomic_open(path) as fh:
        json.dump(obj, fh, indent=2, default=_json_default, sort_keys=False)
        fh.write("\n")
    return Path(path)


def read_json(path: str | os.PathLike[str]) -> Any:
    """Read a JSON file."""
    with open(path) as fh:
        return json.load(fh)


def run_record(config: Any, *, seed: int | None = None, wall_time: float | None = None,
               status: str = "finished", error: str | None = None,
               extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSON record of one run: settings, version, commit, seed, host, time, status."""
    record: dict[str, Any] = {
        "specdyn_version": __version__,
        "git_commit": git_commit(),
        "config": config,
        "seed": seed,
        "host": socket.gethostname(),
        "python": platform.python_version(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "wall_time_s": wall_time,
        "status": status,
        "error": error,
    }
    if extra:
        record.update(extra)
    return record


@functools.lru_cache(maxsize=1)
def git_commit() -> str | None:
    """The commit of the specdyn source tree, if it is a git checkout; else ``None``.

    Cached: it cannot change within a process, and a sweep writes a record per point.
    """
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    if hasattr(obj, "__dataclass_fields__"):
        import dataclasses

        return dataclasses.asdict(obj)
    raise TypeError(f"cannot write {type(obj).__name__} to JSON")


def load(path: str | os.PathLike[str]) -> pd.DataFrame:
    """The results at ``path`` as one pandas DataFrame.

    - a sweep folder (it has ``data/``): every finished point's tidy rows
      (``run_id``, the config fields, ``step, t, k, quantity, value``), in
      run-id order;
    - an experiment folder: its Parquet tables stacked, with a ``table``
      column naming the file when there are several;
    - a ``.parquet`` file: that table.

    Temporary files of an interrupted write (``.NAME.*.tmp``) are never read.
    """
    p = Path(path)
    if p.is_file():
        if p.suffix != ".parquet":
            raise ValueError(f"path must be a .parquet file or a results folder, got {str(p)!r}")
        return pd.read_parquet(p)
    if not p.is_dir():
        raise ValueError(f"path {str(p)!r} does not exist")
    if (p / "data").is_dir():
        files = sorted((p / "data").glob("*.parquet"))
        if not files:
            return pd.DataFrame()
        return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    files = sorted(f for f in p.glob("*.parquet") if not f.name.startswith("."))
    if not files:
        raise ValueError(f"no Parquet tables in {str(p)!r}")
    if len(files) == 1:
        return pd.read_parquet(files[0])
    frames = [pd.read_parquet(f).assign(table=f.stem) for f in files]
    return pd.concat(frames, ignore_index=True)


def load_records(path: str | os.PathLike[str]) -> pd.DataFrame:
    """The run records at ``path`` as a DataFrame, one row per run.

    ``path`` is a sweep folder (records in ``runs/*.json``) or an experiment
    folder (its ``record.json``). Columns: ``run_id``, ``status``,
    ``wall_time_s``, ``host``, ``seed``, the swept setting (for sweeps), every
    summary number as ``summary.NAME``, ``error`` (the last line of the
    traceback), and ``config`` (the full config dict).
    """
    p = Path(path)
    if (p / "runs").is_dir():
        files = sorted((p / "runs").glob("*.json"))
    elif (p / "record.json").is_file():
        files = [p / "record.json"]
    elif p.is_file() and p.suffix == ".json":
        files = [p]
    else:
        raise ValueError(f"no run records in {str(p)!r} (expected runs/*.json or record.json)")
    rows = []
    for f in files:
        rec = read_json(f)
        row: dict[str, Any] = {
            "run_id": rec.get("run_id", f.parent.name if f.name == "record.json" else f.stem),
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
