"""Outlier singular values of a rectangular weight matrix, and what they point at.

For an ``N x d`` weight matrix ``W`` (rows = hidden units, columns = input
coordinates) this module

1. counts the outliers with :func:`specdyn.measure.outliers.find_outliers` on
   the squared singular values (the one outlier test of specdyn; ``W`` is the
   data matrix of ``N`` samples and ``d`` features, ratio ``d / N``). Default
   (``edge_method="fit"``, its ``edge="fit"``): the top bulk singular values are
   fitted to a square-root edge, which holds for Marchenko-Pastur and for the
   deformed bulks that a large second GD step produces (its edge inflates like
   ``N^(alpha2 - 1/2)`` and is no longer MP); the threshold is
   ``E + tau q_TW1(1 - pvalue)``. Alternative (``"mp"``): the Marchenko-Pastur
   edge and its sequential Tracy-Widom test. The noise level ``s2`` (``W``
   modelled as ``sqrt(s2/d) G``, ``G`` standard Gaussian ``N x d``) is that
   function's trace fit, and the MP edge ``sqrt(s2) (1 + sqrt(N/d))`` is always
   reported;
2. calls every singular value above the threshold an outlier (decreasing order);
3. identifies each outlier by the squared overlaps of its **left** singular
   vector with reference directions in ``R^N`` -- by default the powers
   ``a, a^2, a^3, ...`` (elementwise) of the second-layer weights,
   Gram-Schmidt orthonormalised in that order;
4. measures the squared overlap of each outlier's **right** singular vector
   with a target direction ``beta`` in ``R^d``.

Accepts numpy arrays or torch tensors; everything returned is host numpy
float64. Singular values are in decreasing order. Overlaps are squared cosines
in ``[0, 1]``. The decompositions are :func:`specdyn.measure.eigen.decompose`'s
(the spectral core): all eigenvalues of the smaller Gram matrix (no vectors),
then the outliers' vectors only -- by Lanczos on the host, densely on an
accelerator -- so no full set of singular vectors is ever computed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from specdyn import _validate as v
from specdyn._torch import to_numpy
from specdyn.measure.outliers import find_outliers
from specdyn.measure.spectra import _is_torch, decompose
from specdyn.theory.rmt import rectangular_bulk_edge

__all__ = ["WeightOutliers", "orthonormal_powers", "weight_outliers"]


@dataclass(frozen=True)
class WeightOutliers:
    """Outliers of an ``N x d`` matrix against a bulk edge estimated from it.

    Attributes
    ----------
    singular_values
        All ``min(N, d)`` singular values, decreasing.
    noise_level
        Fitted ``s2``: the bulk is modelled as ``sqrt(s2/d) G`` (``G`` standard,
        ``N x d``), i.e. entries of variance ``s2/d`` (``find_outliers``' trace
        fit under "exactly ``count`` spikes").
    mp_edge
        Asymptotic Marchenko-Pastur edge ``sqrt(s2) (1 + sqrt(N/d))`` of the
        fitted noise level.
    edge
        Estimated bulk edge: fitted to the top of the bulk (``edge_method="fit"``)
        or ``mp_edge`` (``"mp"``).
    edge_scale
        Tracy-Widom scale of the largest bulk singular value at the fitted edge
        (NaN for ``"mp"``).
    threshold
        ``"fit"``: ``edge + edge_scale * q_TW1(1 - pvalue)``, singular values above it
        are outliers; ``"mp"``: the known-noise Tracy-Widom level at the first
        non-outlier's rank (the sequential test decides).
    count
        Number of singular values above ``threshold``.
    values
        ``(count,)`` the outlier singular values (decreasing).
    left, right
        ``(N, count)`` and ``(d, count)`` the outliers' singular vectors.
    left_overlap2
        ``(count, K)``: squared overlap of outlier ``i``'s left vector with the
        ``j``-th orthonormalised reference direction (``j = 0`` is ``a``,
        ``j = 1`` is ``a^2`` orthogonalised against ``a``, ...). Empty
        ``(count, 0)`` when no reference was given.
    identity
        ``(count,)`` index ``j`` of the reference with the largest squared
        overlap (``-1`` without references). ``j + 1`` is the power of ``a``.
    right_alignment
        ``(count,)`` squared overlap ``(v_i . beta)^2`` of the right vectors with
        the unit target direction (NaN without a target).
    """

    singular_values: np.ndarray
    noise_level: float
    mp_edge: float
    edge: float
    edge_scale: float
    threshold: float
    count: int
    values: np.ndarray
    left: np.ndarray
    right: np.ndarray
    left_overlap2: np.ndarray
    identity: np.ndarray
    right_alignment: np.ndarray

    def direction_alignment(self, min_overlap2: float = 0.1) -> np.ndarray:
        """Target overlap of each identified direction: ``(K,)`` cosines ``|v_i . beta|``.

        Entry ``j`` belongs to the outlier whose left vector has the largest
        squared overlap with reference ``j`` (``a^(j+1)`` orthogonalised), provided
        that overlap is at least ``min_overlap2``; NaN otherwise (no outlier
        carries direction ``j``). Cosines, not squared.
        """
        K = self.left_overlap2.shape[1]
        out = np.full(K, np.nan)
        if self.count == 0 or K == 0 or np.isnan(self.right_alignment).all():
            return out
        k = self.left_overlap2.shape[0]
        best = np.argmax(self.left_overlap2, axis=0)
        ok = self.left_overlap2[best, np.arange(K)] >= min_overlap2
        cos = np.sqrt(self.right_alignment[:k])
        out[ok] = cos[best[ok]]
        return out

    @property
    def max_alignment(self) -> float:
        """Largest squared overlap of any outlier's right vector with the target (0 if none)."""
        if self.count == 0 or np.isnan(self.right_alignment).all():
            return 0.0
        return float(np.nanmax(self.right_alignment))


