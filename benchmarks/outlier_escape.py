"""Timings behind the outlier-escape simulators, each against a naive baseline.

1. Spectrum of a single-layer student ``W`` (``N x 2N``) at a record step:
   eigen-decomposition of the smaller Gram matrix (what ``train_linear_student``
   does) against a full SVD.
2. Top singular values of a deep-linear hidden layer (``N x N``): warm-started
   subspace iteration (``spectra="subspace"``) against exact eigenvalues.
3. One step of a depth-3 linear net (``D = P = 16``): hand-written gradients
   (``train_deep_linear``) against torch autograd on the same weights.

Prints a markdown table. Usage: ``python benchmarks/outlier_escape.py [--sizes 256,512,1024]``.
"""

from __future__ import annotations

import argparse
import functools
import time
from collections.abc import Callable

import numpy as np
import torch


def _best_of(fn: Callable[[], object], repeat: int = 3) -> float:
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _manual_step(Ws: list[torch.Tensor], target: torch.Tensor, c: float) -> list[torch.Tensor]:
    P, D = target.shape
    pre = [torch.eye(D, dtype=torch.float64)]
    for w in Ws:
        pre.append(w @ pre[-1])
    suf = [torch.eye(P, dtype=torch.float64)]
    for w in reversed(Ws):
        suf.append(suf[-1] @ w)
    suf = suf[::-1]
    E = c * pre[-1] - target
    return [c * suf[i + 1].T @ (E @ pre[i].T) for i in range(len(Ws))]


def _autograd_step(Ws: list[torch.Tensor], target: torch.Tensor, c: float) -> tuple:
    ps = [w.clone().requires_grad_(True) for w in Ws]
    loss = 0.5 * ((c * ps[2] @ (ps[1] @ ps[0]) - target) ** 2).sum()
    return torch.autograd.grad(loss, ps)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="256,512,1024")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    torch.manual_seed(0)
    rows = []
    for N in sizes:
        W = torch.randn(N, 2 * N, dtype=torch.float64)
        t_gram = _best_of(lambda W=W: torch.linalg.eigh(W @ W.T))
        t_svd = _best_of(lambda W=W: torch.linalg.svd(W, full_matrices=False))
        rows.append(("single-layer spectrum + vectors", N, t_gram, "full SVD", t_svd))

        H = torch.randn(N, N, dtype=torch.float64)
        Q = torch.linalg.qr(torch.randn(N, 6, dtype=torch.float64)).Q

        def subspace(H: torch.Tensor = H, Q: torch.Tensor = Q) -> None:
            q = Q
            for _ in range(8):
                q = torch.linalg.qr(H.T @ (H @ q)).Q
            torch.linalg.svdvals(H @ q)

        t_sub = _best_of(subspace)
        t_exact = _best_of(lambda H=H: torch.linalg.eigvalsh(H @ H.T))
        rows.append(("hidden-layer top-2 (subspace)", N, t_sub, "exact eigvalsh", t_exact))

        Ws = [torch.randn(N, 16, dtype=torch.float64), torch.randn(N, N, dtype=torch.float64),
              torch.randn(16, N, dtype=torch.float64)]
        target = torch.randn(16, 16, dtype=torch.float64)
        c = 1.0 / (4.0 * np.sqrt(N) * N)
        rows.append(("deep-linear GD step (manual)", N,
                     _best_of(functools.partial(_manual_step, Ws, target, c)), "autograd",
                     _best_of(functools.partial(_autograd_step, Ws, target, c))))
    print("| operation | N | time (s) | baseline | baseline (s) | speed-up |")
    print("|---|---|---|---|---|---|")
    for name, N, t, base, tb in rows:
        print(f"| {name} | {N} | {t:.4f} | {base} | {tb:.4f} | {tb / t:.1f}x |")


if __name__ == "__main__":
    main()
