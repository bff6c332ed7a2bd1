"""Which scheduled steps a default SpectrumTracker keeps, this code against an earlier commit.

The new user's run: the MLP of ``examples/track_your_model.py`` (64 -> 256 -> 128 ->
10, ReLU, SGD with momentum, batches of 512 of scikit-learn's digits), ``--steps``
updates, ``SpectrumTracker(model, schedule=Schedule.log(30), steps=T - 1,
max_samples=512, out=DIR)`` and every other setting at its default. The same run in
child processes of two trees: this one and the library at ``--ref`` (unpacked with
``git archive``), interleaved ``ref, new, new, ref, ...`` for ``--rounds`` rounds.

Printed per run: the scheduled steps, the steps measured (row files), the steps
coalesced and their range, the first record's cost (its ``record_costs`` entry:
spectra and summaries, wall) against the median of the others, the training loop's
wall time and the load average. The claim, fixed before the run: this tree measures
every scheduled step (0 coalesced) where the reference drops most of the early ones.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/tracker_steps_kept.py [--ref c107916] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = r"""
import json, sys, tempfile, time
import numpy as np, torch
from sklearn.datasets import load_digits
from specdyn import Schedule
from specdyn.measure import SpectrumTracker, read_spectra
T = int(sys.argv[1])
d = load_digits()
X = torch.tensor(d.data / 16.0, dtype=torch.float32); y = torch.tensor(d.target)
gen = torch.Generator().manual_seed(0); torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 128),
                            torch.nn.ReLU(), torch.nn.Linear(128, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
out = tempfile.mkdtemp()
t0 = time.perf_counter()
tracker = SpectrumTracker(model, schedule=Schedule.log(30), steps=T - 1, max_samples=512, out=out)
for _ in range(T):
    idx = torch.randint(0, len(X), (512,), generator=gen)
    loss = torch.nn.functional.cross_entropy(model(X[idx]), y[idx])
    opt.zero_grad(); loss.backward(); opt.step()
    tracker.step()
loop = time.perf_counter() - t0
tracker.close()
df = read_spectra(out)
measured = sorted(int(s) for s in df[df.quantity != "record_coalesced"].step.unique())
cost = [c["spectra_s"] + c["summaries_s"] for c in tracker.record_costs]
print(json.dumps({"scheduled": [int(s) for s in Schedule.log(30).resolve(T - 1)],
                  "measured": measured, "coalesced": sorted(s for s, _ in tracker.coalesced),
                  "first_record_s": cost[0], "other_records_s": float(np.median(cost[1:])),
                  "loop_s": loop}))
"""


def _tree(ref: str, dest: Path) -> Path:
    """The library at ``ref``, unpacked under ``dest``; returns its ``src``."""
    arch = dest / "ref.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(arch), ref, "src"], check=True)
    with tarfile.open(arch) as tar:
        tar.extractall(dest / "ref", filter="data")
    return dest / "ref" / "src"


def _run(src: Path, steps: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(src))
    res = subprocess.run([sys.executable, "-c", _CHILD, str(steps)], env=env, text=True,
                         capture_output=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ref", default="c107916", help="the earlier commit")
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--json", type=Path, default=Path("tracker-steps-kept.json"))
    args = ap.parse_args()
    if args.steps < 2 or args.rounds < 1:
        ap.error("--steps must be at least 2 and --rounds at least 1")
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"ref": _tree(args.ref, Path(tmp)), "new": ROOT / "src"}
        runs: list[dict] = []
        for r in range(args.rounds):
            for name in (("ref", "new") if r % 2 == 0 else ("new", "ref")):
                load = os.getloadavg()[0]
                runs.append({"tree": name, "load": load, **_run(trees[name], args.steps)})
    print(f"### Steps a default tracker keeps: digits MLP, {args.steps} steps, "
          f"Schedule.log(30) ({len(runs[0]['scheduled'])} scheduled), this tree against "
          f"{args.ref}, {args.rounds} interleaved rounds")
    print()
    print("| tree | load | measured | coalesced (range) | first record | other records (median) "
          "| training loop |")
    print("|---|---|---|---|---|---|---|")
    for r in runs:
        co = r["coalesced"]
        span = f" ({co[0]} .. {co[-1]})" if co else ""
        print(f"| {'this code' if r['tree'] == 'new' else args.ref} | {r['load']:.1f} | "
              f"{len(r['measured'])} of {len(r['scheduled'])} | {len(co)}{span} | "
              f"{r['first_record_s']:.2f} s | {r['other_records_s']:.3f} s | {r['loop_s']:.1f} s |")
    held = all(r["measured"] == r["scheduled"] and not r["coalesced"]
               for r in runs if r["tree"] == "new")
    print()
    print(f"claim (this tree measures every scheduled step): {'holds' if held else 'FAILS'}")
    args.json.write_text(json.dumps({"runs": runs, "ref": args.ref, "held": held}, indent=1))
    print(f"\n(machine-readable: {args.json})")


if __name__ == "__main__":
    main()
