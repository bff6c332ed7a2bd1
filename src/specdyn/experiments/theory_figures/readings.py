"""What the theory figures' claims read off a table's ``alpha_eff`` grid.

Pure functions of arrays (or of a table): the widest run of a plateau along ``k``,
where the exact exponent changes regime against a boundary, the order in which a mode
visits the exponents, the learned part's distance to Eq. (21)'s form. The windows
they read in are fixed here; the claims' tolerances are in
:mod:`specdyn.experiments.theory_figures.claims`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from specdyn import theory
from specdyn.settings import PowerLawSetting

#: A boundary is checked where it lies this many decades inside the grid and from its
#: neighbour (the two plateaus it separates both exist there).
BOUNDARY_MARGIN = 1.0
#: Eq. (21) on its own: modes of the deep panel whose exact learned part
#: ``rho_k(t) - rho_k(0)`` the table records (quantity ``rho_learned``), on times where
#: ``x = 2 lambda_k theta_k t / gamma0`` runs over ``SINH_GRID`` (log-spaced, ``SINH_POINTS``).
SINH_MODES = (1.0, 10.0, 100.0)
SINH_GRID, SINH_POINTS = (0.5, 5.0), 25
#: The window of the Eq. (21) claims: ``x`` in ``SINH_X`` (beyond the t^2 range of Eq. 22's
#: x <= 0.3) where Eq. (21)'s own ``l_k = S sinh(x) / (2 gamma0 theta_k) <= SINH_ELL`` (the
#: drive ``theta_k - xi_k/gamma0`` of Eq. 20 is dropped to ``theta_k`` within SINH_ELL).
SINH_X, SINH_ELL = (1.0, 4.0), 0.05


def panel_grid(df: pd.DataFrame, panel: str, quantity: str = "alpha_eff"
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(k, t, values[k, t])`` of one panel's grid in a fig3/fig6 table."""
    sub = df[(df.panel == panel) & (df.quantity == quantity)]
    wide = sub.pivot(index="k", columns="t", values="value")
    return (wide.index.to_numpy(dtype=float), wide.columns.to_numpy(dtype=float),
            wide.to_numpy(dtype=float))


def longest_span(on: np.ndarray, log_k: np.ndarray) -> float:
    """Widest run of consecutive ``True`` along ``k`` (axis 0) at any ``t``, in decades."""
    best = 0
    for col in on.T:
        run = 0
        for x in col:
            run = run + 1 if x else 0
            best = max(best, run)
    step = float(log_k[1] - log_k[0]) if log_k.size > 1 else 0.0
    return best * step


def last_k(k: np.ndarray, mask: np.ndarray) -> float:
    """Largest ``k`` where ``mask`` holds (NaN if nowhere)."""
    idx = np.nonzero(mask)[0]
    return float(k[idx.max()]) if idx.size else float("nan")


def plateau_span(k: np.ndarray, aeff: np.ndarray, labels: np.ndarray, region: str,
                 value: float, tol: float) -> float:
    """Widest run along ``k``, at any time, of cells labelled ``region`` within ``tol`` of
    ``value``, in decades of ``k``.

    A plateau is a run of neighbouring modes on the asymptotic exponent, not a share of
    cells: a shuffled grid keeps the share but breaks the run.
    """
    on = (labels == region) & (np.abs(aeff - value) <= tol)
    return longest_span(on, np.log10(k))


