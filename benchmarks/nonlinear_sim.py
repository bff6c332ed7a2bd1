"""Per-step time of the hand-written two-layer engine against an autograd baseline.

Both run full-batch GD on the same data, weights and multipliers (mean-field
ReLU student of Fig. 4): the baseline is an ``nn.Module`` (two bias-free
``nn.Linear`` layers) with ``loss.backward()`` and ``torch.optim.SGD``; the
engine is :class:`specdyn.sim.two_layer_engine.TwoLayerEngine` (hand-written passes, in-place
buffers). The script first checks that the two produce the same weights after
a few steps, then times them in one run and prints a markdown table.

Usage::

    python benchmarks/nonlinear_sim.py                # CPU sizes
    python benchmarks/nonlinear_sim.py --sizes 512,8192,4096 --device cuda
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from specdyn.data.teacher import PowerLawTeacher
from specdyn.models.activations import get_activation
from specdyn.settings import FEATURE_LEARNING
from specdyn.sim import TwoLayerEngine, init_weights
from specdyn.sim.parameterization import get_parameterization


class _Baseline(torch.nn.Module):
    def __init__(self, W: torch.Tensor, A: torch.Tensor, scale: float) -> None:
        super().__init__()
        N, D = W.shape
        P = A.shape[1]
        self.fc1 = torch.nn.Linear(D, N, bias=False, device=W.device, dtype=W.dtype)
        self.fc2 = torch.nn.Linear(N, P, bias=False, device=W.device, dtype=W.dtype)
        with torch.no_grad():
            self.fc1.weight.copy_(W)
            self.fc2.weight.copy_(A.T)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.scale * self.fc2(torch.relu(self.fc1(x)))


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def bench(D: int, N: int, M: int, dtype: torch.dtype, device: torch.device, reps: int,
          precision: str | None = None) -> dict[str, float]:
    setting = FEATURE_LEARNING.setting(D=D)
    teacher = PowerLawTeacher(setting)
    X, Y = teacher.sample_torch(M, seed=1, dtype=dtype, device=device)
    par = get_parameterization("mean-field", N, setting.gamma0)
    W0, A0 = init_weights(N, D, D, setting.sigma_w, setting.sigma_a, par,
                          torch.Generator().manual_seed(2), dtype, device)
    dt = 1.0
    compute = torch.bfloat16 if precision == "bf16" else None
    old = torch.get_float32_matmul_precision()
    if precision == "tf32":
        torch.set_float32_matmul_precision("high")
    try:
        eng = TwoLayerEngine(get_activation("relu"), par, dt, M, compute)
        state = [eng.state_of(W0, A0)]
        Xc, Yc = (X.to(compute), Y.to(compute)) if compute is not None else (X, Y)
        net = _Baseline(W0, A0, par.output_scale)
        opt = torch.optim.SGD([{"params": [net.fc1.weight], "lr": dt * par.lr_w},
                               {"params": [net.fc2.weight], "lr": dt * par.lr_a}], lr=dt)

        def base_step() -> None:
            opt.zero_grad(set_to_none=True)
            loss = 0.5 * (net(X) - Y).square().sum(dim=1).mean()
            loss.backward()
            opt.step()

        def eng_step() -> None:
            state[0] = eng.step(state[0], (Xc, Yc))

        # agreement after 3 steps (same arithmetic up to summation order)
        for _ in range(3):
            base_step()
            eng_step()
        with torch.no_grad():
            ref = net.fc1.weight
            dW = float((state[0].W.to(ref.dtype) - ref).abs().max() / ref.abs().max())
        results: dict[str, float] = {"agree_rel": dW}
        # interleaved rounds, best of each. On the CPU, process CPU time rather than wall
        # time: with the cores shared, wall time mostly measures the other jobs.
        clock = time.perf_counter if device.type == "cuda" else time.process_time
        best = {"autograd": np.inf, "engine": np.inf}
        fns = {"autograd": base_step, "engine": eng_step}
        for _ in range(reps):
            for name, fn in fns.items():
                _sync(device)
                t0 = clock()
                fn()
                _sync(device)
                best[name] = min(best[name], clock() - t0)
        results.update(best)
    finally:
        torch.set_float32_matmul_precision(old)
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="*", default=["32,512,512", "64,512,512", "64,1024,1024"],
                    help="D,N,M triples")
    ap.add_argument("--dtypes", default="float32,float64")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--precision", default=None, choices=[None, "tf32", "bf16"])
    args = ap.parse_args()
    device = torch.device(args.device)
    print(f"device {device}, torch {torch.__version__}, threads {torch.get_num_threads()}, "
          f"precision {args.precision}\n")
    what = "wall" if device.type == "cuda" else "CPU time"
    print(f"per-step {what}, best of {args.reps} interleaved rounds\n")
    print("| D | N | M | dtype | autograd + SGD (ms/step) | hand-written (ms/step) "
          "| speed-up "
          "| weights agree (rel) |")
    print("|---|---|---|---|---|---|---|---|")
    for size in args.sizes:
        D, N, M = (int(x) for x in size.split(","))
        for dname in args.dtypes.split(","):
            dtype = getattr(torch, dname)
            r = bench(D, N, M, dtype, device, args.reps, args.precision)
            print(f"| {D} | {N} | {M} | {dname} | {1e3 * r['autograd']:.2f} | "
                  f"{1e3 * r['engine']:.2f} | {r['autograd'] / r['engine']:.2f}x | "
                  f"{r['agree_rel']:.1e} |", flush=True)


if __name__ == "__main__":
    main()
