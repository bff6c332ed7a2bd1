"""A user's ``(X, Y)`` from files, and the checks every such pair passes before any work.

Read by ``specdyn data`` and :func:`specdyn.study.study`. Files:

- ``.npy``: one array; ``.npz``: one array, or with ``Y`` not given the arrays named
  ``X`` and ``Y`` of one archive;
- ``.csv``: numbers separated by commas, one sample a row; a first row that is not
  numeric is a header and skipped;
- ``.pt`` / ``.pth``: a tensor, or a dict with ``X`` and ``Y``, read with
  ``torch.load(weights_only=True)`` (no code runs).

:func:`check_xy` refuses, with one line naming ``X`` or ``Y``: a shape that is not
2-D (a 1-D ``Y`` included: pass ``Y[:, None]`` for one output), different numbers of
rows, non-finite values, fewer than ``MIN_SAMPLES`` samples, and constant columns of
``X`` (a column with no variance carries no mode: drop it, or pass
``drop_constant=True`` / ``--drop-constant``). A constant column of ``Y`` is refused
too: an output that never changes cannot be learned.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["MIN_SAMPLES", "SUFFIXES", "check_xy", "load_xy"]

#: The fewest samples ``check_xy`` accepts: below it, sample covariances are noise.
MIN_SAMPLES = 20
#: File kinds :func:`load_xy` reads.
SUFFIXES = (".npy", ".npz", ".csv", ".pt", ".pth")


class _Refused(ValueError):
    """A file refused with its own message (not wrapped as unreadable)."""


def _read(path: Path, name: str, key: str | None) -> Any:
    """One array (or, for ``.npz``/``.pt`` with ``key``, the entry ``key``) of ``path``."""
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise ValueError(f"{name}: {str(path)!r} is not a {', '.join(SUFFIXES)} file")
    if not path.is_file():
        raise ValueError(f"{name}: {str(path)!r} does not exist or is not a file")
    try:
        if suffix == ".npy":
            return np.load(path, allow_pickle=False)
        if suffix == ".npz":
            with np.load(path, allow_pickle=False) as z:
                names = list(z.files)
                if key is not None:
                    if key not in names:
                        raise _Refused(f"{name}: {str(path)!r} holds no array named {key!r} "
                                         f"(it holds {', '.join(names) or 'nothing'})")
                    return z[key]
                if len(names) != 1:
                    raise _Refused(f"{name}: {str(path)!r} holds {len(names)} arrays "
                                     f"({', '.join(names[:5])}); save one, or save X and Y "
                                     "in one .npz and pass it alone")
                return z[names[0]]
        if suffix == ".csv":
            return _read_csv(path, name)
        from specdyn._torch import torch

        obj = torch().load(path, map_location="cpu", weights_only=True)
        if key is not None:
            if not isinstance(obj, dict) or key not in obj:
                raise _Refused(f"{name}: {str(path)!r} is not a dict with {key!r}")
            obj = obj[key]
        if hasattr(obj, "detach"):
            return obj.detach().cpu().double().numpy()
        raise _Refused(f"{name}: {str(path)!r} holds a {type(obj).__name__}, not a tensor")
    except _Refused:
        raise
    except Exception as err:  # a corrupt or foreign file: one line, never a traceback
        raise ValueError(f"{name}: {str(path)!r} cannot be read ({type(err).__name__}: "
                         f"{' '.join(str(err).split())[:200]})") from None


def _read_csv(path: Path, name: str) -> np.ndarray:
    with open(path) as fh:
        first = fh.readline()
    try:
        [float(x) for x in first.split(",") if x.strip()]
        skip = 0
    except ValueError:
        skip = 1  # a header
    try:
        return np.loadtxt(path, delimiter=",", skiprows=skip, ndmin=2, dtype=np.float64)
    except ValueError as err:
        raise _Refused(f"{name}: {str(path)!r} is not a table of numbers ("
                         f"{' '.join(str(err).split())[:160]})") from None


def load_xy(x_path: str | os.PathLike[str], y_path: str | os.PathLike[str] | None = None
            ) -> tuple[np.ndarray, np.ndarray]:
    """``(X, Y)`` as float64 arrays from one or two files (the module docstring).

    Without ``y_path``, ``x_path`` must be an ``.npz`` archive or a ``.pt`` dict holding
    ``X`` and ``Y``. Nothing is checked beyond reading: pass the result to
    :func:`check_xy`.
    """
    xp = Path(x_path)
    if y_path is None:
        if xp.suffix.lower() not in (".npz", ".pt", ".pth"):
            raise ValueError(f"Y: missing; give Y's file, or X and Y in one .npz or .pt "
                             f"(got only {str(xp)!r})")
        return (np.asarray(_read(xp, "X", "X"), dtype=np.float64),
                np.asarray(_read(xp, "Y", "Y"), dtype=np.float64))
    return (np.asarray(_read(xp, "X", None), dtype=np.float64),
            np.asarray(_read(Path(y_path), "Y", None), dtype=np.float64))


def _constant_columns(a: np.ndarray) -> np.ndarray:
    """Columns whose values are all equal (to rounding of their own scale)."""
    spread = a.max(axis=0) - a.min(axis=0)
    scale = np.maximum(np.abs(a).max(axis=0), np.finfo(np.float64).tiny)
    return np.flatnonzero(spread <= 1e-12 * scale)


def _columns(idx: np.ndarray) -> str:
    shown = ", ".join(str(int(i)) for i in idx[:6])
    return shown + (f", ... ({idx.size} in all)" if idx.size > 6 else "")


def check_xy(X: Any, Y: Any, *, min_samples: int = MIN_SAMPLES, drop_constant: bool = False
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(X, Y, kept)``: the checked float64 arrays and the indices of ``X``'s kept columns.

    Raises ``ValueError`` (one line, naming ``X`` or ``Y`` and what is allowed) on the
    bad input of the module docstring; with ``drop_constant`` the constant columns of
    ``X`` are dropped instead (``kept`` lists the others).
    """
    x = np.asarray(X, dtype=np.float64) if not isinstance(X, np.ndarray) else X
    y = np.asarray(Y, dtype=np.float64) if not isinstance(Y, np.ndarray) else Y
    if x.ndim != 2:
        raise ValueError(f"X: must be 2-D (samples x features), got shape {x.shape}")
    if y.ndim == 1:
        raise ValueError(f"Y: must be 2-D (samples x outputs), got shape {y.shape}; for one "
                         "output use Y[:, None] (shape (M, 1))")
    if y.ndim != 2:
        raise ValueError(f"Y: must be 2-D (samples x outputs), got shape {y.shape}")
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"Y: must have as many rows (samples) as X, got {y.shape[0]} and "
                         f"{x.shape[0]}")
    if x.shape[0] < min_samples:
        raise ValueError(f"X: needs at least {min_samples} samples (rows), got {x.shape[0]}")
    if x.shape[1] < 3 or y.shape[1] < 1:
        raise ValueError(f"X: needs at least 3 features and Y 1 output, got shapes {x.shape} "
                         f"and {y.shape}")
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    for name, a in (("X", x), ("Y", y)):
        bad = ~np.isfinite(a)
        if bad.any():
            r, c = np.argwhere(bad)[0]
            raise ValueError(f"{name}: holds {int(bad.sum())} value(s) that are NaN or infinite "
                             f"(the first at row {int(r)}, column {int(c)}); remove or impute "
                             "them")
    const_y = _constant_columns(y)
    if const_y.size:
        raise ValueError(f"Y: column(s) {_columns(const_y)} are constant: an output that never "
                         "changes cannot be learned; drop them")
    const_x = _constant_columns(x)
    kept = np.setdiff1d(np.arange(x.shape[1]), const_x)
    if const_x.size and not drop_constant:
        raise ValueError(f"X: column(s) {_columns(const_x)} are constant (no variance, no "
                         "mode); drop them or pass drop_constant=True (--drop-constant)")
    if kept.size < 3:
        raise ValueError(f"X: needs at least 3 columns that are not constant, got {kept.size}")
    return x[:, kept], y, kept