def boundary_offsets(k: np.ndarray, t: np.ndarray, aeff: np.ndarray, s: PowerLawSetting
                     ) -> dict[str, np.ndarray]:
    """Where the exact ``alpha_eff`` changes regime, against the boundaries, in decades.

    At each time ``t_j`` (column of ``aeff``): ``k_cross`` is measured as the
    largest ``k`` with ``alpha_eff >= (alpha + 3 alpha + beta)/2``; below the
    slice's peak, ``k_learn`` as the largest ``k`` with ``alpha_eff <= (3 alpha +
    beta + alpha + beta)/2`` and ``k_layer`` as the largest with ``alpha_eff <=
    (alpha + beta + alpha + beta/2)/2``. Returns ``log10(measured / boundary)``
    for each boundary at the times where it lies :data:`BOUNDARY_MARGIN` decades
    inside the grid and from its neighbour (``k_cross`` from ``k_learn``,
    ``k_learn`` from ``k_cross`` and ``k_layer``, ``k_layer`` below ``k_learn``).
    """
    ex = theory.asymptotic_exponents(s)
    levels = {"k_cross": 0.5 * (ex["I"] + ex["II"]), "k_learn": 0.5 * (ex["II"] + ex["IIIa"]),
              "k_layer": 0.5 * (ex["IIIa"] + ex["IIIb"])}
    kc, kl, ky = theory.k_cross(s, t), theory.k_learn(s, t), theory.k_layer(s, t)
    lo, hi = np.log10(k[0]) + BOUNDARY_MARGIN, np.log10(k[-1]) - BOUNDARY_MARGIN
    m = BOUNDARY_MARGIN
    with np.errstate(divide="ignore", invalid="ignore"):
        def inside(b: np.ndarray) -> np.ndarray:
            return (np.log10(b) >= lo) & (np.log10(b) <= hi)

        use = {"k_cross": inside(kc) & (np.log10(kc / kl) >= m),
               "k_learn": inside(kl) & (np.log10(kc / kl) >= m) & (np.log10(kl / ky) >= m),
               "k_layer": inside(ky) & (np.log10(kl / ky) >= m)}
    bound = {"k_cross": kc, "k_learn": kl, "k_layer": ky}
    out: dict[str, list[float]] = {name: [] for name in levels}
    for j in range(t.size):
        a = aeff[:, j]
        peak = int(np.argmax(a))
        found = {"k_cross": last_k(k, a >= levels["k_cross"]),
                 "k_learn": last_k(k[:peak], a[:peak] <= levels["k_learn"]),
                 "k_layer": last_k(k[:peak], a[:peak] <= levels["k_layer"])}
        for name in levels:
            if use[name][j]:
                out[name].append(float(np.log10(found[name] / bound[name][j])))
    return {name: np.asarray(v) for name, v in out.items()}


def crossing_offsets(s: PowerLawSetting) -> dict[str, float]:
    """Where ``alpha_eff`` passes halfway between the two exponents a boundary separates,
    relative to the boundary, in decades of ``k``: derived from Eq. (15)'s asymptotic forms.

    * ``k_cross`` (``R_k = 1``, and ``k_u``, its ``t = inf`` limit): 0. There the initial
      part ``sigma_w^2 lambda_k`` (exponent ``alpha``) and the learned part (``3 alpha +
      beta``) are equal, which puts their weighted exponent exactly halfway.
    * ``k_learn`` (learned fraction ``l_k = 0.9``): ``log10(ln 10 / x_h) / alpha``. With
      ``u << 1`` Eq. (15) gives ``xi_k = gamma0 theta_k (1 - e^(-x))``, ``x = lambda_k S t /
      gamma0^2`` (``x = ln 10`` at ``k_learn``), so the learned part goes as
      ``k^(-(alpha + beta)) (1 - e^(-x))^2`` and ``alpha_eff = alpha + beta + alpha
      2 x e^(-x) / (1 - e^(-x))``: halfway at ``2 x_h = e^(x_h) - 1``, ``x_h = 1.2564``, and
      ``x`` goes as ``k^(-alpha)`` (+0.263 decade at ``alpha = 1``).
    * ``k_layer`` (``u_k = 1``, and ``k_l``, its ``t = inf`` limit): ``(2 / beta)
      log10(2 / sqrt 3)``. With ``l = 1`` the learned part goes as ``lambda_k (sqrt(1 + 4
      u^2) - 1)``, ``u`` as ``k^(-beta/2)``, whose exponent is ``alpha + beta/2 (1 +
      1/sqrt(1 + 4 u^2))``: halfway between ``alpha + beta`` and ``alpha + beta/2`` at
      ``u = sqrt(3)/2`` (+0.125 decade at ``beta = 1``).
    """
    from scipy.optimize import brentq

    x_h = brentq(lambda x: np.expm1(x) - 2.0 * x, 0.5, 3.0)
    return {"k_cross": 0.0, "k_u": 0.0,
            "k_learn": float(np.log10(np.log(10.0) / x_h) / s.alpha),
            "k_layer": float(2.0 / s.beta * np.log10(2.0 / np.sqrt(3.0))),
            "k_l": float(2.0 / s.beta * np.log10(2.0 / np.sqrt(3.0)))}


