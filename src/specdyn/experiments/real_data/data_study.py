"""Your own data: the theory, the exact reference and, optionally, networks on any ``(X, Y)``.

One call, ``study(X, Y)``, behind ``specdyn data`` and every task of ``real-data``:

1. checks and centres the data (:func:`specdyn.data.check_xy`,
   :func:`specdyn.data.decompose`);
2. the data's exponents in mode order with intervals (:func:`specdyn.measure.data_exponents`)
   and three misalignment measures (the output overlap, which orders the aligned theory's
   error on data; the headline ``|c_k|^2``-weighted misalignment; the off-diagonal share
   of ``Theta Theta^T``);
3. per regime (``sigma_w``, ``gamma0 = ratio * S / theta_1``, ``sigma_a = 1``): the
   aligned theory's ``rho_k(t)`` and regions on the data's own ``lambda_k``, ``mu_k``
   (:func:`specdyn.theory.rho`), the exact reference (:func:`specdyn.theory.exact_reference`:
   the infinite-width flow on the data's own ``Sigma`` and ``C``; the gap between the two
   is the misalignment effect), and a step ``dt`` that full-batch GD can take;
4. optionally the two-layer linear network (exact Gram engine, width ``N``) and a ReLU
   network (weight engine, against the effective theory ``gamma0 / c1``) trained on the
   data by full-batch GD at that ``dt`` (:func:`specdyn.sim.train_linear`,
   :func:`specdyn.sim.train_two_layer`).

Times: ``t_end = t_factor * max_{k <= kmax} t_learn(k)`` (the theory's learning time of
the slowest fitted mode, :func:`specdyn.theory.t_learn`), ``checkpoints`` log-spaced GD
steps; the theory and the reference are evaluated at exactly the steps' times ``step * dt``.

The step: ``dt = 0.5 / b`` with ``b`` the aligned theory's fastest mode rate
(:func:`specdyn.theory.mode_rate`, over every mode: ``mu_k`` of data is not monotone),
divided by the smallest integer ``m`` that brings ``dt`` below ``0.5 /`` the exact
reference's rate bound (``ReferenceFlow.rate``: the largest eigenvalues of the flow's
Grams, with the data's ``lambda_1``), so that the checkpoints keep their times; GD is
stable for ``dt b < 2``. ``dt = 1``, the
value an earlier version of ``docs/real-data.md`` showed, diverged at step 4 on
``Y = X A``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn.settings import FEATURE_LEARNING, Regime

__all__ = ["REGIMES", "DataStudy", "ModelStudy", "Regime", "study"]


#: The default regimes: the paper's feature-learning setting (Fig. 2) and a lazy one well
#: below the Eq. (33) bound (``gamma0 theta0 = 0.05 S``; the paper's own lazy setting,
#: ``0.5 S``, is only mildly lazy: its exponent departs from alpha by up to 0.37).
REGIMES: dict[str, Regime] = {"feature-learning": FEATURE_LEARNING, "lazy": Regime(1.0, 0.05)}

#: Students ``study`` can train, and the theory each is compared with.
STUDENTS = ("linear", "relu")


@dataclass(frozen=True)
class ModelStudy:
    """One model (``linear``, or ``relu`` with its effective setting) in one regime.

    Attributes
    ----------
    setting
        The :class:`~specdyn.settings.AlignedSetting` of the theory (for ``relu``:
        :func:`specdyn.theory.effective_setting`, ``gamma0 / c1``).
    dt
        The GD step (the module docstring).
    steps
        Checkpoint steps (``0`` first); ``t = steps * dt``.
    t
        Checkpoint times.
    rho_theory
        ``(n_t, D)``: :func:`specdyn.theory.rho` on the data's ``lambda_k``, ``mu_k``.
    loss_theory
        ``(n_t,)``: the aligned theory's loss above the least-squares loss.
    regions
        ``(n_t, D)``: :func:`specdyn.theory.region` labels.
    reference
        The exact reference at ``t`` (``None`` when not asked for).
    network
        The trained network's :class:`~specdyn.sim.Trajectory` (``None`` untrained).
    """

    setting: Any
    dt: float
    steps: np.ndarray = field(repr=False)
    t: np.ndarray = field(repr=False)
    rho_theory: np.ndarray = field(repr=False)
    loss_theory: np.ndarray = field(repr=False)
    regions: np.ndarray = field(repr=False)
    reference: Any = field(default=None, repr=False)
    network: Any = field(default=None, repr=False)

    @property
    def rho_network(self) -> np.ndarray | None:
        """``(n_t, D)``: ``lambda_k (U^T G^w U)_kk`` of the trained network (mode order)."""
        if self.network is None:
            return None
        return np.asarray(self.setting.lam_values * self.network.diagonals["eta"])


@dataclass(frozen=True)
class DataStudy:
    """What :func:`study` found (see the module docstring); tables, summary, figure, files.

    Attributes
    ----------
    dec
        The :class:`~specdyn.data.DataDecomposition` of the checked, centred data.
    fits
        :class:`~specdyn.measure.DataExponents` over ``kmin..kmax`` (mode order).
    kmin, kmax
        The window of every exponent.
    kept
        Indices of ``X``'s columns kept (all, unless constant ones were dropped).
    measures
        ``output_overlap`` (modes ``1..kmax``), ``total_misalignment``,
        ``offdiagonal_share``.
    regimes
        Regime name -> (``Regime``, model name -> :class:`ModelStudy`).
    options
        The arguments of :func:`study` (for the record).
    """

    dec: Any = field(repr=False)
    fits: Any = field(repr=False)
    kmin: int
    kmax: int
    kept: np.ndarray = field(repr=False)
    measures: dict[str, float]
    regimes: dict[str, tuple[Regime, dict[str, ModelStudy]]] = field(repr=False)
    options: dict[str, Any] = field(repr=False)

    # ------------------------------------------------------------------ tables

    def modes_table(self) -> pd.DataFrame:
        """Per mode: ``k, lam, mu, misalignment, overlap`` (``overlap``: NaN beyond kmax)."""
        d = self.dec
        ov = np.full(d.D, np.nan)
        ov[:self.kmax] = d.mode_overlap(self.kmax)
        return pd.DataFrame({"k": np.arange(1, d.D + 1), "lam": d.lam, "mu": d.mu,
                             "misalignment": d.misalignment, "overlap": ov})

    def fits_table(self) -> pd.DataFrame:
        """``quantity, value, ci_low, ci_high, kmin, kmax``: alpha, alpha_plus_beta, beta."""
        return pd.DataFrame(self.fits.rows())

    def dynamics_table(self) -> pd.DataFrame:
        """Tidy rows ``regime, student, step, t, k, quantity, value``; quantities
        ``rho_theory``, ``rho_reference``, ``rho_sim`` (per mode, mode order),
        ``spectrum_theory``, ``spectrum_reference``, ``spectrum_sim`` (by rank,
        decreasing) and, at ``k = 0``, ``loss_theory``, ``loss_reference``, ``loss_sim``
        (the excess over the least-squares loss; for the network its training loss
        minus the least-squares loss)."""
        frames = []
        for name, (_, models) in self.regimes.items():
            for student, m in models.items():
                frames += _model_rows(name, student, m, self.dec)
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
            columns=["regime", "student", "step", "t", "k", "quantity", "value"])

    def regions_table(self) -> pd.DataFrame:
        """``regime, student, t, k, region`` (:func:`specdyn.theory.region`)."""
        frames = []
        for name, (_, models) in self.regimes.items():
            for student, m in models.items():
                D = m.regions.shape[1]
                frames.append(pd.DataFrame({
                    "regime": name, "student": student, "t": np.repeat(m.t, D),
                    "k": np.tile(np.arange(1, D + 1), m.t.size), "region": m.regions.ravel()}))
        return pd.concat(frames, ignore_index=True)

    # ------------------------------------------------------------------ summary

    def exponents(self, values: np.ndarray) -> np.ndarray:
        """:func:`specdyn.measure.mode_exponents` over this study's window."""
        from specdyn.measure import mode_exponents

        return mode_exponents(values, self.kmin, self.kmax)

    def summary(self) -> dict[str, Any]:
        """The numbers of the study, JSON-ready (no NaN: a missing value is ``None``)."""
        f = self.fits
        d = self.dec
        out: dict[str, Any] = {
            "M": d.M, "D": d.D, "P": d.P, "columns_kept": int(self.kept.size),
            "kmin": self.kmin, "kmax": self.kmax,
            "alpha": f.alpha.exponent, "alpha_ci": [f.alpha.ci_low, f.alpha.ci_high],
            "alpha_plus_beta": f.alpha_plus_beta.exponent,
            "alpha_plus_beta_ci": [f.alpha_plus_beta.ci_low, f.alpha_plus_beta.ci_high],
            "beta": f.beta, "beta_ci": [f.beta_low, f.beta_high], **self.measures,
            "regimes": {}}
        for name, (reg, models) in self.regimes.items():
            out["regimes"][name] = {"sigma_w": reg.sigma_w, "sigma_a": reg.sigma_a,
                                    "gamma0_ratio": reg.gamma0_ratio,
                                    **{s: _model_summary(self, m) for s, m in models.items()}}
        return _finite(out)

    # ------------------------------------------------------------------ files

    def figure(self) -> Any:
        """The study's figure (:func:`specdyn.plot.real_data.data_figure`)."""
        from specdyn.plot.real_data import data_figure

        return data_figure(self.modes_table(), self.fits_table(), self.dynamics_table(),
                           self.kmin, self.kmax)

    def write(self, out: str | Path, *, figure: bool = True) -> list[Path]:
        """Write ``data_modes.parquet``, ``data_fits.parquet``, ``data_dynamics.parquet``,
        ``data_regions.parquet``, ``data.json`` (summary, options, provenance) and
        ``data.png``/``.pdf`` into the folder ``out`` as one transaction
        (:func:`specdyn.runs.store.transaction`: a failed or interrupted write leaves the
        previous folder whole). Returns the files written (paths in ``out``)."""
        from specdyn import io, provenance
        from specdyn.runs import store

        dest = Path(out)
        names: list[str] = []
        with store.transaction(dest) as tmp:
            tables = {"data_modes.parquet": self.modes_table(),
                      "data_fits.parquet": self.fits_table(),
                      "data_dynamics.parquet": self.dynamics_table(),
                      "data_regions.parquet": self.regions_table()}
            for fname, df in tables.items():
                io.write_table(df, tmp / fname)
                names.append(fname)
            record = provenance.run_record(self.options, seed=self.options.get("seed"),
                                           extra={"summary": self.summary()})
            io.write_json(_finite(record), tmp / "data.json")
            names.append("data.json")
            if figure:
                from specdyn.plot import save_figure

                names += [p.name for p in save_figure(self.figure(), tmp / "data")]
        return [dest / n for n in names]


