"""What the mean-field claims read off their tables and particles.

The growth of ``N x`` a distance over a propagation-of-chaos run, the realisation-symmetry
moves of a sparse-atoms measure (and the activations whose particles are identified up
to sign), its atoms' effective coefficients and the mass near a direction, and the trends
and spreads of the error-budget parts, with the names the error-budget table's ``init
scale`` rows carry; the rows of propagation-of-chaos's first-step table.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from specdyn.measure.atoms import AtomClusters
from specdyn.runs.claims import rank_correlation

#: Knobs of the ``init scale`` rows: the test error at ``t_early`` (``init_early_steps``)
#: and at ``t_end``.
INIT_EARLY, INIT_END = "init scale at t_early", "init scale at t_end"
#: Positive rescalings ``c`` of the symmetry check: log-uniform in ``[1/RESCALE, RESCALE]``,
#: one per particle, from a fixed generator (not the run's data).
RESCALE, RESCALE_SEED = 2.0, 20261204


def uniform_growth(df: pd.DataFrame, column: str = "function_gap") -> tuple[int, int, float]:
    """``(mid, end, g)``: relative growth ``g`` of ``N x column`` (mean over N and seeds)
    from the checkpoint ``mid`` nearest half the run to the last, ``end``.

    Uniform-in-time ``O(1/N)`` means ``N x`` the quantity levels off, ``g -> 0``.
    NaN when the quantity at ``mid`` is zero.
    """
    scaled = df.assign(s=df[column] * df["N"]).groupby("step")["s"].mean()
    steps = scaled.index.to_numpy()
    end = int(steps[-1])
    late = steps[steps > 0]
    mid = int(late[np.argmin(np.abs(late - end / 2))]) if late.size else end
    growth = float(scaled[end] / scaled[mid] - 1.0) if scaled[mid] > 0 else float("nan")
    return mid, end, growth


def odd_activation(activation: str) -> bool:
    """Odd activations identify the particle ``(a, w)`` with ``(-a, -w)``."""
    return activation in ("tanh", "erf", "linear")


def orbit_changes(p: np.ndarray, activation: str) -> tuple[float, float, str] | None:
    """``(on, off, how)``: relative rms change of ``f`` when the particles ``p`` move along
    the realisation symmetry, and when the same move is applied to ``a`` alone.

    ReLU: ``(a, w) -> (a / c, c w)``, ``c`` log-uniform in ``[1/RESCALE, RESCALE]`` per
    particle, against ``a -> a / c``; odd activations: ``(a, w) -> (-a, -w)`` on a random
    half, against ``a -> -a`` there. ``None`` for an activation with neither symmetry.
    Probes ``x ~ N(0, I)`` and the moves come from ``RESCALE_SEED``.
    """
    from specdyn.measure.atoms import relu_rescale, sign_flip
    from specdyn.models import network_function
    from specdyn.sim import derive_seed

    rng = np.random.default_rng(derive_seed(RESCALE_SEED, "rescale"))
    x = rng.standard_normal((4096, p.shape[1] - 1))
    if activation == "relu":
        c = np.exp(rng.uniform(-np.log(RESCALE), np.log(RESCALE), len(p)))
        on = relu_rescale(p, 1.0 / c)
        off = p.copy()
        off[:, 0] /= c
        how = f"(a, w) -> (a/c, c w), c log-uniform in [1/{RESCALE:g}, {RESCALE:g}]"
    elif odd_activation(activation):
        mask = rng.random(len(p)) < 0.5
        on = sign_flip(p, mask)
        off = p.copy()
        off[mask, 0] *= -1.0
        how = "(a, w) -> (-a, -w) on a random half"
    else:
        return None
    f = network_function(p, x, activation)
    norm = float(np.sqrt(np.mean(f ** 2)))
    if not norm > 0:
        return float("nan"), float("nan"), how

    def rel(q: np.ndarray) -> float:
        return float(np.sqrt(np.mean((network_function(q, x, activation) - f) ** 2))) / norm

    return rel(on), rel(off), how


def part_trend(df: pd.DataFrame, part: str) -> float:
    """Spearman correlation of one part's value with its knob (NaN if constant or < 3 points)."""
    sel = df[df["part"] == part]
    return rank_correlation(sel["x"], sel["value"])


