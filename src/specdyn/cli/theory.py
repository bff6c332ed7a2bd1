"""``specdyn theory`` and ``specdyn regime``: the exact theory from the command line."""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import TYPE_CHECKING

from specdyn.cli._args import at_least, command, number_list, positive_float

if TYPE_CHECKING:
    from specdyn.settings import PowerLawSetting

_FIELDS = {"alpha": "--alpha", "beta": "--beta", "sigma_w": "--sigma-w", "sigma_a": "--sigma-a",
           "gamma0_ratio": "--gamma0-ratio", "gamma0": "--gamma0", "lambda0": "--lambda0",
           "mu0": "--mu0"}


def add_setting_options(p: argparse.ArgumentParser) -> None:
    """Options that define a :class:`PowerLawSetting` (defaults: the paper's Fig. 2).

    ``--sigma-w`` and ``--gamma0-ratio`` default to ``None``, read as the paper's
    feature-learning regime (:data:`specdyn.settings.FEATURE_LEARNING`) once parsed:
    the help imports no numpy.
    """
    g = p.add_argument_group("setting (defaults: the paper's feature-learning setting)")
    g.add_argument("--alpha", type=positive_float, default=1.0,
                   help="input exponent, > 0 (default 1); without --mu0, alpha + beta > 1")
    g.add_argument("--beta", type=positive_float, default=1.0,
                   help="teacher exponent, > 0 (default 1)")
    g.add_argument("--sigma-w", type=positive_float, default=None,
                   help="first-layer init std, > 0 (default: the feature-learning regime's)")
    g.add_argument("--sigma-a", type=positive_float, default=1.0,
                   help="second-layer init std, > 0 (default 1)")
    scale = g.add_mutually_exclusive_group()
    scale.add_argument("--gamma0", type=positive_float, default=None,
                       help="output scale gamma0, > 0 (instead of --gamma0-ratio)")
    scale.add_argument("--gamma0-ratio", type=positive_float, default=None,
                       help="gamma0 in units of S/theta0, > 0 (default: the feature-learning "
                            "regime's)")
    g.add_argument("--lambda0", type=positive_float, default=1.0,
                   help="input amplitude, > 0 (default 1)")
    g.add_argument("--mu0", type=positive_float, default=None,
                   help="teacher amplitude, > 0 (default 1/zeta(alpha+beta), as in the paper)")


def setting_from_args(args: argparse.Namespace) -> PowerLawSetting:
    """Build the setting from parsed options; an error names the option it is about."""
    import numpy as np

    from specdyn.settings import FEATURE_LEARNING, PowerLawSetting

    sigma_w = FEATURE_LEARNING.sigma_w if args.sigma_w is None else args.sigma_w
    try:
        ratio = FEATURE_LEARNING.gamma0_ratio if args.gamma0_ratio is None else args.gamma0_ratio
        if args.mu0 is None:
            base = PowerLawSetting.paper(sigma_w, ratio, alpha=args.alpha,
                                         beta=args.beta, sigma_a=args.sigma_a)
            mu0 = base.mu0
            gamma0 = base.gamma0 if args.gamma0 is None else args.gamma0
        else:
            mu0 = args.mu0
            with np.errstate(over="ignore"):
                gamma0 = args.gamma0 if args.gamma0 is not None else float(
                    ratio * (np.float64(sigma_w) ** 2 + np.float64(args.sigma_a) ** 2)
                    / np.sqrt(mu0))
            if not np.isfinite(gamma0):
                raise ValueError(f"gamma0_ratio: gamma0 = gamma0_ratio * S / theta0 overflows "
                                 f"float64 (gamma0_ratio = {ratio:g})")
        return PowerLawSetting(args.alpha, args.beta, sigma_w, args.sigma_a, gamma0,
                               args.lambda0, mu0)
    except ValueError as err:
        raise ValueError(_blame_option(str(err))) from None


def _blame_option(message: str, options: dict[str, str] = _FIELDS) -> str:
    """``"--sigma-w: <message>"`` for the first field in ``options`` the message names."""
    for match in re.finditer(r"[A-Za-z_][A-Za-z_0-9]*", message):
        if match.group() in options:
            return f"{options[match.group()]}: {message}"
    return message