def orthonormal_powers(a: Any, k: int) -> np.ndarray:
    """``(N, k)`` orthonormal columns spanning ``a, a^2, ..., a^k`` (Gram-Schmidt in order).

    Powers are elementwise. Column ``j`` is ``a^(j+1)`` minus its projection on
    the previous columns, normalised. Computed on ``a / max|a|`` (same
    directions, no overflow) by Householder QR (``numpy.linalg.qr``).
    """
    vec = v.real_array("reference", to_numpy(a))
    if vec.ndim != 1:
        raise ValueError(f"reference must be a vector a (powers are taken), got shape {vec.shape}")
    k = v.positive_int("n_reference", k)
    scale = float(np.max(np.abs(vec)))
    if not scale > 0:
        raise ValueError("reference must be a non-zero vector")
    base = vec / scale
    return _orthonormal_columns(np.stack([base ** (j + 1) for j in range(k)], axis=1))


class _Gram:
    """``T^T T`` of the tall orientation ``T`` of ``W`` (rows >= cols), in float64, on the
    host (numpy, the Gram's values by torch on the CPU) or on a torch device: its
    eigenvalues and its top eigenvectors."""

    def __init__(self, W: Any, device: Any) -> None:
        if device is None and _is_torch(W) and W.device.type != "cpu":
            device = W.device  # the input's device
        self.transpose = W.shape[0] < W.shape[1]
        if device is not None and str(device) != "cpu":
            from specdyn import _torch

            torch = _torch.torch()
            Wt = torch.as_tensor(W, device=_torch.resolve_device(device), dtype=torch.float64)
            if not bool(torch.isfinite(Wt).all()):
                raise ValueError("W must be finite (it contains NaN or inf)")
        else:
            Wt = v.real_array("W", to_numpy(W))
        self.T = Wt.T if self.transpose else Wt
        self.host = not _is_torch(self.T)
        self.G_host: Any = None
        if self.host:
            # the host's values go through torch's LAPACK (MKL in the torch wheels): at
            # N = d = 4000 its eigvalsh takes a third of the CPU time of numpy's OpenBLAS
            # one (BENCHMARKS.md); the numpy view of the same Gram serves Lanczos
            from specdyn import _torch

            T_t = _torch.torch().from_numpy(np.ascontiguousarray(self.T))
            self.G = T_t.T @ T_t
            self.G_host = self.G.numpy()
        else:
            self.G = self.T.T @ self.T
        # on a device one dense eigh gives values and vectors (cheap there); on the host
        # the values alone (no vectors: several times faster), then Lanczos for the top
        self.full = None if self.host else decompose(self.G, vectors=True)

    def eigenvalues(self) -> np.ndarray:
        """All eigenvalues, decreasing, host float64."""
        w = decompose(self.G).values if self.full is None else self.full.values
        return np.asarray(to_numpy(w), dtype=np.float64)

    def top_vectors(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """``(cols x k)`` top eigenvectors of ``T^T T`` and ``(rows x k)`` ``T`` times them
        (decreasing order), host float64."""
        if self.full is not None:
            vecs = self.full.vectors[:, :k]
        elif k < self.G.shape[0]:
            vecs = decompose(self.G_host, top=k, vectors=True, method="lanczos").vectors
        else:
            vecs = decompose(self.G_host, vectors=True).vectors
        return to_numpy(vecs), to_numpy(self.T @ vecs)


def _orthonormal_columns(V: np.ndarray) -> np.ndarray:
    """Orthonormal columns spanning ``V[:, :j+1]`` for every ``j`` (Householder QR, signed so
    that column ``j`` leans on ``V[:, j]``, as Gram-Schmidt in order would give)."""
    if V.shape[1] > V.shape[0]:
        raise ValueError(f"reference direction {V.shape[0]} is linearly dependent on the "
                         "previous ones (more directions than dimensions)")
    Q, R = np.linalg.qr(V)
    d = np.diag(R)
    scale = np.maximum(1.0, np.linalg.norm(V, axis=0))
    dependent = ~(np.abs(d) > 1e-12 * scale)
    if dependent.any():
        j = int(np.argmax(dependent))
        raise ValueError(f"reference direction {j} is linearly dependent on the previous ones")
    return Q * np.sign(d)


def weight_outliers(W: Any, reference: Any = None, target_direction: Any = None, *,
                    n_reference: int = 4, pvalue: float = 0.01, max_outliers: int = 20,
                    edge_method: str = "fit", window: int | None = None,
                    device: Any = None) -> WeightOutliers:
    """Outliers of ``W`` (``N x d``) against a bulk edge estimated from ``W`` itself.

    Parameters
    ----------
    W
        ``(N, d)`` matrix (numpy or torch).
    reference
        ``(N,)`` vector ``a`` -- the references are then its powers
        ``a, ..., a^n_reference`` orthonormalised (:func:`orthonormal_powers`)
        -- or an ``(N, K)`` matrix whose columns are orthonormalised in order;
        ``None`` skips the identification.
    target_direction
        ``(d,)`` direction ``beta`` (normalised here), or ``None``.
    n_reference
        Number of powers of ``a`` when ``reference`` is a vector (>= 1).
    pvalue
        False-positive level of the Tracy-Widom test for a pure-noise matrix, in
        ``(0, 1)`` (``find_outliers``' ``alpha``). The default 0.01 puts the
        fitted threshold about ``2.0 sigma_TW`` above the fitted edge.
    max_outliers
        At most this many singular vectors are computed (>= 1); the fitted edge's
        iteration and the ``"mp"`` test consider at most this many candidates.
    edge_method
        ``"fit"`` (default): edge fitted to the top of the bulk (any square-root
        edge); ``"mp"``: Marchenko-Pastur (``find_outliers``' ``edge``).
    window
        Bulk singular values used by the ``"fit"`` edge (>= 5; default
        ``max(24, min(N, d) // 25)``).
    device
        ``None``: the input's device (the host for numpy); ``"cpu"``: the host; an
        accelerator (e.g. ``"cuda"``): the Gram matrix and its decompositions run
        there in float64 (only ``min(N, d)`` values and the outliers' vectors come
        back).

    Notes
    -----
    All ``min(N, d)`` eigenvalues of the smaller Gram matrix are computed (a
    dense ``eigvalsh``, no vectors): the fitted edge needs the top
    ``max_outliers + window`` of them and the noise fit their trace, and at
    ``N = d = 4000`` on the host the dense values (17 CPU-s) are cheaper than the
    top 181 by Lanczos (about 50 CPU-s: the bulk edge's values are clustered;
    BENCHMARKS.md). After a large second GD step the bulk is no longer MP and
    ``mp_edge`` underestimates the edge, which the ``"fit"`` edge avoids.
    """
    if not _is_torch(W):
        W = v.real_array("W", np.asarray(W))
    if W.ndim != 2:
        raise ValueError(f"W must be a 2-D matrix, got shape {tuple(W.shape)}")
    N, d = W.shape
    pvalue = v.in_range("pvalue", pvalue, 0.0, 1.0, lo_open=True, hi_open=True)
    max_outliers = v.positive_int("max_outliers", max_outliers)
    edge_method = v.choice("edge_method", edge_method, ("fit", "mp"))
    if window is not None:
        window = v.positive_int("window", window, minimum=5)
    Q = None
    if reference is not None:
        ref = v.real_array("reference", to_numpy(reference))
        if ref.shape[0] != N:
            raise ValueError(f"reference must have {N} rows (W's rows), got shape {ref.shape}")
        Q = orthonormal_powers(ref, n_reference) if ref.ndim == 1 else _orthonormal_columns(ref)
    beta = None
    if target_direction is not None:
        beta = v.real_array("target_direction", to_numpy(target_direction))
        if beta.shape != (d,):
            raise ValueError(f"target_direction must have shape ({d},), got {beta.shape}")
        nb = float(np.linalg.norm(beta))
        if not nb > 0:
            raise ValueError("target_direction must be a non-zero vector")
        beta = beta / nb

    # The smaller Gram matrix: all its eigenvalues (singular values squared), no vectors.
    gram = _Gram(W, device)
    transpose = gram.transpose
    m = min(N, d)
    lam = np.clip(gram.eigenvalues(), 0.0, None)[:m]
    s = np.sqrt(lam)
    # the one outlier test; the squared singular values are those of a sample covariance
    # of N samples and d features up to the factor N, which the noise fit absorbs
    rep = find_outliers(lam, d / N, pvalue, n_samples=N, max_candidates=max_outliers,
                        edge=edge_method, window=window if edge_method == "fit" else None)
    s2 = rep.sigma2 * d / N  # entries of W have variance s2 / d
    mp_edge = math.sqrt(s2) * float(rectangular_bulk_edge(N / d))
    count = rep.n_outliers
    edge = math.sqrt(rep.edge) if edge_method == "fit" else mp_edge
    threshold = math.sqrt(rep.threshold)

    k = min(count, max_outliers)
    # the outliers' vectors only: right vectors of T, and T times them (left, scaled below)
    right_T, TV = gram.top_vectors(k) if k else (np.zeros((m, 0)), np.zeros((max(N, d), 0)))
    left_T = TV / np.where(s[:k] > 0, s[:k], 1.0)
    left, right = (right_T, left_T) if transpose else (left_T, right_T)
    if Q is not None:
        ov = (left.T @ Q) ** 2
        ident = np.argmax(ov, axis=1) if k else np.zeros(0, dtype=int)
    else:
        ov = np.zeros((k, 0))
        ident = np.full(k, -1)
    align = (right.T @ beta) ** 2 if beta is not None else np.full(k, np.nan)
    return WeightOutliers(singular_values=s, noise_level=s2, mp_edge=mp_edge, edge=edge,
                          edge_scale=rep.edge_scale, threshold=threshold, count=count,
                          values=s[:k], left=left, right=right, left_overlap2=ov,
                          identity=np.asarray(ident, dtype=int),
                          right_alignment=np.asarray(align, dtype=np.float64))
