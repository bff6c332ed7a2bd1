"""``specdyn data`` on real arrays: its cost against the floor, measured in the same run.

Run:  python benchmarks/data_cli.py [--rounds 3] [--M 20000] [--patch 16]
                                    [--d784] [--blocks ROWS] [--no-budget] [--threads T]

The budget (always): 20000 x 256 arrays, 16 x 16 grey patches of the sample photographs
with the blurred patch as target (:func:`specdyn.data.real.image_patches`,
``target="blur"``), saved as ``.npy`` once. Each round runs, in fresh processes at one
thread, interleaved: the floor (a bare ``python -c`` that loads the arrays, centres them,
forms ``X^T X`` and ``X^T Y`` and runs one ``eigh``: what any analysis of the data must
do, imports of numpy and scipy included), ``specdyn data X.npy Y.npy`` (the default:
both regimes, ``--reference auto``, no figure), the same with ``--out DIR`` (tables and
the figure), with ``--reference never``, and the imports alone. Printed: best and median
wall time of each, its ratio to the floor's best, and the 1-minute load before and after.

``--d784``: 28 x 28 patches (784 inputs), once with a 10-output target (ten fixed random
projections of the blurred patch: rank 10, like labels) and once with the blurred patch
itself (784 outputs), one round each beside the floor.

``--threads T``: every process (the floor's too) at ``T`` BLAS threads instead of one,
e.g. the cores of an idle machine, which ``specdyn data`` takes by default.

``--blocks ROWS``: an ``X`` of ``ROWS x 512`` float32 and a 10-output ``Y`` written as
``.npy`` (2 GB at a million rows), read by rows in blocks: wall time and the peak
resident memory of the process (``ru_maxrss``), beside the floor's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

FLOOR = ("import numpy as np, scipy.linalg as sl, sys; X = np.load(sys.argv[1]); "
         "Y = np.load(sys.argv[2]); X = X - X.mean(0); Y = Y - Y.mean(0); "
         "S = X.T @ X / len(X); C = X.T @ Y / len(X); w, U = sl.eigh(S); (U.T @ C).sum()")
IMPORTS = "import specdyn.cli.data, specdyn.study, specdyn.measure, specdyn.theory"
#: Runs a command and prints its wall time and the peak resident memory of the command.
PEAK = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
        "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
        "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _threads(n: int) -> None:
    """Every measured process at ``n`` BLAS threads."""
    ENV.update({v: str(n) for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                     "MKL_NUM_THREADS")})


def _wall(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True, env=ENV)
    return time.perf_counter() - t0


def _peak(cmd: list[str]) -> tuple[float, float]:
    """``(wall seconds, peak resident MiB)`` of ``cmd`` in a fresh parent."""
    out = subprocess.run([sys.executable, "-c", PEAK, *cmd], capture_output=True, text=True,
                         check=True, env=ENV).stdout.split()
    return float(out[0]), float(out[1]) / 1024.0


def _table(times: dict[str, list[float]], floor: str) -> None:
    best_floor = min(times[floor])
    print(f"{'command':50s} {'best (s)':>9s} {'median (s)':>11s} {'/ floor':>8s}")
    for name, ts in times.items():
        print(f"{name:50s} {min(ts):9.2f} {statistics.median(ts):11.2f} "
              f"{min(ts) / best_floor:8.1f}")


def _save(d: Path, stem: str, X: np.ndarray, Y: np.ndarray) -> tuple[str, str]:
    np.save(d / f"{stem}_x.npy", X)
    np.save(d / f"{stem}_y.npy", Y)
    return str(d / f"{stem}_x.npy"), str(d / f"{stem}_y.npy")


def budget(d: Path, entry: list[str], M: int, patch: int, rounds: int) -> None:
    from specdyn.data.real import image_patches

    data = image_patches(patch=patch, M=M, target="blur")
    x, y = _save(d, "budget", data.X, data.Y)
    print(f"X {data.X.shape}, Y {data.Y.shape}; {rounds} rounds, one thread")
    rows = {
        "floor: load, centre, X^T X, X^T Y, eigh": [sys.executable, "-c", FLOOR, x, y],
        "imports (specdyn.cli.data, study, measure, theory)": [sys.executable, "-c", IMPORTS],
        "specdyn data --reference never": [*entry, "data", x, y, "--reference", "never"],
        "specdyn data (default: reference auto, no figure)": [*entry, "data", x, y],
        "specdyn data --out DIR (tables and figure)": [*entry, "data", x, y, "--out",
                                                       str(d / "out")],
    }
    times: dict[str, list[float]] = {k: [] for k in rows}
    for _ in range(rounds):
        for name, cmd in rows.items():
            times[name].append(_wall(cmd))
    _table(times, "floor: load, centre, X^T X, X^T Y, eigh")


def d784(d: Path, entry: list[str], M: int) -> None:
    from specdyn.data.real import image_patches

    data = image_patches(patch=28, M=M, target="blur")
    assert data.Y is not None
    proj = np.random.default_rng(0).standard_normal((data.Y.shape[1], 10))
    cases = {"784 -> 10": _save(d, "d784_10", data.X, data.Y @ proj),
             "784 -> 784": _save(d, "d784", data.X, data.Y)}
    times: dict[str, list[float]] = {}
    for name, (x, y) in cases.items():
        times[f"floor ({name})"] = [_wall([sys.executable, "-c", FLOOR, x, y])]
        times[f"specdyn data ({name})"] = [_wall([*entry, "data", x, y])]
    print(f"X {data.X.shape}; one round each, {ENV['OMP_NUM_THREADS']} thread(s)")
    _table(times, "floor (784 -> 10)")


def blocks(d: Path, entry: list[str], rows: int) -> None:
    D, P = 512, 10
    rng = np.random.default_rng(0)
    k = np.arange(1, D + 1)
    xm = np.lib.format.open_memmap(d / "big_x.npy", mode="w+", dtype=np.float32,
                                   shape=(rows, D))
    ym = np.lib.format.open_memmap(d / "big_y.npy", mode="w+", dtype=np.float32,
                                   shape=(rows, P))
    A = rng.standard_normal((D, P)) / np.sqrt(D)
    for s in range(0, rows, 100_000):
        n = min(100_000, rows - s)
        z = rng.standard_normal((n, D)) * k**-0.6
        xm[s:s + n] = z
        ym[s:s + n] = z @ A + 0.1 * rng.standard_normal((n, P))
    xm.flush()
    ym.flush()
    del xm, ym
    x, y = str(d / "big_x.npy"), str(d / "big_y.npy")
    gb = (rows * (D + P) * 4) / 2**30
    print(f"X {rows} x {D} float32, Y {rows} x {P} ({gb:.2f} GiB on disk), one thread")
    for name, cmd in (("floor (np.load: into memory)", [sys.executable, "-c", FLOOR, x, y]),
                      ("specdyn data (read by rows, in blocks)", [*entry, "data", x, y])):
        wall, mib = _peak(cmd)
        print(f"{name:45s} {wall:8.1f} s   peak {mib:8.0f} MiB")


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--M", type=int, default=20000)
    ap.add_argument("--patch", type=int, default=16)
    ap.add_argument("--d784", action="store_true")
    ap.add_argument("--blocks", type=int, default=0, metavar="ROWS")
    ap.add_argument("--no-budget", action="store_true", help="only --d784 / --blocks")
    ap.add_argument("--threads", type=int, default=1, help="BLAS threads of every process")
    args = ap.parse_args()
    _threads(args.threads)
    script = shutil.which("specdyn")
    entry = [script] if script else [sys.executable, "-m", "specdyn"]
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        if not args.no_budget:
            budget(d, entry, args.M, args.patch, args.rounds)
        if args.d784:
            d784(d, entry, args.M)
        if args.blocks:
            blocks(d, entry, args.blocks)
    print(f"load average (1 min): {load0:.2f} before, {os.getloadavg()[0]:.2f} after")


if __name__ == "__main__":
    main()
