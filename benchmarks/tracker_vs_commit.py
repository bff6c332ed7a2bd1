"""One tracker record of issue 31's model, this code against the code of an earlier commit.

``benchmarks/tracker.py --record-only`` times this code against a reference kept
in this tree (the per-matrix float64 path written out again). That reference
runs on today's helpers, so whatever sped them up since speeds it up too. This
script takes the reference from git instead: the library as it was at
``--ref`` (default ``e9b6386^``, the last commit before issue 31's first change
to the tracker), unpacked with ``git archive`` into a temporary folder, and
times one record of the same model and batch in child processes of the two
trees, interleaved (``ref, new, new, ref, ...``), each child taking the best of
``--rounds`` records after a warm-up record.

What a record costs here: the CPU time of ``tracker.record()`` on the training
thread (``background=False``, ``summary_process=False``: copy, decomposition,
summaries and write all on it) plus the CPU the forward hooks add (the armed
forward pass less a bare one). Both trees get the same model (width 512, 8
layers, 8 heads, ``CharTransformer`` of ``examples/monitor_a_transformer.py``,
seed 0, ``--warm-steps`` AdamW steps), the same batch (64 x 64 tokens) and
``max_samples = 2048``, ``n_boot = 50``.

The summaries of the two trees are compared too (the last record of each): the
per-layer outlier counts and the fitted exponents that both trees report.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/tracker_vs_commit.py            # 1 thread
    python benchmarks/tracker_vs_commit.py --ref <commit> --rounds 3 --procs 2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _child(args: argparse.Namespace) -> None:
    """Time ``--rounds`` records in this process (the tree on ``sys.path`` first)."""
    import torch

    sys.path.insert(0, str(ROOT / "examples"))
    from monitor_a_transformer import CharTransformer, batches, load_text, training_steps

    from specdyn.measure import SpectrumTracker

    torch.set_num_threads(args.threads)
    data, chars = load_text()
    torch.manual_seed(0)
    model = CharTransformer(len(chars), width=512, heads=8, layers=8, context=64)
    it = training_steps(model, data, batch=64, context=64, seed=0, device="cpu")
    for _ in range(args.warm_steps):
        next(it)
    x, _ = next(batches(data, 64, 64, 1))
    out = Path(tempfile.mkdtemp(prefix="specdyn-bench-vs-commit-"))
    tr = SpectrumTracker(model, schedule=lambda s: False, background=False,
                         summary_process=False, n_boot=50, max_samples=2048, out=out)

    def forward(armed: bool) -> float:
        if armed:
            tr.arm()
        c0 = time.thread_time()
        with torch.no_grad():
            model(x)
        return time.thread_time() - c0

    costs = []
    for r in range(args.rounds + 1):        # round 0: warm-up, not counted
        bare = forward(False)
        hooked = forward(True)
        c0 = time.thread_time()
        tr.record()
        rec = time.thread_time() - c0
        tr.step()
        if r > 0:
            costs.append(rec + max(hooked - bare, 0.0))
    df = tr.table()
    tr.close()
    last = df[df.step == df.step.max()]
    keep = last[last.quantity.isin([f"{kind}_{col}" for kind in ("weight", "activation")
                                    for col in ("n_outliers", "exponent")])]
    summary = {f"{r.layer}|{r.quantity}": float(r.value) for r in keep.itertuples()}
    print(json.dumps({"costs": costs, "summary": summary,
                      "n_rows": int(len(last))}))


def _unpack(ref: str, into: Path) -> Path:
    """``src/`` of commit ``ref`` under ``into`` (git archive; no worktree is registered)."""
    tar = into / "ref.tar"
    with open(tar, "wb") as fh:
        subprocess.run(["git", "-C", str(ROOT), "archive", ref, "src"], stdout=fh, check=True)
    with tarfile.open(tar) as tf:
        tf.extractall(into, filter="data")
    return into / "src"


def _run(src: Path, args: argparse.Namespace) -> dict:
    env = dict(os.environ, PYTHONPATH=str(src), OMP_NUM_THREADS=str(args.threads),
               TQDM_DISABLE="1")
    cmd = [sys.executable, __file__, "--child", "--rounds", str(args.rounds),
           "--threads", str(args.threads), "--warm-steps", str(args.warm_steps)]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise SystemExit(f"child on {src} failed:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ref", default="e9b6386^", help="the reference commit (default e9b6386^)")
    ap.add_argument("--rounds", type=int, default=3, help="records a child times (best of)")
    ap.add_argument("--procs", type=int, default=2, help="child processes per tree")
    ap.add_argument("--threads", type=int, default=1, help="torch threads")
    ap.add_argument("--warm-steps", type=int, default=3, help="training steps before")
    ap.add_argument("--json", type=Path, default=Path("tracker-vs-commit.json"))
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    for name in ("rounds", "procs", "threads"):
        if getattr(args, name) < 1:
            ap.error(f"--{name} must be a positive integer; got {getattr(args, name)}")
    if args.child:
        _child(args)
        return
    ref_sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", args.ref],
                             capture_output=True, text=True, check=True).stdout.strip()
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True, check=True).stdout.strip()
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="specdyn-ref-") as tmp:
        trees = {"reference": _unpack(args.ref, Path(tmp)), "this code": ROOT / "src"}
        res: dict[str, list[dict]] = {k: [] for k in trees}
        for i in range(args.procs):     # interleaved: ref, new | new, ref | ...
            for arm in (("reference", "this code") if i % 2 == 0
                        else ("this code", "reference")):
                res[arm].append(_run(trees[arm], args))
                print(f"[{arm}] process {i + 1}: "
                      + ", ".join(f"{c:.2f}" for c in res[arm][-1]["costs"]) + " CPU-s",
                      flush=True)
    load1 = os.getloadavg()[0]
    best = {arm: min(min(r["costs"]) for r in rs) for arm, rs in res.items()}
    a, b = res["reference"][-1]["summary"], res["this code"][-1]["summary"]
    both = sorted(set(a) & set(b))
    counts = [k for k in both if k.endswith("n_outliers")]
    exps = [k for k in both if k.endswith("exponent") and all(
        v == v for v in (a[k], b[k]))]
    same_counts = sum(a[k] == b[k] for k in counts)
    dexp = max((abs(a[k] - b[k]) for k in exps), default=float("nan"))
    print(f"\n### One record of issue 31's model: {head} against {args.ref} ({ref_sha})")
    print(f"{args.threads} torch thread(s), best of {args.rounds} records x {args.procs} "
          f"processes a tree, interleaved; load average {load0:.1f} -> {load1:.1f} "
          f"({os.cpu_count()} CPUs)\n")
    print("| tree | one record, CPU-s (best) |\n|---|---|")
    for arm, v in best.items():
        print(f"| {arm} | {v:.2f} |")
    print(f"\nthis code against {args.ref}: {best['reference'] / best['this code']:.1f}x "
          "cheaper in CPU time")
    print(f"summaries of the last record: outlier counts equal in {same_counts} of "
          f"{len(counts)} (layer, kind); largest |exponent difference| {dexp:.3g} over "
          f"{len(exps)} fits")
    args.json.write_text(json.dumps({
        "ref": args.ref, "ref_sha": ref_sha, "head": head, "threads": args.threads,
        "rounds": args.rounds, "procs": args.procs, "load": [load0, load1],
        "best_cpu_s": best, "speedup_cpu": best["reference"] / best["this code"],
        "counts_equal": [same_counts, len(counts)], "max_exponent_diff": dexp,
        "runs": res}, indent=1))


if __name__ == "__main__":
    main()
