"""Result files: tidy Parquet tables and JSON run records, written atomically.

Every write goes to a temporary file in the destination folder and is then
renamed into place, so an interrupted run never leaves a partial file and
loses nothing that was already finished. The layout of result folders (runs,
sweeps), their locks and transactions live in :mod:`specdyn.experiments.store`;
:func:`load` and :func:`load_records` read through it.
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


#: The process umask: files and folders made private by ``mkstemp`` get these bits back.
UMASK = _current_umask()


@contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` on success."""
    dest = Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    os.chmod(tmp_path, 0o666 & ~UMASK)  # mkstemp makes 0600; results are for sharing
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
    """The finished results at ``path`` as one pandas DataFrame.

    - a sweep folder (it has ``sweep.json``): the tidy rows (``run_id``, the
      config fields, ``step, t, k, quantity, value``) of every point of its
      grid whose record says ``finished``, in run-id order;
    - an experiment folder: its Parquet tables stacked, with a ``table``
      column naming the file when there are several; a folder whose
      ``record.json`` does not say ``finished`` is refused (``ValueError``);
    - a ``.parquet`` file: that table.

    Temporary files of an interrupted write (``.NAME.*.tmp``) are never read;
    an unreadable file is a ``ValueError`` naming it.
    """
    from specdyn.experiments import store

    return store.load_table(path)


def load_records(path: str | os.PathLike[str]) -> pd.DataFrame:
    """The run records at ``path`` as a DataFrame, one row per run.

    ``path`` is a sweep folder (the records of its grid's points in
    ``runs/*.json``) or an experiment folder (its ``record.json``, and the
    record of a later failed attempt, ``NAME.failed.json`` beside it).
    Columns: ``run_id``, ``status``, ``wall_time_s``, ``host``, ``seed``, the
    swept setting (for sweeps), every summary number as ``summary.NAME``,
    ``error`` (the last line of the traceback), and ``config`` (the full
    config dict).
    """
    from specdyn.experiments import store

    return store.load_records(path)
