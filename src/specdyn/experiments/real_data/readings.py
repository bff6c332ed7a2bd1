"""real-data's readings: the numbers its claims judge, as pure functions of its tables.

Every exponent is :func:`specdyn.measure.mode_exponents` (mode order, weights ``1/k``,
modes ``2..kmax``): the estimator of the data's own ``alpha`` and ``beta``. A reading of a
wrong table (missing rows, shapes that differ, values that cannot be fitted) is NaN, never
an error: a NaN holds no claim.

- the runs' tables: :func:`wide`, :func:`series`, :func:`fit`, :func:`exponents`;
- distances: :func:`net_error` (network against theory or reference),
  :func:`wishart_level` (the size that distance has at initialisation at width ``N``),
  :func:`rms_level` (the rms distance over all modes in units of its initial size);
- a run's course: :func:`peak`, :func:`transient`, :func:`plateau_slope` (the exponent's
  slope per decade of time over the run's last half decade), :func:`end_tolerance` and
  :func:`end_after_plateau` (an end value judged only where the exponent has settled);
- :func:`learning_times` (each mode's half-rise time: the Saxe-style anchor);
- the networks against the two-layer theory: :func:`loss_fraction`,
  :func:`transient_vs_theory` (size ratio and the loss fractions of the two peaks).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

#: The median of ``|Z|`` for a standard normal ``Z``: ``median |log chi2_n / n| ~ 0.6745
#: sqrt(2/n)`` for large ``n``.
MEDIAN_ABS_NORMAL = 0.6744897501960817
#: The last part of a run a plateau is read over: its last half decade of time.
PLATEAU_SPAN = 0.5
#: An end tolerance is this share of half the gap between the candidate end values
#: ``alpha + beta`` and ``alpha + beta/2`` (half the gap is ``|beta|/4``): below it.
END_SHARE = 0.8


def wide(df: pd.DataFrame, q: str, **sel: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(t, values)`` of quantity ``q`` where each column of ``sel`` has the value given:
    rows by time, columns by mode (or rank). Empty arrays where nothing matches."""
    from specdyn.plot.real_data import wide as _wide

    return _wide(df, q, **sel)


def exponents(values: np.ndarray, kmax: int) -> np.ndarray:
    """:func:`specdyn.measure.mode_exponents` over modes ``2..kmax`` per row (NaN where a
    row cannot be fitted: a wrong table)."""
    from specdyn.measure import mode_exponents

    if values.ndim != 2 or values.shape[1] < kmax or values.shape[0] == 0:
        return np.full(max(values.shape[0], 1) if values.ndim == 2 else 1, np.nan)
    return mode_exponents(values, 2, kmax)


def fit(fits: pd.DataFrame, task: str, q: str, col: str = "value") -> float:
    """A fitted number of ``real-data_fits.parquet`` (NaN when absent)."""
    row = fits[(fits.task == task) & (fits.quantity == q)]
    return float(row[col].iloc[0]) if len(row) else float("nan")


def series(dyn: pd.DataFrame, task: str, regime: str, student: str = "linear"
           ) -> dict[str, np.ndarray]:
    """``rho_sim``, ``rho_theory``, ``rho_reference``, ``spectrum_sim``, ``loss_sim``,
    ``loss_reference`` of one run (rows by time) and its times ``t``."""
    d = dyn[(dyn.task == task) & (dyn.regime == regime) & (dyn.student == student)]
    out = {}
    for q in ("rho_sim", "rho_theory", "rho_reference", "spectrum_sim", "loss_sim",
              "loss_reference"):
        t, out[q] = wide(d, q)
        if q == "rho_sim":
            out["t"] = t
    return out


def nanmax(a: np.ndarray) -> float:
    """The largest finite value (NaN when there is none: a wrong table)."""
    a = np.asarray(a, dtype=np.float64)
    return float(np.max(a[np.isfinite(a)])) if np.isfinite(a).any() else float("nan")


