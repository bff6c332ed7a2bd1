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
            "Decompose a data set (inputs X, M x D; targets Y, M x P; both centred here; read "
            "in blocks of rows, so a .npy larger than memory works): the input "
            "spectrum lambda_k and the target strengths mu_k, the exponents alpha, alpha + "
            "beta and the per-mode beta with 95 percent sampling intervals (mode order, modes "
            "KMIN..KMAX), the teacher's own spectrum's beta beside it, three misalignment "
            "measures, and for a target of rank below D the rank-P picture (the SVD of the "
            "input-output covariance, mode by mode). Per regime: the aligned theory's "
            "rho_k(t) and regions on the data's own spectra, the exact reference (the "
            "infinite-width flow on the data's own covariances), the exponents of the "
            "representation's per-mode diagonal and of its eigenvalue spectrum, per-mode "
            "learning times, the loss curve and a stable GD step. --train also trains the "
            "two-layer linear network and a ReLU network on the data by full-batch GD. "
            "--out writes Parquet tables, data.json and a figure as one transaction. "
            "Files: " + ", ".join(_SUFFIXES) + " (X and Y in one .npz or .pt dict: give one "
            "file). Refused with one line: a file that is not what its suffix says, complex, "
            "text or object arrays, a 1-D Y (pass Y[:, None]), different row counts, NaN or "
            "infinite values, fewer than 20 samples, constant columns (unless "
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
    p.add_argument("--reference", choices=("auto", "always", "never"), default="auto",
                   help="the exact reference: auto (default: not integrated where the "
                        "aligned theory is lazy, learned part below 2 percent, and nothing is "
                        "trained), always, or never")
    p.add_argument("--no-reference", action="store_true",
                   help="the same as --reference never (the slowest part for large D)")
    p.add_argument("--drop-constant", action="store_true",
                   help="drop constant columns of X instead of refusing them")
    p.add_argument("--seed", type=at_least(0.0), default=0,
                   help="seed of the networks' weights, >= 0 (default 0)")
    p.add_argument("--format", choices=("table", "json"), default="table",
                   help="output on stdout: readable lines (default) or the summary as JSON")


def _regimes(args: argparse.Namespace) -> dict[str, Any]:
    from specdyn.settings import Regime
    from specdyn.study import REGIMES

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


def _courses(lin: dict[str, Any], key: str) -> str:
    parts = []
    for who in ("theory", "reference", "network"):
        e = lin.get(f"{key}_{who}")
        if e:
            parts.append(f"{who} {_num(e['start'], '.3f')} -> {_num(e['peak'], '.3f')} -> "
                         f"{_num(e['end'], '.3f')}")
    return "; ".join(parts)


def _cross_lines(st: Any, name: str) -> list[str]:
    """The rank-P picture of the first regime, one line a singular mode (at most 12)."""
    from specdyn.study.timescales import cross_mode_rows

    m = st.regimes[name][1]["linear"]
    rows = cross_mode_rows(m, st.dec)
    r = int(rows["r"].size)
    src = "exact reference" if "eig_end_reference" in rows else "no reference"
    out = [f"rank-{r} picture: the SVD of the input-output covariance C, mode by mode "
           f"({name}; {src} at t_end):",
           "   r      s_r  share  top input mode  spread  gamma0/s_r  eigenvalue at t_end / "
           "initial"]
    for i in range(min(r, 12)):
        end = (f"{rows['eig_end_reference'][i]:.3g} / {rows['eig_initial'][i]:.3g}"
               if "eig_end_reference" in rows else "-")
        out.append(f"  {rows['r'][i]:2d} {rows['s'][i]:8.3g}  {rows['share'][i]:5.3f}  "
                   f"{rows['top_input_mode'][i]:14d}  {rows['input_spread'][i]:6.1f}  "
                   f"{rows['t_saxe'][i]:10.3g}  {end}")
    if r > 12:
        out.append(f"  ... ({r - 12} more in data_cross_modes.parquet)")
    if m.reference is not None and r < st.dec.D:
        e = m.reference.spectrum[-1]
        out.append(f"  eigenvalue {r} / eigenvalue {r + 1} of the representation at t_end: "
                   f"{e[r - 1] / e[r]:.3g} (learned eigenvalues, then the initial tail "
                   "sigma_w^2 lambda_k)")
    return out


def _loss_line(loss: dict[str, Any]) -> str:
    t = loss["t"]
    idx = sorted({0, *(round(x) for x in [len(t) * f for f in (0.4, 0.6, 0.8)]), len(t) - 1})
    who = [w for w in ("theory", "reference", "network") if w in loss]
    pts = []
    for i in idx:
        if i < len(t):
            vals = " / ".join(_num(loss[w][i], ".3g") for w in who if i < len(loss[w]))
            pts.append(f"t = {_num(t[i], '.3g')}: {vals}")
    return f"  loss above least squares ({' / '.join(who)}): " + ", ".join(pts)


