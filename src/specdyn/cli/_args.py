"""Argument parsing helpers shared by subcommands: the subcommand itself, number lists,
ranges (read by :mod:`specdyn.ranges`), checked numbers.

This module and every command module import nothing heavy (numpy, pandas, scipy,
matplotlib, torch, the library) at the top: ``specdyn --help`` builds every
subcommand's parser, and must start at once; the commands import what they use.

Each ``type=`` converter raises ``argparse.ArgumentTypeError`` with the problem
only; argparse prefixes the option (``argument --alpha: ...``) and the parser
of :mod:`specdyn.cli` prints it as one line. A converter that checks a range
carries it as ``range_text`` (``"> 0"``), which the option's help must state
(``tests/cli/test_cli_help.py``).
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable
from pathlib import Path
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
    convert.range_text = f">= {lo:g}"  # type: ignore[attr-defined]
    return convert


def between(lo: float, hi: float) -> Callable[[str], float]:
    """A converter for a number in the open interval ``(lo, hi)``."""
    def convert(text: str) -> float:
        x = _number(text)
        if not lo < x < hi:  # also refuses NaN
            raise argparse.ArgumentTypeError(f"must lie in ({lo:g}, {hi:g}), got {text}")
        return x
    convert.range_text = f"in ({lo:g}, {hi:g})"  # type: ignore[attr-defined]
    return convert


def positive_int(text: str) -> int:
    """An integer >= 1."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {n}")
    return n


positive_float.range_text = "> 0"  # type: ignore[attr-defined]
positive_int.range_text = ">= 1"  # type: ignore[attr-defined]


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


def check_output(path: str | os.PathLike[str], kind: str = "folder",
                 suffixes: tuple[str, ...] = ()) -> None:
    """Raise ``ValueError`` (the problem, one line) unless a command can write ``path``.

    The one check of every output path of the command line, run before any work
    starts. ``kind`` is ``"folder"`` (written into; it may not exist yet) or
    ``"file"`` (written atomically beside itself, so its folder must take new
    files; it may not exist yet either). Refused: a file where a folder is needed,
    a folder where a file is needed, a file in the way of the folders to create,
    a wrong suffix, a folder in which no file can be created (read-only file
    system, no permission, a system folder such as ``/proc`` or ``/sys``, which
    refuse even root) and a device without free space. The last two are tested
    by creating, writing one byte to, syncing and removing a hidden file in the
    nearest existing folder: permission bits alone do not say (root ignores them).
    """
    text = str(path)
    p = Path(path)
    if suffixes and p.suffix.lower() not in suffixes:
        raise ValueError(f"must name a {' or '.join(suffixes)} file, got {text!r}")
    if p.exists():
        if kind == "folder" and not p.is_dir():
            raise ValueError(f"{text!r} is a file, not a folder")
        if kind == "file" and p.is_dir():
            raise ValueError(f"{text!r} is a folder, not a file")
    start = p if kind == "folder" else p.parent
    folder = next((a for a in (start, *start.parents) if a.exists()), Path("."))
    if not folder.is_dir():
        raise ValueError(f"{text!r} lies under {str(folder)!r}, a file, not a folder")
    problem = _write_problem(folder)
    if problem:
        raise ValueError(f"{text!r} cannot be written: {problem}")


def _free_bytes(folder: Path) -> int | None:
    """Free bytes on the device of ``folder`` for this user (None where unknown: /proc)."""
    try:
        st = os.statvfs(folder)
    except (AttributeError, OSError):  # no statvfs on Windows
        return None
    if st.f_blocks == 0:  # pseudo file systems report no blocks at all
        return None
    root = getattr(os, "geteuid", lambda: -1)() == 0  # root may use the reserved blocks
    return (st.f_bfree if root else st.f_bavail) * st.f_frsize


def _write_problem(folder: Path) -> str | None:
    """Why no file can be written in the existing folder ``folder``, or None."""
    import errno
    import tempfile

    no_space = f"no space left on the device of {str(folder)!r}"
    if _free_bytes(folder) == 0:
        return no_space
    try:
        fd, tmp = tempfile.mkstemp(prefix=".specdyn-write-test-", dir=folder)
    except OSError as err:
        if err.errno == errno.ENOSPC:
            return no_space
        return f"no file can be created in {str(folder)!r} ({err.strerror or err})"
    try:
        os.write(fd, b"\0")
        os.fsync(fd)
    except OSError as err:
        return (no_space if err.errno == errno.ENOSPC
                else f"writing in {str(folder)!r} fails ({err.strerror or err})")
    finally:
        os.close(fd)
        os.unlink(tmp)
    return None


def output_path(kind: str = "folder", *suffixes: str) -> Callable[[str], str]:
    """An argparse ``type=`` for an output: a folder (``kind="folder"``) or a file, refused
    at parse time, before any work, by :func:`check_output`.

    The converter carries ``output_kind``: ``tests/cli/test_cli_output_paths.py`` finds
    every output option of every command by it.
    """
    def convert(text: str) -> str:
        try:
            check_output(text, kind, suffixes)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None
        return text

    convert.output_kind = kind  # type: ignore[attr-defined]
    convert.suffixes = suffixes  # type: ignore[attr-defined]
    convert.__name__ = f"output_{kind}"
    return convert


#: A folder to write into (it may not exist yet): see :func:`check_output`.
output_folder = output_path("folder")
