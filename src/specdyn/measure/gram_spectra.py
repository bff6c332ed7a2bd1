"""Gram spectra on the matrix's own device: one matrix, a batch, a ``Linear``'s output, a top-``k``.

The kernels behind :func:`specdyn.measure.covariance_spectrum` and the tracker:
``X_c^T X_c / n`` (or its ``n x n`` twin, whichever is smaller) formed and
diagonalised where ``X`` lives, float64 numpy out, decreasing, negative
round-off clipped to 0.

Precision
---------
For torch input :func:`gram_eigenvalues` takes a precision policy:
``"float64"`` (default) casts first; ``"auto"`` tries float32 on an accelerator
and redoes the Gram in float64 when the smallest eigenvalue is below
:data:`F32_RANGE` (1e-4) of the largest, where float32 round-off (``~6e-8`` of
the largest) would exceed 0.1 % (float64 on the CPU). Every caller of it
(``covariance_spectrum``, the simulators) uses ``"float64"``.
:func:`batched_gram_eigenvalues` is its batched form for many matrices at once
(one ``eigvalsh`` per shape), the tracker's; its ``"auto"`` applies the same
``F32_RANGE`` rule on every device, the CPU included, where a float32 Gram and
``eigvalsh`` of a 2048-wide matrix cost about half the float64 ones; its
``"float32"`` keeps every float32 spectrum (no range rule): for a caller that
decides afterwards, matrix by matrix, whether float32 resolved the eigenvalues
it uses (the tracker: ``rank_tolerance(lambda_1, shape, float32)`` against what
its summaries read, ``specdyn.measure._summary_process``) and redoes the others
in float64.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from specdyn import _validate as v
from specdyn._torch import to_numpy
from specdyn.measure.eigen import _is_torch, decompose, device_eigenvalues, symmetric_eigenvalues

__all__ = ["BATCHED_PRECISIONS", "F32_RANGE", "PRECISIONS", "batched_gram_eigenvalues",
           "gram_eigenvalues", "linear_output_eigenvalues", "top_gram_eigenvalues"]

#: Precision policies of ``gram_eigenvalues`` for torch input (module docstring).
PRECISIONS = ("float64", "auto")
#: ``batched_gram_eigenvalues`` also takes ``"float32"`` (no range rule: the caller checks).
BATCHED_PRECISIONS = (*PRECISIONS, "float32")
#: float32 eigenvalues of a Gram carry an absolute error ~6e-8 of the largest one;
#: below this fraction of the largest, the relative error of the smallest would
#: exceed ~0.1 %: ``precision="auto"`` then redoes the Gram in float64.
F32_RANGE = 1e-4


def _smaller_gram(X: Any, center: bool, divisor: float | None, symmetrize: bool) -> Any:
    """``X_c^T X_c / divisor`` or ``X_c X_c^T / divisor``, whichever is smaller.

    A square ``X`` gives ``X_c^T X_c``; ``divisor`` defaults to the rows of ``X``.
    """
    n = int(X.shape[0])
    if center:
        Xc = X - (X.mean(dim=0, keepdim=True) if _is_torch(X) else X.mean(axis=0, keepdims=True))
    else:
        Xc = X
    G = Xc.T @ Xc if X.shape[1] <= X.shape[0] else Xc @ Xc.T
    if symmetrize:
        G = 0.5 * (G + G.T)
    return G / (n if divisor is None else divisor)


def gram_eigenvalues(X: Any, *, center: bool = False, divisor: float | None = None,
                     precision: str = "float64", symmetrize: bool = False) -> np.ndarray:
    """Eigenvalues of ``X_c^T X_c / divisor`` from the smaller Gram, decreasing, on X's device.

    The one Gram-spectrum routine of specdyn (its precision policy: the module
    docstring): the measurement layer, the tracker and the simulators call it.

    Parameters
    ----------
    X
        An ``n x p`` numpy array (float64) or torch tensor (any device).
    center
        Remove column means first.
    divisor
        Default ``n`` (the rows).
    precision
        ``"float64"`` or ``"auto"`` (torch input on an accelerator: float32
        first, float64 when the range needs it); see ``PRECISIONS``.
    symmetrize
        Diagonalise ``(G + G^T) / 2`` (symmetrised before the division).

    Returns
    -------
    numpy.ndarray
        ``min(n, p)`` eigenvalues, float64, decreasing, clipped at 0 (a square
        ``X`` uses ``X^T X``).
    """
    v.choice("precision", precision, PRECISIONS)
    if not _is_torch(X):
        return symmetric_eigenvalues(_smaller_gram(X, center, divisor, symmetrize))
    import torch

    auto = precision == "auto" and X.device.type != "cpu"
    for dtype in (torch.float32, torch.float64) if auto else (torch.float64,):
        w = symmetric_eigenvalues(_smaller_gram(X.to(dtype), center, divisor, symmetrize))
        if dtype == torch.float64 or w[-1] >= F32_RANGE * w[0]:
            break
    return w


def batched_gram_eigenvalues(mats: Sequence[Any], center: Sequence[bool] | bool = False, *,
                             ranks: Sequence[int | None] | None = None,
                             start64: Sequence[bool] | None = None,
                             precision: str = "auto") -> list[np.ndarray]:
    """``gram_eigenvalues`` of many torch matrices: one batched ``eigvalsh`` per shape.

    Matrices of the same shape, device, ``center`` and rank bound are stacked
    and reduced together on their accelerator (on a CPU, where a batched
    ``eigvalsh`` is a loop anyway, one at a time); in float32 each whose largest
    absolute entry is outside ``1e-12..1e12`` is divided by it first, so its
    Gram can neither overflow nor sink into subnormals, and scaled back.
    ``"auto"``: float32 on every device, then float64, batched again, for the
    matrices whose smallest nonzero eigenvalue is below ``F32_RANGE``
    of the largest (the rule of ``gram_eigenvalues``), and float64 from the
    start for near-square ones (smaller side above 0.9 of the larger, no rank
    bound), whose spectra reach down to ~0; ``"float64"``: float64 only;
    ``"float32"``: float32 only, every result kept (the caller judges it;
    ``start64`` still starts those matrices in float64). A
    centred ``n x p`` matrix with ``n <= p`` has one eigenvalue that is zero
    by construction (the centring): it is set to 0 and left out of
    that rule.

    Parameters
    ----------
    mats
        ``n x p`` torch tensors (any device).
    center
        Remove column means first: one flag for all, or one per matrix.
    ranks
        Optional bound on each matrix's rank known from how it was made (the
        output of ``Linear(d_in, d_out)`` has rank at most ``d_in``).
        When the bound is below half of ``min(n, p)`` the matrix is projected
        on its range first (``R + 10`` directions from a local generator: an
        exact range for a rank-``R`` matrix), so only an ``(R + 10)``-square
        Gram is diagonalised; the eigenvalues past ``R`` are 0. If the
        projection misses more than ``1e-4`` (float32; ``1e-8`` float64) of
        the trace, the bound was wrong and the full Gram is used.
    start64
        Optional: matrices to do in float64 from the start under ``"auto"``
        (the tracker passes those that needed it at their previous record:
        spectra change slowly, and a float32 try that fails costs time).
    precision
        ``"auto"``, ``"float64"`` or ``"float32"`` (``BATCHED_PRECISIONS``).

    Returns
    -------
    list of numpy.ndarray
        For each matrix, in order: ``min(n, p)`` eigenvalues of
        ``X_c^T X_c / n``, float64, decreasing, clipped at 0.
    """
    import torch

    v.choice("precision", precision, BATCHED_PRECISIONS)
    only32 = precision == "float32"
    flags = [bool(center)] * len(mats) if isinstance(center, bool) else [bool(c) for c in center]
    bounds = list(ranks) if ranks is not None else [None] * len(mats)
    f64 = [bool(b) for b in start64] if start64 is not None else [False] * len(mats)
    if not len(flags) == len(bounds) == len(f64) == len(mats):
        raise ValueError(f"center, ranks and start64 must be one per matrix ({len(mats)}), "
                         f"got {len(flags)}, {len(bounds)} and {len(f64)}")
    groups: dict[tuple[Any, ...], list[int]] = {}
    for i, (X, c, r, d) in enumerate(zip(mats, flags, bounds, f64, strict=True)):
        n, p = (int(d) for d in X.shape)
        m = min(n, p)
        R = min(m, n - 1 if c else m, m if r is None else max(int(r), 1))
        # Stacking pays on an accelerator (one launch a shape); on a CPU a batched eigvalsh
        # is a loop of LAPACK calls and the stacked copies cost more: one matrix a group.
        alone = i if X.device.type == "cpu" else -1
        groups.setdefault((n, p, str(X.device), c, R if R + 10 <= m // 2 else None, d, alone),
                          []).append(i)
    out: list[np.ndarray] = [np.empty(0)] * len(mats)
    unbounded: list[int] = []
    for (n, p, _dev, c, R, d, _alone), idx in groups.items():
        m = min(n, p)
        zeros = 1 if c and n <= p else 0  # the centred Gram's null vector (the ones)
        keep = m - zeros if R is None else R
        todo = idx
        # A near-square full-rank matrix has eigenvalues down to ~0 (Marchenko-Pastur's lower
        # edge (1 - sqrt(q))^2 is below F32_RANGE of the upper one for q > 0.96): float32
        # would be redone, so float64 from the start.
        square = R is None and m - zeros > 0.9 * max(n, p) and not only32
        for dtype in ((torch.float32, torch.float64) if precision != "float64" and not square
                      and not d else (torch.float64,)):
            # one matrix (every group on a CPU): a view, not a stacked copy
            X = (mats[todo[0]].detach()[None] if len(todo) == 1
                 else torch.stack([mats[i].detach() for i in todo])).to(dtype)
            scale = torch.ones((len(todo), 1, 1), dtype=dtype, device=X.device)
            if dtype == torch.float32:  # float64 holds any float32 entry's square
                lo, hi = torch.aminmax(X.reshape(len(todo), -1), dim=1)
                amax = torch.maximum(hi, -lo).clamp_min(torch.finfo(dtype).tiny)
                # entries' magnitudes within 1e-12..1e12 give Grams far from float32's
                # overflow and subnormals: no division (a pass over X) then
                if not bool(((amax > _F32_SAFE[0]) & (amax < _F32_SAFE[1])).all()):
                    scale = amax[:, None, None]
                    X = X / scale
            if c:
                X = X - X.mean(dim=1, keepdim=True)
            if R is None:
                G = _lower_gram(X if p <= n else X.mT)
            else:  # on the range of X: R + 10 random directions span it exactly
                Q = torch.linalg.qr(X @ _sketch(p, R + 10, dtype, X.device)).Q
                B = Q.mT @ X
                G = B @ B.mT
            w = device_eigenvalues(G)
            W = np.zeros((len(todo), m))
            # scaled back in float64: a float32 scale's square leaves float32's range
            W[:, :keep] = (to_numpy(w[:, :keep], np.float64)
                           * to_numpy(scale[:, :, 0], np.float64) ** 2 / n)
            if R is not None:  # the bound holds iff the range carries the whole trace
                tol = 1e-4 if dtype == torch.float32 else 1e-8
                missed = to_numpy(1 - w.sum(-1) / (X * X).sum((1, 2)).clamp_min(1e-300))
            redo = []
            for row, i in enumerate(todo):
                if R is not None and not missed[row] <= tol:
                    unbounded.append(i)
                    continue
                out[i] = W[row]
                if (dtype == torch.float32 and not only32
                        and not W[row][keep - 1] >= F32_RANGE * W[row][0]):
                    redo.append(i)
            todo = redo
            if not todo:
                break
    if unbounded:  # a wrong rank bound: the full Gram
        again = batched_gram_eigenvalues([mats[i] for i in unbounded],
                                         [flags[i] for i in unbounded],
                                         start64=[f64[i] for i in unbounded],
                                         precision=precision)
        for i, e in zip(unbounded, again, strict=True):
            out[i] = e
    return out


def _lower_gram(X: Any, blocks: int = 4) -> Any:
    """``X^T X`` of a stack ``(b, n, m)`` for ``eigvalsh``, which reads its lower triangle.

    On a CPU only the lower block triangle of ``blocks`` column blocks is
    computed (the blocks above the diagonal ones are zeros), ``(blocks + 1) / (2
    blocks)`` of the product's work (measured at 1 thread on 2048 x 512: 0.65 of
    the product's time in float32, 0.7 in float64); on an accelerator, the product.
    """
    import torch

    b, _, m = (int(d) for d in X.shape)
    if X.device.type != "cpu" or m < 2 * blocks:
        return X.mT @ X
    G = torch.zeros((b, m, m), dtype=X.dtype, device=X.device)
    edges = [round(i * m / blocks) for i in range(blocks + 1)]
    for a0, a1 in zip(edges[:-1], edges[1:], strict=True):
        G[:, a0:, a0:a1] = X[:, :, a0:].mT @ X[:, :, a0:a1]
    return G


def _symmetric_gram(X: Any) -> Any:
    """``X^T X`` of one matrix, whole: ``_lower_gram``'s lower triangle mirrored."""
    import torch

    G = _lower_gram(X[None])[0]
    return torch.tril(G) + torch.tril(G, -1).mT


