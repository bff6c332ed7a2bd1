"""Hermite expansions and single-index targets given by their Hermite coefficients.

Conventions
-----------
* Probabilists' Hermite polynomials ``He_k`` (``He_0 = 1, He_1 = z,
  He_2 = z^2 - 1, ...``), orthogonal for the standard Gaussian weight.
* Expansions use the **orthonormal** basis ``h_k(z) = He_k(z) / sqrt(k!)``, so
  that ``E[h_j(z) h_k(z)] = delta_jk`` for ``z ~ N(0, 1)``:
  ``f(z) = sum_k c_k h_k(z)`` with ``c_k = E[f(z) h_k(z)]`` and, by Parseval,
  ``E[f(z)^2] = sum_k c_k^2``.
* Expectations are computed by Gauss-Hermite quadrature for the weight
  ``exp(-z^2/2)`` (``numpy.polynomial.hermite_e.hermegauss``), normalised by
  ``sqrt(2 pi)`` so that the weights sum to one.
* ``h_k`` is evaluated by the normalised three-term recurrence
  ``h_{k+1} = (z h_k - sqrt(k) h_{k-1}) / sqrt(k+1)``, which never forms ``k!``
  and so stays finite for large degrees.

A single-index target is ``y = sigma*(beta . x)`` with a unit direction
``beta`` and link ``sigma*(z) = sum_k c_k h_k(z)``. Its information exponent
is the smallest ``k >= 1`` with ``c_k != 0``; the quantity
``E[z sigma*(z)^(k+1)]`` decides whether a reused batch lets the second GD step
learn the target (see ``docs/related-works.md``, section 2).

Only numpy is needed; :meth:`HermiteTarget.__call__` and :func:`hermite_eval`
also accept torch tensors (and then return torch tensors) without importing
torch here.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.polynomial import hermite_e
from numpy.typing import ArrayLike

from specdyn import _validate as v

__all__ = [
    "DEFAULT_N_QUAD",
    "HermiteTarget",
    "gaussian_expectation",
    "hermite_coefficients",
    "hermite_eval",
    "hermite_basis",
    "NAMED_TARGETS",
    "random_direction",
]

#: Default number of Gauss-Hermite nodes; exact for polynomials of degree < 400
#: and accurate to ~1e-15 for smooth links such as tanh.
DEFAULT_N_QUAD = 200

#: Names accepted by :meth:`HermiteTarget.named`.
NAMED_TARGETS = ("He1", "He2", "He3", "He2+He3", "tanh")


@lru_cache(maxsize=32)
def _gauss_hermite(n_quad: int) -> tuple[np.ndarray, np.ndarray]:
    nodes, weights = hermite_e.hermegauss(n_quad)
    weights = weights / math.sqrt(2.0 * math.pi)
    nodes.setflags(write=False)
    weights.setflags(write=False)
    return nodes, weights


def _at_nodes(fn: Callable[[np.ndarray], ArrayLike], n_quad: int
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gauss-Hermite ``(nodes, weights, fn(nodes))``, ``n_quad`` and ``fn``'s shape checked."""
    nodes, weights = _gauss_hermite(v.positive_int("n_quad", n_quad))
    vals = np.asarray(fn(nodes.copy()), dtype=np.float64)
    if vals.shape != nodes.shape:
        raise ValueError(f"fn must map an array of shape {nodes.shape} to the same shape, "
                         f"got {vals.shape}")
    return nodes, weights, vals


def gaussian_expectation(fn: Callable[[np.ndarray], ArrayLike], n_quad: int = DEFAULT_N_QUAD
                         ) -> float:
    """``E[fn(z)]`` for ``z ~ N(0, 1)`` by ``n_quad``-point Gauss-Hermite quadrature.

    Exact when ``fn`` is a polynomial of degree ``< 2 n_quad``.
    """
    nodes, weights, vals = _at_nodes(fn, n_quad)
    return float(weights @ vals)


