"""Bad input, table-driven: every case is refused with the right type, the argument named,
and one line without a traceback.

API cases assert the exception type and that the message names the argument.
CLI cases run ``specdyn.cli.main`` in-process (as the console script does) and
assert exit code 2 (1 for a diverging run), an empty stdout for input errors,
exactly one stderr line of the form ``specdyn <cmd>: error: ...`` naming the
argument, and no traceback.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from specdyn import AlignedSetting, PowerLawSetting, theory
from specdyn.cli import main
from specdyn.experiments.nonlinear_figures.config import Fig4Config
from specdyn.experiments.simulate.config import SimulateConfig
from specdyn.runs.config import config_from_dict

BASE = dict(alpha=1.0, beta=1.0, sigma_w=0.1, sigma_a=1.0, gamma0=1.0)
PAPER = PowerLawSetting.paper(0.1, 2.0)
ALIGNED = AlignedSetting([1.0, 0.5, 0.25], [1.0, 0.5, 0.1], 0.1, 1.0, 1.0)

# --------------------------------------------------------------------------- API

API: list[tuple[str, Callable[[], Any], type[Exception], str]] = []


def api(case: str, fn: Callable[[], Any], name: str, exc: type[Exception] = ValueError) -> None:
    API.append((case, fn, exc, name))


for field in ("alpha", "beta", "sigma_w", "sigma_a", "gamma0", "lambda0", "mu0"):
    for bad in (0.0, -1.0, float("nan"), float("inf"), "1", None, True):
        api(f"setting-{field}-{bad!r}", lambda f=field, b=bad: PowerLawSetting(**{**BASE, f: b}),
            field)
for field in ("sigma_w", "sigma_a"):
    for bad in (1e200, 1e-200):
        api(f"setting-{field}-{bad:g}", lambda f=field, b=bad: PowerLawSetting(**{**BASE, f: b}),
            field)
for bad in (0, -3, 2.5, "4"):
    api(f"setting-D-{bad!r}", lambda b=bad: PowerLawSetting(**BASE, D=b), "D")
api("setting-unrepresentable-gamma0", lambda: PowerLawSetting(**{**BASE, "gamma0": 1e300,
                                                                  "mu0": 1e100}), "gamma0")
api("setting-unrepresentable-lambda0",
    lambda: PowerLawSetting(**{**BASE, "lambda0": 1e300, "sigma_a": 1e10}), "lambda0")
api("setting-unrepresentable-R", lambda: PowerLawSetting(**{**BASE, "sigma_w": 1e-150,
                                                             "gamma0": 1e10}), "sigma_w")
for bad in (0.0, -1.0, float("nan"), float("inf")):
    api(f"paper-gamma0_ratio-{bad!r}", lambda b=bad: PowerLawSetting.paper(0.1, b),
        "gamma0_ratio")
api("paper-alpha+beta<=1", lambda: PowerLawSetting.paper(0.1, 2.0, alpha=0.5, beta=0.5),
    "alpha + beta")
api("aligned-lengths", lambda: AlignedSetting([1.0, 0.5], [1.0], 0.1, 1.0, 1.0), "same length")
api("aligned-lam<=0", lambda: AlignedSetting([1.0, 0.0], [1.0, 1.0], 0.1, 1.0, 1.0), "lam")
api("aligned-mu<0", lambda: AlignedSetting([1.0, 0.5], [1.0, -1.0], 0.1, 1.0, 1.0), "mu")
api("aligned-lam-nan", lambda: AlignedSetting([1.0, np.nan], [1.0, 1.0], 0.1, 1.0, 1.0), "lam")
api("aligned-2d", lambda: AlignedSetting([[1.0]], [[1.0]], 0.1, 1.0, 1.0), "1-D")

GRID_FNS = {name: getattr(theory, name) for name in (
    "rho", "xi", "eta", "zeta", "delta_eta", "alpha_eff", "mode_loss", "region",
    "region_quantities", "rho_first_layer", "xi_first_layer", "alpha_eff_first_layer",
    "region_first_layer")}
for fname, fn in GRID_FNS.items():
    for bad_k in (0.5, float("nan"), -1.0, "a", []):
        api(f"{fname}-k-{bad_k!r}", lambda f=fn, k=bad_k: f(PAPER, k, 1.0), "k")
    for bad_t in (-1.0, float("nan"), "x"):
        api(f"{fname}-t-{bad_t!r}", lambda f=fn, t=bad_t: f(PAPER, 1.0, t), "t")
    api(f"{fname}-k-None", lambda f=fn: f(PAPER, None, 1.0), "k must be numeric, got None")
    api(f"{fname}-t-None", lambda f=fn: f(PAPER, 1.0, [0.0, None]),
        "t must be numeric, got None")
    api(f"{fname}-broadcast", lambda f=fn: f(PAPER, [1.0, 2.0], [1.0, 2.0, 3.0]), "broadcast")
for fname in ("t_learn", "t_cross", "t_layer"):
    for bad_k in (0.5, float("inf"), "a"):
        api(f"{fname}-k-{bad_k!r}", lambda f=fname, k=bad_k: getattr(theory, f)(PAPER, k), "k")
for fname in ("k_learn", "k_cross", "k_layer", "k2", "k_learn_first_layer"):
    for bad_t in (-1.0, float("nan")):
        api(f"{fname}-t-{bad_t!r}", lambda f=fname, t=bad_t: getattr(theory, f)(PAPER, t), "t")
api("time_to_xi-C<0", lambda: theory.time_to_xi(PAPER, 1.0, -1.0), "C")
api("time_to_xi-C-nan", lambda: theory.time_to_xi(PAPER, 1.0, np.nan), "C")
for bad in (0.5, float("nan"), "10"):
    api(f"regime-margin-{bad!r}", lambda b=bad: theory.regime(PAPER, margin=b), "margin")
for fname in ("k_u", "k_l", "k_region_ii", "regime", "k1", "t_star", "asymptotic_exponents"):
    api(f"{fname}-aligned", lambda f=fname: getattr(theory, f)(ALIGNED), "PowerLawSetting")
api("rho-aligned-k>D", lambda: theory.rho(ALIGNED, 4, 1.0), "D = 3")
api("rho-aligned-k-fraction", lambda: theory.rho(ALIGNED, 1.5, 1.0), "integer")
api("rho-k>D", lambda: theory.rho(PowerLawSetting.paper(0.1, 2.0, D=10), 11, 1.0), "D = 10")
api("loss-no-D", lambda: theory.loss(PAPER, 1.0), "D")

for data, name in (({"M": 4}, "M"), ({"N": 2}, "N"), ({"alpha": "x"}, "alpha"),
                   ({"steps": 1.5}, "steps"), ({"bogus": 1}, "bogus"), ({"D": [1]}, "D"),
                   ({"sigma_w": -1.0}, "sigma_w"), ({"method": "adam"}, "method"),
                   ({"figure": "yes"}, "figure"), ({"seed": -1}, "seed")):
    api(f"simulate-config-{name}", lambda d=data: config_from_dict(SimulateConfig, d), name)
api("fig4-config-M", lambda: Fig4Config(M=4), "M = 4")
api("fig4-config-D", lambda: Fig4Config(D=8), "D = 8")


@pytest.mark.parametrize("case, fn, exc, name", API, ids=[c[0] for c in API])
def test_api_refuses(case: str, fn: Callable[[], Any], exc: type[Exception], name: str) -> None:
    with pytest.raises(exc) as info:
        fn()
    message = str(info.value)
    assert name in message, message
    assert "np.float64(" not in message and "\n" not in message


def test_cuda_without_cuda_is_a_value_error() -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("CUDA is present here")
    from specdyn._torch import resolve_device

    with pytest.raises(ValueError, match="CUDA is not available"):
        resolve_device("cuda")


# --------------------------------------------------------------------------- CLI

CLI: list[tuple[str, tuple[str, ...], str]] = []
OPTIONS = ("--alpha", "--beta", "--sigma-w", "--sigma-a", "--gamma0", "--gamma0-ratio",
           "--lambda0", "--mu0")
for cmd in ("theory", "regime"):
    for opt in OPTIONS:
        for bad in ("0", "-1", "nan", "inf", "abc"):
            CLI.append((f"{cmd}{opt}={bad}", (cmd, opt, bad), opt))
    CLI += [
        (f"{cmd}-sigma-w-huge", (cmd, "--sigma-w", "1e200"), "--sigma-w"),
        (f"{cmd}-sigma-a-tiny", (cmd, "--sigma-a", "1e-200"), "--sigma-a"),
        (f"{cmd}-gamma0-unrepresentable", (cmd, "--gamma0", "1e300", "--mu0", "1e100"),
         "--gamma0"),
        (f"{cmd}-both-gamma0s", (cmd, "--gamma0", "1", "--gamma0-ratio", "2"), "--gamma0"),
        (f"{cmd}-unknown-option", (cmd, "--bogus"), "--bogus"),
        (f"{cmd}-missing-value", (cmd, "--alpha"), "--alpha"),
    ]
for bad in ("log:0:10:5", "0.5", "nan", "", "lin:1:x:3", "log:1:10:0", "log:1:inf:3",
            "log:1:10", "-3,1", "1,,a"):
    CLI.append((f"theory-k={bad!r}", ("theory", "--k", bad), "--k"))
for bad in ("-1", "nan", "abc", "lin:-5:1:3"):
    CLI.append((f"theory-t={bad!r}", ("theory", "--t", bad), "--t"))
CLI += [
    ("theory-format", ("theory", "--format", "xml"), "--format"),
    ("regime-margin", ("regime", "--margin", "0.5"), "--margin"),
    ("regime-margin-nan", ("regime", "--margin", "nan"), "--margin"),
    ("first-layer-sigma-w-tiny", ("theory", "--first-layer", "--sigma-w", "1e-200"),
     "--sigma-w"),
    ("no-such-command", ("frobnicate",), "frobnicate"),
]
# integer and number options of the other commands: refused by argparse, before the command
# prints or reads anything (the files named need not exist), with the range in the message
for cmd, opt, bads in [(("reproduce", "fig2"), "--threads", ("0", "-2", "x", "1.5")),
                       (("sweep", "nope.toml"), "--workers", ("0", "-1", "x")),
                       (("sweep", "nope.toml"), "--timeout", ("0", "-1", "nan", "x")),
                       (("results", "nowhere"), "--max-rows", ("0", "-1", "x")),
                       (("analyze", "nope.npy"), "--top", ("0", "-3", "x")),
                       (("analyze", "nope.npy"), "--alpha", ("0", "1", "nan", "x"))]:
    for bad in bads:
        CLI.append((f"{cmd[0]}{opt}={bad}", (*cmd, opt, bad), opt))


def run_main(argv: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as stop:  # argparse exits; the console script does the same
        code = int(stop.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line(err: str, name: str, code: int, expected: int = 2) -> None:
    assert code == expected, err
    assert "Traceback" not in err
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert err.startswith("specdyn") and ": error: " in err, err
    assert name in err, err
    assert "np.float64(" not in err


@pytest.mark.parametrize("case, argv, name", CLI, ids=[c[0] for c in CLI])
def test_cli_refuses_in_one_line(case: str, argv: tuple[str, ...], name: str,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_main(argv, capsys)
    assert out == ""
    assert_one_line(err, name, code)


@pytest.mark.parametrize("argv", [("reproduce", "fig2", "--threads", "x"),
                                  ("reproduce", "fig2", "--threads", "0"),
                                  ("sweep", "nope.toml", "--workers", "x"),
                                  ("analyze", "nope.npy", "--top", "1.5"),
                                  ("results", "nowhere", "--max-rows", "x")])
def test_an_integer_option_says_its_range(argv: tuple[str, ...],
                                          capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_main(argv, capsys)
    assert code == 2 and out == ""
    assert f"argument {argv[2]}: " in err and "integer >= 1" in err, err


def _files(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "afile").write_text("x")
    (tmp_path / "m4.toml").write_text('experiment = "simulate"\nM = 4\n')
    (tmp_path / "type.toml").write_text('experiment = "simulate"\nalpha = "one"\n')
    (tmp_path / "unknown.toml").write_text('experiment = "no-such-experiment"\n')
    (tmp_path / "key.toml").write_text('experiment = "simulate"\nbogus_key = 1\n')
    (tmp_path / "broken.toml").write_text('experiment = "simulate"\nN = [\n')
    (tmp_path / "grid.toml").write_text('experiment = "simulate"\nsteps = 2\n[sweep]\nseeds = 2\n')
    (tmp_path / "grid-address.toml").write_text('experiment = "simulate"\n[sweep]\nseeds = 2\n'
                                                'address = "localhost"\n')
    ok = tmp_path / "ok.toml"
    ok.write_text('experiment = "simulate"\nsteps = 2\n')
    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / "record.json").write_text('{"status": "finished", "conf')
    listy = tmp_path / "listy"
    listy.mkdir()
    (listy / "record.json").write_text("[1, 2]")
    return {"tmp": tmp_path, "ok": ok, "corrupt": corrupt, "listy": listy}


FILE_CASES: list[tuple[str, tuple[str, ...], str]] = [
    ("run-missing-config", ("run", "{tmp}/nope.toml"), "nope.toml"),
    ("run-M=4", ("run", "{tmp}/m4.toml", "--out", "{tmp}/o"), "M"),
    ("run-wrong-type", ("run", "{tmp}/type.toml", "--out", "{tmp}/o"), "alpha"),
    ("run-unknown-experiment", ("run", "{tmp}/unknown.toml"), "no-such-experiment"),
    ("run-unknown-key", ("run", "{tmp}/key.toml"), "bogus_key"),
    ("run-broken-toml", ("run", "{tmp}/broken.toml"), "broken.toml"),
    ("run-out-is-a-file", ("run", "{ok}", "--out", "{tmp}/afile"), "--out"),
    ("run-out-under-a-file", ("run", "{ok}", "--out", "{tmp}/afile/sub"), "--out"),
    ("sweep-missing-config", ("sweep", "{tmp}/nope.toml"), "nope.toml"),
    ("sweep-out-is-a-file", ("sweep", "{ok}", "--out", "{tmp}/afile"), "--out"),
    ("sweep-address", ("sweep", "{tmp}/grid.toml", "--address", "localhost", "--out", "{tmp}/o"),
     "--address"),
    ("sweep-address-in-file", ("sweep", "{tmp}/grid-address.toml", "--out", "{tmp}/o"),
     "address"),
    ("report-dir-is-a-file", ("report", "{tmp}/afile"), "DIR"),
    ("report-dir-missing", ("report", "{tmp}/nowhere"), "DIR"),
    ("reproduce-out-is-a-file", ("reproduce", "fig2", "--out", "{tmp}/afile"), "--out"),
    ("reproduce-unknown", ("reproduce", "no-such-experiment"), "no-such-experiment"),
    ("results-missing", ("results", "{tmp}/nowhere"), "nowhere"),
    ("results-corrupt-record", ("results", "{corrupt}"), "record.json"),
    ("results-record-not-an-object", ("results", "{listy}"), "record.json"),
]


@pytest.mark.parametrize("case, argv, name", FILE_CASES, ids=[c[0] for c in FILE_CASES])
def test_cli_file_inputs_refused_in_one_line(case: str, argv: tuple[str, ...], name: str,
                                             tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    paths = {k: str(v) for k, v in _files(tmp_path).items()}
    code, out, err = run_main(tuple(a.format(**paths) for a in argv), capsys)
    assert out == ""
    assert_one_line(err, name, code)
    assert not (tmp_path / "o").exists()  # refused before any work


def test_diverging_run_is_one_line_exit_1(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "div.toml"
    cfg.write_text('experiment = "simulate"\ndt = 50.0\nsteps = 20\nN = 16\nD = 16\n'
                   'kmax = 8\nfigure = false\n')
    code, out, err = run_main(("run", str(cfg), "--out", str(tmp_path / "o")), capsys)
    assert_one_line(err, "diverged", code, expected=1)
    assert "step" in err
    # a failed run leaves no result folder; its record lies beside it, named in the message
    failed = tmp_path / "o" / "simulate.failed.json"
    assert str(failed) in err
    assert not (tmp_path / "o" / "simulate").exists()
    record = json.loads(failed.read_text())
    assert record["status"] == "failed"


def test_table_size() -> None:
    # the issue asks for at least 150 bad inputs, API and CLI together
    assert len(API) + len(CLI) + len(FILE_CASES) >= 150


def test_a_misspelt_choice_gets_did_you_mean(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_main(("analyze", "x.npy", "--format", "tabel"), capsys)
    assert_one_line(err, "--format", code)
    assert err.rstrip().endswith("(did you mean 'table'?)"), err
