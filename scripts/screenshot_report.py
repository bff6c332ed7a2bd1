"""Render a specdyn HTML report in a real headless browser and save a screenshot.

python scripts/screenshot_report.py REPORT.html [--png OUT.png] [--width 1400] [--height 2600]

Uses Debian's ``chromium`` (``apt-get install -y chromium``; or set CHROMIUM to
another Chromium/Chrome binary) with ``--headless --screenshot``, the page
opened from the file system with no server (as a user would open it offline).
``--virtual-time-budget`` lets Plotly draw every figure before the shot. Look
at the PNG: every panel should be labelled and readable.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report", type=Path)
    ap.add_argument("--png", type=Path, default=None, help="default: REPORT.png beside it")
    ap.add_argument("--width", type=int, default=1400)
    ap.add_argument("--height", type=int, default=2600)
    args = ap.parse_args()
    if not args.report.is_file():
        print(f"screenshot_report: no such file {args.report}", file=sys.stderr)
        return 2
    exe = os.environ.get("CHROMIUM") or next(
        (p for p in (shutil.which(n) for n in ("chromium", "chromium-browser",
                                               "google-chrome")) if p), None)
    if exe is None:
        print("screenshot_report: no chromium found (apt-get install -y chromium)",
              file=sys.stderr)
        return 2
    png = (args.png or args.report.with_suffix(".png")).resolve()
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--virtual-time-budget=20000", f"--window-size={args.width},{args.height}",
           f"--screenshot={png}", args.report.resolve().as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0 or not png.is_file():
        print(f"screenshot_report: chromium failed ({proc.returncode}):\n{proc.stderr[-2000:]}",
              file=sys.stderr)
        return 1
    print(f"wrote {png} ({png.stat().st_size / 1e3:.0f} kB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