def linear_output_eigenvalues(X: Any, W: Any, *, dtype: Any = None
                              ) -> tuple[np.ndarray, float, float]:
    """Spectrum of the centred output of ``Linear`` from its input: ``Y = X W^T + b``.

    The eigenvalues of ``Y_c^T Y_c / n`` (``Y_c = X_c W^T``: the bias and the
    input's mean drop out in the centring) without forming ``Y``. Two routes:

    - ``n > d_in`` and ``A = W^T W`` positive definite (a widening ``W``,
      ``d_out >= d_in``, of full column rank): with ``A = L L^T`` (Cholesky),
      the nonzero eigenvalues of ``Y_c^T Y_c`` are those of ``A G``, ``G =
      X_c^T X_c``, i.e. of the ``d_in``-square ``L^T G L``: two ``d_in``-square
      Grams, a Cholesky and two products, about a quarter of the output's own
      Gram and under half of a QR of ``X_c``;
    - else (``A`` not positive definite in the working precision, or ``n <=
      d_in``): ``X_c = Q R`` (``R`` only; ``R = X_c`` when ``n <= d_in``) and
      the eigenvalues of ``B B^T``, ``B = R W^T`` (``r x d_out``, ``r = min(n,
      d_in)``).

    In float32 the entries are divided by their largest magnitude first when
    outside ``1e-12..1e12`` (as in :func:`batched_gram_eigenvalues`).

    Parameters
    ----------
    X
        ``n x d_in`` torch tensor, the module's input rows.
    W
        ``d_out x d_in`` weight the output was computed with.
    dtype
        torch dtype to compute in (default: ``X``'s).

    Returns
    -------
    eigs : numpy.ndarray
        ``min(n, d_out)`` eigenvalues, float64, decreasing, clipped at 0; those
        past ``min(d_in, n - 1)`` (the rank of ``Y_c``) are 0.
    trace : float
        The sum the eigenvalues have up to the eigensolver's rounding: ``sum(A
        * G) / n`` (Cholesky route) or ``||B||_F^2 / n`` (QR route), summed in
        float64.
    amplification : float
        ``>= 1``: the factor by which this route's rounding error can exceed
        that of the output's own Gram (``rank_tolerance(lambda_1, (n, d_out))``
        in ``dtype``), with ``c = ||X_c||_2 ||W||_2 / ||Y_c||_2`` (power-iteration
        estimates). QR route: ``c`` (the rounding of ``R`` and ``R W^T`` is
        relative to ``||X_c|| ||W||``, and an eigenvalue ``s^2`` of ``B B^T``
        moves by ``2 s`` times ``B``'s error). Cholesky route: ``c^2`` (the
        rounding of ``G``, of ``A`` and its factor and of ``L^T G L`` is each
        relative to ``||G|| ||A|| = c^2 ||Y_c||^2``, and moves an eigenvalue of
        ``A G`` by at most that much).
    """
    import torch

    n, d_in = (int(d) for d in X.shape)
    d_out = int(W.shape[0])
    if int(W.shape[1]) != d_in:
        raise ValueError(f"W must be d_out x {d_in} (X is {n} x {d_in}), got {tuple(W.shape)}")
    dt = X.dtype if dtype is None else dtype
    Xd, Wd = X.detach().to(dt), W.detach().to(dt).to(X.device)
    scale = 1.0
    if dt == torch.float32:
        for name in ("X", "W"):
            M = Xd if name == "X" else Wd
            lo, hi = torch.aminmax(M)
            amax = max(float(hi), -float(lo), float(torch.finfo(dt).tiny))
            if not _F32_SAFE[0] < amax < _F32_SAFE[1]:
                scale *= amax
                if name == "X":
                    Xd = Xd / amax
                else:
                    Wd = Wd / amax
    Xc = Xd - Xd.mean(dim=0, keepdim=True)
    m = min(n, d_out)
    eigs = np.zeros(m)
    if n > d_in and d_out >= d_in:
        A = _symmetric_gram(Wd)
        L, info = torch.linalg.cholesky_ex(A)
        if int(info) == 0:
            G = _symmetric_gram(Xc)
            w = to_numpy(device_eigenvalues(L.mT @ G @ L), np.float64) * scale**2 / n
            keep = min(w.size, m, d_in, n - 1)
            eigs[:keep] = w[:keep]
            trace = float((A.double() * G.double()).sum()) * scale**2 / n
            top = float(eigs[0]) * n / scale**2 if m else 0.0
            amp = 1.0
            if top > 0:
                amp = max(1.0, _top_eigenvalue(G) * _top_eigenvalue(A) / top)
            return eigs, trace, amp
    R = torch.linalg.qr(Xc, mode="r").R if n > d_in else Xc
    B = R @ Wd.mT
    G = B @ B.mT if B.shape[0] <= B.shape[1] else B.mT @ B
    w = to_numpy(device_eigenvalues(G), np.float64) * scale**2 / n
    keep = min(w.size, m, d_in, n - 1)
    eigs[:keep] = w[:keep]
    chunks = torch.linalg.vector_norm(B.reshape(-1, 256) if B.numel() % 256 == 0 else B, dim=-1)
    trace = float(chunks.double().square().sum()) * scale**2 / n
    top = float(eigs[0]) * n / scale**2 if m else 0.0
    cond = 1.0
    if top > 0:
        cond = max(1.0, _spectral_norm(R) * _spectral_norm(Wd) / float(np.sqrt(top)))
    return eigs, trace, cond


