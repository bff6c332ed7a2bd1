"""Finite-width and finite-sample corrections: theory against the exact Gram engine.

Collects ``--seeds`` (default 256) runs of :func:`specdyn.sim.train_linear`
(Gram engine, gradient flow) of the paper's Fig. 2 setting at ``D`` (default
32) for each size in ``N in {256, 1024, 4096}`` (``M`` infinite) and
``M in {256, 1024, 4096}`` (``N`` infinite), records ``log rho_k(t)`` at
``t in {0, 10, 50, 200}``, and compares the seed mean and standard deviation
with :func:`specdyn.theory.finite_size_moments`:

- std: predicted within 15 % of measured (``k`` inside validity);
- mean shift: predicted within 25 % of the measured bias where that bias
  exceeds 5 standard errors, and the corrected residual within 3 standard
  errors of 0 elsewhere (``k`` inside validity).

``--effective`` instead sets ReLU, tanh and GELU students (``fig4`` at its quick
size, feature-learning and lazy) against :func:`specdyn.theory.effective_setting`:
the fitted slope over ``k in [2, 24]`` at every recorded time.

The simulations are cached in ``--cache`` (an ``.npz`` per size) so that a
rerun only recomputes the theory. Prints markdown tables and writes
``finite_size_theory.json`` beside the cache. An accuracy benchmark: there is
no baseline to race; the theory's own time is printed against one simulation.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from specdyn import theory
from specdyn._progress import progress
from specdyn.experiments.finite_size_theory.claims import finite_size_claims
from specdyn.experiments.finite_size_theory.run import compare
from specdyn.settings import FEATURE_LEARNING, PowerLawSetting
from specdyn.sim import train_linear

TIMES = (0, 10, 50, 200)
SIZES = (("N", 256), ("N", 1024), ("N", 4096), ("M", 256), ("M", 1024), ("M", 4096))


def _tag(times: tuple[int, ...]) -> str:
    """Cache-name suffix: empty at the default times (older caches stay valid)."""
    return "" if times == TIMES else "_t" + "-".join(map(str, times))


def collect(s: PowerLawSetting, kind: str, size: int, seeds: int, cache: Path,
            times: tuple[int, ...] = TIMES) -> np.ndarray:
    """``log rho`` of shape ``(seeds, len(times), D)``, cached in ``cache``."""
    path = cache / f"D{s.D}_{kind}{size}_s{seeds}{_tag(times)}.npz"
    if path.exists():
        return np.load(path)["log_rho"]
    N, M = (size, None) if kind == "N" else (None, size)
    out = []
    for seed in progress(range(seeds), total=seeds, desc=f"{kind}={size}"):
        tr = train_linear(s, N, M, steps=times[-1], dt=1.0, method="flow",
                          checkpoints=list(times), seed=seed, progress=False)
        out.append(np.log(tr.series["preact"]))
    arr = np.stack(out)
    np.savez(path, log_rho=arr)
    return arr


def report(s: PowerLawSetting, sims: dict[tuple[str, int], np.ndarray], seeds: int,
           cache: Path, ts: tuple[int, ...] = TIMES) -> None:
    """Print the comparison tables and write ``finite_size_theory[_tTIMES].json``."""
    times = np.array(ts, dtype=np.float64)
    start = time.perf_counter()
    frames = []
    for (kind, size), arr in sims.items():
        N, M = (size, None) if kind == "N" else (None, size)
        frames.append(compare(s, arr, times, N, M))
    theory_s = time.perf_counter() - start
    df = pd.concat(frames, ignore_index=True)
    claims, summary = finite_size_claims(df)
    print(f"\n### finite-size theory vs Gram engine, D = {s.D}, {seeds} seeds, "
          f"t in {ts}\n")
    print(f"| size | valid k (t = {' / '.join(map(str, ts))}) | max std err | cells bias > 5 SE "
          "| max mean err | resid within 3 SE | max resid (SE) |\n|---|---|---|---|---|---|---|")
    per_size = {}
    for (kind, size), d in zip(sims, frames, strict=True):
        _, sm = finite_size_claims(d)
        kmax = [int(d[(d["t"] == t) & d["valid"]]["k"].max()) if
                (d[(d["t"] == t)]["valid"]).any() else 0 for t in times]
        per_size[f"{kind}={size}"] = {**sm, "valid_kmax": kmax}
        print(f"| {kind} = {size} | {' / '.join(map(str, kmax))} | "
              f"{sm['std_max_rel_err']:.3f} | {sm['bias_cells']} | "
              f"{sm['mean_max_rel_err']:.3f} | {sm['resid_within_3se']:.3f} | "
              f"{sm['resid_max_se']:.2f} |")
    print("\n| claim | measured | expected | held |\n|---|---|---|---|")
    for c in claims:
        print(f"| {c.name} | {c.measured:.3f} | {c.expected} | {c.held} |")
    print(f"\ntheory for all {len(sims)} sizes: {theory_s:.1f} s")
    out = {"D": s.D, "seeds": seeds, "times": list(ts), "summary": summary,
           "per_size": per_size, "claims": [c.to_dict() for c in claims],
           "theory_seconds": theory_s}
    name = f"finite_size_theory{_tag(ts)}"
    (cache / f"{name}.json").write_text(json.dumps(out, indent=1, default=float))
    df.to_parquet(cache / f"{name}.parquet")


def effective(cache: Path, size: tuple[int, int, int] | None) -> None:
    """Print the effective-theory table (fig4 runs cached under ``cache``).

    ``size`` is ``(D, N, M)`` of the students; ``None``: ``fig4``'s quick size.
    """
    from specdyn.experiments.nonlinear_figures.config import Fig4Config
    from specdyn.experiments.nonlinear_figures.run import theory_slopes
    from specdyn.runs import run_experiment

    dims = {} if size is None else dict(zip(("D", "N", "M"), size, strict=True))
    tag = "" if size is None else "_D{}_N{}_M{}".format(*size)
    print(f"\nstudents: {Fig4Config(**dims)}")
    print("\n| activation | regime | c1 | max abs(slope - effective), worst t | median "
          "| plain linear theory, max | within 0.1 |\n|---|---|---|---|---|---|---|")
    for act in ("relu", "gelu", "tanh"):
        path = cache / f"fig4_{act}{tag}" / "fig4" / "fig4_slopes.parquet"
        cfg = Fig4Config(activation=act, **dims)
        if not path.exists():
            run_experiment("fig4", cache / f"fig4_{act}{tag}", config=cfg)
        d = pd.read_parquet(path)
        for regime, g in d.groupby("regime"):
            s = cfg.settings()[str(regime)]
            s_eff = theory.effective_setting(s, act)
            eff = theory_slopes(s_eff, g["t"].to_numpy(), cfg.kmin, cfg.kmax)
            dev = np.abs(g["slope_sim"].to_numpy() - eff)
            lin = np.abs(g["slope_sim"] - g["slope_linear_theory"]).max()
            i = int(dev.argmax())
            print(f"| {act} | {regime} | {s.gamma0 / s_eff.gamma0:.3f} | {dev.max():.3f} "
                  f"(t = {g['t'].iloc[i]:g}) | {np.median(dev):.3f} | {lin:.3f} | "
                  f"{'yes' if dev.max() <= 0.1 else 'no'} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--D", type=int, default=32)
    parser.add_argument("--seeds", type=int, default=256)
    parser.add_argument("--cache", type=Path, default=Path("finite_size_cache"))
    parser.add_argument("--times", type=int, nargs="+", default=list(TIMES),
                        help="checkpoint times (increasing, the first 0)")
    parser.add_argument("--sizes", nargs="+", default=[f"{k}{n}" for k, n in SIZES],
                        help="sizes such as N4096 M256 (default: all six)")
    parser.add_argument("--collect-only", action="store_true")
    parser.add_argument("--effective", action="store_true")
    parser.add_argument("--size", type=int, nargs=3, metavar=("D", "N", "M"),
                        help="with --effective: the students' D N M (default: fig4 quick)")
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    if args.effective:
        effective(args.cache, None if args.size is None else tuple(args.size))
        return
    s = FEATURE_LEARNING.setting(D=args.D)
    times = tuple(args.times)
    sizes = [(x[0], int(x[1:])) for x in args.sizes]
    if any(k not in "NM" for k, _ in sizes) or list(times) != sorted(set(times)):
        parser.error("--sizes must look like N4096 or M256; --times must increase")
    sims = {(kind, size): collect(s, kind, size, args.seeds, args.cache, times)
            for kind, size in sizes}
    if args.collect_only:
        return
    report(s, sims, args.seeds, args.cache, times)


if __name__ == "__main__":
    main()
