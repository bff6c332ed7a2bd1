"""A command cancelled by SIGINT or SIGTERM: one line, exit 128 + signal, whatever the
process inherited (issue 34). The sweep's own cancel (workers stopped, finished points
kept, no partial file) is tested in ``tests/experiments/test_sweep_interrupt.py``.

Each case runs ``specdyn.cli.main`` in a fresh interpreter whose ``theory`` command is
replaced by one that signals its own process and then waits: the signal, not the clock,
ends it (the wait is only a bound for a broken handler).
"""

from __future__ import annotations

import signal
import subprocess
import sys

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
