"""Progress bars (tqdm) on a terminal only; nothing in a log file.

A bar redraws itself with carriage returns: on a terminal that is one line that
moves, in a file (``nohup``, ``> log``, a batch job's output) it is kilobytes of
``\\r``-separated copies of the bar. So a bar is drawn only when stderr, where
tqdm writes, is a terminal; ``specdyn reproduce`` prints one plain line per
experiment instead, wherever its output goes.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


def on_terminal() -> bool:
    """Whether stderr (where the bars are drawn) is a terminal."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced by an object without it, or closed
        return False


def progress(items: Iterable[T], *, total: int | None = None, desc: str = "",
             enabled: bool = True) -> Iterator[T]:
    """Wrap ``items`` in a tqdm bar on stderr when ``enabled`` and stderr is a terminal
    (:func:`on_terminal`); else return them as they are."""
    if not (enabled and on_terminal()):
        yield from items
        return
    from tqdm.auto import tqdm

    yield from tqdm(items, total=total, desc=desc, leave=False, mininterval=0.5)


class Counter:
    """A bar counting to ``total`` on a terminal (:func:`on_terminal`), else nothing:
    ``update(n)`` advances it, ``close()`` removes it. For loops that are not an iterable
    (an integrator passing its checkpoints)."""

    def __init__(self, total: int, desc: str = "", enabled: bool = True) -> None:
        self._bar = None
        if enabled and on_terminal():
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, desc=desc, leave=False, mininterval=0.5)

    def update(self, n: int = 1) -> None:
        """Advance by ``n``."""
        if self._bar is not None:
            self._bar.update(n)

    def close(self) -> None:
        """Remove the bar."""
        if self._bar is not None:
            self._bar.close()
