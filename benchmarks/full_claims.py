"""The claims of every experiment at its ``--full`` size: run, checked, recorded.

For each experiment whose ``--full`` size fits in about an hour on a 2-core
machine, run ``specdyn reproduce NAME --full`` in a subprocess (killed at
``--limit-min`` minutes), then record every claim held / not held with its
measured value and the wall time in ``benchmarks/full_claims.json``; print the
markdown table that BENCHMARKS.md and ``docs/claims.md`` carry. Experiments
whose ``--full`` size does not fit (or needs a GPU) are listed in
:data:`NOT_RUN` with the reason and the prepared command, and recorded as not
run: no claim is said to hold at ``--full`` unless a run here showed it.

``--from DIR`` checks the claims again, with the current code, on finished
``--full`` folders ``DIR/NAME`` written earlier (by this script or by
``specdyn reproduce --full --out DIR``), without running them again: the
record then names both the commit that made the data and the one that checked
it.

    python benchmarks/full_claims.py                        # every runnable experiment
    python benchmarks/full_claims.py fig2 simulate --limit-min 30
    python benchmarks/full_claims.py --from /tmp/full-out   # recheck finished folders
    python benchmarks/full_claims.py --print                # the recorded table
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from specdyn import io, provenance, runs

RECORD = Path(__file__).with_name("full_claims.json")

#: Experiments whose --full size is not run here: why, and the command that runs it.
NOT_RUN: dict[str, str] = {
    "fig4": "needs a GPU: about 15 h of CPU a run at D = 512, N = 8192, M = 4096, 1e4 steps "
            "(prepared: bash benchmarks/gpu_fig4.sh)",
    "two-step-phase": "about 5 h on 2 cores (10 x 10 grid x 3 seeds at N = D = M = 4000, "
                      "an SVD of a 4000 x 4000 matrix per cell); run: specdyn reproduce "
                      "two-step-phase --full",
}


def _claims_of(folder: Path) -> list[dict[str, Any]]:
    rec = io.read_json(folder / "record.json")
    return list(rec.get("claims") or [])


def run_one(name: str, out: Path, limit_s: float, threads: int) -> dict[str, Any]:
    """Run ``name`` at --full into ``out/name``; its entry for the record."""
    cmd = [sys.executable, "-m", "specdyn", "reproduce", name, "--full", "--out", str(out),
           "--threads", str(threads)]
    load = os.getloadavg()[0]
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, timeout=limit_s, capture_output=True, text=True, check=False)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "wall_time_s": time.perf_counter() - start,
                "load_at_start": load, "reason": f"did not finish in {limit_s / 60:.0f} min",
                "claims": []}
    wall = time.perf_counter() - start
    entry: dict[str, Any] = {"wall_time_s": wall, "load_at_start": load, "threads": threads}
    rec_path = out / name / "record.json"
    if proc.returncode != 0 or not rec_path.exists():
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
        return {**entry, "status": "failed", "reason": " | ".join(tail), "claims": []}
    rec = io.read_json(rec_path)
    return {**entry, "status": "finished", "data_commit": rec.get("git_commit"),
            "claims_commit": rec.get("git_commit"), "claims": _claims_of(out / name)}


def recheck_one(folder: Path) -> dict[str, Any]:
    """Claims of a finished --full folder, checked again by the current code."""
    rec = io.read_json(folder / "record.json")
    claims = [c.to_dict() for c in runs.recheck_claims(folder)]
    return {"status": "finished", "wall_time_s": rec.get("wall_time_s"),
            "data_commit": rec.get("git_commit"), "claims_commit": provenance.git_commit(),
            "data_created": rec.get("created"), "claims": claims}


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|")


def markdown(record: dict[str, Any]) -> str:
    """The table of every experiment's --full claims: one row a claim."""
    lines = ["| experiment | claim | source | expected | measured (--full) | held | wall |",
             "|---|---|---|---|---|---|---|"]
    for name in runs.builtin_names():
        e = record.get(name)
        if e is None:
            lines.append(f"| {name} | (not run yet) | | | | | |")
            continue
        if e["status"] != "finished":
            lines.append(f"| {name} | ({e['status']}: {e.get('reason', '')}) | | | | | |")
            continue
        wall = e.get("wall_time_s")
        wall_s = "-" if wall is None else f"{wall / 60:.1f} min"
        for c in e["claims"]:
            m = c.get("measured")
            ms = f"{m:.4g}" if isinstance(m, float) else ("nan" if m is None else str(m))
            held = "held" if c["held"] else "NOT HELD"
            lines.append(f"| {name} | {_cell(c['name'])} | {_cell(c.get('source', ''))} "
                         f"| {c['expected']} | {ms} | {held} | {wall_s} |")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("names", nargs="*", help="experiments (default: every one not in NOT_RUN)")
    p.add_argument("--out", type=Path, default=None, help="output folder (default: a temp dir)")
    p.add_argument("--from", dest="from_dir", type=Path, default=None,
                   help="check the claims of finished --full folders DIR/NAME again, no run")
    p.add_argument("--limit-min", type=float, default=60.0, help="per-experiment limit")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--record", type=Path, default=RECORD)
    p.add_argument("--print", dest="print_only", action="store_true",
                   help="print the record's table and exit (no run)")
    args = p.parse_args()
    if args.print_only:
        print(markdown(json.loads(args.record.read_text())))
        return

    names = args.names or [n for n in runs.builtin_names() if n not in NOT_RUN]
    unknown = sorted(set(names) - set(runs.builtin_names()))
    if unknown:
        p.error(f"unknown experiment(s) {unknown}; known: {runs.builtin_names()}")
    record: dict[str, Any] = (json.loads(args.record.read_text()) if args.record.exists()
                              else {})
    for name, why in NOT_RUN.items():
        record.setdefault(name, {"status": "not run", "reason": why, "claims": []})
    out = args.out or Path(tempfile.mkdtemp(prefix="full-claims-"))
    for name in names:
        if args.from_dir is not None:
            folder = args.from_dir / name
            if not (folder / "record.json").exists():
                print(f"{name}: no finished folder in {args.from_dir}", flush=True)
                continue
            entry = recheck_one(folder)
        else:
            print(f"{name}: running --full (limit {args.limit_min:g} min) ...", flush=True)
            entry = run_one(name, out, args.limit_min * 60, args.threads)
        entry["date"] = time.strftime("%Y-%m-%d")
        record[name] = entry
        held = sum(bool(c["held"]) for c in entry["claims"])
        print(f"{name}: {entry['status']}, claims held {held}/{len(entry['claims'])}", flush=True)
        args.record.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    print(markdown(record))


if __name__ == "__main__":
    main()
