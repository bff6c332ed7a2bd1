"""A user's ``(X, Y)`` from files, and the checks every such pair passes before any work.

Read by ``specdyn data`` and :func:`specdyn.study.study`. Files:

- ``.npy``: one array, **read by rows on demand** (:class:`NpyRows`: block by block,
  never loaded whole, so an ``X`` larger than memory works, :mod:`specdyn.data.moments`);
  ``.npz``: one array, or with ``Y`` not given the arrays named ``X`` and ``Y`` of one
  archive;
- ``.csv``: numbers separated by commas, one sample a row; a first row that is not
  numeric is a header and skipped;
- ``.pt`` / ``.pth``: a tensor, or a dict with ``X`` and ``Y``, read with
  ``torch.load(weights_only=True)`` (no code runs).

Refused with one line naming ``X`` or ``Y`` (and the file, when there is one): a file
that is not what its suffix says (a text file named ``.npy``), an array of complex
numbers, of text or of Python objects; and by :func:`check_xy`: a shape that is not
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

from specdyn.data.moments import DataMoments, accumulate

__all__ = ["MIN_SAMPLES", "SUFFIXES", "NpyRows", "check_moments", "check_shapes", "check_xy",
           "load_xy"]

#: The fewest samples ``check_xy`` accepts: below it, sample covariances are noise.
MIN_SAMPLES = 20
#: File kinds :func:`load_xy` reads.
SUFFIXES = (".npy", ".npz", ".csv", ".pt", ".pth")


class _Refused(ValueError):
    """A file refused with its own message (not wrapped as unreadable)."""


class NpyRows:
    """A ``.npy`` file whose rows are read when asked for: ``rows[a:b]`` reads rows ``a``
    to ``b`` from disk (and holds nothing else); ``numpy.asarray(rows)`` reads it whole.

    Unlike a memory map, the blocks read are ordinary memory, freed when dropped: reading
    a 2 GB file in 64 MiB blocks keeps the process at a few hundred MB (a memory map
    counts every page it has touched as resident). A file in Fortran order is read whole.

    Attributes
    ----------
    path, shape, dtype, ndim
        The file and its array's shape and dtype.
    """

    def __init__(self, path: Path) -> None:
        with open(path, "rb") as fh:
            version = np.lib.format.read_magic(fh)
            read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                    else np.lib.format.read_array_header_2_0)
            shape, fortran, dtype = read(fh)
            self._offset = fh.tell()
        self.path = path
        self.shape: tuple[int, ...] = tuple(int(n) for n in shape)
        self.dtype = np.dtype(dtype)
        self.ndim = len(self.shape)
        self._fortran = bool(fortran)
        if self.dtype.hasobject:
            raise _Refused(f"{str(path)!r} holds Python objects, not numbers")

    def __len__(self) -> int:
        return self.shape[0] if self.shape else 0

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = np.load(self.path, allow_pickle=False)
        return a if dtype is None else a.astype(dtype, copy=False)

    def __getitem__(self, rows: slice) -> np.ndarray:
        if not isinstance(rows, slice) or self._fortran or self.ndim == 0:
            return np.asarray(self)[rows]
        start, stop, step = rows.indices(len(self))
        if step != 1:
            return np.asarray(self)[rows]
        width = int(np.prod(self.shape[1:], dtype=np.int64))
        n = max(stop - start, 0)
        with open(self.path, "rb") as fh:
            fh.seek(self._offset + start * width * self.dtype.itemsize)
            a = np.fromfile(fh, dtype=self.dtype, count=n * width)
        return a.reshape((n, *self.shape[1:]))


def _read(path: Path, name: str, key: str | None) -> Any:
    """One array (or, for ``.npz``/``.pt`` with ``key``, the entry ``key``) of ``path``."""
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise ValueError(f"{name}: {str(path)!r} is not a {', '.join(SUFFIXES)} file")
    if not path.is_file():
        raise ValueError(f"{name}: {str(path)!r} does not exist or is not a file")
    try:
        if suffix == ".npy":
            with open(path, "rb") as fh:
                head = fh.read(6)
            if head != b"\x93NUMPY":
                raise _Refused(f"{name}: {str(path)!r} is not a .npy file ({_looks_like(head)}"
                               "); save the array with numpy.save, or a table as .csv")
            return NpyRows(path)
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
            if obj.is_complex():
                raise _Refused(f"{name}: {str(path)!r} holds complex numbers ({obj.dtype}); "
                               "pass real arrays (e.g. the real and imaginary parts as "
                               "columns)")
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
            ) -> tuple[np.ndarray | NpyRows, np.ndarray | NpyRows]:
    """``(X, Y)`` from one or two files (the module docstring).

    Without ``y_path``, ``x_path`` must be an ``.npz`` archive or a ``.pt`` dict holding
    ``X`` and ``Y``. A ``.npy`` comes back as :class:`NpyRows` (read by rows when asked
    for, in its own dtype), every other kind as a float64 array. Refused here:
    unreadable files and arrays that are not real numbers; pass the result to
    :func:`check_xy` (or :func:`specdyn.study.study`) for the rest.
    """
    xp = Path(x_path)
    if y_path is None:
        if xp.suffix.lower() not in (".npz", ".pt", ".pth"):
            raise ValueError(f"Y: missing; give Y's file, or X and Y in one .npz or .pt "
                             f"(got only {str(xp)!r})")
        pairs: tuple[tuple[Path, str, str | None], ...] = ((xp, "X", "X"), (xp, "Y", "Y"))
    else:
        pairs = ((xp, "X", None), (Path(y_path), "Y", None))
    out = []
    for path, name, key in pairs:
        a = _read(path, name, key)
        arr = a if isinstance(a, NpyRows) else np.asarray(a)
        _real_numbers(name, arr, f"{str(path)!r} holds ")
        out.append(arr if isinstance(arr, NpyRows) else arr.astype(np.float64, copy=False))
    return out[0], out[1]


def _looks_like(head: bytes) -> str:
    """What the first bytes of a file that is not ``.npy`` look like, for a message."""
    if head[:2] == b"PK":
        return "it is a zip archive: an .npz?"
    try:
        text = head.decode("ascii")
    except UnicodeDecodeError:
        return "its first bytes are not numpy's"
    if all(ch.isprintable() or ch.isspace() for ch in text):
        return f"it starts with text {text!r}"
    return "its first bytes are not numpy's"


def _real_numbers(name: str, a: Any, where: str = "") -> None:
    """Refuse (one line naming ``name``) an array of complex numbers, text or objects."""
    kind = a.dtype.kind
    if kind == "c":
        raise ValueError(f"{name}: {where or 'holds '}complex numbers ({a.dtype}); pass real "
                         "arrays (e.g. the real and imaginary parts as columns)")
    if kind in "USa":
        raise ValueError(f"{name}: {where or 'holds '}text ({a.dtype}), not numbers")
    if kind not in "biuf":
        raise ValueError(f"{name}: {where or 'holds '}{a.dtype} values, not real numbers")


def _columns(idx: np.ndarray) -> str:
    shown = ", ".join(str(int(i)) for i in idx[:6])
    return shown + (f", ... ({idx.size} in all)" if idx.size > 6 else "")


def _as_array(name: str, a: Any) -> Any:
    """``a`` as an array with a shape and a dtype (a memory map or :class:`NpyRows` stays
    one: read later, by rows)."""
    if isinstance(a, (np.ndarray, NpyRows)):
        return a
    arr = np.asarray(a)
    if arr.dtype == object:
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{name}: holds values that are not numbers") from None
    return arr


def check_shapes(X: Any, Y: Any, *, min_samples: int = MIN_SAMPLES) -> tuple[Any, Any]:
    """``(X, Y)`` as arrays (a memory map or :class:`NpyRows` stays one), after the checks
    that need no pass over the data: real numbers, 2-D shapes, equal rows, enough samples
    and features. Raises ``ValueError`` (one line naming ``X`` or ``Y``)."""
    x, y = _as_array("X", X), _as_array("Y", Y)
    _real_numbers("X", x)
    _real_numbers("Y", y)
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
    return x, y


def check_moments(m: DataMoments, *, drop_constant: bool = False) -> np.ndarray:
    """The kept columns of ``X`` after the checks of one pass
    (:func:`specdyn.data.moments.accumulate`): finite values, no constant column of
    ``Y``, and of ``X`` none (or, with ``drop_constant``, at least 3 that are not).
    Raises ``ValueError`` (one line naming ``X`` or ``Y``)."""
    if m.nonfinite is not None:
        name, count, r, c = m.nonfinite
        raise ValueError(f"{name}: holds {count} value(s) that are NaN or infinite (the first "
                         f"at row {r}, column {c}); remove or impute them")
    const_y = m.constant_y()
    if const_y.size:
        raise ValueError(f"Y: column(s) {_columns(const_y)} are constant: an output that never "
                         "changes cannot be learned; drop them")
    const_x = m.constant_x()
    kept = np.setdiff1d(np.arange(m.x_mean.size), const_x)
    if const_x.size and not drop_constant:
        raise ValueError(f"X: column(s) {_columns(const_x)} are constant (no variance, no "
                         "mode); drop them or pass drop_constant=True (--drop-constant)")
    if kept.size < 3:
        raise ValueError(f"X: needs at least 3 columns that are not constant, got {kept.size}")
    return kept


def check_xy(X: Any, Y: Any, *, min_samples: int = MIN_SAMPLES, drop_constant: bool = False
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(X, Y, kept)``: the checked float64 arrays and the indices of ``X``'s kept columns.

    Raises ``ValueError`` (one line, naming ``X`` or ``Y`` and what is allowed) on the
    bad input of the module docstring (:func:`check_shapes`, then
    :func:`check_moments`); with ``drop_constant`` the constant columns of ``X`` are
    dropped instead (``kept`` lists the others). Holds the arrays in memory: for an
    ``X`` larger than memory use :func:`specdyn.study.study`, which reads it in blocks.
    """
    x, y = check_shapes(X, Y, min_samples=min_samples)
    kept = check_moments(accumulate(x, y), drop_constant=drop_constant)
    return (np.asarray(x, dtype=np.float64)[:, kept], np.asarray(y, dtype=np.float64), kept)
