"""A linearly implicit integrator for mildly stiff flows: the Rosenbrock-W method ROS34PW2.

The exact reference on data (:mod:`specdyn.theory.reference`) integrates the
infinite-width Gram flow from ``t = 0`` to thousands of learning times of the top
mode. Late in the run the top modes sit at their fixed point and relax at the rate
``b_1`` (:func:`specdyn.theory.mode_rate`) while the slow modes still learn, so an
explicit Runge-Kutta pair is held to ``h b_1 < 2.5`` by stability, not by accuracy:
on 16 x 16 patches (``D = 255``) ``RK23`` took 1900 right-hand sides whatever its
tolerance (1e-4 or 1e-5), ROS34PW2 771 at 1e-5.

A Rosenbrock-W method solves one linear system ``(I - gamma h J~) k = r`` per stage
with an *approximate* Jacobian ``J~``; its order does not depend on ``J~`` (Rang and
Angermann 2005, "New Rosenbrock W-methods of order 3 for partial differential
algebraic equations of index 1", BIT 45). Here ``J~`` is diagonal, so a stage costs one
right-hand side and an elementwise division. The flow's stiff part is the relaxation
of the input-output Gram ``G^wa`` (``dG^wa/dt = -(G^w Sigma G^wa + Sigma G^wa G^a) /
gamma0^2 + ...``), whose diagonal in the data's own bases is exact for an aligned
teacher and close for a misaligned one. ROS34PW2 is order 3 with an embedded order-2
estimate, L-stable and stiffly accurate; the coefficients are those of the paper (its
Table 5). Between steps the solution is the cubic Hermite interpolant of the step's ends
and slopes (the slope at the end is the next step's first stage: free).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["WSolution", "ros34pw2"]

#: ROS34PW2 (Rang and Angermann 2005): gamma, the stage weights alpha_ij and gamma_ij,
#: the solution weights b and the embedded order-2 weights b_hat.
GAMMA = 4.3586652150845900e-01
ALPHA = ((), (8.7173304301691801e-01,), (8.4457060015369423e-01, -1.1299064236484185e-01),
         (0.0, 0.0, 1.0))
GAMMAS = ((), (-8.7173304301691801e-01,), (-9.0338057013044082e-01, 5.4180672388095326e-02),
          (2.4212380706095346e-01, -1.2232505839045147e+00, 5.4526025533510214e-01))
B = (2.4212380706095346e-01, -1.2232505839045147e+00, 1.5452602553351020e+00,
     4.3586652150845900e-01)
B_HAT = (3.7810903145819369e-01, -9.6042292212423178e-02, 5.0000000000000000e-01,
         2.1793326075422950e-01)


@dataclass(frozen=True)
class WSolution:
    """States at the requested times, and the work done.

    Attributes
    ----------
    y
        ``(n_t, n)``: the state at each requested time, in the order given.
    nfev
        Right-hand-side evaluations.
    steps, rejected
        Accepted and rejected steps.
    """

    y: np.ndarray
    nfev: int
    steps: int
    rejected: int


def ros34pw2(f: Callable[[np.ndarray], np.ndarray], y0: np.ndarray, t_eval: np.ndarray,
             jac_diag: Callable[[np.ndarray], np.ndarray], *, rtol: float,
             atol: float | np.ndarray,
             stiff: slice | None = None, max_steps: int = 100_000,
             focus: np.ndarray | None = None,
             passed: Callable[[int], None] | None = None) -> WSolution:
    """Integrate the autonomous flow ``y' = f(y)`` from ``t = 0`` with ROS34PW2.

    Parameters
    ----------
    f
        The right-hand side (autonomous, float64 vectors).
    y0
        The state at ``t = 0``.
    t_eval
        Times ``>= 0`` at which the state is returned, any order.
    jac_diag
        ``y -> d``: the diagonal approximate Jacobian at ``y`` on the components
        ``stiff`` (``d <= 0``; zero elsewhere); taken once a step.
    rtol, atol
        Tolerances of the embedded error estimate (root mean square over components of
        ``err / (atol + rtol max(|y_n|, |y_n+1|))`` at most 1 per step); ``atol`` a number
        or one per component.
    stiff
        The components where ``J~`` is not zero (default all).
    max_steps
        Give up (``RuntimeError``) after this many steps.
    focus
        Indices of the components the results are read from: their own root mean square
        error is held to the tolerance too (in the mean over all components, an error in
        one of a few read components is diluted by the many others).
    passed
        Called with the number of requested times each accepted step passed (progress).

    Returns
    -------
    WSolution
    """
    t_eval = np.asarray(t_eval, dtype=np.float64)
    order = np.argsort(t_eval, kind="stable")
    ts = t_eval[order]
    out = np.empty((ts.size, y0.size))
    y = np.array(y0, dtype=np.float64)
    sl = slice(None) if stiff is None else stiff
    idx = 0
    while idx < ts.size and ts[idx] <= 0.0:
        out[idx] = y
        idx += 1
    t, t_end = 0.0, float(ts[-1]) if ts.size else 0.0
    fy = f(y)
    nfev, steps, rejected = 1, 0, 0
    scale = atol + rtol * np.abs(y)
    d0 = math.sqrt(float(np.mean((y / scale) ** 2)))
    d1 = math.sqrt(float(np.mean((fy / scale) ** 2)))
    h = 0.01 * d0 / d1 if d0 > 1e-5 and d1 > 1e-5 else 1e-6 * max(t_end, 1.0)
    # the stages as rows, so that every combination of them is one product of numpy's BLAS
    # (scipy's daxpy ran its own thread pool, whose spinning threads halved the speed of
    # the right-hand side's products at 2 threads: 784 inputs, 94 ms against 47 a call)
    ks = np.empty((4, y.size))
    alphas, gammas = [np.array(a) for a in ALPHA], [np.array(g) for g in GAMMAS]
    weights = np.array([B, np.subtract(B, B_HAT)])
    y_err = np.empty((2, y.size))  # y_new and the error estimate
    ys, sc = np.empty_like(y), np.empty_like(y)
    stiff_n = y[sl].size
    gk = np.empty(stiff_n)
    while idx < ts.size:
        if steps + rejected >= max_steps:
            raise RuntimeError(f"ros34pw2: no convergence in {max_steps} steps (t = {t:.4g})")
        h = min(h, t_end - t)
        hd = h * jac_diag(y)  # h J~ on the stiff block
        inv = 1.0 / (1.0 - GAMMA * hd)
        for i in range(4):
            k = ks[i]
            if i == 0:
                np.multiply(fy, h, out=k)
            else:
                np.dot(alphas[i], ks[:i], out=ys)
                ys += y  # y + sum_j alpha_ij k_j
                np.multiply(f(ys), h, out=k)
                nfev += 1
                np.dot(gammas[i], ks[:i, sl], out=gk)
                gk *= hd
                k[sl] += gk  # h J~ sum_j gamma_ij k_j
            k[sl] *= inv
        np.dot(weights, ks, out=y_err)
        y_new, err_vec = y_err
        y_new += y
        np.abs(y, out=sc)
        np.maximum(sc, np.abs(y_new, out=ys), out=sc)  # ys is free until the next step
        sc *= rtol
        sc += atol
        np.divide(err_vec, sc, out=sc)
        err = math.sqrt(float(np.dot(sc, sc)) / sc.size)
        if focus is not None:
            sf = sc[focus]
            err = max(err, math.sqrt(float(np.dot(sf, sf)) / sf.size))
        if not math.isfinite(err) or err > 1.0:
            rejected += 1
            h *= 0.2 if not math.isfinite(err) else max(0.2, 0.9 * err ** (-1.0 / 3.0))
            continue
        steps += 1
        f_new = f(y_new)
        nfev += 1
        t_new = t + h
        before = idx
        while idx < ts.size and ts[idx] <= t_new * (1.0 + 1e-12):
            # cubic Hermite on [t, t_new]: third order, as the method
            s = (ts[idx] - t) / h
            out[idx] = ((2 * s**3 - 3 * s**2 + 1) * y + (s**3 - 2 * s**2 + s) * h * fy
                        + (-2 * s**3 + 3 * s**2) * y_new + (s**3 - s**2) * h * f_new)
            idx += 1
        if passed is not None and idx > before:
            passed(idx - before)
        t, fy = t_new, f_new
        np.copyto(y, y_new)  # y_err is overwritten next step
        h *= min(5.0, max(0.2, 0.9 * max(err, 1e-12) ** (-1.0 / 3.0)))
    back = np.empty_like(order)
    back[order] = np.arange(order.size)
    return WSolution(y=out[back], nfev=nfev, steps=steps, rejected=rejected)
