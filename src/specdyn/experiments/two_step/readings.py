"""What the ``two-step-phase`` claims and figure read off its table: the per-cell seed
medians, the agreement with the count formulas and the rise of the step-2 count with
``floor``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from specdyn.runs.claims import rank_correlation


def phase_agreement(df: pd.DataFrame) -> dict[str, float | int]:
    """Fraction of away-from-line cells whose measured count equals each formula.

    The measured count of a cell is the median over seeds of ``count_W2``
    (rounded half up). ``agree_*_formula_ge1`` restrict to the cells where
    ``floor(alpha2 / (1/2 - alpha1)) >= 1``, where the two formulas say
    something beyond the step-1 spike; ``below_total`` / ``above_total`` are
    the fractions with fewer / more outliers than ``1 + floor``.
    """
    needed = {"alpha1", "alpha2", "count_W2", "formula_abstract", "formula_total", "near_line"}
    if not needed <= set(df.columns):
        raise ValueError(f"df must have the columns {sorted(needed)}")
    cells = _median_cells(df, count="count_W2").rename(columns={"floor": "abstract"})
    away = cells[~cells["near"]]
    n = len(away)
    if n == 0:
        return {"cells_away": 0, "agree_abstract": float("nan"), "agree_total": float("nan"),
                "agree_either": float("nan")}
    ab = away["count"] == away["abstract"]
    tot = away["count"] == away["total"]
    pos = away["abstract"] >= 1  # cells where the abstract predicts step-2 outliers
    out: dict[str, float | int] = {
        "cells_away": n, "cells_near": int(cells["near"].sum()),
        "agree_abstract": float(ab.mean()), "agree_total": float(tot.mean()),
        "agree_either": float((ab | tot).mean()),
        "cells_away_formula_ge1": int(pos.sum()),
        "agree_total_formula_ge1": float(tot[pos].mean()) if pos.any() else float("nan"),
        "agree_abstract_formula_ge1": float(ab[pos].mean()) if pos.any() else float("nan"),
        "below_total": float((away["count"] < away["total"]).mean()),
        "above_total": float((away["count"] > away["total"]).mean())}
    return out


def phase_cells(df: pd.DataFrame) -> pd.DataFrame:
    """One row per ``(alpha1, alpha2)`` cell: seed medians (rounded half up) of the
    outlier count ``count``, the identified step-2 outliers ``step2`` and, where the table
    has it (:func:`~specdyn.experiments.two_step.spikes.theory_columns`), the finite-N
    theory's step-2 count ``theory``, with the cell's ``floor``, ``total = 1 + floor`` and
    ``near`` (line margin)."""
    needed = {"alpha1", "alpha2", "near_line", "formula_abstract", "formula_total",
              "count_W2", "count_W2_step2"}
    if not needed <= set(df.columns):
        raise ValueError(f"df must have the columns {sorted(needed)}")
    extra = {"theory": "theory_step2"} if "theory_step2" in df.columns else {}
    return _median_cells(df, count="count_W2", step2="count_W2_step2", **extra)


def _median_cells(df: pd.DataFrame, **counts: str) -> pd.DataFrame:
    """Per ``(alpha1, alpha2)`` cell: the seed median of each ``counts`` column
    (rounded half up; named by the keyword), ``floor``, ``total`` and ``near``."""
    cells = df.groupby(["alpha1", "alpha2"]).agg(
        **{name: (col, "median") for name, col in counts.items()},
        floor=("formula_abstract", "first"), total=("formula_total", "first"),
        near=("near_line", "first")).reset_index()
    for name in counts:
        cells[name] = np.floor(cells[name] + 0.5)
    return cells


def step2_rise(cells: pd.DataFrame) -> float:
    """Spearman correlation of the cells' step-2 count with ``floor``.

    NaN when either is constant over the cells: a constant count cannot show a rise
    (:func:`~specdyn.runs.claims.rank_correlation`).
    """
    return rank_correlation(cells["floor"], cells["step2"])
