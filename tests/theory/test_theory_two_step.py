"""The two-step formulas (specdyn.theory.two_step) against brute force and literal cases."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from specdyn.theory.two_step import (
    formula_count,
    line_gap,
    near_line,
    near_line_ratio,
    spike_exponent,
)

GRID = [round(x, 3) for x in np.arange(0.0, 0.5, 0.035)]


def test_formula_and_lines() -> None:
    assert formula_count(0.35, 0.40) == 2  # 0.40 / 0.15 = 2.67
    assert formula_count(0.2, 0.25) == 0
    assert formula_count(0.25, 0.25) == 1  # exactly on the line k = 1
    # exponent gap to the nearest line alpha2 = k (1/2 - alpha1), k >= 1
    assert line_gap(0.2, 0.45) == pytest.approx(0.15)  # lines at 0.3, 0.6
    assert line_gap(0.44, 0.45) == pytest.approx(0.03)  # lines 0.06 apart: 0.42, 0.48
    assert line_gap(0.1, 0.02) == pytest.approx(0.38)  # no line at k = 0
    assert near_line(0.25, 0.26, 0.05)
    assert not near_line(0.2, 0.45, 0.05)
    assert near_line(0.44, 0.37, 0.05)  # ratio 6.17: 0.17 from an integer, 0.01 in exponent
    assert not near_line_ratio(0.44, 0.37, 0.15)
    assert near_line_ratio(0.25, 0.26, 0.15)
    assert not near_line_ratio(0.1, 0.02, 0.15)


def test_count_and_gap_match_brute_force_over_spikes() -> None:
    # oracle: the spikes k = 1..200 written out, each with strength exponent
    # alpha2 - k (1/2 - alpha1); the count is the number with a positive one
    # (a spike exactly on its line counts, up to rounding)
    for a1, a2 in itertools.product(GRID, GRID):
        exps = [a2 - k * (0.5 - a1) for k in range(1, 201)]
        assert formula_count(a1, a2) == sum(e > -1e-12 for e in exps), (a1, a2)
        assert line_gap(a1, a2) == pytest.approx(min(abs(e) for e in exps), abs=1e-15)
        assert spike_exponent(a1, a2, 3) == pytest.approx(exps[2], abs=1e-15)
        assert near_line(a1, a2, 0.05) == (min(abs(e) for e in exps) < 0.05), (a1, a2)


def test_ratio_margin_is_a_distance_to_a_positive_integer() -> None:
    for a1, a2 in itertools.product(GRID, GRID):
        rho = a2 / (0.5 - a1)
        expected = any(abs(rho - k) < 0.15 for k in range(1, math.ceil(rho) + 2))
        assert near_line_ratio(a1, a2, 0.15) == expected


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"alpha1": 0.5, "alpha2": 0.1}, "alpha1"),
    ({"alpha1": -0.1, "alpha2": 0.1}, "alpha1"),
    ({"alpha1": 0.1, "alpha2": -0.1}, "alpha2"),
    ({"alpha1": 0.1, "alpha2": float("nan")}, "alpha2"),
])
def test_bad_exponents_name_the_argument(kwargs: dict[str, float], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        formula_count(**kwargs)
    with pytest.raises(ValueError, match=match):
        line_gap(**kwargs)
