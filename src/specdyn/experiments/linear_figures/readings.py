"""The linear figures' readings: what the claims, the figures and the summaries read off the
tables (windows fixed by the theory, deviations, the curves' features), pure functions.

fig2's windows (:func:`late_start`, :func:`spread_end`), its deviations from the theory
(:func:`transient_deviation`, :func:`spread_prediction`, :func:`oracle_deviation`,
:func:`gd_exponent`) and the features of its curves (:func:`peak_reading`,
:func:`early_growth_exponent`, :func:`curve_correlation`, :func:`learned_ranks`);
finite-size's slopes (:func:`upper_half_slope`, :func:`falling_upper_half`) and error
level (:func:`finite_size_level`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from specdyn import theory
from specdyn.measure.exponents import two_point_exponent
from specdyn.measure.spectra import symmetric_eigenvalues
from specdyn.runs.claims import loglog_slope
from specdyn.settings import PowerLawSetting
from specdyn.theory.discrete import rho_gd
from specdyn.theory.oracles import gram_ode

LOCAL_RANKS = (1, 2)  # the two-point local exponent at k = 1 of fig2's panel (b)
#: fig2's spread seeds are trained to SPREAD_T t_learn(2): through the k = 1 exponent's
#: transient (its peak near t = 3, settled by t_learn(2) = 16.5 at the paper's setting).
SPREAD_T = 4.0
#: Eq. (21) is linear while its sinh argument 2 lambda_k theta_k t / gamma0 <= SINH_ARG
#: (sinh(x) = x within 1.5 %): the window of :func:`early_growth_exponent`.
SINH_ARG = 0.3


def late_start(s: PowerLawSetting) -> float:
    """Start of fig2's late window: ``t_learn`` of the last rank of the k = 1 exponent.

    Fixed by the theory before the run: from then on both ranks of the two-point
    slope have learned 90 % of their target, so the exponent has settled.
    """
    return float(theory.t_learn(s, float(LOCAL_RANKS[-1])))


def spread_end(s: PowerLawSetting) -> float:
    """End of the spread seeds' runs: ``SPREAD_T t_learn(2)``, fixed by the theory."""
    return SPREAD_T * late_start(s)


def transient_deviation(spectra: pd.DataFrame, theory_at: pd.Series, t_end: float) -> float:
    """RMS of ``log rho_sim / rho_theory`` over every rank and every checkpoint ``t <=
    t_end``: how far one run is from Eq. (12) through the transient.

    ``spectra`` has ``t, k, rho_sim``; ``theory_at`` is ``rho_theory`` indexed by ``(t,
    k)``. Ranks with a zero eigenvalue are left out; NaN without a cell.
    """
    d = spectra[(spectra.t <= t_end) & (spectra.rho_sim > 0)]
    th = theory_at.reindex(pd.MultiIndex.from_arrays([d.t, d.k])).to_numpy()
    dev = np.log(d.rho_sim.to_numpy() / th)
    return float(np.sqrt(np.mean(dev * dev))) if dev.size else float("nan")


def spread_prediction(spectra: pd.DataFrame, spread: pd.DataFrame, t_end: float
                      ) -> tuple[float, list[float]]:
    """The mean over the spread seeds of :func:`transient_deviation` (and each seed's), the
    theory read from the judged run's ``rho_theory`` at the same ``(t, k)``."""
    theory_at = spectra.set_index(["t", "k"]).rho_theory
    each = [transient_deviation(g, theory_at, t_end) for _, g in spread.groupby("seed")]
    return (float(np.mean(each)) if each else float("nan")), each


def oracle_ranks(D: int) -> tuple[int, ...]:
    """The ranks the ODE oracle checks: 1, 2, 8 and the last (those that exist)."""
    return tuple(sorted({1, 2, min(8, D), D}))


