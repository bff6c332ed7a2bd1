"""Run ``two-step-phase`` (and ``batch-reuse``) at their ``--full`` sizes on a GPU, timed.

One short script for a lent accelerator (see ``benchmarks/gpu_two_step.sh``):

1. probes one ``two-step-phase`` cell at the --full sizes (N = D = M = 4000,
   float64, on the default device: CUDA when present) -- a warm-up cell, then
   ``--probe-cells`` timed ones -- with the data drawn once per seed as the
   grid does (``draw_data``), so the probe is a cell of the grid;
2. predicts the wall time of the --full grid (cells x seeds). If it fits in
   ``--budget-s`` the full experiment is run with ``run_experiment`` and its
   measured wall time and claims are printed; otherwise the grid is run with as
   many seeds as fit (at least one), labelled so, and the full time is the
   prediction;
3. the same for ``batch-reuse --full`` (``--reuse``) with the time left;
4. with ``--cells-N``, first the chosen cells of ``two-step-phase`` (``PhaseConfig.cells``,
   plus ``--extra-cells``) at those widths, smallest first, each width only if the last
   one's time times 8 (the ``N^3`` products) fits in the time left and its matrices fit in
   the device's memory; each run's identified step-2 outliers are printed beside ``floor``
   and the finite-N theory's count (:mod:`specdyn.theory.two_step_spikes`): abstract 2's
   count at widths no CPU reaches (floor 2 from N of about 8000, e.g. (0.32, 0.47) at
   16000-32000).

Everything it writes goes under ``--out`` (Parquet tables, record.json with the
claims, figures, and ``two_step_gpu.json`` with the timings).

Usage::

    python benchmarks/gpu_two_step.py --out "$OUT" --reuse          # on the GPU machine
    python benchmarks/gpu_two_step.py --out /tmp/ts --N 120 --grid 3 --seeds 2 \\
        --budget-s 120 --reuse --cells-N 100,200                    # CPU smoke test
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import time
from pathlib import Path

os.environ.setdefault("TQDM_DISABLE", "1")  # progress bars would garble the captured output

import torch

from specdyn.experiments.two_step.config import PhaseConfig, ReuseConfig
from specdyn.experiments.two_step.spikes import theory_columns
from specdyn.experiments.two_step.tables import cells_table, phase_table
from specdyn.runs import get, run_experiment


def _sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def _cell_time(cfg: PhaseConfig, cells: int) -> float:
    """Seconds a grid cell takes: ``phase_table`` on ``1 + cells`` cells of one seed, the
    first (CUDA and solver start-up) not counted."""
    one = dataclasses.replace(cfg, alpha1=cfg.alpha1[len(cfg.alpha1) // 2:][:1],
                              alpha2=cfg.alpha2[:1], seeds=1)
    phase_table(one)  # warm-up
    grid = dataclasses.replace(one, alpha2=tuple(cfg.alpha2[:cells]))
    _sync()
    t0 = time.perf_counter()
    phase_table(grid)
    _sync()
    return (time.perf_counter() - t0) / len(grid.alpha2)


def _size(cfg: object) -> str:
    return f"N = D = M = {getattr(cfg, 'N', '?')}, seeds {getattr(cfg, 'seeds', '?')}"


def _run(name: str, cfg: object, out: Path, predicted: float, left: float) -> dict[str, object]:
    if predicted > left:
        print(f"{name} ({_size(cfg)}): not run: predicted {predicted:.0f} s > {left:.0f} s "
              "left", flush=True)
        return {"run": False, "predicted_s": predicted}
    t0 = time.perf_counter()
    result = run_experiment(name, out, config=cfg)
    wall = time.perf_counter() - t0
    held = sum(bool(c.held) for c in result.claims)
    print(f"{name} ({_size(cfg)}): {wall:.1f} s (predicted {predicted:.0f} s), claims held "
          f"{held}/{len(result.claims)}", flush=True)
    for c in result.claims:
        print(f"  {'held' if c.held else 'NOT held':8s} {c.name}: measured {c.measured}",
              flush=True)
    return {"run": True, "wall_s": wall, "predicted_s": predicted,
            "claims": [{"name": c.name, "held": bool(c.held), "measured": repr(c.measured)}
                       for c in result.claims]}


#: float64 matrices of N x N a chosen-cell run holds at once (W0, two batches, W1, W2, the
#: step-2 direction, the preactivations and their derivative, the Gram and its workspace).
_MATRICES = 12


def _fits(N: int) -> bool:
    """Whether a run at width ``N`` (``D = M = N``) fits in the device's free memory."""
    if not torch.cuda.is_available():
        return True
    free, _ = torch.cuda.mem_get_info()
    return _MATRICES * 8 * N * N < free


