"""The HTML report draws the steps a tracker coalesced as gaps, never as lines.

Oracle: the run's own record (which steps were measured, which coalesced) against
the figure data on the page: no drawn segment of a curve over steps spans a
coalesced step, and a band named as such covers each coalesced range.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import numpy as np
import pytest
import torch

from specdyn import Schedule
from specdyn.measure import SpectrumTracker, read_spectra
from specdyn.report import write_report


@pytest.fixture(scope="module")
def coalesced_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Thirty steps, every one scheduled; the worker held while steps 10 .. 24 fall due,
    no room for waiting copies: 10 .. 23 are coalesced into 24, then all are measured."""
    out = tmp_path_factory.mktemp("gaps")
    held, release = threading.Event(), threading.Event()

    def slow(rows) -> None:  # noqa: ANN001
        if int(rows.step.iloc[0]) == 9:
            held.set()
            release.wait(timeout=600)

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(24, 48), torch.nn.Tanh(),
                                torch.nn.Linear(48, 48))
    tr = SpectrumTracker(model, schedule=Schedule.every(1), out=out, n_boot=5,
                         max_pending_bytes=0, on_record=slow, max_samples=96)
    x = torch.randn(96, 24, generator=torch.Generator().manual_seed(1))
    for s in range(30):
        model(x)
        if s == 10:
            assert held.wait(timeout=600)      # step 9's record is being written
        with torch.no_grad():
            model[2].weight.mul_(1.01)
        tr.step()
        if s == 24:
            release.set()
        if s >= 24:                            # one at a time from here: all measured
            tr.flush()
    tr.close()
    return out


def test_curves_over_steps_break_at_coalesced_steps(coalesced_run: Path) -> None:
    rec = json.loads((coalesced_run / "record.json").read_text())
    dropped = sorted(int(s) for s, _ in rec["coalesced"])
    measured = sorted(int(s) for s in read_spectra(coalesced_run).step.unique())
    assert dropped == list(range(10, 24)) and measured == [*range(10), *range(24, 30)]
    page = write_report(coalesced_run).read_text()
    assert "14 scheduled steps not recorded" in page and "grey bands" in page
    figures = [json.loads(m.replace("<\\/", "</")) for m in re.findall(
        r"<script type='application/json' data-figure='[^']+'>(.*?)</script>", page, re.S)]
    curves = bands = 0
    for fig in figures:
        for trace in fig["data"]:
            if trace.get("name") == "not measured: coalesced steps":
                xs = [v for v in trace["x"] if v is not None]
                assert min(xs) == 11 and max(xs) >= 24      # steps 10 .. 23, as step + 1
                bands += 1
            elif trace.get("mode") == "lines+markers" and trace["x"]:  # a curve over steps
                x = trace["x"]
                for a, b in zip(x[:-1], x[1:], strict=True):  # every drawn segment
                    if a is not None and b is not None:
                        assert not any(a < d + 1 < b for d in dropped), (trace["name"], a, b)
                assert None in x, trace["name"]
                curves += 1
    # the overview (one band a kind, one curve a layer and kind) and every layer's panel
    n_layers = 4  # weights of "0", "2"; outputs of "0", "2"
    assert curves >= n_layers + n_layers and bands == 2 + n_layers
    # and nothing but measured steps reach the page's points
    xs = {v for fig in figures for tr in fig["data"] if tr.get("mode") == "lines+markers"
          for v in tr["x"] if v is not None}
    assert not xs & {d + 1 for d in dropped}
    assert np.all(np.isin(sorted(xs), np.array(measured) + 1))
