"""Every claim expected to hold dies on a wrong table, for every registered experiment.

Each experiment's folder is the session's one quick run of it (``quick_runs.py``, shared
with the quick-claims and figure-layout tests); its registered claims are checked on
copies of its tables whose declared measured columns are constant (the median per
quantity) or shuffled within each quantity (5 seeds). An expected claim that held on the
real table must fail on the constant table and on at least 4 of the 5 shuffles, or name a
``partner`` claim that does (see ``claims_mutation.py``). The violators are listed by name.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from claims_mutation import SHUFFLES, judge_folder, mutate, table
from quick_runs import QuickRuns

from specdyn.runs import Measured, builtin_names, get


@pytest.mark.slow
@pytest.mark.parametrize("name", builtin_names())
def test_every_expected_claim_fails_on_constant_and_shuffled_tables(
        tmp_path: Path, quick_run: QuickRuns, name: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    exp = get(name)
    assert exp.measured, (f"{name} declares no measured columns: register(..., measured="
                          "{table: Measured(columns, by=...)})")
    folder = quick_run(name).folder
    v = judge_folder(folder, scratch=tmp_path)
    # the declared tables and columns exist in what the run wrote
    for tab, m in exp.measured.items():
        path = folder / tab
        if path.exists():
            cols = set(pd.read_parquet(path).columns)
            assert set(m.columns) | set(m.by) | set(m.where) <= cols, (name, tab, cols)
    assert v.judged(), f"{name}: no expected claim held on the quick real run"
    with capsys.disabled():
        print(f"\n{table({name: v})}")
        not_judged = [c.name for c in v.expected() if not c.held]
        if not_judged:
            print(f"  expected but not held at the quick size (not judged): {not_judged}")
    assert len(v.shuffles) == SHUFFLES
    bad = v.violators()
    assert not bad, "claims a wrong table passes:\n  " + "\n  ".join(bad)


def test_mutations_are_per_quantity_and_leave_other_rows() -> None:
    df = pd.DataFrame({"q": ["a"] * 4 + ["b"] * 4, "src": ["sim", "th"] * 4,
                       "x": [1.0, 9.0, 2.0, 9.0, 10.0, 9.0, 30.0, 9.0], "k": range(8)})
    m = Measured(("x",), by=("q",), where={"src": ("sim",)})
    const = mutate(df, m, "constant")
    assert const.x.tolist() == [1.5, 9.0, 1.5, 9.0, 20.0, 9.0, 20.0, 9.0]
    import numpy as np

    shuf = mutate(df, m, "shuffle", np.random.default_rng(1))
    assert shuf.k.tolist() == df.k.tolist()
    for q in ("a", "b"):
        sel = (df.q == q) & (df.src == "sim")
        assert sorted(shuf.x[sel]) == sorted(df.x[sel])
    assert (shuf.x[df.src == "th"] == 9.0).all()
    with pytest.raises(ValueError, match="measured"):
        Measured(())
    with pytest.raises(ValueError, match="both"):
        Measured(("x",), by=("x",))


def test_revised_and_partner_are_recorded_and_marked() -> None:
    from specdyn.runs.claims import Claim, mark, within

    c = within("x", 2.0, 0.0, 1.0, source="own", revised="abc123: [0, 2] -> [0, 1], why",
               partner="y")
    d = c.to_dict()
    assert d["revised"].startswith("abc123") and d["partner"] == "y"
    assert mark(d) == "FAILED (revised)"
    assert mark(Claim("y", "in [0, 1]", 0.5, True, source="own").to_dict()) == "held"
    # a record written before the keys existed
    assert mark({"held": False, "full_only": True}) == "NOT HELD (quick size)"
