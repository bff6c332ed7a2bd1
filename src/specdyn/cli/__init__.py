"""The ``specdyn`` command line: parse, validate, call the library, print.

Each subcommand lives in its own module with a ``register(subparsers)``
function; add the module to ``_COMMANDS`` to plug it in. Every error is one
line, ``specdyn <cmd>: error: <argument>: <what is wrong>``: bad input (argparse
errors and a ``ValueError`` or ``TypeError`` from the library) exits with code 2,
a :class:`CommandError` (a run that failed, say) with code 1.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from specdyn._version import __version__

__all__ = ["build_parser", "main"]

_COMMANDS = [
    "specdyn.cli.theory",
    "specdyn.cli.reproduce",
    "specdyn.cli.sweep",
    "specdyn.cli.analyze",
    "specdyn.cli.report",
]


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, ``specdyn <cmd>: error: <what>``.

    argparse would print the whole usage text before the error; the README
    promises one line (``--help`` still prints the usage). Subparsers inherit
    the class.
    """

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


class CommandError(Exception):
    """A failure of a command that is not the user's input (exit code 1, one line)."""


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every registered subcommand."""
    parser = Parser(
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
    args, extra = parser.parse_known_args(argv)
    if extra:  # name the subcommand, as argparse does for every other error
        prog = f"specdyn {args.command}" if args.command else "specdyn"
        print(f"{prog}: error: unrecognized arguments: {' '.join(extra)}", file=sys.stderr)
        return 2
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    prog = f"specdyn {args.command}"
    try:
        return int(args.func(args) or 0)
    except (ValueError, TypeError) as err:  # bad input found by the library: one line
        print(f"{prog}: error: {_one_line(err)}", file=sys.stderr)
        return 2
    except CommandError as err:
        print(f"{prog}: error: {_one_line(err)}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. `specdyn theory | head`: the reader left, not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("specdyn: interrupted (finished results are kept)", file=sys.stderr)
        return 130


def _one_line(err: BaseException) -> str:
    return " ".join(str(err).split()) or type(err).__name__


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
