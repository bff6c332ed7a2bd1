"""Train a small MLP on handwritten digits and watch its representation exponent move away
from the data's own exponent.

The data are scikit-learn's 8 x 8 digits (:func:`specdyn.data.real.digits`: bundled,
no download). The input covariance's eigenvalues decay as a power law with exponent
``alpha`` (fitted over ranks 2..20 beside the model). An MLP 64 -> 256 -> 256 -> 10
(ReLU) is trained with SGD on the mean squared error to the one-hot labels, and one
line attaches specdyn::

    tracker = SpectrumTracker(model, out=OUT, steps=STEPS)   # then tracker.step() each step

At log-spaced steps the tracker records the spectra of every weight matrix and of
every Linear layer's output (its preactivations: the paper's representation), fits
their rank exponents and writes the rows to ``OUT``; ``write_report`` writes
``OUT/report.html``. This script then prints, and plots to ``OUT/exponent.png``, the
first hidden layer's exponent over training beside the data's ``alpha``: at step 0
the layer inherits ``alpha`` (a random first layer keeps the input's spectrum, core
Eq. 17); as the labels are learned its exponent changes (the labels' misalignment,
``docs/real-data.md``, is why the aligned theory does not predict by how much).

Run:  python examples/real_digits.py [--small] [--steps N] [--out DIR]
``--small`` (or SPECDYN_EXAMPLES_SMALL=1) trains a few steps, for CI.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np
import torch

from specdyn.data.real import digits
from specdyn.measure import SpectrumTracker, covariance_spectrum, fit_power_law
from specdyn.report import write_report

#: The window of ranks of every exponent printed here (the data's and the layer's).
KMIN, KMAX = 2, 20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--small", action="store_true", help="smoke-test size")
    ap.add_argument("--steps", type=int, default=None, help="SGD steps (default 2000)")
    ap.add_argument("--out", type=Path, default=Path("runs/real_digits"),
                    help="folder for the spectra, report.html and exponent.png")
    args = ap.parse_args()
    small = args.small or os.environ.get("SPECDYN_EXAMPLES_SMALL") == "1"
    steps = args.steps or (40 if small else 2000)

    data = digits(seed=0)
    assert data.Y is not None
    lam = covariance_spectrum(data.X)
    alpha = fit_power_law(lam, KMIN, KMAX, seed=0)
    print(f"data: {data.M} digits, D = {data.D}; input spectrum alpha = {alpha.exponent:.3f} "
          f"[{alpha.ci_low:.3f}, {alpha.ci_high:.3f}] over ranks {KMIN}..{KMAX}")

    torch.manual_seed(0)
    x = torch.tensor(data.X, dtype=torch.float32)
    y = torch.tensor(data.Y, dtype=torch.float32)
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    tracker = SpectrumTracker(model, out=args.out, steps=steps - 1, overwrite=True,
                              max_samples=1024, n_boot=20)
    gen = torch.Generator().manual_seed(0)
    for _ in range(steps):
        idx = torch.randint(0, data.M, (128,), generator=gen)
        loss = 0.5 * ((model(x[idx]) - y[idx]) ** 2).sum(dim=1).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        tracker.step()
    tracker.close()
    with torch.no_grad():
        acc = float((model(x).argmax(1) == y.argmax(1)).float().mean())
    print(f"{steps} SGD steps: training loss {float(loss.detach()):.4f}, accuracy {acc:.3f}")

    df = tracker.table()
    layer = "0"  # the first Linear: its outputs are the first hidden preactivations
    eig = df[(df.layer == layer) & (df.quantity == "activation_eigenvalue")]
    rows = []
    for step, g in eig.groupby("step"):
        ev = g.sort_values("rank").value.to_numpy()
        rows.append((int(step), fit_power_law(ev, KMIN, KMAX, n_boot=0).exponent))
    print(f"\nfirst hidden layer: representation exponent over training (ranks {KMIN}..{KMAX}), "
          f"beside the data's alpha = {alpha.exponent:.3f}")
    print("  step   exponent   exponent - alpha")
    for step, a in rows:
        print(f"  {step:>4}   {a:8.3f}   {a - alpha.exponent:+8.3f}")

    from specdyn.plot import new_figure, save_figure

    fig, (ax,) = new_figure(1, 1)
    st = np.array([r[0] for r in rows], dtype=float)
    ax.semilogx(np.maximum(st, 0.5), [r[1] for r in rows], "o-", label="first hidden layer")
    ax.axhline(alpha.exponent, color="grey", ls=":", label=f"data alpha = {alpha.exponent:.2f}")
    ax.set_xlabel("SGD step (step 0 drawn at 0.5)")
    ax.set_ylabel(f"rank exponent, ranks {KMIN}..{KMAX}")
    ax.set_title("digits: the representation leaves the data's exponent", fontsize=9)
    ax.legend(fontsize=8)
    figs = save_figure(fig, args.out / "exponent")
    path = write_report(args.out)
    print(f"\nfigure: {figs[0]}\nreport: {path} (open it in a browser; works offline)")


if __name__ == "__main__":
    main()
