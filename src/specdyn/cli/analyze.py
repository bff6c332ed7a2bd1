"""``specdyn analyze PATH``: spectra, exponents, MP fits and outliers of every layer in a file."""

from __future__ import annotations

import argparse
from pathlib import Path

from specdyn import _validate as v
from specdyn.measure.summary import SUFFIXES, LayerSummary, summarize_file


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``analyze`` subcommand."""
    p = subparsers.add_parser(
        "analyze",
        help="spectra of every matrix in a .npy/.npz/.pt/.safetensors file",
        description=(
            "One row per tensor: shape, top eigenvalues of W^T W / rows (or of the centred "
            "covariance with --center), rank exponent a (lambda_k ~ k^-a) with a 95%% "
            "interval and the density exponent 1 + 1/a, Marchenko-Pastur noise level and "
            "edge, and outliers above the edge with Tracy-Widom p-values. Tensors that "
            "cannot be analysed are listed with the reason. Files: " + ", ".join(SUFFIXES)
            + " (torch files are read with weights_only=True)."),
    )
    p.add_argument("path", type=Path, help="file to analyse")
    p.add_argument("--top", type=int, default=5, help="eigenvalues shown per layer (5)")
    p.add_argument("--center", action="store_true",
                   help="rows are samples: use the centred covariance (representations)")
    p.add_argument("--alpha", type=float, default=0.05, help="outlier test level (0.05)")
    p.add_argument("--plot", action="store_true",
                   help="save spectra on log axes with fits and MP edges (PNG + PDF)")
    p.add_argument("--out", type=Path, default=Path("."),
                   help="folder for --plot output (default: current folder)")
    p.set_defaults(func=_analyze)


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _row(s: LayerSummary, top: int) -> dict[str, str]:
    shape = "x".join(map(str, s.shape)) if s.shape else "-"
    row = {"layer": s.name, "shape": shape, "top eigenvalues": "-", "exponent [95% CI]": "-",
           "density exp": "-", "MP sigma2": "-", "MP edge": "-", "outliers (p-value)": "-",
           "note": s.status if s.status != "ok" else "; ".join(s.notes)}
    if s.eigs is not None:
        row["top eigenvalues"] = ", ".join(_fmt(x) for x in s.eigs[:top])
    if s.fit is not None:
        f = s.fit
        row["exponent [95% CI]"] = (f"{f.exponent:.3f} [{f.ci_low:.3f}, {f.ci_high:.3f}] "
                                    f"k={f.kmin}..{f.kmax}")
        row["density exp"] = f"{f.density_exponent:.3f}"
    if s.mp is not None:
        row["MP sigma2"] = _fmt(s.mp.sigma2)
        row["MP edge"] = _fmt(s.mp.hi)
    if s.outliers is not None:
        r = s.outliers
        items = [f"{_fmt(e)} (p={p:.2g})" for e, p in
                 zip(r.eigenvalues[: r.n_outliers], r.p_values[: r.n_outliers], strict=True)]
        row["outliers (p-value)"] = f"{r.n_outliers}" + (": " + ", ".join(items) if items else "")
    return row


def _print_table(rows: list[dict[str, str]]) -> None:
    cols = list(rows[0])
    widths = {c: max(len(c), *(len(r[c]) for r in rows)) for c in cols}
    print("  ".join(c.ljust(widths[c]) for c in cols).rstrip())
    print("  ".join("-" * widths[c] for c in cols))
    for r in rows:
        print("  ".join(r[c].ljust(widths[c]) for c in cols).rstrip())


def _analyze(args: argparse.Namespace) -> int:
    top = v.positive_int("--top", args.top)
    alpha = v.in_range("--alpha", args.alpha, 0.0, 1.0, lo_open=True, hi_open=True)
    summaries = summarize_file(args.path, center=args.center, alpha=alpha)
    if not summaries:
        raise ValueError(f"cannot read {args.path}: the file holds no arrays")
    print(f"{args.path}: {len(summaries)} tensor(s); spectrum = eigenvalues of "
          + ("the centred covariance (rows = samples)" if args.center else "W^T W / rows"))
    _print_table([_row(s, top) for s in summaries])
    n_ok = sum(s.status == "ok" for s in summaries)
    print(f"{n_ok} analysed, {len(summaries) - n_ok} listed with a reason")
    if args.plot:
        from specdyn.plot import save_figure
        from specdyn.plot.measure import plot_layer_summaries

        fig = plot_layer_summaries(summaries)
        paths = save_figure(fig, Path(args.out) / f"{args.path.stem}-spectra")
        print("figure: " + ", ".join(str(p) for p in paths))
    if n_ok == 0:
        print(f"specdyn: no tensor in {args.path} could be analysed (reasons above)")
        return 1
    return 0
