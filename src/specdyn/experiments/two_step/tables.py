"""The two-step experiments' tables: the GD steps run over the grid (``two-step-phase``)
or the targets and batch modes (``batch-reuse``), one row a run, with the outliers of
the weights and what is recorded of them.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import replace

import numpy as np
import pandas as pd

from specdyn._progress import progress
from specdyn.data.hermite import HermiteTarget
from specdyn.experiments.two_step.config import (
    IDENTIFIED_OVERLAP2,
    RATIO_MARGIN,
    STRENGTH_POWERS,
    TOP_SINGULAR_VALUES,
    PhaseConfig,
    ReuseConfig,
    parse_cells,
)
from specdyn.measure.spectra import weight_spectrum
from specdyn.measure.weight_outliers import orthonormal_powers, weight_outliers
from specdyn.sim.protocol import derive_seed
from specdyn.sim.two_step import TwoStepResult, draw_data, gd_steps, gd_steps_row
from specdyn.theory.two_step import formula_count, line_gap, near_line, near_line_ratio


def step_strengths(W1: np.ndarray, W2: np.ndarray, a: np.ndarray, k: int = 4) -> np.ndarray:
    """``(k,)`` norms ``||q_j^T (W2 - W1)||`` of the second step along ``a, a^2, ..., a^k``.

    ``q_j`` is ``a^j`` orthonormalised against the lower powers
    (:func:`~specdyn.measure.weight_outliers.orthonormal_powers`). Entry ``j``
    (``j >= 1``, i.e. ``a^(j+1)``) is the strength of the ``j``-th step-2 spike,
    ``~ C_j N^(alpha2 - j (1/2 - alpha1))``, plus the projection of the update's
    bulk, ``O(N^(alpha2 - 1/2))``. Entry 0 is the rank-one part along ``a``.
    """
    Q = orthonormal_powers(a, k)
    return np.linalg.norm(Q.T @ (W2 - W1), axis=1)


#: Singular values recorded of the step-1 update ``W1 - W0`` (``s1_dW1``, ``s2_dW1``, ...).
UPDATE_SINGULAR_VALUES = 3


def update_singular_values(W0: np.ndarray, W1: np.ndarray,
                           k: int = UPDATE_SINGULAR_VALUES) -> np.ndarray:
    """``(k,)`` largest singular values of the step-1 update ``W1 - W0 = lr1 G1``, decreasing.

    By Lanczos on the implicit ``dW^T dW`` (:func:`~specdyn.measure.spectra.weight_spectrum`,
    ``method="lanczos"``: ``O(N D)`` a product, no Gram formed), the squares accurate to
    about ``1e-12 s1^2``. Abstract 2's "the update is approximately
    rank-one" reads ``s2 / s1`` (``claims.rank_one_ratio_bound``).
    """
    return np.sqrt(weight_spectrum(W1 - W0, normalize="none", top=k, method="lanczos"))


def phase_table(cfg: PhaseConfig) -> pd.DataFrame:
    """One row per (alpha1, alpha2, seed): outlier counts of ``W1`` and ``W2``, the formulas,
    the exponent gap to the nearest line, the step-2 strengths along ``a, ..., a^4`` and the
    top singular values ``s1_dW1, s2_dW1, s3_dW1`` of the step-1 update ``W1 - W0``."""
    rows: dict[tuple[int, int, int], dict[str, object]] = {}
    seeds = [derive_seed(cfg.seed, "rep", r) for r in range(cfg.seeds)]  # the same at every cell
    # seed outermost: each seed's data (weights, batches) is drawn once and moved to the
    # run's device once; the rows are put back in (alpha1, alpha2, seed) order below
    cells = [(i, j, s) for s in seeds
             for i, j in itertools.product(range(len(cfg.alpha1)), range(len(cfg.alpha2)))]
    data = None
    row: Iterator[TwoStepResult] = iter(())
    # W1 and the step-2 direction depend on (alpha1, seed) only: a row of cells (j = 0,
    # 1, ...) shares them (gd_steps_row), and W1's outlier count and the step-1 update's
    # top singular values are computed once a row
    count_w1: dict[tuple[int, int], int] = {}
    update_sv: dict[tuple[int, int], np.ndarray] = {}
    for i, j, s in progress(cells, total=len(cells), desc="two-step-phase"):
        a1, a2 = cfg.alpha1[i], cfg.alpha2[j]
        if data is None or data.seed != s:
            data = None  # free the last seed's draw first
            data = draw_data(cfg.D, cfg.M, cfg.N, target=cfg.target,
                             reuse_batch=cfg.reuse_batch, seed=s)
        if j == 0:  # the table reads no loss: skip the passes that only the loss needs
            row = gd_steps_row(cfg.D, cfg.M, cfg.N, a1, cfg.alpha2, activation=cfg.activation,
                               target=cfg.target, reuse_batch=cfg.reuse_batch, seed=s,
                               data=data, losses=False)
        res = next(row)
        dev = res.meta["device"]  # the outliers' decompositions run on the run's device
        if (i, s) not in count_w1:
            count_w1[i, s] = weight_outliers(res.W1, pvalue=cfg.pvalue, device=dev).count
            update_sv[i, s] = update_singular_values(res.W0, res.W1)
        o2 = weight_outliers(res.W2, res.a, res.beta, pvalue=cfg.pvalue, device=dev)
        f = formula_count(a1, a2)
        ident = o2.left_overlap2.max(axis=1) if o2.count else np.zeros(0)
        step2 = (ident >= IDENTIFIED_OVERLAP2) & (o2.identity >= 1)  # a^2, a^3, ...
        rows[i, j, s] = {
            "alpha1": a1, "alpha2": a2, "seed": s,
            "ratio": a2 / (0.5 - a1), "line_gap": line_gap(a1, a2),
            "near_line": near_line(a1, a2, cfg.line_margin),
            "near_line_ratio": near_line_ratio(a1, a2, RATIO_MARGIN),
            "formula_abstract": f, "formula_total": 1 + f,
            "count_W1": count_w1[i, s], "count_W2": o2.count,
            "count_W2_identified": int(np.sum(ident >= IDENTIFIED_OVERLAP2)),
            "count_W2_step2": int(np.sum(step2)),
            **{f"s{k + 1}_W2": float(o2.singular_values[k])
               for k in range(TOP_SINGULAR_VALUES)},
            "threshold_W2": o2.threshold, "edge_W2": o2.edge, "mp_edge_W2": o2.mp_edge,
            "identity_W2": ",".join(str(int(i)) for i in o2.identity),
            **{f"strength_a{j + 1}": float(x)
               for j, x in enumerate(step_strengths(res.W1, res.W2, res.a,
                                                    k=STRENGTH_POWERS))},
            **{f"s{j + 1}_dW1": float(x) for j, x in enumerate(update_sv[i, s])},
        }
    return pd.DataFrame([rows[key] for key in sorted(rows)])


def cells_table(cfg: PhaseConfig) -> pd.DataFrame:
    """The chosen cells' convergence study: :func:`phase_table`'s rows of each of
    ``cfg.cells`` at each width of ``cfg.cells_N`` (one seed, the grid's first; ``D`` and
    ``M`` in the grid's proportions to ``N``), with a column ``N``."""
    out = []
    for N in cfg.cells_N:
        D, M = max(1, round(N * cfg.D / cfg.N)), max(1, round(N * cfg.M / cfg.N))
        for a1, a2 in parse_cells(cfg.cells):
            one = replace(cfg, N=N, D=D, M=M, alpha1=(a1,), alpha2=(a2,), seeds=1, cells=())
            out.append(phase_table(one).assign(N=N, D=D, M=M))
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame()


def reuse_table(cfg: ReuseConfig) -> pd.DataFrame:
    """One row per (target, batch mode, seed): outliers of ``W2`` and their target alignment.

    ``max_overlap_identified``: largest ``|<v_i, beta>|`` over the outliers
    identified with a power of ``a`` (:meth:`WeightOutliers.direction_alignment`,
    squared left overlap >= 0.1), i.e. over the learned directions;
    ``overlap_a<k>``: that of the direction identified with ``a^k`` (0 if none);
    ``max_overlap``: largest ``|<v_i, beta>|`` over all outliers, including
    those made by a few large-residual samples (the package docstring).
    """
    rows = []
    targets = {name: HermiteTarget.named(name) for name in cfg.targets}
    quantities = {name: {f"reuse_quantity_{k}": tgt.reuse_quantity(k) for k in (1, 2, 3)}
                  for name, tgt in targets.items()}
    runs = list(itertools.product(cfg.targets, (False, True),
                                  [derive_seed(cfg.seed, "rep", r) for r in range(cfg.seeds)]))
    for name, reuse, s in progress(runs, total=len(runs), desc="batch-reuse"):
        tgt = targets[name]
        res = gd_steps(cfg.D, cfg.M, cfg.N, alphas=(cfg.alpha1, cfg.alpha2),
                       activation=cfg.activation, target=name, reuse_batch=reuse, seed=s,
                       losses=False)  # the table reads no loss
        o = weight_outliers(res.W2, res.a, res.beta, pvalue=cfg.pvalue,
                            device=res.meta["device"])
        cos = np.sqrt(o.right_alignment)
        dirs = o.direction_alignment()
        rows.append({
            "target": name, "information_exponent": tgt.information_exponent,
            "batch": "reused" if reuse else "fresh", "seed": s, "count_W2": o.count,
            "max_overlap": float(cos.max()) if o.count else 0.0,
            "max_overlap_identified": (float(np.nanmax(dirs))
                                       if np.isfinite(dirs).any() else 0.0),
            "overlap_top": float(cos[0]) if o.count else 0.0,
            **{f"overlap_a{k + 1}": float(np.nan_to_num(x)) for k, x in enumerate(dirs)},
            "identity_W2": ",".join(str(int(i)) for i in o.identity),
            **quantities[name],
        })
    return pd.DataFrame(rows)
