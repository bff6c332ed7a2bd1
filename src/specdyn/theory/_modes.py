"""Per-mode quantities shared by the closed forms (private)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from specdyn.settings import PowerLawSetting, Setting, as_modes, as_times


@dataclass(frozen=True)
class Modes:
    """Mode constants of the both-layers solution, broadcast against time.

    ``m = gamma0 theta_k`` is the fixed point of ``xi_k``; ``q = sqrt(S^2 + 4 m^2)``;
    ``r = r_k^+ = 2 m / (S + q)`` in (0, 1); ``b = lambda_k q / gamma0^2`` the
    rate in ``E_k(t) = exp(b t)``; ``one_minus_r`` is ``1 - r`` without
    cancellation.
    """

    lam: np.ndarray
    theta: np.ndarray
    m: np.ndarray
    q: np.ndarray
    r: np.ndarray
    one_minus_r: np.ndarray
    b: np.ndarray
    S: float


def modes(s: Setting, k: ArrayLike) -> Modes:
    """Validate ``k`` for ``s`` and compute the mode constants."""
    return mode_constants(s, as_modes(s, k))


def mode_constants(s: Setting, kk: np.ndarray) -> Modes:
    """Mode constants at already-validated (possibly non-integer, even < 1) modes ``kk``."""
    lam = s.lam(kk)
    theta = np.sqrt(s.mu(kk))
    S = s.S
    m = s.gamma0 * theta
    q = np.sqrt(S * S + 4.0 * m * m)
    r = 2.0 * m / (S + q)
    # 1 - r = S (q + 2m + S) / ((q + 2m)(S + q)), free of cancellation when r -> 1
    one_minus_r = S * (q + 2.0 * m + S) / ((q + 2.0 * m) * (S + q))
    b = lam * q / s.gamma0**2
    return Modes(lam, theta, m, q, r, one_minus_r, b, S)


def grid(s: Setting, k: ArrayLike, t: ArrayLike) -> tuple[Modes, np.ndarray]:
    """Mode constants and validated times, checked to broadcast together."""
    md = modes(s, k)
    tt = as_times(t)
    try:
        np.broadcast_shapes(md.lam.shape, tt.shape)
    except ValueError:
        raise ValueError(
            f"k and t have shapes that do not broadcast: k{md.lam.shape}, t{tt.shape}"
        ) from None
    return md, tt


def require_power_law(s: Setting, what: str) -> PowerLawSetting:
    """``s`` if it is a power-law setting; a ``ValueError`` otherwise."""
    if not isinstance(s, PowerLawSetting):
        raise ValueError(f"{what} needs a PowerLawSetting (continuous k), got {type(s).__name__}")
    return s


_BLOCK = 1 << 14  # elements per block: a few arrays of this size stay in L2 cache


def blockwise(fn: Callable[[Modes, np.ndarray], np.ndarray], md: Modes,
              t: np.ndarray) -> np.ndarray:
    """Evaluate ``fn(md, t)`` over the broadcast grid in cache-sized row blocks.

    The closed forms are a chain of cheap elementwise passes; on a large grid
    each pass would stream the whole array through memory. Splitting the
    leading axis into blocks keeps the intermediates in cache (about 3x faster
    on a 512 x 1000 grid) without changing a single floating-point operation.
    """
    shape = np.broadcast_shapes(md.lam.shape, t.shape)
    size = int(np.prod(shape))
    if len(shape) == 0:  # scalars: the in-place passes need arrays
        one = _map_modes(md, lambda a: np.reshape(a, (1,)))
        return fn(one, np.reshape(t, (1,))).reshape(())
    if len(shape) < 2 or size <= _BLOCK:
        return fn(md, t)
    n0 = shape[0]
    rows = max(1, _BLOCK // (size // n0))

    def part(a: np.ndarray, sl: slice) -> np.ndarray:
        return a[sl] if a.ndim == len(shape) and a.shape[0] == n0 else a

    out = np.empty(shape)
    for i in range(0, n0, rows):
        sl = slice(i, i + rows)
        sub = _map_modes(md, lambda a, sl=sl: part(a, sl))  # type: ignore[misc]
        out[sl] = fn(sub, part(t, sl))
    return out


def _map_modes(md: Modes, fn: Callable[[np.ndarray], np.ndarray]) -> Modes:
    """Apply ``fn`` to every array field of ``md`` (``S`` is a scalar and stays)."""
    return Modes(fn(md.lam), fn(md.theta), fn(md.m), fn(md.q), fn(md.r), fn(md.one_minus_r),
                 fn(md.b), md.S)