def oracle_deviation(spectra: pd.DataFrame, s: PowerLawSetting, ranks: tuple[int, ...]
                     ) -> float:
    """Largest ``|log rho_theory / rho_ODE|`` over ``ranks`` at every checkpoint: the table's
    theory column against :func:`specdyn.theory.oracles.gram_ode`, an independent
    integration of Eqs. (144)-(145) (the theory's ranks are its modes: Appendix F)."""
    worst = 0.0
    for k in ranks:
        row = spectra[spectra.k == k].sort_values("t")
        ode = gram_ode(s, float(k), row.t.to_numpy())["rho"]
        dev = np.abs(np.log(row.rho_theory.to_numpy() / ode))
        if not np.all(np.isfinite(dev)):
            return float("nan")
        worst = max(worst, float(dev.max()))
    return worst


def gd_exponent(s: PowerLawSetting, steps: np.ndarray, dt: float) -> np.ndarray:
    """The discrete-time theory's two-point exponent at ``k = 1`` after ``steps`` GD steps
    (:func:`specdyn.theory.discrete.rho_gd`, ``N = M = inf``)."""
    return two_point_exponent(rho_gd(s, np.asarray(LOCAL_RANKS, dtype=float),
                                     np.asarray(steps), dt), LOCAL_RANKS)


def peak_reading(sim: np.ndarray, th: np.ndarray) -> tuple[float, float]:
    """``(rise, shift)`` of the k = 1 exponent's transient, checkpoints in time order: the
    simulation's rise from its first value to its peak over the theory's, and the index of
    the simulation's peak less the theory's. NaN where a curve is not finite or the theory
    does not rise (a wrong table)."""
    sim, th = np.asarray(sim, dtype=float), np.asarray(th, dtype=float)
    if sim.size < 2 or sim.size != th.size or not (np.all(np.isfinite(sim))
                                                    and np.all(np.isfinite(th))):
        return float("nan"), float("nan")
    th_rise = float(th.max() - th[0])
    if not th_rise > 0:
        return float("nan"), float("nan")
    return (float(sim.max() - sim[0]) / th_rise,
            float(int(np.argmax(sim)) - int(np.argmax(th))))


def learned_ranks(s: PowerLawSetting, ranks: np.ndarray, t_end: float) -> np.ndarray:
    """The ranks the theory has learned (90 %) a decade before ``t_end``."""
    return ranks[theory.t_learn(s, ranks) <= t_end / 10.0]


def early_growth_exponent(s: PowerLawSetting, t: np.ndarray, rho: np.ndarray,
                          ranks: range) -> float:
    """Pooled log-log slope of ``rho_k(t) - rho_k(0)`` against ``t`` over ``ranks`` (columns
    ``k - 1`` of ``rho``), each rank in its early window ``2 lambda_k theta_k t / gamma0 <=``
    :data:`SINH_ARG`, ``t > 0`` (Eq. 22: ``t^2``); NaN where no rank has three positive
    points there (a wrong table)."""
    xs, ys = [], []
    for k in ranks:
        lam, th = s.lambda0 * k ** -s.alpha, s.theta0 * k ** (-s.beta / 2)
        inc = rho[:, k - 1] - rho[0, k - 1]
        m = (t > 0) & (t <= SINH_ARG * s.gamma0 / (2 * lam * th)) & (inc > 0)
        if m.sum() >= 3:
            x, y = np.log(t[m]), np.log(inc[m])
            xs.append(x - x.mean())
            ys.append(y - y.mean())
    if not xs:
        return float("nan")
    x, y = np.concatenate(xs), np.concatenate(ys)
    return float(x @ y / (x @ x))


