"""Result files written atomically: tidy Parquet tables and JSON.

Every write goes to a temporary file in the destination folder and is then
renamed into place, so an interrupted run never leaves a partial file and
loses nothing that was already finished. What a run record holds is
:mod:`specdyn.provenance`; the layout of result folders (runs, sweeps), their
locks and transactions, and reading them back (:func:`specdyn.runs.load`,
:func:`specdyn.runs.load_records`) live in :mod:`specdyn.runs.store`.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd


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
