"""``specdyn reproduce``: run named experiments (paper figures and related works).

Prints an overall ``[k/n]`` counter with the elapsed time, each experiment's own
progress bars (stderr), and ends with a summary table: experiment, status, wall
time, then every claim held / not held with the measured number and, under each
one not held, why (disputed, quick size, or FAILED), wrapped to the terminal
width, and a total line. The full table is written as ``OUT/claims.parquet`` and
``OUT/claims.json``. Exit status 1 when a claim expected to hold failed or an
experiment crashed (:data:`EXIT_HELP`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import textwrap
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specdyn.cli._args import command, output_folder, positive_int
from specdyn.cli._experiment_names import BUILTIN as BUILTIN_NAMES

if TYPE_CHECKING:
    import pandas as pd


def default_threads() -> int:
    """Threads for torch and BLAS: the cores left free by the current load, at least 1.

    ``os.cpu_count()`` minus the 1-minute load average, rounded. On a shared
    machine more threads than free cores make OpenMP and BLAS workers spin
    against each other (measured in ``benchmarks/reproduce.py``).
    """
    cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except OSError:  # pragma: no cover - not on every platform
        load = 0.0
    return max(1, min(cores, round(cores - load)))


def _fmt_time(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    return f"{m}:{s:02d}" if m < 60 else f"{m // 60}:{m % 60:02d}:{s:02d}"


def claims_frame(rows: list[dict[str, Any]], *, full: bool = False) -> pd.DataFrame:
    """One row per claim (or per experiment without claims) of a reproduce run.

    ``verdict`` is :func:`~specdyn.runs.claims.verdict` at the run's size (``full``).
    """
    import pandas as pd

    from specdyn.runs.claims import fmt_measured, verdict

    cols = ["experiment", "status", "wall_time_s", "claim", "source", "expected", "measured",
            "held", "verdict", "full_only", "disputed", "revised", "note"]
    out = []
    for r in rows:
        claims = r.get("claims") or [None]
        for c in claims:
            out.append({"experiment": r["experiment"], "status": r["status"],
                        "wall_time_s": r["wall_time_s"],
                        "claim": None if c is None else c["name"],
                        "source": None if c is None else c.get("source", ""),
                        "expected": None if c is None else c["expected"],
                        "measured": None if c is None else fmt_measured(c["measured"]),
                        "held": None if c is None else bool(c["held"]),
                        "verdict": None if c is None else verdict(c, full=full),
                        "full_only": None if c is None else bool(c.get("full_only", False)),
                        "disputed": None if c is None else c.get("disputed", ""),
                        "revised": None if c is None else c.get("revised", ""),
                        "note": None if c is None else c.get("note", "")})
    return pd.DataFrame(out, columns=cols)


#: What the exit status means (``reproduce --help``, the README).
EXIT_HELP = ("Exit status: 0 when every claim expected to hold held (a claim marked disputed, "
             "or quick size at the quick size, may fail: its reason is printed); 1 when a "
             "claim expected to hold FAILED or an experiment crashed; 2 on bad input")


def _wrap(text: str, width: int, first: str, rest: str) -> list[str]:
    return textwrap.wrap(text, width, initial_indent=first, subsequent_indent=rest,
                         break_on_hyphens=False) or [first.rstrip()]


def claim_lines(claims: list[dict[str, Any]], width: int, *, full: bool = False) -> list[str]:
    """Every claim on its own wrapped lines, no line longer than ``width``.

    Its mark, name, measured and expected values and source; under a claim not
    held, its reason (:func:`~specdyn.runs.claims.reason`), and under a revised
    claim, the revision.
    """
    from specdyn.runs.claims import fmt_measured, mark, reason

    marks = [mark(c, full=full) for c in claims]
    mw = max([len(m) for m in marks] + [4])
    # the mark column, when it leaves room for the text; else a hanging indent
    indent = 2 + mw + 2 if 2 + mw + 2 <= width // 3 else 6
    lines: list[str] = []
    for c, m in zip(claims, marks, strict=True):
        head = f"  {m:<{mw}}  " if indent > 6 else f"  {m}: "
        text = (f"{c['name']}: measured {fmt_measured(c['measured'])}, expected "
                f"{c['expected']} [{c.get('source') or '?'}]")
        lines += _wrap(text, width, head, " " * indent)
        for extra in (reason(c, full=full),
                      f"revised: {c['revised']}" if c.get("revised") else ""):
            if extra:
                lines += _wrap(extra, width, " " * indent, " " * (indent + 2))
    return lines


def totals(rows: list[dict[str, Any]], *, full: bool = False) -> dict[str, int]:
    """Claims per verdict (:data:`~specdyn.runs.claims.VERDICTS`), revised ones and crashed
    experiments of a reproduce run."""
    from specdyn.runs.claims import VERDICTS, verdict

    claims = [c for r in rows for c in r.get("claims") or []]
    out = {v: sum(verdict(c, full=full) == v for c in claims)
           for v in VERDICTS}
    out["revised"] = sum(bool(c.get("revised")) for c in claims)
    out["crashed"] = sum(r["status"] != "finished" for r in rows)
    return out


def total_line(rows: list[dict[str, Any]], *, full: bool = False) -> str:
    """``claims: H held; N not held as expected (D disputed, Q quick size); F FAILED`` and
    the experiments that crashed."""
    t = totals(rows, full=full)
    text = (f"claims: {t['held']} held; {t['disputed'] + t['quick size']} not held as "
            f"expected ({t['disputed']} disputed, {t['quick size']} quick size); "
            f"{t['FAILED']} FAILED")
    if t["sanity"]:
        text += f"; {t['sanity']} sanity check(s) passed (not counted as claims)"
    if t["revised"]:
        text += f"; {t['revised']} revised after a run"
    if t["crashed"]:
        text += f"; {t['crashed']} experiment(s) crashed"
    return text


def format_summary(rows: list[dict[str, Any]], *, full: bool = False,
                   width: int | None = None) -> str:
    """The closing table: experiment, status, wall time, claims held, then every claim
    (:func:`claim_lines`) and the total (:func:`total_line`), ``width`` columns at most
    (default: the terminal's)."""
    from specdyn.runs.claims import held_count

    width = max(40, width or shutil.get_terminal_size().columns)
    lines = [f"{'experiment':<22} {'status':<8} {'wall':>7}  claims held"]
    for r in rows:
        claims = r.get("claims") or []
        held, n_claims = held_count(claims)
        crashed = "(crashed: no claims checked)"
        lines.append(f"{r['experiment']:<22} {r['status']:<8} {_fmt_time(r['wall_time_s']):>7}  "
                     + (f"{held}/{n_claims}" if claims else
                        crashed if r["status"] != "finished" else "none declared"))
    for r in rows:
        if r.get("claims"):
            lines += ["", f"{r['experiment']}:"] + claim_lines(r["claims"], width, full=full)
    lines += [""] + _wrap(total_line(rows, full=full), width, "", "  ")
    return "\n".join(lines)


def _reproduce_cmd(args: argparse.Namespace) -> int:
    from specdyn import io, runs
    from specdyn._cancel import raise_if_cancelled
    from specdyn._threads import limit_threads
    from specdyn.runs import config as cfgmod
    from specdyn.runs.claims import held_count
    from specdyn.runs.store import failed_record_path

    names = args.names or runs.names()
    unknown = [n for n in names if n not in runs.names()]
    if unknown:  # fail on a bad name before any work starts
        raise ValueError(f"unknown experiment {unknown[0]!r}; valid names: "
                         f"{', '.join(runs.names())}")
    if args.config and len(names) != 1:
        raise ValueError("--config applies to exactly one experiment name")
    if args.print_config:
        for name in names:
            exp = runs.get(name)
            cfg = (cfgmod.load_config(args.config, exp.config_cls, experiment=name) if args.config
                   else exp.config(args.full))
            print(f"# specdyn reproduce {name}{' --full' if args.full else ''}")
            print(cfgmod.config_to_toml(cfg, experiment=name))
        return 0
    configs = {}
    for name in names:
        exp = runs.get(name)
        configs[name] = (cfgmod.load_config(args.config, exp.config_cls, experiment=name)
                         if args.config
                         else exp.config(args.full))
    threads = args.threads or default_threads()
    limit_threads(threads)
    out = Path(args.out)
    n = len(names)
    print(f"[specdyn] {n} experiment(s) into {out}/ "
          f"({'--full' if args.full else 'quick'} sizes, {threads} thread(s))", flush=True)
    t0 = time.perf_counter()
    rows: list[dict[str, Any]] = []
    for i, name in enumerate(names, 1):
        raise_if_cancelled()  # a cancel that a callback swallowed during the last experiment
        start = time.perf_counter()
        print(f"[{i}/{n}] {name} ... (elapsed {_fmt_time(start - t0)})", flush=True)
        try:
            res = runs.run_experiment(name, out, config=configs[name])
        except Exception as err:  # keep going: one failed figure must not lose the others
            raise_if_cancelled()  # ... but a cancel a library reported as an error stops all
            wall = time.perf_counter() - start
            rows.append({"experiment": name, "status": "failed", "wall_time_s": wall,
                         "claims": []})
            record = failed_record_path(out / name)  # a busy folder records nothing
            print(f"[{i}/{n}] {name}: FAILED after {_fmt_time(wall)} "
                  f"({type(err).__name__}: {err})"
                  + (f"; traceback in {record}" if record.exists() else ""), flush=True)
            continue
        wall = time.perf_counter() - start
        claims = [c.to_dict() for c in res.claims]
        rows.append({"experiment": name, "status": "finished", "wall_time_s": wall,
                     "claims": claims})
        held, n_claims = held_count(claims)
        files = ", ".join(p.name for p in res.figures + res.tables)
        print(f"[{i}/{n}] {name}: done in {_fmt_time(wall)}, claims held {held}/{n_claims}"
              f" -> {res.out_dir} ({files})", flush=True)
    print(f"\n[specdyn] finished {n} experiment(s) in {_fmt_time(time.perf_counter() - t0)}"
          f" ({threads} thread(s))\n", flush=True)
    print(format_summary(rows, full=args.full), flush=True)
    df = claims_frame(rows, full=args.full)
    io.write_table(df, out / "claims.parquet")
    io.write_json({"threads": threads, "full": bool(args.full),
                   "wall_time_s": time.perf_counter() - t0, "experiments": rows},
                  out / "claims.json")
    print(f"\n[specdyn] claims table: {out / 'claims.parquet'} (and claims.json)", flush=True)
    t = totals(rows, full=args.full)
    if t["FAILED"] or t["crashed"]:
        print(f"[specdyn] exit status 1: {t['FAILED']} claim(s) expected to hold FAILED, "
              f"{t['crashed']} experiment(s) crashed", flush=True)
        return 1
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``reproduce``."""
    p = command(
        sub, "reproduce", _reproduce_cmd,
        help="run named experiments (all by default) into an output folder",
        description="Reproduce paper figures and related-work experiments. Each writes "
                    "NAME.png, NAME.pdf, NAME.parquet and a JSON record of its settings and "
                    "claims; the run ends with a table of every claim, held or not.",
    )
    p.add_argument("names", nargs="*", metavar="NAME",
                   help="experiments to run (default: all). Built in: "
                        + ", ".join(BUILTIN_NAMES) + "; and those of installed plugins")
    p.add_argument("--full", action="store_true", help="paper-sized runs (slow; GPU advised)")
    p.add_argument("--out", default="specdyn-out", type=output_folder,
                   help="output folder (default ./specdyn-out)")
    p.add_argument("--config", default=None, help="TOML file with the experiment's config")
    p.add_argument("--threads", type=positive_int, default=None,
                   help="torch and BLAS threads (default: the cores the load leaves free, "
                        ">= 1)")
    p.add_argument("--print-config", action="store_true",
                   help="print the config (TOML) that would be used, and exit")
    p.epilog = ("Each claim not held is printed with its reason, then a total. "
                + EXIT_HELP + ".")
