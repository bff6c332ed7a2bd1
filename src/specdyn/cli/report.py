"""``specdyn report DIR``: one offline HTML page of a SpectrumTracker run."""

from __future__ import annotations

import argparse
from pathlib import Path

from specdyn.cli._args import check_output, command, output_path


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``report`` subcommand."""
    p = command(
        subparsers, "report", _report,
        help="HTML report of a SpectrumTracker run (out=DIR): exponents, outliers, spectra",
        description=(
            "Write one self-contained HTML file (works offline, no server) for the folder "
            "written by SpectrumTracker(model, out=DIR): the rank exponent of every layer "
            "over steps, a table of exponents, outlier counts and verdicts, and per layer "
            "the exponent and outliers over steps and the spectrum at chosen steps on log "
            "axes with its power-law fit and Marchenko-Pastur edge."),
    )
    p.add_argument("dir", type=Path, metavar="DIR", help="the tracker's out folder")
    p.add_argument("--out", type=output_path("file"), default=None,
                   help="HTML file to write (default: DIR/report.html)")
    p.add_argument("--steps", type=str, default=None,
                   help="comma-separated recorded steps whose spectra are drawn "
                        "(default: 5 spread in log(step))")
    p.add_argument("--layers", type=str, nargs="+", default=None,
                   help="name patterns of the layers to show, e.g. 'blocks.*.attn.*' "
                        "(default: all)")


def _report(args: argparse.Namespace) -> int:
    from specdyn.report import write_report

    if not Path(args.dir).is_dir():  # first: else the default --out below is blamed for it
        raise ValueError(f"DIR: {str(args.dir)!r} is not a folder (the out= folder of a "
                         "SpectrumTracker run)")
    if args.out is None:  # the default, DIR/report.html: checked before any work too
        try:
            check_output(Path(args.dir) / "report.html", "file")
        except ValueError as err:
            raise ValueError(f"--out: {err} (the default; pass --out FILE.html)") from None
    steps = None
    if args.steps is not None:
        try:
            steps = [int(s) for s in args.steps.split(",") if s.strip()]
        except ValueError:
            raise ValueError(f"--steps must be comma-separated integers, got {args.steps!r}"
                             ) from None
        if not steps:
            raise ValueError("--steps must name at least one step")
    path = write_report(args.dir, args.out, steps=steps, layers=args.layers)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB)")
    return 0
