"""How much a data set's per-mode spectra would change with another sample: their
sampling covariance, from one more pass over the rows.

The exponents of a data set (:func:`specdyn.measure.data_exponents`) are least-squares
slopes of ``log lambda_k`` and ``log(lambda_k mu_k) = log(|c_k|^2 / lambda_k)`` over a
window of modes, so their sampling variance is a quadratic form in the covariance of
those logs. Each is a smooth function of the sample means ``Sigma`` and ``C``, so to first
order (the delta method) its error is the mean over samples of its *influence*, and its
covariance is that of the influences divided by ``M``. With ``z = U^T (x - x_mean)`` the
sample in the eigenbasis and ``y`` the centred target, the influence of a sample on

- ``log lambda_k`` is ``z_k^2 / lambda_k - 1`` (first-order eigenvalue perturbation);
- ``log |c_k|^2`` is ``2 (z_k (y . c_k) + z_k sum_{j != k} z_j (c_j . c_k) /
  (lambda_k - lambda_j)) / |c_k|^2 - 2``: the target's own noise plus the rotation of
  the eigenvector ``u_k`` towards ``u_j`` (first-order eigenvector perturbation).

No Gaussian assumption: the influences' covariance is measured on the data (heavy
tails included). Measured on the documented synthetic example (``D = 32``, ``M =
2000``, modes 2..12, 300 seeds): the 95 % intervals covered the planted ``alpha`` in 96 %
of seeds, ``alpha + beta`` in 97 %; a rotated teacher's ``beta`` in 95 %. For an
*aligned* teacher the first-order influence on ``log mu_k`` vanishes (its error is second
order, the eigenvector's rotation squared) and the plug-in estimate over-states it, so
the ``beta`` interval is conservative there (98 %). Student-t inputs (5 degrees of
freedom) gave 93 %.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from specdyn.data.empirical import DataDecomposition
from specdyn.data.moments import row_blocks

__all__ = ["log_spectra_covariance"]


def log_spectra_covariance(X: Any, Y: Any, dec: DataDecomposition, kmax: int, *,
                           columns: np.ndarray | None = None,
                           progress: bool = False) -> np.ndarray:
    """The sampling covariance of ``(log lambda_k, log lambda_k mu_k)``, ``k <= kmax``.

    Parameters
    ----------
    X, Y
        The data ``dec`` was built from (any arrays, :class:`~specdyn.data.NpyRows`
        included; read in blocks of rows).
    dec
        Its decomposition.
    kmax
        The last mode, ``<= dec.D``.
    columns
        The columns of ``X`` that ``dec`` kept (default all).
    progress
        A progress bar on a terminal.

    Returns
    -------
    numpy.ndarray
        ``(2 kmax, 2 kmax)``: rows and columns ``log lambda_1..kmax`` then ``log
        lambda_k mu_k``, ``k = 1..kmax``; NaN where ``c_k = 0`` (no target on the mode).
    """
    K = int(kmax)
    lam, c = dec.lam, dec.coeffs
    c2 = (c[:K] * c[:K]).sum(axis=1)
    gram = c @ c[:K].T  # c_j . c_k
    gap = lam[None, :K] - lam[:, None]
    # exactly equal eigenvalues have no eigenvectors to perturb: no rotation term
    tiny = 1e-12 * lam[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        h = np.where(np.abs(gap) > tiny, gram / np.where(np.abs(gap) > tiny, gap, 1.0), 0.0)
    h[np.arange(K), np.arange(K)] = 0.0
    proj = np.concatenate([dec.U[:, :K], dec.U @ h], axis=1)  # x -> (z_k, sum_j z_j h_jk)
    safe = np.where(c2 > 0, c2, 1.0)
    acc = np.zeros((2 * K, 2 * K))
    for _, x, y in row_blocks(X, Y, columns=columns, desc="intervals", progress=progress):
        assert y is not None
        zz = (x - dec.x_mean) @ proj
        z, zh = zz[:, :K], zz[:, K:]
        yc = (y - dec.y_mean) @ c[:K].T
        inf_l = z * z / lam[:K] - 1.0
        inf_ab = 2.0 * z * (yc + zh) / safe - 2.0 - inf_l
        block = np.concatenate([inf_l, inf_ab], axis=1)
        acc += block.T @ block
    cov = acc / float(dec.M) ** 2
    cov[K:, :][c2 == 0] = np.nan
    cov[:, K:][:, c2 == 0] = np.nan
    return cov
