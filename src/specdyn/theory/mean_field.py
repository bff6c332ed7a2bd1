"""Mean-field ReLU networks with weight decay: where the atoms of a sparse teacher sit.

Third related abstract (``shared/papers/related-notes.md``, section 3). For
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
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from specdyn import _validate as v

__all__ = ["lasso_atom_coefficients", "lasso_threshold_coefficients", "relu_gram"]


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
