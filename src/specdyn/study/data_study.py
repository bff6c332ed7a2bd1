"""Your own data: the theory, the exact reference and, optionally, networks on any ``(X, Y)``.

One call, ``study(X, Y)``, behind ``specdyn data`` and every task of ``real-data``:

1. checks the data and accumulates its moments in one pass over blocks of rows (an
   ``X`` larger than memory works: :func:`specdyn.data.check_shapes`,
   :func:`specdyn.data.accumulate`, :func:`specdyn.data.check_moments`), then decomposes
   them (:meth:`specdyn.data.DataDecomposition.from_moments`);
2. the data's exponents in mode order with 95 % sampling intervals (one more pass:
   :func:`specdyn.data.log_spectra_covariance`, :func:`specdyn.measure.data_exponents`),
   the teacher's own spectrum's exponent beside the per-mode ``beta``, and three
   misalignment measures (the output overlap, which orders the aligned theory's error on
   data; the headline ``|c_k|^2``-weighted misalignment; the off-diagonal share of
   ``Theta Theta^T``);
3. per regime (``sigma_w``, ``gamma0 = ratio * S / theta_1``, ``sigma_a = 1``): the
   aligned theory's ``rho_k(t)`` and regions on the data's own ``lambda_k``, ``mu_k``
   (:func:`specdyn.theory.rho`), the exact reference (:func:`specdyn.theory.exact_reference`:
   the infinite-width flow on the data's own ``Sigma`` and ``C``; the gap between the two
   is the misalignment effect), and a step ``dt`` that full-batch GD can take
   (:mod:`specdyn.study.model_study`);
4. optionally the two-layer linear network (exact Gram engine, width ``N``) and a ReLU
   network (weight engine, against the effective theory ``gamma0 / c1``) trained on the
   data by full-batch GD at that ``dt`` (:func:`specdyn.sim.train_linear`,
   :func:`specdyn.sim.train_two_layer`).

Reported for each model: both exponents of the representation, the per-mode diagonal's
and the eigenvalue spectrum's (:mod:`specdyn.study.summary`), the per-mode learning times
and the rank-``P`` picture (:mod:`specdyn.study.timescales`), the loss curves, and the
warnings where a number describes nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from specdyn.settings import Regime
from specdyn.study.model_study import REFERENCE_POLICIES, ModelStudy, model_study, trained
from specdyn.study.regime import REGIMES
from specdyn.study.summary import finite, model_summary, warnings

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DataStudy", "study"]


#: Students ``study`` can train, and the theory each is compared with.
STUDENTS = ("linear", "relu")


@dataclass(frozen=True)
class DataStudy:
    """What :func:`study` found (see the module docstring); tables, summary, figure, files.

    Attributes
    ----------
    dec
        The :class:`~specdyn.data.DataDecomposition` of the checked, centred data.
    fits
        :class:`~specdyn.measure.DataExponents` over ``kmin..kmax`` (mode order).
    teacher_fit
        The power-law fit of the teacher's own spectrum (eigenvalues of ``Theta
        Theta^T``, rank order) over ``kmin..kmax``; ``None`` when ``rank(C) < kmax``.
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
    teacher_fit: Any = field(repr=False)
    kmin: int
    kmax: int
    kept: np.ndarray = field(repr=False)
    measures: dict[str, float]
    regimes: dict[str, tuple[Regime, dict[str, ModelStudy]]] = field(repr=False)
    options: dict[str, Any] = field(repr=False)

    # ------------------------------------------------------------------ tables

    def modes_table(self) -> pd.DataFrame:
        """Per mode: ``k, lam, mu, misalignment, overlap`` (``overlap``: NaN beyond kmax)."""
        import pandas as pd

        d = self.dec
        ov = np.full(d.D, np.nan)
        ov[:self.kmax] = d.mode_overlap(self.kmax)
        return pd.DataFrame({"k": np.arange(1, d.D + 1), "lam": d.lam, "mu": d.mu,
                             "misalignment": d.misalignment, "overlap": ov})

    def fits_table(self) -> pd.DataFrame:
        """``quantity, value, ci_low, ci_high, kmin, kmax, r2``: ``alpha``,
        ``alpha_plus_beta``, ``beta`` (per input mode) and ``beta_teacher_spectrum`` (the
        teacher's own spectrum; no interval)."""
        import pandas as pd

        rows = self.fits.rows()
        rows[0]["r2"], rows[1]["r2"] = self.fits.alpha.r2, self.fits.alpha_plus_beta.r2
        t = self.teacher_fit
        rows.append({"quantity": "beta_teacher_spectrum",
                     "value": np.nan if t is None else t.exponent, "ci_low": np.nan,
                     "ci_high": np.nan, "kmin": self.kmin, "kmax": self.kmax,
                     "r2": np.nan if t is None else t.r2})
        return pd.DataFrame(rows)

    def dynamics_table(self) -> pd.DataFrame:
        """Tidy rows ``regime, student, step, t, k, quantity, value``; quantities
        ``rho_theory``, ``rho_reference``, ``rho_sim`` (per mode, mode order),
        ``spectrum_theory``, ``spectrum_reference``, ``spectrum_sim`` (by rank,
        decreasing) and, at ``k = 0``, ``loss_theory``, ``loss_reference``, ``loss_sim``
        (the excess over the least-squares loss; for the network its training loss
        minus the least-squares loss)."""
        import pandas as pd

        frames = []
        for name, (_, models) in self.regimes.items():
            for student, m in models.items():
                frames += _model_rows(name, student, m, self.dec)
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
            columns=["regime", "student", "step", "t", "k", "quantity", "value"])

    def regions_table(self) -> pd.DataFrame:
        """``regime, student, t, k, region`` (:func:`specdyn.theory.region`)."""
        import pandas as pd

        frames = []
        for name, (_, models) in self.regimes.items():
            for student, m in models.items():
                D = m.regions.shape[1]
                frames.append(pd.DataFrame({
                    "regime": name, "student": student, "t": np.repeat(m.t, D),
                    "k": np.tile(np.arange(1, D + 1), m.t.size), "region": m.regions.ravel()}))
        return pd.concat(frames, ignore_index=True)

    def learning_times_table(self) -> pd.DataFrame:
        """``regime, student, k, t_theory, t_reference, t_saxe`` per input mode
        (:func:`specdyn.study.timescales.learning_times`)."""
        import pandas as pd

        from specdyn.study.timescales import learning_times

        return pd.concat([pd.DataFrame({"regime": name, "student": student,
                                        **learning_times(m, self.dec)})
                          for name, (_, models) in self.regimes.items()
                          for student, m in models.items()], ignore_index=True)

    def cross_modes_table(self) -> pd.DataFrame:
        """The rank-``P`` picture per regime and model, one row per singular mode of ``C``
        (:func:`specdyn.study.timescales.cross_mode_rows`)."""
        import pandas as pd

        from specdyn.study.timescales import cross_mode_rows

        return pd.concat([pd.DataFrame({"regime": name, "student": student,
                                        **cross_mode_rows(m, self.dec)})
                          for name, (_, models) in self.regimes.items()
                          for student, m in models.items()], ignore_index=True)

    # ------------------------------------------------------------------ summary

    def exponents(self, values: np.ndarray) -> np.ndarray:
        """:func:`specdyn.measure.mode_exponents` over this study's window."""
        from specdyn.measure import mode_exponents

        return mode_exponents(values, self.kmin, self.kmax)

    def warnings(self) -> list[str]:
        """One line for each number that describes nothing here
        (:func:`specdyn.study.summary.warnings`)."""
        return warnings(self)

    def summary(self) -> dict[str, Any]:
        """The numbers of the study, JSON-ready (no NaN: a missing value is ``None``)."""
        f, d, t = self.fits, self.dec, self.teacher_fit
        cm = d.cross_modes()
        out: dict[str, Any] = {
            "M": d.M, "D": d.D, "P": d.P, "rank_C": cm.rank,
            "columns_kept": int(self.kept.size), "kmin": self.kmin, "kmax": self.kmax,
            "alpha": f.alpha.exponent, "alpha_ci": [f.alpha.ci_low, f.alpha.ci_high],
            "alpha_r2": f.alpha.r2, "alpha_plus_beta": f.alpha_plus_beta.exponent,
            "alpha_plus_beta_ci": [f.alpha_plus_beta.ci_low, f.alpha_plus_beta.ci_high],
            "alpha_plus_beta_r2": f.alpha_plus_beta.r2,
            "beta": f.beta, "beta_ci": [f.beta_low, f.beta_high],
            "beta_teacher_spectrum": None if t is None else t.exponent,
            "beta_teacher_spectrum_r2": None if t is None else t.r2,
            **self.measures, "cross_singular_values": cm.s[:min(cm.rank, 32)],
            "warnings": self.warnings(), "regimes": {}}
        for name, (reg, models) in self.regimes.items():
            out["regimes"][name] = {"sigma_w": reg.sigma_w, "sigma_a": reg.sigma_a,
                                    "gamma0_ratio": reg.gamma0_ratio,
                                    **{s: model_summary(self, m) for s, m in models.items()}}
        return finite(out)

    # ------------------------------------------------------------------ files

    def figure(self) -> Any:
        """The study's figure (:func:`specdyn.plot.data_study.study_figure`)."""
        from specdyn.plot.data_study import study_figure

        return study_figure(self)

    def write(self, out: str | Path, *, figure: bool = True) -> list[Path]:
        """Write ``data_modes``, ``data_fits``, ``data_dynamics``, ``data_regions``,
        ``data_learning_times`` and ``data_cross_modes`` (``.parquet``), ``data.json``
        (summary, options, provenance) and ``data.png``/``.pdf`` into the folder ``out``
        as one transaction (:func:`specdyn.runs.store.transaction`: a failed or
        interrupted write leaves the previous folder whole). Returns the files written
        (paths in ``out``)."""
        from specdyn import io, provenance
        from specdyn.runs import store

        dest = Path(out)
        names: list[str] = []
        with store.transaction(dest) as tmp:
            tables = {"data_modes.parquet": self.modes_table(),
                      "data_fits.parquet": self.fits_table(),
                      "data_dynamics.parquet": self.dynamics_table(),
                      "data_regions.parquet": self.regions_table(),
                      "data_learning_times.parquet": self.learning_times_table(),
                      "data_cross_modes.parquet": self.cross_modes_table()}
            for fname, df in tables.items():
                io.write_table(df, tmp / fname)
                names.append(fname)
            record = provenance.run_record(self.options, seed=self.options.get("seed"),
                                           extra={"summary": self.summary()})
            io.write_json(finite(record), tmp / "data.json")
            names.append("data.json")
            if figure:
                from specdyn.plot import save_figure

                names += [p.name for p in save_figure(self.figure(), tmp / "data")]
        return [dest / n for n in names]


