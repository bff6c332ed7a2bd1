"""``specdyn data`` on 20000 x 256: the budget of issue 41 (under about 30 s on 2 cores).

Run:  python benchmarks/data_cli.py [--rounds 3] [--M 20000] [--patch 16]

The arrays are 16 x 16 grey patches of the sample photographs with the blurred patch as
target (:func:`specdyn.data.real.image_patches`, ``target="blur"``), saved as ``.npy``
once. Each round runs, in fresh processes at one thread, interleaved: ``specdyn data X.npy
Y.npy --out DIR`` (the default: both regimes with the exact reference), the same with
``--no-reference``, and the floor: a bare ``python -c`` that loads the arrays and forms
and diagonalises ``Sigma`` and ``C`` (what any analysis of the data must do; imports of
numpy and scipy included). Printed: best and median wall time of each, the 1-minute load
before and after.
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


def _wall(cmd: list[str]) -> float:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1"}
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True, env=env)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--M", type=int, default=20000)
    ap.add_argument("--patch", type=int, default=16)
    args = ap.parse_args()
    from specdyn.data.real import image_patches

    script = shutil.which("specdyn")
    entry = [script] if script else [sys.executable, "-m", "specdyn"]
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        data = image_patches(patch=args.patch, M=args.M, target="blur")
        np.save(d / "X.npy", data.X)
        np.save(d / "Y.npy", data.Y)
        x, y = str(d / "X.npy"), str(d / "Y.npy")
        print(f"X {data.X.shape}, Y {data.Y.shape}; {args.rounds} rounds, one thread")
        rows = {
            "floor: load, Sigma, C, eigh (python -c)": [sys.executable, "-c", FLOOR, x, y],
            "specdyn data --no-reference": [*entry, "data", x, y, "--no-reference",
                                            "--out", str(d / "noref")],
            "specdyn data (default)": [*entry, "data", x, y, "--out", str(d / "full")],
        }
        load0 = os.getloadavg()[0]
        times: dict[str, list[float]] = {k: [] for k in rows}
        for _ in range(args.rounds):
            for name, cmd in rows.items():
                times[name].append(_wall(cmd))
        load1 = os.getloadavg()[0]
    print(f"load average (1 min): {load0:.2f} before, {load1:.2f} after")
    print(f"{'command':44s} {'best (s)':>9s} {'median (s)':>11s}")
    for name, ts in times.items():
        print(f"{name:44s} {min(ts):9.2f} {statistics.median(ts):11.2f}")


if __name__ == "__main__":
    main()