def curve_correlation(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson correlation of two curves sampled at the same times; NaN where one is flat or
    not finite (a wrong table)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size < 3 or a.size != b.size or not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        return float("nan")
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return float(np.corrcoef(a, b)[0, 1])


def upper_half_slope(df: pd.DataFrame, axis: str) -> float:
    """Log-log slope of the seed-mean error against the upper half of the sizes of ``axis``
    (:func:`upper_sizes`). The curve steepens at small sizes (size ~ D); the upper half
    shows the asymptote."""
    mean = df[df.axis == axis].groupby("size").median_abs_log.mean()
    mean = mean.loc[upper_sizes(mean.index.to_numpy())]
    return loglog_slope(mean.index.to_numpy(dtype=float), mean.to_numpy())


def falling_upper_half(df: pd.DataFrame, axis: str) -> bool:
    """Whether the seed-mean error of ``axis`` falls at every step of the upper half of the
    sizes (the sizes :func:`upper_half_slope` fits)."""
    mean = df[df.axis == axis].groupby("size").median_abs_log.mean()
    return bool(np.all(np.diff(mean.loc[upper_sizes(mean.index.to_numpy())].to_numpy()) < 0))


def initial_deviation_draws(s: PowerLawSetting, N: int | None, M: int | None, draws: int,
                            seed: int) -> np.ndarray:
    """RMS over ranks of ``log rho_k(0) / (sigma_w^2 lambda_k)`` for ``draws`` independent
    initialisations, drawn here with numpy (not by the engines): ``W`` ``N x D`` with
    entries ``N(0, sigma_w^2)`` (``N = None``: ``Gw = sigma_w^2 I``), ``X`` ``M x D`` from
    ``N(0, Lambda)`` (``M = None``: ``Sigma = Lambda``); the spectrum is that of
    ``Sigma^(1/2) Gw Sigma^(1/2)``, the nonzero eigenvalues of ``H H^T / (M N)`` (App. A).

    The size a run's deviation from Eq. (12) has at ``t = 0``: a simulation equal to its
    theory has 0. Ranks with a zero eigenvalue (``M < D``) are left out.
    """
    lam, _ = s.spectra()
    D = lam.size
    rng = np.random.default_rng(np.random.SeedSequence([seed, 47]))
    out = np.empty(draws)
    for i in range(draws):
        if N is None:
            gw = np.eye(D) * s.sigma_w**2
        else:
            w = rng.standard_normal((N, D)) * s.sigma_w
            gw = w.T @ w / N
        if M is None:  # Sigma = Lambda: its root is diagonal
            r = np.sqrt(lam)
            mat = r[:, None] * gw * r[None, :]
        else:
            x = rng.standard_normal((M, D)) * np.sqrt(lam)
            if M >= D:  # Sigma = L L^T: L^T Gw L has the eigenvalues of Sigma^1/2 Gw Sigma^1/2
                chol = np.linalg.cholesky(x.T @ x / M)
                mat = chol.T @ gw @ chol
            else:  # the nonzero eigenvalues, through the M x M kernel X Gw X^T / M
                mat = x @ gw @ x.T / M
        eig = symmetric_eigenvalues(mat, symmetrize=True)
        keep = eig > 1e-12 * eig[0]
        dev = np.log(eig[keep] / (s.sigma_w**2 * lam[keep]))
        out[i] = np.sqrt(np.mean(dev * dev))
    return out


@lru_cache(maxsize=16)
def initial_deviation_level(s: PowerLawSetting, N: int | None, M: int | None, draws: int,
                            seed: int) -> tuple[float, float]:
    """Mean and sd of :func:`initial_deviation_draws` (cached: the claims of a folder and of
    its wrong models ask for the same): the size a run's ``t = 0`` deviation must have."""
    d = initial_deviation_draws(s, N, M, draws, seed)
    return float(d.mean()), float(d.std(ddof=1))


def initial_deviation(spectra: pd.DataFrame, s: PowerLawSetting, value: str) -> float:
    """:func:`rms_log_deviation` of a table's earliest spectrum (``t, k, value``) from its
    initial theory ``sigma_w^2 lambda_k``; NaN where a rank lies beyond ``D`` (a table with
    more ranks than the theory has modes is not a spectrum of this setting)."""
    lam, _ = s.spectra()
    t0 = spectra[spectra.t == spectra.t.min()]
    k = t0.k.to_numpy(dtype=np.int64)
    if not k.size or k.min() < 1 or k.max() > lam.size:
        return float("nan")
    return rms_log_deviation(t0[value].to_numpy(dtype=float), s.sigma_w**2 * lam[k - 1])


def rms_log_deviation(sim: np.ndarray, th: np.ndarray) -> float:
    """RMS over the entries with ``sim > 0`` of ``log sim / th``; NaN without one."""
    sim, th = np.asarray(sim, dtype=float), np.asarray(th, dtype=float)
    ok = sim > 0
    dev = np.log(sim[ok] / th[ok])
    return float(np.sqrt(np.mean(dev * dev))) if dev.size else float("nan")


def crossing_time(t: np.ndarray, x: np.ndarray, level: float) -> float:
    """First time ``x(t)`` reaches ``level``, interpolated linearly between the two
    checkpoints around it (in ``log t`` when both are positive); NaN if it never does."""
    t, x = np.asarray(t, dtype=float), np.asarray(x, dtype=float)
    above = np.flatnonzero(x >= level)
    if not above.size or above[0] == 0 or not np.isfinite(x[above[0]]):
        return float("nan")
    i = int(above[0])
    f = (level - x[i - 1]) / (x[i] - x[i - 1])
    if t[i - 1] > 0:
        return float(np.exp((1 - f) * np.log(t[i - 1]) + f * np.log(t[i])))
    return float(t[i - 1] + f * (t[i] - t[i - 1]))


def upper_sizes(sizes: np.ndarray) -> np.ndarray:
    """The upper half of ``sizes`` (sorted; at least two): where the slopes are fitted."""
    sizes = np.sort(np.asarray(sizes))
    half = len(sizes) // 2
    n = len(sizes) - half if len(sizes) - half >= 2 else len(sizes)
    return sizes[-n:]


@dataclass(frozen=True)
class ErrorLevel:
    """The size of finite-size's errors against the finite-size theory
    (:func:`finite_size_level`), over the valid cells of one axis.

    Attributes
    ----------
    measured, predicted
        The RMS of ``log rho_sim / rho_theory`` and the theory's RMS there,
        ``sqrt(mean(shift^2 + std^2))``.
    standardized
        The RMS of each cell's log error in units of its own predicted RMS
        ``sqrt(shift^2 + std^2)``: 1 where the theory has the errors' size, whichever cells
        are large (the claim's reading: the sample covariance's top modes, whose errors
        are largest and heaviest-tailed, weigh as much as any other cell).
    cells
        The number of valid cells (0: the readings are NaN).
    """

    measured: float
    predicted: float
    standardized: float
    cells: int


def finite_size_level(cells: pd.DataFrame, s: PowerLawSetting, axis: str,
                      sizes: np.ndarray) -> ErrorLevel:
    """The errors of the cells of ``axis`` at ``sizes`` (every seed, checkpoint and rank)
    where the finite-size theory is valid against that theory
    (:func:`specdyn.theory.finite_size_moments` at each cell's ``N`` or ``M``).

    ``cells`` has ``axis, size, seed, t, k, rho_sim, rho_theory``.
    """
    meas, pred = [], []
    for size in sizes:
        d = cells[(cells.axis == axis) & (cells["size"] == size)]
        if not len(d):
            continue
        t, k = d.t.to_numpy(dtype=float), d.k.to_numpy(dtype=float)
        kw = {"N": int(size)} if axis == "N" else {"M": int(size)}
        m = theory.finite_size_moments(s, k, t, **kw)
        size2 = m.mean_shift**2 + m.std**2
        ok = m.valid & (d.rho_sim.to_numpy() > 0) & (size2 > 0)
        meas.append(np.log(d.rho_sim.to_numpy()[ok] / d.rho_theory.to_numpy()[ok]))
        pred.append(size2[ok])
    x, p = (np.concatenate(meas), np.concatenate(pred)) if meas else (np.array([]),) * 2
    if not x.size:
        return ErrorLevel(float("nan"), float("nan"), float("nan"), 0)
    return ErrorLevel(float(np.sqrt(np.mean(x * x))), float(np.sqrt(np.mean(p))),
                      float(np.sqrt(np.mean(x * x / p))), int(x.size))