def _rows(regime: str, student: str, steps: np.ndarray, t: np.ndarray, q: str,
          values: np.ndarray) -> pd.DataFrame:
    import pandas as pd

    n, D = values.shape
    return pd.DataFrame({"regime": regime, "student": student, "step": np.repeat(steps, D),
                         "t": np.repeat(t, D), "k": np.tile(np.arange(1, D + 1), n),
                         "quantity": q, "value": values.ravel()})


def _loss_rows(regime: str, student: str, steps: np.ndarray, t: np.ndarray, q: str,
               values: np.ndarray) -> pd.DataFrame:
    import pandas as pd

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
    rho_net, spec_net = m.rho_network, m.spectrum_network
    if m.network is not None and rho_net is not None and spec_net is not None:
        net = m.network
        least = 0.5 * float(np.trace(dec.syy) - np.sum(dec.coeffs**2 / dec.lam[:, None]))
        out += [_rows(regime, student, net.steps, net.times, "rho_sim", rho_net),
                _rows(regime, student, net.steps, net.times, "spectrum_sim", spec_net),
                _loss_rows(regime, student, net.steps, net.times, "loss_sim",
                           np.asarray(net.loss, dtype=np.float64) - least)]
    return out


#: A stage announces itself (``announce``) when it costs more floating-point operations
#: than this: about a second of one core.
STAGE_FLOPS = 2e9


