"""Per-step time of the mean-field Langevin engine against an autograd baseline.

Both do noisy GD on the same particles, data and noise (temperature > 0):
the baseline builds ``f_N`` with torch ops, calls ``loss.backward()`` and
updates ``theta -= eta N grad + sqrt(2 tau eta) xi``; the engine is
:class:`specdyn.sim.particles.ParticleEngine` (hand-written gradient, no autograd).
A second row times the coupled propagation-of-chaos step (reference +
copies + replicated systems in one batched pass) against looping the
baseline over every system. The script first checks that engine and
baseline give the same particles after a few steps, then times both in the
same run and prints a markdown table.

Usage::

    python benchmarks/langevin.py                 # CPU sizes
    python benchmarks/langevin.py --device cuda --N 8000 --M 4096
"""

from __future__ import annotations

import argparse
import math
import time
from typing import Any

import numpy as np
import torch

from specdyn.models.activations import get_activation
from specdyn.sim import Block, ParticleEngine


def _baseline_step(theta: torch.Tensor, x: torch.Tensor, y: torch.Tensor, act: Any,
                   eta: float, tau: float, wd: float, xi: torch.Tensor,
                   drive: torch.Tensor | None = None) -> torch.Tensor:
    """Autograd step; ``drive`` (residual of another measure) gives mean-field copies."""
    th = theta.detach().requires_grad_(True)
    N = th.shape[0]
    f = act.fn(x @ th[:, 1:].T) @ th[:, 0] / N
    if drive is None:
        loss = 0.5 * ((f - y) ** 2).mean() + 0.5 * wd * (th ** 2).sum() / N
    else:  # first variation against a fixed residual: linear in f
        loss = (drive.detach() * f).mean() + 0.5 * wd * (th ** 2).sum() / N
    loss.backward()
    assert th.grad is not None
    return (theta - eta * N * th.grad + math.sqrt(2 * tau * eta) * xi).detach()


def _sync(dev: torch.device) -> None:
    if dev.type == "cuda":
        torch.cuda.synchronize()


def _time(fn: Any, reps: int, dev: torch.device) -> float:
    fn()
    _sync(dev)
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    _sync(dev)
    return (time.perf_counter() - t0) / reps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--N", type=int, default=2000)
    ap.add_argument("--M", type=int, default=400)
    ap.add_argument("--d", type=int, default=5)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    dev = torch.device(args.device)
    dt = torch.float64
    act = get_activation("tanh-shift")
    eta, tau, wd = 0.05, 0.02, 0.05
    g = torch.Generator(device=dev).manual_seed(0)
    x = torch.randn((args.M, args.d), generator=g, dtype=dt, device=dev)
    y = torch.tanh(2 * x[:, 0]) + 0.5 * (x[:, 0] ** 2 - 1)
    theta = torch.randn((args.N, args.d + 1), generator=g, dtype=dt, device=dev)
    xi = torch.randn(theta.shape, generator=g, dtype=dt, device=dev)

    # --- single system: equality, then timing
    eng = ParticleEngine(act, x, y, [Block(1, args.N)], eta, tau, wd)
    a, b = theta.clone(), theta.clone()
    for _ in range(3):
        a = eng.step(eng.state_of(a), xi).theta
        b = _baseline_step(b, x, y, act, eta, tau, wd, xi)
    err = float((a - b).abs().max())
    assert err < 1e-10, f"engine and autograd baseline disagree: {err:.3g}"
    st = eng.state_of(theta)
    t_eng = _time(lambda: eng.step(st, xi), args.reps, dev)
    t_base = _time(lambda: _baseline_step(theta, x, y, act, eta, tau, wd, xi), args.reps, dev)

    # --- coupled chaos step: reference (N) + copies (n_max) + systems of sizes Ns,
    # replicated to n_max particles each
    Ns = [25, 50, 100, 200]
    n_max = max(Ns)
    reps_n = [n_max // n for n in Ns]
    blocks = [Block(1, args.N), Block(1, n_max, driver=0),
              *(Block(r, n) for r, n in zip(reps_n, Ns, strict=True))]
    P = args.N + n_max * (1 + len(Ns))
    th_all = torch.randn((P, args.d + 1), generator=g, dtype=dt, device=dev)
    xi_all = torch.randn(th_all.shape, generator=g, dtype=dt, device=dev)
    ceng = ParticleEngine(act, x, y, blocks, eta, tau, wd)

    def looped() -> None:
        ref = th_all[:args.N]
        _baseline_step(ref, x, y, act, eta, tau, wd, xi_all[:args.N])
        with torch.no_grad():
            r = act.fn(x @ ref[:, 1:].T) @ ref[:, 0] / args.N - y
        cop = th_all[args.N:args.N + n_max]
        _baseline_step(cop, x, y, act, eta, tau, wd, xi_all[args.N:args.N + n_max], drive=r)
        start = args.N + n_max
        for rn, n in zip(reps_n, Ns, strict=True):
            for j in range(rn):
                s = slice(start + j * n, start + (j + 1) * n)
                _baseline_step(th_all[s], x, y, act, eta, tau, wd, xi_all[s])
            start += rn * n

    # equality of the coupled step on the copies (driven by the reference)
    new = ceng.step(ceng.state_of(th_all), xi_all).theta
    ref = th_all[:args.N]
    with torch.no_grad():
        r = act.fn(x @ ref[:, 1:].T) @ ref[:, 0] / args.N - y
    cop = _baseline_step(th_all[args.N:args.N + n_max], x, y, act, eta, tau, wd,
                         xi_all[args.N:args.N + n_max], drive=r)
    err_c = float((new[args.N:args.N + n_max] - cop).abs().max())
    assert err_c < 1e-10, f"coupled engine and baseline disagree: {err_c:.3g}"
    st_all = ceng.state_of(th_all)
    t_ceng = _time(lambda: ceng.step(st_all, xi_all), args.reps, dev)
    t_loop = _time(looped, max(1, args.reps // 2), dev)

    print(f"device {dev}, float64, d = {args.d}, M = {args.M}; max |engine - autograd| "
          f"{err:.1e} (single), {err_c:.1e} (copies)\n")
    print("| case | particles | engine s/step | autograd s/step | speed-up |")
    print("|---|---|---|---|---|")
    print(f"| one system | {args.N} | {t_eng:.4f} | {t_base:.4f} | {t_base / t_eng:.1f}x |")
    print(f"| chaos coupling ({len(blocks)} blocks, {sum(reps_n) + 2} systems) | {P} | "
          f"{t_ceng:.4f} | {t_loop:.4f} (looped) | {t_loop / t_ceng:.1f}x |")
    np.set_printoptions(precision=3)


if __name__ == "__main__":
    main()
