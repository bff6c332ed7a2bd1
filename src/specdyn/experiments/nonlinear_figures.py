"""Nonlinear students: the paper's Fig. 4 (Section 3.3, Appendix G).

``fig4``: a ReLU student ``f(x) = a^T ReLU(W x) / (gamma0 N)`` (mean-field,
learning rate ``nu = N``, full-batch GD, ``t = step * dt``) on the paper's
power-law teacher, in the feature-learning (``sigma_w = 0.1``,
``gamma0 = 2 S/theta0``) and lazy (``sigma_w = 1``, ``gamma0 = 0.5 S/theta0``)
regimes, ``sigma_a = 1``. Records the preactivation spectrum (nonzero
eigenvalues of ``H H^T/(MN)``, ``H = X W^T``) over time, fits its slope over a
finite range of ranks (:func:`specdyn.measure.fit_exponents`, weighted
least squares in log-log) and sets it against the same fit of the linear
network's exact spectrum ``rho_k(t)`` (:func:`specdyn.theory.rho`) at the same
settings and times, and at an effective output scale ``gamma0 / c1``, where
``c1 = E[phi'(h)]`` over the initial preactivations is the slope of the
activation's linear part (``c1 = 1/2`` for ReLU: ``relu(h) = h/2 + |h|/2``).
Measured: the ReLU student follows the linear theory at ``2 gamma0`` far
more closely than at ``gamma0`` (see ``tests/sim/test_sim_two_layer_vs_effective_theory.py``).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn import _validate as v
from specdyn import io, theory
from specdyn.measure.exponents import fit_exponents
from specdyn.models.activations import ACTIVATIONS
from specdyn.plot import save_figure
from specdyn.plot.nonlinear import plot_spectra_and_slopes
from specdyn.runs.claims import OWN, Claim, learning_order, within
from specdyn.runs.registry import ExperimentResult, Measured, register
from specdyn.settings import PowerLawSetting
from specdyn.sim.parameterization import PARAMETERIZATIONS
from specdyn.sim.trajectory import Trajectory
from specdyn.sim.two_layer import train_two_layer
from specdyn.theory.effective import effective_setting, linear_coefficient


@dataclass(frozen=True)
@v.constrained_fields(D=v.SIZE, N=v.SIZE, M=v.SIZE, steps=v.SIZE, dt=v.POSITIVE, kmin=v.SIZE,
                      kmax=v.SIZE, alpha=v.POSITIVE, beta=v.POSITIVE, sigma_a=v.POSITIVE,
                      fl_sigma_w=v.POSITIVE, fl_gamma0_ratio=v.POSITIVE,
                      lazy_sigma_w=v.POSITIVE, lazy_gamma0_ratio=v.POSITIVE,
                      activation=v.Choice(*ACTIVATIONS),
                      parameterization=v.Choice(*PARAMETERIZATIONS), checkpoints=v.SIZE,
                      dtype=v.Choice("float32", "float64"),
                      precision=v.Choice("tf32", "bf16", optional=True), seed=v.SEED)
class Fig4Config:
    """Fig. 4. Defaults: a CPU-sized version (< 2 min); ``--full``: the paper's sizes (GPU).

    ``checkpoints`` is a count of log-spaced steps (``Schedule.log``), as everywhere.
    """

    D: int = 64
    N: int = 512
    M: int = 512
    steps: int = 3000
    dt: float = 1.0
    kmin: int = 2
    kmax: int = 24
    alpha: float = 1.0
    beta: float = 1.0
    sigma_a: float = 1.0
    fl_sigma_w: float = 0.1
    fl_gamma0_ratio: float = 2.0
    lazy_sigma_w: float = 1.0
    lazy_gamma0_ratio: float = 0.5
    activation: str = "relu"
    parameterization: str = "mean-field"
    checkpoints: int = 40
    dtype: str = "float32"
    device: str | None = None
    precision: str | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        # the fit range kmin..kmax against the sizes (device is free-form: resolved at run time)
        for name in ("M", "D"):  # name the user's size first when it is what cuts the range
            size = getattr(self, name)
            if size < self.kmax:
                raise ValueError(f"{name} = {size} is below kmax = {self.kmax}: the fit range "
                                 f"kmin..kmax needs kmax <= min(D, M); raise {name} or lower kmax")
        if not self.kmin + 2 <= self.kmax:
            raise ValueError(f"kmax must be >= kmin + 2 = {self.kmin + 2}, got {self.kmax}")

    def settings(self) -> dict[str, PowerLawSetting]:
        """The two runs, keyed by regime."""
        def paper(sigma_w: float, ratio: float) -> PowerLawSetting:
            return PowerLawSetting.paper(sigma_w, ratio, alpha=self.alpha, beta=self.beta,
                                         sigma_a=self.sigma_a, D=self.D)

        return {"feature-learning": paper(self.fl_sigma_w, self.fl_gamma0_ratio),
                "lazy": paper(self.lazy_sigma_w, self.lazy_gamma0_ratio)}


# fig4's claims: every tolerance fixed before the run.
#: |fitted slope - target| for the endpoints the core paper names (alpha at t = 0 and in the
#: lazy regime, alpha + beta at the end of feature learning).
SLOPE_TOL = 0.1
#: max over recorded times of |simulated slope - a theory's slope, same fit, same times|.
AGREE_TOL = 0.15
#: The feature-learning slope moves by at least this fraction of beta ...
CHANGE_MIN = 0.5
#: ... and the lazy slope by at most this fraction of the feature-learning change (core Fig. 4).
LAZY_RATIO_MAX = 1 / 3
#: Why the project does not expect the core paper's Sec. 3.3 statements at fig4's fit range
#: (the theory numbers for ReLU, D = 64, ranks 2..24, computed before the claims were written).
FINAL_DISPUTED = ("the learned spectrum over the fit range mixes Region IIIb (k < k_l = 4 at "
                  "gamma0, 16 at gamma0/c1: exponent alpha + beta/2) with IIIa; over the quick "
                  "ranks 2..24 the linear theory itself ends at 1.75 (1.65 at gamma0/c1)")
LINEAR_DISPUTED = ("ReLU's linear part has slope c1 = 1/2, so the student follows the linear "
                   "theory at gamma0/c1 (own claim below), not at gamma0")
LAZY_DISPUTED = ("at gamma0/c1 = 2 gamma0 the paper's lazy setting crosses the Eq. (33) bound "
                 "(k_u = 1.33 > 1): the effective theory's slope moves by 0.24")


#: Rank correlation of each rank's half-learning time with the rank (Sec. 3.3); a pilot run
#: (quick size, seed 1, before the claim was written) measured 0.992.
ORDER_MIN = 0.9
#: The share of the recorded times (the last ones) over which fig4's slope change must last.
LATE_SHARE = 0.25
CHANGE_REVISED = ("b6f669e (issue 30): max_t |slope(t) - slope(0)| >= 0.5 beta -> min over "
                  "the last 25 % of the recorded times of slope(t) - slope(0) >= 0.5 beta: a "
                  "shuffled slope series keeps its max change, not a lasting one; changed "
                  "after the mutation test (0.68 on the quick run seen)")


def lasting_change(slope: np.ndarray, late_share: float = LATE_SHARE) -> float:
    """Minimum of ``slope`` over its last ``late_share`` of entries (time order), less its
    first entry: how far the slope has moved and stayed moved."""
    n = max(int(np.ceil(late_share * (slope.size - 1))), 1)
    return float(np.min(slope[-n:]) - slope[0]) if slope.size >= 2 else float("nan")


def fig4_claims(slopes: pd.DataFrame, cfg: Fig4Config,
                spectra: pd.DataFrame | None = None) -> list[Claim]:
    """fig4's claims, a pure function of its table ``fig4_slopes.parquet``.

    ``slopes`` has ``regime`` (``feature-learning``, ``lazy``), ``t``, ``slope_sim``,
    ``slope_linear_theory`` (at the paper's gamma0) and
    ``slope_linear_theory_effective_gamma0`` (at gamma0/c1), one row per recorded time.
    ``spectra``, when given, is ``fig4.parquet`` (``regime, t, quantity, k, value``): the
    feature-learning run's preactivation spectrum, read for the learning order.
    """
    def run(regime: str) -> pd.DataFrame:
        return slopes[slopes.regime == regime].sort_values("t")

    fl, lz = run("feature-learning"), run("lazy")
    a, ab = cfg.alpha, cfg.alpha + cfg.beta
    fl_change = float(np.abs(fl.slope_sim - fl.slope_sim.iloc[0]).max())
    fl_lasting = lasting_change(fl.slope_sim.to_numpy())
    lz_change = float(np.abs(lz.slope_sim - lz.slope_sim.iloc[0]).max())
    lin_dev = float(max(np.abs(r.slope_sim - r.slope_linear_theory).max() for r in (fl, lz)))
    fit = f"slope fitted over ranks {cfg.kmin}..{cfg.kmax}"
    claims = [
        within("feature learning: slope at t = 0 is alpha", float(fl.slope_sim.iloc[0]),
               a - SLOPE_TOL, a + SLOPE_TOL, source="core Sec. 3.3",
               note=f"'its exponent evolves from alpha ...'; {fit}"),
        within("feature learning: final slope is alpha + beta", float(fl.slope_sim.iloc[-1]),
               ab - SLOPE_TOL, ab + SLOPE_TOL, source="core Sec. 3.3",
               note=f"'... to alpha + beta over a finite range of modes'; {fit} at t = "
                    f"{float(fl.t.iloc[-1]):g}", disputed=FINAL_DISPUTED),
        within("lazy: slope stays at alpha (max over t of |slope - alpha|)",
               float(np.abs(lz.slope_sim - a).max()), 0.0, SLOPE_TOL, source="core Sec. 3.3",
               note=f"'in the lazy regime it remains at alpha'; {fit}", disputed=LAZY_DISPUTED),
        within("max |sim - linear theory at gamma0| (both regimes)", lin_dev, 0.0, AGREE_TOL,
               source="core Sec. 3.3",
               note="'these results agree quantitatively with the predictions of the linear "
                    "theory'; same fit, same times", disputed=LINEAR_DISPUTED),
        within("feature learning: lasting slope change (late minimum - slope at t = 0)",
               fl_lasting, CHANGE_MIN * cfg.beta, np.inf, source="core Fig. 4",
               note=f"min over the last {LATE_SHARE:.0%} of the recorded times of slope(t), "
                    f"less slope(0): the slope changes in the feature-learning regime and "
                    f"stays changed (max_t |slope(t) - slope(0)| = {fl_change:.3g})",
               revised=CHANGE_REVISED),
        within("lazy / feature-learning slope change",
               lz_change / fl_change if fl_change > 0 else float("nan"), 0.0, LAZY_RATIO_MAX,
               source="core Fig. 4", note="the lazy slope 'remains close to its initial value'",
               partner="feature learning: lasting slope change (late minimum - slope at t = 0)"),
    ]
    claims += [within(f"{name}: max |sim - linear theory at gamma0/c1|",
                      float(np.abs(r.slope_sim - r.slope_linear_theory_effective_gamma0).max()),
                      0.0, AGREE_TOL, source=OWN,
                      note="the effective theory: c1 = E[phi'(h)] at the initial "
                           "preactivations rescales gamma0; same fit, same times")
               for name, r in (("feature-learning", fl), ("lazy", lz))]
    if spectra is not None:
        pre = spectra[(spectra.regime == "feature-learning") & (spectra.quantity == "preact")]
        wide = pre.pivot(index="t", columns="k", values="value").sort_index()
        ranks = np.arange(cfg.kmin, cfg.kmax + 1)
        claims.append(within(
            "feature learning: modes learn from low to high k (rank correlation)",
            learning_order(wide.index.to_numpy(dtype=float),
                           wide.reindex(columns=ranks).to_numpy(dtype=float), ranks),
            ORDER_MIN, 1.0, source="core Sec. 3.3",
            note=f"'the spectrum changes successively from low to high mode index': rank "
                 f"correlation of each rank's half-learning time with the rank, {fit}; "
                 f"{ORDER_MIN:g} fixed from a pilot run (quick size, seed 1: 0.992)"))
    return claims


def _fig4_full() -> Fig4Config:
    # Appendix G: D = P = 512, N = 8192, M = 4096. 1e4 steps (t = 1e4) lets the modes of
    # the fit range learn; ~1.7e11 flop a step, i.e. minutes on one GPU.
    return Fig4Config(D=512, N=8192, M=4096, steps=10_000, kmin=2, kmax=64, checkpoints=60)


def theory_slopes(s: PowerLawSetting, times: np.ndarray, kmin: int, kmax: int) -> np.ndarray:
    """The same fit applied to the linear network's exact spectrum ``rho_k(t)``, ``k = 1..D``."""
    assert s.D is not None
    k = np.arange(1, s.D + 1, dtype=np.float64)
    rho = theory.rho(s, k[None, :], np.asarray(times, dtype=np.float64)[:, None])
    return fit_exponents(rho, kmin, kmax)


def _fig4_claims_of(cfg: Fig4Config, folder: Path) -> list[Claim]:
    return fig4_claims(pd.read_parquet(folder / "fig4_slopes.parquet"), cfg,
                       pd.read_parquet(folder / "fig4.parquet"))


@register("fig4", "Fig. 4: slope of a ReLU student's preactivation spectrum, "
          "feature-learning vs lazy", Fig4Config, full=_fig4_full, claims=_fig4_claims_of,
          measured={"fig4_slopes.parquet": Measured(("slope_sim",), by=("regime",)),
                    "fig4.parquet": Measured(("value",), by=("regime", "quantity"))})
def run_fig4(cfg: Fig4Config, out_dir: Path) -> ExperimentResult:
    runs: dict[str, Trajectory] = {}
    walls: dict[str, float] = {}
    for name, s in cfg.settings().items():
        start = time.perf_counter()
        runs[name] = train_two_layer(
            s, cfg.activation, N=cfg.N, M=cfg.M, steps=cfg.steps, dt=cfg.dt,
            parameterization=cfg.parameterization, optimizer="gd",
            checkpoints=cfg.checkpoints, record=("preact",), seed=cfg.seed,
            dtype=cfg.dtype, device=cfg.device, precision=cfg.precision,
            progress=True)  # long runs: their bars (entry points default to none)
        walls[name] = time.perf_counter() - start

    settings = cfg.settings()
    k_mid = float(np.sqrt(cfg.kmin * cfg.kmax))
    frames, slope_rows = [], []
    summary: dict[str, Any] = {}
    spectra_plot, slopes_plot, effective = {}, {}, {}
    for name, tr in runs.items():
        s = settings[name]
        sim = fit_exponents(tr.spectra, cfg.kmin, cfg.kmax)
        lin = theory_slopes(s, tr.times, cfg.kmin, cfg.kmax)
        s_eff = effective_setting(s, cfg.activation)
        lin_eff = theory_slopes(s_eff, tr.times, cfg.kmin, cfg.kmax)
        a_eff = theory.alpha_eff(s, k_mid, tr.times)
        df = tr.to_frame()
        df.insert(0, "regime", name)
        frames.append(df)
        slope_rows.append(pd.DataFrame({
            "regime": name, "step": tr.steps, "t": tr.times, "slope_sim": sim,
            "slope_linear_theory": lin, "slope_linear_theory_effective_gamma0": lin_eff,
            "alpha_eff_theory_kmid": a_eff,
        }))
        effective[name] = lin_eff
        spectra_plot[name] = (tr.times, tr.spectra)
        slopes_plot[name] = (tr.times, sim, lin)
        change = sim - sim[0]
        dev = sim - lin
        i_dev = int(np.argmax(np.abs(dev)))
        summary[name] = {
            "setting": s.to_dict(),
            "wall_time_s": walls[name],
            "time_per_step_ms": 1e3 * walls[name] / cfg.steps,
            "slope_initial": float(sim[0]), "slope_final": float(sim[-1]),
            "slope_max": float(sim.max()), "t_of_slope_max": float(tr.times[int(sim.argmax())]),
            "max_abs_change": float(np.abs(change).max()),
            "final_change": float(change[-1]),
            "linear_theory_slope_final": float(lin[-1]),
            "linear_theory_slope_max": float(lin.max()),
            "linear_theory_max_abs_change": float(np.abs(lin - lin[0]).max()),
            "max_abs_sim_minus_theory": float(np.abs(dev[i_dev])),
            "t_of_max_abs_sim_minus_theory": float(tr.times[i_dev]),
            "final_sim_minus_theory": float(dev[-1]),
            "effective_gamma0": s_eff.gamma0,
            "max_abs_sim_minus_effective_theory": float(np.abs(sim - lin_eff).max()),
        }
    fl, lz = summary["feature-learning"], summary["lazy"]
    summary["k_range"] = [cfg.kmin, cfg.kmax]
    summary["lazy_over_feature_learning_max_change"] = (
        lz["max_abs_change"] / fl["max_abs_change"])

    s_fl = settings["feature-learning"]
    c1 = linear_coefficient(cfg.activation, s_fl.sigma_w**2 * float(s_fl.spectra()[0].sum()))
    summary["c1"] = c1
    fig = plot_spectra_and_slopes(spectra_plot, slopes_plot, alpha=cfg.alpha, beta=cfg.beta,
                                  k_range=(cfg.kmin, cfg.kmax), effective=effective,
                                  effective_label=r"effective theory ($\gamma_0/c_1$)",
                                  note=f"final, feature learning:\nsimulation "
                                       f"{fl['slope_final']:.2f}, linear theory "
                                       f"{fl['linear_theory_slope_final']:.2f}, "
                                       f"$\\alpha+\\beta$ = {cfg.alpha + cfg.beta:g}")
    fig.suptitle(f"{cfg.activation} student, {cfg.parameterization}, D = P = {cfg.D}, "
                 f"N = {cfg.N}, M = {cfg.M}, GD dt = {cfg.dt:g}, {cfg.dtype}\n"
                 f"$c_1 = E[\\phi'(h)]$ = first Hermite coefficient of the activation "
                 f"({cfg.activation}: $c_1$ = {c1:.3g}): the slope of its linear part; the "
                 f"linear theory at $\\gamma_0/c_1$ is the linear network closest to it",
                 fontsize=9)
    slopes_df = pd.concat(slope_rows, ignore_index=True)
    figures = save_figure(fig, out_dir / "fig4")
    tables = [io.write_table(pd.concat(frames, ignore_index=True), out_dir / "fig4.parquet"),
              io.write_table(slopes_df, out_dir / "fig4_slopes.parquet")]
    io.write_json({"config": asdict(cfg), "runs": {k: tr.meta for k, tr in runs.items()}},
                  out_dir / "fig4_runs.json")
    return ExperimentResult("fig4", out_dir, figures=figures, tables=tables, summary=summary)
