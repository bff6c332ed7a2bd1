"""Full-batch gradient descent at infinite width and in the population limit: the
discrete-time counterpart of Appendix D's gradient flow.

The paper's solution (Eq. 12) is for gradient flow; its Fig. 2 trains by full-batch GD
with learning rate ``nu = N`` and a finite step ``dt``. At ``N = M = inf`` the Gram-space
GD update (``docs/linear-simulation.md``) keeps the Grams diagonal in the teacher basis,
as the flow does (Appendix D), so each mode ``k`` follows its own map of ``(xi_k, eta_k,
zeta_k)``, with ``c = dt / gamma0`` and the residual ``g_k = lambda_k (theta_k -
xi_k / gamma0)``:

    xi'   = xi   + c g (eta + zeta) + c^2 g^2 xi
    eta'  = eta  + 2 c g xi         + c^2 g^2 zeta
    zeta' = zeta + 2 c g xi         + c^2 g^2 eta

from ``xi = 0``, ``eta = sigma_w^2``, ``zeta = sigma_a^2``; ``rho_k = lambda_k eta_k``
after ``n`` steps is the spectrum at ``t = n dt``. Dropping the ``c^2`` terms and letting
``dt -> 0`` gives Eqs. (144)-(145): the map differs from the flow at first order in
``dt``. What separates a GD simulation from Eq. (12) is then this step error plus finite
``N`` and ``M``; the difference of a simulation from this map is finite size alone.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from specdyn import _validate as v
from specdyn.settings import Setting, as_modes


def grams_gd(s: Setting, k: ArrayLike, steps: ArrayLike, dt: float) -> dict[str, np.ndarray]:
    """Gram diagonals ``xi, eta, zeta`` and ``rho = lambda eta`` after ``steps`` full-batch
    GD steps of size ``dt`` at ``N = M = inf`` (the map of the module docstring), each of
    shape ``(len(steps),) + shape(k)``.

    Parameters
    ----------
    s
        The setting.
    k
        Modes (real ``k >= 1`` for a power law), any shape.
    steps
        Non-negative integer step counts, one dimension, any order (``t = steps * dt``).
    dt
        Step size ``> 0``; stable while ``dt mode_rate(s, k) < 2``.

    Returns
    -------
    dict
        ``"xi"``, ``"eta"``, ``"zeta"``, ``"rho"``; at ``steps = 0`` the initial values
        (``rho = sigma_w**2 * lambda_k``); as ``dt -> 0`` at fixed ``t = steps * dt`` they
        tend to :func:`specdyn.theory.xi`, :func:`~specdyn.theory.eta`, ... at first order
        in ``dt``. ``eta - zeta``, conserved by the flow (Eq. 148), shrinks by ``1 - c^2
        g^2`` a step. Non-finite where the map diverges (``dt`` too large for a mode).
    """
    kk = as_modes(s, k)
    n = v.real_array("steps", steps, lo=0.0)
    if n.ndim != 1 or not np.all(n == np.round(n)):
        raise ValueError("steps must be a one-dimensional array of integers >= 0")
    dt = v.positive("dt", dt)
    lam = s.lam(kk)
    theta = np.sqrt(s.mu(kk))
    g0 = float(s.gamma0)
    c = dt / g0
    xi = np.zeros_like(lam)
    eta = np.full_like(lam, s.sigma_w**2)
    zeta = np.full_like(lam, s.sigma_a**2)
    want = n.astype(np.int64)
    out = {q: np.empty((want.size,) + lam.shape) for q in ("xi", "eta", "zeta")}
    done = 0
    with np.errstate(over="ignore", invalid="ignore"):
        for i in np.argsort(want, kind="stable"):
            while done < want[i]:
                cg = c * lam * (theta - xi / g0)
                cg2 = cg * cg
                xi, eta, zeta = (xi + cg * (eta + zeta) + cg2 * xi,
                                 eta + 2.0 * cg * xi + cg2 * zeta,
                                 zeta + 2.0 * cg * xi + cg2 * eta)
                done += 1
            out["xi"][i], out["eta"][i], out["zeta"][i] = xi, eta, zeta
    out["rho"] = lam * out["eta"]
    return out


def rho_gd(s: Setting, k: ArrayLike, steps: ArrayLike, dt: float) -> np.ndarray:
    """Spectrum ``rho_k`` after ``steps`` full-batch GD steps of size ``dt`` at ``N = M =
    inf``, shape ``(len(steps),) + shape(k)``: ``grams_gd(...)["rho"]`` (see there).

    ``rho_gd(s, k, [0], dt) == sigma_w**2 * lambda_k``; as ``dt -> 0`` at fixed ``t =
    steps * dt`` it tends to :func:`specdyn.theory.rho` at first order in ``dt``.
    """
    return grams_gd(s, k, steps, dt)["rho"]
