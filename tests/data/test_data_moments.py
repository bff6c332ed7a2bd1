"""Moments accumulated over blocks of rows: the same numbers as one pass over the whole
array, from a ``.npy`` read by rows in its own dtype, with the checks of every block.

Oracle: numpy on the whole centred array (``X^T X / M`` after subtracting the means).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from specdyn.data import accumulate, check_moments, decompose_data
from specdyn.data import moments as moments_mod


def _xy(M: int = 500, D: int = 7, P: int = 3, offset: float = 0.0, seed: int = 0
        ) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((M, D)) * np.arange(1, D + 1) ** -0.7 + offset
    return X, X[:, :P] @ rng.standard_normal((P, P)) + 0.1 * rng.standard_normal((M, P))


def _oracle(X: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x, y = X - X.mean(axis=0), Y - Y.mean(axis=0)
    return x.T @ x / len(x), x.T @ y / len(x), y.T @ y / len(x)


@pytest.mark.parametrize("offset", [0.0, 1e4])
def test_blocks_give_the_moments_of_the_whole(monkeypatch: pytest.MonkeyPatch,
                                              offset: float) -> None:
    """In blocks of 13 rows (uneven: the last is short), with a common offset of 1e4 that a
    sum of raw squares would cancel digits of."""
    X, Y = _xy(offset=offset)
    monkeypatch.setattr(moments_mod, "BLOCK_BYTES", 8 * 13 * (X.shape[1] + Y.shape[1]))
    m = accumulate(X, Y)
    sxx, sxy, syy = _oracle(X, Y)
    np.testing.assert_allclose(m.sxx, sxx, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(m.sxy, sxy, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(m.syy, syy, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(m.x_mean, X.mean(axis=0), rtol=1e-12, atol=1e-15)


def test_a_float32_npy_file_is_read_in_blocks(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    from specdyn.data import NpyRows, load_xy

    X, Y = _xy(M=400)
    np.save(tmp_path / "x.npy", X.astype(np.float32))
    np.save(tmp_path / "y.npy", Y.astype(np.float32))
    x, y = load_xy(tmp_path / "x.npy", tmp_path / "y.npy")
    assert isinstance(x, NpyRows) and x.dtype == np.float32  # not read whole
    np.testing.assert_array_equal(x[37:41], X[37:41].astype(np.float32))
    np.testing.assert_array_equal(np.asarray(x), X.astype(np.float32))
    seen: list[int] = []
    real = moments_mod.row_blocks

    def counting(*args: object, **kw: object):  # type: ignore[no-untyped-def]
        for block in real(*args, **kw):  # type: ignore[arg-type]
            seen.append(block[1].shape[0])
            yield block

    monkeypatch.setattr(moments_mod, "row_blocks", counting)
    monkeypatch.setattr(moments_mod, "BLOCK_BYTES", 8 * 50 * 10)
    m = accumulate(x, y)
    assert seen == [50] * 8
    X32, Y32 = X.astype(np.float32).astype(np.float64), Y.astype(np.float32).astype(np.float64)
    np.testing.assert_allclose(m.sxx, _oracle(X32, Y32)[0], rtol=1e-10, atol=1e-12)


def test_one_block_is_centred_on_its_own_mean_as_before() -> None:
    X, Y = _xy()
    dec = decompose_data(X, Y)
    np.testing.assert_array_equal(dec.x_mean, X.mean(axis=0))
    x = X - X.mean(axis=0)
    np.testing.assert_allclose(dec.lam, np.sort(np.linalg.eigvalsh(x.T @ x / len(x)))[::-1],
                               rtol=1e-12)


def test_a_bad_value_in_a_later_block_is_named_by_its_row(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    X, Y = _xy()
    X[321, 4] = np.inf
    X[400, 0] = np.nan
    monkeypatch.setattr(moments_mod, "BLOCK_BYTES", 8 * 100 * 10)
    with pytest.raises(ValueError, match=r"^X: holds 2 value\(s\) that are NaN or infinite "
                                         r"\(the first at row 321, column 4\)"):
        check_moments(accumulate(X, Y))


def test_constant_columns_are_found_across_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    X, Y = _xy()
    X[:, 2] = 5.0
    monkeypatch.setattr(moments_mod, "BLOCK_BYTES", 8 * 64 * 10)
    m = accumulate(X, Y)
    assert m.constant_x().tolist() == [2]
    assert check_moments(m, drop_constant=True).tolist() == [0, 1, 3, 4, 5, 6]
    sel = m.select(np.array([0, 1, 3]))
    np.testing.assert_allclose(sel.sxx, m.sxx[np.ix_([0, 1, 3], [0, 1, 3])])
