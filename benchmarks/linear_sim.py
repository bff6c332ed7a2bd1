"""Per-step cost of training the two-layer linear network at the paper's Fig. 2 sizes.

Compares, in one run on the same machine:

- naive: the way a researcher would write it: ``nn.Parameter`` W and A,
  autograd on the data matrix every step, ``torch.optim.SGD`` (lr = N);
- weights: ``train_linear(engine="weights")`` (hand-written gradients);
- gram: ``train_linear(engine="gram")`` (exact Gram-space update, O(D^3));

and the cost of one spectrum: the D x D route (``Sigma^(1/2) Gw Sigma^(1/2)``)
against forming ``H H^T/(MN)`` and its M x M eigendecomposition.

Engine per-step times are the difference of two runs of different lengths
(set-up and checkpoint costs cancel), best of three; the naive time is the
best of ``--naive-steps`` single steps; spectrum times are best of several.
Prints a markdown table. On a shared machine, two OpenMP threads contend
badly with other processes; ``--threads 1`` gives steadier numbers there.

    python benchmarks/linear_sim.py [--D 512 --N 8192 --M 4096] [--device cpu]
                                    [--dtype float32] [--threads 1]
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Callable

import numpy as np
import torch

from specdyn._torch import to_numpy
from specdyn.data import PowerLawTeacher
from specdyn.settings import FEATURE_LEARNING, PowerLawSetting
from specdyn.sim import gram, train_linear


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def naive_step_time(s: PowerLawSetting, N: int, M: int, n_steps: int, dtype: torch.dtype,
                    device: torch.device) -> float:
    assert s.D is not None
    D = P = s.D
    X, Y = PowerLawTeacher(s).sample_torch(M, seed=0, dtype=dtype, device=device)
    g = torch.Generator().manual_seed(0)
    W = torch.nn.Parameter((s.sigma_w * torch.randn(N, D, generator=g)).to(device, dtype))
    A = torch.nn.Parameter((s.sigma_a * torch.randn(N, P, generator=g)).to(device, dtype))
    opt = torch.optim.SGD([W, A], lr=float(N))  # nu = N, dt = 1

    def step() -> None:
        opt.zero_grad()
        f = (X @ W.T) @ A / (s.gamma0 * N)
        loss = 0.5 * ((f - Y) ** 2).sum() / M
        loss.backward()
        opt.step()

    step()  # warm-up
    times = []
    for _ in range(n_steps):
        _sync(device)
        t0 = time.perf_counter()
        step()
        _sync(device)
        times.append(time.perf_counter() - t0)
    return min(times)  # best observed: the machine is shared


def engine_step_time(s: PowerLawSetting, N: int, M: int, engine: str, short: int, long: int,
                     dtype: torch.dtype, device: torch.device) -> float:
    def run(steps: int) -> float:
        t0 = time.perf_counter()
        train_linear(s, N, M, steps, engine=engine, checkpoints=[0, steps], dtype=dtype,
                     device=device, progress=False)
        _sync(device)
        return time.perf_counter() - t0

    run(short)  # warm-up (allocator, threads)
    # best of three: the machine is shared and timings are noisy
    return min((run(long) - run(short)) / (long - short) for _ in range(3))


def spectrum_times(s: PowerLawSetting, N: int, M: int, dtype: torch.dtype,
                   device: torch.device) -> tuple[float, float, float]:
    """(D x D from Grams, D x D from W incl. forming Gw, M x M from H = X W^T), seconds."""
    D = s.D
    assert D is not None
    teacher = PowerLawTeacher(s)
    Xn, Yn = teacher.sample(M, 0)
    stats = gram.Stats.build(Xn.T @ Xn / M, Xn.T @ Yn / M, Yn.T @ Yn / M)
    W = s.sigma_w * torch.randn(N, D, generator=torch.Generator().manual_seed(1),
                                dtype=torch.float64).to(device, dtype)
    X = torch.as_tensor(Xn, dtype=dtype, device=device)
    gw = to_numpy(W.T @ W, np.float64) / N

    def from_w() -> None:
        gram.spectrum(stats, to_numpy(W.T @ W, np.float64) / N)

    def m_by_m() -> None:
        H = X @ W.T
        torch.linalg.eigvalsh(((H @ H.T) / (M * N)).double())
        _sync(device)

    def best(f: Callable[[], object], n: int) -> float:
        out = []
        for _ in range(n):
            t0 = time.perf_counter()
            f()
            out.append(time.perf_counter() - t0)
        return min(out)

    return (best(lambda: gram.spectrum(stats, gw), 5), best(from_w, 5), best(m_by_m, 2))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--D", type=int, default=512)
    ap.add_argument("--N", type=int, default=8192)
    ap.add_argument("--M", type=int, default=4096)
    ap.add_argument("--device", default=None)
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    ap.add_argument("--naive-steps", type=int, default=4)
    ap.add_argument("--weight-steps", type=int, default=8)
    ap.add_argument("--gram-steps", type=int, default=200)
    ap.add_argument("--threads", type=int, default=0,
                    help="torch intra-op threads (0: torch's default)")
    args = ap.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    dtype = getattr(torch, args.dtype)
    s = FEATURE_LEARNING.setting(D=args.D)
    N, M = args.N, args.M
    if device.type == "cuda":  # TF32 would change float32 results; keep IEEE float32
        torch.backends.cuda.matmul.allow_tf32 = False

    t_naive = naive_step_time(s, N, M, args.naive_steps, dtype, device)
    t_w = engine_step_time(s, N, M, "weights", 2, 2 + args.weight_steps, dtype, device)
    t_g = engine_step_time(s, N, M, "gram", 10, 10 + args.gram_steps, dtype, device)
    t_g64 = engine_step_time(s, N, M, "gram", 10, 10 + args.gram_steps // 2, torch.float64,
                             device)
    sp_gram, sp_w, sp_mm = spectrum_times(s, N, M, dtype, device)

    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    print(f"\n### Linear network, D = P = {args.D}, N = {N}, M = {M}, {args.dtype}, "
          f"device {device} ({platform.processor() or platform.machine()}, "
          f"torch threads {torch.get_num_threads()}, load avg {load[0]:.1f})\n")
    print("| implementation | time per GD step | speed-up vs naive |")
    print("|---|---:|---:|")
    print(f"| naive autograd + SGD (data matrix each step) | {t_naive * 1e3:.1f} ms | 1.0x |")
    print(f"| `engine=\"weights\"` (hand-written gradients) | {t_w * 1e3:.1f} ms | "
          f"{t_naive / t_w:.1f}x |")
    print(f"| `engine=\"gram\"` ({args.dtype}) | {t_g * 1e3:.2f} ms | {t_naive / t_g:.0f}x |")
    print(f"| `engine=\"gram\"` (float64) | {t_g64 * 1e3:.2f} ms | {t_naive / t_g64:.0f}x |")
    print("\n| spectrum of H H^T/(MN) | time | speed-up |")
    print("|---|---:|---:|")
    print(f"| M x M: form H = X W^T, H H^T, eigvalsh | {sp_mm * 1e3:.0f} ms | 1.0x |")
    print(f"| D x D from W: W^T W/N, Sigma^1/2 Gw Sigma^1/2, eigvalsh | {sp_w * 1e3:.0f} ms | "
          f"{sp_mm / sp_w:.0f}x |")
    print(f"| D x D from the Grams (Gram engine) | {sp_gram * 1e3:.0f} ms | "
          f"{sp_mm / sp_gram:.0f}x |")
    print(f"\nTargets: gram >= 40x naive -> {'met' if t_naive / t_g >= 40 else 'NOT met'}; "
          f"weights >= 1.3x naive -> {'met' if t_naive / t_w >= 1.3 else 'NOT met'}. "
          "Timings on a shared machine are noisy.")


if __name__ == "__main__":
    main()
