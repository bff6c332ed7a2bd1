"""Every script in examples/ runs as it stands, at its small (CI) size.

Each script accepts ``--small`` (also ``SPECDYN_EXAMPLES_SMALL=1``) and ``--out``;
it runs in a subprocess from a temporary directory, must exit 0, print what it
promises, and write its outputs under ``--out``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))

# text each script must print (evidence that it did its job, not just exited 0)
EXPECT = {
    "paper_in_ten_minutes.py": ["regime = feature-learning", "regime = lazy", "fig2:", "fig3:"],
    "track_your_model.py": ["activation rank exponent", "weight outliers"],
    "analyze_checkpoint.py": ["0.weight", "analyze(path):", "skipped: 1-D tensor",
                              "skipped: optimizer state"],
    "monitor_a_transformer.py": ["blocks.layers.0.self_attn.q", "recorded steps", "report:"],
    "sweep_on_dask.py": ["2 finished, 0 failed", "re-run: 2 of 2 points already finished"],
    "real_digits.py": ["input spectrum alpha", "first hidden layer over training",
                       "spectrum (training)", "report:"],
}


def test_every_example_is_covered() -> None:
    assert {p.name for p in EXAMPLES} == set(EXPECT)


@pytest.mark.slow
@pytest.mark.parametrize("script", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs_small(script: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               SPECDYN_EXAMPLES_SMALL="1", MPLBACKEND="Agg")
    res = subprocess.run([sys.executable, str(script), "--small", "--out", str(out)],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, f"{script.name}:\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    for text in EXPECT[script.name]:
        assert text in res.stdout, f"{script.name} did not print {text!r}:\n{res.stdout[-3000:]}"
    assert out.exists() and any(out.rglob("*")), f"{script.name} wrote nothing under --out"
    if script.name == "monitor_a_transformer.py":
        # small: every scheduled step recorded, and the example counts what the report does
        import re

        m = re.search(r"(\d+) recorded steps of (\d+) scheduled", res.stdout)
        assert m and m[1] == m[2] and int(m[1]) > 2, res.stdout[-3000:]
        page = (out / "report.html").read_text()
        assert f"status finished; {m[1]} recorded steps (" in page
        assert "coalesced" not in page
    if script.name == "paper_in_ten_minutes.py":
        for name in ("fig2", "fig3"):
            assert (out / name / f"{name}.png").exists()
            assert (out / name / "record.json").exists()
