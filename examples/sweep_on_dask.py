"""A sweep over settings and seeds on Dask, stored as one tidy table.

The sweep runs the ``simulate`` experiment (a finite two-layer linear network
beside the exact theory) over ``sigma_w`` and ``gamma0_ratio`` (the paper's two
knobs between lazy and feature learning) and two seeds, on a Dask
``LocalCluster`` of worker processes. The same sweep as a file::

    experiment = "simulate"
    D = 32
    steps = 1000
    figure = false
    [sweep]
    seeds = 2
    [sweep.axes]
    sigma_w = [0.1, 1.0]
    gamma0_ratio = {log = [0.5, 2.0], num = 3}

runs with ``specdyn sweep grid.toml --executor dask`` (or ``--address
tcp://HOST:PORT`` to join a running cluster, e.g. one started by dask-jobqueue
on SLURM). Re-running into the same folder skips finished points, so an
interrupted sweep resumes; ``specdyn results OUT`` lists the runs and
``specdyn.runs.load(OUT)`` returns the data.

Run:  python examples/sweep_on_dask.py [--small] [--out DIR] [--address tcp://HOST:PORT]
``--small`` (or SPECDYN_EXAMPLES_SMALL=1) runs 2 tiny points on one worker.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from typing import Any

from specdyn import runs
from specdyn.runs.spec import make_sweep
from specdyn.runs.sweep import run_sweep


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--small", action="store_true", help="smoke-test size")
    ap.add_argument("--out", type=Path, default=None, help="sweep folder (default: temporary)")
    ap.add_argument("--address", default=None, help="join this Dask scheduler instead")
    args = ap.parse_args()
    small = args.small or os.environ.get("SPECDYN_EXAMPLES_SMALL") == "1"
    out = args.out or Path(tempfile.mkdtemp(prefix="specdyn-sweep-"))

    axes: dict[str, Any]
    seeds: Any
    if small:
        axes = {"sigma_w": [0.1, 1.0]}
        base = {"D": 16, "N": 128, "steps": 100, "checkpoints": 4, "figure": False}
        seeds, workers = [0], 1
    else:
        axes = {"sigma_w": [0.1, 1.0], "gamma0_ratio": {"log": [0.5, 2.0], "num": 3}}
        base = {"D": 32, "steps": 1000, "figure": False}
        seeds, workers = 2, 2
    spec = make_sweep("simulate", axes, base=base, seeds=seeds)
    print(f"{len(spec.points)} points -> {out}")

    report = run_sweep(spec, out, executor="dask", workers=workers, address=args.address,
                       progress=not small)
    print(report)
    again = run_sweep(spec, out, executor="dask", workers=workers, address=args.address,
                      progress=False)
    print(f"re-run: {again.skipped} of {again.total} points already finished, "
          f"{again.finished} recomputed")

    df = runs.load(out)                  # run_id, config fields, step, t, k, quantity, value
    records = runs.load_records(out)     # one row per run: status, wall time, summary numbers
    print(f"\n{len(df)} tidy rows, {df.run_id.nunique()} runs; quantities: "
          f"{sorted(df.quantity.unique())}")
    cols = [c for c in records.columns if c in ("run_id", "status", "seed", "sigma_w",
                                                "gamma0_ratio", "summary.regime",
                                                "summary.delta_alpha",
                                                "summary.delta_alpha_theory")]
    print(records[cols].to_string(index=False))


if __name__ == "__main__":
    main()
