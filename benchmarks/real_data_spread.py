"""The seed spread behind real-data's tolerances: its claims at seeds other than the judged one.

Runs the quick ``real-data`` at each seed (default 1-5: never 0, the seed the claims are
judged on), sequentially at one thread, and prints per claim the measured values, their
mean, standard deviation and largest magnitude, and the two rules of
``specdyn/experiments/real_data/claims.py``: ``rule`` (for a value expected near 0: the
largest magnitude plus three times the standard deviation, rounded up to two significant
digits) and ``band`` (for a finding: the mean plus or minus the largest distance from it
plus three standard deviations, the half-width rounded up to two significant digits),
beside the expectation in the code. With ``--model-networks`` the linear network also
trains on every task where the model applies (``text-denoise`` trains only at ``--full``
otherwise), for their tolerances. About 45-70 s of one core a seed.

With ``--full``, a last column says whether the band the code applies at that size holds
every seed's value: where it does not, the claim needs a ``--full`` band of its own
(:mod:`specdyn.experiments.real_data.full_bands`), the ``rule`` or ``band`` printed.
``--from DIR`` checks the claims of the finished folders ``DIR/seedN`` again instead of
running (the values are the same; the code's tolerances may be newer).

    python benchmarks/real_data_spread.py [--seeds 1 2 3 4 5] [--out DIR] [--full]
                                          [--model-networks] [--from DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import re
import tempfile
import time
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one thread, before numpy and torch load

import numpy as np  # noqa: E402


def rule(values: list[float]) -> float:
    """max |x| + 3 sd, rounded up to two significant digits."""
    x = np.abs(np.asarray(values, dtype=float))
    t = float(x.max() + 3.0 * np.std(np.asarray(values, dtype=float), ddof=1))
    if t <= 0:
        return 0.0
    scale = 10.0 ** (math.floor(math.log10(t)) - 1)
    return math.ceil(t / scale) * scale


def band(values: list[float]) -> tuple[float, float]:
    """mean -/+ (max |x - mean| + 3 sd), the half-width rounded up to two significant
    digits."""
    x = np.asarray(values, dtype=float)
    m = float(x.mean())
    h = rule(list(x - m))
    return m - h, m + h


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    ap.add_argument("--out", type=Path, default=None, help="folder for the runs (default: temp)")
    ap.add_argument("--full", action="store_true",
                    help="the --full config (about 20 min of one core a seed), for the "
                         "tolerances of claims whose value depends on the size")
    ap.add_argument("--model-networks", action="store_true",
                    help="train the linear network on every task where the model applies")
    ap.add_argument("--from", dest="from_dir", type=Path, default=None,
                    help="check the claims of DIR/seedN again, no run")
    args = ap.parse_args()

    import torch

    from specdyn.experiments.real_data.config import MODEL_TASKS, RealDataConfig, full_real_data
    from specdyn.runs import recheck_claims, run_experiment

    torch.set_num_threads(1)
    out = args.out or Path(tempfile.mkdtemp(prefix="real-data-spread-"))
    values: dict[str, list[float]] = {}
    expected: dict[str, str] = {}
    for seed in args.seeds:
        start = time.perf_counter()
        base = full_real_data() if args.full else RealDataConfig()
        cfg = dataclasses.replace(base, seed=seed, figure=False)
        if args.model_networks:
            cfg = dataclasses.replace(cfg, model_task_networks=MODEL_TASKS)
        if args.from_dir is not None:
            claims = recheck_claims(args.from_dir / f"seed{seed}" / "real-data")
        else:
            cpu = time.process_time()
            claims = run_experiment("real-data", out / f"seed{seed}", config=cfg).claims
            print(f"seed {seed}: {time.perf_counter() - start:.0f} s wall, "
                  f"{time.process_time() - cpu:.0f} s CPU", flush=True)
        for c in claims:
            values.setdefault(c.key or c.name, []).append(float(c.measured))
            expected[c.key or c.name] = c.expected
    print(f"\n{'claim':45s} {'values':48s} {'mean':>8s} {'sd':>8s} {'max|x|':>8s} "
          f"{'rule':>8s} {'band':>18s}  in the code"
          + ("  (holds every seed?)" if args.full else ""))
    for key, v in values.items():
        a = np.asarray(v)
        lo, hi = band(v) if np.isfinite(a).all() else (np.nan, np.nan)
        r = rule(v) if np.isfinite(a).all() else np.nan
        holds = ""
        if args.full:
            q = re.fullmatch(r"in \[(\S+), (\S+)\]", expected[key])
            inside = q is not None and bool(np.all((a >= float(q[1])) & (a <= float(q[2]))))
            holds = "  ?" if q is None else "  NaN at a seed (not judged)" if not \
                np.isfinite(a).all() else "  yes" if inside else \
                "  NO: needs a band of its own at this size"
        print(f"{key:45s} {' '.join(f'{x:8.4f}' for x in a):48s} {a.mean():8.4f} "
              f"{a.std(ddof=1):8.4f} {np.abs(a).max():8.4f} {r:8.3g} [{lo:7.3g}, {hi:7.3g}]"
              f"  {expected[key]}{holds}")


if __name__ == "__main__":
    main()
