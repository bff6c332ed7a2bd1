"""Provenance of a result: the settings, version, commit, host and time of a run.

The one definition of a run record, used by experiments and sweeps
(:mod:`specdyn.runs`) and by the spectrum tracker (:mod:`specdyn.measure`).
"""

from __future__ import annotations

import functools
import platform
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

from specdyn._version import __version__


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

    Read once a process, at the first call, and kept: a sweep writes a record per
    point, and a commit made while a long run goes on is not the code it runs (the
    run's modules were imported before). So a run asks for it when it starts
    (:func:`specdyn.runs.run_experiment`, :func:`specdyn.runs.run_sweep`; the
    tracker writes its first record when it opens its folder), not when it writes
    its record.
    """
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None
