"""Alignment of top eigenvectors and singular vectors with given directions.

Conventions
-----------
Overlaps are squared cosines ``<e_i, d_j>**2 / (|e_i|^2 |d_j|^2)`` in [0, 1];
the sign of an eigenvector is arbitrary, so only squares are meaningful.
Eigenvectors are those of the covariance ``F_c^T F_c / n`` (see
``specdyn.measure.spectra``), singular vectors those of ``W = U S V^T``
(``U``: left, length ``N``; ``V``: right, length ``M``), all in decreasing
order of eigenvalue / singular value. ``directions`` are columns of a
``p x m`` matrix (or one vector of length ``p``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from specdyn import _validate as v
from specdyn._torch import to_numpy
from specdyn.measure.spectra import _check_matrix, _is_torch, decompose

__all__ = [
    "Alignment",
    "SingularAlignment",
    "covariance_alignment",
    "overlaps",
    "singular_alignment",
    "top_eigenvectors",
    "top_singular_vectors",
]


def _host(x: Any) -> np.ndarray:
    """numpy float64 copy of an (already validated) array or tensor."""
    return to_numpy(x, np.float64) if _is_torch(x) else np.asarray(x)


def _directions(name: str, d: Any, length: int) -> np.ndarray:
    arr = to_numpy(d)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a vector or a matrix of column vectors, "
                         f"got shape {arr.shape}")
    arr = v.real_array(name, arr)
    if arr.shape[0] != length:
        raise ValueError(f"{name} must have {length} rows (one per coordinate), "
                         f"got shape {arr.shape}")
    norms = np.linalg.norm(arr, axis=0)
    if np.any(norms == 0):
        raise ValueError(f"{name} has a zero column: a direction must be non-zero")
    return arr / norms


def overlaps(vectors: Any, directions: Any) -> np.ndarray:
    """Squared cosines between the columns of ``vectors`` (p x k) and ``directions`` (p x m).

    Returns a ``k x m`` array; row sums are the fraction of each vector lying in
    the span of the directions when those are orthonormal.
    """
    V = _host(vectors)
    if V.ndim == 1:
        V = V[:, None]
    if V.ndim != 2:
        raise ValueError(f"vectors must be a vector or a p x k matrix, got shape {V.shape}")
    V = v.real_array("vectors", V)
    D = _directions("directions", directions, V.shape[0])
    norms = np.linalg.norm(V, axis=0)
    if np.any(norms == 0):
        raise ValueError("vectors has a zero column")
    return np.asarray(((V / norms).T @ D) ** 2)


def top_eigenvectors(F: Any, k: int, center: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Top ``k`` eigenpairs of ``F_c^T F_c / n``: (eigenvalues decreasing, ``p x k`` vectors).

    Uses the smaller Gram: for ``n < p`` the feature-space eigenvectors are
    ``F_c^T u / sqrt(n lambda)`` from the ``n x n`` Gram's eigenvectors ``u``.
    """
    X = _host(_check_matrix("F", F))
    n, p = X.shape
    kk = min(v.positive_int("k", k), min(n, p))
    Xc = X - X.mean(axis=0, keepdims=True) if center else X
    if p <= n:
        lam, vec, _ = decompose(Xc.T @ Xc / n, vectors=True, top=kk)
    else:
        lam, u, _ = decompose(Xc @ Xc.T / n, vectors=True, top=kk)
        vec = Xc.T @ u
        vec = vec / np.maximum(np.linalg.norm(vec, axis=0), 1e-300)
    return np.clip(lam, 0.0, None), vec


def top_singular_vectors(W: Any, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Top ``k`` singular triplets of ``W``: (values decreasing, ``U`` N x k, ``V`` M x k)."""
    X = _host(_check_matrix("W", W))
    kk = min(v.positive_int("k", k), min(X.shape))
    s, U, V = decompose(X, singular=True, vectors=True, top=kk)
    return s, U, V


@dataclass(frozen=True)
class Alignment:
    """Squared overlaps of the top covariance eigenvectors with given directions.

    Attributes
    ----------
    eigenvalues
        Top ``k`` eigenvalues, decreasing.
    overlap2
        ``k x m`` squared cosines (eigenvector i, direction j).
    captured
        For each direction, the fraction of it inside the span of the top
        ``k`` eigenvectors (column sums of ``overlap2``), in [0, 1].
    """

    eigenvalues: np.ndarray
    overlap2: np.ndarray
    captured: np.ndarray


def covariance_alignment(F: Any, directions: Any, k: int = 10, center: bool = True
                         ) -> Alignment:
    """How the top ``k`` covariance eigenvectors of ``F`` (n x p) align with ``directions``."""
    lam, vec = top_eigenvectors(F, k, center=center)
    ov = overlaps(vec, directions)
    return Alignment(eigenvalues=lam, overlap2=ov, captured=ov.sum(axis=0))


@dataclass(frozen=True)
class SingularAlignment:
    """Squared overlaps of the top singular vectors of ``W`` with given directions.

    ``left_overlap2`` is ``k x m_left`` (left vectors, length N),
    ``right_overlap2`` is ``k x m_right`` (right vectors, length M); empty
    when the corresponding directions were not given.
    """

    singular_values: np.ndarray
    left_overlap2: np.ndarray
    right_overlap2: np.ndarray


def singular_alignment(W: Any, left: Any = None, right: Any = None, k: int = 10
                       ) -> SingularAlignment:
    """Overlaps of the top ``k`` left/right singular vectors of ``W`` with given directions.

    ``left`` directions live in ``R^N`` (rows), ``right`` in ``R^M`` (columns);
    compare with ``rectangular_spike(theta, c)``'s predicted overlaps.
    """
    s, U, V = top_singular_vectors(W, k)
    lo = overlaps(U, left) if left is not None else np.zeros((s.size, 0))
    ro = overlaps(V, right) if right is not None else np.zeros((s.size, 0))
    return SingularAlignment(singular_values=s, left_overlap2=lo, right_overlap2=ro)
