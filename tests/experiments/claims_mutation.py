"""Wrong tables for every registered experiment: its measured columns made constant or shuffled.

Each experiment declares, with its registration (``register(..., measured=...)``), which
columns of which tables it measured and which columns name one quantity. From a finished
folder of a real run this module writes copies whose measured columns are

- ``constant``: replaced, per quantity group, by their median;
- ``shuffle-<seed>``: permuted within each quantity group (the measured columns of a row
  move together, so the table stays internally consistent),

and checks the experiment's registered claims on each copy with
:func:`specdyn.runs.recheck_claims`. The rule: every claim expected to hold on
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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn import io
from specdyn.runs import Claim, Measured, get, recheck_claims, run_experiment

#: Shuffles per experiment, and how many of them an expected claim must fail.
SHUFFLES = 5
SHUFFLES_TO_FAIL = 4


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


def mutated_claims(folder: Path, kind: str, seed: int = 0, scratch: Path | None = None
                   ) -> list[Claim]:
    """The claims of ``folder``'s experiment on a copy with its measured columns mutated.

    The copy is written under ``scratch`` (beside ``folder`` by default) and removed.
    """
    rec = io.read_json(folder / "record.json")
    exp = get(rec["config"]["experiment"])
    dst = (folder.parent if scratch is None else scratch) / f"{folder.name}.{kind}-{seed}"
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
        """The claims expected to hold at this size (not disputed, not full_only, not a
        sanity check: an identity holds on any table)."""
        return [c for c in self.real if not c.disputed and not c.full_only and not c.sanity]

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


def judge_folder(folder: Path, scratch: Path | None = None) -> Verdict:
    """The claims of a finished experiment folder on its real, its constant and
    ``SHUFFLES`` shuffled tables (the copies under ``scratch``, by default beside it)."""
    name = io.read_json(folder / "record.json")["config"]["experiment"]
    return Verdict(name, recheck_claims(folder), mutated_claims(folder, "constant", 0, scratch),
                   [mutated_claims(folder, "shuffle", seed, scratch)
                    for seed in range(SHUFFLES)])


def judge(name: str, out: Path, config: Any = None) -> Verdict:
    """Run ``name`` once (its quick default, or ``config``) into ``out`` and judge it."""
    run_experiment(name, out, config=config)
    return judge_folder(out / name)


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
    args = ap.parse_args()
    verdicts = {}
    for n in args.names or builtin_names():
        if not get(n).measured:
            print(f"{n}: declares no measured columns", file=sys.stderr)
            continue
        verdicts[n] = judge(n, args.out)
        for line in verdicts[n].violators():
            print("VIOLATES", line)
    print(table(verdicts))
