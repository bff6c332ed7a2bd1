"""Spectra of representations and weights: covariance, Gram, streaming.

Conventions
-----------
Covariance spectrum
    ``F`` is ``n x p`` (n samples, p features). The spectrum is the
    eigenvalues of ``F_c^T F_c / n`` where ``F_c`` is ``F`` with its column
    means removed (``center=True``) or ``F`` itself; the divisor is ``n``
    either way. Computed from the smaller of the two Gram matrices
    (``p x p`` or ``n x n``: same nonzero eigenvalues), so only the
    ``min(n, p)`` leading eigenvalues are returned -- the rest are exactly 0.
Weight spectrum
    ``W`` is ``N x D`` (rows x columns; a ``torch.nn.Linear`` weight is
    ``out x in``, ``N`` units by ``D`` inputs). The spectrum is the
    eigenvalues of ``W^T W / c`` (the squared singular values over ``c``),
    with ``c = 1`` for ``normalize="none"``, ``N`` (rows) for ``"rows"``,
    ``D`` (columns) for ``"cols"`` and ``||W||_F^2`` for ``"trace"``
    (eigenvalues sum to 1). With ``"rows"`` a matrix of i.i.d. entries of
    variance ``s2`` has a Marchenko-Pastur spectrum with ``ratio = D / N``
    and ``sigma2 = s2``.
Order and type
    Always float64 numpy arrays, decreasing, tiny negative round-off clipped
    to 0. numpy arrays or torch tensors (CPU or CUDA) are accepted; torch
    input on an accelerator is reduced there in float64 (dense ``eigvalsh``
    of the smaller Gram) and only the eigenvalues come back to the host; CPU
    tensors take the numpy path.
Top eigenvalues
    ``top=k`` returns the ``k`` largest. The smaller Gram is formed (one
    BLAS-3 product, the dominant cost) and, for ``k <= min(n, p) / 5``, its
    top eigenvalues found by Lanczos (``scipy.sparse.linalg.eigsh``) instead
    of a full ``eigvalsh``. ``method="lanczos"`` (and ``"auto"`` when
    ``min(n, p) > 20000``) never forms the Gram: Lanczos on the implicit
    operator ``v -> F_c^T (F_c v) / n``, memory ``O(n p)`` only. Accurate to
    ~1e-12 relative to the largest eigenvalue.
Scale
    The matrix is divided by its largest absolute entry before the Gram is
    formed and the eigenvalues are scaled back, so entries anywhere in
    float64's range give correct eigenvalues; when the eigenvalues themselves
    do not fit in float64 (entries beyond ~1e154 or below ~1e-154 times
    ``sqrt(n)``) a ``ValueError`` says so instead of returning inf or 0.
Kernels
    The eigen/singular decompositions and the zero cut-off live in
    :mod:`specdyn.measure.eigen` (``decompose``, ``symmetric_eigenvalues``,
    ``device_eigenvalues``, ``rank_tolerance``), the Gram spectra on a device
    and their precision policy in :mod:`specdyn.measure.gram_spectra`
    (``gram_eigenvalues``, ``batched_gram_eigenvalues``,
    ``linear_output_eigenvalues``, ``top_gram_eigenvalues``); both are
    importable from here too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from specdyn import _validate as v
from specdyn._torch import to_numpy
from specdyn.measure.eigen import Decomposition as Decomposition
from specdyn.measure.eigen import _check_matrix as _check_matrix
from specdyn.measure.eigen import _is_torch as _is_torch
from specdyn.measure.eigen import decompose as decompose
from specdyn.measure.eigen import device_eigenvalues as device_eigenvalues
from specdyn.measure.eigen import rank_tolerance as rank_tolerance
from specdyn.measure.eigen import symmetric_eigenvalues
from specdyn.measure.gram_spectra import BATCHED_PRECISIONS as BATCHED_PRECISIONS
from specdyn.measure.gram_spectra import F32_RANGE as F32_RANGE
from specdyn.measure.gram_spectra import PRECISIONS as PRECISIONS
from specdyn.measure.gram_spectra import _smaller_gram, gram_eigenvalues
from specdyn.measure.gram_spectra import batched_gram_eigenvalues as batched_gram_eigenvalues
from specdyn.measure.gram_spectra import linear_output_eigenvalues as linear_output_eigenvalues
from specdyn.measure.gram_spectra import top_gram_eigenvalues as top_gram_eigenvalues

__all__ = ["CovarianceAccumulator", "covariance_spectrum", "gram_spectrum", "weight_spectrum"]

_NORMALIZE = ("none", "rows", "cols", "trace")
_METHODS = ("auto", "dense", "lanczos")
# Above this min(n, p) the m x m Gram (8 m^2 bytes: 3.2 GB at 20000) is not formed for top-k.
_GRAM_MAX = 20000


def _top_arg(top: int | None, m: int) -> int | None:
    if top is None:
        return None
    k = v.positive_int("top", top)
    return min(k, m)


def _finish(eigs: np.ndarray, k: int | None) -> np.ndarray:
    out = np.sort(np.asarray(eigs, dtype=np.float64))[::-1]
    out = np.clip(out, 0.0, None)
    return out[:k] if k is not None else out


def _checked(name: str, M: Any, top: int | None, method: str) -> tuple[Any, int | None, str]:
    """The matrix (:func:`_check_matrix`), its ``top`` (at most ``min(n, p)``) and method."""
    X = _check_matrix(name, M)
    meth = v.choice("method", method, _METHODS)
    return X, _top_arg(top, min(int(s) for s in X.shape)), meth


def _lanczos_top(matvec: Any, m: int, k: int) -> np.ndarray:
    from scipy.sparse.linalg import LinearOperator

    op = LinearOperator((m, m), matvec=matvec, dtype=np.float64)
    # the default start vector (seed 0) keeps results reproducible
    return np.asarray(decompose(op, top=k, method="lanczos").values)


def _use_lanczos(method: str, k: int | None, m: int) -> bool:
    """Lanczos on the implicit Gram operator: only when asked, or when the Gram is too big."""
    if method == "dense" or k is None:
        return False
    if method == "lanczos":
        if k >= m:
            raise ValueError(f"top must be < min(n, p) = {m} for method='lanczos', got {k}")
        return True
    return m > _GRAM_MAX and k < m


def _gram_lanczos(m: int, k: int | None) -> bool:
    """Top ``k`` of an explicit ``m x m`` Gram by Lanczos (small ``k``) rather than eigvalsh."""
    return k is not None and m > 600 and k <= m // 5


def _gram_top(G: np.ndarray, k: int) -> np.ndarray:
    """Top ``k`` eigenvalues of an explicit Gram by Lanczos (``_gram_lanczos``)."""
    return np.asarray(decompose(G, top=k, method="lanczos").values)  # seed-0 start


def covariance_spectrum(F: Any, center: bool = True, top: int | None = None, *,
                        method: str = "auto") -> np.ndarray:
    """Eigenvalues of the sample covariance ``F_c^T F_c / n``, decreasing.

    Parameters
    ----------
    F
        ``n x p`` matrix of samples (rows) by features (columns); numpy array
        or torch tensor on any device.
    center
        Remove column means first (the divisor stays ``n``).
    top
        Return only the ``top`` largest eigenvalues.
    method
        ``"auto"`` (form the smaller Gram; Lanczos on it when ``top`` is small;
        the implicit operator only when ``min(n, p) > 20000``), ``"dense"``
        (full ``eigvalsh`` of the smaller Gram) or ``"lanczos"`` (implicit
        operator, never forms the Gram).

    Returns
    -------
    numpy.ndarray
        ``min(n, p)`` (or ``top``) eigenvalues, float64, decreasing.
    """
    X, k, meth = _checked("F", F, top, method)
    eigs, scale = _unit_spectrum(X, center, k, meth)
    return _rescale("F", eigs, scale)


def _unit_spectrum(X: Any, center: bool, k: int | None, meth: str) -> tuple[np.ndarray, float]:
    """Spectrum of ``X / s`` with ``s`` the largest absolute entry, and ``s``.

    Dividing first keeps the Gram finite and its eigenvalues normal floats
    for any finite ``X`` (1e155 * G would overflow, 1e-170 * G underflow).
    """
    n, p = (int(sz) for sz in X.shape)
    if _is_torch(X):
        X = X.double()
        scale = float(X.abs().max().item())
        if X.device.type != "cpu":
            Xs = X / scale if scale > 0 else X
            return _finish(gram_eigenvalues(Xs, center=center), k), scale
        X = to_numpy(X)  # a float64 CPU tensor shares memory with numpy
    else:
        scale = float(np.max(np.abs(X)))
    Xs = X / scale if scale > 0 else X
    if _use_lanczos(meth, k, min(n, p)):
        assert k is not None
        Xc = Xs - Xs.mean(axis=0, keepdims=True) if center else Xs
        if p <= n:
            vals = _lanczos_top(lambda u: Xc.T @ (Xc @ np.ravel(u)) / n, p, k)
        else:
            vals = _lanczos_top(lambda u: Xc @ (Xc.T @ np.ravel(u)) / n, n, k)
        return _finish(vals, k), scale
    if _gram_lanczos(min(n, p), k):
        assert k is not None
        return _finish(_gram_top(_smaller_gram(Xs, center, None, False), k), k), scale
    return _finish(gram_eigenvalues(Xs, center=center), k), scale


def _rescale(name: str, eigs: np.ndarray, scale: float, factor: float = 1.0) -> np.ndarray:
    """``eigs * scale**2 * factor``, or a clear error when that leaves float64's range."""
    if scale == 0.0:
        return eigs
    with np.errstate(over="ignore", under="ignore"):
        out = (eigs * scale) * (scale * factor)
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{name}: its eigenvalues overflow float64 (largest entry "
                         f"{scale:.3g}); divide {name} by a constant first")
    if eigs.size and eigs[0] > 0 and not out[0] > np.finfo(np.float64).tiny:
        raise ValueError(f"{name}: its eigenvalues underflow float64 (largest entry "
                         f"{scale:.3g}); multiply {name} by a constant first")
    return out


