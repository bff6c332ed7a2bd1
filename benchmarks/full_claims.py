"""The claims of every experiment at its ``--full`` size: run, checked, recorded.

For each experiment whose ``--full`` size fits in about an hour on a 2-core
machine, run ``specdyn reproduce NAME --full`` in a subprocess (killed at
``--limit-min`` minutes), then record every claim held / not held with its
measured value and the wall time in ``benchmarks/full_claims.json``; print the
markdown table that BENCHMARKS.md and ``docs/claims.md`` carry. Experiments
whose ``--full`` size does not fit are listed in :data:`NOT_RUN` with the
reason and the prepared command, and recorded as not run; those that need a GPU
(:data:`GPU_ONLY`) are recorded from a GPU machine's folders with ``--from``: no
claim is said to hold at ``--full`` unless a run showed it. A run that did not
finish never replaces a finished entry (it is kept as its ``last_attempt``).

``--from DIR`` checks the claims again, with the current code, on finished
``--full`` folders ``DIR/NAME`` written earlier (by this script or by
``specdyn reproduce --full --out DIR``), without running them again: the
record then names both the commit that made the data and the one that checked
it. A folder made elsewhere (a GPU machine, a wheel install whose records say
``git_commit: null``) is recorded with ``--device`` and ``--data-commit``. A
folder whose config differs from the experiment's ``--full`` config (other than
where it ran) is recorded as a variant, keyed ``NAME [field=value, ...]``, never
as the default config.

Every entry names the machine (``device``), the commit that made the data and the
one that checked the claims, the wall time and each claim with its measured value.

    python benchmarks/full_claims.py                        # every runnable experiment
    python benchmarks/full_claims.py fig2 simulate --limit-min 30
    python benchmarks/full_claims.py --from /tmp/full-out   # recheck finished folders
    python benchmarks/full_claims.py fig4 --from /tmp/fig4-relu --from /tmp/fig4-gelu \
        --device "one NVIDIA H200, torch 2.11.0+cu130" --data-commit 49cb59a
    python benchmarks/full_claims.py --print                # the recorded table
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from specdyn import io, provenance, runs
from specdyn.runs.claims import claim_key, definition, fmt_measured, held_count, mark, md_cell
from specdyn.runs.config import config_to_dict

RECORD = Path(__file__).with_name("full_claims.json")

#: Experiments whose --full size is not run here: why, and the command that runs it.
NOT_RUN: dict[str, str] = {
    # empty since two-step-phase --full ran here (35.6 min at 2 threads, 2026-12-04)
}

#: Experiments whose --full size needs a GPU: not run by default here (name them to run
#: them), recorded from a GPU machine's folders with ``--from``.
GPU_ONLY: dict[str, str] = {
    "fig4": "about 15 h of CPU a run at D = 512, N = 8192, M = 4096, 1e4 steps; on a GPU: "
            "bash benchmarks/gpu_fig4.sh, then --from its folder",
}

#: Config fields that say where a run ran, not what it computed: a folder that differs
#: from the --full config only in these is the --full config.
PLACEMENT = frozenset({"device"})

#: Entries the current claims code has not checked, and why: their copy of a claim may
#: differ from today's (a revised tolerance, a claim made a sanity check), and claims added
#: since have no ``--full`` value. ``tests/experiments/test_experiments_claims.py`` fails on
#: any other entry whose claims differ from the code's, or that lacks one of its claims.
NOT_RECHECKED: dict[str, str] = {
    "fig4": "its three folders (ReLU, GELU, tanh) are on the GPU machine that made them, not "
            "here: checked again with --from when they are (or rerun: bash "
            "benchmarks/gpu_fig4.sh); its t = 0 slope became a sanity check since, and the "
            "claims added since (the slope peak's time, the effective theory against an "
            "independent evaluation, the t = 0 deviation's size) have no --full value",
}


def stale_claims(name: str, claims: list[dict[str, Any]],
                 record: dict[str, Any]) -> list[str]:
    """Keys of ``claims`` (a run's claim records, today's code) that ``record``'s entry for
    ``name`` lacks or holds under another definition (:func:`~specdyn.runs.claims.definition`):
    what a ``--from`` recheck (or a rerun) would change."""
    entry = record.get(name)
    if entry is None or entry.get("status") != "finished":
        return [claim_key(c) for c in claims]
    have = {claim_key(c): definition(c) for c in entry["claims"]}
    return [claim_key(c) for c in claims if have.get(claim_key(c)) != definition(c)]


def this_machine() -> str:
    """The machine this script runs on, in words (for the record's ``device``)."""
    import torch

    return (f"{os.cpu_count()} CPU cores ({platform.machine()}), no GPU used, "
            f"torch {torch.__version__}")


def variant_of(name: str, config: dict[str, Any]) -> dict[str, list[Any]]:
    """``{field: [--full value, this folder's value]}`` where a folder's config is not
    the experiment's ``--full`` config (fields of :data:`PLACEMENT` aside)."""
    full = config_to_dict(runs.get(name).config(True))
    return {k: [full.get(k), v] for k, v in config.items()
            if k != "experiment" and k not in PLACEMENT and full.get(k) != v}


def key_of(name: str, variant: dict[str, list[Any]]) -> str:
    """The record's key: ``name``, or ``name [field=value, ...]`` for a variant."""
    if not variant:
        return name
    return f"{name} [{', '.join(f'{k}={v[1]}' for k, v in sorted(variant.items()))}]"


def _claims_of(folder: Path) -> list[dict[str, Any]]:
    rec = io.read_json(folder / "record.json")
    return list(rec.get("claims") or [])


def run_one(name: str, out: Path, limit_s: float, threads: int) -> dict[str, Any]:
    """Run ``name`` at --full into ``out/name``; its entry for the record.

    A finished run is recorded whatever its exit status (``reproduce`` exits 1
    when a claim expected to hold fails: that is a result, not a crash).
    """
    cmd = [sys.executable, "-m", "specdyn", "reproduce", name, "--full", "--out", str(out),
           "--threads", str(threads)]
    load = os.getloadavg()[0]
    start = time.perf_counter()
    machine = {"device": this_machine(), "threads": threads, "load_at_start": load}
    try:
        proc = subprocess.run(cmd, timeout=limit_s, capture_output=True, text=True, check=False)
    except subprocess.TimeoutExpired:
        return {**machine, "status": "timeout", "wall_time_s": time.perf_counter() - start,
                "reason": f"did not finish in {limit_s / 60:.0f} min", "claims": []}
    wall = time.perf_counter() - start
    entry: dict[str, Any] = {**machine, "wall_time_s": wall}
    rec_path = out / name / "record.json"
    rec = io.read_json(rec_path) if rec_path.exists() else {}
    if rec.get("status") != "finished":
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
        return {**entry, "status": "failed", "reason": " | ".join(tail), "claims": []}
    return {**entry, "status": "finished", "data_commit": rec.get("git_commit"),
            "claims_commit": rec.get("git_commit"), "data_created": rec.get("created"),
            "folder": str(out / name), "claims": _claims_of(out / name)}


def recheck_one(folder: Path, *, device: str | None = None,
                data_commit: str | None = None) -> dict[str, Any]:
    """Claims of a finished --full folder, checked again by the current code.

    ``device`` and ``data_commit`` say where and from which commit the folder was
    made, when its record cannot (``git_commit: null`` for a wheel install); a
    ``data_commit`` that contradicts the record is a ``ValueError``.
    """
    rec = io.read_json(folder / "record.json")
    made = rec.get("git_commit")
    if data_commit and made and not made.startswith(data_commit):
        raise ValueError(f"{folder}: --data-commit {data_commit} but the record says {made}")
    claims = [c.to_dict() for c in runs.recheck_claims(folder)]
    return {"status": "finished", "wall_time_s": rec.get("wall_time_s"),
            "data_commit": made or data_commit, "claims_commit": provenance.git_commit(),
            "data_created": rec.get("created"), "folder": str(folder),
            "device": device or f"not given (record's host: {rec.get('host')})",
            "claims": claims}


def store(record: dict[str, Any], key: str, entry: dict[str, Any]) -> bool:
    """Put ``entry`` under ``key``, unless it did not finish and the record has a finished
    entry there: that one is kept, with ``entry`` as its ``last_attempt`` (False)."""
    old = record.get(key)
    if entry["status"] != "finished" and old is not None and old["status"] == "finished":
        old["last_attempt"] = entry
        return False
    record[key] = entry
    return True


def _entries(record: dict[str, Any], name: str) -> list[tuple[str, dict[str, Any] | None]]:
    """``name``'s entry (or ``None``), then its variants', in key order."""
    variants = sorted(k for k in record if k.startswith(f"{name} ["))
    return [(name, record.get(name))] + [(k, record[k]) for k in variants]


def _short_device(entry: dict[str, Any]) -> str:
    """The machine's name, without the notes after it (a comma or a parenthesis)."""
    name = str(entry.get("device") or "2-core CPU (not recorded)")
    return name.split(",")[0].split(" (")[0].strip()


def markdown(record: dict[str, Any]) -> str:
    """The table of every experiment's --full claims: one row a claim.

    A claim is marked as at ``--full`` (:func:`~specdyn.runs.claims.mark`), where a
    ``full_only`` claim is expected to hold; variants follow their experiment.
    """
    lines = ["| experiment | claim | source | expected | measured (--full) | held | wall "
             "| machine |",
             "|---|---|---|---|---|---|---|---|"]
    for name in runs.builtin_names():
        for key, e in _entries(record, name):
            if e is None:
                lines.append(f"| {key} | (not run yet) | | | | | | |")
                continue
            if e["status"] != "finished":
                lines.append(f"| {md_cell(key)} | ({e['status']}: {md_cell(e.get('reason', ''))})"
                             " | | | | | | |")
                continue
            wall = e.get("wall_time_s")
            wall_s = "not recorded" if wall is None else f"{wall / 60:.1f} min"
            for c in e["claims"]:
                lines.append(f"| {md_cell(key)} | {md_cell(c['name'])} "
                             f"| {md_cell(c.get('source', ''))} | {md_cell(c['expected'])} "
                             f"| {md_cell(fmt_measured(c.get('measured')))} "
                             f"| {mark(c, full=True)} | {wall_s} | {_short_device(e)} |")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("names", nargs="*",
                   help="experiments (default: every one not in NOT_RUN or GPU_ONLY)")
    p.add_argument("--out", type=Path, default=None, help="output folder (default: a temp dir)")
    p.add_argument("--from", dest="from_dirs", type=Path, action="append", default=[],
                   help="check the claims of finished --full folders DIR/NAME again, no run "
                        "(repeat for several DIRs)")
    p.add_argument("--device", default=None,
                   help="with --from: the machine that made the folders, in words")
    p.add_argument("--data-commit", default=None,
                   help="with --from: the commit that made the folders, when their records "
                        "say git_commit null")
    p.add_argument("--limit-min", type=float, default=60.0, help="per-experiment limit")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--record", type=Path, default=RECORD)
    p.add_argument("--print", dest="print_only", action="store_true",
                   help="print the record's table and exit (no run)")
    args = p.parse_args()
    if args.print_only:
        print(markdown(json.loads(args.record.read_text())))
        return

    names = args.names or [n for n in runs.builtin_names()
                           if n not in NOT_RUN and n not in GPU_ONLY]
    unknown = sorted(set(names) - set(runs.builtin_names()))
    if unknown:
        p.error(f"unknown experiment(s) {unknown}; known: {runs.builtin_names()}")
    record: dict[str, Any] = (json.loads(args.record.read_text()) if args.record.exists()
                              else {})
    for name, why in NOT_RUN.items():
        record.setdefault(name, {"status": "not run", "reason": why, "claims": []})
    out = args.out or (None if args.from_dirs else Path(tempfile.mkdtemp(prefix="full-claims-")))
    jobs = ([(name, d / name) for d in args.from_dirs for name in names] if args.from_dirs
            else [(name, None) for name in names])
    for name, folder in jobs:
        if folder is not None:
            if not (folder / "record.json").exists():
                print(f"{name}: no finished folder {folder}", flush=True)
                continue
            variant = variant_of(name, io.read_json(folder / "record.json")["config"])
            if len(variant) > 3:
                print(f"{name}: {folder} is not a --full folder ({len(variant)} fields differ "
                      f"from the --full config: {sorted(variant)}); not recorded", flush=True)
                continue
            try:
                entry = recheck_one(folder, device=args.device, data_commit=args.data_commit)
            except ValueError as err:  # not finished, or a contradicting --data-commit
                print(f"{name}: {err}; not recorded", flush=True)
                continue
        else:
            print(f"{name}: running --full (limit {args.limit_min:g} min) ...", flush=True)
            variant = {}
            assert out is not None
            entry = run_one(name, out, args.limit_min * 60, args.threads)
        entry["date"] = time.strftime("%Y-%m-%d")
        if variant:
            entry["variant"] = variant
        key = key_of(name, variant)
        if not store(record, key, entry):
            print(f"{key}: {entry['status']}; the finished entry of "
                  f"{record[key].get('date')} is kept", flush=True)
        held, n = held_count(entry["claims"])
        print(f"{key}: {entry['status']}, claims held {held}/{n}", flush=True)
        args.record.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    print(markdown(record))


if __name__ == "__main__":
    main()