def cross_front(k: np.ndarray, t: np.ndarray, rho: np.ndarray, s: PowerLawSetting
                ) -> np.ndarray:
    """Where the learned part equals the initial one, against Eq. (112)'s ``k_cross(t)`` of
    the first layer, at every time, in decades.

    ``rho[i, j]`` is the spectrum at ``t[i]`` (``t[0] = 0``) and mode ``k[j]``; at each
    ``t_i > 0`` the largest ``k`` with ``R_k = rho_k(t_i) / rho_k(0) - 1 >= 1`` (Eq. 16: the
    learned part at least the initial one) against ``k_cross(t_i)`` (``k2(t)`` before
    ``t*``, ``k1`` after), where that lies :data:`BOUNDARY_MARGIN` decades inside the grid
    and ``t_i`` that far from ``t*`` (where ``k1`` and ``k2`` meet in a crossover).
    ``log10(measured / k_cross)``; NaN at a time where no mode reaches ``R = 1`` or the
    spectrum is not positive and finite (a wrong table).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        r = rho / rho[0] - 1.0
    ts = theory.t_star(s)
    lo, hi = np.log10(k[0]) + BOUNDARY_MARGIN, np.log10(k[-1]) - BOUNDARY_MARGIN
    out = []
    for i in np.nonzero(t > 0)[0]:
        b = float(theory.k_cross_first_layer(s, t[i]))
        if not (lo <= np.log10(b) <= hi
                and abs(np.log10(t[i] / ts)) >= BOUNDARY_MARGIN):
            continue
        ok = np.all(np.isfinite(r[i])) and np.all(rho[i] > 0)
        found = last_k(k, r[i] >= 1.0) if ok else float("nan")
        out.append(float(np.log10(found / b)))
    return np.asarray(out)


def smallest_growth(rho: np.ndarray) -> float:
    """The smallest step of ``rho[i, j]`` from one time to the next (rows in time order),
    relative to the mode's initial value: negative where a mode's spectrum falls."""
    with np.errstate(divide="ignore", invalid="ignore"):
        steps = np.diff(rho, axis=0) / rho[0]
    return float(np.min(steps)) if steps.size and np.all(np.isfinite(steps)) else float("nan")


def premise_window(s: PowerLawSetting, tol: float) -> tuple[float, float]:
    """The modes whose Eq. (32) sequence ``alpha -> 3 alpha + beta -> alpha + beta`` meets
    the statement's premise at the tolerance ``tol``: ``(k_lo, k_hi)``, empty (``k_lo >
    k_hi``) where no mode does.

    Eq. (32)'s exponents hold "in bulk domains sufficiently far from the boundaries"; for
    a fixed mode that is, from Eq. (15)'s asymptotic forms (``u << 1``):

    * Region II on the way: with ``G = gamma0 theta_k / cross_level`` the learned part over
      the initial one is ``G^2 x^2`` and the learned fraction ``x`` (``x`` the rate times
      ``t``), so ``3 alpha + beta - alpha_eff ~ (2 alpha + beta) / (G^2 x^2) + alpha x``,
      smallest (``1.5 alpha x*``) at ``x*^3 = 2 (2 alpha + beta) / (alpha G^2)``: within
      ``tol`` at some time iff ``G^2 >= 2 (2 alpha + beta) / alpha (1.5 alpha / tol)^3``
      (``G >= 402`` at ``alpha = beta = 1``, ``tol = 0.05``);
    * Region IIIa at the end (``xi = gamma0 theta_k``, ``u_k = gamma0 theta_k / S``): the
      exponent ``alpha + beta / 2 (1 + 1 / sqrt(1 + 4 u^2)) ~ alpha + beta - beta u^2``
      is within ``tol`` iff ``u <= sqrt(tol / beta)`` (0.22).

    So ``gamma0 theta_k`` in ``[G_min cross_level, u_max S]``: non-empty only for
    ``sigma_w <~ u_max / G_min = 5.6e-4`` (``sigma_a = 1``).
    """
    a, b = s.alpha, s.beta
    g_min = np.sqrt(2.0 * (2.0 * a + b) / a * (1.5 * a / tol) ** 3)
    m_lo, m_hi = g_min * theory.cross_level(s), np.sqrt(tol / b) * s.S
    top = s.gamma0 * s.theta0
    return float((top / m_hi) ** (2.0 / b)), float((top / m_lo) ** (2.0 / b))


def sequence_modes(s: PowerLawSetting, k: np.ndarray, tol: float) -> dict[str, float]:
    """The modes fig3 follows over time (Eq. 32), keyed by the region they end in.

    IIIa: the middle (log scale) of :func:`premise_window`, NaN where it is empty or off
    the grid ``k``; IIIb: the middle of the modes where IIIb can appear, ``[1, min(k_u,
    k_l)]``. Each rounded to the nearest mode of the grid ``k``.
    """
    lo, hi = premise_window(s, tol)
    want = {"IIIa": np.sqrt(max(1.0, lo) * hi) if max(1.0, lo) <= hi else np.nan,
            "IIIb": np.sqrt(min(theory.k_u(s), theory.k_l(s)))}
    out = {}
    for reg, w in want.items():
        on = np.isfinite(w) and k[0] <= w <= k[-1]
        out[reg] = float(k[int(np.argmin(np.abs(np.log(k / w))))]) if on else float("nan")
    return out


def mode_sequence(k: np.ndarray, t: np.ndarray, aeff: np.ndarray, k_mode: float,
                  values: list[float], tol: float) -> tuple[bool, str]:
    """Whether the mode nearest ``k_mode`` visits ``values`` in time order (Eq. 32).

    Each value is visited at the times where ``|alpha_eff - value| <= tol``; the
    order is that of the median of those times. Not held when a value is never visited
    or the mode is NaN (no mode meets the premise, :func:`sequence_modes`).
    """
    if not np.isfinite(k_mode):
        return False, "no mode of the grid meets the premise (premise_window)"
    i = int(np.argmin(np.abs(np.log(k / k_mode))))
    a = aeff[i]
    medians = []
    for val in values:
        hit = t[np.abs(a - val) <= tol]
        medians.append(float(np.median(hit)) if hit.size else float("nan"))
    ok = bool(np.all(np.isfinite(medians)) and np.all(np.diff(medians) > 0))
    text = " -> ".join(f"{v:g} at t ~ {m:.3g}" if np.isfinite(m) else f"{v:g} never within {tol:g}"
                       for v, m in zip(values, medians, strict=True))
    return ok, f"k = {k[i]:.3g}: {text}"


def sinh_x(s: PowerLawSetting, k: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Eq. (21)'s argument ``x = 2 lambda_k theta_k t / gamma0``."""
    lam, th = s.lambda0 * k ** -s.alpha, s.theta0 * k ** (-s.beta / 2)
    return 2.0 * lam * th * t / s.gamma0


