"""Run quick experiments at seeds other than the judged one and record which claims fail.

    python scripts/seed_scan.py --seeds 21 [NAME ...]            # every experiment with a seed
    python scripts/seed_scan.py --seeds 22-33 two-step-phase batch-reuse

Each experiment is run at its quick config with ``seed`` replaced, or a ``seeds`` tuple of
``n`` seeds by ``n s, ..., n s + n - 1`` (disjoint sets for distinct scan seeds ``s >= 1``,
none holding a judged seed; experiments whose config has neither, the theory figures, are
skipped and said so), one after another on one thread, into a temporary folder. The
claims expected to hold (not sanity checks, not disputed, not ``quick size``) that fail
are merged into ``benchmarks/seed_scan.json``:
``{experiment: {seed: {"commit": ..., "failed": [[claim, measured, expected], ...]}}}``.
``scripts/claims_doc.py`` renders it as docs/claims.md's "Other seeds": a claim's band is
set on pilot seeds, so this is where a band too narrow for the seeds' spread shows.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

os.environ.setdefault("TQDM_DISABLE", "1")

from specdyn import io  # noqa: E402
from specdyn.runs import builtin_names, get  # noqa: E402
from specdyn.runs.run import run_experiments  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "benchmarks" / "seed_scan.json"


def seed_list(text: str) -> list[int]:
    """``"21"``, ``"22-33"`` or ``"3,6,9"`` as a list of seeds (each >= 1: 0 is judged)."""
    seeds: list[int] = []
    for part in text.split(","):
        lo, dash, hi = part.partition("-")
        if not (lo.isdigit() and (hi.isdigit() if dash else True)):
            raise ValueError(f"--seeds must be seeds >= 1 like 21, 22-33 or 3,6,9, got {text!r}")
        seeds += list(range(int(lo), int(hi or lo) + 1))
    if not seeds or min(seeds) < 1:
        raise ValueError(f"--seeds must name seeds >= 1 (0 is the judged seed), got {text!r}")
    return seeds


def seeded(cfg: Any, seed: int) -> Any | None:
    """``cfg`` at scan seed ``seed``: its ``seed`` field replaced, or its ``seeds`` tuple of
    ``n`` by ``(n seed, ..., n seed + n - 1)``; ``None`` if it has neither."""
    fields = {f.name for f in dataclasses.fields(cfg)}
    if "seed" in fields:
        return dataclasses.replace(cfg, seed=seed)
    if "seeds" in fields and isinstance(cfg.seeds, tuple):
        n = len(cfg.seeds)
        return dataclasses.replace(cfg, seeds=tuple(range(n * seed, n * seed + n)))
    return None


def expected_failures(claims: list[dict[str, Any]]) -> list[list[Any]]:
    """``[name, measured, expected]`` of each claim expected to hold that did not."""
    return [[c["name"], c.get("measured"), c.get("expected")] for c in claims
            if not c["held"] and not c.get("sanity") and not c.get("disputed")
            and not c.get("full_only")]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("names", nargs="*", help="experiments (default: every built-in one)")
    p.add_argument("--seeds", required=True, help="e.g. 21, 22-33 or 3,6,9 (>= 1)")
    p.add_argument("--record", type=Path, default=RECORD)
    args = p.parse_args()
    try:
        seeds = seed_list(args.seeds)
    except ValueError as e:
        p.error(str(e))
    names = args.names or builtin_names()
    for name in names:
        try:
            get(name)
        except ValueError as e:
            p.error(str(e))
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True, check=False).stdout.strip()
    record = io.read_json(args.record) if args.record.exists() else {}
    for seed in seeds:
        configs = {}
        for name in names:
            cfg = seeded(get(name).config(False), seed)
            if cfg is not None:
                configs[name] = cfg
            else:
                print(f"{name}: its config has no seed field; skipped", flush=True)
        with tempfile.TemporaryDirectory(prefix="seed-scan-") as tmp:
            for row in run_experiments(list(configs), tmp, configs, jobs=1, threads=1):
                failed = (expected_failures(row.get("claims") or [])
                          if row["status"] == "finished" else [["run", row.get("error"), ""]])
                record.setdefault(row["experiment"], {})[str(seed)] = {
                    "commit": commit, "failed": failed}
                print(f"seed {seed} {row['experiment']}: {row['status']}, "
                      f"{len(failed)} expected claim(s) failed", flush=True)
                io.write_json(record, args.record)  # atomic: a killed scan keeps the last


if __name__ == "__main__":
    main()
