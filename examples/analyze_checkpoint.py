"""Analyse a saved checkpoint: spectra, exponents, MP bulks and outliers of every layer.

The script trains a small MLP briefly (on scikit-learn's bundled digits data),
saves its ``state_dict`` as a torch checkpoint and as ``.npz``, and then analyses
the checkpoint twice:

* with the command line, ``specdyn analyze model.pt`` (what you would run on
  your own ``.pt``/``.pth``/``.bin``/``.ckpt``, ``.safetensors``, ``.npy`` or
  ``.npz`` file), and
* with the library function behind it,
  ``specdyn.measure.summary.summarize_file(path)``, which returns one
  ``LayerSummary`` per tensor.

Conventions: a weight ``W`` (``out x in``) is summarised through the eigenvalues
of ``W^T W / out``; the exponent is the rank exponent ``a`` in
``lambda_k ~ k^-a`` (density exponent ``1 + 1/a``); outliers are eigenvalues
above the fitted Marchenko-Pastur edge with Tracy-Widom p-values. Bias vectors
(1-D) are listed as not analysed, with the reason.

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

from specdyn.measure.summary import summarize_file


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
    torch.save({"state_dict": model.state_dict(), "step": steps}, path)
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

    # 2. The library function: one LayerSummary per tensor, never silently dropped.
    print("\nsummarize_file:")
    for s in summarize_file(path, n_boot=50):
        if s.status != "ok" or s.fit is None:
            print(f"  {s.name:24s} {s.status}")
            continue
        n_out = s.outliers.n_outliers if s.outliers is not None else "-"
        print(f"  {s.name:24s} {s.matrix_shape}  lambda_1 = {s.eigs[0]:.4g}  "
              f"a = {s.fit.exponent:.3f} [{s.fit.ci_low:.3f}, {s.fit.ci_high:.3f}]  "
              f"(density exponent {s.fit.density_exponent:.2f})  outliers: {n_out}")
    print(f"\nfiles in {out}: {sorted(p.name for p in out.iterdir())}")


if __name__ == "__main__":
    main()
