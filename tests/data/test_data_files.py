"""A user's (X, Y) from files, and the checks before any work: one line naming X or Y."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from specdyn.data import MIN_SAMPLES, check_xy, load_xy


def _xy(M: int = 40, D: int = 5, P: int = 2, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((M, D))
    return X, X @ rng.standard_normal((D, P))


def test_every_file_kind_reads_back_the_arrays(tmp_path: Path) -> None:
    import torch

    X, Y = _xy()
    np.save(tmp_path / "x.npy", X)
    np.save(tmp_path / "y.npy", Y)
    np.savez(tmp_path / "xy.npz", X=X, Y=Y)
    np.savez(tmp_path / "y1.npz", anything=Y)
    np.savetxt(tmp_path / "x.csv", X, delimiter=",", header="a,b,c,d,e", comments="")
    np.savetxt(tmp_path / "y.csv", Y, delimiter=",")
    torch.save({"X": torch.tensor(X), "Y": torch.tensor(Y)}, tmp_path / "xy.pt")
    torch.save(torch.tensor(Y), tmp_path / "y.pt")
    for args in (("x.npy", "y.npy"), ("xy.npz",), ("x.csv", "y.csv"), ("xy.pt",),
                 ("x.npy", "y.pt"), ("x.npy", "y1.npz")):
        x, y = load_xy(*(tmp_path / a for a in args))
        np.testing.assert_allclose(x, X, rtol=1e-15)
        np.testing.assert_allclose(y, Y, rtol=1e-15)


@pytest.mark.parametrize(("files", "start"), [
    (("x.txt", "y.npy"), "X: "),
    (("missing.npy", "y.npy"), "X: "),
    (("x.npy",), "Y: missing"),
    (("x.npy", "two.npz"), "Y: "),
    (("xy_noY.npz",), "Y: "),
    (("x.npy", "bad.csv"), "Y: "),
    (("x.npy", "garbage.npy"), "Y: "),
])
def test_unreadable_files_are_one_line_naming_x_or_y(tmp_path: Path, files: tuple[str, ...],
                                                     start: str) -> None:
    X, Y = _xy()
    np.save(tmp_path / "x.npy", X)
    np.save(tmp_path / "y.npy", Y)
    (tmp_path / "x.txt").write_text("1,2\n")
    np.savez(tmp_path / "two.npz", a=Y, b=Y)
    np.savez(tmp_path / "xy_noY.npz", X=X)
    (tmp_path / "bad.csv").write_text("1,2\n3,oops\n")
    (tmp_path / "garbage.npy").write_bytes(b"not an array")
    with pytest.raises(ValueError) as info:
        load_xy(*(tmp_path / f for f in files))
    msg = str(info.value)
    assert msg.startswith(start) and "\n" not in msg, msg


def _bad(kind: str) -> tuple[np.ndarray, np.ndarray]:
    X, Y = _xy()
    if kind == "1-D Y":
        return X, Y[:, 0]
    if kind == "rows":
        return X, Y[:-1]
    if kind == "NaN":
        X = X.copy()
        X[3, 2] = np.nan
        return X, Y
    if kind == "inf Y":
        Y = Y.copy()
        Y[0, 1] = np.inf
        return X, Y
    if kind == "few":
        return X[:MIN_SAMPLES - 1], Y[:MIN_SAMPLES - 1]
    if kind == "constant X":
        X = X.copy()
        X[:, 1] = 3.0
        return X, Y
    if kind == "constant Y":
        Y = Y.copy()
        Y[:, 0] = 1.0
        return X, Y
    if kind == "3-D X":
        return X[:, :, None], Y
    raise AssertionError(kind)


@pytest.mark.parametrize(("kind", "start", "says"), [
    ("1-D Y", "Y: ", "Y[:, None]"),
    ("rows", "Y: ", "as many rows"),
    ("NaN", "X: ", "row 3, column 2"),
    ("inf Y", "Y: ", "row 0, column 1"),
    ("few", "X: ", f"at least {MIN_SAMPLES} samples"),
    ("constant X", "X: ", "column(s) 1 are constant"),
    ("constant Y", "Y: ", "column(s) 0 are constant"),
    ("3-D X", "X: ", "2-D"),
])
def test_bad_arrays_are_one_line_naming_x_or_y(kind: str, start: str, says: str) -> None:
    X, Y = _bad(kind)
    with pytest.raises(ValueError) as info:
        check_xy(X, Y)
    msg = str(info.value)
    assert msg.startswith(start) and says in msg and "\n" not in msg, msg


def test_constant_columns_can_be_dropped() -> None:
    X, Y = _bad("constant X")
    x, y, kept = check_xy(X, Y, drop_constant=True)
    assert kept.tolist() == [0, 2, 3, 4] and x.shape == (40, 4)
    np.testing.assert_array_equal(x, X[:, kept])
    np.testing.assert_array_equal(y, Y)
