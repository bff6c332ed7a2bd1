"""``specdyn analyze PATH``: spectra, exponents, MP fits, outliers and a verdict for every layer."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specdyn.cli._args import (
    between,
    check_output,
    command,
    output_folder,
    output_path,
    positive_int,
)

if TYPE_CHECKING:
    from specdyn.measure.summary import LayerSummary

_FORMATS = ("table", "json", "csv")
#: The file kinds analyze reads, for --help without importing the reader
#: (:data:`specdyn.measure.checkpoint.SUFFIXES`; a test keeps the two equal).
_SUFFIXES = (".npy", ".npz", ".pt", ".pth", ".bin", ".ckpt", ".safetensors")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``analyze`` subcommand."""
    p = command(
        subparsers, "analyze", _analyze,
        help="spectra of every matrix in a .npy/.npz/.pt/.safetensors file",
        description=(
            "One row per tensor: shape, the layer's verdict (power law / consistent with MP "
            "bulk / bulk + k outliers), rank exponent a (lambda_k ~ k^-a) of W^T W / rows (or "
            "of the centred covariance with --center) with a 95 percent interval (flagged and "
            "widened when its window spans less than a decade), the density exponent 1 + 1/a, "
            "Marchenko-Pastur noise level and edge, outliers above the edge with Tracy-Widom "
            "p-values (and whether the test reached its cap), top eigenvalues. Tensors that "
            "are not measured (biases, optimizer state, metadata) are listed with the reason. "
            "Files: " + ", ".join(_SUFFIXES) + "; torch files are read with "
            "torch.load(weights_only=True) only, in the common checkpoint layouts "
            "(state_dict, model_state(_dict), model, module wrappers; module. prefixes)."),
    )
    p.add_argument("path", type=Path, metavar="PATH", help="file to analyse")
    p.add_argument("--format", default="table", choices=_FORMATS,
                   help="output on stdout: a table (default), a JSON list of per-tensor "
                        "objects, or CSV")
    p.add_argument("--save", type=output_path("file", ".parquet"), default=None,
                   metavar="FILE.parquet",
                   help="also write the per-tensor table as Parquet")
    p.add_argument("--top", type=positive_int, default=5,
                   help="eigenvalues shown per layer, an integer >= 1 (default 5)")
    p.add_argument("--center", action="store_true",
                   help="rows are samples: use the centred covariance (representations)")
    p.add_argument("--alpha", type=between(0.0, 1.0), default=0.05,
                   help="level of the Tracy-Widom outlier test, in (0, 1) (default 0.05)")
    p.add_argument("--plot", action="store_true",
                   help="save spectra on log axes with fits and MP edges (PNG + PDF)")
    p.add_argument("--out", type=output_folder, default=None,
                   help="folder for --plot output (default: current folder)")


def _fail(argument: str, what: str) -> int:
    print(f"specdyn analyze: error: {argument}: {what}", file=sys.stderr)
    return 2


def _fmt(x: float) -> str:
    # a number that is not finite is no result: said in words, never as "nan"
    return f"{x:.4g}" if math.isfinite(x) else "not finite"


def _f3(x: float) -> str:
    return f"{x:.3f}" if math.isfinite(x) else "not finite"


def _failed(s: LayerSummary, step: str) -> str:
    """Why ``step`` ("exponent" or "outliers") has no value for a measured tensor."""
    return next((why for st, why in s.failed if st == step), "not computed")


