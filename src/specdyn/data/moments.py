"""A data set's means and second moments, accumulated over blocks of rows.

Every statistic the theory takes from a data set ``(X, Y)`` is a mean or a second
moment: ``Sigma = X^T X / M``, ``C = X^T Y / M`` and ``Y^T Y / M`` of the centred data
(:mod:`specdyn.data.empirical`). They are sums over samples, so they are accumulated
here over blocks of rows (:data:`BLOCK_BYTES` of float64 at a time): an ``X`` larger
than memory (a ``.npy`` read by rows, :class:`specdyn.data.NpyRows`) is read once, in
its own dtype, and never copied whole. In the same pass every block is checked: finite
values, and the columns' spread (a constant column has no variance and no mode).

Centring in one pass: the sums are of ``x - s`` with ``s`` the first block's mean, and
the means are put back at the end (``Sigma = S/M - d d^T`` with ``d`` the mean of
``x - s``), so a large common offset does not cancel digits; an ``X`` that fits in one
block is centred on its own mean, exactly.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from specdyn._progress import progress as _progress
from specdyn._repr import array_result

__all__ = ["BLOCK_BYTES", "DataMoments", "accumulate", "row_blocks"]

#: Float64 bytes of ``X`` and ``Y`` held at once while accumulating (64 MiB).
BLOCK_BYTES = 64 * 2**20


def row_blocks(X: Any, Y: Any | None = None, *, columns: np.ndarray | None = None,
               desc: str = "", progress: bool = False
               ) -> Iterator[tuple[int, np.ndarray, np.ndarray | None]]:
    """``(start, x, y)``: consecutive blocks of rows of ``X`` (and ``Y``) as float64.

    ``columns`` selects columns of ``X``; a block holds at most :data:`BLOCK_BYTES`
    (one block when the arrays are smaller). ``progress`` draws a bar on a terminal.
    """
    M = int(X.shape[0])
    width = (len(columns) if columns is not None else int(X.shape[1])) + (
        int(Y.shape[1]) if Y is not None else 0)
    rows = max(1, min(M, BLOCK_BYTES // (8 * max(width, 1))))
    starts = range(0, M, rows)
    for start in _progress(starts, total=len(starts), desc=desc,
                           enabled=progress and len(starts) > 1):
        x = np.asarray(X[start:start + rows], dtype=np.float64)
        if columns is not None:
            x = x[:, columns]
        y = None if Y is None else np.asarray(Y[start:start + rows], dtype=np.float64)
        yield start, x, y


@array_result
class DataMoments:
    """Means and centred second moments of ``(X, Y)`` (the module docstring).

    Attributes
    ----------
    M
        Samples.
    x_mean, y_mean
        Column means (lengths ``D_raw``, ``P``).
    sxx, sxy, syy
        ``X^T X / M``, ``X^T Y / M``, ``Y^T Y / M`` of the centred data.
    x_spread, y_spread
        Per column: largest minus smallest value.
    x_scale, y_scale
        Per column: the largest absolute value.
    nonfinite
        ``(name, count, row, column)`` of the first array holding NaN or infinite
        values (``count`` in that array; row and column of the first), else ``None``.
    """

    M: int
    x_mean: np.ndarray
    y_mean: np.ndarray
    sxx: np.ndarray
    sxy: np.ndarray
    syy: np.ndarray
    x_spread: np.ndarray
    y_spread: np.ndarray
    x_scale: np.ndarray
    y_scale: np.ndarray
    nonfinite: tuple[str, int, int, int] | None = None

    def constant_x(self) -> np.ndarray:
        """Indices of the columns of ``X`` whose values are all equal (to rounding)."""
        return _constant(self.x_spread, self.x_scale)

    def constant_y(self) -> np.ndarray:
        """Indices of the columns of ``Y`` whose values are all equal (to rounding)."""
        return _constant(self.y_spread, self.y_scale)

    def select(self, columns: np.ndarray) -> DataMoments:
        """The moments of ``X[:, columns]`` and ``Y``."""
        c = np.asarray(columns)
        return DataMoments(M=self.M, x_mean=self.x_mean[c], y_mean=self.y_mean,
                           sxx=self.sxx[np.ix_(c, c)], sxy=self.sxy[c], syy=self.syy,
                           x_spread=self.x_spread[c], y_spread=self.y_spread,
                           x_scale=self.x_scale[c], y_scale=self.y_scale,
                           nonfinite=self.nonfinite)


def _constant(spread: np.ndarray, scale: np.ndarray) -> np.ndarray:
    return np.flatnonzero(spread <= 1e-12 * np.maximum(scale, np.finfo(np.float64).tiny))


class _Columns:
    """Running spread, scale and the first non-finite entry of one array's blocks."""

    def __init__(self, name: str, width: int) -> None:
        self.name = name
        self.lo = np.full(width, np.inf)
        self.hi = np.full(width, -np.inf)
        self.scale = np.zeros(width)
        self.bad = 0
        self.first: tuple[int, int] | None = None

    def add(self, start: int, a: np.ndarray) -> None:
        ok = np.isfinite(a)
        if not ok.all():
            n_bad = int(a.size - np.count_nonzero(ok))
            if self.first is None:
                r, c = np.argwhere(~ok)[0]
                self.first = (start + int(r), int(c))
            self.bad += n_bad
            a = np.where(ok, a, np.nan)
        with np.errstate(invalid="ignore"):
            np.fmin(self.lo, np.nanmin(a, axis=0) if a.size else self.lo, out=self.lo)
            np.fmax(self.hi, np.nanmax(a, axis=0) if a.size else self.hi, out=self.hi)
            np.fmax(self.scale, np.nanmax(np.abs(a), axis=0) if a.size else self.scale,
                    out=self.scale)


