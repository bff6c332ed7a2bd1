"""The experiments that ship with specdyn, read from their source without importing them.

A topic is a package under ``specdyn/experiments`` whose ``run.py`` registers its
experiments with ``@register("name", ...)``. Importing a topic loads numpy, pandas,
scipy, matplotlib and torch, and ``specdyn reproduce --help`` must start at once, so
the help reads the names from that source text (:func:`builtin_names`). The registry
(:func:`specdyn.runs.builtin_names`) stays the truth of what exists:
``tests/cli/test_cli_fast_start.py`` fails when this reading differs from it.

Run order (:func:`run_order`, used by the registry and by this reading alike): the core
paper's figures first, an experiment named ``figN`` by ``N``; then every other one by
its topic package (alphabetical) and, within a topic, in the order its ``run.py``
registers them. A new experiment takes its place from its name and its package: there
is no list to edit. Imports only the standard library.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from pathlib import Path

__all__ = ["TOPICS", "builtin_names", "registered_in", "run_order", "topics"]

#: The folder of the topic packages.
TOPICS = Path(__file__).resolve().parent / "experiments"

# ``@register("name", ...)`` (or ``@runs.register(...)``) at the start of a line: the
# decorator of a run; the name may stand on the next line.
_REGISTER = re.compile(r"^@(?:\w+\.)*register\(\s*(['\"])(.+?)\1", re.MULTILINE)
_FIGURE = re.compile(r"fig(\d+)")


def topics(root: Path = TOPICS) -> list[str]:
    """The topic packages under ``root`` (a package with a ``run.py``), alphabetical."""
    return sorted(p.name for p in root.iterdir()
                  if (p / "__init__.py").is_file() and (p / "run.py").is_file())


def registered_in(run_py: Path) -> list[str]:
    """The experiment names a topic's ``run.py`` registers, in source order."""
    return [m.group(2) for m in _REGISTER.finditer(run_py.read_text(encoding="utf-8"))]


def run_order(names: Iterable[str]) -> list[str]:
    """``names`` (in registration order) in the order ``specdyn reproduce`` runs them.

    The core paper's figures (``figN``) first, by ``N``; every other name after them,
    in the order given. Stable: names of equal rank keep their order.
    """
    def key(item: tuple[int, str]) -> tuple[int, int]:
        index, name = item
        fig = _FIGURE.fullmatch(name)
        return (0, int(fig.group(1))) if fig else (1, index)

    return [name for _, name in sorted(enumerate(names), key=key)]


@functools.lru_cache(maxsize=1)
def builtin_names(root: Path = TOPICS) -> tuple[str, ...]:
    """Every experiment the topics under ``root`` register, in :func:`run_order`."""
    return tuple(run_order(name for topic in topics(root)
                           for name in registered_in(root / topic / "run.py")))
