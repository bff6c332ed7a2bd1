"""The one range reader: ``log:LO:HI:N`` / ``lin:LO:HI:N`` (command line and sweep files).

Oracles: hand-written grids (powers of ten, even steps) and the two callers, which
must give the same values for the same text.
"""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from specdyn.ranges import is_range, parse_range, range_values


def test_log_and_lin_ranges_include_both_ends() -> None:
    np.testing.assert_allclose(range_values(*parse_range("log:1:1e3:4")),
                               [1.0, 10.0, 100.0, 1000.0], rtol=1e-14)
    np.testing.assert_array_equal(range_values(*parse_range(" lin:0:1:5 ")),
                                  [0.0, 0.25, 0.5, 0.75, 1.0])
    assert range_values("log", 2.0, 2.0, 1).tolist() == [2.0]
    assert is_range("log:1:2:3") and is_range("lin:x") and not is_range("1,2") \
        and not is_range(3)


@pytest.mark.parametrize("text, match", [
    ("log:1:10", "must read log:LO:HI:N"),
    ("exp:1:10:3", "must read"),
    ("log:1:x:3", "must read"),
    ("log:1:10:2.5", "must read"),
])
def test_malformed_range_is_refused(text: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        parse_range(text)


@pytest.mark.parametrize("args, match", [
    (("log", 0.0, 10.0, 5), "log range needs LO, HI > 0"),
    (("log", 1.0, float("inf"), 3), "needs finite LO, HI"),
    (("lin", float("nan"), 1.0, 3), "needs finite LO, HI"),
    (("lin", 0.0, 1.0, 0), "integer >= 1"),
    (("lin", 0.0, 1.0, True), "integer >= 1"),
    (("cubic", 0.0, 1.0, 3), "kind must be one of log, lin"),
])
def test_bad_range_values_are_refused(args: tuple, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        range_values(*args)


def test_command_line_and_sweep_files_read_the_same_values() -> None:
    from specdyn.cli._args import number_list
    from specdyn.runs.spec import _axis_values

    for text in ("log:16:256:5", "lin:0.5:2:4", "log:1e-3:1:7"):
        cli = number_list(text)
        # sweep files keep 12 significant digits (readable ids)
        assert _axis_values(text, "x") == [float(f"{x:.12g}") for x in cli]
    with pytest.raises(argparse.ArgumentTypeError, match="log range needs LO, HI > 0"):
        number_list("log:0:10:5")
    with pytest.raises(ValueError, match="x: a log range needs LO, HI > 0"):
        _axis_values("log:0:10:5", "x")
