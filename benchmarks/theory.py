"""Throughput of the closed forms on a 512 x 1000 (k, t) grid, against the ODE oracle.

Also counts how many grid points the paper's formula, evaluated as printed
(``E = exp(b t)``), returns as NaN/inf: the reason the closed form is rewritten.

Run: ``python benchmarks/theory.py`` (single-threaded numpy: elementwise ufuncs
use one core). Prints a markdown table.
"""

from __future__ import annotations

import time

import numpy as np

from specdyn import PowerLawSetting, theory
from specdyn.settings import FEATURE_LEARNING
from specdyn.theory import oracles


def best_of(fn, repeat: int = 7) -> float:
    fn()
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def rho_as_printed(s: PowerLawSetting, k: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Eq. (12) exactly as printed in the paper (overflows at late times)."""
    lam, theta, S, g = s.lam(k), np.sqrt(s.mu(k)), s.S, s.gamma0
    with np.errstate(all="ignore"):
        E = np.exp(lam * np.sqrt(S**2 + 4 * g**2 * theta**2) / g**2 * t)
        rp = (-S + np.sqrt(S**2 + 4 * g**2 * theta**2)) / (2 * g * theta)
        v = rp * (E - 1) / (rp**2 + E)
        xi = S * v / (1 - v**2)
        return s.sigma_w**2 * lam + lam * S / 2 * (-1 + np.sqrt(1 + 4 * xi**2 / S**2))


def main() -> None:
    s = FEATURE_LEARNING.setting()
    k = np.arange(1, 513, dtype=np.float64)[:, None]
    t = np.logspace(-2, 7, 1000)[None, :]
    t_rho = best_of(lambda: theory.rho(s, k, t))
    t_aeff = best_of(lambda: theory.alpha_eff(s, k, t))
    t_print = best_of(lambda: rho_as_printed(s, k, t))
    bad = int((~np.isfinite(rho_as_printed(s, k, t))).sum())
    # ODE oracle: one solve per mode with all 1000 times; time 8 modes and scale to 512
    modes = np.linspace(1, 512, 8)
    t0 = time.perf_counter()
    for kk in modes:
        oracles.gram_ode(s, float(kk), t.ravel())
    t_ode = (time.perf_counter() - t0) / len(modes) * 512
    print("| quantity (512 x 1000 grid) | time | target | vs ODE oracle |")
    print("|---|---|---|---|")
    print(f"| rho (closed form, stable) | {t_rho * 1e3:.1f} ms | < 20 ms | {t_ode / t_rho:,.0f}x |")
    print(f"| alpha_eff (exact derivative) | {t_aeff * 1e3:.1f} ms | < 60 ms | "
          f"{t_ode / t_aeff:,.0f}x |")
    print(f"| rho as printed in the paper | {t_print * 1e3:.1f} ms | - | "
          f"{bad} of {k.size * t.size} points NaN/inf |")
    print(f"| ODE oracle (LSODA, 512 solves, extrapolated from 8) | {t_ode:.1f} s | - | 1x |")


if __name__ == "__main__":
    main()
