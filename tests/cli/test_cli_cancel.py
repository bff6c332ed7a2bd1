"""A command cancelled by SIGINT or SIGTERM: one line, exit 128 + signal, whatever the
process inherited. The sweep's own cancel (workers stopped, finished points
kept, no partial file) is tested in ``tests/experiments/test_sweep_interrupt.py``.

Each case runs ``specdyn.cli.main`` in a fresh interpreter whose ``theory`` command is
replaced by one that signals its own process and then waits: the signal, not the clock,
ends it (the wait is only a bound for a broken handler).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from specdyn.cli import cancel_handlers, main

_SCRIPT = r"""
import os, signal, sys, time
import specdyn.cli.theory as theory
from specdyn.cli import main

def signals_itself(args):
    os.kill(os.getpid(), signal.{sig})
    time.sleep(60)  # a broken handler: the test's timeout ends it, and fails
    return 0

theory._theory_cmd = signals_itself
sys.exit(main(["theory"]))
"""


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as `&` and nohup start a job


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_cancels_a_command_started_with_sigint_ignored(sig: signal.Signals) -> None:
    res = subprocess.run([sys.executable, "-c", _SCRIPT.format(sig=sig.name)],
                         capture_output=True, text=True, timeout=45, preexec_fn=_ignore_sigint)
    assert res.returncode == 128 + sig, res.stderr
    assert res.stderr == (f"specdyn theory: interrupted by {sig.name} "
                          "(finished results are kept)\n")


def test_handlers_are_restored_after_a_command(capsys: pytest.CaptureFixture[str]) -> None:
    """main() called in-process (a notebook, a test) leaves the caller's handlers alone."""
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    assert main(["theory", "--k", "1", "--t", "0"]) == 0
    assert {s: signal.getsignal(s) for s in before} == before
    with cancel_handlers():
        assert signal.getsignal(signal.SIGTERM) is not before[signal.SIGTERM]
    assert {s: signal.getsignal(s) for s in before} == before
    capsys.readouterr()


def _signal_in_a_library(sig: signal.Signals) -> None:
    """matplotlib (pybind11), interrupted while it reads a transform, raises ``ValueError:
    Invalid affine transformation matrix``."""
    try:
        signal.raise_signal(sig)  # the handler runs here, inside the "library"
    except BaseException:
        raise ValueError("Invalid affine transformation matrix") from None