def gram_spectrum(H: Any, top: int | None = None, *, method: str = "auto") -> np.ndarray:
    """Eigenvalues of ``H^T H / n``, not centred: ``covariance_spectrum(H, center=False)``."""
    return covariance_spectrum(H, center=False, top=top, method=method)


def weight_spectrum(W: Any, normalize: str = "rows", top: int | None = None, *,
                    method: str = "auto") -> np.ndarray:
    """Eigenvalues of ``W^T W / c`` (squared singular values over ``c``), decreasing.

    Parameters
    ----------
    W
        ``N x D`` weight matrix, rows x columns (numpy or torch); a
        ``torch.nn.Linear`` weight is ``out_features x in_features``.
    normalize
        ``"rows"`` (default): ``c = N``, so i.i.d. entries of variance ``s2``
        give a Marchenko-Pastur spectrum with ``ratio = D / N`` and
        ``sigma2 = s2``; ``"cols"``: ``c = D``; ``"none"``: ``c = 1`` (squared
        singular values, WeightWatcher's convention); ``"trace"``:
        ``c = ||W||_F^2`` (eigenvalues sum to 1).
    top, method
        As in ``covariance_spectrum``.

    Returns
    -------
    numpy.ndarray
        ``min(N, D)`` (or ``top``) eigenvalues, float64, decreasing.
    """
    norm = v.choice("normalize", normalize, _NORMALIZE)
    X, k, meth = _checked("W", W, top, method)
    N, D = (int(s) for s in X.shape)
    # eig(W^T W / N) of W / s, and s; every normalisation is a rescaling of it.
    eigs, scale = _unit_spectrum(X, False, k, meth)
    if norm == "rows":
        return _rescale("W", eigs, scale)
    if norm == "cols":
        return _rescale("W", eigs, scale, N / D)
    if norm == "none":
        return _rescale("W", eigs, scale, float(N))
    if scale == 0.0:
        raise ValueError("W is all zeros: normalize='trace' is undefined")
    Xs = X.double() / scale if _is_torch(X) else X / scale
    fro2 = float((Xs**2).sum().item()) if _is_torch(X) else float(np.sum(Xs * Xs))
    return eigs * (N / fro2)  # the scale cancels


