"""The issue-7 claims of two-step GD, at the sizes they are made.

1. ``two-step-phase`` at ``D = M = N = 2000`` (default grid, He1, fresh batch):
   agreement of the measured outlier count with ``floor`` / ``1 + floor`` away
   from the lines (exponent gap >= 0.05), and with the ratio margin 0.15.
2. ``batch-reuse`` at ``D = M = N = 4000`` (3 seeds): target overlap of the
   learned directions, fresh versus reused batch, per target.

These are accuracy claims, not timings: there is no baseline to race.
Prints markdown tables. ``--quick`` runs 1-2 at N = 600 / 1000 (about a
minute) instead of 2000 / 4000 (about 30 min on 2 cores).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from specdyn.experiments.two_step import PhaseConfig, ReuseConfig
from specdyn.runs import run_experiment


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
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