def _finite(obj: Any) -> Any:
    """``obj`` with every NaN or infinite float replaced by ``None`` (never written as a
    result), numpy scalars as Python numbers."""
    if isinstance(obj, dict):
        return {k: _finite(x) for k, x in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(x) for x in obj]
    if isinstance(obj, (np.floating, float)):
        x = float(obj)
        return x if math.isfinite(x) else None
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.ndarray):
        return _finite(obj.tolist())
    return obj


def _rows(regime: str, student: str, steps: np.ndarray, t: np.ndarray, q: str,
          values: np.ndarray) -> pd.DataFrame:
    n, D = values.shape
    return pd.DataFrame({"regime": regime, "student": student, "step": np.repeat(steps, D),
                         "t": np.repeat(t, D), "k": np.tile(np.arange(1, D + 1), n),
                         "quantity": q, "value": values.ravel()})


def _loss_rows(regime: str, student: str, steps: np.ndarray, t: np.ndarray, q: str,
               values: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({"regime": regime, "student": student, "step": steps, "t": t, "k": 0,
                         "quantity": q, "value": values})


def _model_rows(regime: str, student: str, m: ModelStudy, dec: Any) -> list[pd.DataFrame]:
    st, t = m.steps, m.t
    out = [_rows(regime, student, st, t, "rho_theory", m.rho_theory),
           _rows(regime, student, st, t, "spectrum_theory", -np.sort(-m.rho_theory, axis=1)),
           _loss_rows(regime, student, st, t, "loss_theory", m.loss_theory)]
    if m.reference is not None:
        out += [_rows(regime, student, st, t, "rho_reference", m.reference.rho),
                _rows(regime, student, st, t, "spectrum_reference", m.reference.spectrum),
                _loss_rows(regime, student, st, t, "loss_reference", m.reference.excess_loss)]
    rho_net = m.rho_network
    if m.network is not None and rho_net is not None:
        net = m.network
        least = 0.5 * float(np.trace(dec.syy) - np.sum(dec.coeffs**2 / dec.lam[:, None]))
        out += [_rows(regime, student, net.steps, net.times, "rho_sim", rho_net),
                _rows(regime, student, net.steps, net.times, "spectrum_sim",
                      net.series["preact"][:, :dec.D]),
                _loss_rows(regime, student, net.steps, net.times, "loss_sim",
                           np.asarray(net.loss, dtype=np.float64) - least)]
    return out


def _course(a: np.ndarray, t: np.ndarray) -> dict[str, float]:
    """An exponent's course: its start, peak (and the peak's time) and end (NaN where the
    exponent could not be fitted)."""
    ok = np.isfinite(a)
    i = int(np.argmax(np.where(ok, a, -np.inf))) if ok.any() else 0
    return {"start": float(a[0]), "peak": float(a[i]) if ok.any() else float("nan"),
            "t_peak": float(t[i]) if ok.any() else float("nan"), "end": float(a[-1])}


def _model_summary(st: DataStudy, m: ModelStudy) -> dict[str, Any]:
    from specdyn import theory

    s = m.setting
    a_th = st.exponents(m.rho_theory)
    max_r = float(np.max(theory.region_quantities(s, np.arange(1, s.D + 1), np.inf)["R"]))
    end = m.regions[-1, :st.kmax]
    out: dict[str, Any] = {
        "gamma0": s.gamma0, "dt": m.dt, "steps": int(m.steps[-1]), "t_end": float(m.t[-1]),
        # Eq. (33): lazy when no mode's learned part ever reaches its initial one
        "max_R_t_inf": max_r, "regime_eq33": "lazy" if max_r < 1.0 else "feature-learning",
        "regions_at_end": {str(r): int(np.sum(end == r)) for r in np.unique(end)},
        "exponent_theory": _course(a_th, m.t)}
    if m.reference is not None:
        a_ref = st.exponents(m.reference.rho)
        gap = np.abs(np.log(m.reference.rho / m.rho_theory))
        out["exponent_reference"] = _course(a_ref, m.t)
        # the misalignment effect: max over t of the median over modes 1..kmax
        out["misalignment_effect"] = float(np.max(np.median(gap[:, :st.kmax], axis=1)))
        out["reference_nfev"] = m.reference.nfev
    if m.network is not None:
        rho = m.rho_network
        assert rho is not None
        a_net = st.exponents(rho)
        out["exponent_network"] = _course(a_net, m.network.times)
        with np.errstate(divide="ignore", invalid="ignore"):
            out["network_vs_theory"] = float(np.max(np.median(
                np.abs(np.log(rho / m.rho_theory))[:, :st.kmax], axis=1)))
            if m.reference is not None:
                out["network_vs_reference"] = float(np.max(np.median(
                    np.abs(np.log(rho / m.reference.rho))[:, :st.kmax], axis=1)))
        out["network_wall_s"] = float(m.network.meta.get("wall_time_s", float("nan")))
    return out


def _grid(s: Any, kmax: int, t_factor: float, checkpoints: int, b: float
          ) -> tuple[float, np.ndarray, np.ndarray]:
    """``(dt, steps, t)``: ``dt = 0.5 / b``, enough steps to reach ``t_end``."""
    from specdyn import theory
    from specdyn.schedule import Schedule

    t_end = t_factor * float(np.max(theory.t_learn(s, np.arange(1, kmax + 1))))
    dt = 0.5 / b
    total = max(int(np.ceil(t_end / dt)), checkpoints)
    steps = Schedule.log(checkpoints).resolve(total)
    return dt, steps, steps * dt


def _model(dec: Any, s: Any, coeffs: np.ndarray | None, kmax: int, t_factor: float,
           checkpoints: int) -> ModelStudy:
    """Theory, reference and the step of one setting (no training)."""
    from specdyn import theory

    k = np.arange(1, dec.D + 1)
    b = float(np.max(theory.mode_rate(s, k)))
    dt, steps, t = _grid(s, kmax, t_factor, checkpoints, b)
    ref = None if coeffs is None else theory.exact_reference(s, coeffs, t)
    if ref is not None:  # a faster rate on the data: a step m times smaller, the same times
        m = max(1, math.ceil(float(np.max(ref.rate)) / b - 1e-9))
        dt, steps = dt / m, steps * m
    rho = theory.rho(s, k, t[:, None])
    return ModelStudy(setting=s, dt=dt, steps=steps, t=t, rho_theory=rho,
                      loss_theory=theory.loss(s, t), regions=np.asarray(
                          theory.region(s, k[None, :], t[:, None])), reference=ref)


def study(X: Any, Y: Any, *, kmin: int = 2, kmax: int | None = None,
          regimes: Mapping[str, Regime] | None = None, checkpoints: int = 24,
          t_factor: float = 3.0, reference: bool = True, train: Sequence[str] = (),
          N: int = 1024, relu_N: int = 128, seed: int = 0, drop_constant: bool = False,
          progress: bool = False) -> DataStudy:
    """The theory beside a network on the data ``(X, Y)`` (the module docstring).

    Parameters
    ----------
    X, Y
        ``M x D`` inputs, ``M x P`` targets (a 1-D ``Y`` is refused: pass
        ``Y[:, None]``); checked by :func:`specdyn.data.check_xy` and centred.
    kmin, kmax
        The window of modes of every exponent (default ``kmax``: a quarter of the
        kept modes, at least ``kmin + 2``).
    regimes
        Name -> :class:`Regime` (default :data:`REGIMES`).
    checkpoints
        Log-spaced checkpoints of each run, at least 4.
    t_factor
        ``t_end`` in units of the slowest fitted mode's learning time, ``>= 1``.
    reference
        Compute the exact reference (the infinite-width flow on the data).
    train
        Students to train: any of ``"linear"`` (width ``N``) and ``"relu"`` (width
        ``relu_N``).
    seed
        Seed of the networks' weights.
    drop_constant
        Drop constant columns of ``X`` instead of refusing them.
    progress
        Progress bars for the training runs.
    """
    from specdyn import _validate as v
    from specdyn import provenance, theory
    from specdyn.data import aligned_setting, check_xy, decompose
    from specdyn.measure import data_exponents

    provenance.git_commit()  # read at the start: the code this study runs (cached)

    # ---- every argument first, then the data: bad input costs no work
    kmin = v.positive_int("kmin", kmin)
    checkpoints = v.positive_int("checkpoints", checkpoints, minimum=4)
    t_factor = float(v.in_range("t_factor", t_factor, 1.0, 1e6))
    N = v.positive_int("N", N)
    relu_N = v.positive_int("relu_N", relu_N)
    seed = v.positive_int("seed", seed, minimum=0)
    train = tuple(train)
    for s_name in train:
        v.choice("train", s_name, STUDENTS)
    regs = dict(REGIMES if regimes is None else regimes)
    if not regs or not all(isinstance(r, Regime) for r in regs.values()):
        raise ValueError("regimes must map names to Regime(sigma_w, gamma0_ratio, sigma_a)")
    x, y, kept = check_xy(X, Y, drop_constant=drop_constant)
    dec = decompose(x, y)
    if kmax is None:
        kmax = max(kmin + 2, dec.D // 4)
    kmax = v.positive_int("kmax", kmax)
    if not kmin + 2 <= kmax <= dec.D:
        raise ValueError(f"kmax must be in [{kmin + 2}, {dec.D}] (kmin + 2 .. the data's "
                         f"{dec.D} modes with variance), got {kmax}")
    fits = data_exponents(dec.lam, dec.mu, kmin, kmax, seed=seed)
    measures = {"output_overlap": dec.output_overlap(kmax),
                "total_misalignment": dec.total_misalignment,
                "offdiagonal_share": dec.offdiagonal_share()}
    out: dict[str, tuple[Regime, dict[str, ModelStudy]]] = {}
    theta1 = float(np.sqrt(dec.mu[0]))
    if not dec.mu[0] > 1e-12 * float(np.max(dec.mu[:kmax])):  # roundoff, not a target
        raise ValueError(f"Y: the target has no component along the top input mode (mu_1 = "
                         f"{dec.mu[0]:.3g}, against {float(np.max(dec.mu[:kmax])):.3g} at "
                         "the largest), so gamma0 = ratio * S / theta_1 is undefined")
    for name, reg in regs.items():
        S = reg.sigma_w**2 + reg.sigma_a**2
        s = aligned_setting(dec, reg.sigma_w, reg.sigma_a, reg.gamma0_ratio * S / theta1)
        models: dict[str, ModelStudy] = {}
        for student in ("linear", *(["relu"] if "relu" in train else [])):
            th_s = s if student == "linear" else theory.effective_setting(s, "relu")
            m = _model(dec, th_s, dec.coeffs if reference else None, kmax, t_factor,
                       checkpoints)
            if student in train:
                m = _trained(m, s, dec, x, y, student, N if student == "linear" else relu_N,
                             seed, progress)
            models[student] = m
        out[name] = (reg, models)
    options = {"kmin": kmin, "kmax": kmax, "checkpoints": checkpoints, "t_factor": t_factor,
               "reference": bool(reference), "train": list(train), "N": N, "relu_N": relu_N,
               "seed": seed, "drop_constant": bool(drop_constant),
               "regimes": {n: vars(r) for n, r in regs.items()}}
    return DataStudy(dec=dec, fits=fits, kmin=kmin, kmax=kmax, kept=kept, measures=measures,
                     regimes=out, options=options)


def _trained(m: ModelStudy, s: Any, dec: Any, x: np.ndarray, y: np.ndarray, student: str,
             width: int, seed: int, progress: bool) -> ModelStudy:
    """``m`` with its network trained by full-batch GD at ``m.dt`` to ``m.steps[-1]``."""
    from specdyn.data import DataTeacher
    from specdyn.schedule import Schedule
    from specdyn.sim import train_linear, train_two_layer

    teacher = DataTeacher(s, dec, x, y)
    ck = Schedule.at(m.steps)
    total = int(m.steps[-1])
    if student == "linear":
        traj = train_linear(s, width, None, total, dt=m.dt, teacher=teacher, checkpoints=ck,
                            seed=seed, progress=progress)
    else:
        traj = train_two_layer(s, "relu", N=width, M=dec.M, steps=total, dt=m.dt,
                               teacher=teacher, checkpoints=ck, record=("preact",), seed=seed,
                               progress=progress)
    return ModelStudy(setting=m.setting, dt=m.dt, steps=m.steps, t=m.t,
                      rho_theory=m.rho_theory, loss_theory=m.loss_theory, regions=m.regions,
                      reference=m.reference, network=traj)
