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
"""

from __future__ import annotations

import signal
from typing import NoReturn

__all__ = ["Cancelled", "clear", "raise_if_cancelled", "request"]


class Cancelled(KeyboardInterrupt):
    """The command was cancelled by signal ``signum`` (SIGINT or SIGTERM).

    A ``KeyboardInterrupt``, so that code which cleans up on Ctrl-C (and lets an
    ``except Exception`` pass it by) cleans up on SIGTERM as well.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


_requested: int | None = None  # the signal of a cancel since the last clear()


def request(signum: int) -> NoReturn:
    """Note a cancel by ``signum`` and raise :class:`Cancelled` (the signal handler's body)."""
    global _requested
    _requested = signum
    raise Cancelled(signum)


def raise_if_cancelled() -> None:
    """Raise :class:`Cancelled` again if a cancel was requested since :func:`clear`: the
    exception being handled may be that cancel, reported by a library as its own error."""
    if _requested is not None:
        raise Cancelled(_requested)


def clear() -> None:
    """Forget a requested cancel (a command starts or ends)."""
    global _requested
    _requested = None
