"""``specdyn analyze`` against WeightWatcher on real pretrained checkpoints shipped in pip packages.

Run:  python benchmarks/real_checkpoints.py [--rounds 3] [--rank-check 100] [--keep DIR]

1. Fetches ``resemblyzer`` (``pretrained.pt``: a speaker encoder, LSTM + linear,
   saved as ``{step, model_state, optimizer_state}``) and ``facenet-pytorch``
   (MTCNN's ``pnet.pt``/``rnet.pt``/``onet.pt``: small conv nets, bare
   state_dicts) with ``pip install --no-deps --target`` into a temporary folder
   (only their ``.pt`` files are used); skips with a message when offline.
2. Per file: every tensor is either measured or listed as skipped with its
   reason (optimizer state never measured) -- checked, and printed.
3. WeightWatcher (``pip install weightwatcher``, the ``bench`` extra) analyses
   the **same matrices**: every tensor specdyn measured, reshaped the same way
   (``out x in*kh*kw``), as ``nn.Linear`` layers, with ``mp_fit=True`` for its
   spike count. Per layer: specdyn's rank exponent ``a`` (``lambda_k ~ k^-a``)
   with its interval and the equivalent density exponent ``1 + 1/a``, its
   verdict and outlier count (Tracy-Widom test at 5 %); WeightWatcher's
   ``alpha`` (a density exponent, power-law fit of the tail above its xmin)
   and ``num_spikes`` (eigenvalues above its MP edge).
4. Times: warm (in-process, best of interleaved rounds: ``specdyn.measure.analyze``
   on the file against ``WeightWatcher(model).analyze(mp_fit=True)``) and cold
   (a fresh interpreter each: ``python -m specdyn analyze FILE --format json``
   against a script that imports weightwatcher, builds the model and analyses it).
5. ``--rank-check N``: ``find_outliers`` on N square 2000 x 2000 Gaussian
   matrices; the count of false "rank deficient" errors (0 expected).

Prints markdown tables.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from specdyn._progress import progress
from specdyn._torch import to_numpy
from specdyn.measure import (
    Skipped,
    analyze,
    covariance_spectrum,
    find_outliers,
    load_tensors,
)

PACKAGES = ("resemblyzer==0.1.4", "facenet-pytorch==2.6.0")
FILES = ("resemblyzer/pretrained.pt", "facenet_pytorch/data/pnet.pt",
         "facenet_pytorch/data/rnet.pt", "facenet_pytorch/data/onet.pt")


def fetch(target: Path) -> list[Path] | None:
    """pip-install the packages (no dependencies) into ``target``; None when pip fails."""
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-compile",
           "--target", str(target), *PACKAGES]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        last = res.stderr.strip().splitlines()[-1] if res.stderr.strip() else ""
        print(f"skipped: could not fetch {', '.join(PACKAGES)} with pip (offline?): {last}")
        return None
    return [target / f for f in FILES]


def _matrices(path: Path) -> dict[str, np.ndarray]:
    """The tensors specdyn measures, reshaped as it does (``out x prod(rest)``)."""
    out = {}
    for name, t in load_tensors(path).items():
        if isinstance(t, Skipped) or getattr(t, "ndim", 0) < 2:
            continue
        a = to_numpy(t, np.float64)
        if not np.issubdtype(a.dtype, np.floating):
            continue
        out[name] = a.reshape(a.shape[0], -1)
    return out


def _ww_model(mats: dict[str, np.ndarray]) -> Any:
    import torch

    layers = []
    for W in mats.values():
        lin = torch.nn.Linear(W.shape[1], W.shape[0], bias=False)
        with torch.no_grad():
            lin.weight.copy_(torch.tensor(W, dtype=torch.float32))
        layers.append(lin)
    return torch.nn.Sequential(*layers)


def _ww_analyze(model: Any) -> Any:
    import weightwatcher as ww

    logging.getLogger("weightwatcher").setLevel(logging.ERROR)
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        return ww.WeightWatcher(model=model).analyze(mp_fit=True, min_evals=3)


_WW_COLD = """
import contextlib, io, logging, sys, warnings
import numpy as np, torch
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    import weightwatcher as ww
logging.getLogger("weightwatcher").setLevel(logging.ERROR)
mats = np.load(sys.argv[1])
layers = []
for k in mats.files:
    W = mats[k]
    lin = torch.nn.Linear(W.shape[1], W.shape[0], bias=False)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor(W, dtype=torch.float32))
    layers.append(lin)
with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
    warnings.simplefilter("ignore")
    ww.WeightWatcher(model=torch.nn.Sequential(*layers)).analyze(mp_fit=True, min_evals=3)