def sinh_deviations(df: pd.DataFrame, s: PowerLawSetting, panel: str) -> tuple[float, float, int]:
    """``(sinh, square, n)``: over the Eq. (21) window (:data:`SINH_X`, ``l_k <=``
    :data:`SINH_ELL`) of the table's ``rho_learned`` rows, the largest ``|log|`` of their
    ratio to Eq. (21)'s form ``S lambda_k / 2 (cosh x - 1)`` (``xi = S/2 sinh x`` in Eq. 22's
    first line) and to Eq. (22)'s ``t^2`` form ``S lambda_k x^2 / 4``; ``n`` points.
    NaN where a value is not positive or no point lies in the window (a wrong table)."""
    sub = df[(df.panel == panel) & (df.quantity == "rho_learned")]
    k, t, val = (sub[c].to_numpy(dtype=float) for c in ("k", "t", "value"))
    x = sinh_x(s, k, t)
    ell = s.S * np.sinh(x) / (2.0 * s.gamma0 * s.theta0 * k ** (-s.beta / 2))
    m = (x >= SINH_X[0]) & (x <= SINH_X[1]) & (ell <= SINH_ELL)
    if not m.any() or not np.all(val[m] > 0) or not np.all(np.isfinite(val[m])):
        return float("nan"), float("nan"), int(m.sum())
    lam = s.lambda0 * k[m] ** -s.alpha
    sinh_form = s.S * lam / 2.0 * (np.cosh(x[m]) - 1.0)
    square = s.S * lam * x[m] ** 2 / 4.0
    return (float(np.abs(np.log(val[m] / sinh_form)).max()),
            float(np.abs(np.log(val[m] / square)).max()), int(m.sum()))


