"""Cold start of the command line: ``specdyn --help``, ``--version`` and a subcommand's help.

Run:  python benchmarks/cli_start.py [--repeat 15] [--before-src PATH]

Each command runs in a fresh interpreter (a new process, as a user types it;
the operating system's file cache is warm after the first run, as it is for a
user's second command). Printed per command: the best and the median wall time
of ``--repeat`` runs, beside the same runs of a bare ``python -c pass`` (the
floor: the interpreter and site start-up) and of ``python -c "import
specdyn.theory"`` (what ``--help`` imported before issue 34: numpy, scipy and
the theory), with the 1-minute load average before and after. The goal of
issue 34: ``specdyn --help`` under 0.3 s on an idle machine. ``--before-src`` times
``specdyn --help`` of another source tree too (e.g. a checkout of the commit before
the change, ``PATH/specdyn``), in the same run; the test
(``tests/cli/test_cli_fast_start.py``) asserts the import list, not a time.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time


def _times(cmd: list[str], repeat: int, src: str | None = None) -> list[float]:
    out = []
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    if src:
        env["PYTHONPATH"] = src
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                       env=env)
        out.append(time.perf_counter() - t0)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--before-src", default=None,
                    help="a src/ folder whose `specdyn --help` is timed as 'before'")
    args = ap.parse_args()
    script = shutil.which("specdyn")
    entry = [script] if script else [sys.executable, "-m", "specdyn"]
    rows = [
        ("python -c pass (floor)", [sys.executable, "-c", "pass"]),
        ("python -c 'import specdyn.theory' (before)",
         [sys.executable, "-c", "import specdyn.theory"]),
        ("specdyn --help", [*entry, "--help"]),
        ("specdyn --version", [*entry, "--version"]),
        ("specdyn reproduce --help", [*entry, "reproduce", "--help"]),
        ("specdyn analyze --help", [*entry, "analyze", "--help"]),
    ]
    load0 = os.getloadavg()[0]
    results = [(name, _times(cmd, args.repeat)) for name, cmd in rows]
    if args.before_src:
        results.insert(2, (f"specdyn --help of {args.before_src} (before)",
                           _times([*entry, "--help"], args.repeat, args.before_src)))
    load1 = os.getloadavg()[0]
    print(f"{os.cpu_count()} cores, load average {load0:.2f} before, {load1:.2f} after; "
          f"{args.repeat} runs each, entry point {' '.join(entry)}\n")
    print("| command | best | median |")
    print("|---|---|---|")
    for name, ts in results:
        print(f"| `{name}` | {min(ts):.3f} s | {statistics.median(ts):.3f} s |")


if __name__ == "__main__":
    main()
