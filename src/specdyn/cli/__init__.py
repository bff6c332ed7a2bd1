"""The ``specdyn`` command line: parse, validate, call the library, print.

Each subcommand lives in its own module with a ``register(subparsers)``
function; add the module to ``_COMMANDS`` to plug it in. A ``ValueError`` from
the library becomes a one-line error and exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from specdyn._version import __version__

_COMMANDS = [
    "specdyn.cli.theory",
    "specdyn.cli.reproduce",
    "specdyn.cli.sweep",
    "specdyn.cli.analyze",
    "specdyn.cli.report",
]


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every registered subcommand."""
    parser = argparse.ArgumentParser(
        prog="specdyn",
        description="Spectral dynamics of learning: exact theory, simulation and measurement.",
    )
    parser.add_argument("--version", action="version", version=f"specdyn {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMANDS:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script and of ``python -m specdyn``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except ValueError as err:
        print(f"specdyn: error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `specdyn theory | head`: the reader left, not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("specdyn: interrupted (finished results are kept)", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
