"""Activation functions with their derivatives, for hand-written backward passes.

Every simulator that needs an activation takes either one of the names in
:data:`ACTIVATIONS` or an :class:`Activation` built from any torch callable and
its derivative. Torch is imported lazily (inside the functions).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from specdyn import _validate as v

__all__ = ["ACTIVATIONS", "Activation", "get_activation"]

Tensor = Any  # torch.Tensor, kept lazy so that importing this module needs no torch
TensorFn = Callable[[Tensor], Tensor]


@dataclass(frozen=True)
class Activation:
    """An elementwise activation ``fn`` and its derivative ``deriv`` (both torch callables)."""

    name: str
    fn: TensorFn
    deriv: TensorFn


def _relu(z: Tensor) -> Tensor:
    return z.clamp_min(0)


def _relu_d(z: Tensor) -> Tensor:
    return (z > 0).to(z.dtype)


def _tanh(z: Tensor) -> Tensor:
    return z.tanh()


def _tanh_d(z: Tensor) -> Tensor:
    return 1 - z.tanh() ** 2


_SQRT2 = math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _gelu(z: Tensor) -> Tensor:
    # exact (erf) GELU: z * Phi(z)
    return 0.5 * z * (1 + (z / _SQRT2).erf())


def _gelu_d(z: Tensor) -> Tensor:
    return 0.5 * (1 + (z / _SQRT2).erf()) + z * _INV_SQRT_2PI * (-0.5 * z * z).exp()


def _erf(z: Tensor) -> Tensor:
    return z.erf()


def _erf_d(z: Tensor) -> Tensor:
    return (2.0 / math.sqrt(math.pi)) * (-z * z).exp()


def _linear(z: Tensor) -> Tensor:
    return z


def _linear_d(z: Tensor) -> Tensor:
    return z.new_ones(()).expand_as(z)


def _quadratic(z: Tensor) -> Tensor:
    return z * z


def _quadratic_d(z: Tensor) -> Tensor:
    return 2 * z


def _tanh_shift(z: Tensor) -> Tensor:
    # tanh(z + 1/2): every Hermite coefficient is non-zero (used for two-step GD)
    return (z + 0.5).tanh()


def _tanh_shift_d(z: Tensor) -> Tensor:
    return 1 - (z + 0.5).tanh() ** 2


ACTIVATIONS: dict[str, Activation] = {
    a.name: a
    for a in (
        Activation("linear", _linear, _linear_d),
        Activation("relu", _relu, _relu_d),
        Activation("tanh", _tanh, _tanh_d),
        Activation("gelu", _gelu, _gelu_d),
        Activation("erf", _erf, _erf_d),
        Activation("quadratic", _quadratic, _quadratic_d),
        Activation("tanh-shift", _tanh_shift, _tanh_shift_d),
    )
}


def get_activation(activation: str | Activation) -> Activation:
    """Resolve a name or pass an :class:`Activation` through; unknown names list the valid ones."""
    if isinstance(activation, Activation):
        return activation
    name = v.choice("activation", activation, ACTIVATIONS)
    return ACTIVATIONS[name]


def numpy_activation(activation: str | Activation) -> tuple[Callable[[Any], Any],
                                                           Callable[[Any], Any]]:
    """``(sigma, sigma')`` of an activation as numpy functions, float64 in and out (for
    quadratures and theories written in numpy; the torch functions evaluated on CPU)."""
    import numpy as np
    import torch

    act = get_activation(activation)

    def on(f: Callable[[Tensor], Tensor]) -> Callable[[Any], Any]:
        return lambda z: f(torch.from_numpy(np.array(z, dtype=np.float64))).numpy()

    return on(act.fn), on(act.deriv)

