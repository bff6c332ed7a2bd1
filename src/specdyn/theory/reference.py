"""The exact reference on data: the infinite-width gradient flow on a data set's own statistics.

The aligned theory (:mod:`specdyn.theory.linear`) solves the two-layer linear network
mode by mode when the teacher's rows are mutually orthogonal in the eigenbasis of the
input covariance (core Eqs. 4-8). Real data are not aligned. At infinite width the
network still depends on the data only through ``Sigma = X^T X / M`` and
``C = X^T Y / M``, and its Gram matrices obey the gradient flow of the exact Gram
engine (:mod:`specdyn.sim.gram`: its equations without the ``dt^2`` terms):

    G    = C - Sigma Gwa / gamma0
    Gw'  = (G Gwa^T + Gwa G^T) / gamma0
    Ga'  = (G^T Gwa + Gwa^T G) / gamma0
    Gwa' = (Gw G + G Ga) / gamma0

from ``Gw = sigma_w^2 I``, ``Ga = sigma_a^2 I``, ``Gwa = 0``. This is exact for any
``C`` (misaligned included); for an aligned ``C`` it is the per-mode solution of
:func:`specdyn.theory.rho`, so the gap between the two *is* the misalignment effect.

Here it is integrated in float64 numpy in the eigenbasis of ``Sigma``
(``Sigma = diag(lambda)``, ``C`` given by its rows ``c_k``, the ``coeffs`` of
:func:`specdyn.data.decompose_data`). Output directions outside the row space of ``C``
never move (``G`` has no component there and ``Ga`` stays ``sigma_a^2`` on them), so
the outputs are first reduced to that space (rank ``r <= min(D, P)``) by the SVD of
``C``: exact, and ``P`` no longer enters the cost, ``O(D^2 r)`` a right-hand side.

The flow is mildly stiff at late times: the top modes sit at their fixed point and
relax at ``b_1`` (:func:`specdyn.theory.mode_rate`) while the slow modes still learn,
so an explicit pair needs about ``b_1 t_end`` evaluations whatever its tolerance. Where
``b t_end >`` :data:`STIFF` (``method="auto"``, the default) the flow is integrated by the
Rosenbrock-W method ROS34PW2 (:mod:`specdyn.theory.rosenbrock`) with the diagonal of the
stiff relaxation of ``G^wa`` as its approximate Jacobian, ``-lambda_k ((G^w)_kk +
(G^a)_jj) / gamma0^2`` (exact for an aligned teacher at its fixed point; the method's
order does not depend on it), at ``rtol = 1e-5`` with the error also held on the
diagonal of ``G^w`` and ``atol`` per block; elsewhere by ``RK23`` at ``rtol = 1e-7``.
Measured against ``RK45`` at ``rtol = 1e-9`` (one thread): on 16 x 16 patches with the
blurred target (``D = 255``, ``b t_end = 1560``) ROS34PW2 took 771 evaluations and was
within 3.3e-4 in ``log rho`` and in the spectrum, where ``RK23`` took 1900 at ``rtol``
1e-4 and 1e-5 alike (2.2e-3 at 1e-5); on an aligned 24-mode teacher to ``t = 3e4``, 617
against ``RK23``'s 18731 (at 1e-7), within 1.5e-4 of the closed form. On a flow that is
not stiff ``RK23`` is the cheaper (digits with one-hot labels: 1022 evaluations and
1e-6 in the exponent, ROS34PW2 1563). The explicit pairs stay as options: ``RK45`` at
``rtol = 1e-9`` is the tests' oracle (on an aligned 30-mode teacher within 1.2e-8 of the
closed form); ``DOP853`` at ``1e-9`` (stiffness-limited, 14534 evaluations) was off by
1e-4, so it is not offered.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.integrate import solve_ivp

from specdyn import _validate as v
from specdyn._progress import Counter
from specdyn._repr import array_result
from specdyn.settings import AlignedSetting
from specdyn.theory.rosenbrock import ros34pw2

__all__ = ["ReferenceFlow", "exact_reference"]

#: Integrators accepted: ``"auto"`` (by the flow's stiffness), the Rosenbrock-W method and
#: two explicit pairs of :func:`scipy.integrate.solve_ivp` (see the module docstring).
METHODS = ("auto", "ROS34PW2", "RK23", "RK45")
#: ``"auto"`` takes ROS34PW2 when ``b t_end`` exceeds this (``b``: the flow's fastest rate
#: at the start or at the aligned fixed point); below it ``RK23``'s stability limit costs
#: less than ROS34PW2's four stages a step.
STIFF = 1000.0
#: The default ``rtol`` of each method: held to 5e-4 (ROS34PW2) and 1e-4 (RK23) in log rho.
RTOL = {"ROS34PW2": 1e-5, "RK23": 1e-7, "RK45": 1e-9}


@array_result
class ReferenceFlow:
    """The infinite-width flow on data at times ``t`` (see the module docstring).

    Attributes
    ----------
    t
        ``(n_t,)`` times, as given.
    rho
        ``(n_t, D)``: ``lambda_k (G^w)_kk``, the representation's variance along input
        mode ``k`` (mode order); :func:`specdyn.theory.rho` for an aligned teacher.
    spectrum
        ``(n_t, D)``: eigenvalues of ``Sigma^(1/2) G^w Sigma^(1/2)``, decreasing (the
        nonzero eigenvalues of the hidden representation's covariance).
    xi
        ``(n_t, D)``: ``|(G^wa)_k|``, the norm of row ``k`` of ``G^wa`` (the learned
        input-output overlap of mode ``k``; ``xi_k`` of the aligned theory).
    excess_loss
        ``(n_t,)``: ``(1/2) tr((B - Theta)^T Sigma (B - Theta))`` with ``B = G^wa /
        gamma0`` and ``Theta = Sigma^-1 C`` (the training loss above the
        least-squares loss; ``(1/2) sum_k |c_k|^2 / lambda_k`` at ``t = 0``).
    rate
        ``(n_t,)``: ``(rho_max + lambda_1 |G^a|) / gamma0^2`` with ``rho_max`` the
        largest of ``spectrum``: a bound on the fastest relaxation rate of the flow
        there (for an aligned teacher at its fixed point, ``max_k`` of
        :func:`specdyn.theory.mode_rate`). Full-batch GD with step ``dt`` is stable
        while ``dt * rate < 2``.
    rank
        ``r``, the rank of ``C`` the flow was integrated in.
    nfev
        Right-hand-side evaluations of the integrator.
    method, rtol
        The integrator that ran (``"auto"`` resolved) and its relative tolerance.
    """

    t: np.ndarray
    rho: np.ndarray
    spectrum: np.ndarray
    xi: np.ndarray
    excess_loss: np.ndarray
    rate: np.ndarray
    rank: int
    nfev: int
    method: str = ""
    rtol: float = float("nan")


def _coefficients(s: AlignedSetting, coeffs: ArrayLike) -> np.ndarray:
    """``coeffs`` validated against ``s``: ``D x P``, rows ``c_k`` with ``|c_k|^2 =
    lambda_k^2 mu_k`` (the same system as the setting), float64."""
    if not isinstance(s, AlignedSetting):
        raise ValueError(f"s must be an AlignedSetting (the data's lambda_k and mu_k, "
                         f"specdyn.data.aligned_setting), got {type(s).__name__}")
    c = v.real_array("coeffs", coeffs)
    if c.ndim == 1:
        c = c[:, None]
    if c.ndim != 2 or c.shape[0] != s.D:
        raise ValueError(f"coeffs must be D x P with D = {s.D} (the setting's modes), got shape "
                         f"{c.shape}")
    mu = (c * c).sum(axis=1) / s.lam_values**2
    scale = max(float(np.max(s.mu_values * s.lam_values**2)), np.finfo(float).tiny)
    if np.max(np.abs(mu - s.mu_values) * s.lam_values**2) > 1e-8 * scale:
        raise ValueError("coeffs must be the rows c_k of the setting's data: |c_k|^2 / "
                         "lambda_k^2 must equal its mu_k (use dec.coeffs with "
                         "aligned_setting(dec, ...))")
    return c


def _symmetric_eig(m: np.ndarray, vectors: bool = True) -> Any:
    """Eigenvalues (decreasing) and eigenvectors of the symmetric part of ``m``, float64: the
    theory's one decomposition (the theory layer imports nothing from ``measure``); with
    ``vectors=False`` the eigenvalues alone (a fifth of the cost)."""
    sym = 0.5 * (m + m.T)
    if not vectors:
        return np.linalg.eigvalsh(sym)[::-1]
    w, u = np.linalg.eigh(sym)
    return w[::-1], u[:, ::-1]


def _reduced(c: np.ndarray) -> np.ndarray:
    """``c`` in an orthonormal basis of its row space: ``D x r`` (exact, see the module
    docstring; the eigenvectors of ``c^T c`` with eigenvalues above ``1e-24`` of the
    largest, i.e. singular values above ``1e-12``); ``r = 0`` for a zero ``C``."""
    w, u = _symmetric_eig(c.T @ c)
    r = int(np.sum(w > 1e-24 * w[0])) if w.size and w[0] > 0 else 0
    return c @ u[:, :r]


def _fastest_rate(s: AlignedSetting) -> float:
    """The flow's fastest relaxation rate, at the start (``lambda_1 S / gamma0^2``) or at the
    aligned fixed point (:func:`specdyn.theory.mode_rate`), whichever is larger."""
    from specdyn.theory.linear import mode_rate

    k = np.arange(1, s.D + 1)
    return max(float(np.max(mode_rate(s, k))),
               float(np.max(s.lam_values)) * s.S / s.gamma0**2)


def _rosenbrock(rhs: Callable[[float, np.ndarray], np.ndarray], y0: np.ndarray,
                t: np.ndarray, lam: np.ndarray, inv_g: float, D: int, r: int, rtol: float,
                atol: float, sw2: float, sa2: float,
                passed: Callable[[int], None]) -> tuple[np.ndarray, int]:
    """The Gram flow by ROS34PW2 (:mod:`specdyn.theory.rosenbrock`): ``(states, nfev)``.

    ``J~`` is the relaxation of ``G^wa`` alone, ``-lambda_k ((G^w)_kk + (G^a)_jj) /
    gamma0^2``; the error is also held on the diagonal of ``G^w`` (``rho_k``), and
    ``atol`` is per block: an unlearned mode keeps ``G^w_kk = sigma_w^2``, so ``rho_k``
    of the tail is only as good as ``atol`` against ``sigma_w^2`` (with the largest Gram
    scale for every block, the digits' tail eigenvalues were off by 1e-2).
    """
    nw, na = D * D, r * r

    def relax(y: np.ndarray) -> np.ndarray:
        gw, ga = y[:nw].reshape(D, D), y[nw:nw + na].reshape(r, r)
        return (-(inv_g * inv_g) * lam[:, None]
                * (np.diagonal(gw)[:, None] + np.diagonal(ga)[None, :])).ravel()

    tol = np.concatenate([np.full(nw, 1e-3 * rtol * sw2), np.full(na, 1e-3 * rtol * sa2),
                          np.full(D * r, atol)])
    w = ros34pw2(lambda y: rhs(0.0, y), y0, t, relax, rtol=rtol, atol=tol,
                 stiff=slice(nw + na, None), focus=np.arange(D) * (D + 1), passed=passed)
    return w.y, w.nfev


def gram_flow_rhs(sigma: Any, c: np.ndarray,
                  gamma0: float) -> Callable[[float, np.ndarray], np.ndarray]:
    """Right-hand side of the Gram gradient flow on the flattened ``(Gw, Ga, Gwa)``.

    The infinite-width two-layer linear network's flow in Gram space (mean-field
    scaling), for any input covariance and target cross-covariance: with
    ``g = C - Sigma Gwa / gamma0``, ``dGw/dt = (g Gwa^T + Gwa g^T) / gamma0``,
    ``dGa/dt = (g^T Gwa + Gwa^T g) / gamma0``, ``dGwa/dt = (Gw g + g Ga) / gamma0``.
    The one home of these equations: :func:`exact_reference` integrates them in the
    eigenbasis of ``Sigma``, the Gram engine (:mod:`specdyn.sim.gram`) on a sample's
    statistics.

    Parameters
    ----------
    sigma
        ``Sigma``: ``D x D`` (dense or sparse), or its diagonal (1-D) where ``Sigma`` is
        diagonal in the basis of ``c``.
    c
        ``D x P``: the input-target cross-covariance ``C`` in the same basis.
    gamma0
        The feature-learning strength, > 0.

    Returns
    -------
    callable
        ``rhs(t, y)`` for :func:`scipy.integrate.solve_ivp`, ``y`` of size
        ``D^2 + P^2 + D P``.
    """
    D, P = c.shape
    inv_g = 1.0 / gamma0
    nw, na = D * D, P * P
    diagonal = isinstance(sigma, np.ndarray) and sigma.ndim == 1

    def rhs(_t: float, y: np.ndarray) -> np.ndarray:
        gw = y[:nw].reshape(D, D)
        ga = y[nw:nw + na].reshape(P, P)
        gwa = y[nw + na:].reshape(D, P)
        g = sigma[:, None] * gwa if diagonal else np.asarray(sigma @ gwa)
        g *= -inv_g
        g += c
        out = np.empty_like(y)
        o_w, o_a = out[:nw].reshape(D, D), out[nw:nw + na].reshape(P, P)
        o_wa = out[nw + na:].reshape(D, P)
        if 2 * P < D:
            # G Gwa^T + Gwa G^T as one product whose result is symmetric: twice the flops
            # of G Gwa^T, but no pass over the D x D result to add its transpose (at
            # D = 784, P = 10: 1.4 ms against 15)
            np.matmul(np.concatenate([g, gwa], axis=1), np.concatenate([gwa, g], axis=1).T,
                      out=o_w)
        else:
            t1 = g @ gwa.T
            np.add(t1, t1.T, out=o_w)
        o_w *= inv_g
        t4 = g.T @ gwa
        np.add(t4, t4.T, out=o_a)
        o_a *= inv_g
        np.matmul(gw, g, out=o_wa)
        o_wa += g @ ga
        o_wa *= inv_g
        return out

    return rhs


def exact_reference(s: AlignedSetting, coeffs: ArrayLike, t: ArrayLike, *,
                    rtol: float | None = None, method: str = "auto",
                    progress: bool = False) -> ReferenceFlow:
    """The infinite-width two-layer linear network trained by gradient flow on the data.

    Parameters
    ----------
    s
        The data's :class:`~specdyn.settings.AlignedSetting` (``lambda_k``, ``mu_k``,
        ``sigma_w``, ``sigma_a``, ``gamma0``; :func:`specdyn.data.aligned_setting`).
    coeffs
        ``D x P``: the rows ``c_k`` of ``U^T C`` in the eigenbasis of ``Sigma``
        (``DataDecomposition.coeffs``); ``|c_k|^2 / lambda_k^2`` must be ``s``'s
        ``mu_k``. Exact for any ``coeffs``; for mutually orthogonal rows (an aligned
        teacher) ``rho`` equals :func:`specdyn.theory.rho` to the integration tolerance.
    t
        Times, finite and ``>= 0``, any order (1-D).
    rtol
        Relative tolerance of the integrator, in ``(0, 0.01]`` (``atol`` is
        ``1e-3 rtol`` of the Grams' scale); default :data:`RTOL` of the method.
    method
        ``"auto"`` (default: ``"ROS34PW2"`` where the flow is stiff, ``b t_end >``
        :data:`STIFF`, else ``"RK23"``), ``"ROS34PW2"`` (the Rosenbrock-W method), or the
        explicit Runge-Kutta pairs ``"RK23"`` and ``"RK45"`` (``RK45`` at ``rtol = 1e-9``:
        the oracle).
    progress
        A bar over the requested times on a terminal.

    Returns
    -------
    ReferenceFlow
    """
    c_full = _coefficients(s, coeffs)
    tt = v.real_array("t", t, lo=0.0)
    if tt.ndim != 1 or tt.size == 0:
        raise ValueError(f"t must be a non-empty 1-D array of times, got shape {tt.shape}")
    method = v.choice("method", method, METHODS)
    if method == "auto":
        method = "ROS34PW2" if float(tt.max()) * _fastest_rate(s) > STIFF else "RK23"
    rtol = v.in_range("rtol", RTOL[method] if rtol is None else rtol, 0.0, 0.01, lo_open=True)
    lam = s.lam_values
    D = lam.size
    c = _reduced(c_full)
    r = c.shape[1]
    inv_g = 1.0 / s.gamma0
    sw2, sa2 = s.sigma_w**2, s.sigma_a**2
    nw, na = D * D, r * r
    rhs = gram_flow_rhs(lam, c, s.gamma0)  # Sigma is diagonal in this basis

    def unpack(y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return y[:nw].reshape(D, D), y[nw:nw + na].reshape(r, r), y[nw + na:].reshape(D, r)

    y0 = np.concatenate([(sw2 * np.eye(D)).ravel(), (sa2 * np.eye(r)).ravel(), np.zeros(D * r)])
    order = np.argsort(tt, kind="stable")
    ts = tt[order]
    states = np.repeat(y0[None, :], ts.size, axis=0)
    nfev = 0
    later = ts > 0
    if later.any() and r > 0:
        # the Grams' scale: sigma^2 at the start, gamma0 theta at the fixed point
        scale = max(sw2, sa2, s.gamma0 * float(np.sqrt(np.max(s.mu_values))))
        atol = 1e-3 * rtol * scale
        bar = Counter(int(later.sum()), "exact reference", enabled=progress)
        t_later = ts[later]
        passed = [0]

        def flow(t_now: float, y: np.ndarray) -> np.ndarray:  # the rhs, moving the bar
            while passed[0] < t_later.size and t_later[passed[0]] <= t_now:
                passed[0] += 1
                bar.update()
            return rhs(t_now, y)

        try:
            if method == "ROS34PW2":
                states[later], nfev = _rosenbrock(rhs, y0, t_later, lam, inv_g, D, r, rtol,
                                                  atol, sw2, sa2, bar.update)
            else:
                sol = solve_ivp(flow, (0.0, float(ts[-1])), y0, method=method,
                                t_eval=t_later, rtol=rtol, atol=atol)
                if not sol.success:  # pragma: no cover - an explicit method, a smooth flow
                    raise RuntimeError(f"exact_reference: the integration failed: "
                                       f"{sol.message}")
                states[later] = sol.y.T
                nfev = int(sol.nfev)
        finally:
            bar.close()
    theta = c / lam[:, None]  # the least-squares teacher (reduced outputs)
    n = ts.size
    rho = np.empty((n, D))
    spec = np.empty((n, D))
    xi = np.empty((n, D))
    loss = np.empty(n)
    rate = np.empty(n)
    half = np.sqrt(lam)
    for i in range(n):
        gw, ga, gwa = unpack(states[i])
        rho[i] = lam * np.diagonal(gw)
        m_i = half[:, None] * gw * half[None, :]
        spec[i] = np.clip(_symmetric_eig(m_i, vectors=False), 0.0, None)
        xi[i] = np.sqrt((gwa * gwa).sum(axis=1))
        e = gwa * inv_g - theta
        loss[i] = 0.5 * float(np.sum(lam[:, None] * e * e))
        ga_top = float(_symmetric_eig(ga, vectors=False)[0]) if r else sa2
        rate[i] = (spec[i, 0] + float(lam.max()) * max(ga_top, sa2)) * inv_g * inv_g
    back = np.empty_like(order)
    back[order] = np.arange(n)
    return ReferenceFlow(t=tt.copy(), rho=rho[back], spectrum=spec[back], xi=xi[back],
                         excess_loss=loss[back], rate=rate[back], rank=r, nfev=nfev,
                         method=method, rtol=rtol)
