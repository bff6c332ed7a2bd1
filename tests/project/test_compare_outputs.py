"""scripts/compare_outputs.py: bit-for-bit comparison of two reproduce output folders.

Oracle: folders built by hand, identical but for one ulp, one wall time, one renamed
column or one claim.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("compare_outputs",
                                               ROOT / "scripts" / "compare_outputs.py")
assert _spec is not None and _spec.loader is not None
co = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(co)


def _folder(root: Path, value: float, wall: float, col: str = "exponent",
            measured: float = 0.5) -> Path:
    (root / "exp").mkdir(parents=True)
    pd.DataFrame({col: [1.0, value, np.nan], "k": [1, 2, 3], "wall_time_s": [wall] * 3,
                  "spectrum": [np.arange(3.0)] * 3}).to_parquet(root / "exp" / "exp.parquet")
    rec = {"wall_time_s": wall, "claims": [{"name": "slope", "measured": measured,
                                            "held": True, "wall_time_s": wall}]}
    (root / "exp" / "record.json").write_text(json.dumps(rec))
    return root


def test_identical_but_for_wall_time_is_identical(tmp_path: Path, capsys) -> None:
    a = _folder(tmp_path / "a", 0.1, wall=1.0)
    b = _folder(tmp_path / "b", 0.1, wall=7.0)
    assert co.main([str(a), str(b)]) == 0
    assert "1 tables and the claims of 1 records compared" in capsys.readouterr().out


def test_one_ulp_a_claim_or_a_missing_file_differs(tmp_path: Path) -> None:
    a = _folder(tmp_path / "a", 0.1, wall=1.0)
    b = _folder(tmp_path / "b", np.nextafter(0.1, 1.0), wall=1.0, measured=0.25)
    diffs, n_tables, n_records = co.compare_folders(a, b)
    assert (n_tables, n_records) == (1, 1)
    assert any("column 'exponent': values differ" in d for d in diffs)
    assert any("claim 'slope': measured 0.5 vs 0.25" in d for d in diffs)
    (b / "exp" / "exp.parquet").unlink()
    assert co.main([str(a), str(b)]) == 1


def test_a_renamed_column_is_compared_by_value(tmp_path: Path) -> None:
    a = _folder(tmp_path / "a", 0.1, wall=1.0, col="ci_low")
    b = _folder(tmp_path / "b", 0.1, wall=1.0, col="exponent_ci_low")
    assert co.main([str(a), str(b)]) == 1
    assert co.main([str(a), str(b), "--rename", "ci_low=exponent_ci_low"]) == 0