def hermite_basis(z: Any, degree: int) -> list[Any]:
    """``[h_0(z), ..., h_degree(z)]``, the orthonormal Hermite functions at ``z``.

    ``z`` may be a numpy array or a torch tensor; entries have its type and shape.
    """
    degree = v.positive_int("degree", degree, minimum=0)
    h_prev = z * 0 + 1.0
    out = [h_prev]
    if degree == 0:
        return out
    h = z * 1.0
    out.append(h)
    for k in range(1, degree):
        h_prev, h = h, (z * h - math.sqrt(k) * h_prev) / math.sqrt(k + 1)
        out.append(h)
    return out


def hermite_coefficients(fn: Callable[[np.ndarray], ArrayLike], degree: int,
                         n_quad: int = DEFAULT_N_QUAD) -> np.ndarray:
    """Coefficients ``c_0..c_degree`` of ``fn`` in the orthonormal Hermite basis.

    ``c_k = E[fn(z) He_k(z)] / sqrt(k!)`` for ``z ~ N(0, 1)``, so that
    ``fn(z) ~ sum_k c_k He_k(z) / sqrt(k!)``. ``fn`` must be vectorised over a
    float64 numpy array.

    Parameters
    ----------
    fn
        The function to expand (numpy in, numpy out, elementwise).
    degree
        Highest coefficient returned (>= 0).
    n_quad
        Gauss-Hermite nodes (>= 1). Exact for polynomial ``fn`` of degree
        ``< 2 n_quad - degree``.

    Returns
    -------
    numpy.ndarray
        Shape ``(degree + 1,)``, float64.
    """
    degree = v.positive_int("degree", degree, minimum=0)
    nodes, weights, vals = _at_nodes(fn, n_quad)
    if not np.isfinite(vals).all():
        raise ValueError("fn must be finite at the Gauss-Hermite nodes")
    basis = np.stack(hermite_basis(nodes, degree))  # (degree+1, n_quad)
    return basis @ (weights * vals)


def hermite_eval(coeffs: ArrayLike, z: Any) -> Any:
    """``sum_k coeffs[k] He_k(z) / sqrt(k!)`` (orthonormal basis) at ``z``.

    ``z`` may be a scalar, a numpy array or a torch tensor; the result has the
    same type and shape (float64 for numpy input).
    """
    c = _as_coeffs(coeffs)
    if isinstance(z, (int, float, list, tuple, np.ndarray, np.generic)):
        z = np.asarray(z, dtype=np.float64)
    basis = hermite_basis(z, len(c) - 1)
    out = basis[0] * float(c[0])
    for ck, hk in zip(c[1:], basis[1:], strict=True):
        if ck != 0.0:
            out = out + float(ck) * hk
    return out


def _as_coeffs(coeffs: ArrayLike) -> np.ndarray:
    arr = np.asarray(coeffs)
    if arr.size == 0:
        raise ValueError("coeffs must be a non-empty 1-D array of Hermite coefficients, got []")
    if arr.ndim != 1:
        raise ValueError(f"coeffs must be a 1-D array of Hermite coefficients, got shape "
                         f"{arr.shape}")
    return v.real_array("coeffs", arr)


def _unit_direction(direction: ArrayLike) -> np.ndarray:
    beta = v.real_array("direction", direction)
    if beta.ndim != 1:
        raise ValueError(f"direction must be a 1-D vector, got shape {beta.shape}")
    norm = float(np.linalg.norm(beta))
    if not norm > 0:
        raise ValueError("direction must be a non-zero vector")
    return beta / norm