def _top_eigenvalue(S: Any, iters: int = 30) -> float:
    """Largest eigenvalue of a symmetric PSD torch matrix by power iteration (from below)."""
    import torch

    v = torch.ones(int(S.shape[1]), 1, dtype=S.dtype, device=S.device)
    lam = 0.0
    for _ in range(iters):
        u = S @ v
        nu = float(torch.linalg.vector_norm(u))
        if not nu > 0:
            return 0.0
        lam = nu / float(torch.linalg.vector_norm(v))
        v = u / nu
    return lam


def _spectral_norm(M: Any, iters: int = 30) -> float:
    """``||M||_2`` by power iteration on ``M^T M`` from a fixed start (an estimate, from below)."""
    import torch

    v = torch.ones(int(M.shape[1]), 1, dtype=M.dtype, device=M.device)
    s = 0.0
    for _ in range(iters):
        u = M @ v
        v = M.mT @ u
        nv = float(torch.linalg.vector_norm(v))
        if not nv > 0:
            return 0.0
        s = float(np.sqrt(nv))
        v = v / nv
    return s


#: Largest absolute entries for which a float32 Gram needs no rescaling (see its use).
_F32_SAFE = (1e-12, 1e12)


@functools.lru_cache(maxsize=8)
def _sketch(p: int, s: int, dtype: Any, device: Any) -> Any:
    """The ``p x s`` Gaussian range sketch of ``batched_gram_eigenvalues``: fixed, kept.

    Drawn once per shape, dtype and device from a local generator (seed 0; no
    global random state read or changed) and reused: drawing it cost as much as
    the product it enters.
    """
    import torch

    gen = torch.Generator().manual_seed(0)
    return torch.randn(p, s, generator=gen, dtype=torch.float64).to(device, dtype)


