"""Wrong tables for every registered experiment: its measured columns made constant or shuffled.

Each experiment declares, with its registration (``register(..., measured=...)``), which
columns of which tables it measured and which columns name one quantity. From a finished
folder of a real run this module writes copies whose measured columns are

- ``constant``: replaced, per quantity group, by their median;
- ``shuffle-<seed>``: permuted within each quantity group (the measured columns of a row
  move together, so the table stays internally consistent),

and checks the experiment's registered claims on each copy with
:func:`specdyn.runs.recheck_claims`. The rule (issue 30): every claim expected to hold on
the real table (not ``disputed``, not ``full_only``, and held there) fails on the constant
table and on at least ``SHUFFLES_TO_FAIL`` of ``SHUFFLES`` shuffles; a claim whose
expectation is "no change" names a ``partner`` claim that fails on them instead.

``python tests/experiments/claims_mutation.py [NAME ...] --out DIR`` prints the counts
(expected / held on the constant table / mean held over the shuffles) per experiment.
"""

from __future__ import annotations

import dataclasses
import shutil
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn import io
from specdyn.runs import Claim, Measured, get, recheck_claims, run_experiment

#: Shuffles per experiment, and how many of them an expected claim must fail.
SHUFFLES = 5
SHUFFLES_TO_FAIL = 4


def _small_configs() -> dict[str, Callable[[], Any]]:
    """Small configs that the test runs instead of the quick default (runs in seconds).

    An experiment not named here runs its quick default: a new experiment is covered at
    once, at the cost of its quick run's time, until it adds a small config here.
    """
    from specdyn.experiments.finite_size_theory.config import FiniteSizeConfig as FSTConfig
    from specdyn.experiments.linear_figures.config import Fig2Config, FiniteSizeConfig
    from specdyn.experiments.nonlinear_figures import Fig4Config
    from specdyn.experiments.regime_map import RegimeMapConfig
    from specdyn.experiments.simulate import SimulateConfig
    from specdyn.experiments.theory_figures.config import Fig3Config, FirstLayerConfig

    return {
        "fig2": lambda: Fig2Config(D=32, N=512, M=512, steps=2000, checkpoints=30),
        "fig3": lambda: Fig3Config(n_k=120, n_t=120, n_slices=2),
        "fig5": lambda: FirstLayerConfig(n_k=60, n_t=60, n_curves=4),
        "fig6": lambda: FirstLayerConfig(n_k=80, n_t=80),
        "finite-size": lambda: FiniteSizeConfig(D=16, sizes=(64, 256, 1024, 4096),
                                                t_max=200.0, checkpoints=6, n_seeds=2),
        "simulate": lambda: SimulateConfig(),
        "regime-map": lambda: RegimeMapConfig(),
        "fig4": lambda: Fig4Config(D=32, N=256, M=256, steps=1500, kmax=16),
        "finite-size-theory": lambda: FSTConfig(
            D=8, N_values=(256,), M_values=(256,), seeds=48, times=(0.0, 10.0, 50.0, 200.0),
            activations=("relu", "tanh"), nl_D=32, nl_N=512, nl_M=512, nl_steps=800, kmax=16),
    }


def small_config(name: str) -> Any:
    """The small config of ``name`` (its quick default if it has none here)."""
    make = _small_configs().get(name)
    return make() if make is not None else get(name).config()


def _rows(df: pd.DataFrame, m: Measured) -> pd.Series:
    mask = pd.Series(True, index=df.index)
    for col, values in m.where.items():
        mask &= df[col].astype(str).isin(values)
    return mask


def mutate(df: pd.DataFrame, m: Measured, kind: str, rng: np.random.Generator | None = None
           ) -> pd.DataFrame:
    """``df`` with its measured columns ``constant`` (median per group) or ``shuffled``."""
    out = df.copy()
    sel = out[_rows(out, m)]
    codes = (sel.groupby(list(m.by), dropna=False, sort=False).ngroup().to_numpy() if m.by
             else np.zeros(len(sel), dtype=int))
    groups = [sel.index[codes == g] for g in np.unique(codes)]
    cols = list(m.columns)
    if kind == "constant":  # the median of counts may fall between two integers
        out = out.astype({c: "float64" for c in cols if pd.api.types.is_integer_dtype(out[c])})
    for idx in groups:
        block = out.loc[idx, cols]
        if kind == "constant":
            out.loc[idx, cols] = np.broadcast_to(
                block.median(numeric_only=False).to_numpy(dtype=float), block.shape)
        elif kind == "shuffle":
            assert rng is not None
            out.loc[idx, cols] = block.to_numpy()[rng.permutation(len(idx))]
        else:
            raise ValueError(f"kind must be 'constant' or 'shuffle', got {kind!r}")
    return out


