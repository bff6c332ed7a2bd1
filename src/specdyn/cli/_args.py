"""Argument parsing helpers shared by subcommands: the subcommand itself, number lists,
ranges (read by :mod:`specdyn.ranges`), checked numbers.

This module and every command module import nothing heavy (numpy, pandas, scipy,
matplotlib, torch, the library) at the top: ``specdyn --help`` builds every
subcommand's parser, and must start at once; the commands import what they use.

Each ``type=`` converter raises ``argparse.ArgumentTypeError`` with the problem
only; argparse prefixes the option (``argument --alpha: ...``) and the parser
of :mod:`specdyn.cli` prints it as one line.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np


def command(sub: argparse._SubParsersAction, name: str, run: Callable[[argparse.Namespace], Any],
            *, help: str, description: str) -> argparse.ArgumentParser:
    """Add the subcommand ``name`` (a one-line ``help``, a ``description`` for its --help),
    run by ``run(args)`` (its return value is the exit code; see :func:`specdyn.cli.main`)."""
    p = sub.add_parser(name, help=help, description=description)
    p.set_defaults(func=run)
    return p


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def positive_float(text: str) -> float:
    """A finite number > 0."""
    x = _number(text)
    if not (math.isfinite(x) and x > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text}")
    return x


def at_least(lo: float) -> Callable[[str], float]:
    """A converter for a finite number >= ``lo``."""
    def convert(text: str) -> float:
        x = _number(text)
        if not (math.isfinite(x) and x >= lo):
            raise argparse.ArgumentTypeError(f"must be a finite number >= {lo:g}, got {text}")
        return x
    return convert


def positive_int(text: str) -> int:
    """An integer >= 1."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {n}")
    return n


def number_list(text: str) -> np.ndarray:
    """Parse ``"1,2,5"``, ``"log:1:1e4:50"`` (log-spaced) or ``"lin:0:1:11"``; ``inf`` allowed.

    A log range needs finite ends > 0, a linear range finite ends; ``N >= 1``.
    """
    import numpy as np  # here, not at the top: `specdyn --help` imports no numpy

    from specdyn.ranges import is_range, parse_range, range_values

    text = text.strip()
    usage = "expected a comma list (1,2,5) or a range log:LO:HI:N / lin:LO:HI:N"
    if is_range(text):
        try:
            kind, lo, hi, num = parse_range(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{usage}, got {text!r}") from None
        try:
            return range_values(kind, lo, hi, num)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None
    try:
        values = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{usage}, got {text!r}") from None
    if not values:
        raise argparse.ArgumentTypeError(f"{usage}, got an empty list")
    if any(math.isnan(x) for x in values):
        raise argparse.ArgumentTypeError(f"must not contain NaN, got {text!r}")
    return np.array(values, dtype=np.float64)


def output_folder(text: str) -> str:
    """A folder to write into: it may not exist yet, but neither it nor a parent is a file."""
    from pathlib import Path

    path = Path(text)
    for p in (path, *path.parents):
        if p.exists():
            if not p.is_dir():
                what = "is a file" if p == path else f"lies under {str(p)!r}, a file"
                raise argparse.ArgumentTypeError(f"{text!r} {what}, not a folder")
            break
    return text
