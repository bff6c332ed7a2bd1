"""A cancel by SIGINT or SIGTERM that no library can turn into a failure.

The command line's signal handler (:func:`specdyn.cli.cancel_handlers`) raises
:class:`Cancelled` wherever the main thread is. When that is inside a C
extension's call back into Python, the extension may report it as an error of its
own: matplotlib's path conversion (pybind11), interrupted while it reads the
transform, raises ``ValueError: Invalid affine transformation matrix``, and a
``specdyn reproduce`` cancelled while saving a figure recorded the experiment as
crashed (exit 1, a ``NAME.failed.json``) and went on to the next one. So the
handler also notes the request here (:func:`request`), and code that turns an
``Exception`` into a recorded failure first calls :func:`raise_if_cancelled`.

A command whose work is done calls :func:`finish`: from then on a signal is noted
and ignored, so that a run that had written everything and was printing its
summary, or exiting, ends with its own status, never 130 (found: a finished
``specdyn reproduce`` exited 130 because the signal came while it was exiting).
A cancel that came before :func:`finish` still counts.
"""

from __future__ import annotations

import os
import signal
import sys

__all__ = ["Cancelled", "clear", "exit_on_signal", "finish", "finished", "late_signal",
           "raise_if_cancelled", "request"]


class Cancelled(KeyboardInterrupt):
    """The command was cancelled by signal ``signum`` (SIGINT or SIGTERM).

    A ``KeyboardInterrupt``, so that code which cleans up on Ctrl-C (and lets an
    ``except Exception`` pass it by) cleans up on SIGTERM as well.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


_requested: int | None = None  # the signal of a cancel since the last clear()
_finished = False  # the command's work is done (finish()): signals no longer cancel it
_late: int | None = None  # the signal that came after finish(), if any
_exit_code: int | None = None  # exit_on_signal(): the status the exiting process ends with


def request(signum: int) -> None:
    """The signal handler's body: note a cancel by ``signum`` and raise :class:`Cancelled`;
    after :func:`finish`, only note it (the work is done: nothing is left to cancel)."""
    global _requested, _late
    if _finished:
        # a second one while the process exits (a shutdown that hangs): end it at once,
        # with the command's status; the first lets the shutdown's clean-up run
        if _exit_code is not None and _late is not None:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (OSError, ValueError):  # closed, or the reader left
                    pass
            os._exit(_exit_code)
        _late = signum
        return
    _requested = signum
    raise Cancelled(signum)


def raise_if_cancelled() -> None:
    """Raise :class:`Cancelled` again if a cancel was requested since :func:`clear`: the
    exception being handled may be that cancel, reported by a library as its own error."""
    if _requested is not None:
        raise Cancelled(_requested)


def finish(*, raise_pending: bool = True) -> None:
    """The command's work is done (its results are written): a cancel requested before
    now is raised (it still counts; not with ``raise_pending=False``, for a command that
    is ending with its error), a signal after it is noted and ignored."""
    global _finished
    if not _finished:
        if raise_pending:
            raise_if_cancelled()
        _finished = True


def exit_on_signal(code: int) -> None:
    """The process is exiting with status ``code`` (the console script, after its command):
    a signal from now on is ignored, so that the interpreter's shutdown (threads joined,
    ``atexit`` handlers run) ends with ``code``; a second one ends the process at once
    with ``code`` (streams flushed), should the shutdown hang."""
    global _exit_code, _late
    finish(raise_pending=False)
    _exit_code, _late = code, None


def finished() -> bool:
    """Whether :func:`finish` was called since :func:`clear`."""
    return _finished


def late_signal() -> int | None:
    """The signal that arrived after :func:`finish` (and was ignored), if any."""
    return _late


def clear() -> None:
    """Forget a requested cancel and a finish (a command starts or ends)."""
    global _requested, _finished, _late, _exit_code
    _requested = None
    _finished = False
    _late = None
    _exit_code = None
