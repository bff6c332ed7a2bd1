"""The command line: theory tables, regime report, one-line errors, version."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout

import pytest

from specdyn import PowerLawSetting, __version__, theory
from specdyn.cli import main


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse exits on --version / bad options
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def test_theory_json_matches_library() -> None:
    code, out, _ = run_cli("theory", "--k", "1,10", "--t", "0,5,inf", "--format", "json")
    assert code == 0
    rows = json.loads(out)["rows"]
    s = PowerLawSetting.paper(0.1, 2.0)
    for r in rows:
        assert r["rho"] == pytest.approx(float(theory.rho(s, r["k"], r["t"])), rel=1e-12)
        assert r["region"] == str(theory.region(s, r["k"], r["t"]))
    assert len(rows) == 6


def test_theory_log_range_and_csv() -> None:
    code, out, _ = run_cli("theory", "--k", "log:1:1e3:4", "--t", "lin:0:10:3", "--format", "csv",
                           "--first-layer")
    assert code == 0
    lines = out.strip().splitlines()
    assert lines[0] == "k,t,rho,alpha_eff,region" and len(lines) == 1 + 12


def test_regime_command() -> None:
    code, out, _ = run_cli("regime", "--sigma-w", "1", "--gamma0-ratio", "0.5", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["regime"] == "lazy"
    assert data["k_u"] == pytest.approx(theory.k_u(PowerLawSetting.paper(1.0, 0.5)))


@pytest.mark.parametrize("argv, name", [
    (("theory", "--gamma0", "-1"), "gamma0"),
    (("theory", "--sigma-w", "0"), "--sigma-w"),
    (("theory", "--k", "0.5"), "k"),
    (("theory", "--t", "-1"), "t"),
    (("regime", "--alpha", "nan"), "alpha"),
])
def test_bad_input_is_a_one_line_error(argv: tuple[str, ...], name: str) -> None:
    code, out, err = run_cli(*argv)
    assert code == 2
    assert name in err and err.count("\n") == 1 and out == ""


def test_unparseable_list_exits_2() -> None:
    code, _, err = run_cli("theory", "--k", "log:1:x:3")
    assert code == 2 and "expected a comma list" in err


def test_version_and_module_entry_point() -> None:
    res = subprocess.run([sys.executable, "-m", "specdyn", "--version"], capture_output=True,
                         text=True, check=True)
    assert res.stdout.strip() == f"specdyn {__version__}"
