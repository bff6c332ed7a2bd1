"""The issue-7 claims of two-step GD, at the sizes they are made.

1. ``two-step-phase`` at ``D = M = N = 2000`` (default grid, He1, fresh batch):
   agreement of the measured outlier count with ``floor`` / ``1 + floor`` away
   from the lines (exponent gap >= 0.05), and with the ratio margin 0.15.
2. ``batch-reuse`` at ``D = M = N = 4000`` (3 seeds): target overlap of the
   learned directions, fresh versus reused batch, per target.

These are accuracy claims, not timings: there is no baseline to race.
Prints markdown tables. ``--quick`` runs 1-2 at N = 600 / 1000 (about a
minute) instead of 2000 / 4000 (about 30 min on 2 cores).

``--cell N`` instead times one ``two-step-phase`` cell at ``D = M = N``
(``phase_table`` of a one-cell grid, ``alpha = (0.27, 0.38)``, the --full
lattice's middle, on the default device; ``--cells K``: a ``1 x K`` row of
cells that share ``W1`` and the step-2 direction, alpha2 from the --full lattice),
``--rounds`` times, and prints each
round's wall and CPU time (all threads; the CPU time is what a loaded machine
cannot hide) and the best wall time, with the load average. Run it with
``PYTHONPATH`` pointing at two checkouts in turn (interleaved rounds) to
compare them: it uses only ``PhaseConfig`` and ``phase_table``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from specdyn.experiments.two_step.config import PhaseConfig, ReuseConfig
from specdyn.experiments.two_step.tables import phase_table
from specdyn.runs import run_experiment

#: The alpha2 of the timed cells (``--cells K`` takes the first K): the --full lattice's.
_ALPHA2 = (0.38, 0.43, 0.33, 0.48, 0.28, 0.23, 0.18, 0.13, 0.08, 0.03)


def time_cell(N: int, rounds: int, cells: int = 1) -> list[float]:
    """Wall time of ``rounds`` ``phase_table`` calls at ``D = M = N`` of a ``1 x cells``
    grid (one alpha1 row: cells that share ``W1`` and the step-2 direction, as the --full
    grid's rows do)."""
    cfg = PhaseConfig(N=N, D=N, M=N, alpha1=(0.27,), alpha2=_ALPHA2[:cells], seeds=1)
    times = []
    for _ in range(rounds):
        t0, c0 = time.perf_counter(), time.process_time()
        df = phase_table(cfg)
        times.append(time.perf_counter() - t0)
        print(f"{cells} cell(s) N={N}: {times[-1]:.2f} s wall, "
              f"{time.process_time() - c0:.1f} s CPU (count_W1 {list(df['count_W1'])}, "
              f"count_W2 {list(df['count_W2'])}, load {os.getloadavg()[0]:.1f})", flush=True)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--cell", type=int, default=None, metavar="N")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--cells", type=int, default=1, choices=range(1, len(_ALPHA2) + 1),
                        help="time a 1 x CELLS grid (one alpha1 row) instead of one cell")
    args = parser.parse_args()
    if args.cell is not None:
        best = min(time_cell(args.cell, args.rounds, args.cells))
        print(f"best of {args.rounds}: {best:.2f} s for {args.cells} cell(s), "
              f"{best / args.cells:.2f} s a cell")
        return
    n_phase, n_reuse, seeds = (600, 1000, 2) if args.quick else (2000, 4000, 3)
    with tempfile.TemporaryDirectory() as tmp:
        phase = run_experiment("two-step-phase", Path(tmp),
                               config=PhaseConfig(N=n_phase, D=n_phase, M=n_phase)).summary
        reuse = run_experiment("batch-reuse", Path(tmp),
                               config=ReuseConfig(N=n_reuse, D=n_reuse, M=n_reuse,
                                                  seeds=seeds)).summary
    print(f"\n### two-step-phase, D = M = N = {n_phase}\n")
    print("| margin | cells away | = floor | = 1 + floor | either |\n|---|---|---|---|---|")
    for key, name in (("", "exponent gap 0.05"), ("ratio_margin_", "ratio 0.15")):
        print(f"| {name} | {phase[key + 'cells_away']} | {phase[key + 'agree_abstract']:.0%} "
              f"| {phase[key + 'agree_total']:.0%} | {phase[key + 'agree_either']:.0%} |")
    print(f"\n### batch-reuse, D = M = N = {n_reuse}, {seeds} seeds "
          "(learned directions, |cos| with beta)\n")
    print("| target | fresh max | reused min | reused mean |\n|---|---|---|---|")
    for name, s in reuse.items():
        assert isinstance(s, dict)
        print(f"| {name} | {s['fresh_identified_max']:.3f} | {s['reused_identified_min']:.3f} "
              f"| {s['reused_identified_mean']:.3f} |")

if __name__ == "__main__":
    main()