class HermiteTarget:
    """Single-index target ``y = sigma*(beta . x)`` with ``sigma* = sum_k c_k h_k``.

    Parameters
    ----------
    coeffs
        Coefficients ``c_0, c_1, ...`` in the orthonormal Hermite basis
        ``h_k = He_k / sqrt(k!)`` (non-empty, finite). ``E[y^2] = sum c_k^2``
        for ``x ~ N(0, I_d)``.
    direction
        The direction ``beta`` (any non-zero vector; it is normalised to unit
        length). ``None`` means ``beta = e_1`` in whatever dimension the input
        has.
    fn
        Optional exact link (numpy, elementwise). When given, quadratures such
        as :meth:`reuse_quantity` use it instead of the truncated expansion, and
        calls still use the expansion (so ``coeffs`` define the target).
    """

    #: Coefficients with ``|c_k| <= tol * max(1, max|c|)`` count as zero.
    tol: float = 1e-10

    def __init__(self, coeffs: ArrayLike, direction: ArrayLike | None = None,
                 fn: Callable[[np.ndarray], ArrayLike] | None = None, name: str | None = None
                 ) -> None:
        self.coeffs = _as_coeffs(coeffs).copy()
        self.coeffs.setflags(write=False)
        self.direction = None if direction is None else _unit_direction(direction)
        if self.direction is not None:
            self.direction.setflags(write=False)
        self.fn = fn
        self.name = name

    def __repr__(self) -> str:
        D = None if self.direction is None else self.direction.shape[0]
        label = f"{self.name!r}, " if self.name else ""
        return f"HermiteTarget({label}coeffs={np.round(self.coeffs, 6).tolist()}, D={D})"

    # --- construction -------------------------------------------------------------------
    @classmethod
    def from_function(cls, fn: Callable[[np.ndarray], ArrayLike], degree: int,
                      direction: ArrayLike | None = None, n_quad: int = DEFAULT_N_QUAD,
                      name: str | None = None) -> HermiteTarget:
        """Target with link ``fn`` expanded up to ``degree`` (:func:`hermite_coefficients`)."""
        return cls(hermite_coefficients(fn, degree, n_quad), direction, fn=fn, name=name)

    @classmethod
    def named(cls, name: str, D: int | None = None, seed: int | None = 0) -> HermiteTarget:
        """One of the standard targets of :data:`NAMED_TARGETS`, each with ``E[y^2] = 1``.

        * ``"He1"``: ``h_1 = z`` (information exponent 1),
        * ``"He2"``: ``h_2 = (z^2 - 1)/sqrt 2`` (exponent 2, even: ``E[z sigma*^m] = 0``),
        * ``"He3"``: ``h_3 = (z^3 - 3z)/sqrt 6`` (exponent 3),
        * ``"He2+He3"``: ``(h_2 + h_3)/sqrt 2`` (exponent 2, ``E[z sigma*^2] != 0``),
        * ``"tanh"``: ``tanh(z)`` expanded to degree 25, rescaled to ``E[y^2] = 1``.

        ``D`` given: the direction is uniform on the unit sphere of ``R^D``,
        drawn with ``numpy.random.default_rng(seed)``; ``D=None`` leaves it unset
        (``beta = e_1``).
        """
        name = v.choice("name", name, NAMED_TARGETS)
        fn: Callable[[np.ndarray], ArrayLike] | None = None
        if name == "He1":
            c = np.array([0.0, 1.0])
        elif name == "He2":
            c = np.array([0.0, 0.0, 1.0])
        elif name == "He3":
            c = np.array([0.0, 0.0, 0.0, 1.0])
        elif name == "He2+He3":
            c = np.array([0.0, 0.0, 1.0, 1.0]) / math.sqrt(2.0)
        else:
            scale = 1.0 / math.sqrt(gaussian_expectation(lambda z: np.tanh(z) ** 2))

            def fn(z: np.ndarray) -> np.ndarray:
                return scale * np.tanh(z)

            c = hermite_coefficients(fn, 25)
        direction = None
        if D is not None:
            D = v.positive_int("D", D)
            direction = random_direction(D, 0 if seed is None else seed)
        return cls(c, direction, fn=fn, name=name)

    def with_direction(self, direction: ArrayLike) -> HermiteTarget:
        """The same link with direction ``direction`` (normalised)."""
        return HermiteTarget(self.coeffs, direction, fn=self.fn, name=self.name)

    # --- properties ---------------------------------------------------------------------
    @property
    def degree(self) -> int:
        """Index of the last coefficient stored."""
        return len(self.coeffs) - 1

    @property
    def second_moment(self) -> float:
        """``E[y^2] = sum_k c_k^2`` (Parseval)."""
        return float(self.coeffs @ self.coeffs)

    def _nonzero(self) -> np.ndarray:
        scale = max(1.0, float(np.max(np.abs(self.coeffs))))
        return np.abs(self.coeffs) > self.tol * scale

    @property
    def information_exponent(self) -> int | None:
        """Smallest ``k >= 1`` with ``c_k != 0``; ``None`` for a constant target."""
        nz = np.flatnonzero(self._nonzero()[1:])
        return int(nz[0]) + 1 if nz.size else None

    def link(self, z: Any) -> Any:
        """``sigma*(z)`` from the stored expansion (numpy or torch)."""
        return hermite_eval(self.coeffs, z)

    def _link_numpy(self, z: np.ndarray) -> np.ndarray:
        if self.fn is not None:
            return np.asarray(self.fn(z), dtype=np.float64)
        return np.asarray(hermite_eval(self.coeffs, z), dtype=np.float64)

    def reuse_quantity(self, k: int, n_quad: int | None = None) -> float:
        """``E[z sigma*(z)^(k+1)]`` for ``z ~ N(0, 1)``, by Gauss-Hermite quadrature.

        With batch reuse the second GD step aligns its ``k``-th learned direction
        with ``beta`` iff this is non-zero (``docs/related-works.md``, section 2).
        The default node count makes the quadrature exact for the polynomial
        link (degree ``1 + degree * (k+1)``).
        """
        k = v.positive_int("k", k)
        if n_quad is None:
            n_quad = max(DEFAULT_N_QUAD, (2 + self.degree * (k + 1)) // 2 + 2)
        return gaussian_expectation(lambda z: z * self._link_numpy(z) ** (k + 1), n_quad)

    # --- evaluation ---------------------------------------------------------------------
    def projection(self, x: Any) -> Any:
        """``x @ beta`` (numpy or torch, shape ``(..., d) -> (...)``)."""
        d = x.shape[-1]
        if self.direction is None:
            return x[..., 0]
        if self.direction.shape[0] != d:
            raise ValueError(f"x must have last dimension {self.direction.shape[0]} "
                             f"(the direction's), got {d}")
        if isinstance(x, np.ndarray):
            return x @ self.direction
        beta = x.new_tensor(self.direction)  # torch: same dtype and device as x
        return x @ beta

    def __call__(self, x: Any) -> Any:
        """``y = sigma*(x @ beta)`` for ``x`` of shape ``(..., d)`` (numpy or torch)."""
        if isinstance(x, (list, tuple)):
            x = np.asarray(x, dtype=np.float64)
        if isinstance(x, np.ndarray):
            x = x.astype(np.float64, copy=False)
            if x.ndim < 1:
                raise ValueError("x must have shape (..., d)")
        return self.link(self.projection(x))

    def sample(self, M: int, D: int | None = None, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """``(X, y)`` with ``X`` of ``M`` rows ``x ~ N(0, I_D)`` and ``y = self(X)`` (float64).

        ``D`` defaults to the direction's dimension (required when the
        direction is unset).
        """
        M = v.positive_int("M", M)
        if D is None:
            if self.direction is None:
                raise ValueError("D must be given when the target has no direction")
            D = self.direction.shape[0]
        D = v.positive_int("D", D)
        X = np.random.default_rng(seed).standard_normal((M, D))
        return X, self(X)


def random_direction(D: int, seed: int = 0) -> np.ndarray:
    """A unit vector uniform on the sphere of ``R^D`` (``numpy.random.default_rng(seed)``)."""
    D = v.positive_int("D", D)
    g = np.random.default_rng(seed).standard_normal(D)
    return g / np.linalg.norm(g)