def net_error(a: np.ndarray, b: np.ndarray, kmax: int) -> float:
    """max over checkpoints of the median over modes ``1..kmax`` of ``|log a / b|``."""
    if a.shape != b.shape or a.size == 0 or a.shape[1] < kmax:
        return float("nan")
    with np.errstate(divide="ignore", invalid="ignore"):
        err = np.abs(np.log(a[:, :kmax] / b[:, :kmax]))
    return float(np.max(np.median(err, axis=1)))


def wishart_level(N: float) -> float:
    """``median_k |log rho_k / rho_k^theory|`` at initialisation for ``W^T W / N`` with ``N``
    Gaussian rows: each ``(U^T W^T W U)_kk / N`` is ``sigma_w^2 chi2_N / N``, whose log has
    standard deviation ``sqrt(2/N)`` (large ``N``)."""
    return MEDIAN_ABS_NORMAL * float(np.sqrt(2.0 / N))


def rms_level(a: np.ndarray, b: np.ndarray, N: float) -> float:
    """max over checkpoints of the rms over all modes of ``log a / b``, over ``sqrt(2/N)``
    (its value for ``W^T W / N`` of ``N`` Gaussian rows against its mean: each diagonal
    entry's log has variance ``2/N``, large ``N``); NaN for a wrong table."""
    if a.shape != b.shape or a.size == 0:
        return float("nan")
    with np.errstate(divide="ignore", invalid="ignore"):
        lg = np.log(a / b)
    if not np.isfinite(lg).all():
        return float("nan")
    return float(np.max(np.sqrt(np.mean(lg**2, axis=1))) / np.sqrt(2.0 / N))


def peak(a: np.ndarray) -> tuple[float, float]:
    """``(height, index)`` of the largest exponent (NaN when none is finite)."""
    if not np.isfinite(a).any():
        return float("nan"), float("nan")
    i = int(np.nanargmax(a))
    return float(a[i]), float(i)


def transient(a_sim: np.ndarray, a_th: np.ndarray) -> float:
    """Mean of ``a_sim`` where the theory's exponent is above half its peak rise, minus its
    mean at the other checkpoints (NaN when either set is empty or the shapes differ)."""
    if a_sim.shape != a_th.shape or a_sim.size < 3:
        return float("nan")
    rise = a_th - a_th[0]
    top = rise >= 0.5 * np.max(rise)
    if not top.any() or top.all() or not np.max(rise) > 0:
        return float("nan")
    return float(np.mean(a_sim[top]) - np.mean(a_sim[~top]))


def plateau_slope(t: np.ndarray, a: np.ndarray, span: float = PLATEAU_SPAN) -> float:
    """``d a / d log10 t`` over the run's last ``span`` decades (least squares over the
    checkpoints with ``t >= t_end 10^-span``; NaN with fewer than 3 or a NaN among them)."""
    t = np.asarray(t, dtype=float)
    a = np.asarray(a, dtype=float)
    if t.shape != a.shape or t.size < 3 or not t[-1] > 0:
        return float("nan")
    sel = t >= t[-1] * 10.0**-span
    if sel.sum() < 3 or not np.isfinite(a[sel]).all():
        return float("nan")
    from specdyn.measure import loglog_fit

    # the one line fit: log(e^a) = a against log t, a slope per e-fold of time
    return float(loglog_fit(t[sel], np.exp(a[sel]))[0] * np.log(10.0))


def sig3(x: float) -> float:
    """``x`` rounded to three significant digits (a bound computed from the data, as the
    claim prints it)."""
    return float(f"{x:.3g}")


def end_tolerance(beta: float) -> float:
    """The tolerance of an end exponent: :data:`END_SHARE` of ``|beta|/4``, half the gap
    between the candidate end values ``alpha + beta`` (Region IIIa) and ``alpha + beta/2``
    (IIIb), so that a value within it is nearer one candidate than the other (three
    significant digits)."""
    return sig3(END_SHARE * abs(beta) / 4.0)


