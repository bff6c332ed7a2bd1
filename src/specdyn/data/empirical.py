"""From a data set ``(X, Y)`` to the paper's aligned theory: spectra, coefficients, misalignment.

The core paper solves the two-layer linear network when the input covariance
``Sigma`` and the teacher Gram ``Theta Theta^T`` are diagonal in one basis (its
Eqs. 4-8). For data, the network's full-batch dynamics depend on the data only
through ``Sigma = X^T X / M``, ``C = X^T Y / M`` and ``Y^T Y / M``
(:mod:`specdyn.sim.gram`). In the eigenbasis ``U`` of ``Sigma``
(``lambda_1 >= lambda_2 >= ...``) write the rows of ``U^T C`` as
``c_k`` (length ``P``). The paper's structure is ``C = U diag(lambda_k theta_k) V^T``
with orthonormal output directions ``V``, i.e. the rows ``c_k`` mutually orthogonal,
and then ``theta_k = |c_k| / lambda_k``.

:func:`decompose_data` first **centres** ``X`` and ``Y`` (subtracts each column's mean; the
means are kept in ``x_mean`` and ``y_mean``). The theory's inputs are second moments,
and an uncentred column turns its mean into a spurious top mode: ``X`` with a mean
offset of 3 gave ``lambda_1 = 450`` and a misalignment of 6e-7 instead of 0.042.
Centring is what a network with biases sees (the bias absorbs the means), and every
student trained through :class:`DataTeacher` is fed the same centred data.

:func:`decompose_data` then returns, for any data:

- ``lam``: the eigenvalues of ``Sigma`` above ``rtol * lambda_1`` (modes with no
  variance, such as the blank corners of the digits, are dropped) and ``U``;
- ``mu``: the target's strength per input mode, ``mu_k = |c_k|^2 / lambda_k^2``
  (the diagonal of the least-squares teacher's Gram ``Theta Theta^T`` in the
  eigenbasis, Eq. 7);
- the misalignment: orthonormalise the ``c_k`` in order of decreasing input
  variance (Gram-Schmidt, ``V``); in that output basis ``U^T C V`` is lower
  triangular, and row ``k``'s mass off the diagonal is the part of mode ``k``'s
  target that points along output directions already used by stronger modes.
  ``misalignment[k] = 1 - (U^T C V)_kk^2 / |c_k|^2`` is 0 for an aligned teacher
  and 1 for a mode with no output direction of its own (every mode beyond rank
  ``P``); ``total_misalignment`` is the same fraction of the whole
  cross-covariance mass ``sum_k |c_k|^2``;
- the **output overlap** (:meth:`DataDecomposition.output_overlap`): the root mean
  square of the cosines between the rows ``c_j`` and ``c_k`` of the modes
  ``1..kmax`` (``j != k``), 0 for an aligned teacher. Every mode counts the same,
  where ``total_misalignment`` weighs a mode by ``|c_k|^2`` (so the top modes decide it);
  this is the measure that orders the aligned theory's error on data
  (``docs/real-data.md``: Spearman 0.96 over seven tasks against 0.29 for
  ``total_misalignment`` and 0.46 for :meth:`~DataDecomposition.offdiagonal_share`).

:func:`aligned_setting` builds the :class:`~specdyn.settings.AlignedSetting` of
the data's own ``lambda_k`` and ``mu_k`` (no power-law fit), for the exact theory;
:class:`DataTeacher` is the data set as a teacher for the simulators, whose
"population" is the data set itself (full-batch GD on it is exact).
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np

from specdyn import _validate as v
from specdyn._repr import array_result
from specdyn.data.moments import DataMoments, accumulate
from specdyn.data.teacher import PowerLawTeacher
from specdyn.settings import AlignedSetting

__all__ = ["CrossModes", "DataDecomposition", "DataTeacher", "aligned_setting",
           "decompose_data"]

#: Modes with variance below this fraction of the largest are dropped (no variance: no mode).
RANK_RTOL = 1e-9
#: Singular values of ``C`` below this fraction of the largest are rounding, not modes (the
#: exact reference's reduction to the row space of ``C`` uses the same cut).
CROSS_RTOL = 1e-12


@array_result
class DataDecomposition:
    """The data in the eigenbasis of its input covariance (see the module docstring).

    Attributes
    ----------
    lam
        ``lambda_k``, decreasing, the ``D`` kept modes (``D <= X.shape[1]``).
    U
        ``X.shape[1] x D``: eigenvectors of ``Sigma``, column ``k`` for ``lambda_k``.
    coeffs
        ``D x P``: ``U^T C``, the target's cross-covariance with each input mode.
    mu
        ``mu_k = |c_k|^2 / lambda_k^2``, the teacher strength of mode ``k``.
    misalignment
        Per mode, in ``[0, 1]``: 0 aligned, 1 no output direction of its own.
    total_misalignment
        ``sum_k |c_k|^2 misalignment_k / sum_k |c_k|^2``.
    V
        ``P x P`` orthonormal output basis (Gram-Schmidt of the ``c_k`` in mode
        order, completed); ``U^T C V`` is lower triangular.
    syy
        ``Y^T Y / M`` (``P x P``) of the centred ``Y``.
    M
        Number of samples.
    x_mean, y_mean
        The column means removed from ``X`` and ``Y`` (lengths ``X.shape[1]``, ``P``).
    """

    lam: np.ndarray
    U: np.ndarray
    coeffs: np.ndarray
    mu: np.ndarray
    misalignment: np.ndarray
    total_misalignment: float
    V: np.ndarray
    syy: np.ndarray
    M: int
    x_mean: np.ndarray
    y_mean: np.ndarray

    @classmethod
    def from_moments(cls, m: DataMoments, rtol: float = RANK_RTOL) -> DataDecomposition:
        """The decomposition of the data whose moments are ``m``
        (:func:`specdyn.data.moments.accumulate`); :func:`decompose_data` from arrays."""
        evals, vecs = _decomposition(m.sxx, "eigh")
        if not evals[0] > 0:
            raise ValueError("X must have nonzero variance (its covariance is zero)")
        keep = evals > rtol * evals[0]
        lam, U = evals[keep], vecs[:, keep]
        # a deterministic sign per eigenvector: its largest entry positive
        sign = np.sign(U[np.argmax(np.abs(U), axis=0), np.arange(U.shape[1])])
        U = U * np.where(sign == 0, 1.0, sign)
        coeffs = U.T @ m.sxy
        row2 = (coeffs * coeffs).sum(axis=1)
        V, diag = _orthonormal_rows(coeffs)
        with np.errstate(invalid="ignore", divide="ignore"):
            mis = np.where(row2 > 0, 1.0 - diag**2 / np.where(row2 > 0, row2, 1.0), 0.0)
        mis = np.clip(mis, 0.0, 1.0)
        total = float((row2 * mis).sum() / row2.sum()) if row2.sum() > 0 else 0.0
        x_mean, y_mean = np.array(m.x_mean), np.array(m.y_mean)
        for a in (lam, U, coeffs, mis, V, x_mean, y_mean):
            a.setflags(write=False)
        return cls(lam=lam, U=U, coeffs=coeffs, mu=row2 / lam**2, misalignment=mis,
                   total_misalignment=total, V=V, syy=np.array(m.syy), M=m.M,
                   x_mean=x_mean, y_mean=y_mean)

    @property
    def D(self) -> int:
        """Number of kept modes."""
        return int(self.lam.size)

    @property
    def P(self) -> int:
        """Output dimension."""
        return int(self.coeffs.shape[1])

    def project(self, X: np.ndarray) -> np.ndarray:
        """Centred inputs in the kept eigenbasis: ``(X - x_mean) U`` (``M x D``); for the
        data ``dec`` was built from, their covariance is ``diag(lam)``."""
        return (np.asarray(X, dtype=np.float64) - self.x_mean) @ self.U

    def _window(self, kmax: int | None) -> int:
        if kmax is None:
            return self.D
        k = v.positive_int("kmax", kmax, minimum=2)
        if k > self.D:
            raise ValueError(f"kmax must be in [2, {self.D}] (the kept modes), got {k}")
        return k

    def mode_overlap(self, kmax: int | None = None) -> np.ndarray:
        """Per mode ``k <= kmax``: the root mean square over ``j != k`` (``j <= kmax``) of
        ``cos(c_j, c_k)``, the overlap of mode ``k``'s target with the other modes' (0 for
        an aligned teacher; a mode with ``c_k = 0`` overlaps nothing)."""
        K = self._window(kmax)
        c = self.coeffs[:K]
        n = np.sqrt((c * c).sum(axis=1))
        unit = c / np.where(n > 0, n, 1.0)[:, None]
        cos2 = (unit @ unit.T) ** 2
        np.fill_diagonal(cos2, 0.0)
        return np.sqrt(cos2.sum(axis=1) / max(K - 1, 1))

    def output_overlap(self, kmax: int | None = None) -> float:
        """The output overlap of the modes ``1..kmax`` (default all): the root mean square
        of ``cos(c_j, c_k)`` over the pairs ``j != k`` (the module docstring); in
        ``[0, 1]``, 0 for an aligned teacher."""
        return float(np.sqrt(np.mean(self.mode_overlap(kmax) ** 2)))

    def offdiagonal_share(self) -> float:
        """The share of ``Theta Theta^T`` off its diagonal, ``|off|_F^2 / |Theta
        Theta^T|_F^2`` (``Theta = diag(1/lambda) U^T C``, the least-squares teacher):
        the quantity core Eq. (7) sets to zero. Depends on ``M`` through the small-variance
        modes' noisy ``Theta`` rows (patches: 0.23 at ``M = 1000``, 0.13 at 4000)."""
        th = self.coeffs / self.lam[:, None]
        tt = th @ th.T
        total = float((tt * tt).sum())
        if total == 0:
            return 0.0
        return float((total - float((np.diagonal(tt) ** 2).sum())) / total)

    def cross_modes(self) -> CrossModes:
        """The SVD of the input-output covariance ``C`` (the rank-``P`` picture)."""
        return self._cross

    @cached_property
    def _cross(self) -> CrossModes:
        left, sv, right_t = _decomposition(self.coeffs, "svd")
        r = int(np.sum(sv > CROSS_RTOL * sv[0])) if sv.size and sv[0] > 0 else 0
        return CrossModes(s=sv[:r], left=left[:, :r], right=right_t[:r].T)

    @property
    def rank(self) -> int:
        """The rank of ``C``: the number of modes the target can drive (``<= min(D, P)``)."""
        return self.cross_modes().rank

    def teacher_spectrum(self) -> np.ndarray:
        """Eigenvalues of the least-squares teacher's Gram ``Theta Theta^T`` (``Theta =
        Sigma^-1 C``), decreasing, the ``rank`` nonzero ones: the teacher's *own*
        spectrum, whose exponent is the paper's ``beta`` when the teacher is aligned
        (Eq. 8). ``mu_k`` is its diagonal in the inputs' eigenbasis, which is what drives
        the representation."""
        sv = _decomposition(self.coeffs / self.lam[:, None], "singular values")
        return sv[:self.rank] ** 2