def init_spread(df: pd.DataFrame, knob: str) -> float:
    """``(max - min) / mean`` of the ``init scale`` rows of one knob (NaN if < 2 rows or a
    mean that is not positive)."""
    v = df[(df["part"] == "init scale") & (df["knob"] == knob)]["value"].to_numpy(float)
    if v.size < 2 or not np.all(np.isfinite(v)) or not v.mean() > 0:
        return float("nan")
    return float(np.ptp(v) / v.mean())


def cluster_coefficients(p: np.ndarray, clusters: AtomClusters, u: np.ndarray,
                         s: int) -> np.ndarray:
    """Per direction ``u[i]`` (ReLU): the effective coefficient ``sum a |w| / N`` of the
    cluster, among the ``s`` heaviest of ``clusters``, whose centre is nearest it (empty
    when there is no cluster). ReLU's realisation symmetry leaves only this identified."""
    heavy = clusters.centers[:s]
    if not len(heavy):
        return np.zeros(0)
    match = np.argmax(heavy @ u.T, axis=0)
    eff = p[:, 0] * np.linalg.norm(p[:, 1:], axis=1)
    return np.array([eff[clusters.labels == j].sum() / len(p) for j in match])


def share_near(p: np.ndarray, u: np.ndarray, threshold_deg: float, odd: bool) -> float:
    """The ``|a|``-share of the particles ``p`` whose direction is within ``threshold_deg``
    of one of the directions ``u`` (of ``+-u`` for an odd activation); NaN without mass."""
    dirs = p[:, 1:] / np.maximum(np.linalg.norm(p[:, 1:], axis=1, keepdims=True), 1e-300)
    near = np.zeros(len(p), bool)
    for uk in u:
        sim = dirs @ uk
        near |= (np.abs(sim) if odd else sim) >= np.cos(np.radians(threshold_deg))
    total = float(np.abs(p[:, 0]).sum())
    return float(np.abs(p[near, 0]).sum()) / total if total > 0 else float("nan")


def angular_spread(p: np.ndarray, clusters: AtomClusters, s: int) -> np.ndarray:
    """Per cluster among the ``s`` heaviest: the ``|a|``-weighted RMS angle (deg) of its
    particles' directions to its centre; NaN for a cluster without mass or a missing one."""
    dirs = p[:, 1:] / np.maximum(np.linalg.norm(p[:, 1:], axis=1, keepdims=True), 1e-300)
    out = np.full(s, np.nan)
    for j in range(min(s, clusters.K)):
        idx = clusters.labels == j
        wts = np.abs(p[idx, 0])
        if wts.sum() > 0:
            ang = np.degrees(np.arccos(np.clip(dirs[idx] @ clusters.centers[j], -1.0, 1.0)))
            out[j] = np.sqrt(np.sum(wts * ang ** 2) / wts.sum())
    return out


#: Reference particles kept before and after the first step (the temperature claim): their
#: ``(D + 1)`` coordinates resolve the injected temperature to ``sqrt(2 / (n (D + 1)))``,
#: 1.8 % a seed at 1000.
NOISE_PARTICLES = 1000


def noise_rows(seed: int, particles: np.ndarray, steps: np.ndarray) -> pd.DataFrame:
    """Rows ``seed, step, particle, a, w1..wD`` of the first :data:`NOISE_PARTICLES`
    reference particles at each of ``steps`` (``particles``: ``(len(steps), N_ref, D+1)``)."""
    n = min(NOISE_PARTICLES, particles.shape[1])
    D = particles.shape[2] - 1
    return pd.concat([pd.DataFrame({"seed": seed, "step": int(st), "particle": np.arange(n),
                                    "a": p[:n, 0],
                                    **{f"w{k + 1}": p[:n, k + 1] for k in range(D)}})
                      for st, p in zip(steps, particles, strict=True)], ignore_index=True)
