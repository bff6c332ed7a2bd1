"""Two GD steps in the linear-width regime: outlier-count phase grid and batch reuse.

Experiments (``related-notes.md`` section 2, second related abstract):

``two-step-phase``
    Outliers of ``W2`` over an ``(alpha1, alpha2)`` grid, beside the abstract's
    count ``floor(alpha2 / (1/2 - alpha1))`` and the count with the step-1 spike,
    ``1 + floor(...)``. Cells whose ratio ``alpha2 / (1/2 - alpha1)`` lies within
    ``line_margin`` of an integer are "near a line" and left out of the score.
``batch-reuse``
    Largest ``|<v_i, beta>|`` over the outliers' right singular vectors of
    ``W2``, fresh versus reused batch, for targets of information exponent 1, 2
    (with and without ``E[z sigma*^2] != 0``) and 3.

Measured (d = n = N = 2000, target He1, fresh batch, the default grid): the
count of ``W2`` never exceeds ``1 + floor(...)``; it equals it wherever the
formula is 0 (only the step-1 spike), but where the formula is >= 1 the
step-2 outliers appear only far from the lines (finite-size lag: the ``k``-th
step-2 spike has strength ~ ``C_k N^(alpha2 - k (1/2 - alpha1))`` with
``C_1 ~ 0.2`` for tanh(z + 1/2)). Away from the lines 76 % of cells agree with
one of the formulas (55 % with ``1 + floor``, 21 % with ``floor``). Run with
``OMP_NUM_THREADS=1`` on small shared machines: torch and the host BLAS
otherwise oversubscribe the cores (15x slower here).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from specdyn import _validate as v
from specdyn import io
from specdyn.data.hermite import NAMED_TARGETS, HermiteTarget
from specdyn.experiments.registry import ExperimentResult, register
from specdyn.measure.weight_outliers import weight_outliers
from specdyn.plot import save_figure
from specdyn.plot import two_step as tsplot
from specdyn.sim.activations import ACTIVATIONS
from specdyn.sim.two_step import gd_steps


def _alphas(name: str, values: tuple[float, ...]) -> tuple[float, ...]:
    if len(values) == 0:
        raise ValueError(f"{name} must be a non-empty tuple of exponents in [0, 0.5)")
    return tuple(v.in_range(name, a, 0.0, 0.5, hi_open=True) for a in values)


def formula_count(alpha1: float, alpha2: float) -> int:
    """The abstract's outlier count ``floor(alpha2 / (1/2 - alpha1))``."""
    return int(math.floor(alpha2 / (0.5 - alpha1) + 1e-12))


def near_line(alpha1: float, alpha2: float, margin: float) -> bool:
    """Whether ``alpha2 / (1/2 - alpha1)`` is within ``margin`` of a positive integer."""
    rho = alpha2 / (0.5 - alpha1)
    k = round(rho)
    return k >= 1 and abs(rho - k) < margin


@dataclass(frozen=True)
class PhaseConfig:
    """``two-step-phase``: grid of step-size exponents; quick default ~20 s of CPU.

    ``alpha1`` and ``alpha2`` sit on different lattices so that few cells fall
    on the lines ``alpha2 = k (1/2 - alpha1)``.
    """

    N: int = 600
    d: int = 600
    n: int = 600
    alpha1: tuple[float, ...] = (0.04, 0.12, 0.20, 0.28, 0.36, 0.44)
    alpha2: tuple[float, ...] = (0.05, 0.13, 0.21, 0.29, 0.37, 0.45)
    target: str = "He1"
    activation: str = "tanh-shift"
    reuse_batch: bool = False
    seeds: int = 1
    seed: int = 0
    line_margin: float = 0.15
    pvalue: float = 0.01

    def __post_init__(self) -> None:
        for name in ("N", "d", "n", "seeds"):
            v.positive_int(name, getattr(self, name))
        if not isinstance(self.seed, int) or isinstance(self.seed, bool):
            raise ValueError(f"seed must be an integer, got {self.seed!r}")
        _alphas("alpha1", self.alpha1)
        _alphas("alpha2", self.alpha2)
        v.choice("target", self.target, NAMED_TARGETS)
        v.choice("activation", self.activation, ACTIVATIONS)
        v.in_range("line_margin", self.line_margin, 0.0, 0.5)
        v.in_range("pvalue", self.pvalue, 0.0, 1.0, lo_open=True, hi_open=True)