def _signal_in_a_callback(sig: signal.Signals) -> None:
    """A weakref callback: Python prints what it raises ("Exception ignored in") and goes on."""
    class Obj:
        pass

    obj = Obj()
    ref = weakref.ref(obj, lambda r: signal.raise_signal(sig))
    del obj
    assert ref() is None


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("swallow", [_signal_in_a_library, _signal_in_a_callback],
                         ids=["library-error", "callback"])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_cancel_a_library_swallows_is_still_a_cancel(
        sig: signal.Signals, swallow: Callable[[signal.Signals], None], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Both found by cancelling ``reproduce fig2`` while it saved its figure: the cancel
    counted as a crashed experiment (exit 1, a failed record) and the next experiment ran;
    or a traceback was printed and the command finished as if never cancelled."""
    from specdyn.runs import registry

    @dataclass(frozen=True)
    class SwallowConfig:
        seed: int = 0

    ran = []

    def run(cfg: SwallowConfig, out: Path) -> registry.ExperimentResult:
        ran.append(cfg)
        swallow(sig)
        return registry.ExperimentResult("cancel-probe", out)

    registry.names()  # the built-in experiments first
    probe = registry.Experiment("cancel-probe", "test probe", SwallowConfig, run,
                                full=SwallowConfig)
    monkeypatch.setitem(registry._REGISTRY, "cancel-probe", probe)
    monkeypatch.setitem(registry._REGISTRY, "cancel-probe-2", probe)
    code = main(["reproduce", "cancel-probe", "cancel-probe-2", "--out", str(tmp_path / "o"),
                 "--jobs", "1"])
    out, err = capsys.readouterr()
    assert code == 128 + sig, (out, err)
    assert err == (f"specdyn reproduce: interrupted by {sig.name} (finished results are "
                   "kept)\n")
    assert len(ran) == 1  # the cancel stopped the command: the second experiment never ran
    assert "FAILED" not in out
    files = sorted(p.name for p in (tmp_path / "o").rglob("*") if p.is_file()) \
        if (tmp_path / "o").exists() else []
    # no failed record, no claims table; a run that returned is a finished folder
    assert files in ([], ["record.json"]), files


_EXITING = r"""
import atexit, os, signal, sys, time
import specdyn.cli.theory as theory
from specdyn.cli import console

def finishes(args):
    print("done")
    def signal_while_exiting():
        for _ in range({count}):
            os.kill(os.getpid(), signal.{sig})
            time.sleep(0.2)
        time.sleep({wait})  # a shutdown that hangs: only a second signal ends it early
    atexit.register(signal_while_exiting)
    return 0

theory._theory_cmd = finishes
sys.argv = ["specdyn", "theory"]
sys.exit(console())
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("count", [1, 2], ids=["one-signal", "two-signals"])
def test_a_finished_command_exits_0_when_a_signal_comes_while_it_exits(
        sig: signal.Signals, count: int) -> None:
    """The console script after its command: one signal is ignored (the shutdown goes on),
    a second ends the process at once, both with the command's status."""
    script = _EXITING.format(sig=sig.name, count=count, wait=1 if count == 1 else 60)
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=45)
    assert (res.returncode, res.stdout, res.stderr) == (0, "done\n", "")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_reproduce_that_wrote_everything_exits_0_when_a_signal_comes_while_it_prints(
        sig: signal.Signals, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Everything written (claims.parquet and claims.json), then the summary is printed:
    a signal there no longer turns the finished run into exit 130."""
    from specdyn.cli import reproduce
    from specdyn.runs import registry

    @dataclass(frozen=True)
    class DoneConfig:
        seed: int = 0

    def run(cfg: DoneConfig, out: Path) -> registry.ExperimentResult:
        return registry.ExperimentResult("done-probe", out)

    registry.names()
    monkeypatch.setitem(registry._REGISTRY, "done-probe", registry.Experiment(
        "done-probe", "test probe", DoneConfig, run, full=DoneConfig))
    closing = reproduce.closing_text

    def signalled(*args: Any, **kw: Any) -> str:
        signal.raise_signal(sig)  # the handler runs here, while the summary is printed
        return closing(*args, **kw)

    monkeypatch.setattr(reproduce, "closing_text", signalled)
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    code = main(["reproduce", "done-probe", "--out", str(tmp_path / "o"), "--threads", "1"])
    out, err = capsys.readouterr()
    assert (code, err) == (0, ""), out
    assert "claims: 0 held" in out
    assert (tmp_path / "o" / "claims.json").is_file()
    assert {s: signal.getsignal(s) for s in before} == before  # and the caller's handlers


_SWALLOWS = r"""
import signal, sys
import specdyn.cli.theory as theory
from specdyn.cli import main

def swallows(args):
    try:
        signal.raise_signal(signal.SIGTERM)  # the handler runs here, inside the "library"
    except BaseException:
        pass  # swallowed, as a library might
    print("done")
    return 0

theory._theory_cmd = swallows
sys.exit(main(["theory"]))
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_cancel_before_the_work_was_done_still_counts() -> None:
    """The other side of the line: a signal that came while the command worked, and that
    it swallowed, is a cancel even though the command went on and returned."""
    res = subprocess.run([sys.executable, "-c", _SWALLOWS], capture_output=True, text=True,
                         timeout=45)
    assert res.returncode == 143, (res.stdout, res.stderr)
    assert res.stderr == ("specdyn theory: interrupted by SIGTERM (finished results are "
                          "kept)\n")