def _chosen_cells(phase: PhaseConfig, widths: list[int], out: Path,
                  budget_end: float) -> list[dict[str, object]]:
    """The chosen cells at each width that fits (module docstring, step 4)."""
    rows: list[dict[str, object]] = []
    last = 0.0
    for n in widths:
        left = budget_end - time.perf_counter()
        if not _fits(n) or 8.0 * last > left:
            print(f"chosen cells at N = {n}: not run ({'memory' if not _fits(n) else 'time'}: "
                  f"{left:.0f} s left, the last width took {last:.0f} s)", flush=True)
            continue
        cfg = dataclasses.replace(phase, N=n, D=n, M=n, cells_N=(n,))
        t0 = time.perf_counter()
        df = cells_table(cfg)
        _sync()
        last = time.perf_counter() - t0
        th = theory_columns(df, activation=cfg.activation, target=cfg.target)
        out.mkdir(parents=True, exist_ok=True)
        df.join(th).to_parquet(out / f"two-step-phase_cells_N{n}.parquet")
        for r, t in zip(df.itertuples(), th.itertuples(), strict=True):
            row = {"alpha1": r.alpha1, "alpha2": r.alpha2, "N": n, "floor": r.formula_abstract,
                   "step2_measured": r.count_W2_step2, "step2_theory": t.theory_step2,
                   "floor_testable": bool(t.testable), "s2_W2": r.s2_W2, "s3_W2": r.s3_W2,
                   "threshold_W2": r.threshold_W2, "seconds": last / len(df)}
            rows.append(row)
            print(f"  ({r.alpha1:g}, {r.alpha2:g}) N = {n}: step-2 outliers {r.count_W2_step2} "
                  f"(theory {t.theory_step2}, floor {r.formula_abstract}, testable "
                  f"{bool(t.testable)}); s2, s3 = {r.s2_W2:.4f}, {r.s3_W2:.4f}, threshold "
                  f"{r.threshold_W2:.4f}", flush=True)
        print(f"chosen cells at N = {n}: {last:.1f} s", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--budget-s", type=float, default=240.0,
                        help="wall time allowed for the runs after the probe")
    parser.add_argument("--probe-cells", type=int, default=2)
    parser.add_argument("--N", type=int, default=None, help="N = D = M (default: --full's)")
    parser.add_argument("--grid", type=int, default=None,
                        help="first GRID values of each alpha lattice (default: all)")
    parser.add_argument("--seeds", type=int, default=None)
    parser.add_argument("--reuse", action="store_true", help="also run batch-reuse --full")
    parser.add_argument("--cells-N", default="",
                        help="comma-separated widths for the chosen cells (run first)")
    parser.add_argument("--extra-cells", default="0.32:0.47",
                        help="cells 'alpha1:alpha2' added to the config's chosen ones")
    parser.add_argument("--cells-budget-s", type=float, default=300.0,
                        help="wall time allowed for the chosen cells")
    args = parser.parse_args()
    start = time.perf_counter()
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    name = torch.cuda.get_device_name() if dev == "cuda" else "cpu"
    print(f"device {name}, torch {torch.__version__}, threads {torch.get_num_threads()}",
          flush=True)

    phase, reuse = get("two-step-phase").config(full=True), get("batch-reuse").config(full=True)
    if args.N is not None:  # a smaller (smoke-test) grid: its chosen cells no wider than it
        phase = dataclasses.replace(phase, N=args.N, D=args.N, M=args.N, cells_N=tuple(
            n for n in phase.cells_N if n <= args.N) or (args.N,))
        reuse = dataclasses.replace(reuse, N=args.N, D=args.N, M=args.N)
    if args.grid is not None:
        phase = dataclasses.replace(phase, alpha1=phase.alpha1[:args.grid],
                                    alpha2=phase.alpha2[:args.grid])
    if args.seeds is not None:
        phase = dataclasses.replace(phase, seeds=args.seeds)
        reuse = dataclasses.replace(reuse, seeds=args.seeds)
    assert isinstance(reuse, ReuseConfig)

    record_cells: list[dict[str, object]] = []
    if args.cells_N:
        extra = tuple(c for c in args.extra_cells.split(",") if c)
        chosen = dataclasses.replace(phase, cells=tuple(dict.fromkeys(phase.cells + extra)))
        widths = sorted(int(x) for x in args.cells_N.split(","))
        record_cells = _chosen_cells(chosen, widths, args.out,
                                     time.perf_counter() + args.cells_budget_s)
    t_cell = _cell_time(phase, args.probe_cells)
    n_cells = len(phase.alpha1) * len(phase.alpha2) * phase.seeds
    n_runs = len(reuse.targets) * 2 * reuse.seeds
    print(f"two-step-phase cell at N = D = M = {phase.N}: {t_cell:.2f} s; "
          f"{n_cells} cells -> predicted {t_cell * n_cells:.0f} s", flush=True)
    budget_end = time.perf_counter() + args.budget_s
    record: dict[str, object] = {"device": name, "N": phase.N, "cell_s": t_cell,
                                 "cells": n_cells, "chosen_cells": record_cells}
    per_seed = 1.1 * t_cell * n_cells / phase.seeds
    left = budget_end - time.perf_counter()
    fit = max(1, min(phase.seeds, int(left // per_seed)))
    if fit < phase.seeds:
        print(f"two-step-phase: {phase.seeds} seeds predicted {per_seed * phase.seeds:.0f} s > "
              f"{left:.0f} s left: running {fit} seed(s) of the grid (NOT the --full seeds)",
              flush=True)
        phase = dataclasses.replace(phase, seeds=fit)
    record["phase_seeds_run"] = phase.seeds
    record["two-step-phase"] = _run("two-step-phase", phase, args.out, per_seed * phase.seeds,
                                    max(left, per_seed * phase.seeds))
    if args.reuse:
        # a reuse run costs about one phase cell (one W2 decomposition instead of two)
        record["batch-reuse"] = _run("batch-reuse", reuse, args.out, 1.1 * t_cell * n_runs,
                                     budget_end - time.perf_counter())
    record["total_s"] = time.perf_counter() - start
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "two_step_gpu.json").write_text(json.dumps(record, indent=2, default=float))
    print(f"total {record['total_s']:.0f} s; timings in {args.out / 'two_step_gpu.json'}",
          flush=True)


if __name__ == "__main__":
    main()