class CovarianceAccumulator:
    """Streaming feature covariance in float64, batch by batch.

    Merges batch means and scatter matrices with Chan's parallel update, so
    centring costs no precision even when the mean is large. Torch batches
    stay on their device; numpy batches are accumulated in numpy.

    Parameters
    ----------
    n_features
        ``p``, the number of columns of every batch; ``None`` takes it from
        the first batch.
    center
        Whether ``covariance()`` subtracts the mean (divisor ``n`` either way).

    Examples
    --------
    >>> acc = CovarianceAccumulator()
    >>> for batch in batches:           # doctest: +SKIP
    ...     acc.update(batch)           # (b, p) arrays or tensors
    >>> eigs = acc.spectrum()           # doctest: +SKIP
    """

    def __init__(self, n_features: int | None = None, center: bool = True) -> None:
        self.n_features = None if n_features is None else v.positive_int("n_features", n_features)
        self.center = bool(center)
        self.count = 0
        self._mean: Any = None
        self._m2: Any = None

    def update(self, batch: Any) -> CovarianceAccumulator:
        """Add the rows of a ``(b, p)`` batch (numpy or torch)."""
        X = _check_matrix("batch", batch)
        b, p = (int(s) for s in X.shape)
        if self.n_features is None:
            self.n_features = p
        if p != self.n_features:
            raise ValueError(f"batch must have {self.n_features} columns, got {p}")
        if _is_torch(X):
            X = X.double()
            mean_b = X.mean(dim=0)
            D = X - mean_b
            m2_b = D.T @ D
        else:
            mean_b = X.mean(axis=0)
            D = X - mean_b
            m2_b = D.T @ D
        if self.count == 0:
            self._mean, self._m2 = mean_b, m2_b
        else:
            n_a, n = self.count, self.count + b
            delta = mean_b - self._mean
            if _is_torch(X):
                self._mean = self._mean.to(X.device)
                self._m2 = self._m2.to(X.device)
                outer = delta[:, None] * delta[None, :]
            else:
                outer = np.outer(delta, delta)
            self._m2 = self._m2 + m2_b + outer * (n_a * b / n)
            self._mean = self._mean + delta * (b / n)
        self.count += b
        return self

    def _require(self) -> None:
        if self.count == 0:
            raise ValueError("no batches were added (call update first)")

    @property
    def mean(self) -> np.ndarray:
        """Feature means so far (float64 numpy)."""
        self._require()
        return to_numpy(self._mean, np.float64)

    def covariance(self) -> np.ndarray:
        """``p x p`` covariance ``F_c^T F_c / n`` (or ``F^T F / n`` if not centred), float64."""
        self._require()
        m2 = to_numpy(self._m2, np.float64)
        if self.center:
            return m2 / self.count
        mu = to_numpy(self._mean, np.float64)
        return (m2 + self.count * np.outer(mu, mu)) / self.count

    def spectrum(self, top: int | None = None) -> np.ndarray:
        """Eigenvalues of ``covariance()``, decreasing (all ``p`` of them, or ``top``)."""
        C = self.covariance()
        k = _top_arg(top, C.shape[0])
        return _finish(symmetric_eigenvalues(C, symmetrize=True), k)
