"""Result dataclasses that hold arrays, with one repr: the scalars, and each array's shape.

A result (a data set's moments, a reference flow, a study) holds large arrays beside a
few sizes; a plain dataclass repr would print every array whole. :func:`array_result`
makes a frozen dataclass whose repr is one line a reader can take in: the scalar fields
as they are and each array as its shape, so no field needs ``field(repr=False)``::

    @array_result
    class Moments:
        M: int
        sxx: np.ndarray

    Moments(M=3, sxx=np.eye(2))   # Moments(M=3, sxx=<array 2x2>)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, TypeVar, dataclass_transform

import numpy as np

__all__ = ["array_result"]

C = TypeVar("C")


def _short(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"<array {'x'.join(map(str, value.shape)) or 'scalar'}>"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return f"<{type(value).__name__}>"
    return repr(value)


def _shapes_repr(self: Any) -> str:
    parts = ", ".join(f"{f.name}={_short(getattr(self, f.name))}"
                      for f in dataclasses.fields(self) if f.repr)
    return f"{type(self).__name__}({parts})"


@dataclass_transform(frozen_default=True)
def array_result(cls: type[C]) -> type[C]:
    """``cls`` as a frozen dataclass whose repr shows scalar fields as they are, arrays
    by shape and nested dataclasses by name."""
    out = dataclass(frozen=True)(cls)
    out.__repr__ = _shapes_repr  # type: ignore[method-assign]
    return out
