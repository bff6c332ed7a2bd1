"""A tiny experiment for the sweep tests, importable by worker processes.

It is registered as ``sweep-probe`` when this module is imported; sweep files
name it with ``module = "sweep_probe"`` (the tests put ``tests/`` on
PYTHONPATH). Each call can log ``start``/``end`` lines (with its pid) to a
file, sleep, wait for a file (a barrier), and raise on request, so tests can
kill, interrupt and count runs.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from specdyn import _validate as v
from specdyn import io
from specdyn.runs.registry import ExperimentResult, register


@dataclass(frozen=True)
class ProbeConfig:
    x: float = 1.0
    n: int = 4
    seed: int = 0
    sleep: float = 0.0
    fail_above: float = float("inf")
    log: str = ""
    tag: str = "a"
    die_above: float = float("inf")
    die_once: str = ""
    hang_at: float = float("nan")
    hang_marker: str = ""
    wait_at: float = float("nan")
    wait_for: str = ""
    threads_log: str = ""

    def __post_init__(self) -> None:
        v.positive_int("n", self.n)
        v.nonnegative("sleep", self.sleep)
        v.nonnegative("seed", self.seed)


def _log(path: str, what: str, x: float, seed: int) -> None:
    if path:
        # one short O_APPEND write per line: lines from concurrent workers never mix
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        try:
            os.write(fd, f"{what} {x!r} {seed} {os.getpid()} {os.environ.get('PROBE_PHASE', '')}\n"
                     .encode())
        finally:
            os.close(fd)


@register("sweep-probe", "test probe for sweeps (not a science experiment)", ProbeConfig)
def run(cfg: ProbeConfig, out_dir: Path) -> ExperimentResult:
    _log(cfg.log, "start", cfg.x, cfg.seed)
    if cfg.x == cfg.hang_at and cfg.hang_marker and not Path(cfg.hang_marker).exists():
        Path(cfg.hang_marker).touch()
        time.sleep(600)  # the first attempt hangs, to be killed by the test
    if cfg.x == cfg.wait_at and cfg.wait_for:
        # a barrier: this point cannot finish before the test creates the file, so the
        # sweep is certainly still running when the test interrupts it
        while not Path(cfg.wait_for).exists():
            time.sleep(0.02)
    if cfg.sleep:
        time.sleep(cfg.sleep)
    if cfg.x > cfg.die_above:
        # the worker process dies (as if killed or out of memory); with die_once, only
        # the first time: a marker file remembers the first death of this point
        marker = Path(f"{cfg.die_once}.{cfg.x!r}") if cfg.die_once else None
        if marker is None or not marker.exists():
            if marker is not None:
                marker.touch()
            os.kill(os.getpid(), signal.SIGKILL)
    if cfg.threads_log:
        # the worker's thread budget: the environment and the live BLAS pools
        import threadpoolctl

        pools = max((p["num_threads"] for p in threadpoolctl.threadpool_info()), default=0)
        with open(cfg.threads_log, "a") as f:
            f.write(f"{os.environ.get('OMP_NUM_THREADS', '')} {pools}\n")
    if cfg.x > cfg.fail_above:
        raise RuntimeError(f"probe asked to fail at x={cfg.x}")
    rng = np.random.default_rng(cfg.seed)
    steps = np.arange(cfg.n)
    value = cfg.x * rng.standard_normal(cfg.n)
    df = pd.DataFrame({"step": steps, "t": 0.5 * steps, "k": 1.0, "quantity": "y",
                       "value": value})
    path = io.write_table(df, out_dir / "data.parquet")
    _log(cfg.log, "end", cfg.x, cfg.seed)
    return ExperimentResult("sweep-probe", out_dir, tables=[path],
                            summary={"mean": float(value.mean()), "final": float(value[-1])})
