"""The plain ``simulate`` experiment: train the two-layer linear network on one setting.

One run of :func:`specdyn.sim.linear.train_linear` on a
:class:`~specdyn.settings.PowerLawSetting` in the paper's units
(``PowerLawSetting.paper``: ``lambda0 = 1``, ``mu0 = 1/zeta(alpha+beta)``,
``gamma0 = gamma0_ratio * S / theta0``), beside the exact infinite-width theory
at the same times. It is the unit that sweeps vary: every field is a plain
value, so ``specdyn sweep`` can put an axis on any of them.

Table (tidy rows ``step, t, k, quantity, value``): the trajectory's
``preact`` spectrum (rank ``k``), Gram diagonals ``xi, eta, zeta`` (mode ``k``),
``loss`` (``k = 0``); ``rho_theory`` (the closed form ``rho_k(t)``, Eq. 12, at
``k = 1..D``), and the fitted exponents ``alpha_fit`` / ``alpha_fit_theory``
(``k = 0``): the power-law exponent fitted over ranks ``kmin..kmax``
(:func:`specdyn.measure.exponents.fit_exponents`, weights ``1/k``).

Summary: final loss, the fitted exponent at ``t = 0`` and at the end, the
largest change ``delta_alpha = max_t |alpha_fit(t) - alpha_fit(0)|`` in the
simulation and in the theory, and the theory's regime label.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from specdyn import _validate as v
from specdyn import io
from specdyn.experiments.paper_setting import PaperSettingConfig
from specdyn.runs.claims import Claim, within
from specdyn.runs.registry import ExperimentResult, Measured, register

#: median over ranks of |log rho_sim / rho_theory| at the last checkpoint.
SPECTRUM_TOL = 0.25
#: |max_t |alpha_fit(t) - alpha_fit(0)|: simulation - theory|.
CHANGE_TOL = 0.15


@dataclass(frozen=True)
@v.constrained_fields(N=v.Int(1, optional=True), M=v.Int(1, optional=True), steps=v.SIZE,
                      dt=v.Real(0.0, lo_open=True, optional=True),
                      method=v.Choice("gd", "flow"), engine=v.Choice("gram", "weights"),
                      checkpoints=v.Int(2), kmin=v.SIZE, kmax=v.SIZE,
                      dtype=v.Choice("float64", "float32"), figure=v.Bool())
class SimulateConfig(PaperSettingConfig):
    """One linear-network run (quick default: D = 32, N = 512, 2000 GD steps).

    ``N = None`` is infinite width (Grams start at their means) and ``M = None``
    the population limit; ``dtype`` is the torch dtype of the GD loop.
    ``dt = None`` picks the step from the setting (:meth:`time_step`), so the
    same ``steps`` covers the same number of relaxation times of the fastest
    mode whatever ``gamma0`` is. ``checkpoints`` is a count of log-spaced steps
    (``Schedule.log``), as everywhere.
    """

    N: int | None = 512
    M: int | None = None
    steps: int = 2000
    dt: float | None = None
    method: Literal["gd", "flow"] = "gd"
    engine: Literal["gram", "weights"] = "gram"
    checkpoints: int = 30
    kmin: int = 2
    kmax: int = 16
    dtype: Literal["float64", "float32"] = "float64"
    figure: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        # the fit range kmin..kmax against D, N and M
        if not self.kmin < self.kmax <= self.D:
            raise ValueError(f"kmax must satisfy kmin < kmax <= D = {self.D}, "
                             f"got kmin={self.kmin}, kmax={self.kmax}")
        # the measured spectrum has rank <= min(N, M): the fit range must lie inside it
        for name in ("M", "N"):
            size = getattr(self, name)
            if size is not None and size < self.kmax:
                raise ValueError(
                    f"{name} = {size} is below kmax = {self.kmax}: with {name} = {size} "
                    f"the measured spectrum has at most {size} nonzero eigenvalues; raise {name} "
                    f"or lower kmax")

    def time_step(self) -> float:
        """``dt``, or when it is ``None``: ``0.5 / b_1``.

        ``b_k = lambda_k sqrt(S^2 + 4 gamma0^2 theta_k^2) / gamma0^2`` is the rate
        in the exponent ``E_k(t)`` of Eq. (12), the relaxation rate of mode k
        near its fixed point; GD is stable for ``dt b_1 < 2`` and ``b_1`` is the
        largest rate, so ``dt = 0.5 / b_1`` is stable for every mode.
        """
        if self.dt is not None:
            return float(self.dt)
        from specdyn.theory import mode_rate

        return float(0.5 / mode_rate(self.setting(), 1))


def _full() -> SimulateConfig:
    return SimulateConfig(D=256, N=4096, M=None, steps=20000, checkpoints=60, kmax=64)


def simulate_claims(df: pd.DataFrame, cfg: SimulateConfig) -> list[Claim]:
    """simulate's claims, a pure function of its table ``simulate.parquet``.

    Uses the rows ``preact`` (simulated spectrum by rank), ``rho_theory`` and the
    fitted exponents ``alpha_fit`` / ``alpha_fit_theory``.
    """
    def series(q: str) -> pd.DataFrame:
        return df[df.quantity == q].sort_values(["t", "k"])

    sim, th = series("preact"), series("rho_theory")
    t_end = sim.t.max()
    last_sim = sim[sim.t == t_end].value.to_numpy()
    last_th = th[th.t == t_end].value.to_numpy()
    ok = last_sim > 0
    med = float(np.median(np.abs(np.log(last_sim[ok] / last_th[ok])))) if ok.any() else \
        float("nan")
    a_sim, a_th = series("alpha_fit").value.to_numpy(), series("alpha_fit_theory").value.to_numpy()
    change = float(np.nanmax(np.abs(a_sim - a_sim[0])) - np.nanmax(np.abs(a_th - a_th[0])))
    return [
        within("end: median |log rho_sim/rho_theory|", med, 0.0, SPECTRUM_TOL,
               source="core Sec. 3.1",
               note="'the analytical solution closely matches finite-width networks'; over "
                    "ranks 1..D at the last checkpoint; finite N and GD separate them"),
        within("exponent change: simulation - theory", change, -CHANGE_TOL, CHANGE_TOL,
               source="core Sec. 3.1",
               note=f"'the exponent measured over a finite range of modes can change during "
                    f"training': max_t |alpha_fit(t) - alpha_fit(0)| over ranks "
                    f"{cfg.kmin}..{cfg.kmax}, simulation against the exact theory"),
    ]


def _simulate_claims_of(cfg: SimulateConfig, folder: Path) -> list[Claim]:
    return simulate_claims(pd.read_parquet(folder / "simulate.parquet"), cfg)


@register("simulate", "two-layer linear network on a power-law setting, beside the exact "
          "theory", SimulateConfig, full=_full, claims=_simulate_claims_of,
          measured={"simulate.parquet": Measured(
              ("value",), by=("quantity",), where={"quantity": ("preact", "alpha_fit")})})
def run(cfg: SimulateConfig, out_dir: Path) -> ExperimentResult:
    """Train, compare with the theory, write the tidy table (and a figure)."""
    from specdyn import theory
    from specdyn.measure.exponents import fit_exponents
    from specdyn.sim.linear import train_linear

    s = cfg.setting()
    traj = train_linear(s, cfg.N, cfg.M, cfg.steps, dt=cfg.time_step(), method=cfg.method,
                        engine=cfg.engine, checkpoints=cfg.checkpoints, seed=cfg.seed,
                        dtype=cfg.dtype, progress=False)
    k = np.arange(1, cfg.D + 1, dtype=np.float64)
    rho_th = theory.rho(s, k, traj.times[:, None])  # (n, D), decreasing in k (Appendix F)
    a_sim = fit_exponents(traj.spectra, cfg.kmin, cfg.kmax)
    a_th = fit_exponents(rho_th, cfg.kmin, cfg.kmax)
    n = len(traj.times)
    frames = [
        traj.to_frame(),
        pd.DataFrame({"step": np.repeat(traj.steps, cfg.D), "t": np.repeat(traj.times, cfg.D),
                      "quantity": "rho_theory", "k": np.tile(np.arange(1, cfg.D + 1), n),
                      "value": rho_th.ravel()}),
        pd.DataFrame({"step": traj.steps, "t": traj.times, "quantity": "alpha_fit", "k": 0,
                      "value": a_sim}),
        pd.DataFrame({"step": traj.steps, "t": traj.times, "quantity": "alpha_fit_theory",
                      "k": 0, "value": a_th}),
    ]
    df = pd.concat(frames, ignore_index=True)[["step", "t", "k", "quantity", "value"]]
    table = io.write_table(df, out_dir / "simulate.parquet")
    figures: list[Path] = []
    if cfg.figure:
        from specdyn.plot import save_figure
        from specdyn.plot.theory import spectra_over_time

        # t = 0 and about seven log-spaced checkpoints: every curve stays readable
        pick = np.unique(np.r_[0, np.round(np.geomspace(1, n - 1, 7)).astype(int)])
        fig = spectra_over_time(k, traj.times[pick], traj.spectra[pick], theory=rho_th[pick],
                                data_label=f"simulation, N = {cfg.N}, M = {cfg.M or 'inf'}",
                                title=f"simulation (markers) beside the exact theory (lines): "
                                      f"$\\sigma_w$={cfg.sigma_w:g}, "
                                      f"$\\gamma_0\\theta_0/S$={cfg.gamma0_ratio:g}, "
                                      f"D = {cfg.D}")
        figures = save_figure(fig, out_dir / "simulate")
    summary: dict[str, Any] = {
        "final_loss": float(traj.loss[-1]),
        "alpha_fit_initial": float(a_sim[0]),
        "alpha_fit_final": float(a_sim[-1]),
        "delta_alpha": float(np.nanmax(np.abs(a_sim - a_sim[0]))),
        "delta_alpha_theory": float(np.nanmax(np.abs(a_th - a_th[0]))),
        "regime": theory.regime(s).label,
        "gamma0": s.gamma0,
        "dt": cfg.time_step(),
        "t_end": float(traj.times[-1]),
    }
    ok = traj.spectra[-1] > 0
    summary["final_median_abs_log"] = float(
        np.median(np.abs(np.log(traj.spectra[-1, ok] / rho_th[-1, ok]))))
    return ExperimentResult("simulate", out_dir, figures=figures, tables=[table],
                            summary=summary)