def first_layer_offsets(k: np.ndarray, t: np.ndarray, aeff: np.ndarray, s: PowerLawSetting
                        ) -> dict[str, np.ndarray]:
    """Where the exact first-layer ``alpha_eff`` changes regime, against App. C's boundaries.

    ``log10(measured / boundary)`` at each time ``t_j`` (column of ``aeff``) where the
    boundary lies :data:`BOUNDARY_MARGIN` decades inside the grid and ``t_j`` that far from
    ``t*`` on the boundary's side: ``k2`` (Eq. 109, ``t < t*``) as the largest ``k`` with
    ``alpha_eff >= (alpha + 3 alpha + beta)/2``; ``k_learn`` (Eq. 100, ``t < t*``), below the
    slice's peak, as the largest with ``alpha_eff <= (3 alpha + beta + alpha + beta)/2``;
    ``k1`` (Eq. 104, ``t > t*``) as the largest with ``alpha_eff >= (alpha + alpha + beta)/2``;
    ``k_star`` (Eq. 111): at the grid time nearest ``t*`` (if within half a margin), the
    largest ``k`` with ``alpha_eff`` past halfway from ``alpha`` to ``alpha + beta``, against
    ``k* = k1``.
    """
    a_, b_, c_ = s.alpha, 3 * s.alpha + s.beta, s.alpha + s.beta
    ts, k1 = theory.t_star(s), theory.k1(s)
    bounds = {"k2": theory.k2(s, t), "k_learn": theory.k_learn_first_layer(s, t),
              "k1": np.full_like(t, k1)}
    lo, hi = np.log10(k[0]) + BOUNDARY_MARGIN, np.log10(k[-1]) - BOUNDARY_MARGIN
    early = np.log10(t) <= np.log10(ts) - BOUNDARY_MARGIN
    late = np.log10(t) >= np.log10(ts) + BOUNDARY_MARGIN
    side = {"k2": early, "k_learn": early, "k1": late}
    out: dict[str, np.ndarray] = {}
    for name, b in bounds.items():
        with np.errstate(divide="ignore", invalid="ignore"):
            use = side[name] & (np.log10(b) >= lo) & (np.log10(b) <= hi)
        offs = []
        for j in np.nonzero(use)[0]:
            col = aeff[:, j]
            peak = int(np.argmax(col))
            found = {"k2": last_k(k, col >= 0.5 * (a_ + b_)),
                     "k_learn": last_k(k[:peak], col[:peak] <= 0.5 * (b_ + c_)),
                     "k1": last_k(k, col >= 0.5 * (a_ + c_))}[name]
            offs.append(float(np.log10(found / b[j])))
        out[name] = np.asarray(offs)
    near = int(np.argmin(np.abs(np.log(t / ts))))
    star = []
    if lo <= np.log10(k1) <= hi and abs(np.log10(t[near] / ts)) <= 0.5 * BOUNDARY_MARGIN:
        star.append(float(np.log10(last_k(k, aeff[:, near] >= 0.5 * (a_ + c_)) / k1)))
    out["k_star"] = np.asarray(star)
    return out


def rise_share(k: np.ndarray, aeff: np.ndarray, labels: np.ndarray, region: str,
               level: float) -> float:
    """Widest run along ``k`` of ``region`` cells above ``level``, over the region's widest
    run along ``k`` (both at any time); NaN where the region has no cell."""
    extent = longest_span(labels == region, np.log10(k))
    if extent <= 0:
        return float("nan")
    return longest_span((labels == region) & (aeff > level), np.log10(k)) / extent
