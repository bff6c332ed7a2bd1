"""The eigen- and singular-value kernels every spectrum of specdyn is computed with.

:func:`decompose` is the one eigen/singular decomposition of specdyn (full or
top-``k``, with or without vectors, numpy or torch on the tensor's device);
:func:`symmetric_eigenvalues` (float64 numpy out) and :func:`device_eigenvalues`
(a tensor, kept on its device) are the two readings of a symmetric matrix's
eigenvalues that the measurements and the simulators use.

Conventions
-----------
Order and type
    Eigenvalues decreasing; :func:`symmetric_eigenvalues` returns float64 numpy,
    negative round-off clipped to 0 (:func:`decompose` clips nothing: its caller
    decides).
Zero
    An eigenvalue is numerically zero when it is at most :func:`rank_tolerance`:
    ``lambda_1 * max(n, p) * eps`` of the dtype the spectrum was computed in
    (what ``numpy.linalg.matrix_rank`` uses, applied to the Gram's
    eigenvalues). Every zero cut-off in ``specdyn.measure`` uses it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from specdyn import _validate as v
from specdyn._torch import to_numpy

__all__ = ["Decomposition", "decompose", "device_eigenvalues", "rank_tolerance",
           "symmetric_eigenvalues"]


def rank_tolerance(largest: float, shape: float | tuple[float, ...],
                   dtype: Any = np.float64) -> float:
    """Eigenvalues at or below this are numerically zero: ``largest * max(shape) * eps(dtype)``.

    Parameters
    ----------
    largest
        The largest eigenvalue of the spectrum (negative values count as 0).
    shape
        ``(n, p)`` of the matrix whose Gram was diagonalised, or just the
        largest size when only that is known (e.g. the number of eigenvalues).
    dtype
        The dtype the spectrum was computed in (float64 for every spectrum of
        this module); ``eps`` is its machine epsilon.

    Notes
    -----
    The rounding error of a symmetric eigensolver on an ``m x m`` Gram is of
    order ``m * eps * lambda_1``, so smaller eigenvalues are not resolved. A
    fixed relative cut-off is either too coarse for small matrices (1e-10
    flags about 2 % of square 1000 x 1000 Gaussian Grams as rank deficient) or
    too fine for large ones.
    """
    size = float(np.max(np.asarray(shape, dtype=np.float64)))
    if str(dtype).startswith("torch."):
        import torch

        eps = float(torch.finfo(dtype).eps)
    else:
        eps = float(np.finfo(np.dtype(dtype)).eps)
    return max(float(largest), 0.0) * max(size, 1.0) * eps


class Decomposition(NamedTuple):
    """What :func:`decompose` returns, in the input's type, device and dtype.

    Attributes
    ----------
    values
        Eigenvalues (``singular=False``) or singular values, **decreasing**.
    vectors
        Their eigenvectors, or the left singular vectors, as columns (``None``
        unless asked for).
    right
        The right singular vectors as columns (``singular=True`` with vectors;
        else ``None``).
    """

    values: Any
    vectors: Any = None
    right: Any = None


_DECOMPOSE_METHODS = ("dense", "lanczos")


def decompose(A: Any, *, singular: bool = False, vectors: bool = False, top: int | None = None,
              center: bool = False, method: str = "dense", generator: Any = None,
              increasing: bool = False) -> Decomposition:
    """The one eigen/singular decomposition of specdyn: full or top-``k``, with or without vectors.

    Every ``eigh``, ``eigvalsh``, ``svd`` and ``svdvals`` outside the theory
    layer's own float64 numerics goes through here
    (``tests/project/test_one_definition.py`` checks it), so a change of solver
    is made once.

    Parameters
    ----------
    A
        A symmetric matrix (``singular=False``; or a stack of them, batch
        dimensions first) or any matrix (``singular=True``): numpy (LAPACK
        through numpy) or torch (``torch.linalg``, on the tensor's device, in its
        dtype: nothing is moved to the host).
    singular
        Singular values (and vectors) of ``A`` instead of eigenvalues.
    vectors
        Also return the vectors.
    top
        Only the ``top`` largest values (and their vectors); ``None``: all.
    center
        Remove the column means of ``A`` first (``singular=True`` only: a data
        matrix).
    method
        ``"dense"``: the full LAPACK decomposition, then the top ``k``.
        ``"lanczos"``: the top ``k`` eigenpairs of a symmetric numpy matrix (or a
        ``scipy.sparse.linalg.LinearOperator``, e.g. an implicit Gram) by
        implicitly restarted Lanczos (``scipy.sparse.linalg.eigsh``, ``tol=0``:
        to machine precision), from a start vector drawn from ``generator``.
    generator
        A ``numpy.random.Generator`` for the Lanczos start vector (default: seed 0,
        so a call is reproducible).
    increasing
        Eigenvalues in increasing order, LAPACK's own (a symmetric dense
        decomposition without ``top``: for callers whose later arithmetic runs in
        that order, so that their numbers stay bit for bit).

    Returns
    -------
    Decomposition
        Values decreasing; no clipping of negative round-off (the caller's
        convention: a Gram's eigenvalues are clipped at 0 by its reader).
    """
    method = v.choice("method", method, _DECOMPOSE_METHODS)
    torch_in = _is_torch(A)
    if center:
        if not singular:
            raise ValueError("center=True needs singular=True (a data matrix, not a Gram)")
        A = A - (A.mean(dim=0, keepdim=True) if torch_in else A.mean(axis=0, keepdims=True))
    if method == "lanczos":
        if torch_in or singular or top is None:
            raise ValueError("method='lanczos' is the top-k of a symmetric numpy matrix: "
                             "give top and a numpy array (or use method='dense')")
        return _lanczos_pairs(A, v.positive_int("top", top), vectors, generator)
    if torch_in:
        import torch

        lin: Any = torch.linalg
    else:
        lin = np.linalg
    k = None if top is None else v.positive_int("top", top)
    if singular:
        if vectors:
            U, sv, Vh = lin.svd(A, full_matrices=False)  # decreasing already
            return Decomposition(sv[:k], U[:, :k], Vh[:k].T)
        sv = lin.svdvals(A) if torch_in else lin.svd(A, compute_uv=False)
        return Decomposition(sv[:k])
    if increasing and k is not None:
        raise ValueError("increasing=True is the full spectrum: give top=None")
    # a stack of symmetric matrices (leading batch dimensions) is decomposed matrix by matrix
    if vectors:
        w, V = lin.eigh(A)
        if not increasing:
            w, V = (w.flip(-1), V.flip(-1)) if torch_in else (w[..., ::-1], V[..., ::-1])
        return Decomposition(w[..., :k], V[..., :k])
    w = lin.eigvalsh(A)
    if not increasing:
        w = w.flip(-1) if torch_in else w[..., ::-1]
    return Decomposition(w[..., :k])


def _lanczos_pairs(S: Any, k: int, vectors: bool, generator: Any) -> Decomposition:
    """Top ``k`` eigenpairs of a symmetric ``S`` by Lanczos (decreasing)."""
    from scipy.sparse.linalg import eigsh

    m = S.shape[0]
    if k >= m:
        raise ValueError(f"top must be < {m} (the matrix size) for method='lanczos', got {k}")
    rng = np.random.default_rng(0) if generator is None else generator
    v0 = rng.standard_normal(m)
    ncv = min(m, max(2 * k + 1, k + 32))
    if not vectors:
        w = eigsh(S, k=k, which="LA", v0=v0, ncv=ncv, tol=0.0, return_eigenvectors=False)
        return Decomposition(np.sort(np.asarray(w))[::-1])
    w, V = eigsh(S, k=k, which="LA", v0=v0, ncv=ncv, tol=0.0)
    order = np.argsort(w)[::-1]
    return Decomposition(np.asarray(w)[order], np.asarray(V)[:, order])


def device_eigenvalues(S: Any) -> Any:
    """Eigenvalues of a symmetric torch matrix as a tensor: its device and dtype, decreasing.

    Negative round-off clipped to 0; a stack ``(..., m, m)`` gives ``(..., m)``. The torch
    branch of
    :func:`symmetric_eigenvalues`, for a simulator that keeps the values on the
    device in the run's precision (the top singular values of a weight matrix,
    say, are ``device_eigenvalues(W @ W.T).sqrt()``).
    """
    return decompose(S).values.clamp_min(0)


def symmetric_eigenvalues(S: Any, *, symmetrize: bool = False,
                          zero_below_rank: bool = False) -> np.ndarray:
    """Eigenvalues of a symmetric matrix, decreasing, float64, negative round-off clipped to 0.

    The one ``eigvalsh`` of specdyn. ``S`` is a numpy array (numpy's
    ``eigvalsh``) or a torch tensor (torch's, on its device, in its dtype).

    Parameters
    ----------
    S
        A square symmetric matrix.
    symmetrize
        Use ``(S + S^T) / 2`` (a product that is symmetric only to rounding).
    zero_below_rank
        Also set the eigenvalues at or below ``rank_tolerance`` (of ``S``'s
        size and the dtype it was diagonalised in) to exactly 0: round-off of
        a rank-deficient matrix.
    """
    if _is_torch(S):
        # clip and order on the device: the same bits as after the float64 copy
        w = to_numpy(device_eigenvalues(0.5 * (S + S.T) if symmetrize else S), np.float64)
        dtype: Any = S.dtype
    else:
        w = decompose(0.5 * (S + S.T) if symmetrize else S).values
        dtype = w.dtype
        w = np.clip(w, 0.0, None).copy()
    if zero_below_rank and w.size:
        w[w <= rank_tolerance(float(w[0]), w.size, dtype)] = 0.0
    return w


def _is_torch(x: Any) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "detach")


def _check_matrix(name: str, x: Any) -> Any:
    """Validate a 2-D real finite non-empty matrix; numpy -> float64 array, torch kept."""
    if _is_torch(x):
        if x.ndim != 2:
            raise ValueError(f"{name} must be a 2-D matrix, got shape {tuple(x.shape)}")
        if x.numel() == 0:
            raise ValueError(f"{name} must be non-empty, got shape {tuple(x.shape)}")
        if x.is_complex():
            raise ValueError(f"{name} must be real, got a complex tensor")
        x = x.detach()
        if not x.dtype.is_floating_point:
            x = x.double()
        import torch

        if not bool(torch.isfinite(x).all()):
            raise ValueError(f"{name} must be finite (it contains NaN or inf)")
        return x
    arr = np.asarray(x)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must be non-empty, got shape {arr.shape}")
    return v.real_array(name, arr)
