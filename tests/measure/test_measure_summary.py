"""One summary pipeline: ``analyze`` and the tracker report the same columns and values.

Oracle: ``analyze`` (``summarize_matrix``) of the same weights, a different entry
point into ``summarize_spectrum``; the tracker reads the matrix on its own path
(torch, on the tensor's device), so its spectrum is the same to rounding.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from specdyn import Schedule
from specdyn.measure import SUMMARY_COLUMNS, SpectrumTracker, analyze, summarize_spectrum


def _model() -> torch.nn.Linear:
    # i.i.d. weights plus two strong directions: an MP bulk with outliers and a fit
    gen = np.random.default_rng(3)
    rows, cols = 120, 60
    W = gen.standard_normal((rows, cols)) / np.sqrt(cols)
    for s in (6.0, 4.0):
        u, w = gen.standard_normal(rows), gen.standard_normal(cols)
        W += s * np.outer(u / np.linalg.norm(u), w / np.linalg.norm(w))
    lin = torch.nn.Linear(cols, rows, bias=False)
    with torch.no_grad():
        lin.weight.copy_(torch.from_numpy(W))
    return lin.double()


def test_analyze_columns_are_the_summary_columns() -> None:
    df = analyze(_model(), n_boot=20)
    cols = list(df.columns)
    assert cols[cols.index("exponent"):cols.index("notes")] == list(SUMMARY_COLUMNS)


@pytest.mark.parametrize("summary_process", [False, True])
def test_tracker_summary_columns_equal_analyze(summary_process: bool) -> None:
    model = _model()
    row = analyze(model, n_boot=20).iloc[0]
    tr = SpectrumTracker(model, schedule=Schedule.every(1), activations=False, n_boot=20,
                         background=summary_process, summary_process=summary_process,
                         precision="float64")  # analyze's float64 path: equal values
    tr.step()
    tr.close()
    df = tr.table()
    summ = df[(df["rank"] == 0) & df.quantity.str.startswith("weight_")]
    got = {q.removeprefix("weight_"): v for q, v in zip(summ.quantity, summ.value, strict=True)}
    assert set(got) == set(SUMMARY_COLUMNS)  # same names (every value exists here)
    assert row["n_outliers"] == 2 and row["verdict"] == df["verdict"].iloc[0]
    for col in SUMMARY_COLUMNS:
        # the two spectra agree to rounding (numpy vs torch eigvalsh): so do the summaries
        assert got[col] == pytest.approx(float(row[col]), rel=1e-9, abs=1e-12), col


def test_summarize_spectrum_of_the_same_spectrum_gives_the_same_values() -> None:
    eigs = np.sort(np.random.default_rng(0).chisquare(30, 50) / 30)[::-1]
    a = summarize_spectrum(eigs, 0.5, n_samples=100.0, n_boot=10)
    b = summarize_spectrum(eigs.copy(), 0.5, n_samples=100.0, n_boot=10)
    assert list(a.values()) == list(SUMMARY_COLUMNS)
    assert a.values() == b.values() and a.verdict == b.verdict


def test_summarize_spectrum_reports_each_failed_step() -> None:
    eigs = np.array([6.0, 5.0, 4.0, 3.0, 2.0, 1.0])
    s = summarize_spectrum(eigs, 0.5, n_samples=12.0, complete=False, n_boot=0)
    assert ("outliers", "only the top 6 eigenvalues: no MP fit") in s.failed
    assert s.mp is None and s.outliers is None and s.values()["n_outliers"] is None
    off = summarize_spectrum(eigs, 0.5, n_samples=6.0, fit=False, outliers=False)
    assert off.failed == () and all(off.values()[c] is None for c in SUMMARY_COLUMNS[:-1])


def test_a_spectrum_of_four_eigenvalues_is_too_short_to_summarise() -> None:
    """A 4 x 128 layer (4 eigenvalues of W^T W / rows above the numerical zeros) got an
    exponent fitted on 4 points and "bulk + >= 1 outliers (cap reached)": now no exponent,
    no MP bulk, and the verdict says why."""
    from specdyn.measure.summary import summarize_matrix

    W = np.random.default_rng(0).standard_normal((4, 128))
    s = summarize_matrix("head", W)
    assert s.status == "measured" and s.verdict == "too few eigenvalues (4)"
    assert s.fit is None and s.mp is None and s.outliers is None
    assert [st for st, _ in s.failed] == ["exponent", "outliers"]
    assert all("too few eigenvalues: 4 above the rank tolerance" in why for _, why in s.failed)
    assert s.eigs is not None and s.eigs.size == 4  # the spectrum itself is kept
    # five are enough
    assert summarize_matrix("w", np.random.default_rng(0).standard_normal((5, 128))).fit
