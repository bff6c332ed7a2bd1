"""Single-layer linear students trained by GD, mini-batch SGD or online SGD.

Model (related-notes section 1): student ``W`` (``N x M``), input
``x ~ N(0, I_M)``, teacher labels ``y = W* x + noise_std * eps`` with
``eps ~ N(0, I_N)``, loss ``(1 / 2B) sum_b ||W x_b - y_b||^2`` over a batch of
``B``; the update is ``W <- W - lr * grad``. ``W0`` has i.i.d.
``N(0, sigma0^2 / M)`` entries.

Methods
-------
``"population"``
    Exact population gradient ``W - W*`` (``Sigma = I``; label noise is irrelevant).
``"gd"``
    Full-batch GD on a fixed data set of ``n_samples`` samples.
``"sgd"``
    Mini-batch SGD on that data set, ``batch_size`` in ``[1, n_samples]``,
    batches drawn uniformly with replacement of samples across steps (a fresh
    random subset without repeats every step).
``"online"``
    A fresh batch of ``batch_size`` Gaussian samples every step.

``replicas`` independent students (own init and data stream) run side by side
(batched tensors), so that mean-square quantities can be averaged. A run whose
squared error exceeds ``divergence_factor`` times its start (or stops being
finite) is stopped and returned with ``diverged=True``: divergence is a result,
not an exception.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from specdyn import _torch
from specdyn import _validate as v

__all__ = ["METHODS", "LinearStudentRun", "rank_one_teacher", "train_linear_student"]

METHODS = ("population", "gd", "sgd", "online")


def rank_one_teacher(N: int, M: int, theta: float, seed: int = 0
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(W*, u, v)`` with ``W* = theta u v^T``, ``u``, ``v`` uniform unit vectors (float64)."""
    n = v.positive_int("N", N)
    m = v.positive_int("M", M)
    th = v.nonnegative("theta", theta)
    rng = np.random.default_rng(seed)
    u = rng.standard_normal(n)
    u /= np.linalg.norm(u)
    w = rng.standard_normal(m)
    w /= np.linalg.norm(w)
    return th * np.outer(u, w), u, w


@dataclass(frozen=True)
class LinearStudentRun:
    """Record of one run (host float64 arrays).

    Attributes
    ----------
    sq_error
        ``(T + 1, R)`` ``||W_t - W*||_F^2`` of every replica at every step
        (truncated at the divergence step).
    record_steps
        ``(n,)`` steps at which spectra were recorded.
    singular_values
        ``(n, k)`` singular values of ``W`` (replica 0), decreasing; ``k`` is
        ``top_k`` or ``min(N, M)`` for the full spectrum.
    left_overlap2, right_overlap2
        ``(n,)`` squared overlaps of the top left/right singular vectors of
        ``W`` (replica 0) with the teacher's top singular vectors (``nan`` for a
        zero teacher).
    diverged
        Whether the run was stopped for divergence.
    diverged_step
        Step at which divergence was detected (``None`` if not).
    message
        Why it stopped, with a suggestion when it diverged.
    meta
        Method, sizes, lr, batch size, seed, device, dtype.
    """

    sq_error: np.ndarray
    record_steps: np.ndarray
    singular_values: np.ndarray
    left_overlap2: np.ndarray
    right_overlap2: np.ndarray
    diverged: bool
    diverged_step: int | None
    message: str
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def mean_sq_error(self) -> np.ndarray:
        """``(T + 1,)`` replica average of the squared error."""
        return np.asarray(self.sq_error.mean(axis=1))


def _record_steps(record: int | Sequence[int] | np.ndarray, steps: int) -> np.ndarray:
    if isinstance(record, (int, np.integer)) and not isinstance(record, bool):
        every = v.positive_int("record_every", record)
        return np.unique(np.r_[np.arange(0, steps + 1, every), steps]).astype(np.int64)
    arr = np.unique(np.asarray(record, dtype=np.int64))
    if arr.size == 0 or arr[0] < 0 or arr[-1] > steps:
        raise ValueError(f"record_steps must lie in [0, steps={steps}], got {record!r}")
    return arr


