"""Time the paper-sized Fig. 4 run on a GPU, then print the engine-vs-autograd table.

One short script for a lent accelerator (see ``benchmarks/gpu_fig4.sh``):

1. probes the per-step and per-checkpoint cost of ``train_two_layer`` at the
   ``--full`` sizes of ``specdyn reproduce fig4`` (D = P = 512, N = 8192,
   M = 4096, float32, mean-field ReLU, full-batch GD);
2. predicts the wall time of the full experiment (two runs of 10 000 steps,
   60 checkpoints each). If it fits in ``--budget-s`` the full experiment is
   run and its measured wall time reported; otherwise the experiment is run at
   the full sizes with as many steps as fit, and the full time is reported as
   EXTRAPOLATED from the probe (clearly labelled);
3. prints the slope summary of that run and the markdown table of
   ``benchmarks/nonlinear_sim.py`` at the full sizes (float32, float64, and
   float32 with TF32 and bf16 products).

Everything it writes goes under ``--out`` (figures, Parquet tables, run records).

Usage::

    python benchmarks/gpu_fig4.py --out "$OUT"          # on the GPU machine
    python benchmarks/gpu_fig4.py --device cpu --D 32 --N 256 --M 256 --steps 200 \\
        --checkpoints 8 --kmax 16 --bench-sizes 32,256,256 --budget-s 60   # smoke test
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("TQDM_DISABLE", "1")  # progress bars would garble the captured output

import numpy as np
import torch

from specdyn.experiments.nonlinear_figures.config import Fig4Config
from specdyn.runs import run_experiment
from specdyn.sim.two_layer import train_two_layer

sys.path.insert(0, str(Path(__file__).resolve().parent))
import nonlinear_sim  # noqa: E402  (the benchmark table, same folder)


def _sync(dev: torch.device) -> None:
    if dev.type == "cuda":
        torch.cuda.synchronize()


def _probe(cfg: Fig4Config, dev: torch.device, steps: int, n_ck: int) -> float:
    """Wall time of one feature-learning run of ``steps`` steps with ``n_ck`` checkpoints."""
    s = cfg.settings()["feature-learning"]
    ck = np.unique(np.linspace(0, steps, n_ck).round().astype(np.int64))
    _sync(dev)
    t0 = time.perf_counter()
    train_two_layer(s, cfg.activation, N=cfg.N, M=cfg.M, steps=steps, dt=cfg.dt,
                    parameterization=cfg.parameterization, checkpoints=ck,
                    record=("preact",), seed=cfg.seed, dtype=cfg.dtype, device=dev,
                    progress=False, precision=cfg.precision)
    _sync(dev)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="specdyn-gpu-out")
    ap.add_argument("--device", default=None)
    ap.add_argument("--budget-s", type=float, default=240.0,
                    help="wall-time budget for the fig4 run itself (both regimes)")
    ap.add_argument("--probe-steps", type=int, default=200)
    ap.add_argument("--precision", default=None, choices=[None, "tf32", "bf16"])
    for name in ("D", "N", "M", "steps", "checkpoints", "kmax"):
        ap.add_argument(f"--{name}", type=int, default=None, help="override of the --full value")
    ap.add_argument("--bench-sizes", default="512,8192,4096")
    ap.add_argument("--bench-reps", type=int, default=10)
    args = ap.parse_args()

    dev = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"
    print(f"# specdyn fig4 on {name} (torch {torch.__version__})\n", flush=True)
    over = {k: getattr(args, k.replace("-", "_")) for k in ("D", "N", "M", "steps",
                                                             "checkpoints", "kmax")}
    full = Fig4Config(D=512, N=8192, M=4096, steps=10_000, kmin=2, kmax=64, checkpoints=60)
    changes = {k.replace("-", "_"): val for k, val in over.items() if val is not None}
    cfg = dataclasses.replace(full, device=str(dev), precision=args.precision, **changes)

    # ---- probe: per step (difference of two run lengths) and per checkpoint
    n1 = max(args.probe_steps // 4, 10)
    n2 = n1 + args.probe_steps
    _probe(cfg, dev, 10, 2)  # warm-up: CUDA context, cuBLAS handles, allocator
    w1 = _probe(cfg, dev, n1, 2)
    w2 = _probe(cfg, dev, n2, 2)
    w3 = _probe(cfg, dev, n1, 12)
    per_step = max((w2 - w1) / (n2 - n1), 1e-9)
    per_ck = max((w3 - w1) / 10, 0.0)
    fixed = max(w1 - n1 * per_step - 2 * per_ck, 0.0)
    predicted = 2 * (fixed + cfg.steps * per_step + (cfg.checkpoints + 2) * per_ck)
    flop = 10.0 * cfg.M * cfg.N * cfg.D  # five products of M x N x D, 2 flop each
    print("| quantity | value |\n|---|---|")
    print(f"| sizes (D = P, N, M), dtype, precision | {cfg.D}, {cfg.N}, {cfg.M}, {cfg.dtype}, "
          f"{cfg.precision} |")
    print(f"| time per GD step (probe, {n2 - n1} steps) | {1e3 * per_step:.3f} ms "
          f"({flop / per_step / 1e12:.1f} Tflop/s) |")
    print(f"| time per checkpoint (preact spectrum, loss) | {1e3 * per_ck:.1f} ms |")
    print(f"| fixed cost per run (data, init) | {fixed:.2f} s |")
    print(f"| predicted full fig4 ({cfg.steps} steps x 2 runs, {cfg.checkpoints} "
          f"checkpoints) | {predicted:.1f} s |", flush=True)

    # ---- the experiment: full if it fits, else as many steps as fit (labelled)
    label = "FULL"
    if predicted > args.budget_s:
        fit = int((args.budget_s / 2 - fixed - (cfg.checkpoints + 2) * per_ck) / per_step)
        fit = max(fit, 10)
        label = (f"PARTIAL: {fit} of {cfg.steps} steps; full-run time above is EXTRAPOLATED "
                 f"from the probe")
        cfg = dataclasses.replace(cfg, steps=fit)
    t0 = time.perf_counter()
    res = run_experiment("fig4", args.out, config=cfg)
    wall = time.perf_counter() - t0
    print(f"| fig4 experiment ({label}) | {wall:.1f} s measured, t_max = {cfg.steps * cfg.dt:g} "
          f"(includes theory fits, plotting, Parquet) |")
    summ = res.summary
    for regime in ("feature-learning", "lazy"):
        r = summ[regime]
        print(f"| {regime}: time per step inside the run | {r['time_per_step_ms']:.3f} ms |")
    print(f"\n## slopes over k = {summ['k_range'][0]}..{summ['k_range'][1]}\n")
    print("| regime | initial | final | max (t) | max change | linear theory final | "
          "max abs(sim - theory) (t) | max abs(sim - theory at gamma0/c1) |")
    print("|---|---|---|---|---|---|---|---|")
    for regime in ("feature-learning", "lazy"):
        r = summ[regime]
        print(f"| {regime} | {r['slope_initial']:.3f} | {r['slope_final']:.3f} | "
              f"{r['slope_max']:.3f} ({r['t_of_slope_max']:g}) | {r['max_abs_change']:.3f} | "
              f"{r['linear_theory_slope_final']:.3f} | {r['max_abs_sim_minus_theory']:.3f} "
              f"({r['t_of_max_abs_sim_minus_theory']:g}) | "
              f"{r['max_abs_sim_minus_effective_theory']:.3f} |")
    print(f"\nlazy / feature-learning largest change: "
          f"{summ['lazy_over_feature_learning_max_change']:.3f}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "gpu_fig4_timing.json").write_text(json.dumps({
        "device": name, "per_step_s": per_step, "per_checkpoint_s": per_ck, "fixed_s": fixed,
        "predicted_full_s": predicted, "run_label": label, "run_wall_s": wall,
        "config": dataclasses.asdict(cfg)}, indent=2))

    # ---- engine vs autograd at the full sizes
    print("\n## hand-written engine vs nn.Module + autograd + torch.optim.SGD\n", flush=True)
    print("| D | N | M | dtype | precision | autograd + SGD (ms/step, best) | "
          "hand-written (ms/step, best) | speed-up | weights agree (rel) |")
    print("|---|---|---|---|---|---|---|---|---|")
    D, N, M = (int(x) for x in args.bench_sizes.split(","))
    rows: list[tuple[torch.dtype, str | None]] = [(torch.float32, None), (torch.float64, None)]
    if dev.type == "cuda":
        rows += [(torch.float32, "tf32"), (torch.float32, "bf16")]
    for dtype, prec in rows:
        r = nonlinear_sim.bench(D, N, M, dtype, dev, args.bench_reps, prec)
        print(f"| {D} | {N} | {M} | {str(dtype).replace('torch.', '')} | {prec} | "
              f"{1e3 * r['autograd']:.2f} | {1e3 * r['engine']:.2f} | "
              f"{r['autograd'] / r['engine']:.2f}x | {r['agree_rel']:.1e} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
