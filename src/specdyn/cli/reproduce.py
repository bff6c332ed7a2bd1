"""``specdyn reproduce``: run named experiments (paper figures and related works).

What a person reads (about 80 lines for every quick experiment): one line per
experiment as it finishes (``[k/n] name  wall  19 held, 4 not held as expected``; on a
terminal the running one is named until then, and its own progress bars show below), then the
claims that FAILED and the experiments that crashed, in full; the claims not held
as expected (disputed, or not shown at the quick size), one line each with its
reason, each distinct reason once; the count of sanity checks; the total.
``--verbose`` prints every claim with its measured and expected values instead,
and every sanity check. The console prints no project history: a claim revised
after a run is marked ``(revised)``, its revision is in docs/claims.md and the
record. The full table is written as ``OUT/claims.parquet`` and
``OUT/claims.json``, before the summary is printed. Exit status 1 when a claim
expected to hold failed or an experiment crashed (:data:`EXIT_HELP`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import textwrap
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specdyn._experiment_index import builtin_names
from specdyn.cli._args import command, output_folder, positive_int

if TYPE_CHECKING:
    import pandas as pd


def default_threads(*, full: bool = False) -> int:
    """Threads for torch and BLAS when ``--threads`` is not given.

    Quick sizes: 1. Their matrices are small, and under the ``OMP_WAIT_POLICY=PASSIVE``
    that :func:`~specdyn._threads.limit_threads` sets (idle threads sleep rather than spin
    against other jobs) a second thread costs more in waking than it saves: on an idle
    2-core machine the whole quick run took 3:33 at two threads and 2:10 at one (fig4:
    22.2 s at two, 10.8 s at two with ``ACTIVE``, 11.5 s at one; BENCHMARKS.md,
    "`specdyn reproduce`").
    ``--full``: the cores the current load leaves free (``os.cpu_count()`` minus the
    1-minute load average, rounded), at least 1: real-data's large products gained from a
    second core (about 56 min against more than 82, rough), simulate's did not (82 s
    against 73); more threads than free cores make OpenMP and BLAS workers spin against
    each other on a shared machine (``benchmarks/reproduce.py``).
    """
    if not full:
        return 1
    cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except OSError:  # pragma: no cover - not on every platform
        load = 0.0
    return max(1, min(cores, round(cores - load)))


def default_jobs(*, full: bool = False) -> int:
    """Experiments run at once when ``--jobs`` is not given: at quick sizes one per core
    (each a process of one thread, so no thread pool spins against another, and on a busy
    machine they share the cores with the other jobs rather than wait behind them; the
    numbers do not depend on it); with ``--full`` 1 (its experiments take the free cores
    as threads instead, :func:`default_threads`)."""
    return 1 if full else os.cpu_count() or 1


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
            "held", "verdict", "full_only", "disputed", "revised", "revised_how", "aspect",
            "note"]
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
                        "revised_how": None if c is None else c.get("revised_how", ""),
                        "aspect": None if c is None else c.get("aspect", ""),
                        "note": None if c is None else c.get("note", "")})
    return pd.DataFrame(out, columns=cols)


#: What the exit status means (``reproduce --help``, the README).
EXIT_HELP = ("Exit status: 0 when every claim expected to hold held (a claim marked disputed, "
             "or quick size at the quick size, may fail: its reason is printed); 1 when a "
             "claim expected to hold FAILED or an experiment crashed; 2 on bad input")


def _wrap(text: str, width: int, first: str, rest: str) -> list[str]:
    return textwrap.wrap(text, width, initial_indent=first, subsequent_indent=rest,
                         break_on_hyphens=False) or [first.rstrip()]


#: What a reason cut for width ends with: where to read it whole.
CUT = "... (whole: --verbose)"


def _clip(text: str, width: int, cut: str = "...") -> str:
    """``text`` on one line of at most ``width`` characters (its indent kept, its other
    white space runs made one space), ending with ``cut`` where it was cut."""
    indent = text[:len(text) - len(text.lstrip(" "))]
    text = indent + " ".join(text.split())
    return text if len(text) <= width else text[:max(width - len(cut), 0)].rstrip() + cut


def _claim_text(c: dict[str, Any]) -> str:
    from specdyn.runs.claims import fmt_measured

    return (f"{c['name']}: measured {fmt_measured(c['measured'])}, expected "
            f"{c['expected']} [{c.get('source') or '?'}]")


def claim_lines(claims: list[dict[str, Any]], width: int, *, full: bool = False) -> list[str]:
    """Every claim on its own wrapped lines, no line longer than ``width``.

    Its mark (``(revised)`` after a claim changed after a run; the revision itself is
    project history, kept in docs/claims.md and the record, never printed), name,
    measured and expected values and source; under a claim not held, its reason
    (:func:`~specdyn.runs.claims.reason`).
    """
    from specdyn.runs.claims import mark, reason

    marks = [mark(c, full=full) for c in claims]
    mw = max([len(m) for m in marks] + [4])
    # the mark column, when it leaves room for the text; else a hanging indent
    indent = 2 + mw + 2 if 2 + mw + 2 <= width // 3 else 6
    lines: list[str] = []
    for c, m in zip(claims, marks, strict=True):
        head = f"  {m:<{mw}}  " if indent > 6 else f"  {m}: "
        lines += _wrap(_claim_text(c), width, head, " " * indent)
        why = reason(c, full=full)
        if why:
            lines += _wrap(why, width, " " * indent, " " * (indent + 2))
    return lines


def totals(rows: list[dict[str, Any]], *, full: bool = False) -> dict[str, int]:
    """Claims per verdict (:data:`~specdyn.runs.claims.VERDICTS`), the claims revised after
    their number was seen (``revised``) and which way (``looser``, ``tighter``,
    ``restated``; sanity checks left out of these), and crashed experiments of a
    reproduce run."""
    from specdyn.runs.claims import REVISED_HOW, VERDICTS, verdict

    claims = [c for r in rows for c in r.get("claims") or []]
    out = {v: sum(verdict(c, full=full) == v for c in claims)
           for v in VERDICTS}
    revised = [c for c in claims if c.get("revised") and not c.get("sanity")]
    out["revised"] = len(revised)
    for how in REVISED_HOW:
        out[how] = sum(c.get("revised_how") == how for c in revised)
    out["crashed"] = sum(r["status"] != "finished" for r in rows)
    return out


def total_line(rows: list[dict[str, Any]], *, full: bool = False,
               revised: bool = True) -> str:
    """``claims: H held; N not held as expected (D disputed, Q quick size); F FAILED``, the
    claims revised after their number was seen and which way (with ``revised``) and the
    experiments that crashed (sanity checks are counted on their own line,
    :func:`sanity_lines`)."""
    from specdyn.runs.claims import REVISED_HOW

    t = totals(rows, full=full)
    text = (f"claims: {t['held']} held; {t['disputed'] + t['quick size']} not held as "
            f"expected ({t['disputed']} disputed, {t['quick size']} quick size); "
            f"{t['FAILED']} FAILED")
    if t["revised"] and revised:
        ways = ", ".join(f"{t[how]} {how}" for how in REVISED_HOW if t[how])
        text += (f"; {t['revised']} revised after their number was seen"
                 + (f" ({ways})" if ways else ""))
    if t["crashed"]:
        text += f"; {t['crashed']} experiment(s) crashed"
    return text


def _claims_of(rows: list[dict[str, Any]], *, sanity: bool) -> list[tuple[str, dict[str, Any]]]:
    from specdyn.runs.claims import is_sanity

    return [(r["experiment"], c) for r in rows for c in r.get("claims") or []
            if is_sanity(c) == sanity]


def failed_lines(rows: list[dict[str, Any]], width: int, *, full: bool = False) -> list[str]:
    """Every claim (or sanity check) that FAILED, in full: name, measured, expected,
    source and why it was expected to hold, wrapped to ``width``; and every experiment
    that crashed. Empty when none."""
    from specdyn.runs.claims import reason, verdict

    bad = [(r["experiment"], c) for r in rows for c in r.get("claims") or []
           if verdict(c, full=full) == "FAILED"]
    crashed = [r["experiment"] for r in rows if r["status"] != "finished"]
    lines: list[str] = []
    if bad:
        lines += [f"FAILED: {len(bad)} claim(s) expected to hold did not"]
        for exp, c in bad:
            lines += _wrap(f"{exp}: {_claim_text(c)}", width, "  ", "      ")
            lines += _wrap(reason(c, full=full), width, "      ", "        ")
    if crashed:
        lines += _wrap("crashed (no claims checked): " + ", ".join(crashed), width, "", "  ")
    return lines


def not_held_lines(rows: list[dict[str, Any]], width: int, *,
                   full: bool = False) -> list[str]:
    """The claims not held as expected (disputed, or quick size at the quick size): one
    line each (experiment and name), and under them their reason on one line, each
    distinct reason once (claims that share it are listed together above it). Lines are
    cut to ``width``, a reason with :data:`CUT` (``--verbose`` and ``claims.json`` have it
    whole)."""
    from specdyn.runs.claims import reason, verdict

    expected = [(e, c) for e, c in _claims_of(rows, sanity=False)
                if verdict(c, full=full) in ("disputed", "quick size")]
    if not expected:
        return []
    groups: dict[str, list[str]] = {}
    for exp, c in expected:
        tag = " (revised)" if c.get("revised") else ""
        groups.setdefault(reason(c, full=full), []).append(f"{exp}: {c['name']}{tag}")
    lines = [_clip(f"Not held, as expected ({len(expected)}; in full with --verbose "
                   "and in claims.json):", width)]
    for why, names in groups.items():
        lines += [_clip(f"  {n}", width) for n in names]
        lines.append(_clip(f"      {why}", width, CUT))
    return lines


def sanity_lines(rows: list[dict[str, Any]], width: int, *, full: bool = False,
                 verbose: bool = False) -> list[str]:
    """The sanity checks (:attr:`~specdyn.runs.claims.Claim.sanity`): their count, and
    with ``verbose`` each one (those that failed are FAILED, listed with the failures)."""
    from specdyn.runs.claims import verdict

    checks = _claims_of(rows, sanity=True)
    if not checks:
        return []
    ok = sum(verdict(c, full=full) == "sanity" for _, c in checks)
    failed = len(checks) - ok
    line = (f"sanity checks (not counted as claims): {ok} passed"
            + (f", {failed} FAILED" if failed else ""))
    lines = _wrap(line + ("" if verbose else " (listed with --verbose)"), width, "", "  ")
    if verbose:
        by_exp: dict[str, list[dict[str, Any]]] = {}
        for exp, c in checks:
            by_exp.setdefault(exp, []).append(c)
        for exp, cs in by_exp.items():
            lines += [f"  {exp}:"] + [f"  {ln}" for ln in claim_lines(cs, width - 2, full=full)]
    return lines


def progress_line(i: int, n: int, row: dict[str, Any], *, full: bool = False) -> str:
    """The one line of an experiment that finished or crashed: ``[i/n] name  wall  claims``
    (``19 held, 4 not held as expected``: :func:`~specdyn.runs.claims.verdict_counts`)."""
    from specdyn.runs.claims import verdict_counts

    head = f"[{i:>{len(str(n))}}/{n}] {row['experiment']:<21} {_fmt_time(row['wall_time_s']):>6}"
    if row["status"] != "finished":
        return f"{head}  FAILED: {row.get('error', 'crashed')}"
    claims = row.get("claims") or []
    if not claims:
        return f"{head}  no claims declared"
    return f"{head}  {verdict_counts(claims, full=full)}"


def format_summary(rows: list[dict[str, Any]], *, full: bool = False,
                   width: int | None = None, verbose: bool = False) -> str:
    """What ``specdyn reproduce`` prints after the experiments, ``width`` columns at most
    (default: the terminal's, or 100 where the output is not a terminal).

    By default: the claims that FAILED and the experiments that crashed, in full
    (:func:`failed_lines`); the claims not held as expected with their reasons, one line
    each (:func:`not_held_lines`); the count of sanity checks (:func:`sanity_lines`);
    the total (:func:`total_line`). With ``verbose``: a table of the experiments and
    every claim of each (:func:`claim_lines`) instead of the one-line list, and every
    sanity check.
    """
    from specdyn.runs.claims import is_sanity, verdict_counts

    width = max(40, width or shutil.get_terminal_size((100, 24)).columns)
    lines: list[str] = []
    if verbose:
        lines += [f"{'experiment':<21} {'status':<8} {'wall':>7}  claims"]
        for r in rows:
            claims = r.get("claims") or []
            crashed = "(crashed: no claims checked)"
            lines.append(f"{r['experiment']:<21} {r['status']:<8} "
                         f"{_fmt_time(r['wall_time_s']):>7}  "
                         + (verdict_counts(claims, full=full) if claims else
                            crashed if r["status"] != "finished" else "none declared"))
        for r in rows:
            real = [c for c in r.get("claims") or [] if not is_sanity(c)]
            if real:
                lines += ["", f"{r['experiment']}:"] + claim_lines(real, width, full=full)
        lines.append("")
    else:
        fails = failed_lines(rows, width, full=full)
        expected = not_held_lines(rows, width, full=full)
        for block in (fails, expected):
            if block:
                lines += block + [""]
    sanity = sanity_lines(rows, width, full=full, verbose=verbose)
    # one line at 80 columns: the count of revised claims only with --verbose
    lines += _wrap(total_line(rows, full=full, revised=verbose), width, "", "  ") + sanity
    return "\n".join(lines)


def header_line(n: int, out: Path, *, full: bool, threads: int, jobs: int = 1) -> str:
    """The first line: how many experiments, where, at which size, on how many threads
    (and, with ``jobs > 1``, how many at once)."""
    at_once = f", {jobs} at once" if jobs > 1 else ""
    return (f"[specdyn] {n} experiment(s) into {out}/ "
            f"({'--full' if full else 'quick'} sizes, {threads} thread(s){at_once})")


def closing_text(rows: list[dict[str, Any]], out: Path, *, wall: float, full: bool = False,
                 verbose: bool = False, width: int | None = None) -> str:
    """Everything printed after the experiments' lines: the summary
    (:func:`format_summary`), the wall time and where every claim is, and why the exit
    status is 1."""
    t = totals(rows, full=full)
    lines = ["", format_summary(rows, full=full, verbose=verbose, width=width),
             f"[specdyn] {len(rows)} experiment(s) in {_fmt_time(wall)}; every claim: "
             f"--verbose, or {out / 'claims.parquet'} (and claims.json)"]
    if t["FAILED"] or t["crashed"]:
        lines.append(f"[specdyn] exit status 1: {t['FAILED']} claim(s) expected to hold "
                     f"FAILED, {t['crashed']} experiment(s) crashed")
    return "\n".join(lines)


def _reproduce_cmd(args: argparse.Namespace) -> int:
    from specdyn import io, runs
    from specdyn._cancel import finish
    from specdyn._threads import limit_threads
    from specdyn.runs import config as cfgmod

    names = list(dict.fromkeys(args.names or runs.names()))  # each once: one folder each
    unknown = [n for n in names if n not in runs.names()]
    if unknown:  # fail on a bad name before any work starts
        from specdyn._validate import did_you_mean

        raise ValueError(f"unknown experiment {unknown[0]!r}"
                         f"{did_you_mean(unknown[0], runs.names())}; valid names: "
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
    threads = args.threads or default_threads(full=args.full)
    jobs = min(args.jobs or default_jobs(full=args.full), len(names))
    limit_threads(threads)
    out = Path(args.out)
    n = len(names)
    # on a terminal the running experiment(s) are named on a line that the next finished
    # line (or an experiment's own progress bar) overwrites; a log gets the finished lines
    live = sys.stdout.isatty()
    print(header_line(n, out, full=args.full, threads=threads, jobs=jobs), flush=True)
    t0 = time.perf_counter()
    rows: list[dict[str, Any]] = []
    pending = list(names)

    def running() -> None:
        if live:
            now = ", ".join(pending[:jobs])
            print(f"[{len(rows) + 1}/{n}] {now} ... (elapsed "
                  f"{_fmt_time(time.perf_counter() - t0)})", end="", flush=True)

    running()
    for row in runs.run_experiments(names, out, configs, jobs=jobs, threads=threads):
        rows.append(row)
        pending.remove(row["experiment"])
        print(("\r\x1b[K" if live else "") + progress_line(len(rows), n, row, full=args.full),
              flush=True)
        if row.get("output", "").strip():  # a worker's prints and warnings, under its line
            print(textwrap.indent(row["output"].rstrip(), "    "), flush=True)
        if args.verbose and row["status"] == "finished":
            print(f"    -> {row['out_dir']} ({', '.join(row['files'])})", flush=True)
        if pending:
            running()
    wall = time.perf_counter() - t0
    rows.sort(key=lambda r: names.index(r["experiment"]))  # the summary in the given order
    df = claims_frame(rows, full=args.full)
    io.write_table(df, out / "claims.parquet")
    io.write_json({"threads": threads, "full": bool(args.full), "wall_time_s": wall,
                   "experiments": [{k: v for k, v in r.items() if k not in runs.ROW_EXTRAS}
                                   for r in rows]},
                  out / "claims.json")
    finish()  # everything is written: a signal from here on no longer cancels the run
    print(closing_text(rows, out, wall=wall, full=args.full, verbose=args.verbose),
          flush=True)
    t = totals(rows, full=args.full)
    return 1 if t["FAILED"] or t["crashed"] else 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``reproduce``."""
    p = command(
        sub, "reproduce", _reproduce_cmd,
        help="run named experiments (all by default) into an output folder",
        description="Reproduce paper figures and related-work experiments. Each writes "
                    "NAME.png, NAME.pdf, NAME.parquet and a JSON record of its settings and "
                    "claims; the run ends with the claims not held and why, and a total "
                    "(every claim with --verbose, and in OUT/claims.parquet).",
    )
    p.add_argument("names", nargs="*", metavar="NAME",
                   help="experiments to run (default: all). Built in: "
                        + ", ".join(builtin_names()) + "; and those of installed plugins")
    p.add_argument("--full", action="store_true", help="paper-sized runs (slow; GPU advised)")
    p.add_argument("--out", default="specdyn-out", type=output_folder,
                   help="output folder (default ./specdyn-out)")
    p.add_argument("--config", default=None, help="TOML file with the experiment's config")
    cores = p.add_argument_group("cores (the numbers do not depend on either)")
    cores.add_argument("--threads", type=positive_int,  # None: the defaults below
                       help="torch and BLAS threads, >= 1 (default: 1 at quick sizes; with "
                            "--full the cores the load leaves free)")
    cores.add_argument("--jobs", type=positive_int,
                       help="experiments run at once, each in its own process, >= 1 "
                            "(default: at quick sizes one per core, with --full 1)")
    p.add_argument("--print-config", action="store_true",
                   help="print the config (TOML) that would be used, and exit")
    p.add_argument("--verbose", action="store_true",
                   help="print every claim (held or not) with its measured and expected "
                        "values, every sanity check, and each experiment's files")
    p.epilog = ("One line per experiment, then the claims that FAILED (in full) and those "
                "not held as expected (one line each, with the reason), then a total; "
                "every claim with --verbose and in OUT/claims.parquet. " + EXIT_HELP + ".")
