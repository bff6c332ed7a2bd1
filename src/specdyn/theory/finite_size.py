"""Leading-order finite-width and finite-sample corrections to ``log rho_k(t)``.

The paper's theory is exact at ``N = M = inf``. At finite width ``N`` the
initial Grams ``Gw = W^T W/N``, ``Ga = A^T A/N``, ``Gwa = W^T A/N`` are Wishart
(fluctuations ``O(N^-1/2)``); at finite ``M`` the sample covariance
``Sigma_hat = X^T X/M`` and ``C_hat = X^T Y/M = Sigma_hat Theta`` (no label
noise) fluctuate likewise. The exact Gram flow (``docs/theory.md``)

    G = C - Sigma Gwa/gamma0 = Sigma (Theta - Gwa/gamma0)
    Gw' = (G Gwa^T + Gwa G^T)/gamma0,  Ga' = (G^T Gwa + Gwa^T G)/gamma0,
    Gwa' = (Gw G + G Ga)/gamma0

stays diagonal at ``N = M = inf`` (the per-mode flow of ``xi, eta, zeta``,
Eqs. 144-145). Expanding it around that solution:

- **First order** decouples into single modes: ``(xi_k, eta_k, zeta_k)`` respond
  (3 x 3 tangent-linear flow) only to the diagonal entries ``Gw_kk, Ga_kk,
  Gwa_kk`` at ``t = 0`` and ``Sigma_kk``; each off-diagonal pair ``(k, j)``
  (``Gw_kj, Ga_kj, Gwa_kj, Gwa_jk``, driven by ``Sigma_kj``) is a closed 4 x 4
  tangent-linear system.
- **Variance** of ``log rho_k``: the first-order response of ``rho_k =
  Sigma_kk Gw_kk`` to the diagonal fluctuations.
- **Mean shift**: the second-order response. Its expectation solves the same
  3 x 3 tangent-linear flow driven by the expected quadratic terms of the Gram
  flow, from the mode itself and from every pair ``(k, j)``; plus the second
  order of the measured eigenvalue of ``Gw Sigma`` (similar to
  ``Sigma^(1/2) Gw Sigma^(1/2)``): ``sum_j K_kj K_jk / (d_k - d_j)`` (level
  repulsion) and ``sum_j Gw_kj Sigma_jk``; minus ``Var(rho_k)/(2 rho_k^2)``
  from the logarithm.

Only second moments of the fluctuations enter at this order (Wishart:
``Var Gw_kk = 2 sigma_w^4/N``, ``Var Gw_kj = sigma_w^4/N``, ``Var Gwa_kj =
sigma_w^2 sigma_a^2/N``, ``Var Sigma_kk = 2 lambda_k^2/M``, ``Var Sigma_kj =
lambda_k lambda_j/M``, all others uncorrelated), so both moments are
``a_k(t)/N + b_k(t)/M``. The coefficient functions come from one explicit
(DOP853) integration of the background, the tangent-linear flows and the
expected second-order state, vectorised over modes and the ``D(D-1)/2``
pairs (``O(D^2)`` a right-hand side).

Validity (level spacing against fluctuation size): the expansion treats the
coupling ``K_kj`` of two levels as small against their gap; the second-order
eigenvalue shift ``K_kj K_jk / (d_k - d_j)`` is the first term of a series in
that ratio. ``ratio_k(t) = max_j sqrt(Var rho_k + Var rho_j + |E K_kj K_jk|) /
|d_k - d_j|`` (``d_k = lambda_k eta_k``) measures it; ``ratio <= VALID_RATIO``
is the first condition of ``valid``. At finite ``M`` the sample covariance
moves every level by the same relative amount (``Var rho_k / rho_k^2 = 2/M``,
``E K_kj K_jk = d_k d_j / M``) at every time, while the relative gap of
neighbours is ``alpha / k``: at ``t = 0`` and ``alpha = 1``, ``ratio_k =
sqrt((2 (k+1)^2 + 2 k^2 + k (k+1)) / M) ~ sqrt(5/M) (k + 0.6)``, so ``valid``
ends near ``k = VALID_RATIO sqrt(M/5) - 0.6``: 1.9 / 4.4 / 9.4 at ``M = 256 /
1024 / 4096`` (the flag's largest valid k, D = 32: 1-3 / 4-8 / 9-15 over ``t =
0..200``). At finite ``N`` the same holds at ``t = 0``, but once a mode is
learned its level grows while the Gram fluctuations do not, so the range widens
with time (all 32 modes at ``N = 1024``, ``t = 200``). The second condition:
near a node of the first-order response (a mode in mid-transition, where
``d log rho_k`` barely depends on the initial fluctuations) the ``O(1/N^2)``
variance this expansion omits dominates the ``O(1/N)`` one; the mean shift,
also second order, measures that size, so ``valid`` also asks ``|mean_shift| <=
NODE_RATIO * std`` (it is a condition on the std: the mean shift itself is
accurate there, e.g. ``k = 8``, ``t = 50`` at ``D = 64``, BENCHMARKS.md).

Thresholds, measured (``benchmarks/finite_size_theory.py``, D = 32, 256 seeds
per size, N and M in 256..4096, BENCHMARKS.md): ``NODE_RATIO`` was set on the
``N = 256, 1024`` runs. ``VALID_RATIO`` was 0.2 (set on the same runs); cells
beyond it were then measured: up to a ratio of 0.35 the std stays within 15 %
in all 253 cells (max 0.140, finite ``M`` included), the mean shift within
3 SE of the measured bias wherever that exceeds 5 SE (82 cells), and the
corrected residual within 3 SE elsewhere; from 0.35 to 0.6 the std misses
15 % in 14 of 103 cells (up to 0.22), beyond 0.6 in 335 of 352 (up to 1.5).
Hence ``VALID_RATIO = 0.35``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike
from scipy.integrate import solve_ivp

from specdyn import _validate as v
from specdyn.settings import Setting, as_modes

#: Largest fluctuation-to-gap ratio at which a mode is flagged valid.
VALID_RATIO = 0.35
#: Largest |mean shift| / std at which the first-order std is trusted (see above).
NODE_RATIO = 2.0

_RTOL = 1e-8


@dataclass(frozen=True)
class FiniteSizeMoments:
    """Predicted moments of ``log rho_k(t)`` at finite ``N`` and ``M``, each of the
    broadcast shape of ``(k, t)``.

    Attributes
    ----------
    mean_shift
        ``E[log rho_k(t)] - log rho_k^inf(t)`` to first order in ``1/N`` and ``1/M``.
    std
        Seed-to-seed standard deviation of ``log rho_k(t)`` (leading order).
    valid
        Whether the expansion holds at that ``(k, t)``: ``ratio <= VALID_RATIO``
        and ``node_ratio <= NODE_RATIO``.
    ratio
        Largest fluctuation-to-level-gap ratio (see the module docstring); finite.
    node_ratio
        ``|mean_shift| / std`` (0 where both vanish); finite.
    rho
        ``rho_k(t)`` at ``N = M = inf`` (from the same integration).
    """

    mean_shift: np.ndarray
    std: np.ndarray
    valid: np.ndarray
    ratio: np.ndarray
    node_ratio: np.ndarray
    rho: np.ndarray


@dataclass(frozen=True)
class _Coefficients:
    """Per-(t, k) coefficients of ``1/N`` and ``1/M`` (arrays ``(T, D)``), and the
    per-(t, pair) pieces of the validity ratio."""

    rho: np.ndarray
    mean_n: np.ndarray
    mean_m: np.ndarray
    var_n: np.ndarray
    var_m: np.ndarray
    rep_n: np.ndarray  # |E K_kj K_jk| coefficient per pair, (T, pairs)
    rep_m: np.ndarray
    pairs: tuple[np.ndarray, np.ndarray]


def finite_size_moments(s: Setting, k: ArrayLike, t: ArrayLike, N: int | None = None,
                        M: int | None = None) -> FiniteSizeMoments:
    """Mean shift and standard deviation of ``log rho_k(t)`` at width ``N``, ``M`` samples.

    Gradient flow, population teacher aligned with the input covariance, no
    label noise, mean-field scaling (the Gram engine's model, ``train_linear``
    with ``method="flow"``). Both moments are first order in ``1/N`` and ``1/M``
    (the std is ``sqrt`` of the first-order variance). ``N = None`` or
    ``M = None`` mean infinite.

    Parameters
    ----------
    s
        The setting; a ``PowerLawSetting`` needs ``D`` set (the pair sums run
        over the ``D`` modes of the simulated system).
    k
        Integer modes in ``1..D``.
    t
        Finite times ``>= 0``; broadcast against ``k``.
    N, M
        Width and number of samples (``>= 2``), or ``None``.

    Returns
    -------
    FiniteSizeMoments
        Arrays of the broadcast shape of ``(k, t)``; ``valid`` flags where the
        expansion holds (fluctuation small against the level spacing). Outside
        it the numbers are still finite but not a prediction.
    """
    D = getattr(s, "D", None)
    if D is None:
        raise ValueError("s.D must be set (e.g. s.with_D(64)): the pair sums run over the "
                         "D modes of the simulated system")
    kk = as_modes(s, k)
    if not np.all(kk == np.round(kk)):
        raise ValueError("k must be integer mode indices in [1, D]")
    tt = v.real_array("t", t, lo=0.0)
    if not np.all(np.isfinite(tt)):
        raise ValueError("t must be finite (allowed range [0, inf))")
    inv_n = 0.0 if N is None else 1.0 / v.positive_int("N", N, minimum=2)
    inv_m = 0.0 if M is None else 1.0 / v.positive_int("M", M, minimum=2)
    kk, tt = np.broadcast_arrays(kk, tt)
    times, t_idx = np.unique(tt, return_inverse=True)
    co = _cached_coefficients(s, tuple(times.tolist()))
    mean = co.mean_n * inv_n + co.mean_m * inv_m
    var = co.var_n * inv_n + co.var_m * inv_m
    ratio = _gap_ratio(co, var, inv_n, inv_m)
    std = np.sqrt(var)
    node = np.where(std > 0, np.abs(mean) / np.maximum(std, np.finfo(np.float64).tiny),
                    np.where(mean == 0, 0.0, 1e300))
    node = np.minimum(node, 1e300)
    valid = (ratio <= VALID_RATIO) & (node <= NODE_RATIO)
    ki = kk.astype(np.int64) - 1
    ti = t_idx.reshape(kk.shape)
    return FiniteSizeMoments(mean_shift=mean[ti, ki], std=std[ti, ki], valid=valid[ti, ki],
                             ratio=ratio[ti, ki], node_ratio=node[ti, ki],
                             rho=co.rho[ti, ki])


def _gap_ratio(co: _Coefficients, var: np.ndarray, inv_n: float, inv_m: float) -> np.ndarray:
    """``max_j sqrt(Var rho_k + Var rho_j + |E K_kj K_jk|) / |d_k - d_j|`` per ``(t, k)``."""
    ka, ja = co.pairs
    d = co.rho
    var_rho = var * d * d
    rep = np.abs(co.rep_n * inv_n + co.rep_m * inv_m)
    num = np.sqrt(var_rho[:, ka] + var_rho[:, ja] + rep)
    gap = np.abs(d[:, ka] - d[:, ja])
    tiny = np.finfo(np.float64).tiny
    r = np.where(num > 0, num / np.maximum(gap, tiny), 0.0)
    r = np.minimum(r, 1e300)  # a degenerate pair: flagged, never inf
    out = np.zeros((d.shape[1], d.shape[0]))  # (D, T): index modes on the first axis
    for idx in (ka, ja):
        np.maximum.at(out, idx, r.T)
    return out.T


@lru_cache(maxsize=8)
def _cached_coefficients(s: Setting, times: tuple[float, ...]) -> _Coefficients:
    """The coefficients do not depend on ``N`` and ``M``: one integration serves every size."""
    return _coefficients(s, np.array(times, dtype=np.float64))


def _coefficients(s: Setting, times: np.ndarray) -> _Coefficients:
    lam, mu = s.spectra()
    D = lam.size
    theta = np.sqrt(mu)
    g = float(s.gamma0)
    sw2, sa2 = s.sigma_w**2, s.sigma_a**2
    ka, ja = np.triu_indices(D, 1)
    n_p = ka.size
    # Per-unit (N = 1, M = 1) second moments of the fluctuations.
    v0d = np.array([sw2 * sa2, 2 * sw2 * sw2, 2 * sa2 * sa2])  # (xi, eta, zeta) at t = 0
    v0p = np.array([sw2 * sw2, sa2 * sa2, sw2 * sa2, sw2 * sa2])  # (w, a, p, q) at t = 0
    var_s = 2.0 * lam * lam  # Var Sigma_kk
    var_sp = lam[ka] * lam[ja]  # Var Sigma_kj

    sizes = [3 * D, 9 * D, 3 * D, 16 * n_p, 4 * n_p, 3 * D, 3 * D]
    offs = np.concatenate([[0], np.cumsum(sizes)])

    def unpack(y: np.ndarray) -> list[np.ndarray]:
        parts = [y[offs[i]:offs[i + 1]] for i in range(len(sizes))]
        return [parts[0].reshape(3, D), parts[1].reshape(D, 3, 3), parts[2].reshape(D, 3),
                parts[3].reshape(n_p, 4, 4), parts[4].reshape(n_p, 4),
                parts[5].reshape(D, 3), parts[6].reshape(D, 3)]

    def operators(bg: np.ndarray) -> tuple[np.ndarray, ...]:
        xi, eta, zeta = bg
        r = theta - xi / g
        g0 = lam * r
        # mode operator A (D, 3, 3) on (xi, eta, zeta) and its Sigma_kk forcing b (D, 3)
        a = np.zeros((D, 3, 3))
        a[:, 0, 0] = -lam * (eta + zeta) / g**2
        a[:, 0, 1] = a[:, 0, 2] = g0 / g
        a[:, 1, 0] = a[:, 2, 0] = 2.0 * (g0 - lam * xi / g) / g
        b = np.stack([r * (eta + zeta) / g, 2 * r * xi / g, 2 * r * xi / g], axis=1)
        # pair operator (pairs, 4, 4) on (w, a, p, q) = (Gw_kj, Ga_kj, Gwa_kj, Gwa_jk)
        lk, lj, xk, xj = lam[ka], lam[ja], xi[ka], xi[ja]
        gk, gj, rk, rj = g0[ka], g0[ja], r[ka], r[ja]
        ekzj, ejzk = eta[ka] + zeta[ja], eta[ja] + zeta[ka]
        ap = np.zeros((n_p, 4, 4))
        ap[:, 0, 2] = (gj - lk * xj / g) / g
        ap[:, 0, 3] = (gk - lj * xk / g) / g
        ap[:, 1, 2] = (gk - lk * xk / g) / g
        ap[:, 1, 3] = (gj - lj * xj / g) / g
        ap[:, 2, 0] = ap[:, 3, 1] = gj / g
        ap[:, 2, 1] = ap[:, 3, 0] = gk / g
        ap[:, 2, 2] = -lk * ekzj / g**2
        ap[:, 3, 3] = -lj * ejzk / g**2
        bp = np.stack([(rj * xj + rk * xk) / g, (rk * xj + rj * xk) / g, rj * ekzj / g,
                       rk * ejzk / g], axis=1)
        return r, a, b, ap, bp

    def moments(phid: np.ndarray, md: np.ndarray, phip: np.ndarray, mp: np.ndarray
                ) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
        """(N part, M part) of (Cov y1 (D,3,3), E[y1 s] (D,3), E s^2 (D,),
        Cov u (P,4,4), E[u S] (P,4), E S^2 (P,))."""
        cd_n = np.einsum("kab,b,kcb->kac", phid, v0d, phid)
        cp_n = np.einsum("pab,b,pcb->pac", phip, v0p, phip)
        zd, zp = np.zeros((D, 3)), np.zeros((n_p, 4))
        cd_m = var_s[:, None, None] * md[:, :, None] * md[:, None, :]
        cp_m = var_sp[:, None, None] * mp[:, :, None] * mp[:, None, :]
        n_part = (cd_n, zd, np.zeros(D), cp_n, zp, np.zeros(n_p))
        m_part = (cd_m, var_s[:, None] * md, var_s, cp_m, var_sp[:, None] * mp, var_sp)
        return n_part, m_part

    def source(bg: np.ndarray, r: np.ndarray, mom: tuple[np.ndarray, ...]) -> np.ndarray:
        """Expected quadratic terms of the flow of (xi_k, eta_k, zeta_k), (D, 3)."""
        xi, eta, zeta = bg
        cd, cs, _, cp, cps, _ = mom
        # the mode itself: G1 = -lam xi1/g + s r, G2 = s r1 = -s xi1/g
        eg2 = -cs[:, 0] / g
        eg1x = -lam * cd[:, 0, 0] / g + r * cs[:, 0]
        eg1ez = -lam * (cd[:, 0, 1] + cd[:, 0, 2]) / g + r * (cs[:, 1] + cs[:, 2])
        src = np.stack([((eta + zeta) * eg2 + eg1ez) / g,
                        2 * (xi * eg2 + eg1x) / g,
                        2 * (xi * eg2 + eg1x) / g], axis=1)
        # every pair (k, j), seen from k (p = Gwa_kj) and from j (roles of p, q swapped)
        for me, other, ip, iq in ((ka, ja, 2, 3), (ja, ka, 3, 2)):
            lm, lo, rm, ro = lam[me], lam[other], r[me], r[other]
            eg2p = -cps[:, iq] / g  # Sigma_kj R_jk
            e_eta = -lm * cp[:, ip, ip] / g + ro * cps[:, ip]  # E[G_kj Gwa_kj]
            e_zeta = -lo * cp[:, iq, iq] / g + rm * cps[:, iq]  # E[G_jk Gwa_jk]
            e_xi = (-lo * cp[:, 0, iq] / g + rm * cps[:, 0]  # E[Gw_kj G_jk]
                    - lm * cp[:, ip, 1] / g + ro * cps[:, 1])  # E[G_kj Ga_kj]
            contrib = np.stack([((eta[me] + zeta[me]) * eg2p + e_xi) / g,
                                2 * (xi[me] * eg2p + e_eta) / g,
                                2 * (xi[me] * eg2p + e_zeta) / g], axis=1)
            for c in range(3):
                src[:, c] += np.bincount(me, weights=contrib[:, c], minlength=D)
        return src

    def rhs(_t: float, y: np.ndarray) -> np.ndarray:
        bg, phid, md, phip, mp, y2n, y2m = unpack(y)
        xi, eta, zeta = bg
        r, a, b, ap, bp = operators(bg)
        gk = lam * r
        dxi = gk * (eta + zeta) / g
        deta = 2.0 * gk * xi / g
        n_part, m_part = moments(phid, md, phip, mp)
        out = [np.stack([dxi, deta, deta]).ravel(),
               np.einsum("kab,kbc->kac", a, phid).ravel(),
               (np.einsum("kab,kb->ka", a, md) + b).ravel(),
               np.einsum("pab,pbc->pac", ap, phip).ravel(),
               (np.einsum("pab,pb->pa", ap, mp) + bp).ravel(),
               (np.einsum("kab,kb->ka", a, y2n) + source(bg, r, n_part)).ravel(),
               (np.einsum("kab,kb->ka", a, y2m) + source(bg, r, m_part)).ravel()]
        return np.concatenate(out)

    y0 = np.concatenate([np.stack([np.zeros(D), np.full(D, sw2), np.full(D, sa2)]).ravel(),
                         np.tile(np.eye(3), (D, 1, 1)).ravel(), np.zeros(3 * D),
                         np.tile(np.eye(4), (n_p, 1, 1)).ravel(), np.zeros(4 * n_p),
                         np.zeros(6 * D)])
    t_end = float(times.max())
    if t_end > 0:
        sol = solve_ivp(rhs, (0.0, t_end), y0, method="DOP853", t_eval=times, rtol=_RTOL,
                        atol=1e-12 * max(s.S, 1.0))
        if not sol.success:
            raise RuntimeError(f"finite-size expansion failed to integrate: {sol.message}")
        ys = sol.y.T
    else:
        ys = y0[None, :]

    nt = times.size
    out = {name: np.zeros((nt, D)) for name in ("rho", "mean_n", "mean_m", "var_n", "var_m")}
    rep = {"n": np.zeros((nt, n_p)), "m": np.zeros((nt, n_p))}
    for i, y in enumerate(ys):
        bg, phid, md, phip, mp, y2n, y2m = unpack(y)
        eta = bg[1]
        d = lam * eta
        out["rho"][i] = d
        dk, dj = d[ka], d[ja]
        n_part, m_part = moments(phid, md, phip, mp)
        for tag, mom, y2 in (("n", n_part, y2n), ("m", m_part, y2m)):
            cd, cs, vs, cp, cps, vsp = mom
            var_rho = lam**2 * cd[:, 1, 1] + 2 * lam * eta * cs[:, 1] + eta**2 * vs
            # E[K_kj K_jk], K = Gw Sigma: K_kj = eta_k S + w lam_j, K_jk = eta_j S + w lam_k
            kk = (eta[ka] * eta[ja] * vsp + (dk + dj) * cps[:, 0]
                  + lam[ka] * lam[ja] * cp[:, 0, 0])
            gap = dk - dj
            safe = np.where(gap != 0, gap, np.inf)
            shift = lam * y2[:, 1] + cs[:, 1]  # lam E[eta2] + E[eta1 s]
            shift = shift + np.bincount(ka, weights=cps[:, 0] + kk / safe, minlength=D)
            shift = shift + np.bincount(ja, weights=cps[:, 0] - kk / safe, minlength=D)
            out["mean_" + tag][i] = shift / d - 0.5 * var_rho / d**2
            out["var_" + tag][i] = var_rho / d**2
            rep[tag][i] = kk
    return _Coefficients(out["rho"], out["mean_n"], out["mean_m"], out["var_n"], out["var_m"],
                         rep["n"], rep["m"], (ka, ja))
