"""Checkpoint layouts, the layer verdict, ``measure.analyze`` and ``specdyn analyze`` outputs.

Synthetic checkpoints with the key layouts of real ones (no network): a bare
state_dict, ``{step, model_state, optimizer_state}`` (resemblyzer's layout),
Lightning's ``{state_dict, optimizer_states, lr_schedulers, epoch}``, HF/plain
``model_state_dict``/``model``/``module`` wrappers and DataParallel prefixes.
"""

from __future__ import annotations

import collections
import json
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from specdyn.cli import main
from specdyn.measure import (
    VERDICT_MP,
    VERDICT_POWER_LAW,
    Skipped,
    analyze,
    covariance_spectrum,
    layer_verdict,
    load_tensors,
    state_tensors,
    summarize_matrix,
)


def _model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(40, 60), torch.nn.ReLU(), torch.nn.Linear(60, 30))


def _adam_state(model: torch.nn.Module) -> dict:
    opt = torch.optim.Adam(model.parameters())
    model(torch.randn(8, 40)).sum().backward()
    opt.step()
    return opt.state_dict()


WEIGHTS = {"0.weight", "0.bias", "2.weight", "2.bias"}


@pytest.mark.parametrize("layout", ["bare", "model_state", "lightning", "model_state_dict",
                                    "model", "module", "dataparallel", "compiled"])
def test_layouts_give_model_tensors_and_skip_the_rest(tmp_path: Path, layout: str) -> None:
    m = _model()
    sd = m.state_dict()
    opt = _adam_state(m)
    prefixed = collections.OrderedDict((f"module.{k}", t) for k, t in sd.items())
    obj = {
        "bare": sd,
        "model_state": {"step": 100, "model_state": sd, "optimizer_state": opt},
        "lightning": {"epoch": 3, "global_step": 90, "state_dict": sd,
                      "optimizer_states": [opt], "lr_schedulers": [{"last_epoch": 3}]},
        "model_state_dict": {"model_state_dict": sd, "optimizer_state_dict": opt, "loss": 0.1},
        "model": {"model": sd, "optimizer": opt},
        "module": {"module": prefixed},
        "dataparallel": prefixed,
        "compiled": {f"_orig_mod.{k}": t for k, t in sd.items()},
    }[layout]
    path = tmp_path / "ck.pt"
    torch.save(obj, path)
    tensors = load_tensors(path)
    weights = {k for k, t in tensors.items() if not isinstance(t, Skipped)}
    assert weights == WEIGHTS
    skipped = {k: t.reason for k, t in tensors.items() if isinstance(t, Skipped)}
    for key, why in skipped.items():
        if "optim" in key:  # Adam: step, exp_avg, exp_avg_sq for each of 4 parameters
            assert why.startswith("optimizer state (12 tensors") and "not model weights" in why
        else:
            assert why, key
    # Nothing from the optimizer is ever measured.
    df = analyze(path)
    measured = set(df.loc[df.status == "measured", "layer"])
    assert measured == {"0.weight", "2.weight"}
    assert set(df.layer) == set(tensors)


def test_optimizer_state_dict_alone_is_skipped_whole() -> None:
    m = _model()
    out = state_tensors({"model": m.state_dict(), "opt": _adam_state(m)})
    assert isinstance(out["opt"], Skipped) and "optimizer state (12 tensors" in out["opt"].reason


def test_analyze_accepts_module_and_state_dict() -> None:
    m = _model()
    a, b = analyze(m, n_boot=20), analyze(m.state_dict(), n_boot=20)
    pd.testing.assert_frame_equal(a, b)
    assert list(a.layer) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert list(a.status) == ["measured", "skipped", "measured", "skipped"]
    assert a.loc[0, "verdict"] and a.loc[1, "reason"].startswith("1-D tensor")
    assert a.exponent.dtype == np.float64 and str(a.n_outliers.dtype) == "Int64"


@pytest.mark.slow
def test_noise_gets_mp_verdict_never_power_law() -> None:
    """>= 95 % MP verdicts on 200 pure-noise matrices, never "power law".

    The rest are "bulk + 1 outlier": the outlier test's family-wise false
    positive rate at alpha = 0.05 (measured here: 9 of 200).
    """
    verdicts = collections.Counter()
    for seed in range(200):
        W = np.random.default_rng(1000 + seed).standard_normal((200, 100))
        verdicts[summarize_matrix("w", W, n_boot=0).verdict] += 1
    assert verdicts[VERDICT_MP] >= 190, verdicts
    assert verdicts[VERDICT_POWER_LAW] == 0, verdicts
    assert set(verdicts) <= {VERDICT_MP, "bulk + 1 outlier", "bulk + 2 outliers"}, verdicts


def test_planted_power_law_gets_power_law_verdict() -> None:
    """a = 1, D = 512, M = 4096 (the sample covariance of lambda_k = 1/k): "power law"."""
    rng = np.random.default_rng(0)
    D, M = 512, 4096
    F = rng.standard_normal((M, D)) * np.arange(1, D + 1) ** -0.5
    s = summarize_matrix("F", F, center=True, n_boot=50)
    assert s.verdict == VERDICT_POWER_LAW
    assert s.fit is not None and abs(s.fit.exponent - 1.0) < 0.05 and not s.fit.short_window