def end_after_plateau(t: np.ndarray, a: np.ndarray, target: float, bound: float
                      ) -> tuple[float, float]:
    """``(a_end - target, slope)``: the end value's distance from ``target``, NaN unless the
    exponent has settled (``|plateau_slope| <= bound`` per decade), and the slope."""
    slope = plateau_slope(t, a)
    dev = float(a[-1] - target) if a.size and abs(slope) <= bound else float("nan")
    return dev, slope


def learning_times(t: np.ndarray, rho: np.ndarray, kmax: int, min_rise: float = 0.1
                   ) -> np.ndarray:
    """Each mode's half-rise time for modes ``1..kmax``: the first time its learned part
    ``rho_k(t) - rho_k(0)`` reaches half its value at the run's end, interpolated in
    ``log t`` between checkpoints (NaN for a mode whose learned part ends below
    ``min_rise`` of its initial value, or that falls: no learning to time)."""
    t = np.asarray(t, dtype=float)
    out = np.full(kmax, np.nan)
    if rho.ndim != 2 or rho.shape[0] != t.size or rho.shape[1] < kmax or t.size < 3:
        return out
    with np.errstate(divide="ignore", invalid="ignore"):
        rise = (rho[:, :kmax] - rho[:1, :kmax]) / rho[:1, :kmax]
    pos = t > 0
    for k in range(kmax):
        r = rise[:, k]
        end = r[-1]
        if not (np.isfinite(r).all() and end >= min_rise):
            continue
        above = np.nonzero(pos & (r >= 0.5 * end))[0]
        if not above.size:
            continue
        i = int(above[0])
        if i == 0 or not pos[i - 1]:
            out[k] = t[i]
            continue
        f = (0.5 * end - r[i - 1]) / (r[i] - r[i - 1])
        out[k] = float(np.exp(np.log(t[i - 1]) + f * (np.log(t[i]) - np.log(t[i - 1]))))
    return out


def clock_error(t_a: np.ndarray, t_b: np.ndarray) -> float:
    """Median over modes timed in both of ``|log t_a / t_b|`` (NaN with fewer than 3)."""
    ok = np.isfinite(t_a) & np.isfinite(t_b) & (t_a > 0) & (t_b > 0)
    if ok.sum() < 3:
        return float("nan")
    return float(np.median(np.abs(np.log(t_a[ok] / t_b[ok]))))


def loss_fraction(loss: np.ndarray) -> np.ndarray:
    """``loss(t) / loss(0)`` of a ``(n_t, 1)`` or ``(n_t,)`` loss column."""
    v = np.asarray(loss, dtype=float).reshape(-1)
    if not v.size or not v[0] > 0:
        return np.full(max(v.size, 1), np.nan)
    return v / v[0]


def transient_vs_theory(a_net: np.ndarray, frac_net: np.ndarray, a_th: np.ndarray,
                        frac_th: np.ndarray) -> tuple[float, float]:
    """``(size ratio, time)`` of a network's exponent transient against the theory's on the
    same data, on the clock of the loss fraction still to learn: size ratio = ``(max a_net -
    a_net(0)) / (max a_th - a_th(0))``; time = ``log10`` of the loss fraction at the
    network's peak over that at the theory's (0: the peaks at the same share of the loss
    learned). NaN where a series is missing or cannot be read."""
    if (a_net.shape != frac_net.shape or a_th.shape != frac_th.shape or a_net.size < 3
            or a_th.size < 3):
        return float("nan"), float("nan")
    h_net, i_net = peak(a_net)
    h_th, i_th = peak(a_th)
    if not (np.isfinite(h_net) and np.isfinite(h_th)) or not h_th > a_th[0]:
        return float("nan"), float("nan")
    size = (h_net - float(a_net[0])) / (h_th - float(a_th[0]))
    f_net, f_th = frac_net[int(i_net)], frac_th[int(i_th)]
    time = float(np.log10(f_net / f_th)) if f_net > 0 and f_th > 0 else float("nan")
    return float(size), time
