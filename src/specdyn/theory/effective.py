"""Effective linear theory of a nonlinear two-layer student.

A student ``f(x) = a^T phi(W x) / (gamma0 N)`` with preactivations
``h = w . x ~ N(0, q)`` at initialisation, ``q = sigma_w^2 tr(Lambda)``, has the
linear part ``phi(h) ~ c0 + c1 h + ...`` with ``c1 = E[phi'(h)] = E[h phi(h)]/q``
(Stein's lemma), the first Hermite coefficient of ``phi(sqrt(q) z)`` divided by
``sqrt(q)``. On a linear teacher only that part is fitted, so the student acts
as the linear network ``c1 a^T W x / (gamma0 N)``: the linear theory at
``gamma0 / c1`` (``c1 = 1/2`` for ReLU, ``1`` for the identity).

Where it fails (measured, ``docs/theory.md``): ``c1`` is frozen at its initial
value while the preactivation variance grows as features are learned
(``eta_k`` rises from ``sigma_w^2``), which matters for saturating activations
(tanh) in the lazy setting, where ``q`` is already large at ``t = 0``; the
higher Hermite parts of ``phi`` add a kernel the linear theory lacks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TypeVar, cast

import numpy as np
from scipy.special import erf

from specdyn.data.hermite import hermite_coefficients
from specdyn.settings import AlignedSetting, PowerLawSetting, Setting

ArrayFn = Callable[[np.ndarray], np.ndarray]
SettingT = TypeVar("SettingT", PowerLawSetting, AlignedSetting)

#: Activations by name (numpy), the same names as :data:`specdyn.models.activations.ACTIVATIONS`.
NAMED_ACTIVATIONS: dict[str, ArrayFn] = {
    "linear": lambda z: z,
    "relu": lambda z: np.maximum(z, 0.0),
    "tanh": np.tanh,
    "gelu": lambda z: 0.5 * z * (1.0 + erf(z / np.sqrt(2.0))),
    "erf": erf,
    "quadratic": lambda z: z * z,
    "tanh-shift": lambda z: np.tanh(z + 0.5),
}

_C1_MIN = 1e-8  # below this the activation has no usable linear part


def preactivation_variance(s: Setting) -> float:
    """``q = sigma_w^2 tr(Lambda)``: the variance of each preactivation at ``t = 0``."""
    lam, _ = s.spectra()
    return float(s.sigma_w**2 * lam.sum())


def linear_coefficient(activation: str | ArrayFn, var: float) -> float:
    """``c1 = E[phi'(h)] = E[h phi(h)] / var`` for ``h ~ N(0, var)``.

    Computed as the first orthonormal Hermite coefficient of ``phi(sqrt(var) z)``
    (Gauss-Hermite, :func:`specdyn.data.hermite.hermite_coefficients`) over
    ``sqrt(var)``; exact for ReLU (the nodes are symmetric), to ~1e-8 for tanh
    at ``var ~ 5`` (complex poles near the real axis slow the quadrature).

    Parameters
    ----------
    activation
        A name in :data:`NAMED_ACTIVATIONS` or a numpy-vectorised callable.
    var
        Preactivation variance (> 0).
    """
    if not (np.isfinite(var) and var > 0):
        raise ValueError(f"var must be a finite preactivation variance > 0, got {var}")
    name, fn = _resolve(activation)
    scale = float(np.sqrt(var))
    try:
        c = hermite_coefficients(lambda z: np.asarray(fn(scale * z), dtype=np.float64), 1)
    except (TypeError, ValueError) as err:
        raise ValueError(f"activation {name!r}: cannot evaluate it on a float64 array "
                         f"to compute its Hermite coefficient ({err})") from err
    c1 = float(c[1]) / scale
    if not np.isfinite(c1):
        raise ValueError(f"activation {name!r} has no finite first Hermite coefficient")
    return c1


def effective_setting(s: SettingT, activation: str | ArrayFn) -> SettingT:
    """The linear-theory setting of a two-layer student with activation ``activation``.

    ``s`` with ``gamma0 -> gamma0 / c1``, ``c1 = linear_coefficient(activation, q)``
    at the initial preactivation variance ``q = sigma_w^2 tr(Lambda)``
    (:func:`preactivation_variance`). Everything else (spectra, ``sigma_w``,
    ``sigma_a``) is unchanged.

    Raises
    ------
    ValueError
        An unknown activation name, or one without a usable linear part
        (``|c1| < 1e-8``, e.g. ``"quadratic"``, or ``c1 < 0``): the error names it.
    """
    name, _ = _resolve(activation)
    if isinstance(s, PowerLawSetting) and s.D is None:
        raise ValueError("s.D must be set: the preactivation variance sums lambda_k over the "
                         "D modes")
    c1 = linear_coefficient(activation, preactivation_variance(s))
    if not c1 > _C1_MIN:
        raise ValueError(f"activation {name!r} has no usable linear part (first Hermite "
                         f"coefficient c1 = {c1:.3g}): the effective linear theory needs "
                         "c1 > 0")
    if isinstance(s, AlignedSetting):
        return cast(SettingT, AlignedSetting(s.lam_values, s.mu_values, s.sigma_w, s.sigma_a,
                                             s.gamma0 / c1))
    return dataclasses.replace(s, gamma0=s.gamma0 / c1)


def _resolve(activation: str | ArrayFn) -> tuple[str, ArrayFn]:
    if isinstance(activation, str):
        if activation not in NAMED_ACTIVATIONS:
            raise ValueError(f"activation {activation!r} has no known Hermite coefficient: "
                             f"use one of {sorted(NAMED_ACTIVATIONS)} or pass a numpy "
                             "callable")
        return activation, NAMED_ACTIVATIONS[activation]
    if not callable(activation):
        raise ValueError(f"activation must be a name or a callable, got {activation!r}")
    return getattr(activation, "__name__", repr(activation)), activation
