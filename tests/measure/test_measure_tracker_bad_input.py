"""The bad-input table of SpectrumTracker (issue 19): one clear message, rows kept.

A pattern that matches nothing and a selection with no weight matrix are refused
at construction, before anything is written; a non-finite activation (the run
diverged) is reported by the training loop's next ``tracker.step()`` with the
layer and the step, and the rows of earlier steps stay readable, by
``read_spectra`` and by the report. Schedules are explicit lists of steps.
"""

from __future__ import annotations

import json

import pytest
import torch

from specdyn.measure import SpectrumTracker, read_spectra


def _model() -> torch.nn.Sequential:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(24, 40), torch.nn.LayerNorm(40),
                               torch.nn.Linear(40, 12))


def test_pattern_matching_nothing_is_refused_before_any_file(tmp_path) -> None:
    out = tmp_path / "run"
    with pytest.raises(ValueError, match=r"pattern 'blocks\.\*\.attn' matches no submodule "
                                         r"of the model \(names look like: 0, 1, 2"):
        SpectrumTracker(_model(), modules="blocks.*.attn", out=out, schedule=[0])
    assert not (out / "rows").exists()


def test_selection_without_a_matrix_names_the_layer_and_its_shapes(tmp_path) -> None:
    out = tmp_path / "run"
    with pytest.raises(ValueError, match=r"no weight matrix .*'1' \(LayerNorm\): "
                                         r"weight \(40,\), bias \(40,\)"):
        SpectrumTracker(_model(), modules="1", activations=False, out=out, schedule=[0])
    assert not (out / "rows").exists()


def test_nonfinite_activation_stops_the_loop_at_its_next_step_and_keeps_rows(tmp_path) -> None:
    from specdyn.report import write_report

    model = _model()
    tr = SpectrumTracker(model, out=tmp_path, schedule=[0, 1, 2, 3], n_boot=0)
    for _ in range(2):
        model(torch.randn(64, 24))
        tr.step()
    tr.flush()                                    # steps 0 and 1 are on disk
    model(torch.full((64, 24), float("inf")))    # the run diverges at step 2 ...
    tr.step()
    tr._queue.drain()                             # (the worker has now seen it)
    model(torch.randn(64, 24))
    # ... and the training loop hears of it at its next step, layer and step named.
    with pytest.raises(FloatingPointError, match=r"activations of layer '0' are not finite at "
                                                 r"step 2: the run diverged"):
        tr.step()
    tr.close()
    df = read_spectra(tmp_path)
    assert sorted(df.step.unique()) == [0, 1]
    assert df.value.notna().all()                 # no NaN written as a result
    rec = json.loads((tmp_path / "record.json").read_text())
    assert rec["status"] == "failed"
    assert "layer '0'" in rec["error"] and "step 2" in rec["error"]
    html = write_report(tmp_path).read_text()     # the rows written stay viewable
    assert "0" in html and len(html) > 1000