def test_verdict_rules_on_constructed_fits() -> None:
    """Spiked noise: "bulk + k outliers"; the verdict function needs no spectrum."""
    rng = np.random.default_rng(4)
    W = rng.standard_normal((400, 200))
    W[:, :2] *= np.array([5.0, 4.0])
    s = summarize_matrix("w", W, n_boot=0)
    assert s.verdict == "bulk + 2 outliers"
    assert layer_verdict(s.fit, s.mp, s.outliers) == s.verdict
    assert layer_verdict(None, None, None).startswith("unclear")
    eigs = covariance_spectrum(rng.standard_normal((300, 100)))
    assert summarize_matrix("x", rng.standard_normal((300, 100)), center=True).verdict \
        == VERDICT_MP
    assert eigs.size == 100


# ---------------------------------------------------------------- command line


def _save_checkpoint(path: Path) -> None:
    m = _model()
    torch.save({"step": 5, "model_state": m.state_dict(), "optimizer_state": _adam_state(m)},
               path)


def test_cli_json_csv_and_parquet_agree(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "ck.pt"
    _save_checkpoint(path)
    assert main(["analyze", str(path), "--format", "json", "--save",
                 str(tmp_path / "t.parquet")]) == 0
    out = capsys.readouterr().out
    rows = json.loads(out)  # stdout is pure JSON
    assert [r["layer"] for r in rows] == ["0.weight", "0.bias", "2.weight", "2.bias",
                                          "step", "optimizer_state"]
    for r in rows:
        for key in ("layer", "shape", "status", "reason", "exponent", "ci", "verdict",
                    "n_outliers", "cap_reached"):
            assert key in r
        if r["status"] == "measured":
            assert r["ci"][0] <= r["exponent"] <= r["ci"][1] and r["verdict"]
            assert isinstance(r["n_outliers"], int) and isinstance(r["cap_reached"], bool)
        else:
            assert r["status"] == "skipped" and r["reason"] and r["exponent"] is None
    assert "NaN" not in out
    df = pd.read_parquet(tmp_path / "t.parquet")
    assert list(df.layer) == [r["layer"] for r in rows]
    np.testing.assert_allclose(df.exponent.to_numpy(dtype=float)[[0, 2]],
                               [rows[0]["exponent"], rows[2]["exponent"]])
    assert main(["analyze", str(path), "--format", "csv"]) == 0
    csv = capsys.readouterr().out
    import io

    dfc = pd.read_csv(io.StringIO(csv))
    assert list(dfc.layer) == list(df.layer) and list(dfc.status) == list(df.status)


def test_cli_table_shows_verdict_and_optimizer_skip(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # the one-row-per-tensor table, not the wrapped one
    path = tmp_path / "ck.pt"
    _save_checkpoint(path)
    assert main(["analyze", str(path)]) == 0
    out = capsys.readouterr().out
    assert "verdict" in out and "skipped: optimizer state" in out
    assert "2 analysed, 4 listed with a reason" in out


class _Payload:
    """Unpickling this would create a file: proof that code never runs."""

    target = ""

    def __reduce__(self) -> tuple:
        return (open, (self.target, "w"))


@pytest.mark.parametrize("case", ["no_matrix", "truncated", "code", "module"])
def test_cli_bad_files_one_line_exit_2_nothing_written(tmp_path: Path, case: str,
                                                      capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "bad.pt"
    marker = tmp_path / "ran"
    if case == "no_matrix":
        torch.save({"bias": torch.zeros(5), "step": 3}, path)
        why = "holds no tensor with 2 or more axes"
    elif case == "truncated":
        _save_checkpoint(tmp_path / "ok.pt")
        data = (tmp_path / "ok.pt").read_bytes()
        path.write_bytes(data[: len(data) // 2])
        why = "truncated"
    elif case == "code":
        payload = _Payload()
        payload.target = str(marker)
        path.write_bytes(pickle.dumps({"w": payload}, protocol=2))
        why = "needs code to be unpickled"
    else:
        torch.save(_model(), path)
        why = "torch.nn.modules.container.Sequential"
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    code = main(["analyze", str(path), "--save", str(out_dir / "t.parquet"), "--plot",
                 "--out", str(out_dir)])
    captured = capsys.readouterr()
    assert code == 2
    err = captured.err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith("specdyn analyze: error: PATH: ") and "bad.pt" in err and why in err
    assert captured.out == ""
    assert list(out_dir.iterdir()) == [] and not marker.exists()


@pytest.mark.parametrize(("args", "arg"), [(["--top", "0"], "--top"),
                                           (["--alpha", "2"], "--alpha"),
                                           (["--save", "t.csv"], "--save")])
def test_cli_bad_options_name_the_option(tmp_path: Path, capsys: pytest.CaptureFixture,
                                         args: list[str], arg: str) -> None:
    path = tmp_path / "ck.pt"
    _save_checkpoint(path)
    try:  # found by the command (returns 2) or by the parser's type check (exits 2)
        code = main(["analyze", str(path), *args])
    except SystemExit as stop:
        code = stop.code
    assert code == 2
    err = capsys.readouterr().err.strip()
    # argparse's type checks print "argument --save: ...", the command's own checks "--alpha: ..."
    assert err.removeprefix("specdyn analyze: error: ").removeprefix("argument ").startswith(
        f"{arg}: ") and len(err.splitlines()) == 1


def test_help_has_no_double_percent(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        main(["analyze", "--help"])
    out = capsys.readouterr().out
    assert "%%" not in out and "--format" in out