def accumulate(X: Any, Y: Any, *, progress: bool = False) -> DataMoments:
    """The moments of ``(X, Y)`` in one pass over blocks of rows (the module docstring).

    ``X`` (``M x D_raw``) and ``Y`` (``M x P``) are any arrays with those shapes
    (numpy arrays, memory maps, :class:`~specdyn.data.NpyRows`), real; shapes and dtypes
    are checked by the caller (:func:`specdyn.data.check_xy`). Non-finite values are
    recorded in ``nonfinite``, never raised here (the caller words the refusal).
    """
    M, D, P = int(X.shape[0]), int(X.shape[1]), int(Y.shape[1])
    cols_x, cols_y = _Columns("X", D), _Columns("Y", P)
    shift_x = shift_y = None
    sxx, sxy, syy = np.zeros((D, D)), np.zeros((D, P)), np.zeros((P, P))
    sum_x, sum_y = np.zeros(D), np.zeros(P)
    blocks = 0
    for start, x, y in row_blocks(X, Y, desc="X^T X, X^T Y", progress=progress):
        assert y is not None
        cols_x.add(start, x)
        cols_y.add(start, y)
        if shift_x is None:
            with np.errstate(invalid="ignore", over="ignore"):
                shift_x, shift_y = x.mean(axis=0), y.mean(axis=0)
        with np.errstate(invalid="ignore", over="ignore"):  # non-finite: refused later
            xs, ys = x - shift_x, y - shift_y
            sxx += xs.T @ xs
            sxy += xs.T @ ys
            syy += ys.T @ ys
            sum_x += xs.sum(axis=0)
            sum_y += ys.sum(axis=0)
        blocks += 1
    assert shift_x is not None and shift_y is not None
    # one block was centred on its own mean: what is left of it is rounding
    dx, dy = (sum_x / M, sum_y / M) if blocks > 1 else (np.zeros(D), np.zeros(P))
    with np.errstate(invalid="ignore", over="ignore"):  # non-finite: refused by the caller
        sig = sxx / M - np.outer(dx, dx)
        sxy_c, syy_c = sxy / M - np.outer(dx, dy), syy / M - np.outer(dy, dy)
        x_mean, y_mean = shift_x + dx, shift_y + dy
    nonfinite = None
    for c in (cols_x, cols_y):
        if c.bad and nonfinite is None and c.first is not None:
            nonfinite = (c.name, c.bad, c.first[0], c.first[1])
    return DataMoments(M=M, x_mean=x_mean, y_mean=y_mean, sxx=0.5 * (sig + sig.T), sxy=sxy_c,
                       syy=0.5 * (syy_c + syy_c.T), x_spread=cols_x.hi - cols_x.lo,
                       y_spread=cols_y.hi - cols_y.lo, x_scale=cols_x.scale,
                       y_scale=cols_y.scale, nonfinite=nonfinite)
