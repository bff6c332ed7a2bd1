"""``specdyn --help``, ``--version`` and every subcommand's ``--help`` import nothing heavy:
only the standard library and specdyn's own CLI modules.

The import list is read in a fresh interpreter (``sys.modules`` after each call of
:func:`specdyn.cli.main`), never a time: the wall time is a benchmark
(``benchmarks/cli_start.py``, BENCHMARKS.md). The subcommands are enumerated from
the parser, so a new command is covered without editing this file.
"""

from __future__ import annotations

import json
import subprocess
import sys

from specdyn.cli import build_parser

# Runs each argv in order and prints, per argv, the modules it added; the modules a
# bare interpreter already has (site hooks of the environment) are left out.
_PROBE = r"""
import json, sys
before = set(sys.modules)
from specdyn.cli import main
added = {}
for argv in json.loads(sys.argv[1]):
    seen = set(sys.modules)
    try:
        main(argv)
    except SystemExit:
        pass
    added[" ".join(argv)] = sorted(set(sys.modules) - seen)
added["import specdyn.cli"] = sorted(set(sys.modules) - before
                                     - {m for v in added.values() for m in v})
print("\n" + json.dumps(added))
"""


def _subcommands() -> list[str]:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    return sorted(sub.choices)


def _allowed(module: str) -> bool:
    """Standard library, or specdyn's root, version, cancel, experiment-index and CLI
    modules (the cancel state, ``specdyn._cancel``, and the experiments' names read from
    their source, ``specdyn._experiment_index``, import only the standard library)."""
    top = module.split(".")[0]
    if top in sys.stdlib_module_names or top.startswith("_frozen") or top == "__main__":
        return True
    return (module in ("specdyn", "specdyn._version", "specdyn._cancel",
                       "specdyn._experiment_index")
            or module.startswith("specdyn.cli"))


def test_help_and_version_import_only_the_standard_library_and_the_cli() -> None:
    commands = _subcommands()
    assert {"theory", "reproduce", "sweep", "run", "analyze", "report"} <= set(commands)
    argvs = [["--help"], ["--version"]] + [[c, "--help"] for c in commands]
    out = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(argvs)], capture_output=True,
                         text=True, timeout=120, check=True).stdout
    added = json.loads(out.strip().splitlines()[-1])
    assert set(added) == {" ".join(a) for a in argvs} | {"import specdyn.cli"}
    heavy = {argv: [m for m in mods if not _allowed(m)] for argv, mods in added.items()}
    assert {argv: mods for argv, mods in heavy.items() if mods} == {}
    # the probe saw the modules a heavy import would bring (it is not blind)
    assert any(m.startswith("specdyn.cli.") for m in added["import specdyn.cli"]
               + added["--help"])


def test_the_probe_sees_a_heavy_import() -> None:
    """The same probe, run on a command that does import numpy, reports it."""
    out = subprocess.run([sys.executable, "-c", _PROBE,
                          json.dumps([["theory", "--k", "1", "--t", "0"]])],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    added = json.loads(out.strip().splitlines()[-1])
    assert "numpy" in added["theory --k 1 --t 0"]


def test_help_experiment_names_are_the_registry_s() -> None:
    """``reproduce --help`` lists the names read from the experiments' source: exactly the
    registry's, in the registry's order."""
    from specdyn import runs

    # whitespace dropped: argparse wraps lines, at hyphens too
    text = "".join(_help("reproduce").split())
    listed = text.split("Builtin:", 1)[1].split(";andthoseofinstalledplugins", 1)[0]
    assert listed.split(",") == runs.builtin_names()


def test_analyze_help_lists_the_reader_s_file_kinds() -> None:
    from specdyn.measure.checkpoint import SUFFIXES

    text = "".join(_help("analyze").split())
    assert all(s in text for s in SUFFIXES)


def _help(command: str) -> str:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    return sub.choices[command].format_help()