def _lines(s: dict[str, Any], st: Any) -> list[str]:
    """The summary as readable lines."""
    ci = lambda key: f"[{_num(s[key][0], '.3f')}, {_num(s[key][1], '.3f')}]"  # noqa: E731
    tb = s["beta_teacher_spectrum"]
    out = [f"data: M = {s['M']} samples, {s['D']} modes with variance "
           f"({s['columns_kept']} columns kept), P = {s['P']} outputs, rank(C) = {s['rank_C']}",
           f"exponents over modes {s['kmin']}..{s['kmax']} (mode order, 95 % sampling "
           "intervals):",
           f"  alpha = {_num(s['alpha'], '.3f')} {ci('alpha_ci')} (R^2 "
           f"{_num(s['alpha_r2'], '.2f')}), alpha + beta = {_num(s['alpha_plus_beta'], '.3f')} "
           f"{ci('alpha_plus_beta_ci')} (R^2 {_num(s['alpha_plus_beta_r2'], '.2f')})",
           f"  beta per input mode (of mu_k = |c_k|^2/lambda_k^2; drives the representation) = "
           f"{_num(s['beta'], '.3f')} {ci('beta_ci')}",
           "  beta of the teacher's own spectrum (eigenvalues of Theta Theta^T, by rank) = "
           + (_num(tb, ".3f") if tb is not None else
              f"none (rank(C) = {s['rank_C']} < kmax = {s['kmax']})"),
           "  (equal for a teacher aligned with the inputs' eigenbasis; else the representation "
           "follows the per-mode beta, the teacher's strength along each input mode)",
           f"misalignment: output overlap {_num(s['output_overlap'], '.3f')} (0 = aligned; "
           f"predicts the aligned theory's error), headline {_num(s['total_misalignment'], '.3f')}"
           f", off-diagonal share of Theta Theta^T {_num(s['offdiagonal_share'], '.3f')}"]
    out += [f"warning: {w}" for w in s["warnings"]]
    first = next(iter(s["regimes"]))
    if s["rank_C"] < s["D"]:
        out += _cross_lines(st, first)
    for name, reg in s["regimes"].items():
        lin = reg["linear"]
        out.append(f"{name} (sigma_w = {reg['sigma_w']:g}, gamma0 = {reg['gamma0_ratio']:g} "
                   f"S/theta_1 = {_num(lin['gamma0'])}; Eq. (33): {lin['regime_eq33']}):")
        out.append(f"  GD step dt = {_num(lin['dt'])}, {lin['steps']} steps to t = "
                   f"{_num(lin['t_end'])}; regions of modes 1..{s['kmax']} at the end: "
                   + ", ".join(f"{k} {v}" for k, v in lin["regions_at_end"].items()))
        if "reference_skipped" in lin:
            out.append(f"  exact reference: not integrated ({lin['reference_skipped']}; "
                       "--reference always integrates it)")
        out.append("  exponent of the per-mode diagonal lambda_k (U^T G^w U)_kk, start -> "
                   "peak -> end: " + _courses(lin, "exponent"))
        out.append("  exponent of the eigenvalue spectrum of Sigma^1/2 G^w Sigma^1/2 (what a "
                   "SpectrumTracker measures): " + _courses(lin, "spectrum_exponent"))
        if "misalignment_effect" in lin:
            out.append(f"  misalignment effect (aligned theory vs exact reference, max_t "
                       f"median |log|): {_num(lin['misalignment_effect'], '.3f')}")
        out.append(_times_line(lin["learning_times"]))
        out.append(_loss_line(lin["loss"]))
        for key, label in (("network_vs_theory", "linear network vs theory"),
                           ("network_vs_reference", "linear network vs exact reference")):
            if key in lin:
                out.append(f"  {label}: {_num(lin[key], '.3f')}")
        if "relu" in reg and "network_vs_theory" in reg["relu"]:
            out.append(f"  ReLU network vs effective theory: "
                       f"{_num(reg['relu']['network_vs_theory'], '.3f')}")
    return out


def _times_line(lt: dict[str, Any]) -> str:
    th, K = lt["theory"], lt["kmax"]
    text = (f"  learning times (90 % of gamma0 theta_k), modes 1 and {K}: theory "
            f"{_num(th[0], '.3g')}, {_num(th[-1], '.3g')}")
    if "reference" in lt:
        ref = lt["reference"]
        text += (f"; reference {_num(ref[0], '.3g')}, {_num(ref[-1], '.3g')} "
                 f"({lt['learned_by_t_end']} of {K} learned by t_end); rank correlation of "
                 f"the reference's with the theory's "
                 f"{_num(lt['rank_correlation_theory'], '.2f')}, with gamma0/|c_k| "
                 f"{_num(lt['rank_correlation_saxe'], '.2f')}")
    return text


def _wrapped(lines: list[str], width: int = 100) -> str:
    """The lines, each wrapped at ``width`` with its own indent (plus two) carried on; an
    interval ``[a, b]``, ``t = x`` and ``a / b`` are never split."""
    import re
    import textwrap

    keep = "\u00a0"  # a space textwrap does not break at
    out = []
    for line in lines:
        if len(line) <= width:
            out.append(line)
            continue
        lead = " " * (len(line) - len(line.lstrip()))
        text = re.sub(r"\[[^\]]*\]", lambda m: m.group(0).replace(" ", keep), line.strip())
        text = text.replace("t = ", f"t{keep}={keep}").replace(" / ", f"{keep}/{keep}")
        out.append(textwrap.fill(text, width, initial_indent=lead, break_on_hyphens=False,
                                 subsequent_indent=lead + "  ").replace(keep, " "))
    return "\n".join(out)


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
                   reference="never" if args.no_reference else args.reference,
                   train=("linear", "relu") if args.train else (), N=args.N,
                   relu_N=args.relu_N, seed=int(args.seed), drop_constant=args.drop_constant,
                   progress=True, announce=True)
    except ValueError as err:  # the library names its argument: name the option instead
        raise ValueError(_blame_option(str(err), _OPTIONS)) from None
    summary = st.summary()
    if args.format == "json":
        print(json.dumps(summary, indent=1, allow_nan=False))
    else:
        print(_wrapped(_lines(summary, st)))
    if args.out is not None:
        paths = st.write(args.out)
        info = sys.stdout if args.format == "table" else sys.stderr
        print(f"wrote {len(paths)} files into {args.out}: "
              + ", ".join(p.name for p in paths), file=info)
    return 0
