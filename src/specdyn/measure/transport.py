"""Squared 2-Wasserstein distance between particle (empirical) measures.

Conventions
-----------
* A particle measure is ``mu = sum_i p_i delta_{x_i}`` with points ``x`` of
  shape ``(n, D)`` (a 1-D array is ``n`` points on the line) and weights ``p``
  (uniform ``1/n`` by default; given weights must be >= 0 with a positive sum
  and are normalised to sum to one).
* ``W2^2(mu, nu) = min_pi sum_ij pi_ij ||x_i - y_j||^2`` over couplings ``pi``
  with marginals ``p`` and ``q`` (squared Euclidean ground cost, no 1/2).

Methods (all exact):

* ``"assignment"``: equal sizes and uniform weights. An optimal coupling is
  then a permutation (Birkhoff-von Neumann), found by
  :func:`scipy.optimize.linear_sum_assignment`.
* ``"pot"``: the network-simplex solver ``ot.emd2`` of the POT library
  (Python Optimal Transport, ``pip install pot``), for any sizes and weights.
* ``"lp"``: the transport linear programme solved by HiGHS
  (:func:`scipy.optimize.linprog`); ``n m`` variables, meant for small cases
  and as a dependency-free cross-check.
* ``"auto"``: ``"assignment"`` when it applies, else ``"pot"`` when POT is
  installed, else ``"lp"``.

Inputs may be numpy arrays or torch tensors; results are Python floats.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from specdyn import _validate as v
from specdyn._torch import to_numpy

__all__ = ["paired_sq_distance", "wasserstein2_squared"]

_METHODS = ("auto", "assignment", "pot", "lp")
#: Largest ``n * m`` the LP method accepts (its constraint matrix is ``(n+m) x nm``).
LP_MAX_VARIABLES = 250_000


def _points(name: str, x: Any) -> np.ndarray:
    arr = v.real_array(name, to_numpy(x))
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"{name} must have shape (n, D) or (n,), got {arr.shape}")
    return arr


def _weights(name: str, w: Any, n: int) -> np.ndarray | None:
    if w is None:
        return None
    arr = v.real_array(name, to_numpy(w), lo=0.0)
    if arr.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},) to match the points, got {arr.shape}")
    total = float(arr.sum())
    if not total > 0:
        raise ValueError(f"{name} must have a positive sum")
    return arr / total


def _sq_cost(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    # ||x||^2 + ||y||^2 - 2 x.y, clipped at 0 against roundoff
    c = (x * x).sum(1)[:, None] + (y * y).sum(1)[None, :] - 2.0 * x @ y.T
    return np.maximum(c, 0.0)


def wasserstein2_squared(x: ArrayLike, y: ArrayLike, p: ArrayLike | None = None,
                         q: ArrayLike | None = None, *, method: str = "auto") -> float:
    """Exact ``W2^2`` between ``sum_i p_i delta_{x_i}`` and ``sum_j q_j delta_{y_j}``.

    Parameters
    ----------
    x, y
        Points ``(n, D)`` and ``(m, D)`` (or 1-D arrays of ``n``, ``m`` points).
    p, q
        Weights (``None``: uniform). Normalised to sum to one.
    method
        ``"auto"``, ``"assignment"`` (equal sizes, uniform weights),
        ``"pot"`` or ``"lp"`` (see the module docstring).

    Returns
    -------
    float
        ``min_pi sum_ij pi_ij ||x_i - y_j||^2``.
    """
    method = v.choice("method", method, _METHODS)
    xs = _points("x", x)
    ys = _points("y", y)
    if xs.shape[1] != ys.shape[1]:
        raise ValueError(f"x and y must have the same dimension, got {xs.shape[1]} and "
                         f"{ys.shape[1]}")
    n, m = len(xs), len(ys)
    pw = _weights("p", p, n)
    qw = _weights("q", q, m)
    uniform_equal = n == m and (pw is None or np.allclose(pw, 1.0 / n, rtol=0, atol=1e-15)) \
        and (qw is None or np.allclose(qw, 1.0 / m, rtol=0, atol=1e-15))
    if method == "auto":
        if uniform_equal:
            method = "assignment"
        else:
            try:
                import ot  # noqa: F401
                method = "pot"
            except ImportError:
                method = "lp"
    if method == "assignment" and not uniform_equal:
        raise ValueError("method='assignment' needs equal sizes and uniform weights; "
                         "use 'pot' or 'lp'")
    cost = _sq_cost(xs, ys)
    if method == "assignment":
        from scipy.optimize import linear_sum_assignment

        rows, cols = linear_sum_assignment(cost)
        return float(cost[rows, cols].sum() / n)
    pw = np.full(n, 1.0 / n) if pw is None else pw
    qw = np.full(m, 1.0 / m) if qw is None else qw
    if method == "pot":
        return _pot(pw, qw, cost)
    return _lp(pw, qw, cost)


def _pot(p: np.ndarray, q: np.ndarray, cost: np.ndarray) -> float:
    try:
        import ot
    except ImportError as err:
        raise ImportError("method='pot' needs the POT library: pip install pot") from err
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # "numItermax reached" must not pass
        try:
            val = ot.emd2(p, q, cost, numItermax=max(100_000, 50 * cost.size))
        except UserWarning as w:
            raise RuntimeError(f"POT's exact solver did not converge: {w}") from None
    return float(val)


def _lp(p: np.ndarray, q: np.ndarray, cost: np.ndarray) -> float:
    from scipy import sparse
    from scipy.optimize import linprog

    n, m = cost.shape
    if n * m > LP_MAX_VARIABLES:
        raise ValueError(f"method='lp' is for small cases (n m <= {LP_MAX_VARIABLES}), got "
                         f"n m = {n * m}; use method='pot'")
    # variable pi_ij at index i m + j; row sums = p, column sums = q
    rows = sparse.kron(sparse.eye(n), np.ones((1, m)))
    cols = sparse.kron(np.ones((1, n)), sparse.eye(m))
    a_eq = sparse.vstack([rows, cols]).tocsr()
    b_eq = np.concatenate([p, q])
    res = linprog(cost.ravel(), A_eq=a_eq, b_eq=b_eq, bounds=(0, None), method="highs")
    if res.status != 0:
        raise RuntimeError(f"the transport LP failed: {res.message}")
    return float(res.fun)


def paired_sq_distance(x: ArrayLike, y: ArrayLike) -> float:
    """``(1/n) sum_i ||x_i - y_i||^2`` for paired particles (a coupling, so >= ``W2^2``).

    This is the synchronous-coupling distance of propagation of chaos.
    """
    xs = _points("x", x)
    ys = _points("y", y)
    if xs.shape != ys.shape:
        raise ValueError(f"x and y must have the same shape, got {xs.shape} and {ys.shape}")
    return float(((xs - ys) ** 2).sum(1).mean())
