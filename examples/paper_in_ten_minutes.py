"""The core paper in ten minutes: theory, Fig. 2 (quick) and Fig. 3.

Nakamuta & Teramae, "Learning reshapes power-law anisotropy in internal
representations": a wide two-layer linear network trained on a power-law
teacher. This script

1. computes the exact spectrum rho_k(t) and its local exponent alpha_eff(k, t)
   for the paper's feature-learning and lazy settings, and prints how the
   exponent of the top modes moves (feature learning) or stays (lazy);
2. runs a finite network with the exact Gram-space engine and compares it
   with the theory (the quick version of Fig. 2);
3. reproduces Fig. 2 and Fig. 3 with ``specdyn.experiments`` (the same code as
   ``specdyn reproduce fig2 fig3``), writing PNG/PDF figures, Parquet data and a
   JSON record into the output folder.

Run:  python examples/paper_in_ten_minutes.py [--small] [--out DIR]
``--small`` (or SPECDYN_EXAMPLES_SMALL=1) shrinks every size for a smoke test.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import numpy as np

from specdyn import theory
from specdyn.runs import get, run_experiment
from specdyn.runs.registry import replace_config
from specdyn.settings import FEATURE_LEARNING, LAZY


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--small", action="store_true", help="smoke-test sizes")
    ap.add_argument("--out", type=Path, default=None, help="output folder (default: temporary)")
    args = ap.parse_args()
    small = args.small or os.environ.get("SPECDYN_EXAMPLES_SMALL") == "1"
    out = args.out or Path(tempfile.mkdtemp(prefix="specdyn-paper-"))

    # 1. Theory: feature-learning vs lazy -----------------------------------------
    fl = FEATURE_LEARNING.setting()  # the paper's two regimes (specdyn.settings)
    lazy = LAZY.setting()
    k = np.array([1.0, 10.0, 100.0])
    t = np.array([0.0, 1e1, 1e2, 1e3, 1e4, np.inf])[:, None]
    for name, s in (("feature-learning", fl), ("lazy", lazy)):
        rep = theory.regime(s)
        a = theory.alpha_eff(s, k, t)
        print(f"\n{name}: regime = {rep.label}, k_u = {rep.k_u:.1f}, k_l = {rep.k_l:.2f}")
        print("      t    alpha_eff(k=1)  alpha_eff(k=10)  alpha_eff(k=100)")
        for ti, row in zip(t[:, 0], a, strict=True):
            print(f"{ti:7.0e}   " + "  ".join(f"{x:14.3f}" for x in row))
    print("\nasymptotic exponents (Eq. 31):", theory.asymptotic_exponents(fl))

    # 2. A finite network against the theory (exact Gram-space GD) ----------------
    from specdyn.sim import theory_agreement, train_linear  # torch is imported here, lazily

    D, N, steps = (32, 256, 300) if small else (128, 2048, 10_000)
    s = fl.with_D(D)
    traj = train_linear(s, N=N, M=None, steps=steps, dt=1.0, checkpoints=6, seed=0,
                        progress=False)
    agree = theory_agreement(traj, s)
    print(f"\nfinite network, D = {D}, N = {N}, population data, {steps} GD steps "
          "(t = steps * dt):")
    print(agree[["t", "median_abs_log", "max_abs_log"]].to_string(index=False))

    # 3. The paper's figures, as `specdyn reproduce` makes them --------------------
    fig2 = get("fig2").config()
    fig3 = get("fig3").config()
    if small:
        fig2 = replace_config(fig2, D=16, N=128, M=64, steps=100, checkpoints=8, n_curves=3)
        fig3 = replace_config(fig3, n_k=24, n_t=24, n_slices=3)
    for name, cfg in (("fig2", fig2), ("fig3", fig3)):
        res = run_experiment(name, out, config=cfg)
        print(f"\n{name}: " + ", ".join(str(p) for p in res.figures + res.tables))


if __name__ == "__main__":
    main()
