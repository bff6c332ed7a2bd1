"""finite-size-theory's run: the Gram-engine moments and the nonlinear students, their
tables, figure and summary.

:func:`simulate_log_rho` and :func:`compare` build the moments table (one size at a
time; ``benchmarks/finite_size_theory.py`` uses them too), then the students' slopes
against the effective theory; the claims on them are in
:mod:`specdyn.experiments.finite_size_theory.claims`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn import io, theory
from specdyn._progress import progress
from specdyn.experiments.finite_size_theory.claims import (
    finite_size_claims,
    finite_size_theory_claims_of,
)
from specdyn.experiments.finite_size_theory.config import FiniteSizeConfig, full_finite_size_theory
from specdyn.experiments.finite_size_theory.wrong import FINITE_SIZE_THEORY_WRONG
from specdyn.experiments.nonlinear_figures.config import Fig4Config
from specdyn.experiments.nonlinear_figures.readings import theory_slopes
from specdyn.measure.exponents import fit_exponents
from specdyn.plot import save_figure
from specdyn.plot.finite_size import plot_finite_size
from specdyn.runs.registry import ExperimentResult, Measured, register
from specdyn.settings import PowerLawSetting
from specdyn.sim import derive_seed, train_linear
from specdyn.sim.two_layer import train_two_layer


def simulate_log_rho(s: PowerLawSetting, N: int | None, M: int | None, times: np.ndarray,
                     seeds: Sequence[int]) -> np.ndarray:
    """``log rho_k(t)`` of the Gram engine (flow), shape ``(seeds, times, D)``."""
    dt = 1.0
    steps = max(int(np.ceil(times.max() / dt)), 1)
    ck = np.round(times / dt).astype(np.int64)
    out = []
    for seed in progress(seeds, total=len(seeds), desc=f"N={N}, M={M}"):
        tr = train_linear(s, N, M, steps=steps, dt=dt, method="flow", checkpoints=ck,
                          seed=seed, progress=False)
        out.append(np.log(tr.series["preact"]))
    return np.stack(out)


def compare(s: PowerLawSetting, log_rho: np.ndarray, times: np.ndarray, N: int | None,
            M: int | None) -> pd.DataFrame:
    """Tidy table of measured and predicted moments per ``(t, k)``."""
    n = log_rho.shape[0]
    D = log_rho.shape[2]
    k = np.arange(1, D + 1)
    pred = theory.finite_size_moments(s, k[None, :], times[:, None], N=N, M=M)
    mean = log_rho.mean(axis=0) - np.log(pred.rho)
    std = log_rho.std(axis=0, ddof=1)
    se = std / np.sqrt(n)
    tt, kk = np.meshgrid(times, k, indexing="ij")
    return pd.DataFrame({
        "N": np.nan if N is None else N, "M": np.nan if M is None else M, "seeds": n,
        "t": tt.ravel(), "k": kk.ravel(), "bias_sim": mean.ravel(), "se_sim": se.ravel(),
        "std_sim": std.ravel(), "shift_theory": pred.mean_shift.ravel(),
        "std_theory": pred.std.ravel(), "valid": pred.valid.ravel(),
        "ratio": pred.ratio.ravel(), "node_ratio": pred.node_ratio.ravel()})


def _effective(cfg: FiniteSizeConfig) -> tuple[pd.DataFrame, dict[str, Any]]:
    rows, summary = [], {}
    for act in cfg.activations:
        f4 = Fig4Config(D=cfg.nl_D, N=cfg.nl_N, M=cfg.nl_M, steps=cfg.nl_steps, kmin=cfg.kmin,
                        kmax=cfg.kmax, alpha=cfg.alpha, beta=cfg.beta, sigma_a=cfg.sigma_a,
                        activation=act, seed=cfg.seed)
        for regime, s in f4.settings().items():
            tr = train_two_layer(s, act, N=f4.N, M=f4.M, steps=f4.steps, dt=f4.dt,
                                 parameterization=f4.parameterization, optimizer="gd",
                                 checkpoints=f4.checkpoints, record=("preact",),
                                 seed=f4.seed, dtype=f4.dtype)
            sim = fit_exponents(tr.spectra, cfg.kmin, cfg.kmax)
            s_eff = theory.effective_setting(s, act)
            eff = theory_slopes(s_eff, tr.times, cfg.kmin, cfg.kmax)
            lin = theory_slopes(s, tr.times, cfg.kmin, cfg.kmax)
            dev = sim - eff
            i = int(np.argmax(np.abs(dev)))
            # trace of the preactivation spectrum = mean preactivation variance
            var0, var1 = float(tr.spectra[0].sum()), float(tr.spectra[-1].sum())
            c1_0, c1_1 = (theory.linear_coefficient(act, x) for x in (var0, var1))
            summary[f"{act}/{regime}"] = {
                "c1": s.gamma0 / s_eff.gamma0, "max_abs_dev": float(np.abs(dev[i])),
                "t_of_max_dev": float(tr.times[i]),
                "max_abs_dev_plain_linear": float(np.abs(sim - lin).max()),
                "var0": var0, "var1": var1, "c1_end": c1_1, "c1_drift": abs(c1_1 / c1_0 - 1.0)}
            rows.append(pd.DataFrame({"activation": act, "regime": regime, "t": tr.times,
                                      "slope_sim": sim, "slope_effective": eff,
                                      "slope_linear": lin, "c1_start": c1_0, "c1_end": c1_1}))
    df = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()
    return df, summary


@register("finite-size-theory", "Finite-N and finite-M corrections to log rho_k: theory vs "
          "the Gram engine; effective theory of nonlinear students", FiniteSizeConfig,
          full=full_finite_size_theory, claims=finite_size_theory_claims_of,
          wrong_models=FINITE_SIZE_THEORY_WRONG,
          wrong_na={"temperature": "gradient flow and full-batch GD on fixed samples: no "
                                   "noise, no temperature"},
          measured={"finite-size-theory.parquet": Measured(("bias_sim", "se_sim", "std_sim")),
                    "finite-size-theory_effective.parquet": Measured(
                        ("slope_sim", "c1_end"), by=("activation", "regime"))})
def run_finite_size_theory(cfg: FiniteSizeConfig, out_dir: Path) -> ExperimentResult:
    start = time.perf_counter()
    s = cfg.setting()
    times = np.asarray(cfg.times, dtype=np.float64)
    seeds = [derive_seed(cfg.seed, "rep", r) for r in range(cfg.seeds)]  # the same at every size
    frames = []
    for N in cfg.N_values:
        frames.append(compare(s, simulate_log_rho(s, N, None, times, seeds), times, N, None))
    for M in cfg.M_values:
        frames.append(compare(s, simulate_log_rho(s, None, M, times, seeds), times, None, M))
    df = pd.concat(frames, ignore_index=True)
    _, summary = finite_size_claims(df)
    eff_df, eff_summary = _effective(cfg)
    summary["effective"] = eff_summary
    summary["wall_time_s"] = time.perf_counter() - start
    fig = plot_finite_size(df, eff_df)
    fig.suptitle(f"Fig. 2 setting, D = {cfg.D}, {cfg.seeds} seeds, Gram engine (flow)",
                 fontsize=10)
    figures = save_figure(fig, out_dir / "finite-size-theory")
    tables = [io.write_table(df, out_dir / "finite-size-theory.parquet")]
    if len(eff_df):
        tables.append(io.write_table(eff_df, out_dir / "finite-size-theory_effective.parquet"))
    io.write_json({"config": asdict(cfg)}, out_dir / "finite_size_config.json")
    return ExperimentResult("finite-size-theory", out_dir, figures=figures, tables=tables,
                            summary=summary)
