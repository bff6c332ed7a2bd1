"""The mean-field two-layer network and its multi-index teacher, as functions of particles.

A network of width ``N`` is a set of particles ``(a_i, w_i)`` (rows ``[a, w]`` of
an ``(N, d+1)`` array) and computes ``f_N(x) = (1/N) sum_i a_i sigma(w_i . x)``.
Shared by the Langevin simulator (:mod:`specdyn.sim.langevin`) and the particle
diagnostics (:mod:`specdyn.measure.atoms`), which is why it lives in neither.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from specdyn import _validate as v
from specdyn._torch import to_numpy
from specdyn._torch import torch as _torch
from specdyn.models.activations import Activation, get_activation

__all__ = ["AtomTeacher", "network_function"]


class AtomTeacher:
    """Multi-index teacher ``f*(x) = sum_k a_k sigma(w_k . x)`` with a few atoms.

    Note the *sum* (not the mean) over atoms: ``atoms`` rows ``[a_k, w_k]`` are
    the target's atoms. Calls accept numpy ``(M, d)`` arrays and return ``(M,)``.
    """

    def __init__(self, activation: str | Activation, atoms: ArrayLike) -> None:
        arr = v.real_array("atoms", atoms)
        if arr.ndim != 2 or arr.shape[1] < 2:
            raise ValueError(f"atoms must have shape (K, d+1) with d >= 1, got {arr.shape}")
        self.activation = get_activation(activation)
        self.atoms = arr.copy()
        self.atoms.setflags(write=False)
        self.d = arr.shape[1] - 1

    def __repr__(self) -> str:
        return f"AtomTeacher({self.activation.name!r}, K={len(self.atoms)}, d={self.d})"

    def __call__(self, x: ArrayLike) -> np.ndarray:
        return len(self.atoms) * network_function(self.atoms, x, self.activation)


def network_function(particles: ArrayLike, x: ArrayLike, activation: str | Activation
                     ) -> np.ndarray:
    """``f_N(x) = (1/N) sum_i a_i sigma(w_i . x)`` at the rows of ``x`` (float64, CPU).

    ``particles`` is ``(N, d+1)`` with rows ``[a, w]`` (numpy or torch); ``x`` is
    ``(M, d)``. Returns a numpy ``(M,)`` array.
    """
    torch = _torch()
    act = get_activation(activation)
    # copies: torch.from_numpy needs writable memory
    p = np.array(to_numpy(particles, np.float64))
    xs = np.array(to_numpy(x, np.float64))
    if p.ndim != 2 or xs.ndim != 2 or xs.shape[1] != p.shape[1] - 1:
        raise ValueError(f"particles (N, d+1) and x (M, d) do not match: {p.shape}, {xs.shape}")
    pt = torch.from_numpy(p)
    xt = torch.from_numpy(xs)
    return to_numpy(act.fn(xt @ pt[:, 1:].T) @ pt[:, 0] / p.shape[0])
