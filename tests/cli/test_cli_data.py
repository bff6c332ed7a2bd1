"""``specdyn data X Y``: a synthetic set with a known answer, the misalignment effect, bad
input (one line, exit 2), file kinds and the written folder.

The known answer: inputs whose covariance is exactly ``diag(lambda0 k^-alpha)`` in a
random basis and an aligned power-law teacher ``mu_k = mu0 k^-beta`` give back ``alpha``,
``beta`` and the paper's ``rho_k(t)``: the oracle is ``theory.rho`` of the
:class:`~specdyn.PowerLawSetting` with the same exponents (its closed form in ``k``, not
the data path's arrays). A teacher in an independent random basis (rotated) shows the
misalignment effect that the exact reference measures.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from power_law_data import power_law_data

from specdyn import PowerLawSetting, theory
from specdyn.cli import main

ALPHA, BETA, D, M = 1.3, 0.7, 16, 400


def _power_law_data(rotated: bool, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    return power_law_data(rotated, D=D, M=M, alpha=ALPHA, beta=BETA, seed=seed)


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def arrays(tmp_path: Path) -> Path:
    for name, rotated in (("aligned", False), ("rotated", True)):
        X, Y = _power_law_data(rotated)
        np.save(tmp_path / f"{name}_x.npy", X)
        np.save(tmp_path / f"{name}_y.npy", Y)
    return tmp_path


def test_an_aligned_power_law_teacher_gives_back_alpha_beta_and_the_papers_rho(
        arrays: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = arrays / "out"
    code, text, err = _run(["data", str(arrays / "aligned_x.npy"), str(arrays / "aligned_y.npy"),
                            "--kmax", "12", "--regime", "feature-learning", "--out", str(out),
                            "--format", "json"], capsys)
    assert code == 0, err
    s = json.loads(text)
    assert s["alpha"] == pytest.approx(ALPHA, abs=1e-9)
    assert s["beta"] == pytest.approx(BETA, abs=1e-8)
    assert s["output_overlap"] < 1e-8 and s["total_misalignment"] < 1e-10
    fl = s["regimes"]["feature-learning"]["linear"]
    assert fl["misalignment_effect"] < 1e-4  # the reference is the aligned theory here
    # the paper's rho_k(t): the power-law setting's closed form, not the data's arrays
    p = PowerLawSetting(ALPHA, BETA, 0.1, 1.0, fl["gamma0"], lambda0=1.0, mu0=1.0, D=D)
    dyn = pd.read_parquet(out / "data_dynamics.parquet")
    th = dyn[dyn.quantity == "rho_theory"]
    np.testing.assert_allclose(th.value, theory.rho(p, th.k.to_numpy(float), th.t.to_numpy()),
                               rtol=1e-9)
    ref = dyn[dyn.quantity == "rho_reference"].value.to_numpy()
    # the default integrator (ROS34PW2 at rtol 1e-5) is held to 5e-4 in log rho
    # (theory.reference; measured 1.3e-4 here)
    np.testing.assert_allclose(ref, th.value.to_numpy(), rtol=5e-4)
    written = {f.name for f in out.iterdir()}
    assert {"data_modes.parquet", "data_fits.parquet", "data_dynamics.parquet",
            "data_regions.parquet", "data_learning_times.parquet", "data_cross_modes.parquet",
            "data.json", "data.png", "data.pdf"} <= written
    rec = json.loads((out / "data.json").read_text())
    assert rec["summary"]["alpha"] == pytest.approx(ALPHA) and rec["status"] == "finished"
    assert "wrote 9 files" in err  # the file list goes to stderr beside JSON output


def test_a_rotated_teacher_shows_the_misalignment_effect(
        arrays: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, text, err = _run(["data", str(arrays / "rotated_x.npy"), str(arrays / "rotated_y.npy"),
                            "--kmax", "12", "--regime", "feature-learning"], capsys)
    assert code == 0, err
    assert "misalignment effect" in text and "output overlap" in text
    code, text, _ = _run(["data", str(arrays / "rotated_x.npy"), str(arrays / "rotated_y.npy"),
                          "--kmax", "12", "--regime", "feature-learning", "--format", "json"],
                         capsys)
    s = json.loads(text)
    assert s["output_overlap"] > 0.1  # random directions in 16 dimensions
    assert s["regimes"]["feature-learning"]["linear"]["misalignment_effect"] > 0.02


def test_train_adds_the_networks_beside_the_reference(
        arrays: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, text, err = _run(["data", str(arrays / "rotated_x.npy"), str(arrays / "rotated_y.npy"),
                            "--kmax", "12", "--regime", "feature-learning", "--train", "--N",
                            "8192", "--relu-N", "32", "--checkpoints", "8", "--format", "json"],
                           capsys)
    assert code == 0, err
    fl = json.loads(text)["regimes"]["feature-learning"]
    lin = fl["linear"]
    # width 8192 against infinite width: finite-size noise (0.013 measured; 0.022 at
    # N = 2048, about 1/sqrt(N)), below the misalignment effect of 0.051 that the network
    # follows and the aligned theory misses (0.045 measured)
    assert lin["network_vs_reference"] < 0.5 * lin["misalignment_effect"]
    assert lin["network_vs_theory"] > 2 * lin["network_vs_reference"]
    assert "network_vs_theory" in fl["relu"]


def _bad_files(tmp: Path) -> None:
    X, Y = _power_law_data(False)
    np.save(tmp / "x.npy", X)
    np.save(tmp / "y.npy", Y)
    np.save(tmp / "y1.npy", Y[:, 0])
    np.save(tmp / "yshort.npy", Y[:-5])
    Xn = X.copy()
    Xn[2, 3] = np.nan
    np.save(tmp / "xnan.npy", Xn)
    np.save(tmp / "xfew.npy", X[:10])
    np.save(tmp / "yfew.npy", Y[:10])
    Xc = X.copy()
    Xc[:, 0] = 1.0
    np.save(tmp / "xconst.npy", Xc)


@pytest.mark.parametrize(("argv", "says"), [
    (["x.npy", "y1.npy"], "Y: must be 2-D"),
    (["x.npy", "yshort.npy"], "Y: must have as many rows"),
    (["xnan.npy", "y.npy"], "X: holds 1 value(s) that are NaN"),
    (["xfew.npy", "yfew.npy"], "X: needs at least 20 samples"),
    (["xconst.npy", "y.npy"], "X: column(s) 0 are constant"),
    (["x.npy"], "Y: missing"),
    (["x.npy", "nothere.npy"], "Y: "),
    (["x.npy", "y.npy", "--kmax", "99"], "--kmax: kmax must be in"),
    (["x.npy", "y.npy", "--kmin", "0"], "--kmin"),
    (["x.npy", "y.npy", "--sigma-w", "0.5"], "--sigma-w and --gamma0-ratio"),
    (["x.npy", "y.npy", "--checkpoints", "2"], "--checkpoints must be at least 4"),
    (["x.npy", "y.npy", "--t-factor", "0.5"], "--t-factor"),
])
def test_bad_input_is_one_line_and_exit_2(argv: list[str], says: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    _bad_files(tmp_path)
    args = [str(tmp_path / a) if a.endswith(".npy") else a for a in argv]
    try:
        code = main(["data", *args])
    except SystemExit as stop:  # argparse's own refusals
        code = int(stop.code or 0)
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("specdyn data: error: "), err
    assert says in err and "Traceback" not in err, err


def _foreign_files(tmp: Path) -> None:
    X, Y = _power_law_data(False)
    np.save(tmp / "x.npy", X)
    np.save(tmp / "y.npy", Y)
    np.save(tmp / "xc.npy", X.astype(np.complex128))
    np.save(tmp / "ys.npy", Y.astype(str))
    (tmp / "xt.npy").write_text("1,2,3\n4,5,6\n")
    np.savez(tmp / "xyc.npz", X=X + 0j, Y=Y)


@pytest.mark.parametrize(("argv", "says"), [
    (["xc.npy", "y.npy"], "X: '{d}/xc.npy' holds complex numbers (complex128)"),
    (["x.npy", "ys.npy"], "Y: '{d}/ys.npy' holds text (<U"),
    (["xt.npy", "y.npy"], "X: '{d}/xt.npy' is not a .npy file (it starts with text"),
    (["xyc.npz"], "X: '{d}/xyc.npz' holds complex numbers"),
])
def test_complex_text_and_foreign_files_are_one_line_naming_the_file(
        argv: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _foreign_files(tmp_path)
    code = main(["data", *(str(tmp_path / a) for a in argv)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert says.format(d=tmp_path) in err, err


def test_digits_print_both_spectra_the_warnings_and_the_rank_picture(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from specdyn.data import digits

    d = digits()
    np.save(tmp_path / "x.npy", d.X)
    np.save(tmp_path / "y.npy", d.Y)
    code, text, err = _run(["data", str(tmp_path / "x.npy"), str(tmp_path / "y.npy"),
                            "--drop-constant", "--kmax", "15", "--regime", "feature-learning"],
                           capsys)
    assert code == 0, err
    flat = " ".join(text.split())  # the lines are wrapped at 100 columns
    assert "exponent of the per-mode diagonal lambda_k (U^T G^w U)_kk" in flat
    assert "exponent of the eigenvalue spectrum of Sigma^1/2 G^w Sigma^1/2" in flat
    assert "warning: P = 10 outputs < D = 61 modes" in flat
    assert "warning: the fit window (modes 2..15) exceeds rank(C) = 9" in flat
    assert "rank-9 picture: the SVD of the input-output covariance C" in flat
    assert "eigenvalue 9 / eigenvalue 10 of the representation at t_end" in flat
    assert "learning times (90 % of gamma0 theta_k)" in flat
    assert "loss above least squares (theory / reference)" in flat
    assert all(len(line) <= 100 for line in text.splitlines())


def test_a_rotated_teacher_prints_both_betas(arrays: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, text, err = _run(["data", str(arrays / "rotated_x.npy"), str(arrays / "rotated_y.npy"),
                            "--kmax", "12", "--regime", "feature-learning"], capsys)
    assert code == 0, err
    flat = " ".join(text.split())
    assert "beta per input mode" in flat and "beta of the teacher's own spectrum" in flat
    code, text, _ = _run(["data", str(arrays / "rotated_x.npy"), str(arrays / "rotated_y.npy"),
                          "--kmax", "12", "--regime", "feature-learning", "--format", "json"],
                         capsys)
    s = json.loads(text)
    assert s["beta_teacher_spectrum"] == pytest.approx(BETA, abs=1e-8)  # planted
    assert abs(s["beta"] - BETA) > 0.4  # along the input modes: nearly flat (0.05)


def test_the_lazy_reference_is_skipped_by_default_and_integrated_on_request(
        arrays: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["data", str(arrays / "aligned_x.npy"), str(arrays / "aligned_y.npy"), "--kmax", "8",
            "--regime", "lazy", "--format", "json"]
    lazy = json.loads(_run(args, capsys)[1])["regimes"]["lazy"]["linear"]
    assert "reference_skipped" in lazy and "exponent_reference" not in lazy
    full = json.loads(_run([*args, "--reference", "always"], capsys)[1])["regimes"]["lazy"]
    assert "exponent_reference" in full["linear"]
    assert full["linear"]["misalignment_effect"] < lazy["max_R_t_inf"]


def test_constant_columns_can_be_dropped(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    _bad_files(tmp_path)
    code, text, err = _run(["data", str(tmp_path / "xconst.npy"), str(tmp_path / "y.npy"),
                            "--drop-constant", "--kmax", "8", "--regime", "lazy"], capsys)
    assert code == 0, err
    assert "15 columns kept" in text


def test_the_output_folder_is_replaced_whole(arrays: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """--out is one transaction: a rerun replaces the folder (no file of the old one stays),
    and a write that fails half-way (here: the figure) leaves the old folder whole."""
    from specdyn.study import data_study as study_mod

    out = arrays / "out"
    args = ["data", str(arrays / "aligned_x.npy"), str(arrays / "aligned_y.npy"), "--kmax",
            "8", "--regime", "lazy", "--out", str(out)]
    assert _run(args, capsys)[0] == 0
    (out / "stale.txt").write_text("from before")
    assert _run(args, capsys)[0] == 0
    assert not (out / "stale.txt").exists() and (out / "data.json").exists()
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def broken(self: object) -> None:
        raise RuntimeError("the figure failed")

    monkeypatch.setattr(study_mod.DataStudy, "figure", broken)
    with pytest.raises(RuntimeError, match="the figure failed"):
        main(args)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert not [p for p in arrays.iterdir() if p.name.startswith(".out.")]  # no leftovers


def test_help_names_every_file_kind_the_reader_takes(capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    from specdyn.data.files import SUFFIXES

    with pytest.raises(SystemExit):
        main(["data", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert all(sfx in text for sfx in SUFFIXES)


def test_a_file_read_in_blocks_gives_the_same_numbers_and_says_where_it_is(
        arrays: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Blocks of 37 rows (a .npy read by rows, as a file larger than memory is): the
    summary of one pass over the whole; every stage announces itself on stderr when it
    may take more than a few seconds (here: all of them, the threshold set to 0)."""
    from specdyn.data import moments
    from specdyn.study import data_study

    args = ["data", str(arrays / "rotated_x.npy"), str(arrays / "rotated_y.npy"), "--kmax", "8",
            "--regime", "feature-learning", "--format", "json"]
    whole = json.loads(_run(args, capsys)[1])
    monkeypatch.setattr(moments, "BLOCK_BYTES", 8 * 37 * (2 * D))
    monkeypatch.setattr(data_study, "STAGE_FLOPS", 0.0)
    code, text, err = _run(args, capsys)
    assert code == 0, err
    blocks = json.loads(text)
    for key in ("alpha", "alpha_plus_beta", "beta", "output_overlap", "beta_teacher_spectrum"):
        assert blocks[key] == pytest.approx(whole[key], rel=1e-9, abs=1e-12)
    assert blocks["alpha_ci"] == pytest.approx(whole["alpha_ci"], rel=1e-9)
    stages = [line for line in err.splitlines() if line.startswith("specdyn data: ")]
    assert [s.split(":")[1].split()[0] for s in stages] == ["reading", "the",
                                                             "feature-learning"]