def _cells(s: LayerSummary, top: int) -> dict[str, str]:
    """The table's cells of one tensor; a missing value is "none", with the reason in the
    note ("no exponent: ...", "no MP fit: ..."), or the tensor is "not measured" and the
    note says why."""
    shape = "x".join(map(str, s.shape)) if s.shape else "scalar"
    if s.status == "skipped":
        return {"layer": s.name, "shape": shape, "verdict": "not measured",
                "exponent [95% CI]": "", "density exp": "", "MP sigma2": "", "MP edge": "",
                "outliers (p-value)": "", "top eigenvalues": "",
                "note": f"skipped: {s.reason}"}
    row = {"layer": s.name, "shape": shape, "verdict": s.verdict or "none",
           "exponent [95% CI]": "none", "density exp": "none", "MP sigma2": "none",
           "MP edge": "none", "outliers (p-value)": "none", "top eigenvalues": "none",
           "note": "; ".join(s.notes)}
    if s.eigs is not None:
        row["top eigenvalues"] = ", ".join(_fmt(x) for x in s.eigs[:top])
    if s.fit is not None:
        row["exponent [95% CI]"] = _exponent(s) + f" k={s.fit.kmin}..{s.fit.kmax}" + (
            " short" if s.fit.short_window else "")
        row["density exp"] = _f3(s.fit.density_exponent)
    if s.mp is not None:
        row["MP sigma2"] = _fmt(s.mp.sigma2)
        row["MP edge"] = _fmt(s.mp.hi)
    if s.outliers is not None:
        row["outliers (p-value)"] = _outliers(s)
    if (s.fit is None or s.mp is None or s.outliers is None) and not row["note"]:
        row["note"] = "; ".join(f"no {step}: {why}" for step, why in s.failed) or \
            "a step was not computed"
    return row


def _exponent(s: LayerSummary) -> str:
    f = s.fit
    assert f is not None
    return f"{_f3(f.exponent)} [{_f3(f.ci_low)}, {_f3(f.ci_high)}]"


def _outliers(s: LayerSummary) -> str:
    r = s.outliers
    assert r is not None
    items = [f"{_fmt(e)} (p={p:.2g})" for e, p in
             zip(r.eigenvalues[: min(r.n_outliers, 3)], r.p_values[: min(r.n_outliers, 3)],
                 strict=True)]
    more = ", ..." if r.n_outliers > 3 else ""
    count = f">={r.n_outliers} (cap)" if r.cap_reached else f"{r.n_outliers}"
    return count + (": " + ", ".join(items) + more if items else "")


def _table(rows: list[dict[str, str]]) -> list[str]:
    cols = list(rows[0])
    widths = {c: max(len(c), *(len(r[c]) for r in rows)) for c in cols}
    lines = ["  ".join(c.ljust(widths[c]) for c in cols).rstrip(),
             "  ".join("-" * widths[c] for c in cols)]
    lines += ["  ".join(r[c].ljust(widths[c]) for c in cols).rstrip() for r in rows]
    return lines


def _blocks(summaries: list[LayerSummary], top: int, width: int) -> list[str]:
    """One block per tensor, every line wrapped to ``width``: the layout when the table
    is wider than the terminal. Only the values a tensor has are printed; a missing one
    is named with the reason."""
    import textwrap

    def wrap(text: str, indent: str) -> list[str]:
        return textwrap.wrap(text, width=max(width, 20), initial_indent=indent,
                             subsequent_indent=indent + "    ", break_on_hyphens=False)

    lines: list[str] = []
    for s in summaries:
        shape = "x".join(map(str, s.shape)) if s.shape else "scalar"
        if s.status == "skipped":
            lines += wrap(f"{s.name}  {shape}  not measured: {s.reason}", "")
            continue
        lines += wrap(f"{s.name}  {shape}  {s.verdict or 'no verdict'}", "")
        if s.fit is not None:
            f = s.fit
            lines += wrap(f"exponent a = {_exponent(s)} over k = {f.kmin}..{f.kmax}"
                          + (" (short window)" if f.short_window else "")
                          + f"; density exponent {_f3(f.density_exponent)}", "  ")
        else:
            lines += wrap(f"exponent: none ({_failed(s, 'exponent')})", "  ")
        if s.mp is not None:
            lines += wrap(f"MP bulk: sigma2 = {_fmt(s.mp.sigma2)}, edge = {_fmt(s.mp.hi)}",
                          "  ")
        else:
            lines += wrap(f"MP bulk: none ({_failed(s, 'outliers')})", "  ")
        if s.outliers is not None:
            lines += wrap(f"outliers (p-value): {_outliers(s)}", "  ")
        if s.eigs is not None:
            lines += wrap("top eigenvalues: " + ", ".join(_fmt(x) for x in s.eigs[:top]),
                          "  ")
        notes = [n for n in s.notes if not n.startswith(("no exponent:", "no MP fit:"))]
        if notes:
            lines += wrap("note: " + "; ".join(notes), "  ")
    return lines


