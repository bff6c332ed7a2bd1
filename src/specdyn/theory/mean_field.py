"""Mean-field ReLU networks with weight decay: where the atoms of a sparse teacher sit.

The third related work (mean-field muP noisy GD; docs/mean-field.md). For
``f(x) = E_mu[a relu(w . x)]`` the realisation symmetry of ReLU is the positive
rescaling ``(a, w) -> (a / c, c w)``: only the *effective coefficient*
``a |w|`` of each direction ``u = w / |w|`` enters the function. Weight decay
``lambda' / 2 E_mu (a^2 + |w|^2)`` is smallest, on a rescaling orbit, at
``|a| = |w|``, where it equals ``lambda' |a| |w|``: on a fixed set of
directions the objective ``1/2 E (f - f*)^2 + lambda'/2 E_mu |theta|^2``
becomes a lasso on the coefficients. For a teacher ``sum_k a_k relu(s u_k . x)``
(coefficients ``c*_k = a_k s``) whose atoms keep their directions and signs,
its zero-temperature minimiser is

    ``c = c* - lambda' G^{-1} sign(c*)``,  ``G_jk = E[relu(u_j . x) relu(u_k . x)]``,

``x ~ N(0, I)``, the arc-cosine kernel ``G_jk = (sin t + (pi - t) cos t) / (2 pi)``
of the angle ``t`` between ``u_j`` and ``u_k`` (Cho & Saul 2009). The project's
own derivation (not in the abstract), valid while every ``|c_k|`` stays positive.

With the directions free as well (:func:`lasso_free_directions`) the objective is the
lasso over signed measures on the sphere, convex in the measure; its optimality
conditions (:func:`lasso_certificate`) certify a candidate globally.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from specdyn import _validate as v

__all__ = ["lasso_atom_coefficients", "lasso_certificate", "lasso_free_directions",
           "lasso_threshold_coefficients", "relu_gram"]


def relu_gram(directions: ArrayLike) -> np.ndarray:
    """``(K, K)`` Gram ``E[relu(u_j . x) relu(u_k . x)]`` of unit directions, ``x ~ N(0, I)``.

    ``directions`` is ``(K, D)``; rows are normalised here (a zero row is a ``ValueError``).
    """
    U = np.atleast_2d(np.asarray(directions, dtype=np.float64))
    norms = np.linalg.norm(U, axis=1)
    if U.ndim != 2 or not np.all(norms > 0) or not np.all(np.isfinite(U)):
        raise ValueError("directions must be a (K, D) array of finite non-zero rows")
    U = U / norms[:, None]
    t = np.arccos(np.clip(U @ U.T, -1.0, 1.0))
    return (np.sin(t) + (np.pi - t) * np.cos(t)) / (2.0 * np.pi)


def lasso_atom_coefficients(coefficients: ArrayLike, directions: ArrayLike,
                            weight_decay: float) -> np.ndarray:
    """Effective coefficients ``a |w|`` that weight decay leaves on a ReLU teacher's atoms.

    ``coefficients`` are the teacher's ``c*_k = a_k s`` (non-zero), ``directions``
    its ``(K, D)`` atom directions. Returns ``c* - lambda' G^{-1} sign(c*)``
    (module docstring); a coefficient the shrinkage would cross through zero is
    NaN (the atom is switched off and the formula no longer applies).
    """
    c = np.asarray(coefficients, dtype=np.float64).ravel()
    lam = v.nonnegative("weight_decay", weight_decay)
    if not np.all(np.isfinite(c)) or np.any(c == 0):
        raise ValueError("coefficients must be finite and non-zero")
    G = relu_gram(directions)
    if G.shape[0] != c.size:
        raise ValueError(f"{c.size} coefficients for {G.shape[0]} directions")
    out = c - lam * np.linalg.solve(G, np.sign(c))
    return np.where(np.sign(out) == np.sign(c), out, np.nan)


def lasso_threshold_coefficients(coefficients: ArrayLike, directions: ArrayLike,
                                 weight_decay: float, *, tol: float = 1e-12,
                                 max_sweeps: int = 10_000) -> np.ndarray:
    """The lasso on a ReLU teacher's atoms, with the atoms weight decay switches off at zero.

    Minimises ``1/2 (c - c*)^T G (c - c*) + lambda' |c|_1`` over the effective
    coefficients ``c`` of the teacher's ``(K, D)`` directions (module docstring) by
    cyclic coordinate descent. An atom ends at exactly zero when its correlation with the
    residual stays below the threshold, ``|[G (c* - c)]_k| <= lambda'``: the number of
    non-zero entries is the project's coefficient-threshold count of atoms (for
    orthogonal atoms ``c* = (1, -1)`` beside a weak one along a third axis, the weak one
    is off while ``|c*_weak|`` stays below about ``lambda' / G_kk = 2 lambda'``). Where
    every atom stays on it equals :func:`lasso_atom_coefficients`. ``coefficients`` may
    contain zeros.
    """
    c_star = np.asarray(coefficients, dtype=np.float64).ravel()
    lam = v.nonnegative("weight_decay", weight_decay)
    if not np.all(np.isfinite(c_star)):
        raise ValueError("coefficients must be finite")
    G = relu_gram(directions)
    if G.shape[0] != c_star.size:
        raise ValueError(f"{c_star.size} coefficients for {G.shape[0]} directions")
    b = G @ c_star
    c = np.zeros_like(c_star)
    for _ in range(max_sweeps):
        old = c.copy()
        for j in range(c.size):
            r = b[j] - G[j] @ c + G[j, j] * c[j]
            c[j] = np.sign(r) * max(abs(r) - lam, 0.0) / G[j, j]
        if np.max(np.abs(c - old)) <= tol:
            break
    return c


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def lasso_free_directions(coefficients: ArrayLike, directions: ArrayLike, weight_decay: float,
                          *, x: ArrayLike | None = None, y: ArrayLike | None = None,
                          tol: float = 1e-13) -> tuple[np.ndarray, np.ndarray]:
    """The zero-temperature atoms of a ReLU teacher when the directions are free too.

    Minimises ``1/2 E (f - f*)^2 + lambda' sum_k |c_k|`` over the effective coefficients
    ``c_k`` *and* unit directions ``u_k`` of ``f(x) = sum_k c_k relu(u_k . x)``, the mean-field
    objective of a measure on as many atoms as the teacher keeps on (module docstring; the
    teacher is ``f* = sum_j c*_j relu(u*_j . x)``). Weight decay shrinks a coefficient, so the
    residual of one atom pulls on the others: their directions tilt off the teacher's (by
    about 12.7 degrees for orthogonal atoms ``c* = (1, -1)`` at ``lambda' = 0.1``) and the
    coefficients shrink further than :func:`lasso_atom_coefficients` (fixed directions) says.

    The expectation is over ``x ~ N(0, I)`` (the arc-cosine kernel, :func:`relu_gram`), or,
    given the inputs ``x`` ``(M, D)`` and labels ``y`` ``(M,)``, the sample mean: the
    finite-``M`` minimiser of the training objective. The atoms that
    :func:`lasso_threshold_coefficients` switches off stay off (coefficient 0, direction the
    teacher's). Started from the teacher's directions and the thresholded lasso; the result
    is a local minimiser, certified globally by :func:`lasso_certificate`.

    Returns ``(c, U)``: ``(K,)`` coefficients and ``(K, D)`` unit directions, in the order of
    the teacher's atoms.
    """
    import scipy.optimize

    c_star = np.asarray(coefficients, dtype=np.float64).ravel()
    U_star = _unit(np.atleast_2d(np.asarray(directions, dtype=np.float64)))
    lam = v.nonnegative("weight_decay", weight_decay)
    c0 = lasso_threshold_coefficients(c_star, U_star, lam)
    on = np.flatnonzero(c0 != 0)
    K, D = on.size, U_star.shape[1]
    sign = np.sign(c0[on])
    if (x is None) != (y is None):
        raise ValueError("x and y must be given together")
    if x is not None and y is not None:
        xs = v.real_array("x", x)
        ys = v.real_array("y", y)
        if xs.ndim != 2 or xs.shape[1] != D or ys.shape != (len(xs),):
            raise ValueError(f"x must be (M, {D}) and y (M,), got {xs.shape}, {ys.shape}")

    def unpack(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return z[:K], z[K:].reshape(K, D)

    def objective(z: np.ndarray) -> tuple[float, np.ndarray]:
        c, V = unpack(z)
        norms = np.linalg.norm(V, axis=1)
        U = V / norms[:, None]
        if x is None:
            G = relu_gram(np.vstack([U, U_star]))
            Gu, Gx = G[:K, :K], G[:K, K:]
            lin = Gx @ c_star
            val = 0.5 * c @ Gu @ c - c @ lin + lam * sign @ c
            # gradient in U by central differences of the kernel (K D small)
            gU = np.zeros((K, D))
            h = 1e-6
            for k in range(K):
                for d in range(D):
                    for s in (1.0, -1.0):
                        Vp = V.copy()
                        Vp[k, d] += s * h
                        Up = Vp / np.linalg.norm(Vp, axis=1, keepdims=True)
                        Gp = relu_gram(np.vstack([Up, U_star]))
                        fp = 0.5 * c @ Gp[:K, :K] @ c - c @ (Gp[:K, K:] @ c_star)
                        gU[k, d] += s * fp / (2 * h)
            gc = Gu @ c - lin + lam * sign
            return float(val), np.concatenate([gc, gU.ravel()])
        z_ = xs @ U.T
        act = np.maximum(z_, 0.0)
        r = act @ c - ys
        val = 0.5 * float(np.mean(r * r)) + lam * float(sign @ c)
        gc = act.T @ r / len(xs) + lam * sign
        gu = ((z_ > 0) * r[:, None]).T @ xs / len(xs) * c[:, None]  # d/du_k
        gV = (gu - np.sum(gu * U, axis=1, keepdims=True) * U) / norms[:, None]
        return val, np.concatenate([gc, gV.ravel()])

    z0 = np.concatenate([c0[on], U_star[on].ravel()])
    res = scipy.optimize.minimize(objective, z0, jac=True, method="BFGS",
                                  options={"gtol": tol, "maxiter": 10_000})
    c_on, V_on = unpack(res.x)
    c, U = np.zeros_like(c_star), U_star.copy()
    c[on], U[on] = c_on, _unit(V_on)
    return c, U


def lasso_certificate(c: ArrayLike, U: ArrayLike, coefficients: ArrayLike,
                      directions: ArrayLike, weight_decay: float,
                      probes: ArrayLike) -> tuple[float, float]:
    """How far the atoms ``(c, U)`` are from the population optimum of the measure lasso.

    The objective of :func:`lasso_free_directions` is convex in the measure, and a measure
    on the atoms ``(c_k, u_k)`` is its minimiser exactly when the correlation of every
    direction with the residual, ``h(u) = E[(f* - f)(x) relu(u . x)]``, stays within
    ``lambda'`` and reaches ``lambda' sign(c_k)`` at each atom. Returns ``(sup, gap)``:
    ``max |h| / lambda'`` over the unit ``probes`` ``(P, D)`` and the atoms, and the largest
    ``|h(u_k) - lambda' sign(c_k)| / lambda'`` over the non-zero atoms (``sup <= 1`` and
    ``gap = 0`` at the optimum, to the probes' resolution).
    """
    lam = v.positive("weight_decay", weight_decay)
    cc = np.asarray(c, dtype=np.float64).ravel()
    on = cc != 0
    Uc = _unit(np.atleast_2d(np.asarray(U, dtype=np.float64)))
    Us = _unit(np.atleast_2d(np.asarray(directions, dtype=np.float64)))
    cs = np.asarray(coefficients, dtype=np.float64).ravel()
    P = _unit(np.atleast_2d(np.asarray(probes, dtype=np.float64)))
    probe = np.vstack([P, Uc[on]])

    def h(Q: np.ndarray) -> np.ndarray:
        cos_s = np.clip(Q @ Us.T, -1.0, 1.0)
        cos_c = np.clip(Q @ Uc[on].T, -1.0, 1.0)

        def kern(cos: np.ndarray) -> np.ndarray:
            t = np.arccos(cos)
            return (np.sin(t) + (np.pi - t) * cos) / (2.0 * np.pi)

        return kern(cos_s) @ cs - kern(cos_c) @ cc[on]

    sup = float(np.max(np.abs(h(probe)))) / lam
    gap = float(np.max(np.abs(h(Uc[on]) - lam * np.sign(cc[on])))) / lam if on.any() else 0.0
    return sup, gap