"""


def _cold(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])} failed: {res.stderr.strip()[-300:]}")
    return dt


def bench_file(path: Path, rounds: int, work: Path) -> tuple[list[str], list[str], dict]:
    label = f"{path.parent.name}/{path.name}" if path.parent.name != "data" else \
        f"facenet_pytorch/{path.name}"
    df = analyze(path)
    # Every tensor is measured or listed as skipped with a reason; optimizer never measured.
    assert ((df.status == "measured") | ((df.status == "skipped") & (df.reason != ""))).all()
    opt = df[df.reason.str.startswith("optimizer state")]
    assert not (df.layer.str.contains("exp_avg") & (df.status == "measured")).any()
    measured = df[df.status == "measured"]
    mats = {k: W for k, W in _matrices(path).items() if k in set(measured.layer)}
    assert list(measured.layer) == list(mats), (list(measured.layer), list(mats))
    model = _ww_model(mats)
    wdf = None
    t_sd, t_ww = np.inf, np.inf
    for _ in range(rounds):  # interleaved rounds, best of each
        t0 = time.perf_counter()
        analyze(path)
        t_sd = min(t_sd, time.perf_counter() - t0)
        t0 = time.perf_counter()
        wdf = _ww_analyze(model)
        t_ww = min(t_ww, time.perf_counter() - t0)
    assert wdf is not None
    npz = work / f"{path.stem}-mats.npz"
    np.savez(npz, **{f"m{i}": W for i, W in enumerate(mats.values())})
    script = work / "ww_cold.py"
    script.write_text(_WW_COLD)
    c_sd, c_ww = np.inf, np.inf
    for _ in range(rounds):
        c_sd = min(c_sd, _cold([sys.executable, "-m", "specdyn", "analyze", str(path),
                                "--format", "json"]))
        c_ww = min(c_ww, _cold([sys.executable, str(script), str(npz)]))
    rows = []
    ww_by_id = {int(r.layer_id): r for r in wdf.itertuples()}
    for i, r in enumerate(measured.itertuples()):
        w = ww_by_id.get(i + 1)  # WeightWatcher numbers the Linear layers from 1
        if r.exponent == r.exponent:  # not NaN
            sd_exp = (f"{r.exponent:.3f} [{r.exponent_ci_low:.3f}, {r.exponent_ci_high:.3f}]"
                      + (" short" if r.exponent_short_window else ""))
            sd_dens = f"{1 + 1 / r.exponent:.2f}" if r.exponent > 0 else "-"
        else:
            sd_exp = sd_dens = "-"
        n_out = "-" if r.n_outliers is None or r.n_outliers != r.n_outliers else (
            f">={r.n_outliers} (cap)" if r.cap_reached else f"{r.n_outliers}")
        if w is not None and w.alpha == w.alpha and w.alpha > 1:
            ww_alpha, ww_rank = f"{w.alpha:.2f}", f"{1 / (w.alpha - 1):.3f}"
        else:
            ww_alpha = ww_rank = "-"
        ww_sp = f"{int(w.num_spikes)}" if w is not None and w.num_spikes == w.num_spikes \
            else "-"
        shape = "x".join(map(str, r.matrix_shape))
        rows.append(f"| {label} | {r.layer} | {shape} | {sd_exp} | {sd_dens} | {ww_alpha} | "
                    f"{ww_rank} | {r.verdict} | {n_out} | {ww_sp} |")
    counts = {"tensors": len(df), "measured": int((df.status == "measured").sum()),
              "skipped": int((df.status == "skipped").sum()), "optimizer rows": len(opt),
              "optimizer tensors": sum(int(x.split("(")[1].split()[0]) for x in opt.reason)}
    timing = (f"| {label} | {counts['measured']} | {t_sd:.2f} | {t_ww:.2f} | "
              f"{t_ww / t_sd:.1f}x | {c_sd:.2f} | {c_ww:.2f} | {c_ww / c_sd:.1f}x |")
    return rows, [timing], counts


def rank_check(n_matrices: int, size: int = 2000) -> str:
    """False "rank deficient" errors on square Gaussian matrices (0 expected)."""
    fails, smallest = 0, []
    t0 = time.perf_counter()
    for seed in progress(range(n_matrices), desc=f"rank check {size}x{size}"):
        F = np.random.default_rng(seed).standard_normal((size, size))
        eigs = covariance_spectrum(F, center=False)
        smallest.append(eigs[-1] / eigs[0])
        try:
            find_outliers(eigs, 1.0, n_samples=size)
        except ValueError as err:
            if "rank deficient" not in str(err):
                raise
            fails += 1
    dt = time.perf_counter() - t0
    return (f"{n_matrices} square {size} x {size} Gaussian matrices: {fails} false "
            f"'rank deficient' errors; smallest lambda_min / lambda_1 = {min(smallest):.2e} "
            f"(tolerance {size} * eps = {size * np.finfo(float).eps:.2e}; "
            f"{sum(s < 1e-10 for s in smallest)} below the old 1e-10 cut-off); {dt:.0f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3, help="interleaved timing rounds (3)")
    ap.add_argument("--rank-check", type=int, default=100,
                    help="square 2000 x 2000 Gaussian matrices for the rank check (0: skip)")
    ap.add_argument("--keep", type=Path, default=None,
                    help="install into this folder (kept) instead of a temporary one")
    ap.add_argument("--skip-checkpoints", action="store_true")
    args = ap.parse_args()
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} cores, load average {load[0]:.1f} {load[1]:.1f} "
          f"{load[2]:.1f} (timings on a loaded machine are upper bounds)\n")
    if not args.skip_checkpoints:
        with tempfile.TemporaryDirectory(prefix="specdyn-real-") as tmp:
            target = args.keep or Path(tmp) / "pkgs"
            files = fetch(target)
            if files is not None:
                layer_rows, time_rows, all_counts = [], [], {}
                for f in files:
                    rows, trow, counts = bench_file(f, args.rounds, Path(tmp))
                    layer_rows += rows
                    time_rows += trow
                    all_counts[f.name] = counts
                print("| file | layer | matrix | specdyn a [95% CI] | 1 + 1/a | WW alpha | "
                      "WW 1/(alpha-1) | specdyn verdict | specdyn outliers | WW spikes |")
                print("|---|---|---|---|---|---|---|---|---|---|")
                print("\n".join(layer_rows))
                print("\n| file | layers | specdyn warm (s) | WW warm (s) | WW / specdyn | "
                      "specdyn cold (s) | WW cold (s) | WW / specdyn |")
                print("|---|---|---|---|---|---|---|---|")
                print("\n".join(time_rows))
                print("\ntensors per file (all measured or skipped with a reason):")
                print(json.dumps(all_counts))
    if args.rank_check > 0:
        print("\n" + rank_check(args.rank_check))


if __name__ == "__main__":
    main()