@array_result
class CrossModes:
    """The input-output covariance mode by mode: ``U^T C = sum_r s_r left_r right_r^T``.

    Attributes
    ----------
    s
        Singular values of ``C``, decreasing (those above ``CROSS_RTOL`` of the largest).
    left
        ``D x r``: each singular mode's weights on the input modes ``k`` (in the
        eigenbasis of ``Sigma``: row ``k`` is input mode ``k``).
    right
        ``P x r``: each singular mode's output direction.
    """

    s: np.ndarray
    left: np.ndarray
    right: np.ndarray

    @property
    def rank(self) -> int:
        """The number of singular modes: the rank of ``C``."""
        return int(self.s.size)

    def top_input_mode(self) -> np.ndarray:
        """Per singular mode: the input mode ``k`` (1-based) it weighs most."""
        return np.argmax(np.abs(self.left), axis=0) + 1

    def input_spread(self) -> np.ndarray:
        """Per singular mode: the participation ratio of its input weights, ``1 / sum_k
        left_kr^4`` (1: one input mode; ``D``: all alike)."""
        return 1.0 / np.sum(self.left**4, axis=0)


def _decomposition(m: np.ndarray, kind: str) -> Any:
    """The data layer's one decomposition, float64 (it sits below ``measure``):
    ``"eigh"`` of a symmetric matrix, decreasing ``(w, U)``; ``"svd"`` ``(U, s, V^T)``
    thin; ``"singular values"``."""
    if kind == "eigh":
        w, u = np.linalg.eigh(m)
        order = np.argsort(w)[::-1]
        return w[order], u[:, order]
    if kind == "svd":
        return np.linalg.svd(m, full_matrices=False)
    return np.linalg.svd(m, compute_uv=False)