def _stage(text: str, flops: float, enabled: bool) -> None:
    """One line on stderr as a stage begins that may take more than a few seconds
    (``announce``, and ``flops`` above :data:`STAGE_FLOPS`): a log then shows where a
    long run is, and on a terminal the stage's bar follows. Quick stages say nothing."""
    if enabled and flops > STAGE_FLOPS:
        print(f"specdyn data: {text}", file=sys.stderr, flush=True)


def study(X: Any, Y: Any, *, kmin: int = 2, kmax: int | None = None,
          regimes: Mapping[str, Regime] | None = None, checkpoints: int = 24,
          t_factor: float = 3.0, reference: bool | str = True, train: Sequence[str] = (),
          N: int = 1024, relu_N: int = 128, seed: int = 0, drop_constant: bool = False,
          progress: bool = False, announce: bool = False) -> DataStudy:
    """The theory beside a network on the data ``(X, Y)`` (the module docstring).

    Parameters
    ----------
    X, Y
        ``M x D`` inputs, ``M x P`` targets (a 1-D ``Y`` is refused: pass
        ``Y[:, None]``), any real arrays (a ``.npy`` of :func:`specdyn.data.load_xy` is
        read in blocks of rows, never whole); checked (:func:`specdyn.data.check_shapes`,
        :func:`specdyn.data.check_moments`) and centred.
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
        The exact reference: ``True`` or ``"always"``, ``False`` or ``"never"``, or
        ``"auto"`` (``specdyn data``'s default: not integrated where the aligned theory
        is lazy and no network is trained, :mod:`specdyn.study.model_study`).
    train
        Students to train: any of ``"linear"`` (width ``N``) and ``"relu"`` (width
        ``relu_N``).
    seed
        Seed of the networks' weights.
    drop_constant
        Drop constant columns of ``X`` instead of refusing them.
    progress
        Progress bars on a terminal (the passes over the rows, the reference, training).
    announce
        A line on stderr as each stage begins that may take more than a few seconds
        (``specdyn data``'s), so that a log shows where a long run is.
    """
    from specdyn import _validate as v
    from specdyn import provenance, theory
    from specdyn.data import (
        DataDecomposition,
        accumulate,
        aligned_setting,
        check_moments,
        check_shapes,
        log_spectra_covariance,
    )
    from specdyn.measure import data_exponents

    provenance.git_commit()  # read at the start: the code this study runs (cached)

    # ---- every argument first, then the data: bad input costs no work
    kmin = v.positive_int("kmin", kmin)
    checkpoints = v.positive_int("checkpoints", checkpoints, minimum=4)
    t_factor = float(v.in_range("t_factor", t_factor, 1.0, 1e6))
    N = v.positive_int("N", N)
    relu_N = v.positive_int("relu_N", relu_N)
    seed = v.positive_int("seed", seed, minimum=0)
    policy = v.choice("reference", "always" if reference is True else
                      "never" if reference is False else reference, REFERENCE_POLICIES)
    train = tuple(train)
    for s_name in train:
        v.choice("train", s_name, STUDENTS)
    regs = dict(REGIMES if regimes is None else regimes)
    if not regs or not all(isinstance(r, Regime) for r in regs.values()):
        raise ValueError("regimes must map names to Regime(sigma_w, gamma0_ratio, sigma_a)")
    x, y = check_shapes(X, Y)
    M, D_raw, P = x.shape[0], x.shape[1], y.shape[1]
    _stage(f"reading X ({M} x {D_raw}, {x.dtype}) and Y ({P} outputs) in blocks: means and "
           "covariances", 2.0 * M * D_raw * (D_raw + P), announce)
    mom = accumulate(x, y, progress=progress)
    kept = check_moments(mom, drop_constant=drop_constant)
    dec = DataDecomposition.from_moments(mom if kept.size == x.shape[1] else mom.select(kept))
    if kmax is None:
        kmax = max(kmin + 2, dec.D // 4)
    kmax = v.positive_int("kmax", kmax)
    if not kmin + 2 <= kmax <= dec.D:
        raise ValueError(f"kmax must be in [{kmin + 2}, {dec.D}] (kmin + 2 .. the data's "
                         f"{dec.D} modes with variance), got {kmax}")
    _stage("the exponents' sampling intervals (a second pass over the rows)",
           2.0 * M * kmax * (2 * D_raw + P), announce)
    cov = log_spectra_covariance(x, y, dec, kmax, progress=progress,
                                 columns=None if kept.size == x.shape[1] else kept)
    fits = data_exponents(dec.lam, dec.mu, kmin, kmax, seed=seed, cov=cov)
    measures = {"output_overlap": dec.output_overlap(kmax),
                "total_misalignment": dec.total_misalignment,
                "offdiagonal_share": dec.offdiagonal_share()}
    theta1 = float(np.sqrt(dec.mu[0]))
    if not dec.mu[0] > 1e-12 * float(np.max(dec.mu[:kmax])):  # roundoff, not a target
        raise ValueError(f"Y: the target has no component along the top input mode (mu_1 = "
                         f"{dec.mu[0]:.3g}, against {float(np.max(dec.mu[:kmax])):.3g} at "
                         "the largest), so gamma0 = ratio * S / theta_1 is undefined")
    out: dict[str, tuple[Regime, dict[str, ModelStudy]]] = {}
    xy = None
    for name, reg in regs.items():
        S = reg.sigma_w**2 + reg.sigma_a**2
        s = aligned_setting(dec, reg.sigma_w, reg.sigma_a, reg.gamma0_ratio * S / theta1)
        models: dict[str, ModelStudy] = {}
        for student in ("linear", *(["relu"] if "relu" in train else [])):
            th_s = s if student == "linear" else theory.effective_setting(s, "relu")
            text = f"{name}: the exact reference ({student}, D = {dec.D}, rank {dec.rank})"
            flops = 4e3 * dec.D**2 * dec.rank  # about 500 right-hand sides of 8 D^2 r
            m = model_study(th_s, dec.coeffs, kmax, t_factor, checkpoints,
                            reference=policy, training=student in train, progress=progress,
                            announce=partial(_stage, text, flops, announce))
            if student in train:
                _stage(f"{name}: training the {student} network", np.inf, announce)
                if xy is None:  # the networks need the samples in memory
                    xy = (np.asarray(x, dtype=np.float64)[:, kept],
                          np.asarray(y, dtype=np.float64))
                m = trained(m, s, dec, xy[0], xy[1], student,
                            N if student == "linear" else relu_N, seed, progress)
            models[student] = m
        out[name] = (reg, models)
    options = {"kmin": kmin, "kmax": kmax, "checkpoints": checkpoints, "t_factor": t_factor,
               "reference": policy, "train": list(train), "N": N, "relu_N": relu_N,
               "seed": seed, "drop_constant": bool(drop_constant),
               "regimes": {n: vars(r) for n, r in regs.items()}}
    return DataStudy(dec=dec, fits=fits, teacher_fit=_teacher_fit(dec, kmin, kmax), kmin=kmin,
                     kmax=kmax, kept=kept, measures=measures, regimes=out, options=options)


def _teacher_fit(dec: Any, kmin: int, kmax: int) -> Any:
    """The power-law fit of the teacher's own spectrum over ranks ``kmin..kmax`` (``None``
    when it has fewer than ``kmax`` nonzero eigenvalues)."""
    from specdyn.measure import fit_power_law

    spec = dec.teacher_spectrum()
    if spec.size < kmax or not np.all(spec[kmin - 1:kmax] > 0):
        return None
    return fit_power_law(spec, kmin, kmax, n_boot=0)
