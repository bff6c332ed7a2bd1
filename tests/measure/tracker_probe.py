"""A training run with a streamed SpectrumTracker, for the kill-and-resume test.

python tests/measure/tracker_probe.py OUT CKPT STEPS [--kill-after K] [--resume]

Trains a small MLP with ``SpectrumTracker(model, out=OUT, schedule=Schedule.every(3))``
(background worker on), saving model, optimiser and tracker state to CKPT every 10 steps.
Batches depend only on the step, so a resumed run replays exactly. With
``--kill-after K`` the process sends itself SIGKILL right after ``tracker.step()``
of iteration K: a hard crash at a known point, no timing race.
"""

from __future__ import annotations

import argparse
import os
import signal

import torch

from specdyn import Schedule
from specdyn.measure import SpectrumTracker


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("ckpt")
    ap.add_argument("steps", type=int)
    ap.add_argument("--kill-after", type=int, default=-1)
    ap.add_argument("--resume", action="store_true")
    args = ap.parse_args()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 48), torch.nn.Tanh(),
                                torch.nn.Linear(48, 8))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    teacher = torch.randn(16, 8, generator=torch.Generator().manual_seed(1))
    tracker = SpectrumTracker(model, schedule=Schedule.every(3), out=args.out, n_boot=5,
                              policy="block",
                              max_samples=256)
    start = 0
    if args.resume:
        ck = torch.load(args.ckpt, weights_only=True)
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        tracker.load_state_dict(ck["tracker"])
        start = int(ck["step"])
    for it in range(start, args.steps):
        x = torch.randn(128, 16, generator=torch.Generator().manual_seed(1000 + it))
        loss = ((model(x) - torch.tanh(x @ teacher)) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        tracker.step()
        if (it + 1) % 10 == 0:
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(),
                        "tracker": tracker.state_dict(), "step": it + 1}, args.ckpt)
        if it == args.kill_after:
            os.kill(os.getpid(), signal.SIGKILL)
    tracker.close()


if __name__ == "__main__":
    main()