def format_table(summaries: list[LayerSummary], top: int, width: int) -> list[str]:
    """The default output's lines: one table row per tensor when the table fits in
    ``width`` columns, else one block per tensor wrapped to ``width`` (the full table
    is in ``--format json`` / ``csv``)."""
    lines = _table([_cells(s, top) for s in summaries])
    if max(len(ln) for ln in lines) <= width:
        return lines
    return _blocks(summaries, top, width)


def _json_value(x: Any) -> Any:
    """NaN and inf are not results: written as null."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def _json_records(summaries: list[LayerSummary]) -> list[dict[str, Any]]:
    out = []
    for s in summaries:
        rec = {k: _json_value(x) for k, x in s.record().items()}
        lo, hi = rec["exponent_ci_low"], rec["exponent_ci_high"]
        rec["ci"] = [lo, hi] if lo is not None and hi is not None else None
        out.append(rec)
    return out


def _analyze(args: argparse.Namespace) -> int:
    from specdyn import io
    from specdyn.measure.checkpoint import load_tensors, non_finite_tensors
    from specdyn.measure.summary import has_matrix, summaries_frame, summarize_tensors

    top, alpha = args.top, args.alpha  # checked by their argparse types
    save = args.save
    out = Path(args.out or ".")
    if args.plot and args.out is None:  # the default folder: checked here, not by argparse
        try:
            check_output(out, "folder")
        except ValueError as err:
            return _fail("--out", f"{err} (the default; pass --out FOLDER)")
    try:
        tensors = load_tensors(args.path)
    except ValueError as err:
        return _fail("PATH", str(err))
    if not has_matrix(tensors):
        return _fail("PATH", f"{args.path} holds no tensor with 2 or more axes to analyse "
                     f"({len(tensors)} entr{'y' if len(tensors) == 1 else 'ies'}: "
                     f"{', '.join(list(tensors)[:5])}{', ...' if len(tensors) > 5 else ''})")
    bad = non_finite_tensors(tensors)
    if bad:  # bad input, found before any work: named with its counts
        listed = "; ".join(b.describe() for b in bad[:3])
        more = f"; and {len(bad) - 3} more tensor(s)" if len(bad) > 3 else ""
        return _fail("PATH", f"{args.path}: {'tensor' if len(bad) == 1 else 'tensors'} "
                     f"{listed}{more}; a spectrum needs finite values "
                     "(specdyn.measure.analyze lists such tensors as skipped and measures "
                     "the others)")
    summaries = summarize_tensors(tensors, center=args.center, alpha=alpha)
    n_ok = sum(s.status == "measured" for s in summaries)
    if args.format == "json":
        print(json.dumps(_json_records(summaries), indent=1, allow_nan=False))
    elif args.format == "csv":
        summaries_frame(summaries).to_csv(sys.stdout, index=False)
    else:
        print(f"{args.path}: {len(summaries)} tensor(s); spectrum = eigenvalues of "
              + ("the centred covariance (rows = samples)" if args.center else "W^T W / rows"))
        import shutil

        width = shutil.get_terminal_size().columns  # COLUMNS, the terminal, or 80
        print("\n".join(format_table(summaries, top, width)))
        print(f"{n_ok} analysed, {len(summaries) - n_ok} listed with a reason")
    # Beside json/csv output, messages go to stderr so that stdout can be piped.
    info = sys.stdout if args.format == "table" else sys.stderr
    if save is not None:
        io.write_table(summaries_frame(summaries), save)  # atomic; makes its folder
        print(f"table: {save}", file=info)
    if args.plot:
        from specdyn.plot import save_figure
        from specdyn.plot.measure import plot_layer_summaries

        fig = plot_layer_summaries(summaries)
        paths = save_figure(fig, out / f"{args.path.stem}-spectra")
        print("figure: " + ", ".join(str(p) for p in paths), file=info)
    if n_ok == 0:
        print(f"specdyn analyze: no tensor in {args.path} could be measured (reasons above)",
              file=sys.stderr)
        return 1
    return 0
