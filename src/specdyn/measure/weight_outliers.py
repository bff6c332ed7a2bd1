"""Outlier singular values of a rectangular weight matrix, and what they point at.

For an ``N x d`` weight matrix ``W`` (rows = hidden units, columns = input
coordinates) this module

1. estimates the bulk edge **from the matrix itself**. Default
   (``edge_method="fit"``): the top ``window`` bulk singular values are fitted
   to the square-root edge law ``s_j ~ E - tau (3 pi (j - 1/2) / 2)^(2/3)``
   (the Airy counting function), which holds for Marchenko-Pastur and for the
   deformed bulks that a large second GD step produces (its edge inflates like
   ``N^(alpha2 - 1/2)`` and is no longer MP); the threshold is
   ``E + tau q_TW1(1 - pvalue)``. Alternative (``"mp"``): ``W`` is modelled as
   ``sqrt(s2/d) G`` (``G`` standard Gaussian ``N x d``), ``s2`` matched to the
   median squared singular value, with Johnstone's finite-size centring and
   scaling. The MP edge ``sqrt(s2) (1 + sqrt(N/d))`` is always reported;
2. calls every singular value above the threshold an outlier (decreasing order);
3. identifies each outlier by the squared overlaps of its **left** singular
   vector with reference directions in ``R^N`` -- by default the powers
   ``a, a^2, a^3, ...`` (elementwise) of the second-layer weights,
   Gram-Schmidt orthonormalised in that order;
4. measures the squared overlap of each outlier's **right** singular vector
   with a target direction ``beta`` in ``R^d``.

Accepts numpy arrays or torch tensors; everything returned is host numpy
float64. Singular values are in decreasing order. Overlaps are squared cosines
in ``[0, 1]``. The decompositions are :func:`specdyn.measure.spectra.decompose`'s
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
from specdyn.measure.spectra import _is_torch, decompose
from specdyn.theory.rmt import mp_quantile, rectangular_bulk_edge, tw_quantile, wishart_edge_scaling

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
        ``N x d``), i.e. entries of variance ``s2/d``.
    mp_edge
        Asymptotic Marchenko-Pastur edge ``sqrt(s2) (1 + sqrt(N/d))`` of the
        fitted noise level.
    edge
        Estimated bulk edge: fitted to the top of the bulk (``edge_method="fit"``)
        or the finite-size MP centring (``"mp"``).
    edge_scale
        Tracy-Widom scale of the largest bulk singular value at that edge.
    threshold
        ``edge + edge_scale * q_TW1(1 - pvalue)``: singular values above it are outliers.
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
    host (numpy) or on a torch device: its eigenvalues and its top eigenvectors."""

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
        self.G = self.T.T @ self.T
        self.host = not _is_torch(self.G)
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
            vecs = decompose(self.G, top=k, vectors=True, method="lanczos").vectors
        else:
            vecs = decompose(self.G, vectors=True).vectors
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
        False-positive level of the Tracy-Widom threshold for a pure-noise
        matrix, in ``(0, 1)``. The default 0.01 puts the threshold about
        ``2.0 sigma_TW`` above the finite-size edge.
    max_outliers
        At most this many singular vectors are computed (>= 1).

    edge_method
        ``"fit"`` (default): edge fitted to the top of the bulk (any square-root
        edge); ``"mp"``: Marchenko-Pastur with the noise level from the median.
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
    The noise level ``s2`` uses the median, not the Frobenius norm, so that a
    few large outliers do not bias it: ``s2 = median(s^2) / q_MP(1/2)`` with
    ``q_MP(1/2)`` the median of the Marchenko-Pastur law of ``G G^T / d``
    (``N <= d``) or of ``G^T G / d`` (``N > d``). After a large second GD step
    the bulk is no longer MP and ``mp_edge`` underestimates the edge (by ~3 %
    at ``alpha = (0.45, 0.45)``, ``N = 1000``), which the ``"fit"`` edge avoids.
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
    lam = np.clip(gram.eigenvalues(), 0.0, None)
    s = np.sqrt(lam)
    m = min(N, d)

    # Noise level from the median squared singular value (robust to a few spikes).
    c = N / d
    if N <= d:
        # s^2 are the eigenvalues of W W^T = (s2/d) G G^T: MP with ratio N/d, variance s2 (N/d)/c
        med_mp = mp_quantile(0.5, c, 1.0)
    else:
        # s^2 are the eigenvalues of W^T W = (s2/d) G^T G = s2 c (G^T G / N): MP(d/N) times c
        med_mp = c * mp_quantile(0.5, 1.0 / c, 1.0)
    s2 = float(np.median(lam[:m])) / med_mp
    mp_edge = math.sqrt(s2) * float(rectangular_bulk_edge(c))
    tw99 = float(tw_quantile(1.0 - pvalue, beta=1))
    if edge_method == "mp":
        mu_np, sig_np = wishart_edge_scaling(N, d)
        edge = math.sqrt((s2 / d) * mu_np)
        scale = edge * 0.5 * sig_np / mu_np  # d s = s (d s^2) / (2 s^2)
    else:
        _, edge, scale = _fit_edge(s[:m], tw99, window, max_outliers)
    threshold = edge + scale * tw99

    count = int(np.sum(s > threshold))
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
    return WeightOutliers(singular_values=s[:m], noise_level=s2, mp_edge=mp_edge, edge=edge,
                          edge_scale=scale, threshold=threshold, count=count, values=s[:k],
                          left=left, right=right, left_overlap2=ov,
                          identity=np.asarray(ident, dtype=int),
                          right_alignment=np.asarray(align, dtype=np.float64))


# (3 pi / 2)^(2/3): the k-th largest point of the Airy point process sits near
# -(3 pi (k - 1/2) / 2)^(2/3) in Tracy-Widom units (its counting function).
_AIRY_RANK = (1.5 * math.pi) ** (2.0 / 3.0)


def _fit_edge(s: np.ndarray, tw_q: float, window: int | None, max_outliers: int
              ) -> tuple[int, float, float]:
    """Outlier count, bulk edge and Tracy-Widom scale from the top of the bulk.

    Any bulk with a square-root edge (Marchenko-Pastur or a deformation of it)
    has ``#{s_k > x} ~ (2 / 3 pi) ((E - x) / tau)^(3/2)`` near its edge ``E``,
    so the ``j``-th largest bulk value is ``s ~ E - tau (3 pi (j - 1/2) / 2)^(2/3)``.
    A least-squares line of ``s`` against ``(j - 1/2)^(2/3)`` over the top
    ``window`` bulk values gives ``E`` (intercept) and ``tau`` (slope / (3 pi/2)^(2/3)).
    Outliers shift the bulk ranks, so the count and the fit are iterated to a
    fixed point.
    """
    m = s.shape[0]
    K = window if window is not None else max(24, m // 25)
    count = 0
    edge = scale = float("nan")
    for _ in range(10):
        lo = count
        hi = min(m, count + K)
        if hi - lo < 5:
            raise ValueError(f"too few singular values ({m}) to fit the bulk edge; "
                             "use edge_method='mp'")
        j = np.arange(1, hi - lo + 1, dtype=np.float64)
        A = np.stack([np.ones_like(j), (j - 0.5) ** (2.0 / 3.0)], axis=1)
        (edge, slope), *_ = np.linalg.lstsq(A, s[lo:hi], rcond=None)
        edge = float(edge)
        scale = max(float(-slope), 0.0) / _AIRY_RANK
        new = min(int(np.sum(s > edge + scale * tw_q)), max_outliers)
        if new == count:
            break
        count = new
    return count, edge, scale
