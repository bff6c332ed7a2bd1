"""``specdyn reproduce``: run named experiments (paper figures and related works)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from specdyn import experiments
from specdyn.cli._args import output_folder
from specdyn.experiments import config as cfgmod
from specdyn.experiments.store import failed_record_path


def _reproduce_cmd(args: argparse.Namespace) -> int:
    names = args.names or experiments.names()
    for name in names:  # fail on a bad name before any work starts
        experiments.get(name)
    if args.config and len(names) != 1:
        raise ValueError("--config applies to exactly one experiment name")
    if args.print_config:
        for name in names:
            exp = experiments.get(name)
            cfg = (cfgmod.load_config(args.config, exp.config_cls, experiment=name) if args.config
                   else exp.config(args.full))
            print(f"# specdyn reproduce {name}{' --full' if args.full else ''}")
            print(cfgmod.config_to_toml(cfg, experiment=name))
        return 0
    configs = {}
    for name in names:
        exp = experiments.get(name)
        configs[name] = (cfgmod.load_config(args.config, exp.config_cls, experiment=name)
                         if args.config
                         else exp.config(args.full))
    out = Path(args.out)
    failures = 0
    for name in names:
        start = time.perf_counter()
        print(f"[specdyn] {name}: running ...", flush=True)
        try:
            res = experiments.run_experiment(name, out, config=configs[name])
        except Exception as err:  # keep going: one failed figure must not lose the others
            failures += 1
            record = failed_record_path(out / name)  # a busy folder records nothing
            print(f"[specdyn] {name}: FAILED ({type(err).__name__}: {err})"
                  + (f"; traceback in {record}" if record.exists() else ""), flush=True)
            continue
        files = ", ".join(p.name for p in res.figures + res.tables)
        print(f"[specdyn] {name}: done in {time.perf_counter() - start:.1f} s -> "
              f"{res.out_dir} ({files})", flush=True)
    return 1 if failures else 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``reproduce``."""
    p = sub.add_parser(
        "reproduce",
        help="run named experiments (all by default) into an output folder",
        description="Reproduce paper figures and related-work experiments. Each writes PNG "
                    "and PDF figures, Parquet data and a JSON record of its settings.",
    )
    p.add_argument("names", nargs="*", metavar="NAME",
                   help="experiments to run (default: all). Known: "
                        + ", ".join(experiments.names()))
    p.add_argument("--full", action="store_true", help="paper-sized runs (slow; GPU advised)")
    p.add_argument("--out", default="specdyn-out", type=output_folder,
                   help="output folder (default ./specdyn-out)")
    p.add_argument("--config", default=None, help="TOML file with the experiment's config")
    p.add_argument("--print-config", action="store_true",
                   help="print the config (TOML) that would be used, and exit")
    p.set_defaults(func=_reproduce_cmd)
