"""Results' one-line repr: scalars as they are, arrays by shape, never an array whole."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from specdyn._repr import array_result
from specdyn.data import DataMoments, accumulate


@array_result
class _Result:
    M: int
    rho: np.ndarray
    name: str = "x"


def test_arrays_by_shape_scalars_as_they_are() -> None:
    r = _Result(M=3, rho=np.arange(12.0).reshape(3, 4))
    assert repr(r) == "_Result(M=3, rho=<array 3x4>, name='x')"


def test_a_large_result_prints_one_short_line() -> None:
    rng = np.random.default_rng(0)
    mom = accumulate(rng.standard_normal((500, 300)), rng.standard_normal((500, 2)))
    assert isinstance(mom, DataMoments)
    text = repr(mom)
    assert "\n" not in text and len(text) < 400
    assert "sxx=<array 300x300>" in text and "M=500" in text


def test_frozen_dataclass() -> None:
    r = _Result(M=3, rho=np.zeros(2))
    assert dataclasses.is_dataclass(r)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.M = 4  # type: ignore[misc]
