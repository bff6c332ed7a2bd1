"""Two-step experiments and the claims of the second related abstract.

Measured at d = n = N = 2000 (see the issue note): with a reused batch the
second step aligns an outlier of W2 with the target for He2+He3
(E[z sigma*^2] = sqrt 3) but not for He2 (E[z sigma*^(k+1)] = 0 for every k).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from specdyn.experiments.two_step.config import PhaseConfig, ReuseConfig
from specdyn.experiments.two_step.readings import phase_agreement
from specdyn.experiments.two_step.tables import phase_table, step_strengths
from specdyn.measure.weight_outliers import weight_outliers
from specdyn.runs import run_experiment
from specdyn.sim.two_step import gd_steps
from specdyn.theory.two_step import formula_count, near_line


def test_phase_agreement_counts_cells() -> None:
    df = pd.DataFrame({
        "alpha1": [0.1, 0.1, 0.3, 0.3], "alpha2": [0.1, 0.45, 0.1, 0.45],
        "count_W2": [1, 2, 1, 1], "near_line": [False, False, False, False]})
    df["formula_abstract"] = [formula_count(a, b) for a, b in zip(df.alpha1, df.alpha2,
                                                                    strict=True)]
    df["formula_total"] = df["formula_abstract"] + 1
    agree = phase_agreement(df)
    # formulas: 0, 1, 0, 2 -> counts 1, 2, 1, 1 agree with 1+floor, 1+floor, 1+floor, neither
    assert agree["agree_total"] == pytest.approx(0.75)
    assert agree["agree_abstract"] == pytest.approx(0.0)
    assert agree["agree_either"] == pytest.approx(0.75)
    assert agree["below_total"] == pytest.approx(0.25)


def test_phase_grid_small_sizes_never_exceeds_total_formula() -> None:
    # N = 400: the outliers of W2 are the step-1 spike plus those of step 2; the
    # count including the step-1 spike, 1 + floor(...), bounds every cell and is
    # reached where floor(...) = 0 (finite-size lag elsewhere: see the issue note).
    cfg = PhaseConfig(N=400, D=400, M=400, alpha1=(0.1, 0.2, 0.44), alpha2=(0.05, 0.13, 0.45))
    df = phase_table(cfg)
    assert (df["count_W2"] <= df["formula_total"]).all()
    zero = df[(df["formula_abstract"] == 0) & ~df["near_line"] & (df["alpha1"] >= 0.1)]
    assert len(zero) >= 4
    assert (zero["count_W2"] == 1).all()
    assert (df["count_W1"] == 1).all()  # the step-1 spike, for alpha1 >= 0.1


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=(
    "not what N = 250-1000 shows, on any seed set: over 16 seeds (0-15, derived streams) "
    "the log-log slopes along a and a^2 are 0.506 +- 0.012 and 0.411 +- 0.018 at (0.36, "
    "0.45) (formula 0.45, 0.31) and 0.349 +- 0.011 and 0.068 +- 0.024 at (0.2, 0.29) "
    "(0.29, -0.01): 3-6 SE above; the formula's own finite-N correction, the bulk's "
    "projection N^(alpha2 - 1/2), can only lower a slope. Seed-to-seed sd of a slope is "
    "0.04-0.09, so 2 seeds scatter by +-0.05 (the former streams' 0.33 at seeds 0-5 was "
    "2.8 SE of this mean). The gap a^2 - a is -0.095 +- 0.017 / -0.28 +- 0.023 against "
    "-(1/2 - alpha1) = -0.14 / -0.30. The finite-N theory of the step-2 strengths "
    "(theory.two_step_spikes, population a) has local slopes 0.490 / 0.365 and 0.317 / "
    "-0.024 over the same N: it explains the a slope's excess (0.04 of 0.056 at (0.36, "
    "0.45)) and part of a^2's, not all (a^2: 2.5 SE and 3.8 SE below the measured); it "
    "matches the strengths themselves to 1-5 % at N = 500-2000 "
    "(tests/theory/test_theory_two_step_spikes.py), where the count claims read them"))
@pytest.mark.parametrize(("alpha1", "alpha2"), [(0.36, 0.45), (0.2, 0.29)])
def test_step_two_spike_strengths_scale_like_the_formula(alpha1: float, alpha2: float) -> None:
    # The count floor(alpha2 / (1/2 - alpha1)) comes from the k-th step-2 spike along
    # a^(k+1) growing like N^(alpha2 - k (1/2 - alpha1)). The update's bulk alone would
    # give alpha2 - 1/2 (-0.05 / -0.21). Seeds 0 and 1 (derived streams) measure 0.51 /
    # 0.47 and 0.36 / 0.11 (the marker has the 16-seed means).
    sizes = (250, 500, 1000)
    strength = np.array([
        np.mean([step_strengths(r.W1, r.W2, r.a, k=2) for r in
                 (gd_steps(N, N, N, alphas=(alpha1, alpha2), seed=s) for s in range(2))], axis=0)
        for N in sizes])
    slope = [np.polyfit(np.log(sizes), np.log(strength[:, j]), 1)[0] for j in range(2)]
    assert slope[0] == pytest.approx(alpha2, abs=0.06)
    assert slope[1] == pytest.approx(alpha2 - (0.5 - alpha1), abs=0.06)


def test_experiments_run_and_write(tmp_path: Path) -> None:
    phase = PhaseConfig(N=120, D=120, M=120, alpha1=(0.1, 0.4), alpha2=(0.2,),
                        cells=("0.2:0.49",), cells_N=(100, 160))
    r = run_experiment("two-step-phase", tmp_path, config=phase)
    assert (tmp_path / "two-step-phase" / "two-step-phase.png").exists()
    assert (tmp_path / "two-step-phase" / "record.json").exists()
    assert set(r.summary) >= {"agree_abstract", "agree_total", "agree_either",
                              "ratio_margin_agree_either", "chosen_cells"}
    # the chosen cells: one run a width, D and M in the grid's proportions, their counts
    # beside the theory's and the width from which it resolves the floor
    cells = pd.read_parquet(tmp_path / "two-step-phase" / "two-step-phase_cells.parquet")
    assert cells["N"].tolist() == [100, 160] and (cells["D"] == cells["N"]).all()
    chosen = r.summary["chosen_cells"]["0.2:0.49"]
    assert chosen["floor"] == 1 and set(chosen["step2_measured"]) == {100, 160}
    assert 1000 < chosen["theory_resolves_floor_from_N"] < 5000
    table = pd.read_parquet(tmp_path / "two-step-phase" / "two-step-phase.parquet")
    assert {"line_gap", "near_line_ratio", "strength_a2"} <= set(table.columns)
    # the step-1 update is lr1 G1 with G1 the same at every alpha1 of a seed: its singular
    # values scale with lr1 = N^alpha1 and s2/s1 does not depend on alpha1
    sv = table[["s1_dW1", "s2_dW1", "s3_dW1"]].to_numpy()
    assert (np.diff(sv, axis=1) <= 0).all() and (sv > 0).all()
    per_lr = sv / (120.0 ** table["alpha1"].to_numpy())[:, None]
    np.testing.assert_allclose(per_lr, per_lr[:1].repeat(len(per_lr), axis=0), rtol=1e-9)
    reuse = ReuseConfig(N=120, D=120, M=120, seeds=1, targets=("He1", "He2"))
    r = run_experiment("batch-reuse", tmp_path, config=reuse)
    df = pd.read_parquet(tmp_path / "batch-reuse" / "batch-reuse.parquet")
    assert len(df) == 4 and set(df["batch"]) == {"fresh", "reused"}
    assert r.summary["He2"]["reuse_quantity_1"] == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize(("kwargs", "name"), [
    (dict(alpha1=(0.1, 0.5)), "alpha1"),
    (dict(alpha2=()), "alpha2"),
    (dict(N=0), "N"),
    (dict(target="He9"), "target"),
    (dict(line_margin=0.3), "line_margin"),
])
def test_phase_config_validation(kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        PhaseConfig(**kwargs)


@pytest.mark.parametrize(("kwargs", "name"), [
    (dict(alpha2=0.5), "alpha2"), (dict(targets=()), "targets"), (dict(D=0), "^D "),
    (dict(targets=("He1", "sin")), "targets"),
])
def test_reuse_config_validation(kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        ReuseConfig(**kwargs)


def _alignment(target: str, reuse: bool) -> tuple[float, float]:
    res = gd_steps(2000, 2000, 2000, alphas=(0.35, 0.45), target=target, reuse_batch=reuse,
                   seed=0)
    o = weight_outliers(res.W2, res.a, res.beta)
    cos = np.sqrt(o.right_alignment)
    dirs = o.direction_alignment()
    ident = float(np.nanmax(dirs)) if np.isfinite(dirs).any() else 0.0
    return float(cos.max()), ident


@pytest.mark.slow
def test_batch_reuse_learns_information_exponent_two_iff_reuse_quantity_nonzero() -> None:
    # D = M = N = 2000, (alpha1, alpha2) = (0.35, 0.45). "overlap" = |<v_i, beta>| (cosine)
    # of the right singular vectors of W2's outliers. A random direction has
    # |cos| ~ 1/sqrt(2000) = 0.022.
    reused_mix, reused_mix_id = _alignment("He2+He3", True)
    fresh_mix, fresh_mix_id = _alignment("He2+He3", False)
    reused_he2, _ = _alignment("He2", True)
    # Over seeds 0-3: reused He2+He3 0.33-0.38; fresh He2+He3 learned directions <= 0.021;
    # reused He2 <= 0.05. Fresh He2 learned directions reach 0.15 at this d (noise of
    # order sqrt(5/d)); they stay below 0.05 at d = 4000 (`batch-reuse --full`), too slow here.
    assert reused_mix >= 0.15
    assert reused_mix_id >= 0.15  # carried by an outlier identified with a power of a
    # fresh batch: no learned direction aligns (identified outliers, measured 0.02);
    # single-sample outliers reach ~0.1 at this d, so compare with the reused batch
    assert fresh_mix_id < 0.1
    assert reused_mix - fresh_mix >= 0.15
    # He2 alone: E[z sigma*^(k+1)] = 0 for all k, no alignment even with reuse
    assert reused_he2 < 0.1
    assert math.isfinite(fresh_mix)


def test_quick_grid_has_cells_where_the_abstract_predicts_step_two_outliers() -> None:
    # the floor >= 1 claims need such cells away from the lines; without them they
    # would be NaN (never held), so the quick grid must contain some. The quick grid of
    # issue 30 (alpha1 up to 0.44, alpha2 near 1/2, where step-2 spikes resolve at
    # N = 1000) has lines close together, so 4 of its 12 cells qualify
    cfg = PhaseConfig()
    cells = [(a1, a2) for a1 in cfg.alpha1 for a2 in cfg.alpha2
             if formula_count(a1, a2) >= 1 and not near_line(a1, a2, cfg.line_margin)]
    assert len(cells) >= 4
    # and cells where floor is 0, so that a count rising with floor can be seen
    assert any(formula_count(a1, a2) == 0 for a1 in cfg.alpha1 for a2 in cfg.alpha2)


def test_step_one_panel_marks_runs_without_a_w1_outlier() -> None:
    from specdyn.plot import two_step as tsplot

    st = tsplot.Step1Update(np.array([0.02, 0.47]), np.array([0.94, 39.6]),
                            np.array([0.028, 1.18]), np.array([0, 1]), bound=0.29,
                            threshold=1.0)
    a1, a2 = np.array([0.02, 0.47]), np.array([0.1, 0.3])
    fig = tsplot.outlier_phase_grid(a1, a2, np.ones((2, 2)), step1=st)
    ax = fig.axes[3]      # the three count panels, then the step-1 panel (then the colorbar)
    assert ax.get_title().startswith("step 1: rank one")
    labels = [ln.get_label() for ln in ax.get_lines()]
    hollow = ax.get_lines()[labels.index(r"$s_1$ (spike), no $W_1$ outlier")]
    assert list(hollow.get_xdata()) == [0.02] and hollow.get_markerfacecolor() == "none"
    bound = ax.get_lines()[[i for i, lab in enumerate(labels) if lab.startswith("claim")][0]]
    assert list(bound.get_ydata()) == [0.29, 0.29]
