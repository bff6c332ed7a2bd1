"""Atoms of a particle measure: clustering, realisation symmetries, Hermite residuals.

Conventions
-----------
* Particles are rows ``[a, w_1..w_d]`` of an ``(N, d+1)`` array (numpy or
  torch), the network is ``f_N(x) = (1/N) sum_i a_i sigma(w_i . x)`` (see
  :mod:`specdyn.sim.langevin`), inputs ``x ~ N(0, I_d)``.
* An *atom* is a direction ``u`` on the unit sphere carrying output mass: the
  particles whose directions ``w_i / ||w_i||`` lie within an angle of ``u``.
  Mass is ``|a_i|`` (``weights="a"``, the default) or ``|a_i| ||w_i||``
  (``weights="path"``, natural for positively homogeneous activations such
  as ReLU); masses are reported as fractions of the total.
* With ``symmetric=True`` (odd activations, ``sigma(-z) = -sigma(z)``) the
  particle ``(a, w)`` is the same neuron as ``(-a, -w)``, so ``u`` and ``-u``
  are one atom.
* Hermite coefficients use the orthonormal basis ``h_k = He_k / sqrt(k!)`` of
  :mod:`specdyn.data.hermite`: ``c_k(f; beta) = E[f(x) h_k(beta . x)]``.

Realisation symmetry (``docs/related-works.md``, section 3): different measures can
give the same function. Helpers here build such pairs (sign flip for odd
``sigma``, positive rescaling for ReLU, orthogonal mixing of equal-``a``
particles for ``sigma(z) = z^2``) and measure how far two measures' functions
are apart on probe inputs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from specdyn import _validate as v
from specdyn._torch import to_numpy
from specdyn.models.activations import Activation, get_activation
from specdyn.models.mean_field import network_function

__all__ = [
    "AtomClusters",
    "cluster_directions",
    "function_distance",
    "hermite_tail",
    "mix_particles",
    "moment_tensors",
    "network_hermite_coefficients",
    "relu_rescale",
    "sign_flip",
    "top_clusters_function",
]


def _particles(name: str, p: Any) -> np.ndarray:
    arr = v.real_array(name, to_numpy(p))
    if arr.ndim != 2 or arr.shape[1] < 2:
        raise ValueError(f"{name} must have shape (N, d+1) with d >= 1, got {arr.shape}")
    return arr


# --------------------------------------------------------------------------------------
# clustering

@dataclass(frozen=True)
class AtomClusters:
    """Particles grouped by direction, heaviest cluster first.

    Attributes
    ----------
    labels
        ``(N,)`` cluster of each particle (``-1``: ``w = 0``, no direction).
    centers
        ``(K, d)`` unit mass-weighted mean directions, in decreasing mass.
    mass
        ``(K,)`` mass fractions (sum over clusters plus ``unassigned`` is 1).
    unassigned
        Mass fraction of particles with ``w = 0``.
    threshold_deg, symmetric, weights
        The settings used.
    """

    labels: np.ndarray
    centers: np.ndarray
    mass: np.ndarray
    unassigned: float
    threshold_deg: float
    symmetric: bool
    weights: str

    @property
    def K(self) -> int:
        """Number of clusters."""
        return len(self.mass)

    def top_mass(self, k: int) -> float:
        """Mass fraction held by the ``k`` heaviest clusters."""
        k = v.positive_int("k", k, minimum=0)
        return float(self.mass[:k].sum())

    def n_atoms(self, fraction: float = 0.9) -> int:
        """Fewest clusters that together hold at least ``fraction`` of the mass."""
        fraction = v.in_range("fraction", fraction, 0.0, 1.0, lo_open=True)
        cum = np.cumsum(self.mass)
        hit = np.flatnonzero(cum >= fraction - 1e-12)
        return int(hit[0]) + 1 if hit.size else self.K


def _similarity(u: np.ndarray, c: np.ndarray, symmetric: bool) -> np.ndarray:
    s = u @ c.T
    return np.abs(s) if symmetric else s


def cluster_directions(particles: ArrayLike, *, threshold_deg: float = 20.0,
                       symmetric: bool = False, weights: str = "a",
                       iterations: int = 5) -> AtomClusters:
    """Cluster particle directions ``w_i / ||w_i||`` weighted by ``|a_i|``.

    Greedy leader clustering in decreasing mass (a particle joins the nearest
    existing centre within ``threshold_deg``, else opens a new cluster),
    followed by ``iterations`` rounds of weighted Lloyd updates (reassign each
    particle to its nearest centre, recompute mass-weighted mean directions,
    merge centres closer than the threshold). Deterministic; ``O(N K)``.

    Parameters
    ----------
    particles
        ``(N, d+1)`` rows ``[a, w]``.
    threshold_deg
        Angular radius of a cluster, in degrees, in ``(0, 90]``.
    symmetric
        Identify ``u`` with ``-u`` (odd activations).
    weights
        ``"a"``: mass ``|a_i|``; ``"path"``: mass ``|a_i| ||w_i||``.
    iterations
        Lloyd rounds after the greedy pass (>= 0).
    """
    p = _particles("particles", particles)
    threshold_deg = v.in_range("threshold_deg", threshold_deg, 0.0, 90.0, lo_open=True)
    weights = v.choice("weights", weights, ("a", "path"))
    iterations = v.positive_int("iterations", iterations, minimum=0)
    a, w = p[:, 0], p[:, 1:]
    r = np.linalg.norm(w, axis=1)
    mass = np.abs(a) * (r if weights == "path" else 1.0)
    total = float(mass.sum())
    labels = np.full(len(p), -1)
    has_dir = r > 0
    if not total > 0:
        raise ValueError("particles carry no mass (all a = 0): nothing to cluster")
    u = np.zeros_like(w)
    u[has_dir] = w[has_dir] / r[has_dir, None]
    cos_t = math.cos(math.radians(threshold_deg))
    idx = np.flatnonzero(has_dir)
    order = idx[np.argsort(-mass[idx], kind="stable")]
    sums: list[np.ndarray] = []
    centers: list[np.ndarray] = []
    for i in order:
        if centers:
            s = u[i] @ np.asarray(centers).T
            sim = np.abs(s) if symmetric else s
            j = int(np.argmax(sim))
            if sim[j] >= cos_t:
                sign = 1.0 if (not symmetric or s[j] >= 0) else -1.0
                sums[j] = sums[j] + mass[i] * sign * u[i]
                nrm = np.linalg.norm(sums[j])
                if nrm > 0:
                    centers[j] = sums[j] / nrm
                labels[i] = j
                continue
        sums.append(max(mass[i], 1e-300) * u[i])
        centers.append(u[i].copy())
        labels[i] = len(centers) - 1
    c = np.asarray(centers) if centers else np.zeros((0, w.shape[1]))
    for _ in range(iterations):
        if len(c) == 0:
            break
        s = u[idx] @ c.T
        sim = np.abs(s) if symmetric else s
        lab = np.argmax(sim, axis=1)
        signs = np.where(np.take_along_axis(s, lab[:, None], 1)[:, 0] >= 0, 1.0, -1.0)
        if not symmetric:
            signs[:] = 1.0
        new = np.zeros_like(c)
        np.add.at(new, lab, (mass[idx] * signs)[:, None] * u[idx])
        keep = np.linalg.norm(new, axis=1) > 0
        new = new[keep]
        new /= np.linalg.norm(new, axis=1, keepdims=True)
        # merge centres within the threshold (heaviest first)
        cm = np.zeros(len(new))
        remap = np.cumsum(keep) - 1
        np.add.at(cm, remap[lab], mass[idx])
        order_c = np.argsort(-cm, kind="stable")
        merged: list[np.ndarray] = []
        for j in order_c:
            if merged and (_similarity(new[j][None], np.asarray(merged), symmetric) >= cos_t
                           ).any():
                continue
            merged.append(new[j])
        c = np.asarray(merged)
    # final assignment and masses, heaviest first
    if len(c):
        lab = np.argmax(_similarity(u[idx], c, symmetric), axis=1)
        cm = np.zeros(len(c))
        np.add.at(cm, lab, mass[idx])
        order_c = np.argsort(-cm, kind="stable")
        rank = np.empty(len(c), dtype=int)
        rank[order_c] = np.arange(len(c))
        labels[idx] = rank[lab]
        c = c[order_c]
        cm = cm[order_c]
        live = cm > 0
        c, cm = c[live], cm[live]
    else:
        cm = np.zeros(0)
    unassigned = float(mass[~has_dir].sum() / total)
    return AtomClusters(labels=labels, centers=c, mass=cm / total, unassigned=unassigned,
                        threshold_deg=threshold_deg, symmetric=symmetric, weights=weights)


def top_clusters_function(particles: ArrayLike, clusters: AtomClusters, k: int,
                          x: ArrayLike, activation: str | Activation) -> np.ndarray:
    """``f`` of the measure restricted to the ``k`` heaviest clusters, at the rows of ``x``.

    ``(1/N) sum_{i in top k} a_i sigma(w_i . x)``: the other particles' ``a`` are set
    to zero (the ``1/N`` normalisation is kept), so ``f - f_top_k`` is the part
    of the network carried by the light clusters.
    """
    p = _particles("particles", particles).copy()
    k = v.positive_int("k", k, minimum=0)
    if p.shape[0] != len(clusters.labels):
        raise ValueError("clusters were computed for a different set of particles")
    drop = (clusters.labels < 0) | (clusters.labels >= k)
    p[drop, 0] = 0.0
    return network_function(p, x, activation)


# --------------------------------------------------------------------------------------
# realisation symmetries

def sign_flip(particles: ArrayLike, mask: ArrayLike | None = None) -> np.ndarray:
    """``(a, w) -> (-a, -w)`` on the particles in ``mask`` (all when ``None``).

    Leaves ``f`` unchanged exactly when ``sigma`` is odd.
    """
    p = _particles("particles", particles).copy()
    sel = np.ones(len(p), bool) if mask is None else np.asarray(mask, dtype=bool)
    if sel.shape != (len(p),):
        raise ValueError(f"mask must have shape ({len(p)},), got {sel.shape}")
    p[sel] *= -1.0
    return p


def relu_rescale(particles: ArrayLike, c: ArrayLike) -> np.ndarray:
    """``(a, w) -> (c a, w / c)`` with ``c > 0`` (scalar or one per particle).

    Leaves ``f`` unchanged for positively 1-homogeneous ``sigma`` (ReLU).
    """
    p = _particles("particles", particles).copy()
    cs = np.broadcast_to(v.real_array("c", c), (len(p),))
    if not (cs > 0).all():
        raise ValueError("c must be > 0 for every particle (allowed range (0, inf))")
    p[:, 0] *= cs
    p[:, 1:] /= cs[:, None]
    return p


def mix_particles(particles: ArrayLike, orthogonal: ArrayLike) -> np.ndarray:
    """``W -> O W`` for particles that all share one ``a`` and an orthogonal ``O``.

    For ``sigma(z) = z^2``, ``f(x) = (a/N) x^T W^T W x`` and ``(O W)^T (O W) =
    W^T W``, so the function is unchanged while the atoms move: e.g. with
    ``N = 2`` and ``O`` the 45-degree rotation, ``{(1, e1), (1, e2)}`` becomes
    ``{(1, (e1+e2)/sqrt2), (1, (e1-e2)/sqrt2)}``.
    """
    p = _particles("particles", particles).copy()
    o = v.real_array("orthogonal", orthogonal)
    n = len(p)
    if o.shape != (n, n):
        raise ValueError(f"orthogonal must be ({n}, {n}), got {o.shape}")
    if not np.allclose(o @ o.T, np.eye(n), atol=1e-12):
        raise ValueError("orthogonal must satisfy O O^T = I (to 1e-12)")
    if not np.allclose(p[:, 0], p[0, 0], rtol=0, atol=0):
        raise ValueError("mix_particles needs all particles to share the same a")
    p[:, 1:] = o @ p[:, 1:]
    return p


def moment_tensors(particles: ArrayLike, degree: int) -> list[np.ndarray]:
    """``T_k = (1/N) sum_i a_i w_i^(x)k`` for ``k = 0..degree`` (``T_k`` has ``k`` axes).

    For a polynomial ``sigma(z) = sum_k s_k z^k`` of degree ``D``,
    ``f(x) = sum_k s_k <T_k, x^(x)k>``: the function depends on the measure only
    through the ``T_k`` with ``s_k != 0`` (the finite-rank realisation).
    """
    p = _particles("particles", particles)
    degree = v.positive_int("degree", degree, minimum=0)
    a, w = p[:, 0], p[:, 1:]
    out = [np.asarray(a.mean())]
    t = a[:, None] * w  # (N, d) running a_i w_i^(x)k, flattened per particle
    for k in range(1, degree + 1):
        out.append(t.mean(0).reshape((w.shape[1],) * k))
        if k < degree:
            t = (t[:, :, None] * w[:, None, :]).reshape(len(p), -1)
    return out


def function_distance(p1: ArrayLike, p2: ArrayLike, activation: str | Activation, *,
                      x: ArrayLike | None = None, n_probe: int = 4096, seed: int = 0,
                      norm: str = "max") -> float:
    """Distance between the functions of two particle measures on probe inputs.

    ``norm="max"``: ``max_m |f_1(x_m) - f_2(x_m)|``; ``"rms"``: the root mean
    square. Probes are ``x`` if given, else ``n_probe`` draws of ``N(0, I_d)``
    (``numpy.random.default_rng(seed)``). Both measures use the mean-field
    normalisation of their own size.
    """
    a1 = _particles("p1", p1)
    a2 = _particles("p2", p2)
    if a1.shape[1] != a2.shape[1]:
        raise ValueError(f"p1 and p2 must have the same d, got {a1.shape[1] - 1} and "
                         f"{a2.shape[1] - 1}")
    norm = v.choice("norm", norm, ("max", "rms"))
    if x is None:
        n_probe = v.positive_int("n_probe", n_probe)
        xs = np.random.default_rng(seed).standard_normal((n_probe, a1.shape[1] - 1))
    else:
        xs = v.real_array("x", x)
    act = get_activation(activation)
    diff = network_function(a1, xs, act) - network_function(a2, xs, act)
    return float(np.abs(diff).max() if norm == "max" else np.sqrt(np.mean(diff ** 2)))


# --------------------------------------------------------------------------------------
# Hermite view: coefficients along a direction and the sparse residual

def network_hermite_coefficients(particles: ArrayLike, activation: str | Activation,
                                 degree: int, direction: ArrayLike | None = None
                                 ) -> np.ndarray:
    """``c_k = E[f_N(x) h_k(beta . x)]``, ``k = 0..degree``, for ``x ~ N(0, I_d)``.

    Exact up to quadrature: for ``w = r u`` (unit ``u``) and unit ``beta``,
    ``E[sigma(w . x) h_k(beta . x)] = (u . beta)^k E[sigma(r z) h_k(z)]``
    (Mehler), so ``c_k = (1/N) sum_i a_i (u_i . beta)^k c_k(sigma(r_i .))``,
    with the one-dimensional coefficients from
    :func:`specdyn.data.hermite.hermite_coefficients`. ``direction`` defaults
    to ``e_1``. Only the part of ``f_N`` that is a function of ``beta . x``
    is seen; a multi-index network has more.
    """
    from specdyn._torch import torch as _torch
    from specdyn.data.hermite import hermite_coefficients

    torch = _torch()
    p = _particles("particles", particles)
    degree = v.positive_int("degree", degree, minimum=0)
    d = p.shape[1] - 1
    if direction is None:
        beta = np.zeros(d)
        beta[0] = 1.0
    else:
        beta = v.real_array("direction", direction)
        if beta.shape != (d,) or not np.linalg.norm(beta) > 0:
            raise ValueError(f"direction must be a non-zero vector of length d = {d}")
        beta = beta / np.linalg.norm(beta)
    act = get_activation(activation)
    a, w = p[:, 0], p[:, 1:]
    r = np.linalg.norm(w, axis=1)
    cos = np.where(r > 0, (w @ beta) / np.where(r > 0, r, 1.0), 0.0)
    ks = np.arange(degree + 1)
    out = np.zeros(degree + 1)
    radii, inverse = np.unique(np.round(r, 14), return_inverse=True)
    for j, rad in enumerate(radii):

        def fn(z: np.ndarray, rad: float = float(rad)) -> np.ndarray:
            return to_numpy(act.fn(torch.from_numpy(rad * z)))

        c1 = hermite_coefficients(fn, degree)
        sel = inverse == j
        # cos^0 = 1 also when w = 0 (then sigma(0) is a constant, seen by c_0 only)
        powers = np.where(ks[None, :] == 0, 1.0, cos[sel, None] ** ks[None, :])
        out += (a[sel, None] * powers).sum(0) * c1
    return out / len(p)


def hermite_tail(coeffs: ArrayLike, K: int, *, second_moment: float | None = None) -> float:
    """Sparse residual: squared L2 norm left after keeping the ``K`` largest ``|c_k|``.

    ``sum_{k not in top K} c_k^2`` (orthonormal basis, so this is
    ``E[(f - f_K)^2]`` for the best ``K``-term Hermite approximation ``f_K``).
    With ``second_moment = E[f^2]`` given, the truncation beyond the stored
    degree, ``E[f^2] - sum_k c_k^2``, is added.
    """
    c = v.real_array("coeffs", coeffs)
    if c.ndim != 1:
        raise ValueError(f"coeffs must be 1-D, got shape {c.shape}")
    K = v.positive_int("K", K, minimum=0)
    sq = np.sort(c * c)[::-1]
    tail = float(sq[K:].sum())
    if second_moment is not None:
        m2 = v.nonnegative("second_moment", second_moment)
        tail += max(m2 - float(sq.sum()), 0.0)
    return tail
