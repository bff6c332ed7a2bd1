"""Every output path of every command: an unusable one is refused in one line, exit 2,
before any work starts.

Generated from the parser: every subcommand's options whose ``type`` is an output
converter (:func:`specdyn.cli._args.output_path`, marked ``output_kind``) get every
case below, so a new command's output is covered as soon as it uses the converter;
an option named like an output that does not use it fails
:func:`test_every_output_option_uses_the_shared_check`. The cases are what fails for
root as for a normal user: a file in the way, a folder where a file is needed, a
system folder that refuses new files (``/proc``, ``/sys``: permission bits would not
stop root), and a device without free space (a real full tmpfs where this test may
mount one, and the free-space reading patched to a full device everywhere).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from specdyn.cli import build_parser, check_output, main

#: What each command with an output needs besides it; a command with an output option
#: missing here fails test_every_command_with_an_output_is_listed.
REST = {
    "reproduce": ["fig2"],
    "run": ["{tmp}/ok.toml"],
    "sweep": ["{tmp}/sweep.toml"],
    "analyze": ["{tmp}/w.npy", "--plot"],
    "report": ["{tmp}"],
    "data": ["{tmp}/w.npy", "{tmp}/w.npy"],
}
#: Outputs that no command writes to disk (printed on stdout only).
STDOUT_ONLY = {"theory", "regime", "results"}
_OUTPUT_NAMES = ("--out", "--output", "--save", "-o")


def _outputs() -> list[tuple[str, str, str, tuple[str, ...]]]:
    """(command, option, kind, suffixes) for every output option of every subcommand."""
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    found = []
    for name, parser in sorted(sub.choices.items()):
        for action in parser._actions:
            kind = getattr(action.type, "output_kind", None)
            if kind:
                found.append((name, action.option_strings[-1], kind,
                              getattr(action.type, "suffixes", ())))
    return found


OUTPUTS = _outputs()


def test_every_output_option_uses_the_shared_check() -> None:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    plain = [f"{name} {opt}" for name, parser in sub.choices.items()
             for action in parser._actions for opt in action.option_strings
             if opt in _OUTPUT_NAMES and not getattr(action.type, "output_kind", None)]
    assert plain == []


def test_every_command_with_an_output_is_listed() -> None:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    with_output = {c for c, *_ in OUTPUTS}
    assert with_output == set(REST)
    assert set(sub.choices) == with_output | STDOUT_ONLY
    assert {"reproduce", "analyze", "report", "sweep", "run"} <= with_output


def _setup(tmp: Path) -> None:
    (tmp / "ok.toml").write_text('experiment = "simulate"\nsteps = 2\n')
    np.save(tmp / "w.npy", np.random.default_rng(0).standard_normal((12, 8)))
    (tmp / "afile").write_text("x")
    (tmp / "sweep.toml").write_text('experiment = "simulate"\nsteps = 2\n[sweep]\nseeds = [1]\n')
    (tmp / "adir").mkdir()
    (tmp / "adir.parquet").mkdir()


def _bad_paths(tmp: Path, kind: str, suffixes: tuple[str, ...]) -> dict[str, tuple[str, str]]:
    """case -> (path, what the message must say)."""
    name = "out" + (suffixes[0] if suffixes else (".html" if kind == "file" else ""))
    cases = {"under-a-file": (f"{tmp}/afile/{name}", "a file, not a folder")}
    if kind == "folder":
        cases["is-a-file"] = (f"{tmp}/afile", "is a file, not a folder")
    else:
        cases["is-a-folder"] = (f"{tmp}/adir" + (suffixes[0] if suffixes else ""),
                                "not a file")
        if suffixes:
            cases["wrong-suffix"] = (f"{tmp}/out.txt", f"must name a {suffixes[0]} file")
    for system in ("/proc", "/sys"):  # refuse new files even to root
        if Path(system).is_dir():
            cases[f"in-{system[1:]}"] = (f"{system}/specdyn-test/{name}",
                                         f"no file can be created in '{system}'")
    return cases


CASES = [(cmd, opt, case, path, says)
         for cmd, opt, kind, suffixes in OUTPUTS
         for case, (path, says) in _bad_paths(Path("{tmp}"), kind, suffixes).items()]


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as stop:
        code = int(stop.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def _assert_refused(code: int, out: str, err: str, option: str, says: str) -> None:
    assert code == 2, err
    assert out == ""  # nothing started: every command prints before it works
    assert err.count("\n") == 1 and err.startswith("specdyn "), err
    assert "Traceback" not in err
    assert option in err and says in err, err


@pytest.mark.parametrize("cmd, option, case, path, says", CASES,
                         ids=[f"{c[0]}{c[1]}-{c[2]}" for c in CASES])
def test_unusable_output_is_one_line_exit_2(cmd: str, option: str, case: str, path: str,
                                            says: str, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    _setup(tmp_path)
    monkeypatch.chdir(tmp_path)  # a command that wrongly ran would write here, not in the repo
    before = sorted(tmp_path.rglob("*"))
    argv = [cmd, *(a.format(tmp=tmp_path) for a in REST[cmd]), option,
            path.format(tmp=tmp_path)]
    _assert_refused(*_run(argv, capsys), option, says)
    assert sorted(tmp_path.rglob("*")) == before  # nothing written, no probe file left


@pytest.mark.parametrize("cmd, option", sorted({(c[0], c[1]) for c in OUTPUTS}))
def test_no_space_is_one_line_exit_2(cmd: str, option: str, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    """``os.statvfs`` patched to a full device: every output option reports it."""
    _setup(tmp_path)
    monkeypatch.chdir(tmp_path)
    kind, suffixes = next((k, s) for c, o, k, s in OUTPUTS if (c, o) == (cmd, option))
    real = os.statvfs

    def full(path: str | os.PathLike[str]) -> os.statvfs_result:  # every block used
        st = real(path)
        return os.statvfs_result((st.f_bsize, st.f_frsize, max(st.f_blocks, 1), 0, 0,
                                  *st[5:]))

    monkeypatch.setattr(os, "statvfs", full)
    path = tmp_path / "new" / ("out" + (suffixes[0] if suffixes else ".html")
                               if kind == "file" else "out")
    argv = [cmd, *(a.format(tmp=tmp_path) for a in REST[cmd]), option, str(path)]
    _assert_refused(*_run(argv, capsys), option, "no space left on the device")


@pytest.mark.parametrize("argv, option", [
    (["report", "/proc/self"], "--out"),
    (["sweep", "{tmp}/sweep.toml"], "--out"),
    (["analyze", "{tmp}/w.npy", "--plot"], "--out"),
], ids=["report", "sweep", "analyze"])
def test_default_outputs_are_checked_too(argv: list[str], option: str, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Defaults computed by the command (not by argparse) go through the same check:
    here the current folder is ``/proc``, where no file can be created."""
    if not Path("/proc").is_dir():
        pytest.skip("needs /proc (Linux)")
    _setup(tmp_path)
    monkeypatch.chdir("/proc")
    code, out, err = _run([a.format(tmp=tmp_path) for a in argv], capsys)
    _assert_refused(code, out, err, option, "no file can be created")
    assert "the default" in err