def _full_phase() -> PhaseConfig:
    grid1 = tuple(round(x, 3) for x in np.arange(0.02, 0.5, 0.05))
    grid2 = tuple(round(x, 3) for x in np.arange(0.03, 0.5, 0.05))
    return PhaseConfig(N=4000, d=4000, n=4000, alpha1=grid1, alpha2=grid2, seeds=3)


def phase_table(cfg: PhaseConfig) -> pd.DataFrame:
    """One row per (alpha1, alpha2, seed): outlier counts of ``W1`` and ``W2`` and the formulas."""
    rows = []
    for a1 in cfg.alpha1:
        for a2 in cfg.alpha2:
            for s in range(cfg.seed, cfg.seed + cfg.seeds):
                res = gd_steps(cfg.d, cfg.n, cfg.N, alphas=(a1, a2), activation=cfg.activation,
                               target=cfg.target, reuse_batch=cfg.reuse_batch, seed=s)
                o1 = weight_outliers(res.W1, res.a, res.beta, pvalue=cfg.pvalue)
                o2 = weight_outliers(res.W2, res.a, res.beta, pvalue=cfg.pvalue)
                f = formula_count(a1, a2)
                ident = o2.left_overlap2.max(axis=1) if o2.count else np.zeros(0)
                rows.append({
                    "alpha1": a1, "alpha2": a2, "seed": s,
                    "ratio": a2 / (0.5 - a1), "near_line": near_line(a1, a2, cfg.line_margin),
                    "formula_abstract": f, "formula_total": 1 + f,
                    "count_W1": o1.count, "count_W2": o2.count,
                    "count_W2_identified": int(np.sum(ident >= 0.1)),
                    "s1_W2": float(o2.singular_values[0]),
                    "s2_W2": float(o2.singular_values[1]),
                    "threshold_W2": o2.threshold, "edge_W2": o2.edge, "mp_edge_W2": o2.mp_edge,
                    "identity_W2": ",".join(str(int(i)) for i in o2.identity),
                })
    return pd.DataFrame(rows)


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
    cells = df.groupby(["alpha1", "alpha2"]).agg(
        count=("count_W2", "median"), abstract=("formula_abstract", "first"),
        total=("formula_total", "first"), near=("near_line", "first")).reset_index()
    cells["count"] = np.floor(cells["count"] + 0.5)
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


@register("two-step-phase",
          "outlier count of W2 over (alpha1, alpha2) beside floor(alpha2/(1/2-alpha1)) and 1+floor",
          PhaseConfig, full=_full_phase)
def run_phase(cfg: PhaseConfig, out_dir: Path) -> ExperimentResult:
    """Phase grid of the number of outliers after two GD steps."""
    df = phase_table(cfg)
    table = io.write_table(df, out_dir / "two-step-phase.parquet")
    agree = phase_agreement(df)
    a1, a2 = np.asarray(cfg.alpha1), np.asarray(cfg.alpha2)
    measured = np.full((len(a1), len(a2)), np.nan)
    near = np.zeros_like(measured, dtype=bool)
    for i, x in enumerate(a1):
        for j, y in enumerate(a2):
            sel = df[(df["alpha1"] == x) & (df["alpha2"] == y)]
            measured[i, j] = float(sel["count_W2"].mean())
            near[i, j] = bool(sel["near_line"].iloc[0])
    title = (f"N = {cfg.N}, d = {cfg.d}, n = {cfg.n}, target {cfg.target}, "
             f"{'reused' if cfg.reuse_batch else 'fresh'} batch, {cfg.seeds} seed(s); "
             f"away from lines: agrees with abstract {agree['agree_abstract']:.0%}, "
             f"with 1+floor {agree['agree_total']:.0%}")
    fig = tsplot.outlier_phase_grid(a1, a2, measured, near, title=title)
    figures = save_figure(fig, out_dir / "two-step-phase")
    return ExperimentResult("two-step-phase", out_dir, figures, [table], dict(agree))


@dataclass(frozen=True)
class ReuseConfig:
    """``batch-reuse``: alignment with the target, fresh versus reused batch."""

    N: int = 1000
    d: int = 1000
    n: int = 1000
    alpha1: float = 0.35
    alpha2: float = 0.45
    targets: tuple[str, ...] = ("He1", "He2", "He2+He3", "He3")
    activation: str = "tanh-shift"
    seeds: int = 2
    seed: int = 0
    pvalue: float = 0.01

    def __post_init__(self) -> None:
        for name in ("N", "d", "n", "seeds"):
            v.positive_int(name, getattr(self, name))
        if not isinstance(self.seed, int) or isinstance(self.seed, bool):
            raise ValueError(f"seed must be an integer, got {self.seed!r}")
        _alphas("alpha1", (self.alpha1,))
        _alphas("alpha2", (self.alpha2,))
        if len(self.targets) == 0:
            raise ValueError("targets must name at least one target")
        for t in self.targets:
            v.choice("targets", t, NAMED_TARGETS)
        v.choice("activation", self.activation, ACTIVATIONS)
        v.in_range("pvalue", self.pvalue, 0.0, 1.0, lo_open=True, hi_open=True)


