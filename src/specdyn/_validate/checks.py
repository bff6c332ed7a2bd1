"""Checks of single values where they enter the library: each returns the value or raises.

Every check raises one ``ValueError`` line that names the argument and the allowed range
(:func:`positive`, :func:`in_range`, :func:`choice`, :func:`real_array`, ...); the
declared constraints (:mod:`specdyn._validate.constraint`) are made of them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike


def positive(name: str, value: Any) -> float:
    """Return ``value`` as a float, or raise if it is not finite and > 0."""
    x = _real_scalar(name, value)
    if not x > 0:
        raise ValueError(f"{name} must be > 0 (allowed range (0, inf)), got {show(value)}")
    return x


def nonnegative(name: str, value: Any) -> float:
    """Return ``value`` as a float, or raise if it is not finite and >= 0."""
    x = _real_scalar(name, value)
    if not x >= 0:
        raise ValueError(f"{name} must be >= 0 (allowed range [0, inf)), got {show(value)}")
    return x


def in_range(
    name: str, value: Any, lo: float, hi: float, *, lo_open: bool = False, hi_open: bool = False
) -> float:
    """Return ``value`` as a float, or raise if it is outside [lo, hi] (ends as given)."""
    x = _real_scalar(name, value)
    ok_lo = x > lo if lo_open else x >= lo
    ok_hi = x < hi if hi_open else x <= hi
    if not (ok_lo and ok_hi):
        left = "(" if lo_open else "["
        right = ")" if hi_open else "]"
        raise ValueError(f"{name} must lie in {left}{lo}, {hi}{right}, got {show(value)}")
    return x


def positive_int(name: str, value: Any, *, minimum: int = 1) -> int:
    """Return ``value`` as an int, or raise if it is not an integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be an integer >= {minimum}, got {show(value)}")
    if int(value) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {show(value)}")
    return int(value)


def integer(name: str, value: Any) -> int:
    """Return ``value`` as an int, or raise if it is not an integer (``bool`` and ``3.0`` refused).

    For seeds, where any integer is allowed and a float is a mistake.
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {show(value)}")
    return int(value)


def did_you_mean(value: Any, allowed: Iterable[Any]) -> str:
    """``" (did you mean 'gamma0_ratio'?)"`` for a misspelt name, the closest of
    ``allowed`` (:func:`difflib.get_close_matches`, case and ``-``/``_`` ignored);
    ``""`` when none is close."""
    import difflib

    options = [o for o in allowed if isinstance(o, str)]  # a None among them has no name

    def norm(x: str) -> str:
        return x.lower().replace("-", "_")

    by_norm = {norm(o): o for o in options}
    close = difflib.get_close_matches(norm(str(value)), list(by_norm), n=1, cutoff=0.6)
    return f" (did you mean {by_norm[close[0]]!r}?)" if close else ""


def choice(name: str, value: Any, allowed: Iterable[str]) -> str:
    """Return ``value`` if it is one of ``allowed``; else raise listing the valid names."""
    options = list(allowed)
    if value not in options:
        hint = did_you_mean(value, options) if isinstance(value, str) else ""
        raise ValueError(
            f"{name} must be one of {', '.join(map(repr, options))}; got {show(value)}{hint}")
    return str(value)


def real_array(name: str, value: ArrayLike, *, lo: float | None = None,
               allow_inf: bool = False, positive: bool = False) -> np.ndarray:
    """Return ``value`` as a float64 array, checking reality, finiteness and a lower bound
    (``lo``: every entry ``>= lo``; ``positive``: every entry ``> 0``)."""
    arr = np.asarray(value)
    if arr.size == 0:
        raise ValueError(f"{name} must be non-empty")
    if np.iscomplexobj(arr):
        raise ValueError(f"{name} must be real, got a complex array")
    if arr.dtype == object and any(x is None for x in arr.flat):  # astype would make it NaN
        raise ValueError(f"{name} must be numeric, got None")
    try:
        arr = arr.astype(np.float64, copy=False)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be numeric: {err}") from None
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not contain NaN")
    if not allow_inf and np.isinf(arr).any():
        raise ValueError(f"{name} must be finite")
    if lo is not None and (arr < lo).any():
        bad = arr[arr < lo].flat[0]
        raise ValueError(f"{name} must be >= {lo} everywhere, got {show(bad)}")
    if positive and (arr <= 0).any():
        bad = arr[arr <= 0].flat[0]
        raise ValueError(f"{name} must be > 0 everywhere (allowed range (0, inf)), "
                         f"got {show(bad)}")
    return arr


def show(value: Any) -> str:
    """``value`` for a message: plain numbers (``0.5``, not ``np.float64(0.5)``), on one line
    (an array's rows joined)."""
    if isinstance(value, np.generic):
        value = value.item()
    text = repr(value)
    return " ".join(text.split()) if "\n" in text else text


def broadcastable(**arrays: np.ndarray) -> None:
    """Raise a ``ValueError`` naming the arguments if they do not broadcast together."""
    try:
        np.broadcast_shapes(*(a.shape for a in arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k}{v.shape}" for k, v in arrays.items())
        raise ValueError(f"arguments have shapes that do not broadcast: {shapes}") from None


def _real_scalar(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a real number, got {show(value)}")
    x = float(value)
    if math.isnan(x) or math.isinf(x):
        raise ValueError(f"{name} must be finite, got {show(value)}")
    return x