def _check_xy(X: Any, Y: Any) -> tuple[np.ndarray, np.ndarray]:
    x = v.real_array("X", X)
    y = v.real_array("Y", Y)
    if x.ndim != 2 or y.ndim != 2:
        raise ValueError(f"X and Y must be 2-D (samples x features), got shapes {x.shape} "
                         f"and {y.shape}")
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"X and Y must have the same number of rows (samples), got "
                         f"{x.shape[0]} and {y.shape[0]}")
    if x.shape[0] < 2 or x.shape[1] < 1 or y.shape[1] < 1:
        raise ValueError(f"X must have at least 2 samples and 1 feature, Y 1 output, got "
                         f"{x.shape} and {y.shape}")
    return x, y


def _orthonormal_rows(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gram-Schmidt of the rows of ``c`` (``D x P``) in order: ``(V, diag)``.

    ``V`` is ``P x P`` orthonormal with ``c V`` lower triangular; ``diag[k]`` is
    ``(c V)_kk`` (0 for a row with nothing new, and for every row beyond rank ``P``).
    """
    D, P = c.shape
    norms = np.sqrt((c * c).sum(axis=1))
    scale = norms.max() if norms.size and norms.max() > 0 else 1.0
    basis = np.zeros((P, P))  # rows: the orthonormal directions found so far
    n = 0
    diag = np.zeros(D)

    def remainder(r: np.ndarray) -> np.ndarray:
        for _ in range(2):  # twice is enough (Kahan): orthogonal to rounding
            r = r - basis[:n].T @ (basis[:n] @ r)
        return r

    for k in range(D):
        if n == P:
            break
        r = remainder(c[k])
        nr = float(np.sqrt(r @ r))
        # a remainder at rounding level of the largest row is no new direction
        if nr > 1e-10 * scale:
            basis[n] = r / nr
            diag[k] = float(c[k] @ basis[n])
            n += 1
    # complete to a P x P orthonormal basis (directions no mode uses)
    for j in range(P):
        if n == P:
            break
        r = remainder(np.eye(P)[j])
        nr = float(np.sqrt(r @ r))
        if nr > 1e-8:
            basis[n] = r / nr
            n += 1
    return basis.T.copy(), diag


def decompose_data(X: Any, Y: Any, rtol: float = RANK_RTOL) -> DataDecomposition:
    """Eigenpairs of ``Sigma``, the target's coefficients, ``mu_k`` and the misalignment.

    Parameters
    ----------
    X, Y
        ``M x D`` inputs and ``M x P`` targets; both are centred here (the column
        means are subtracted and kept in ``x_mean``, ``y_mean``), then the statistics
        are second moments, ``X^T X / M``, as the networks see them (accumulated over
        blocks of rows: :mod:`specdyn.data.moments`).
    rtol
        Modes with ``lambda_k <= rtol * lambda_1`` are dropped, in ``[0, 1)``.

    Returns
    -------
    DataDecomposition
    """
    x, y = _check_xy(X, Y)
    rtol = v.in_range("rtol", rtol, 0.0, 1.0, hi_open=True)
    return DataDecomposition.from_moments(accumulate(x, y), rtol)


def aligned_setting(dec: DataDecomposition, sigma_w: float, sigma_a: float,
                    gamma0: float) -> AlignedSetting:
    """The aligned setting of the data's own spectra: ``lambda_k`` and ``mu_k`` of ``dec``.

    Exact for an aligned teacher (misalignment 0): then the network's Grams in the
    bases ``U`` and ``V`` evolve mode by mode as the paper's Appendix D solves.
    """
    return AlignedSetting(dec.lam, dec.mu, sigma_w, sigma_a, gamma0)


class DataTeacher(PowerLawTeacher):
    """A data set as the teacher of the simulators: the data set is the population.

    ``population()`` returns the data's ``(Sigma, C)`` expressed in its kept
    eigenbasis (``Sigma = diag(lambda)``), ``output_second_moment()`` its
    ``Y^T Y / M``; ``sample(M)`` returns the first ``M`` samples (all of them for
    the data set's own ``M``), never new ones; all of the centred data, as
    :func:`decompose_data` saw them. So ``train_linear(..., M=None,
    teacher=...)`` is full-batch GD on the data set, exactly, and
    ``train_two_layer(..., M=dec.M, teacher=...)`` trains on the same samples.
    The teacher bases are ``I`` (inputs, already in the eigenbasis) and ``V``
    (outputs), so the recorded diagonals ``eta``, ``xi``, ``zeta`` are the
    per-mode Gram entries the aligned theory describes.

    Parameters
    ----------
    setting
        The :func:`aligned_setting` of ``dec`` (its ``lambda_k`` must be ``dec.lam``).
    dec
        The decomposition of ``(X, Y)``.
    X, Y
        The data (``M x D_raw`` and ``M x P``), the same as ``dec`` was built from.
    """

    def __init__(self, setting: AlignedSetting, dec: DataDecomposition, X: Any, Y: Any) -> None:
        if not isinstance(setting, AlignedSetting) or setting.D != dec.D or not np.allclose(
                setting.lam_values, dec.lam, rtol=1e-12, atol=0.0):
            raise ValueError("setting must be the aligned_setting of dec (same lambda_k)")
        x, y = _check_xy(X, Y)
        if x.shape[0] != dec.M or x.shape[1] != dec.U.shape[0] or y.shape[1] != dec.P:
            raise ValueError(f"X and Y must be the data dec was built from: shapes "
                             f"({dec.M}, {dec.U.shape[0]}) and ({dec.M}, {dec.P}), got "
                             f"{x.shape} and {y.shape}")
        super().__init__(setting, P=dec.P)
        self.dec = dec
        self.basis_y = dec.V
        self._x = dec.project(x)  # centred, as decompose_data saw them
        self._y = y - dec.y_mean
        self._x.setflags(write=False)
        self.theta = np.asarray(dec.coeffs / dec.lam[:, None])  # least-squares teacher, D x P
        self.theta.setflags(write=False)

    @property
    def aligned(self) -> bool:
        """Whether the misalignment is exactly zero."""
        return bool(self.dec.total_misalignment == 0.0)

    def population(self) -> tuple[np.ndarray, np.ndarray]:
        """The data's ``(Sigma, C)`` in its eigenbasis: ``(diag(lambda), U^T C)``."""
        sigma = self._x.T @ self._x / self.dec.M
        return 0.5 * (sigma + sigma.T), self._x.T @ self._y / self.dec.M

    def output_second_moment(self) -> np.ndarray:
        """``Y^T Y / M``."""
        return np.array(self.dec.syy)

    def sample(self, M: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """The first ``M`` centred samples ``((X - x_mean) U, Y - y_mean)`` (``seed`` is
        unused: the data are fixed)."""
        M = v.positive_int("M", M)
        if M > self.dec.M:
            raise ValueError(f"M must be <= {self.dec.M} (the data set's size), got {M}")
        return self._x[:M].copy(), self._y[:M].copy()

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict description (sizes and misalignment; not the data)."""
        return {"kind": "data", "D": self.D, "P": self.P, "M": self.dec.M,
                "total_misalignment": self.dec.total_misalignment}

    def __repr__(self) -> str:
        return f"DataTeacher(D={self.D}, P={self.P}, M={self.dec.M})"
