"""Compare two ``specdyn reproduce`` output folders: are the numbers bit-identical?

    python scripts/compare_outputs.py DIR_A DIR_B [--rename OLD=NEW ...]

Every Parquet table under ``DIR_A`` is compared with the table at the same relative
path under ``DIR_B``, and the claims' measured values (and held flags) of every
``record.json``. Wall-time columns and keys (``wall_time_s`` and anything else
whose name says wall, elapsed or cpu time) are ignored; everything else must be
equal bit for bit (floats compared by their bytes, so ``-0.0 != 0.0`` and two NaNs
of the same payload are equal). ``--rename OLD=NEW`` maps a column of ``DIR_A``
renamed in ``DIR_B`` (e.g. ``ci_low=exponent_ci_low``), so that tables whose column
names changed are compared by value. Prints one line per difference and a summary;
exits 1 if anything differs (or a file is missing on one side), else 0.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

#: Columns and record keys that measure time, not results.
WALL = re.compile(r"wall|elapsed|cpu_s|cpu_time|duration", re.IGNORECASE)


def _same_float_bits(a: np.ndarray, b: np.ndarray) -> bool:
    a64 = np.ascontiguousarray(a, dtype=np.float64)
    b64 = np.ascontiguousarray(b, dtype=np.float64)
    return a64.shape == b64.shape and np.array_equal(a64.view(np.int64), b64.view(np.int64))


def _same_value(a: Any, b: Any) -> bool:
    """Bitwise for floats and float arrays (nested in lists too), ``==`` otherwise."""
    if isinstance(a, (np.ndarray, list, tuple)) or isinstance(b, (np.ndarray, list, tuple)):
        try:
            aa, bb = np.asarray(a), np.asarray(b)
        except ValueError:  # ragged
            return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b, strict=True))
        if aa.dtype == object or bb.dtype == object:
            return aa.shape == bb.shape and all(
                _same_value(x, y) for x, y in zip(aa.ravel(), bb.ravel(), strict=True))
        if aa.dtype.kind == "f" or bb.dtype.kind == "f":
            return _same_float_bits(aa, bb)
        return aa.shape == bb.shape and bool(np.array_equal(aa, bb))
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            return a is b
        return _same_float_bits(np.array([a]), np.array([b]))
    if a is None or b is None:
        return a is b
    try:
        return bool(a == b) or (a != a and b != b)  # noqa: PLR0124 - NaN-like (pd.NA)
    except TypeError:
        return a is b


def _max_abs_diff(a: pd.Series, b: pd.Series) -> str:
    try:
        x = np.asarray(a, dtype=np.float64)
        y = np.asarray(b, dtype=np.float64)
    except (TypeError, ValueError):
        return ""
    with np.errstate(invalid="ignore"):
        d = np.abs(x - y)
    d = d[np.isfinite(d)]
    return f" (max |diff| {d.max():.3g})" if d.size else ""


def compare_tables(a: pd.DataFrame, b: pd.DataFrame, rename: dict[str, str]) -> list[str]:
    """Differences between two tables (wall-time columns dropped, ``rename`` applied to ``a``)."""
    a = a.rename(columns=rename)
    a = a[[c for c in a.columns if not WALL.search(str(c))]]
    b = b[[c for c in b.columns if not WALL.search(str(c))]]
    out: list[str] = []
    if list(a.columns) != list(b.columns):
        only_a = [c for c in a.columns if c not in b.columns]
        only_b = [c for c in b.columns if c not in a.columns]
        out.append(f"columns differ: only in A {only_a}, only in B {only_b}"
                   if only_a or only_b else "column order differs")
    if len(a) != len(b):
        return [*out, f"rows differ: {len(a)} vs {len(b)}"]
    for c in [c for c in a.columns if c in b.columns]:
        x, y = a[c], b[c]
        if str(x.dtype) != str(y.dtype):
            out.append(f"column {c!r}: dtype {x.dtype} vs {y.dtype}")
        if x.dtype.kind == "f" and y.dtype.kind == "f":
            same = _same_float_bits(x.to_numpy(), y.to_numpy())
        else:
            same = all(_same_value(p, q) for p, q in zip(x.tolist(), y.tolist(), strict=True))
        if not same:
            out.append(f"column {c!r}: values differ{_max_abs_diff(x, y)}")
    return out


def _claims(path: Path) -> list[dict[str, Any]]:
    rec = json.loads(path.read_text())
    claims = rec.get("claims") or []
    return [{k: v for k, v in c.items() if not WALL.search(k)} for c in claims]


def compare_claims(a: Path, b: Path) -> list[str]:
    """Differences between the claims of two ``record.json`` files (name, measured, held...)."""
    ca, cb = _claims(a), _claims(b)
    if [c.get("name") for c in ca] != [c.get("name") for c in cb]:
        return ["claims differ in their names or order"]
    out = []
    for x, y in zip(ca, cb, strict=True):
        for key in sorted(set(x) | set(y)):
            if not _same_value(x.get(key), y.get(key)):
                out.append(f"claim {x.get('name')!r}: {key} {x.get(key)!r} vs {y.get(key)!r}")
    return out


def compare_folders(dir_a: Path, dir_b: Path, rename: dict[str, str] | None = None
                    ) -> tuple[list[str], int, int]:
    """``(differences, tables compared, record files compared)`` of two output folders."""
    rename = rename or {}
    diffs: list[str] = []
    n_tables = n_records = 0
    files_a = {p.relative_to(dir_a) for p in dir_a.rglob("*") if p.is_file()}
    files_b = {p.relative_to(dir_b) for p in dir_b.rglob("*") if p.is_file()}
    for rel in sorted(files_a | files_b):
        if rel.suffix != ".parquet" and rel.name != "record.json":
            continue
        if rel not in files_a or rel not in files_b:
            diffs.append(f"{rel}: only in {'A' if rel in files_a else 'B'}")
            continue
        if rel.suffix == ".parquet":
            n_tables += 1
            found = compare_tables(pd.read_parquet(dir_a / rel), pd.read_parquet(dir_b / rel),
                                   rename)
        else:
            n_records += 1
            found = compare_claims(dir_a / rel, dir_b / rel)
        diffs += [f"{rel}: {d}" for d in found]
    return diffs, n_tables, n_records


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dir_a", type=Path)
    p.add_argument("dir_b", type=Path)
    p.add_argument("--rename", action="append", default=[], metavar="OLD=NEW",
                   help="a column of DIR_A's tables named NEW in DIR_B's")
    args = p.parse_args(argv)
    for d in (args.dir_a, args.dir_b):
        if not d.is_dir():
            p.error(f"{d} is not a folder")
    rename = {}
    for item in args.rename:
        old, sep, new = item.partition("=")
        if not sep or not old or not new:
            p.error(f"--rename must read OLD=NEW, got {item!r}")
        rename[old] = new
    diffs, n_tables, n_records = compare_folders(args.dir_a, args.dir_b, rename)
    for d in diffs:
        print(d)
    verdict = "all identical" if not diffs else f"{len(diffs)} difference(s)"
    print(f"{n_tables} tables and the claims of {n_records} records compared "
          f"(wall-time columns ignored): {verdict}")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
