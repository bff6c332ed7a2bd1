"""``specdyn run``, ``specdyn sweep`` and ``specdyn results``: experiments from config files."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specdyn.cli import CommandError
from specdyn.cli._args import check_output, command, output_folder, positive_float, positive_int

if TYPE_CHECKING:
    import pandas as pd


def _run_cmd(args: argparse.Namespace) -> int:
    from specdyn.cli.reproduce import claim_lines
    from specdyn.runs import run_experiment
    from specdyn.runs.spec import load_run
    from specdyn.sim import DivergenceError

    name, cfg = load_run(args.config)  # every config error is raised here, before running
    target = Path(args.out) / name
    if target.exists() and not target.is_dir():
        raise ValueError(f"--out: {str(target)!r} is a file, not a folder")
    print(f"[specdyn] {name}: running {args.config} ...", flush=True)
    try:
        res = run_experiment(name, args.out, config=cfg)
    except (DivergenceError, FloatingPointError) as err:  # the record says failed, with why
        from specdyn.runs.store import failed_record_path

        raise CommandError(f"{name} diverged: {err} (record: {failed_record_path(target)})"
                           ) from None
    files = ", ".join(p.name for p in res.figures + res.tables)
    print(f"[specdyn] {name}: done -> {res.out_dir} ({files})")
    for key, value in res.summary.items():
        print(f"  {key} = {value}")
    if res.claims:  # as `reproduce` shows them: held or not, and why not
        claims = [c.to_dict() for c in res.claims]
        print(f"claims: {_claims_cell(claims)}:")
        print("\n".join(claim_lines(claims, max(40, shutil.get_terminal_size().columns))))
    return 0


def _sweep_cmd(args: argparse.Namespace) -> int:
    from specdyn.runs import store
    from specdyn.runs.spec import check_address, load_sweep
    from specdyn.runs.store import FolderBusyError
    from specdyn.runs.sweep import run_sweep

    spec = load_sweep(args.config)  # every config error is raised here, before running
    if args.address is not None:  # before the first line of output, naming the option
        try:
            check_address(args.address)
        except ValueError as err:
            raise ValueError(f"--address: {err}") from None
    out = Path(args.out) if args.out else Path("specdyn-out") / "sweeps" / Path(args.config).stem
    if not args.out:  # the default folder: checked here, before any work, not by argparse
        try:
            check_output(out, "folder")
        except ValueError as err:
            raise ValueError(f"--out: {err} (the default; pass --out FOLDER)") from None
    print(f"[specdyn] sweep of {spec.experiment}: {len(spec.points)} points -> {out}",
          flush=True)
    try:
        report = run_sweep(spec, out, executor=args.executor, workers=args.workers,
                           address=args.address, retry_failed=args.retry_failed,
                           progress=not args.no_progress, timeout=args.timeout)
    except ConnectionError as err:
        raise ValueError(str(err)) from None
    except FolderBusyError as err:
        raise ValueError(f"--out: {err}") from None
    print(f"[specdyn] {report}")
    if report.failed:
        print(f"[specdyn] failed: {', '.join(report.failed_ids)} "
              f"(tracebacks in {out / store.RUNS}; rerun with --retry-failed)")
    return 1 if report.failed else 0


def _claims_cell(claims: list[dict[str, Any]] | None) -> str:
    from specdyn.runs.claims import verdict_counts

    if not claims:
        return "-"
    return verdict_counts(claims)


def _not_held(claims: list[dict[str, Any]] | None) -> str:
    from specdyn.runs.claims import fmt_measured, mark

    bad = [c for c in claims or [] if not c.get("held")]
    return "; ".join(f"{c['name']}: {fmt_measured(c.get('measured'))} (expected {c['expected']}: "
                     f"{mark(c)})" for c in bad) or "-"


def _short(x: Any) -> str:
    if isinstance(x, float):
        return f"{x:.4g}"
    return "-" if x is None else str(x)


def results_table(path: Path) -> pd.DataFrame:
    """The runs at ``path`` with status and summary numbers.

    ``path`` is a sweep folder (a sweep's points without a record yet are listed
    as ``pending``), an experiment folder, or the output folder of ``specdyn
    reproduce`` (one row per experiment: status, wall time, the claims held and not held
    as expected, and the claims not held with their numbers; an attempt that failed
    beside a kept earlier result is listed too).
    """
    import pandas as pd

    from specdyn import io
    from specdyn.runs import store

    if not (path / store.RUNS).is_dir() and not (path / store.RECORD).is_file() \
            and path.is_dir():
        records = store.experiment_records(path)
        if not records:
            raise ValueError(f"no run records in {str(path)!r}: expected a sweep folder "
                             f"({store.RUNS}/*.json), an experiment folder ({store.RECORD}) "
                             f"or a `specdyn reproduce` folder (NAME/{store.RECORD})")
        rows = []
        for f in records:
            rec = io.read_json(f)
            claims = rec.get("claims")
            err = rec.get("error")
            rows.append({"experiment": store.experiment_name(f), "status": rec.get("status"),
                         "wall_time_s": rec.get("wall_time_s"),
                         "claims": _claims_cell(claims), "not_held": _not_held(claims),
                         "error": err.strip().splitlines()[-1] if err else None})
        return pd.DataFrame(rows)

    records = store.load_records(path)
    if (path / store.SWEEP_META).exists():
        status = store.sweep_status(path)
        pending = status[status["status"] == "pending"]
        pending = pending[~pending["run_id"].isin(records.get("run_id", []))]
        records = pd.concat([records, pending], ignore_index=True)
    return records.drop(columns=["config"], errors="ignore")


def _print_nested(value: Any, indent: int = 2) -> None:
    """``key = value`` lines, one level of indentation per nested dict; long lists cut."""
    pad = " " * indent
    for key, x in value.items():
        if isinstance(x, dict):
            print(f"{pad}{key}:")
            _print_nested(x, indent + 2)
            continue
        if isinstance(x, float):
            text = f"{x:.6g}"
        elif isinstance(x, list) and len(x) > 8:
            text = "[" + ", ".join(_short(y) for y in x[:8]) + f", ... ({len(x)} values)]"
        elif isinstance(x, list):
            text = "[" + ", ".join(_short(y) for y in x) + "]"
        else:
            text = str(x)
        print(f"{pad}{key} = {text}")


def _print_record(path: Path) -> None:
    """One experiment folder, readably: status, config, summary (nested), claims."""
    from specdyn import io
    from specdyn.runs import store
    from specdyn.runs.claims import fmt_measured, mark

    rec = io.read_json(path / store.RECORD)
    print(f"{path}: {rec.get('status')} in {_short(rec.get('wall_time_s'))} s "
          f"(specdyn {rec.get('specdyn_version', '?')}, host {rec.get('host', '?')})")
    if rec.get("error"):
        print(f"  error: {rec['error'].strip().splitlines()[-1]}")
    for section in ("config", "summary"):
        if rec.get(section):
            print(f"{section}:")
            _print_nested(rec[section])
    if rec.get("claims"):
        print("claims:")
        for c in rec["claims"]:
            print(f"  {c['name']} [{c.get('source') or '?'}]: measured "
                  f"{fmt_measured(c.get('measured'))}, expected {c['expected']}: {mark(c)}")
    files = (rec.get("figures") or []) + (rec.get("tables") or [])
    if files:
        print(f"files: {', '.join(files)}")


def _results_cmd(args: argparse.Namespace) -> int:
    path = Path(args.path)
    if not path.exists():
        raise ValueError(f"PATH: {str(path)!r} does not exist")
    import pandas as pd

    from specdyn.runs import store

    if store.is_experiment(path):
        try:
            _print_record(path)
        except (ValueError, OSError, KeyError, TypeError, AttributeError) as err:
            raise ValueError(f"PATH: {_unreadable(path) or err}") from None
        return 0
    try:
        table = results_table(path)
    except (ValueError, OSError, KeyError, TypeError, AttributeError) as err:
        raise ValueError(f"PATH: {_unreadable(path) or err}") from None
    if table.empty:
        print(f"no runs in {path}")
        return 0
    counts = table["status"].value_counts()
    order = ["finished", "failed", "pending"] + sorted(set(counts.index) - {
        "finished", "failed", "pending"})
    print(f"{path}: {len(table)} runs (" +
          ", ".join(f"{counts[s]} {s}" for s in order if s in counts) + ")")
    if "error" in table:
        table["error"] = table["error"].map(
            lambda e: e if not isinstance(e, str) or len(e) <= 60 else e[:57] + "...")
    for col in table.columns:
        if table[col].dtype == object:
            table[col] = table[col].map(lambda x: "-" if x is None else x)
    with pd.option_context("display.max_rows", args.max_rows, "display.width", 160,
                           "display.max_columns", 40, "display.max_colwidth", 70,
                           "display.float_format", "{:.6g}".format):
        print(table.to_string(index=False, na_rep="-", max_rows=args.max_rows,
                              max_colwidth=70))
    return 0


def _unreadable(path: Path) -> str | None:
    """The first record or sweep file under ``path`` that is not a JSON object, and why."""
    from specdyn.runs import store

    files = [path] if path.is_file() else store.record_files(path)
    for f in files:
        if not f.is_file():
            continue
        try:
            data = json.loads(f.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            return f"{str(f)!r} cannot be read: {' '.join(str(err).split())}"
        if not isinstance(data, dict):
            return f"{str(f)!r} is not a run record (a JSON object), got {type(data).__name__}"
    return None


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``run``, ``sweep`` and ``results``."""
    p = command(sub, "run", _run_cmd, help="run one experiment from a TOML config file",
                description="Run the experiment named by `experiment = \"NAME\"` in "
                            "CONFIG.toml with the config fields given there (others keep "
                            "their defaults). `specdyn reproduce NAME --print-config` prints "
                            "a config to start from.")
    p.add_argument("config", metavar="CONFIG.toml",
                   help="TOML file naming the experiment (experiment = \"NAME\") and the config "
                        "fields to change")
    p.add_argument("--out", default="specdyn-out", type=output_folder,
                   help="output folder (default ./specdyn-out)")

    p = command(sub, "sweep", _sweep_cmd,
                help="run an experiment over a grid of settings and seeds",
                description="Run every point of the [sweep] in CONFIG.toml (axes over config "
                            "fields, seeds). Finished points in --out are skipped, so an "
                            "interrupted sweep resumes where it stopped. Results: one Parquet "
                            "file per point in OUT/data, one JSON record per point in OUT/runs.")
    p.add_argument("config", metavar="CONFIG.toml",
                   help="TOML file: experiment = \"NAME\", fixed config fields, and a [sweep] "
                        "table (seeds = N, [sweep.axes] field = {log = [LO, HI], num = N} or a "
                        "list)")
    p.add_argument("--executor", choices=["local", "dask", "inline"], default=None,
                   help="local process pool (default), Dask distributed, or inline "
                        "(one point after another in this process)")
    p.add_argument("--address", default=None, metavar="tcp://HOST:PORT",
                   help="join the running Dask scheduler at this address (implies dask)")
    p.add_argument("--workers", type=positive_int, default=None,
                   help="worker processes, >= 1 (local pool or Dask LocalCluster; default: "
                        "the CPUs, at most one per point)")
    p.add_argument("--retry-failed", action="store_true", help="run failed points again")
    p.add_argument("--out", default=None, type=output_folder,
                   help="sweep folder (default ./specdyn-out/sweeps/<config file name>)")
    p.add_argument("--timeout", type=positive_float, default=5.0,
                   help="seconds to wait for a Dask scheduler, > 0 (default 5)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")

    p = command(sub, "results", _results_cmd,
                help="list the runs in a sweep, experiment or reproduce folder",
                description="List runs with their status, setting, wall time and summary "
                            "numbers; on a `specdyn reproduce` folder one row per experiment "
                            "with its claims; on one experiment folder its config, summary "
                            "and claims. In Python: specdyn.runs.load(PATH) gives the data "
                            "table, specdyn.runs.load_records(PATH) this list.")
    p.add_argument("path", metavar="PATH",
                   help="a sweep folder, a `specdyn reproduce` output folder or one experiment "
                        "folder")
    p.add_argument("--max-rows", type=positive_int, default=200,
                   help="rows to print, an integer >= 1 (default 200)")
