"""The ``specdyn`` command line: parse, validate, call the library, print.

Each subcommand lives in its own module with a ``register(subparsers)``
function; add the module to ``_COMMANDS`` to plug it in. Every error is one
line, ``specdyn <cmd>: error: <argument>: <what is wrong>``: bad input (argparse
errors and a ``ValueError`` or ``TypeError`` from the library) exits with code 2,
a :class:`CommandError` (a run that failed, say) with code 1.

A cancel works however the process was started: :func:`main` installs its own
SIGINT and SIGTERM handlers for the duration of the command (a job started with
``&`` or ``nohup`` from a script inherits SIGINT *ignored*, and Python then
installs no Ctrl-C handler; batch schedulers and ``timeout`` send SIGTERM). Both
raise :class:`Cancelled`, a ``KeyboardInterrupt``, so every cleanup that handles
Ctrl-C (a sweep stopping its workers, an atomic write removing its temporary
file) handles both; the command keeps its finished results and exits with
``128 + signal``: 130 for SIGINT, 143 for SIGTERM. The handler also notes the
cancel (:mod:`specdyn._cancel`), so one that a library reports as an error of its
own is still a cancel, not a failed experiment.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from types import FrameType
from typing import Any, NoReturn

from specdyn._cancel import Cancelled, clear, exit_on_signal, finish, request
from specdyn._version import __version__
from specdyn.cli._args import check_output

# Cancelled: specdyn._cancel
__all__ = ["CommandError", "build_parser", "check_output", "console", "main"]

_COMMANDS = [
    "specdyn.cli.theory",
    "specdyn.cli.reproduce",
    "specdyn.cli.sweep",
    "specdyn.cli.analyze",
    "specdyn.cli.report",
    "specdyn.cli.data",
]


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, ``specdyn <cmd>: error: <what>``.

    argparse would print the whole usage text before the error; the README
    promises one line (``--help`` still prints the usage). Subparsers inherit
    the class.
    """

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}{_choice_hint(message)}\n")


def _choice_hint(message: str) -> str:
    """``" (did you mean 'table'?)"`` for argparse's "invalid choice: 'tabel' (choose from
    ...)"; ``""`` for any other message."""
    import re

    m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if m is None:
        return ""
    from specdyn._validate import did_you_mean

    return did_you_mean(m.group(1), [c.strip(" '\"") for c in m.group(2).split(",")])


class CommandError(Exception):
    """A failure of a command that is not the user's input (exit code 1, one line)."""


def _cancel(signum: int, frame: FrameType | None) -> None:
    request(signum)  # raises Cancelled, noted: a library may report it as its own error


#: The signals that cancel a command; main() exits with 128 + the signal number.
CANCEL_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def cancel_handlers(*, restore: bool = True) -> Iterator[None]:
    """SIGINT and SIGTERM raise :class:`Cancelled` inside the block, whatever the process
    inherited (SIGINT ignored under ``&``/``nohup``); the previous handlers come back after
    (``restore=False``: they stay, with the cancel state, for a process that exits next).

    A :class:`Cancelled` raised where Python can only print it (a weakref or ``__del__``
    callback) is not printed: the cancel is noted, and the command stops at its next
    :func:`~specdyn._cancel.raise_if_cancelled`. Only the main thread may set handlers;
    elsewhere (a command run from a thread) the block runs with the handlers it has.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    clear()
    previous = {sig: signal.signal(sig, _cancel) for sig in CANCEL_SIGNALS}
    hook = sys.unraisablehook
    sys.unraisablehook = functools.partial(_quiet_cancel, hook)
    try:
        yield
    finally:
        if restore:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            sys.unraisablehook = hook
            clear()


def _quiet_cancel(hook: Callable[[Any], object], unraisable: Any) -> None:
    """``sys.unraisablehook`` inside a command: a cancel (noted) is not a traceback."""
    if not isinstance(unraisable.exc_value, Cancelled):
        hook(unraisable)


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


def main(argv: Sequence[str] | None = None, *, exiting: bool = False) -> int:
    """Entry point of ``python -m specdyn`` and the console script (:func:`console`).

    ``exiting``: the process ends when this returns; a signal after the command's work is
    done is then ignored until it has (see :func:`specdyn._cancel.exit_on_signal`).
    """
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
    code = 1
    try:
        with cancel_handlers(restore=not exiting):
            code = int(args.func(args) or 0)
            # a cancel that a callback swallowed on the way still counts; from here on the
            # command is done, and a signal no longer turns its status into 130 or 143
            finish()
            return code
    except (ValueError, TypeError) as err:  # bad input found by the library: one line
        print(f"{prog}: error: {_one_line(err)}", file=sys.stderr)
        code = 2
    except CommandError as err:
        print(f"{prog}: error: {_one_line(err)}", file=sys.stderr)
        code = 1
    except BrokenPipeError:  # e.g. `specdyn theory | head`: the reader left, not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        code = 0
    except KeyboardInterrupt as err:  # Ctrl-C, SIGINT or SIGTERM (see Cancelled)
        signum = err.signum if isinstance(err, Cancelled) else signal.SIGINT
        code = 128 + signum
        finish(raise_pending=False)  # cancelled once: a second signal does not interrupt this
        print(f"{prog}: interrupted by {signal.Signals(signum).name} (finished results are "
              "kept)", file=sys.stderr)
    finally:
        if exiting:
            exit_on_signal(code)
    return code


def console() -> int:
    """The ``specdyn`` console script: :func:`main` for a process that exits right after."""
    return main(exiting=True)


def _one_line(err: BaseException) -> str:
    return " ".join(str(err).split()) or type(err).__name__


if __name__ == "__main__":  # pragma: no cover
    sys.exit(console())
