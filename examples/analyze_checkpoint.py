"""Analyse a saved checkpoint: spectra, exponents, MP bulks, outliers and a verdict per layer.

The script trains a small MLP briefly (on scikit-learn's bundled digits data),
saves a training checkpoint ``{step, model_state, optimizer_state}`` (the
optimizer state is recognised and listed as skipped, never measured) and the
weights as ``.npz``, and then analyses the checkpoint twice:

* with the command line, ``specdyn analyze model.pt`` (what you would run on
  your own ``.pt``/``.pth``/``.bin``/``.ckpt``, ``.safetensors``, ``.npy`` or
  ``.npz`` file; ``--format json|csv`` and ``--save table.parquet`` give
  machine-readable output), and
* with the library function behind it, ``specdyn.measure.analyze(path)``
  (also takes a ``torch.nn.Module`` or a state_dict), which returns a
  ``pandas.DataFrame`` with one row per tensor.

Conventions: a weight ``W`` (``out x in``) is summarised through the eigenvalues
of ``W^T W / out``; the exponent is the rank exponent ``a`` in
``lambda_k ~ k^-a`` (density exponent ``1 + 1/a``); outliers are eigenvalues
above the fitted Marchenko-Pastur edge with Tracy-Widom p-values; the verdict
is "power law", "consistent with MP bulk (no power law)" or "bulk + k
outliers". Bias vectors (1-D) are listed as skipped, with the reason.

Run:  python examples/analyze_checkpoint.py [--small] [--out DIR] [PATH]
Give PATH to analyse your own file instead of the trained MLP.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
from sklearn.datasets import load_digits

from specdyn.measure import analyze


def train_and_save(out: Path, steps: int) -> Path:
    """Train a small MLP on the digits data; save it as model.pt and model.npz."""
    digits = load_digits()
    X = torch.tensor(digits.data / 16.0, dtype=torch.float32)
    y = torch.tensor(digits.target)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for _ in range(steps):
        loss = torch.nn.functional.cross_entropy(model(X), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"trained {steps} full-batch steps, loss {loss.item():.3f}")
    out.mkdir(parents=True, exist_ok=True)
    path = out / "model.pt"
    torch.save({"step": steps, "model_state": model.state_dict(),
                "optimizer_state": opt.state_dict()}, path)
    np.savez(out / "model.npz", **{k: v.numpy() for k, v in model.state_dict().items()})
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path", nargs="?", type=Path, default=None,
                    help="a checkpoint to analyse (default: train and save a small MLP)")
    ap.add_argument("--small", action="store_true", help="smoke-test size")
    ap.add_argument("--out", type=Path, default=None, help="folder for files (default: temporary)")
    args = ap.parse_args()
    small = args.small or os.environ.get("SPECDYN_EXAMPLES_SMALL") == "1"
    out = args.out or Path(tempfile.mkdtemp(prefix="specdyn-analyze-"))
    path = args.path or train_and_save(out, steps=20 if small else 300)

    # 1. The command line (exit code 0 on success; a file it cannot read gives 2).
    cmd = [sys.executable, "-m", "specdyn", "analyze", str(path)]
    if not small:  # --plot saves the spectra on log axes with fits and MP edges
        cmd += ["--plot", "--out", str(out)]
    print("\n$ specdyn " + " ".join(cmd[3:]))
    subprocess.run(cmd, check=True)

    # 2. The library function: a DataFrame, one row per tensor, never silently dropped.
    print("\nanalyze(path):")
    df = analyze(path, n_boot=50)
    for r in df.itertuples():
        if r.status != "measured":
            print(f"  {r.layer:24s} skipped: {r.reason}")
            continue
        print(f"  {r.layer:24s} {r.matrix_shape}  a = {r.exponent:.3f} "
              f"[{r.exponent_ci_low:.3f}, {r.exponent_ci_high:.3f}]"
              f"{' (short window)' if r.exponent_short_window else ''}"
              f"  outliers: {r.n_outliers}  verdict: {r.verdict}")
    df.to_parquet(out / "layers.parquet")  # or df.to_csv, df.to_json
    print(f"\nfiles in {out}: {sorted(p.name for p in out.iterdir())}")


if __name__ == "__main__":
    main()
