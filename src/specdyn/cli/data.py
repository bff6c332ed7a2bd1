"""``specdyn data X Y``: the theory, the exact reference and (``--train``) networks on a
user's own arrays; the command-line face of
:func:`specdyn.study.study`."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from specdyn.cli._args import at_least, command, output_folder, positive_float, positive_int
from specdyn.cli.theory import _blame_option

#: File kinds read (:data:`specdyn.data.files.SUFFIXES`; a test keeps the two equal).
_SUFFIXES = (".npy", ".npz", ".csv", ".pt", ".pth")
_REGIMES = ("feature-learning", "lazy", "both")
#: study()'s argument -> this command's option, for its error messages.
_OPTIONS = {"kmin": "--kmin", "kmax": "--kmax", "checkpoints": "--checkpoints",
            "t_factor": "--t-factor", "N": "--N", "relu_N": "--relu-N"}


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``data`` subcommand."""
    p = command(
        subparsers, "data", _data,
        help="the theory and the exact reference on your own (X, Y) arrays",
        description=(
            "Decompose a data set (inputs X, M x D; targets Y, M x P; both centred here): "
            "the input spectrum lambda_k and the target strengths mu_k, the exponents alpha, "
            "alpha + beta and beta with 95 percent intervals (fitted in mode order over "
            "modes KMIN..KMAX), three misalignment measures (the output overlap predicts the "
            "aligned theory's error), and per regime the aligned theory's rho_k(t) and "
            "regions on the data's own spectra, the exact reference (the infinite-width "
            "flow on the data's own covariances) and a stable GD step. --train also trains "
            "the two-layer linear network and a ReLU network on the data by full-batch GD. "
            "--out writes Parquet tables, data.json and a figure as one transaction. "
            "Files: " + ", ".join(_SUFFIXES) + " (X and Y in one .npz or .pt dict: give one "
            "file). Refused with one line: a 1-D Y (pass Y[:, None]), different row counts, "
            "NaN or infinite values, fewer than 20 samples, constant columns (unless "
            "--drop-constant)."),
    )
    p.add_argument("x", type=Path, metavar="X", help="inputs, M x D (or X and Y in one "
                   ".npz / .pt)")
    p.add_argument("y", type=Path, metavar="Y", nargs="?", default=None,
                   help="targets, M x P (omit when X's file holds both)")
    p.add_argument("--out", type=output_folder, default=None,
                   help="folder for tables, data.json and data.png/.pdf (default: print "
                        "only)")
    p.add_argument("--kmin", type=positive_int, default=2,
                   help="first mode of the exponent fits, an integer >= 1 (default 2)")
    p.add_argument("--kmax", type=positive_int, default=None,
                   help="last mode of the exponent fits, an integer >= 1 (default: a quarter "
                        "of the modes)")
    p.add_argument("--regime", choices=_REGIMES, default="both",
                   help="feature-learning (sigma_w = 0.1, gamma0 = 2 S/theta_1), lazy "
                        "(sigma_w = 1, gamma0 = 0.05 S/theta_1) or both (default both)")
    p.add_argument("--sigma-w", type=positive_float, default=None,
                   help="a custom regime instead: first-layer init std, > 0 (with "
                        "--gamma0-ratio)")
    p.add_argument("--gamma0-ratio", type=positive_float, default=None,
                   help="a custom regime instead: gamma0 in units of S/theta_1, > 0 (with "
                        "--sigma-w)")
    p.add_argument("--train", action="store_true",
                   help="also train the linear (width --N) and ReLU (width --relu-N) networks")
    p.add_argument("--N", type=positive_int, default=1024,
                   help="width of the linear network, >= 1 (default 1024)")
    p.add_argument("--relu-N", type=positive_int, default=128,
                   help="width of the ReLU network, >= 1 (default 128)")
    p.add_argument("--checkpoints", type=positive_int, default=24,
                   help="log-spaced checkpoints per run, >= 1 (at least 4; default 24)")
    p.add_argument("--t-factor", type=at_least(1.0), default=3.0,
                   help="run length in learning times of mode KMAX, >= 1 (default 3)")
    p.add_argument("--no-reference", action="store_true",
                   help="skip the exact reference (the slowest part for large D)")
    p.add_argument("--drop-constant", action="store_true",
                   help="drop constant columns of X instead of refusing them")
    p.add_argument("--seed", type=at_least(0.0), default=0,
                   help="seed of the networks' weights, >= 0 (default 0)")
    p.add_argument("--format", choices=("table", "json"), default="table",
                   help="output on stdout: readable lines (default) or the summary as JSON")


