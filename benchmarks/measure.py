"""Benchmark specdyn.measure against numpy, the ``powerlaw`` package and WeightWatcher.

Run:  python benchmarks/measure.py [--n 4096 --p 8192] [--skip-big]

1. Spectrum of an n x p feature matrix (samples x features, power-law
   feature scales): ``covariance_spectrum`` full and ``top=100`` against
   ``numpy.linalg.svd`` of the centred matrix (the naive baseline), with the
   largest relative difference of the eigenvalues.
2. Exponent fitting on the same matrices: specdyn's ``fit_power_law``
   (automatic window), ``powerlaw.Fit`` (density exponent of the tail above
   an automatic xmin) and WeightWatcher's ``alpha`` (the same, on W^T W of
   each layer). Everything is converted to the rank exponent ``a``
   (``lambda_k ~ k^-a``) via ``a = 1 / (alpha_density - 1)``; the density
   exponents are printed too. Timings: specdyn's spectrum and fit
   separately; ``powerlaw`` fits the same eigenvalues; WeightWatcher's time
   includes its own SVD.

``powerlaw`` and ``weightwatcher`` are optional (pip install powerlaw
weightwatcher); a missing or failing one is reported as such in the table.
Prints markdown tables.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from specdyn.measure import covariance_spectrum, fit_power_law, weight_spectrum


def _timed(fn: Callable[[], Any], repeat: int = 1) -> tuple[Any, float]:
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return out, best


def bench_spectrum(n: int, p: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    F = rng.standard_normal((n, p)) * np.arange(1, p + 1) ** -0.5
    full, t_full = _timed(lambda: covariance_spectrum(F))
    top, t_top = _timed(lambda: covariance_spectrum(F, top=100))
    top_l, t_lz = _timed(lambda: covariance_spectrum(F, top=100, method="lanczos"))

    def naive() -> np.ndarray:
        Fc = F - F.mean(axis=0)
        return np.linalg.svd(Fc, compute_uv=False) ** 2 / n

    ref, t_svd = _timed(naive)
    err_full = float(np.max(np.abs(full - ref) / ref[0]))
    err_top = float(np.max(np.abs(top / ref[:100] - 1)))
    err_lz = float(np.max(np.abs(top_l / ref[:100] - 1)))
    return [
        f"### Spectrum of a {n} x {p} feature matrix (float64, "
        f"{os.environ.get('OMP_NUM_THREADS', 'default')} BLAS threads)",
        "",
        "| method | time (s) | speed-up vs svd | max error |",
        "|---|---|---|---|",
        f"| numpy.linalg.svd (centred, no vectors) | {t_svd:.2f} | 1.0 | reference |",
        f"| covariance_spectrum (Gram + eigvalsh) | {t_full:.2f} | {t_svd / t_full:.1f} | "
        f"{err_full:.1e} (abs, rel. to top) |",
        f"| covariance_spectrum(top=100) (Gram + Lanczos) | {t_top:.2f} | "
        f"{t_svd / t_top:.1f} | {err_top:.1e} (rel.) |",
        f"| covariance_spectrum(top=100, method='lanczos') (implicit, no Gram) | {t_lz:.2f} | "
        f"{t_svd / t_lz:.1f} | {err_lz:.1e} (rel.) |",
        "",
    ]


def _powerlaw_alpha(eigs: np.ndarray) -> tuple[float, float]:
    import powerlaw

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit, t = _timed(lambda: powerlaw.Fit(eigs, verbose=False))
    return float(fit.power_law.alpha), t


def _ww_alpha(W: np.ndarray) -> tuple[float, float]:
    import contextlib
    import io
    import logging

    import torch
    import weightwatcher as ww

    logging.getLogger("weightwatcher").setLevel(logging.ERROR)
    lin = torch.nn.Linear(W.shape[1], W.shape[0], bias=False)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor(W, dtype=torch.float32))
    model = torch.nn.Sequential(lin)

    def run() -> Any:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            return ww.WeightWatcher(model=model).analyze()

    df, t = _timed(run)
    return float(df["alpha"].iloc[0]), t


def _rank(alpha_density: float) -> float:
    return 1.0 / (alpha_density - 1.0) if alpha_density > 1 else float("nan")


def _matrices(seed: int) -> list[tuple[str, float, np.ndarray]]:
    """(label, true rank exponent, W) with W^T W / rows having the stated spectrum."""
    rng = np.random.default_rng(seed)
    out = []
    N, M = 2048, 1024
    for a in (0.5, 1.0, 2.0):
        U, _ = np.linalg.qr(rng.standard_normal((N, M)))
        V, _ = np.linalg.qr(rng.standard_normal((M, M)))
        s = np.sqrt(N) * np.arange(1, M + 1) ** (-a / 2)
        out.append((f"exact ESD, {N}x{M}, a={a}", a, (U * s) @ V.T))
    D, S = 512, 4096
    for a in (0.5, 1.0, 2.0):
        X = rng.standard_normal((S, D)) * np.arange(1, D + 1) ** (-a / 2)
        out.append((f"sample cov., {S} samples x {D}, a={a}", a, X))
    return out


def bench_exponents(seed: int = 0, big: tuple[int, int] | None = None) -> list[str]:
    mats = _matrices(seed)
    if big is not None:
        n, p = big
        rng = np.random.default_rng(seed + 1)
        mats.append((f"features {n}x{p}, a=1.0", 1.0,
                     rng.standard_normal((n, p)) * np.arange(1, p + 1) ** -0.5))
    lines = [
        "### Exponents on the same matrices (rank exponent a, lambda_k ~ k^-a; "
        "density exponent alpha = 1 + 1/a in brackets)",
        "",
        "| matrix | true a | specdyn a [95% CI] (window) (alpha) | time: spectrum + fit (s) | "
        "powerlaw a (alpha) | time: fit (s) | WeightWatcher a (alpha) | time: all (s) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, a_true, W in mats:
        eigs, t_spec = _timed(lambda W=W: weight_spectrum(W, normalize="rows"))
        fit, t_sd = _timed(lambda eigs=eigs: fit_power_law(eigs))
        cells = [label, f"{a_true:g}",
                 f"{fit.exponent:.3f} [{fit.ci_low:.3f}, {fit.ci_high:.3f}] "
                 f"(k={fit.kmin}..{fit.kmax}) ({fit.density_exponent:.3f})",
                 f"{t_spec:.3f} + {t_sd:.3f}"]
        for fn, arg in ((_powerlaw_alpha, eigs), (_ww_alpha, W)):
            try:
                alpha, t = fn(arg)
                cells += [f"{_rank(alpha):.3f} ({alpha:.3f})", f"{t:.3f}"]
            except Exception as err:  # noqa: BLE001 - report, never fake
                cells += [f"failed: {type(err).__name__}: {str(err)[:60]}", "-"]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4096, help="samples of the big matrix")
    ap.add_argument("--p", type=int, default=8192, help="features of the big matrix")
    ap.add_argument("--skip-big", action="store_true", help="skip the n x p matrix")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", choices=("spectrum", "exponents"), default=None,
                    help="run one part only")
    args = ap.parse_args()
    out: list[str] = []
    if not args.skip_big and args.only != "exponents":
        out += bench_spectrum(args.n, args.p, args.seed)
    if args.only != "spectrum":
        out += bench_exponents(args.seed, None if args.skip_big else (args.n, args.p))
    print("\n".join(out))


if __name__ == "__main__":
    main()