def _full_reuse() -> ReuseConfig:
    return ReuseConfig(N=4000, d=4000, n=4000, seeds=5)


def reuse_table(cfg: ReuseConfig) -> pd.DataFrame:
    """One row per (target, batch mode, seed): outliers of ``W2`` and their target alignment.

    ``max_overlap``: largest ``|<v_i, beta>|`` over all outliers of ``W2``;
    ``max_overlap_identified``: the same over the outliers identified with a
    power of ``a`` (:meth:`WeightOutliers.direction_alignment`), which leaves
    out the outliers made by single samples with a large residual.
    """
    rows = []
    for name in cfg.targets:
        tgt = HermiteTarget.named(name)
        quantities = {f"reuse_quantity_{k}": tgt.reuse_quantity(k) for k in (1, 2, 3)}
        for reuse in (False, True):
            for s in range(cfg.seed, cfg.seed + cfg.seeds):
                res = gd_steps(cfg.d, cfg.n, cfg.N, alphas=(cfg.alpha1, cfg.alpha2),
                               activation=cfg.activation, target=name, reuse_batch=reuse, seed=s)
                o = weight_outliers(res.W2, res.a, res.beta, pvalue=cfg.pvalue)
                cos = np.sqrt(o.right_alignment)
                dirs = o.direction_alignment()
                rows.append({
                    "target": name, "information_exponent": tgt.information_exponent,
                    "batch": "reused" if reuse else "fresh", "seed": s, "count_W2": o.count,
                    "max_overlap": float(cos.max()) if o.count else 0.0,
                    "max_overlap_identified": (float(np.nanmax(dirs))
                                               if np.isfinite(dirs).any() else 0.0),
                    "overlap_top": float(cos[0]) if o.count else 0.0,
                    "identity_W2": ",".join(str(int(i)) for i in o.identity),
                    **quantities,
                })
    return pd.DataFrame(rows)


@register("batch-reuse",
          "target alignment of W2's outliers after two GD steps: fresh vs reused batch",
          ReuseConfig, full=_full_reuse)
def run_reuse(cfg: ReuseConfig, out_dir: Path) -> ExperimentResult:
    """Alignment bars for targets of information exponent 1, 2 and 3."""
    df = reuse_table(cfg)
    table = io.write_table(df, out_dir / "batch-reuse.parquet")
    labels: list[str] = []
    fresh: dict[str, np.ndarray] = {}
    reused: dict[str, np.ndarray] = {}
    quantity: dict[str, list[float]] = {}
    summary: dict[str, object] = {}
    for name in cfg.targets:
        sel = df[df["target"] == name]
        lab = f"{name} (k*={int(sel['information_exponent'].iloc[0])})"
        labels.append(lab)
        fresh[lab] = sel[sel["batch"] == "fresh"]["max_overlap"].to_numpy()
        reused[lab] = sel[sel["batch"] == "reused"]["max_overlap"].to_numpy()
        quantity[lab] = [float(sel[f"reuse_quantity_{k}"].iloc[0]) for k in (1, 2, 3)]
        summary[name] = {"fresh_mean": float(fresh[lab].mean()),
                         "reused_mean": float(reused[lab].mean()),
                         "fresh_identified_mean": float(
                             sel[sel["batch"] == "fresh"]["max_overlap_identified"].mean()),
                         "reused_identified_mean": float(
                             sel[sel["batch"] == "reused"]["max_overlap_identified"].mean()),
                         **{f"reuse_quantity_{k}": quantity[lab][k - 1] for k in (1, 2, 3)}}
    title = (f"N = {cfg.N}, d = {cfg.d}, n = {cfg.n}, "
             f"$(\\alpha_1, \\alpha_2) = ({cfg.alpha1:g}, {cfg.alpha2:g})$, {cfg.seeds} seeds")
    fig = tsplot.alignment_bars(labels, fresh, reused, quantity,
                                noise_floor=1.0 / math.sqrt(cfg.d), title=title)
    figures = save_figure(fig, out_dir / "batch-reuse")
    return ExperimentResult("batch-reuse", out_dir, figures, [table], summary)