def top_gram_eigenvalues(X: Any, k: int, *, center: bool = False, seed: int = 0,
                         niter: int = 4) -> np.ndarray:
    """The ``k`` largest eigenvalues of ``X_c^T X_c / n`` by randomized SVD, on X's device.

    A randomized range finder (``k + 10`` directions, ``niter`` power
    iterations, QR between them) in float32; the sketch comes from a local
    numpy generator seeded with ``seed``, so no global random state is read
    or changed and runs are reproducible. Float64 numpy out, decreasing.
    """
    import torch

    n, p = (int(s) for s in X.shape)
    k = v.positive_int("k", k)
    q = min(k + 10, n, p)
    Xf = X.detach().float()
    if center:
        Xf = Xf - Xf.mean(dim=0, keepdim=True)
    sketch = np.random.default_rng(seed).standard_normal((p, q)).astype(np.float32)
    Q = torch.linalg.qr(Xf @ torch.from_numpy(sketch).to(Xf.device)).Q
    for _ in range(niter):
        Q = torch.linalg.qr(Xf.T @ Q).Q
        Q = torch.linalg.qr(Xf @ Q).Q
    s = decompose(Q.T @ Xf, singular=True).values
    e = to_numpy(s.double() ** 2 / n, np.float64)[:k]
    return np.sort(e)[::-1].copy()