def test_a_writable_output_passes_and_leaves_no_probe(tmp_path: Path) -> None:
    for kind, path in (("folder", tmp_path / "a" / "b"), ("folder", tmp_path),
                       ("file", tmp_path / "c" / "r.html"), ("file", tmp_path / "r.html")):
        check_output(path, kind)
    assert list(tmp_path.iterdir()) == []  # nothing created, the probe file removed


def test_output_converter_refuses_through_argparse() -> None:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    convert = next(a.type for a in sub.choices["run"]._actions if a.dest == "out")
    with pytest.raises(argparse.ArgumentTypeError, match="is a file"):
        convert(__file__)


@pytest.mark.skipif(sys.platform != "linux" or os.geteuid() != 0,
                    reason="mounting a tmpfs needs root on Linux")
def test_a_real_full_device_is_refused(tmp_path: Path) -> None:
    """A real full file system (an 8 kB tmpfs filled up), where this machine lets us mount."""
    mnt = tmp_path / "full"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8k", "tmpfs", str(mnt)],
                      capture_output=True).returncode != 0:
        pytest.skip("mount not permitted here (container without CAP_SYS_ADMIN)")
    try:
        with open(mnt / "fill", "wb") as f:
            try:
                f.write(b"\0" * 100_000)
                f.flush()
            except OSError:
                pass
        for argv in (["reproduce", "fig2", "--out", f"{mnt}/o"],
                     ["report", str(tmp_path), "--out", f"{mnt}/r.html"]):
            res = subprocess.run([sys.executable, "-m", "specdyn", *argv], capture_output=True,
                                 text=True, timeout=120)
            _assert_refused(res.returncode, res.stdout, res.stderr, "--out",
                            "no space left on the device")
    finally:
        subprocess.run(["umount", str(mnt)], check=False)