def _theory_cmd(args: argparse.Namespace) -> int:
    import numpy as np
    import pandas as pd

    from specdyn import theory

    s = setting_from_args(args)
    K, T = np.meshgrid(args.k, args.t, indexing="ij")
    try:
        if args.first_layer:
            rho = theory.rho_first_layer(s, K, T)
            aeff = theory.alpha_eff_first_layer(s, K, T)
            reg = theory.region_first_layer(s, K, T)
        else:
            rho = theory.rho(s, K, T)
            aeff = theory.alpha_eff(s, K, T)
            reg = theory.region(s, K, T)
    except ValueError as err:  # k < 1, t < 0: name the option
        raise ValueError(_blame_option(str(err), {"k": "--k", "t": "--t"})) from None
    df = pd.DataFrame({"k": K.ravel(), "t": T.ravel(), "rho": rho.ravel(),
                       "alpha_eff": aeff.ravel(), "region": reg.ravel()})
    if args.format == "json":
        json.dump({"setting": s.to_dict(), "rows": df.to_dict(orient="records")}, sys.stdout,
                  indent=1, default=float)
        print()
    elif args.format == "csv":
        df.to_csv(sys.stdout, index=False)
    else:
        print(df.to_string(index=False, float_format=lambda x: f"{x:.6g}"))
    return 0


def _regime_cmd(args: argparse.Namespace) -> int:
    from specdyn import theory

    s = setting_from_args(args)
    rep = theory.regime(s, margin=args.margin)
    out = {
        "setting": s.to_dict(),
        "regime": rep.label,
        "k_u": rep.k_u,
        "k_l": rep.k_l,
        "k_region_II": rep.k_region_ii,
        "regions": {name: {"k_range": list(rep.ranges[name]) if name in rep.ranges else None,
                           "exists": rep.exists[name]}
                    for name in rep.exists},
        "asymptotic_exponents": theory.asymptotic_exponents(s),
    }
    if args.format == "json":
        json.dump(out, sys.stdout, indent=1, default=float)
        print()
        return 0
    print(f"regime: {rep.label}")
    print(f"S = {s.S:.6g}, theta0 = {s.theta0:.6g}, gamma0 = {s.gamma0:.6g} "
          f"(gamma0 theta0 / S = {s.gamma0 * s.theta0 / s.S:.4g})")
    print(f"k_u (crossing possible below) = {rep.k_u:.6g}")
    print(f"k_l (both layers learn below) = {rep.k_l:.6g}")
    print(f"k_II (upper end of Region II) = {rep.k_region_ii:.6g}")
    print(f"regions (exist = span >= {rep.margin:g}x in k):")
    for name, expo in theory.asymptotic_exponents(s).items():
        if name in rep.ranges:
            lo, hi = rep.ranges[name]
            where = f"k in [{lo:.4g}, {hi:.4g}]"
        else:
            where = "no mode k >= 1"
        print(f"  {name:5s} alpha_eff -> {expo:.4g}  {where}  "
              f"exists: {'yes' if rep.exists[name] else 'no'}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``theory`` and ``regime``."""
    p = command(sub, "theory", _theory_cmd,
                help="rho_k(t), alpha_eff and region labels on a (k, t) grid",
                description="Evaluate the exact theory of the core paper on a grid.")
    add_setting_options(p)
    # string defaults: argparse converts them (with `type`) only when a command runs
    p.add_argument("--k", type=number_list, default="1,10,100",
                   help="modes, each >= 1: list '1,10,100' or range 'log:1:1e4:20' (N values "
                        "from 1 to 1e4; also lin:LO:HI:N) (default 1,10,100)")
    p.add_argument("--t", type=number_list, default="0,1,100,1e4,inf",
                   help="times, each >= 0: list or range, inf allowed (default 0,1,100,1e4,inf)")
    p.add_argument("--first-layer", action="store_true",
                   help="second layer frozen (Appendices B-C) instead of both layers")
    p.add_argument("--format", choices=("table", "json", "csv"), default="table",
                   help="output on stdout: an aligned table (default), JSON (the setting and "
                        "one object per row) or CSV")

    r = command(sub, "regime", _regime_cmd,
                help="lazy / feature-learning / intermediate, with boundaries",
                description="Classify a setting and print its region boundaries.")
    add_setting_options(r)
    r.add_argument("--margin", type=at_least(1.0), default=10.0,
                   help="a region exists if it spans at least this factor in k, >= 1 "
                        "(default 10)")
    r.add_argument("--format", choices=("table", "json"), default="table",
                   help="output on stdout: readable lines (default) or JSON")
