"""``specdyn analyze`` on every supported file type, on bad layers and unreadable files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import save_file

from specdyn.cli import main


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    # the table layout: one line per tensor (narrow terminals: test_narrow_terminal_*)
    monkeypatch.setenv("COLUMNS", "1000")


def _spiked(rng: np.random.Generator, N: int = 300, M: int = 150) -> np.ndarray:
    W = rng.standard_normal((N, M))
    W[:, 0] *= 4.0  # one strong direction: population spike theta = 15
    return W


def test_analyze_npy_reports_outlier(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "w.npy"
    np.save(path, _spiked(np.random.default_rng(0)))
    assert main(["analyze", str(path), "--top", "3"]) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.startswith("w "))
    assert "300x150" in line
    assert "1: " in line  # one outlier with its p-value
    assert "1 analysed, 0 listed" in out


def test_analyze_npz_lists_unusable_arrays(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    rng = np.random.default_rng(1)
    path = tmp_path / "m.npz"
    np.savez(path, w=_spiked(rng), bias=np.ones(7), conv=rng.standard_normal((16, 8, 3, 3)),
             ints=np.ones((5, 5), dtype=np.int64))
    assert main(["analyze", str(path)]) == 0
    out = capsys.readouterr().out
    lines = {ln.split()[0]: ln for ln in out.splitlines() if ln and not ln.startswith("-")}
    assert "1-D tensor" in lines["bias"]
    assert "reshaped (16, 8, 3, 3) -> (16, 72)" in lines["conv"]
    assert "non-float" in lines["ints"]
    assert "2 analysed, 2 listed with a reason" in out


@pytest.mark.parametrize("suffix", [".npy", ".npz", ".pt"])
def test_non_finite_input_exits_2_naming_file_tensor_and_count(
        tmp_path: Path, capsys: pytest.CaptureFixture, suffix: str) -> None:
    """One NaN is bad input: one line before any work, exit 2, the file, the tensor and
    how many of its entries are not finite; a NaN bias is no matrix, and not in the way."""
    w = np.random.default_rng(0).standard_normal((64, 32))
    w[3, 4], w[5, 6], w[7, 8] = np.nan, np.inf, -np.inf
    path = tmp_path / f"m{suffix}"
    if suffix == ".npy":
        np.save(path, w)
        name = "m"
    elif suffix == ".npz":
        np.savez(path, good=np.ones((8, 8)), bias=np.full(3, np.nan), layer=w)
        name = "layer"
    else:
        torch.save({"layer": torch.tensor(w, dtype=torch.bfloat16), "bias": torch.ones(4)},
                   path)
        name = "layer"
    assert main(["analyze", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(f"specdyn analyze: error: PATH: {path}: tensor '{name}' (64x32): "
                          "3 of 2048 entries are not finite (1 NaN, 2 inf)"), err
    # the library keeps measuring the others, and says the same of this one
    from specdyn.measure import analyze

    if suffix == ".npz":
        df = analyze(path).set_index("layer")
        assert df.loc["good", "status"] == "measured"
        assert df.loc["layer", "reason"] == ("contains NaN or inf: 3 of 2048 entries "
                                             "(1 NaN, 2 inf)")


def test_analyze_torch_state_dict_and_checkpoint(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture) -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(50, 80), torch.nn.ReLU(), torch.nn.Linear(80, 10))
    sd = tmp_path / "sd.pt"
    torch.save(model.state_dict(), sd)
    assert main(["analyze", str(sd)]) == 0
    out = capsys.readouterr().out
    assert "0.weight" in out and "80x50" in out and "2.bias" in out
    ck = tmp_path / "ck.pth"
    torch.save({"model": model.state_dict(), "epoch": 3}, ck)
    assert main(["analyze", str(ck)]) == 0
    out = capsys.readouterr().out
    assert "epoch" in out and "outside the model state" in out


def test_analyze_safetensors_with_plot(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "x.safetensors"
    rng = np.random.default_rng(2)
    save_file({"w": torch.tensor(_spiked(rng), dtype=torch.float32),
               "b": torch.zeros(5)}, str(path))
    assert main(["analyze", str(path), "--plot", "--out", str(tmp_path / "fig")]) == 0
    out = capsys.readouterr().out
    assert "300x150" in out
    assert (tmp_path / "fig" / "x-spectra.png").stat().st_size > 0
    assert (tmp_path / "fig" / "x-spectra.pdf").exists()


@pytest.mark.parametrize(("name", "content", "why"), [
    ("garbage.pt", b"not a checkpoint", "not a torch checkpoint"),
    ("broken.npy", b"\x93NUMPY garbage", "cannot read"),
    ("broken.safetensors", b"\x00\x01", "cannot read"),
    ("data.txt", b"1 2 3", "unsupported file type"),
])
def test_unreadable_file_names_file_and_fails(tmp_path: Path, capsys: pytest.CaptureFixture,
                                             name: str, content: bytes, why: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    assert main(["analyze", str(path)]) != 0
    err = capsys.readouterr().err
    assert name in err and why in err


def test_missing_file_and_only_unusable_layers(tmp_path: Path,
                                               capsys: pytest.CaptureFixture) -> None:
    assert main(["analyze", str(tmp_path / "nothere.npy")]) != 0
    assert "no such file" in capsys.readouterr().err
    path = tmp_path / "bias.npy"
    np.save(path, np.ones(5))
    assert main(["analyze", str(path)]) == 2
    assert "no tensor with 2 or more axes" in capsys.readouterr().err
    path = tmp_path / "tiny.npy"
    np.save(path, np.ones((4, 2)))
    assert main(["analyze", str(path)]) == 1  # a matrix, but none could be measured
    assert "fewer than 3 singular values" in capsys.readouterr().out


@pytest.mark.parametrize("columns", [40, 60, 80, 120])
def test_narrow_terminal_gets_wrapped_blocks_that_fit(tmp_path: Path, columns: int,
                                                      capsys: pytest.CaptureFixture,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The table is wider than the terminal: one block per tensor, each line within the
    width; every missing value is named with its reason, never "nan" or "-"."""
    monkeypatch.setenv("COLUMNS", str(columns))
    rng = np.random.default_rng(1)
    path = tmp_path / "m.npz"
    name = "encoder.layers.0.attention.self.query.weight"
    np.savez(path, **{name: _spiked(rng), "bias": np.ones(7), "ints": np.ones((4, 4), int),
                      "tiny": rng.standard_normal((3, 2))})
    assert main(["analyze", str(path)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(len(ln) for ln in lines[1:-1]) <= columns  # the first names the file
    words = out.split()
    assert "nan" not in [w.strip(",;()") for w in words] and "-" not in words
    assert "outliers (p-value): 1:" in " ".join(words)  # the spike, in its block
    assert "bias 7 not measured: 1-D tensor" in " ".join(words)
    assert "ints 4x4 not measured: non-float dtype int64" in " ".join(words)
    assert "tiny 3x2 not measured: fewer than 3 singular values" in " ".join(words)
    assert "exponent a = " in " ".join(words)
    assert "1 analysed, 3 listed with a reason" in out


def test_table_and_blocks_say_why_a_value_is_missing() -> None:
    """A measured tensor whose fit and MP steps failed: "none" in the table with the
    reasons in its note; in the blocks, each missing value with its reason."""
    import dataclasses

    from specdyn.cli.analyze import format_table
    from specdyn.measure.summary import summarize_tensors

    (s,) = summarize_tensors({"w": _spiked(np.random.default_rng(4))})
    s = dataclasses.replace(s, fit=None, mp=None, outliers=None,
                            failed=(("exponent", "fit did not converge"),
                                    ("outliers", "bulk too small")),
                            notes=("no exponent: fit did not converge",
                                   "no MP fit: bulk too small"))
    table = format_table([s], 5, 1000)
    row = table[-1]
    assert "none" in row and "no exponent: fit did not converge" in row
    assert "no MP fit: bulk too small" in row
    blocks = " ".join(" ".join(format_table([s], 5, 50)).split())
    assert "exponent: none (fit did not converge)" in blocks
    assert "MP bulk: none (bulk too small)" in blocks
    for text in (" ".join(table), blocks):
        assert "nan" not in text.split() and "-" not in text.split()