def _regimes(args: argparse.Namespace) -> dict[str, Any]:
    from specdyn.study import REGIMES, Regime

    if (args.sigma_w is None) != (args.gamma0_ratio is None):
        raise ValueError("--sigma-w and --gamma0-ratio: give both for a custom regime, or "
                         "neither")
    if args.sigma_w is not None:
        return {"custom": Regime(args.sigma_w, args.gamma0_ratio)}
    if args.regime == "both":
        return dict(REGIMES)
    return {args.regime: REGIMES[args.regime]}


def _num(x: Any, fmt: str = ".4g") -> str:
    return format(x, fmt) if isinstance(x, (int, float)) and math.isfinite(x) else "none"


def _lines(s: dict[str, Any]) -> list[str]:
    """The summary as readable lines."""
    ci = lambda key: f"[{_num(s[key][0], '.3f')}, {_num(s[key][1], '.3f')}]"  # noqa: E731
    out = [f"data: M = {s['M']} samples, {s['D']} modes with variance "
           f"({s['columns_kept']} columns kept), P = {s['P']} outputs",
           f"exponents over modes {s['kmin']}..{s['kmax']} (mode order): "
           f"alpha = {_num(s['alpha'], '.3f')} {ci('alpha_ci')}, alpha + beta = "
           f"{_num(s['alpha_plus_beta'], '.3f')} {ci('alpha_plus_beta_ci')}, "
           f"beta = {_num(s['beta'], '.3f')} {ci('beta_ci')}",
           f"misalignment: output overlap {_num(s['output_overlap'], '.3f')} (0 = aligned; "
           f"predicts the aligned theory's error), headline {_num(s['total_misalignment'], '.3f')}"
           f", off-diagonal share of Theta Theta^T {_num(s['offdiagonal_share'], '.3f')}"]
    for name, reg in s["regimes"].items():
        lin = reg["linear"]
        out.append(f"{name} (sigma_w = {reg['sigma_w']:g}, gamma0 = {reg['gamma0_ratio']:g} "
                   f"S/theta_1 = {_num(lin['gamma0'])}; Eq. (33): {lin['regime_eq33']}):")
        out.append(f"  GD step dt = {_num(lin['dt'])}, {lin['steps']} steps to t = "
                   f"{_num(lin['t_end'])}; regions of modes 1..{s['kmax']} at the end: "
                   + ", ".join(f"{k} {v}" for k, v in lin["regions_at_end"].items()))
        for who in ("theory", "reference", "network"):
            e = lin.get(f"exponent_{who}")
            if e:
                out.append(f"  exponent, {who}: start {_num(e['start'], '.3f')}, peak "
                           f"{_num(e['peak'], '.3f')}, end {_num(e['end'], '.3f')}")
        if "misalignment_effect" in lin:
            out.append(f"  misalignment effect (aligned theory vs exact reference, max_t "
                       f"median |log|): {_num(lin['misalignment_effect'], '.3f')}")
        for key, label in (("network_vs_theory", "linear network vs theory"),
                           ("network_vs_reference", "linear network vs exact reference")):
            if key in lin:
                out.append(f"  {label}: {_num(lin[key], '.3f')}")
        if "relu" in reg and "network_vs_theory" in reg["relu"]:
            out.append(f"  ReLU network vs effective theory: "
                       f"{_num(reg['relu']['network_vs_theory'], '.3f')}")
    return out


def _data(args: argparse.Namespace) -> int:
    from specdyn.data import load_xy
    from specdyn.study import study

    regimes = _regimes(args)  # every option first: bad input costs no work
    if args.checkpoints < 4:
        raise ValueError(f"--checkpoints must be at least 4, got {args.checkpoints}")
    if args.seed != int(args.seed):
        raise ValueError(f"--seed must be an integer >= 0, got {args.seed:g}")
    X, Y = load_xy(args.x, args.y)
    try:
        st = study(X, Y, kmin=args.kmin, kmax=args.kmax, regimes=regimes,
                   checkpoints=args.checkpoints, t_factor=args.t_factor,
                   reference=not args.no_reference,
                   train=("linear", "relu") if args.train else (), N=args.N,
                   relu_N=args.relu_N, seed=int(args.seed), drop_constant=args.drop_constant,
                   progress=args.train)
    except ValueError as err:  # the library names its argument: name the option instead
        raise ValueError(_blame_option(str(err), _OPTIONS)) from None
    summary = st.summary()
    if args.format == "json":
        print(json.dumps(summary, indent=1, allow_nan=False))
    else:
        print("\n".join(_lines(summary)))
    if args.out is not None:
        paths = st.write(args.out)
        info = sys.stdout if args.format == "table" else sys.stderr
        print(f"wrote {len(paths)} files into {args.out}: "
              + ", ".join(p.name for p in paths), file=info)
    return 0