def mutated_claims(folder: Path, kind: str, seed: int = 0) -> list[Claim]:
    """The claims of ``folder``'s experiment on a copy with its measured columns mutated."""
    rec = io.read_json(folder / "record.json")
    exp = get(rec["config"]["experiment"])
    dst = folder.parent / f"{folder.name}.{kind}-{seed}"
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(folder, dst, ignore=shutil.ignore_patterns("*.png", "*.pdf"))
    rng = np.random.default_rng(seed)
    for table, m in exp.measured.items():
        path = dst / table
        if path.exists():  # an optional table (finite-size-theory without students)
            mutate(pd.read_parquet(path), m, kind, rng).to_parquet(path)
    try:
        return recheck_claims(dst)
    finally:
        shutil.rmtree(dst)


@dataclasses.dataclass
class Verdict:
    """One experiment's claims on its real table and on the wrong ones."""

    name: str
    real: list[Claim]
    constant: list[Claim]
    shuffles: list[list[Claim]]

    def expected(self) -> list[Claim]:
        """The claims expected to hold at this size (not disputed, not full_only)."""
        return [c for c in self.real if not c.disputed and not c.full_only]

    def judged(self) -> list[Claim]:
        """The expected claims that held on the real table: the rule applies to these."""
        return [c for c in self.expected() if c.held]

    def _held(self, claims: list[Claim], name: str) -> bool:
        return next(c.held for c in claims if c.name == name)

    def survives(self, name: str) -> list[str]:
        """The mutations claim ``name`` survives (held on): ``constant``, ``shuffles k/5``."""
        out = []
        if self._held(self.constant, name):
            out.append("constant")
        n = sum(self._held(s, name) for s in self.shuffles)
        if n > SHUFFLES - SHUFFLES_TO_FAIL:
            out.append(f"shuffles {n}/{len(self.shuffles)}")
        return out

    def violators(self) -> list[str]:
        """Expected claims (held on the real table) that a wrong table passes, by name."""
        bad = []
        names = {c.name for c in self.real}
        for c in self.judged():
            surv = self.survives(c.name)
            if not surv:
                continue
            if c.partner:
                if c.partner not in names:
                    bad.append(f"{self.name} / {c.name}: partner {c.partner!r} is no claim")
                    continue
                psurv = self.survives(c.partner)
                if not psurv:
                    continue
                bad.append(f"{self.name} / {c.name}: survives {', '.join(surv)}; its partner "
                           f"{c.partner!r} survives {', '.join(psurv)}")
            else:
                bad.append(f"{self.name} / {c.name}: survives {', '.join(surv)}")
        return bad

    def counts(self) -> tuple[int, int, int, float]:
        """(expected, held on the real table, held on the constant, mean held over shuffles),
        over the expected claims."""
        exp = {c.name for c in self.expected()}
        held_const = sum(c.held for c in self.constant if c.name in exp)
        held_shuf = float(np.mean([sum(c.held for c in s if c.name in exp)
                                   for s in self.shuffles]))
        return len(exp), len(self.judged()), held_const, held_shuf


def judge(name: str, out: Path, config: Any = None) -> Verdict:
    """Run ``name`` once (its small config) into ``out`` and check its claims on the real,
    the constant and ``SHUFFLES`` shuffled tables."""
    res = run_experiment(name, out, config=small_config(name) if config is None else config)
    folder = out / name
    return Verdict(name, list(res.claims), mutated_claims(folder, "constant"),
                   [mutated_claims(folder, "shuffle", seed) for seed in range(SHUFFLES)])


def table(verdicts: Mapping[str, Verdict]) -> str:
    """The issue's table: per experiment and in all."""
    lines = [f"{'experiment':<22} {'expected':>8} {'held real':>9} {'constant':>8} "
             f"{'shuffled (mean)':>15}"]
    tot = np.zeros(4)
    for name, v in verdicts.items():
        c = v.counts()
        tot += c
        lines.append(f"{name:<22} {c[0]:>8} {c[1]:>9} {c[2]:>8} {c[3]:>15.1f}")
    lines.append(f"{'all':<22} {int(tot[0]):>8} {int(tot[1]):>9} {int(tot[2]):>8} "
                 f"{tot[3]:>15.1f}")
    return "\n".join(lines)


if __name__ == "__main__":
    import argparse

    from specdyn.runs import builtin_names

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--quick", action="store_true", help="the quick defaults, not the small")
    args = ap.parse_args()
    verdicts = {}
    for n in args.names or builtin_names():
        if not get(n).measured:
            print(f"{n}: declares no measured columns", file=sys.stderr)
            continue
        verdicts[n] = judge(n, args.out, get(n).config() if args.quick else None)
        for line in verdicts[n].violators():
            print("VIOLATES", line)
    print(table(verdicts))