def train_linear_student(
    teacher: ArrayLike,
    *,
    method: str,
    lr: float,
    steps: int,
    sigma0: float = 1.0,
    n_samples: int | None = None,
    inputs: ArrayLike | None = None,
    batch_size: int | None = None,
    noise_std: float = 0.0,
    replicas: int = 1,
    record: int | Sequence[int] | np.ndarray = 1,
    top_k: int | None = 8,
    overlaps: bool = True,
    divergence_factor: float = 1e8,
    check_every: int = 50,
    seed: int = 0,
    device: Any = None,
    dtype: Any = None,
) -> LinearStudentRun:
    """Train a single-layer linear student on ``teacher`` and record its spectrum.

    Parameters
    ----------
    teacher
        ``W*``, an ``N x M`` array (any rank).
    method
        One of :data:`METHODS` (module docstring).
    lr
        Step size, > 0.
    steps
        Number of updates, >= 1.
    sigma0
        Init scale: ``W0`` entries ``N(0, sigma0^2 / M)`` (> 0).
    n_samples
        Data-set size for ``"gd"`` and ``"sgd"`` (>= 1; ignored otherwise).
    inputs
        Optional fixed inputs ``X`` (``n x M``) for ``"gd"``/``"sgd"``, shared by
        all replicas (then ``n_samples`` may be omitted); drawn from the seed otherwise.
    batch_size
        Batch for ``"sgd"`` (in ``[1, n_samples]``) and ``"online"`` (>= 1).
    noise_std
        Label noise standard deviation (>= 0).
    replicas
        Independent students run together (>= 1).
    record
        Record spectra every ``record`` steps (int), or at the given steps.
    top_k
        Number of singular values kept (``None``: all ``min(N, M)``).
    overlaps
        Also record singular-vector overlaps with the teacher (needs a full SVD).
    divergence_factor
        Stop when the mean squared error exceeds this times its start (> 1).
    check_every
        Steps between divergence checks (host syncs).
    seed, device, dtype
        Reproducibility and placement (CUDA when present; float64 by default).
    """
    W_star = v.real_array("teacher", teacher)
    if W_star.ndim != 2:
        raise ValueError(f"teacher must be an N x M matrix, got shape {W_star.shape}")
    N, M = W_star.shape
    meth = v.choice("method", method, METHODS)
    eta = v.positive("lr", lr)
    T = v.positive_int("steps", steps)
    s0 = v.positive("sigma0", sigma0)
    noise = v.nonnegative("noise_std", noise_std)
    R = v.positive_int("replicas", replicas)
    factor = v.in_range("divergence_factor", divergence_factor, 1.0, np.inf, lo_open=True,
                        hi_open=True)
    every = v.positive_int("check_every", check_every)
    n = B = 0
    X_in = None
    if meth in ("gd", "sgd"):
        if inputs is not None:
            X_in = v.real_array("inputs", inputs)
            if X_in.ndim != 2 or X_in.shape[1] != M:
                raise ValueError(f"inputs must be an n x M={M} array, got shape {X_in.shape}")
            if n_samples is not None and int(n_samples) != X_in.shape[0]:
                raise ValueError(f"n_samples={n_samples!r} disagrees with inputs "
                                 f"({X_in.shape[0]} rows)")
            n = X_in.shape[0]
        elif n_samples is None:
            raise ValueError(f"n_samples must be given (an integer >= 1) for method {meth!r}")
        else:
            n = v.positive_int("n_samples", n_samples)
    if meth in ("sgd", "online"):
        if batch_size is None:
            raise ValueError(f"batch_size must be given for method {meth!r}")
        B = v.positive_int("batch_size", batch_size)
        if meth == "sgd" and B > n:
            raise ValueError(f"batch_size must lie in [1, n_samples={n}], got {batch_size!r}")
    k = min(N, M) if top_k is None else min(v.positive_int("top_k", top_k), min(N, M))
    rec = _record_steps(record, T)

    torch = _torch.torch()
    dev = _torch.resolve_device(device)
    dt = _torch.resolve_dtype(dtype)
    gen = torch.Generator(device=dev).manual_seed(int(seed))
    Ws = torch.as_tensor(W_star, dtype=dt, device=dev)
    # Teacher singular vectors for overlaps (top pair).
    if overlaps:
        uu, ss, vvh = np.linalg.svd(W_star, full_matrices=False)
        has_teacher = ss[0] > 0
        u_t = torch.as_tensor(uu[:, 0], dtype=dt, device=dev)
        v_t = torch.as_tensor(vvh[0], dtype=dt, device=dev)

    W = torch.randn(R, N, M, generator=gen, dtype=dt, device=dev) * (s0 / np.sqrt(M))
    if meth in ("gd", "sgd"):
        if X_in is None:
            X = torch.randn(R, n, M, generator=gen, dtype=dt, device=dev)
        else:
            X = torch.as_tensor(X_in, dtype=dt, device=dev).expand(R, n, M).contiguous()
        Y = X @ Ws.T + noise * torch.randn(R, n, N, generator=gen, dtype=dt, device=dev)
        if meth == "gd":
            Sig = X.transpose(1, 2) @ X / n          # R x M x M
            C = Y.transpose(1, 2) @ X / n            # R x N x M

    errs = torch.empty(T + 1, R, dtype=dt, device=dev)
    errs[0] = ((W - Ws) ** 2).sum(dim=(1, 2))
    e0 = float(errs[0].mean())
    svals: list[np.ndarray] = []
    lov: list[float] = []
    rov: list[float] = []
    rec_set = set(rec.tolist())
    rec_done: list[int] = []

    wide = N <= M

    def record_now(t: int) -> None:
        # Eigen-decomposition of the smaller Gram matrix: about 3x faster than an SVD.
        w0 = W[0]
        gram = w0 @ w0.T if wide else w0.T @ w0
        if overlaps:
            ev, vec = torch.linalg.eigh(gram)
            top = vec[:, -1]
            sv = ev.clamp_min(0).sqrt()
            other = (w0.T @ top if wide else w0 @ top) / sv[-1].clamp_min(1e-300)
            left, right = (top, other) if wide else (other, top)
            if has_teacher:
                lov.append(float((left @ u_t) ** 2))
                rov.append(float((right @ v_t) ** 2))
            else:
                lov.append(float("nan"))
                rov.append(float("nan"))
        else:
            sv = torch.linalg.eigvalsh(gram).clamp_min(0).sqrt()
        svals.append(sv.flip(0)[:k].double().cpu().numpy())
        rec_done.append(t)

    if 0 in rec_set:
        record_now(0)
    diverged_step: int | None = None
    last = T
    for t in range(1, T + 1):
        if meth == "population":
            G = W - Ws
        elif meth == "gd":
            G = W @ Sig - C
        else:
            if meth == "online":
                xb = torch.randn(R, B, M, generator=gen, dtype=dt, device=dev)
                yb = xb @ Ws.T
                if noise > 0:
                    yb = yb + noise * torch.randn(R, B, N, generator=gen, dtype=dt, device=dev)
            else:
                idx = torch.argsort(torch.rand(R, n, generator=gen, device=dev), dim=1)[:, :B]
                xb = torch.gather(X, 1, idx[..., None].expand(R, B, M))
                yb = torch.gather(Y, 1, idx[..., None].expand(R, B, N))
            G = (xb @ W.transpose(1, 2) - yb).transpose(1, 2) @ xb / B
        W = W - eta * G
        errs[t] = ((W - Ws) ** 2).sum(dim=(1, 2))
        if t % every == 0 or t == T or t in rec_set:
            cur = float(errs[t].mean())
            if not np.isfinite(cur) or cur > factor * e0:
                # find the first offending step in the unchecked window
                window = errs[max(t - every, 0):t + 1].mean(dim=1).double().cpu().numpy()
                bad = ~np.isfinite(window) | (window > factor * e0)
                diverged_step = max(t - every, 0) + int(np.argmax(bad))
                last = diverged_step
                break
        if t in rec_set:
            record_now(t)

    sq = errs[: last + 1].double().cpu().numpy()
    if diverged_step is not None:
        sq = sq[:-1] if not np.all(np.isfinite(sq[-1])) else sq
        msg = (f"diverged at step {diverged_step} (squared error above {factor:g} x start); "
               f"lower lr below the stability threshold")
    else:
        msg = f"completed {T} steps"
    return LinearStudentRun(
        sq_error=sq,
        record_steps=np.asarray(rec_done, dtype=np.int64),
        singular_values=np.array(svals, dtype=np.float64).reshape(len(rec_done), k),
        left_overlap2=np.asarray(lov, dtype=np.float64),
        right_overlap2=np.asarray(rov, dtype=np.float64),
        diverged=diverged_step is not None,
        diverged_step=diverged_step,
        message=msg,
        meta={"method": meth, "N": N, "M": M, "lr": eta, "steps": T, "sigma0": s0,
              "n_samples": n or None, "batch_size": B or None, "noise_std": noise,
              "replicas": R, "seed": int(seed), "device": str(dev), "dtype": str(dt)},
    )
