"""The numbers of a study, JSON-ready, and the warnings where a number means nothing.

Two exponents of the representation are reported, and named so:

- the **per-mode diagonal**: the fit over input modes ``kmin..kmax`` (mode order) of
  ``rho_k(t) = lambda_k (U^T G^w U)_kk``, the representation's variance along input mode
  ``k``: what the aligned theory solves (the paper's Eq. 12);
- the **eigenvalue spectrum**: the fit over ranks ``kmin..kmax`` of the eigenvalues of
  ``Sigma^1/2 G^w Sigma^1/2``, the nonzero eigenvalues of the hidden representation's
  covariance, which the paper defines (Eq. 11) and a
  :class:`~specdyn.measure.SpectrumTracker` measures.

They coincide for an aligned teacher. For a target of rank ``r < D`` they part: the
spectrum holds ``r`` learned eigenvalues and then the initial tail ``sigma_w^2
lambda_k``, so its exponent over a window past ``r`` measures the cliff between the two,
not a power law (on the digits with one-hot labels, ``r = 9``: the diagonal's exponent
went 1.06 -> 2.69 -> 1.16 in the reference, the spectrum's 1.06 -> 3.41 -> 2.87).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["FIT_R2_MIN", "course", "finite", "model_summary", "warnings"]

#: Below this weighted R^2 a power-law fit is reported as not describing its values.
FIT_R2_MIN = 0.9


def finite(obj: Any) -> Any:
    """``obj`` with every NaN or infinite float replaced by ``None`` (never written as a
    result), numpy scalars as Python numbers."""
    if isinstance(obj, dict):
        return {k: finite(x) for k, x in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(x) for x in obj]
    if isinstance(obj, (np.floating, float)):
        x = float(obj)
        return x if math.isfinite(x) else None
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.ndarray):
        return finite(obj.tolist())
    return obj


def course(a: np.ndarray, t: np.ndarray) -> dict[str, float]:
    """An exponent's course: its start, peak (and the peak's time) and end (NaN where the
    exponent could not be fitted)."""
    ok = np.isfinite(a)
    i = int(np.argmax(np.where(ok, a, -np.inf))) if ok.any() else 0
    return {"start": float(a[0]), "peak": float(a[i]) if ok.any() else float("nan"),
            "t_peak": float(t[i]) if ok.any() else float("nan"), "end": float(a[-1])}


def _gap(a: np.ndarray, b: np.ndarray, kmax: int) -> float:
    """The max over checkpoints of the median over modes ``1..kmax`` of ``|log a/b|``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.max(np.median(np.abs(np.log(a / b))[:, :kmax], axis=1)))


def model_summary(st: Any, m: Any) -> dict[str, Any]:
    """One model's numbers: setting, step, regions, the two exponents' courses for the
    theory, the reference and the network, their distances, the learning times."""
    from specdyn.measure import mode_exponents, rank_exponent
    from specdyn.runs.claims import rank_correlation
    from specdyn.study.timescales import learning_times

    s = m.setting
    lo, hi = st.kmin, st.kmax
    end = m.regions[-1, :hi]
    out: dict[str, Any] = {
        "gamma0": s.gamma0, "dt": m.dt, "steps": int(m.steps[-1]), "t_end": float(m.t[-1]),
        # Eq. (33): lazy when no mode's learned part ever reaches its initial one
        "max_R_t_inf": m.max_share,
        "regime_eq33": "lazy" if m.max_share < 1.0 else "feature-learning",
        "regions_at_end": {str(r): int(np.sum(end == r)) for r in np.unique(end)},
        "exponent_theory": course(mode_exponents(m.rho_theory, lo, hi), m.t),
        "spectrum_exponent_theory": course(rank_exponent(m.rho_theory, lo, hi), m.t),
        "loss": {"t": m.t, "theory": m.loss_theory}}
    if m.reference_skipped:
        out["reference_skipped"] = m.reference_skipped
    times = learning_times(m, st.dec)
    out["learning_times"] = {"kmax": hi, "theory": times["t_theory"][:hi],
                             "saxe_scale": times["t_saxe"][:hi]}
    if m.reference is not None:
        ref = m.reference
        out["exponent_reference"] = course(mode_exponents(ref.rho, lo, hi), m.t)
        out["spectrum_exponent_reference"] = course(rank_exponent(ref.spectrum, lo, hi), m.t)
        # the misalignment effect: max over t of the median over modes 1..kmax
        out["misalignment_effect"] = _gap(ref.rho, m.rho_theory, hi)
        out["reference_nfev"] = ref.nfev
        out["reference_method"] = f"{ref.method} (rtol {ref.rtol:g})"
        out["loss"]["reference"] = ref.excess_loss
        tr = times["t_reference"][:hi]
        ok = np.isfinite(tr) & np.isfinite(times["t_theory"][:hi])
        out["learning_times"].update({
            "reference": tr, "learned_by_t_end": int(np.sum(np.isfinite(tr))),
            "rank_correlation_theory": rank_correlation(times["t_theory"][:hi][ok], tr[ok]),
            "rank_correlation_saxe": rank_correlation(times["t_saxe"][:hi][ok], tr[ok])})
    if m.network is not None:
        rho, spec = m.rho_network, m.spectrum_network
        assert rho is not None and spec is not None
        net = m.network
        out["exponent_network"] = course(mode_exponents(rho, lo, hi), net.times)
        out["spectrum_exponent_network"] = course(rank_exponent(spec, lo, hi), net.times)
        out["network_vs_theory"] = _gap(rho, m.rho_theory, hi)
        if m.reference is not None:
            out["network_vs_reference"] = _gap(rho, m.reference.rho, hi)
        least = 0.5 * float(np.trace(st.dec.syy)
                            - np.sum(st.dec.coeffs**2 / st.dec.lam[:, None]))
        out["loss"]["network"] = np.asarray(net.loss, dtype=np.float64) - least
        out["network_wall_s"] = float(net.meta.get("wall_time_s", float("nan")))
    return out


def warnings(st: Any) -> list[str]:
    """One line for every number of ``st`` that describes nothing (the module docstring):
    ``P < D``, a fit window past the rank of ``C``, one output column, a poor fit."""
    d, lo, hi = st.dec, st.kmin, st.kmax
    rank = d.rank
    out: list[str] = []
    if d.P == 1:
        out.append("one output column: the target has rank 1, so one direction is learned "
                   "and mu_k is one direction's weight per mode; beta and the "
                   "representation's exponent describe no power law (the theory needs "
                   "P >= D)")
    elif d.P < d.D:
        out.append(f"P = {d.P} outputs < D = {d.D} modes: the paper's theory takes P >= D "
                   f"(needed for the spectrum to evolve over a broad range of modes); the "
                   f"target drives rank(C) = {rank} modes: see the rank-{rank} picture")
    if hi > rank:
        out.append(f"the fit window (modes {lo}..{hi}) exceeds rank(C) = {rank}: past mode "
                   f"{rank} the target has no direction of its own, and the eigenvalue "
                   f"spectrum is {rank} learned eigenvalues then the initial tail, no power "
                   "law; its exponent over this window measures the cliff between them")
    for name, fit in (("alpha", st.fits.alpha), ("alpha + beta", st.fits.alpha_plus_beta)):
        if not fit.r2 >= FIT_R2_MIN:
            out.append(f"the power-law fit of {name} over modes {lo}..{hi} has R^2 = "
                       f"{fit.r2:.2f} < {FIT_R2_MIN}: the exponent does not describe these "
                       "values")
    return out
