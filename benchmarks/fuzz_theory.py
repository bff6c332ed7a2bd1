"""Fuzz every public theory function over the issue-17 ranges: finite output or the refusal.

Settings are drawn log-uniformly from alpha, beta in [1e-3, 10]; sigma_w, sigma_a,
lambda0, mu0 in [1e-150, 1e150]; gamma0 in [1e-300, 1e300]; modes k in [1, 1e300]
(with 1 and 1e300 themselves) and times t in {0, inf} plus log-uniform [1e-300, 1e300].
A setting is either refused at construction with a ``ValueError`` (the documented
refusal: its spectra would leave float64) or every function must return without
an exception, with no NaN; spectra, Gram entries, losses, exponents and region
ratios must be finite; boundaries (modes and times) may be ``inf`` (beyond
float64, or never). Also checks ``t_learn(k_learn(t)) == t`` where ``k_learn``
is finite.

Run: ``python benchmarks/fuzz_theory.py [N] [SEED]`` (default 20000 settings).
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from specdyn import PowerLawSetting, theory

RANGES = {"alpha": (1e-3, 10.0), "beta": (1e-3, 10.0), "sigma_w": (1e-150, 1e150),
          "sigma_a": (1e-150, 1e150), "lambda0": (1e-150, 1e150), "mu0": (1e-150, 1e150),
          "gamma0": (1e-300, 1e300)}
K_RANGE = (1.0, 1e300)
T_RANGE = (1e-300, 1e300)

# (name, call, kind): "finite" must be finite, "bound" may be +inf but not NaN or < 0
FUNCTIONS: list[tuple[str, Callable[[PowerLawSetting, np.ndarray, np.ndarray], Any], str]] = [
    ("rho", lambda s, k, t: theory.rho(s, k, t), "finite"),
    ("xi", lambda s, k, t: theory.xi(s, k, t), "finite"),
    ("eta", lambda s, k, t: theory.eta(s, k, t), "finite"),
    ("zeta", lambda s, k, t: theory.zeta(s, k, t), "finite"),
    ("delta_eta", lambda s, k, t: theory.delta_eta(s, k, t), "finite"),
    ("alpha_eff", lambda s, k, t: theory.alpha_eff(s, k, t), "finite"),
    ("mode_loss", lambda s, k, t: theory.mode_loss(s, k, t), "finite"),
    ("loss", lambda s, k, t: theory.loss(s, t[0], D=8), "finite"),
    ("region_quantities", lambda s, k, t: np.stack(list(
        theory.region_quantities(s, k, t).values())), "finite"),
    ("region", lambda s, k, t: theory.region(s, k, t), "label"),
    ("time_to_xi", lambda s, k, t: theory.time_to_xi(s, k[:, 0], theory.cross_level(s)),
     "bound"),
    ("t_learn", lambda s, k, t: theory.t_learn(s, k), "bound"),
    ("t_cross", lambda s, k, t: theory.t_cross(s, k), "bound"),
    ("t_layer", lambda s, k, t: theory.t_layer(s, k), "bound"),
    ("k_u", lambda s, k, t: theory.k_u(s), "bound"),
    ("k_l", lambda s, k, t: theory.k_l(s), "bound"),
    ("k_region_ii", lambda s, k, t: theory.k_region_ii(s), "bound"),
    ("k_learn", lambda s, k, t: theory.k_learn(s, t), "bound"),
    ("k_cross", lambda s, k, t: theory.k_cross(s, t), "bound"),
    ("k_layer", lambda s, k, t: theory.k_layer(s, t), "bound"),
    ("regime", lambda s, k, t: _regime_numbers(theory.regime(s)), "bound"),
    ("asymptotic_exponents", lambda s, k, t: list(
        theory.asymptotic_exponents(s).values()), "finite"),
    ("cross_level", lambda s, k, t: theory.cross_level(s), "finite"),
    ("rho_first_layer", lambda s, k, t: theory.rho_first_layer(s, k, t), "finite"),
    ("xi_first_layer", lambda s, k, t: theory.xi_first_layer(s, k, t), "finite"),
    ("alpha_eff_first_layer", lambda s, k, t: theory.alpha_eff_first_layer(s, k, t), "finite"),
    ("k_learn_first_layer", lambda s, k, t: theory.k_learn_first_layer(s, t), "bound"),
    ("k1", lambda s, k, t: theory.k1(s), "bound"),
    ("k2", lambda s, k, t: theory.k2(s, t), "bound"),
    ("t_star", lambda s, k, t: theory.t_star(s), "bound"),
    ("k_cross_first_layer", lambda s, k, t: theory.k_cross_first_layer(s, t), "bound"),
    ("region_first_layer", lambda s, k, t: theory.region_first_layer(s, k, t), "label"),
]


def _regime_numbers(rep: theory.RegimeReport) -> list[float]:
    for lo, hi in rep.ranges.values():  # no reversed interval
        assert lo <= hi, (lo, hi)
    return [rep.k_u, rep.k_l, rep.k_region_ii, *(x for r in rep.ranges.values() for x in r)]


def draw(rng: np.random.Generator) -> tuple[dict[str, float], np.ndarray, np.ndarray]:
    """One setting, a column of 4 modes and a row of 5 times."""
    kw = {name: float(10 ** rng.uniform(np.log10(lo), np.log10(hi)))
          for name, (lo, hi) in RANGES.items()}
    k = np.array([K_RANGE[0], K_RANGE[1], *10 ** rng.uniform(0, 300, 2)])[:, None]
    t = np.array([0.0, np.inf, *10 ** rng.uniform(-300, 300, 3)])[None, :]
    return kw, k, t


def check(kw: dict[str, float], k: np.ndarray, t: np.ndarray) -> list[str]:
    """Problems found at one setting ([] if none); ``["refused"]`` for the refusal."""
    try:
        s = PowerLawSetting(**kw)
    except ValueError:
        return ["refused"]
    problems = []
    for name, fn, kind in FUNCTIONS:
        try:
            # a warning would mean an unguarded edge (underflow to 0 is not one)
            with np.errstate(over="raise", divide="raise", invalid="raise", under="ignore"):
                out = fn(s, k, t)
        except Exception as err:  # noqa: BLE001  (counting every kind is the point)
            problems.append(f"{name}: {type(err).__name__}: {err}")
            continue
        if kind == "label":
            continue
        arr = np.asarray(out, dtype=np.float64)
        if np.isnan(arr).any():
            problems.append(f"{name}: NaN")
        elif kind == "finite" and not np.isfinite(arr).all():
            problems.append(f"{name}: inf")
        elif kind == "bound" and (arr < 0).any():
            problems.append(f"{name}: negative")
    return problems


def round_trip(kw: dict[str, float], t: np.ndarray) -> float:
    """Largest ``|t_learn(k_learn(t)) / t - 1|`` over finite positive ``t`` with finite k."""
    s = PowerLawSetting(**kw)
    tt = t[np.isfinite(t) & (t > 0)]
    k = theory.k_learn(s, tt)
    ok = np.isfinite(k) & (k >= 1)
    if not ok.any():
        return 0.0
    err = np.abs(theory.t_learn(s, k[ok]) / tt[ok] - 1.0)
    if err.max() > 1e-9:
        print(f"  round trip {err.max():.3g} at t = {tt[ok][err.argmax()]:g}, {kw}")
    return float(err.max())


def main(n: int = 20_000, seed: int = 0) -> int:
    rng = np.random.default_rng(seed)
    counts: Counter[str] = Counter()
    examples: dict[str, str] = {}
    worst_rt = 0.0
    t0 = time.perf_counter()
    for i in range(n):
        kw, k, t = draw(rng)
        problems = check(kw, k, t)
        if problems == ["refused"]:
            counts["refused"] += 1
            continue
        counts["evaluated"] += 1
        for p in problems:
            key = p.split(":")[0] + ":" + p.split(":")[1]
            counts[key] += 1
            examples.setdefault(key, f"{p}  at {kw}")
        worst_rt = max(worst_rt, round_trip(kw, t.ravel()))
        if (i + 1) % 1000 == 0:
            n_bad = sum(c for key, c in counts.items() if key not in ("refused", "evaluated"))
            print(f"  {i + 1}/{n} settings ({counts['refused']} refused, {n_bad} problems, "
                  f"round trip {worst_rt:.2g}), {time.perf_counter() - t0:.0f} s", flush=True)
    bad = {key: c for key, c in counts.items() if key not in ("refused", "evaluated")}
    print(f"settings: {n} (seed {seed}); refused at construction: {counts['refused']}; "
          f"evaluated: {counts['evaluated']} x {len(FUNCTIONS)} functions")
    print(f"exceptions / NaN / inf where finite is due: {sum(bad.values())}")
    for key, c in sorted(bad.items()):
        print(f"  {c:6d}  {key}   e.g. {examples[key]}")
    print(f"max |t_learn(k_learn(t))/t - 1| = {worst_rt:.3g}")
    print(f"wall {time.perf_counter() - t0:.0f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    sys.exit(main(*args))
