"""Track the spectra of your own PyTorch model during training with SpectrumTracker.

A small MLP learns scikit-learn's bundled digits data (8x8 images, no download).
Two lines attach specdyn: ``tracker = SpectrumTracker(model)`` before the loop and
``tracker.step()`` after each optimiser step. At log-spaced steps the tracker
records, for every Linear layer, the spectrum of its activations (centred
covariance) and of its weight (``W^T W / out``), a power-law fit (rank exponent
``a`` in ``lambda_k ~ k^-a``, with a bootstrap interval) and the number of
outliers above the Marchenko-Pastur bulk. The result is one tidy table.

Run:  python examples/track_your_model.py [--small] [--out DIR]
``--small`` (or SPECDYN_EXAMPLES_SMALL=1) trains for fewer steps.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np
import torch
from sklearn.datasets import load_digits

from specdyn.measure import SpectrumTracker


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--small", action="store_true", help="smoke-test size")
    ap.add_argument("--out", type=Path, default=None,
                    help="write the table here as Parquet (default: just print)")
    args = ap.parse_args()
    small = args.small or os.environ.get("SPECDYN_EXAMPLES_SMALL") == "1"
    steps = 60 if small else 2000

    digits = load_digits()
    X = torch.tensor(digits.data / 16.0, dtype=torch.float32)      # (1797, 64)
    y = torch.tensor(digits.target)
    gen = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(64, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 128), torch.nn.ReLU(),
        torch.nn.Linear(128, 10),
    )
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    # batch 512 > 256 features, so each activation covariance has a Marchenko-Pastur bulk
    tracker = SpectrumTracker(model, max_samples=512)                    # line 1 of 2
    for _ in range(steps):
        idx = torch.randint(0, len(X), (512,), generator=gen)
        loss = torch.nn.functional.cross_entropy(model(X[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        tracker.step()                                                   # line 2 of 2
    tracker.close()
    df = tracker.table()
    acc = (model(X).argmax(1) == y).float().mean().item()
    print(f"{steps} steps, final loss {loss.item():.3f}, training accuracy {acc:.3f}")
    # the table holds measured steps only; a step the worker could not keep up with
    # (coalesced) is listed in tracker.coalesced, and close() said so
    measured = sorted(int(s) for s in df.step.unique())
    print(f"{len(df)} rows; columns {list(df.columns)}; {len(measured)} measured steps of "
          f"{len(measured) + len(tracker.coalesced)} scheduled: {measured}")

    for kind in ("activation", "weight"):
        ex = df[df.quantity == f"{kind}_exponent"].pivot(index="step", columns="layer",
                                                         values="value")
        print(f"\n{kind} rank exponent a (lambda_k ~ k^-a) by layer:")
        print(ex.round(3).to_string())
    out = df[df.quantity == "weight_n_outliers"].pivot(index="step", columns="layer",
                                                      values="value")
    print("\nweight outliers above the MP edge (Tracy-Widom test, level 0.05):")
    print(out.astype(int).to_string())
    if tracker.skipped:
        # Layer "0" outputs W x for 64-pixel inputs: rank <= 64 < 256 features, so its
        # activation covariance has no Marchenko-Pastur bulk; the tracker says so here
        # instead of reporting a meaningless outlier count.
        print(f"\n{len(tracker.skipped)} summaries skipped, e.g. {tracker.skipped[0]}")
    assert np.isfinite(df.value.to_numpy(dtype=float)).all()
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        df.to_parquet(args.out / "spectra.parquet")
        print(f"\nwrote {args.out / 'spectra.parquet'}")


if __name__ == "__main__":
    main()
