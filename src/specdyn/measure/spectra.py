"""Spectra of representations and weights: covariance, Gram, streaming.

Conventions
-----------
Covariance spectrum
    ``F`` is ``n x p`` (n samples, p features). The spectrum is the
    eigenvalues of ``F_c^T F_c / n`` where ``F_c`` is ``F`` with its column
    means removed (``center=True``) or ``F`` itself; the divisor is ``n``
    either way. Computed from the smaller of the two Gram matrices
    (``p x p`` or ``n x n``: same nonzero eigenvalues), so only the
    ``min(n, p)`` leading eigenvalues are returned -- the rest are exactly 0.
Weight spectrum
    ``W`` is ``N x D`` (rows x columns; a ``torch.nn.Linear`` weight is
    ``out x in``, ``N`` units by ``D`` inputs). The spectrum is the
    eigenvalues of ``W^T W / c`` (the squared singular values over ``c``),
    with ``c = 1`` for ``normalize="none"``, ``N`` (rows) for ``"rows"``,
    ``D`` (columns) for ``"cols"`` and ``||W||_F^2`` for ``"trace"``
    (eigenvalues sum to 1). With ``"rows"`` a matrix of i.i.d. entries of
    variance ``s2`` has a Marchenko-Pastur spectrum with ``ratio = D / N``
    and ``sigma2 = s2``.
Order and type
    Always float64 numpy arrays, decreasing, tiny negative round-off clipped
    to 0. numpy arrays or torch tensors (CPU or CUDA) are accepted; torch
    input on an accelerator is reduced there in float64 (dense ``eigvalsh``
    of the smaller Gram) and only the eigenvalues come back to the host; CPU
    tensors take the numpy path.
Top eigenvalues
    ``top=k`` returns the ``k`` largest. The smaller Gram is formed (one
    BLAS-3 product, the dominant cost) and, for ``k <= min(n, p) / 5``, its
    top eigenvalues found by Lanczos (``scipy.sparse.linalg.eigsh``) instead
    of a full ``eigvalsh``. ``method="lanczos"`` (and ``"auto"`` when
    ``min(n, p) > 20000``) never forms the Gram: Lanczos on the implicit
    operator ``v -> F_c^T (F_c v) / n``, memory ``O(n p)`` only. Accurate to
    ~1e-12 relative to the largest eigenvalue.
Scale
    The matrix is divided by its largest absolute entry before the Gram is
    formed and the eigenvalues are scaled back, so entries anywhere in
    float64's range give correct eigenvalues; when the eigenvalues themselves
    do not fit in float64 (entries beyond ~1e154 or below ~1e-154 times
    ``sqrt(n)``) a ``ValueError`` says so instead of returning inf or 0.
Gram eigenvalues
    ``gram_eigenvalues(X)`` is the one routine that diagonalises a Gram matrix
    (and ``symmetric_eigenvalues(S)`` that of a symmetric matrix, for
    a matrix that is already symmetric): numpy or torch in, the work done where
    the input lives (numpy: numpy in float64; torch: torch on the tensor's
    device), float64 numpy out, decreasing, negative round-off clipped to 0.
    Precision policy for torch input: ``"float64"`` (default) casts first;
    ``"auto"`` tries float32 on an accelerator and redoes the Gram in float64
    when the smallest eigenvalue is below ``F32_RANGE`` (1e-4) of the largest,
    where float32 round-off (``~6e-8`` of the largest) would exceed 0.1 %
    (float64 on the CPU). Every caller of it (``covariance_spectrum``, the
    simulators) uses ``"float64"``. ``batched_gram_eigenvalues`` is its
    batched form for many matrices at once (one ``eigvalsh`` per shape), the
    tracker's; its ``"auto"`` applies the same ``F32_RANGE`` rule on every
    device, the CPU included, where a float32 Gram and ``eigvalsh`` of a
    2048-wide matrix cost about half the float64 ones; its ``"float32"``
    keeps every float32 spectrum (no range rule): for a caller that decides
    afterwards, matrix by matrix, whether float32 resolved the eigenvalues it
    uses (the tracker: ``rank_tolerance(lambda_1, shape, float32)`` against
    what its summaries read, ``specdyn.measure._summary_process``) and redoes
    the others in float64.
Zero
    An eigenvalue is numerically zero when it is at most ``rank_tolerance``:
    ``lambda_1 * max(n, p) * eps`` of the dtype the spectrum was computed in
    (what ``numpy.linalg.matrix_rank`` uses, applied to the Gram's
    eigenvalues). Every zero cut-off in ``specdyn.measure`` uses it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from specdyn import _validate as v
from specdyn._torch import to_numpy

__all__ = [
    "BATCHED_PRECISIONS",
    "F32_RANGE",
    "PRECISIONS",
    "CovarianceAccumulator",
    "Decomposition",
    "batched_gram_eigenvalues",
    "covariance_spectrum",
    "decompose",
    "gram_eigenvalues",
    "linear_output_eigenvalues",
    "gram_spectrum",
    "rank_tolerance",
    "symmetric_eigenvalues",
    "top_gram_eigenvalues",
    "weight_spectrum",
]

#: Precision policies of ``gram_eigenvalues`` for torch input (module docstring).
PRECISIONS = ("float64", "auto")
#: ``batched_gram_eigenvalues`` also takes ``"float32"`` (no range rule: the caller checks).
BATCHED_PRECISIONS = (*PRECISIONS, "float32")
#: float32 eigenvalues of a Gram carry an absolute error ~6e-8 of the largest one;
#: below this fraction of the largest, the relative error of the smallest would
#: exceed ~0.1 %: ``precision="auto"`` then redoes the Gram in float64.
F32_RANGE = 1e-4

_NORMALIZE = ("none", "rows", "cols", "trace")
_METHODS = ("auto", "dense", "lanczos")
# Above this min(n, p) the m x m Gram (8 m^2 bytes: 3.2 GB at 20000) is not formed for top-k.
_GRAM_MAX = 20000


def rank_tolerance(largest: float, shape: float | tuple[float, ...],
                   dtype: Any = np.float64) -> float:
    """Eigenvalues at or below this are numerically zero: ``largest * max(shape) * eps(dtype)``.

    Parameters
    ----------
    largest
        The largest eigenvalue of the spectrum (negative values count as 0).
    shape
        ``(n, p)`` of the matrix whose Gram was diagonalised, or just the
        largest size when only that is known (e.g. the number of eigenvalues).
    dtype
        The dtype the spectrum was computed in (float64 for every spectrum of
        this module); ``eps`` is its machine epsilon.

    Notes
    -----
    The rounding error of a symmetric eigensolver on an ``m x m`` Gram is of
    order ``m * eps * lambda_1``, so smaller eigenvalues are not resolved. A
    fixed relative cut-off is either too coarse for small matrices (1e-10
    flags about 2 % of square 1000 x 1000 Gaussian Grams as rank deficient) or
    too fine for large ones.
    """
    size = float(np.max(np.asarray(shape, dtype=np.float64)))
    if str(dtype).startswith("torch."):
        import torch

        eps = float(torch.finfo(dtype).eps)
    else:
        eps = float(np.finfo(np.dtype(dtype)).eps)
    return max(float(largest), 0.0) * max(size, 1.0) * eps


class Decomposition(NamedTuple):
    """What :func:`decompose` returns, in the input's type, device and dtype.

    Attributes
    ----------
    values
        Eigenvalues (``singular=False``) or singular values, **decreasing**.
    vectors
        Their eigenvectors, or the left singular vectors, as columns (``None``
        unless asked for).
    right
        The right singular vectors as columns (``singular=True`` with vectors;
        else ``None``).
    """

    values: Any
    vectors: Any = None
    right: Any = None


_DECOMPOSE_METHODS = ("dense", "lanczos")


def decompose(A: Any, *, singular: bool = False, vectors: bool = False, top: int | None = None,
              center: bool = False, method: str = "dense", generator: Any = None,
              increasing: bool = False) -> Decomposition:
    """The one eigen/singular decomposition of specdyn: full or top-``k``, with or without vectors.

    Every ``eigh``, ``eigvalsh``, ``svd`` and ``svdvals`` outside the theory
    layer's own float64 numerics goes through here
    (``tests/project/test_one_definition.py`` checks it), so a change of solver
    is made once.

    Parameters
    ----------
    A
        A symmetric matrix (``singular=False``; or a stack of them, batch
        dimensions first) or any matrix (``singular=True``): numpy (LAPACK
        through numpy) or torch (``torch.linalg``, on the tensor's device, in its
        dtype: nothing is moved to the host).
    singular
        Singular values (and vectors) of ``A`` instead of eigenvalues.
    vectors
        Also return the vectors.
    top
        Only the ``top`` largest values (and their vectors); ``None``: all.
    center
        Remove the column means of ``A`` first (``singular=True`` only: a data
        matrix).
    method
        ``"dense"``: the full LAPACK decomposition, then the top ``k``.
        ``"lanczos"``: the top ``k`` eigenpairs of a symmetric numpy matrix (or a
        ``scipy.sparse.linalg.LinearOperator``, e.g. an implicit Gram) by
        implicitly restarted Lanczos (``scipy.sparse.linalg.eigsh``, ``tol=0``:
        to machine precision), from a start vector drawn from ``generator``.
    generator
        A ``numpy.random.Generator`` for the Lanczos start vector (default: seed 0,
        so a call is reproducible).
    increasing
        Eigenvalues in increasing order, LAPACK's own (a symmetric dense
        decomposition without ``top``: for callers whose later arithmetic runs in
        that order, so that their numbers stay bit for bit).

    Returns
    -------
    Decomposition
        Values decreasing; no clipping of negative round-off (the caller's
        convention: a Gram's eigenvalues are clipped at 0 by its reader).
    """
    method = v.choice("method", method, _DECOMPOSE_METHODS)
    torch_in = _is_torch(A)
    if center:
        if not singular:
            raise ValueError("center=True needs singular=True (a data matrix, not a Gram)")
        A = A - (A.mean(dim=0, keepdim=True) if torch_in else A.mean(axis=0, keepdims=True))
    if method == "lanczos":
        if torch_in or singular or top is None:
            raise ValueError("method='lanczos' is the top-k of a symmetric numpy matrix: "
                             "give top and a numpy array (or use method='dense')")
        return _lanczos_pairs(A, v.positive_int("top", top), vectors, generator)
    if torch_in:
        import torch

        lin: Any = torch.linalg
    else:
        lin = np.linalg
    k = None if top is None else v.positive_int("top", top)
    if singular:
        if vectors:
            U, sv, Vh = lin.svd(A, full_matrices=False)  # decreasing already
            return Decomposition(sv[:k], U[:, :k], Vh[:k].T)
        sv = lin.svdvals(A) if torch_in else lin.svd(A, compute_uv=False)
        return Decomposition(sv[:k])
    if increasing and k is not None:
        raise ValueError("increasing=True is the full spectrum: give top=None")
    # a stack of symmetric matrices (leading batch dimensions) is decomposed matrix by matrix
    if vectors:
        w, V = lin.eigh(A)
        if not increasing:
            w, V = (w.flip(-1), V.flip(-1)) if torch_in else (w[..., ::-1], V[..., ::-1])
        return Decomposition(w[..., :k], V[..., :k])
    w = lin.eigvalsh(A)
    if not increasing:
        w = w.flip(-1) if torch_in else w[..., ::-1]
    return Decomposition(w[..., :k])


def _lanczos_pairs(S: Any, k: int, vectors: bool, generator: Any) -> Decomposition:
    """Top ``k`` eigenpairs of a symmetric ``S`` by Lanczos (decreasing)."""
    from scipy.sparse.linalg import eigsh

    m = S.shape[0]
    if k >= m:
        raise ValueError(f"top must be < {m} (the matrix size) for method='lanczos', got {k}")
    rng = np.random.default_rng(0) if generator is None else generator
    v0 = rng.standard_normal(m)
    ncv = min(m, max(2 * k + 1, k + 32))
    if not vectors:
        w = eigsh(S, k=k, which="LA", v0=v0, ncv=ncv, tol=0.0, return_eigenvectors=False)
        return Decomposition(np.sort(np.asarray(w))[::-1])
    w, V = eigsh(S, k=k, which="LA", v0=v0, ncv=ncv, tol=0.0)
    order = np.argsort(w)[::-1]
    return Decomposition(np.asarray(w)[order], np.asarray(V)[:, order])


def device_eigenvalues(S: Any) -> Any:
    """Eigenvalues of a symmetric torch matrix as a tensor: its device and dtype, decreasing.

    Negative round-off clipped to 0; a stack ``(..., m, m)`` gives ``(..., m)``. The torch
    branch of
    :func:`symmetric_eigenvalues`, for a simulator that keeps the values on the
    device in the run's precision (the top singular values of a weight matrix,
    say, are ``device_eigenvalues(W @ W.T).sqrt()``).
    """
    return decompose(S).values.clamp_min(0)


def symmetric_eigenvalues(S: Any, *, symmetrize: bool = False,
                          zero_below_rank: bool = False) -> np.ndarray:
    """Eigenvalues of a symmetric matrix, decreasing, float64, negative round-off clipped to 0.

    The one ``eigvalsh`` of specdyn. ``S`` is a numpy array (numpy's
    ``eigvalsh``) or a torch tensor (torch's, on its device, in its dtype).

    Parameters
    ----------
    S
        A square symmetric matrix.
    symmetrize
        Use ``(S + S^T) / 2`` (a product that is symmetric only to rounding).
    zero_below_rank
        Also set the eigenvalues at or below ``rank_tolerance`` (of ``S``'s
        size and the dtype it was diagonalised in) to exactly 0: round-off of
        a rank-deficient matrix.
    """
    if _is_torch(S):
        # clip and order on the device: the same bits as after the float64 copy
        w = to_numpy(device_eigenvalues(0.5 * (S + S.T) if symmetrize else S), np.float64)
        dtype: Any = S.dtype
    else:
        w = decompose(0.5 * (S + S.T) if symmetrize else S).values
        dtype = w.dtype
        w = np.clip(w, 0.0, None).copy()
    if zero_below_rank and w.size:
        w[w <= rank_tolerance(float(w[0]), w.size, dtype)] = 0.0
    return w


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

    The one Gram-spectrum routine of specdyn (module docstring, "Gram
    eigenvalues"): the measurement layer, the tracker and the simulators call it.

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


def _is_torch(x: Any) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "detach")


def _check_matrix(name: str, x: Any) -> Any:
    """Validate a 2-D real finite non-empty matrix; numpy -> float64 array, torch kept."""
    if _is_torch(x):
        if x.ndim != 2:
            raise ValueError(f"{name} must be a 2-D matrix, got shape {tuple(x.shape)}")
        if x.numel() == 0:
            raise ValueError(f"{name} must be non-empty, got shape {tuple(x.shape)}")
        if x.is_complex():
            raise ValueError(f"{name} must be real, got a complex tensor")
        x = x.detach()
        if not x.dtype.is_floating_point:
            x = x.double()
        import torch

        if not bool(torch.isfinite(x).all()):
            raise ValueError(f"{name} must be finite (it contains NaN or inf)")
        return x
    arr = np.asarray(x)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must be non-empty, got shape {arr.shape}")
    return v.real_array(name, arr)


def _top_arg(top: int | None, m: int) -> int | None:
    if top is None:
        return None
    k = v.positive_int("top", top)
    return min(k, m)


def _finish(eigs: np.ndarray, k: int | None) -> np.ndarray:
    out = np.sort(np.asarray(eigs, dtype=np.float64))[::-1]
    out = np.clip(out, 0.0, None)
    return out[:k] if k is not None else out


def _lanczos_top(matvec: Any, m: int, k: int) -> np.ndarray:
    from scipy.sparse.linalg import LinearOperator

    op = LinearOperator((m, m), matvec=matvec, dtype=np.float64)
    # the default start vector (seed 0) keeps results reproducible
    return np.asarray(decompose(op, top=k, method="lanczos").values)


def _use_lanczos(method: str, k: int | None, m: int) -> bool:
    """Lanczos on the implicit Gram operator: only when asked, or when the Gram is too big."""
    if method == "dense" or k is None:
        return False
    if method == "lanczos":
        if k >= m:
            raise ValueError(f"top must be < min(n, p) = {m} for method='lanczos', got {k}")
        return True
    return m > _GRAM_MAX and k < m


def _gram_lanczos(m: int, k: int | None) -> bool:
    """Top ``k`` of an explicit ``m x m`` Gram by Lanczos (small ``k``) rather than eigvalsh."""
    return k is not None and m > 600 and k <= m // 5


def _gram_top(G: np.ndarray, k: int) -> np.ndarray:
    """Top ``k`` eigenvalues of an explicit Gram by Lanczos (``_gram_lanczos``)."""
    return np.asarray(decompose(G, top=k, method="lanczos").values)  # seed-0 start


def covariance_spectrum(F: Any, center: bool = True, top: int | None = None, *,
                        method: str = "auto") -> np.ndarray:
    """Eigenvalues of the sample covariance ``F_c^T F_c / n``, decreasing.

    Parameters
    ----------
    F
        ``n x p`` matrix of samples (rows) by features (columns); numpy array
        or torch tensor on any device.
    center
        Remove column means first (the divisor stays ``n``).
    top
        Return only the ``top`` largest eigenvalues.
    method
        ``"auto"`` (form the smaller Gram; Lanczos on it when ``top`` is small;
        the implicit operator only when ``min(n, p) > 20000``), ``"dense"``
        (full ``eigvalsh`` of the smaller Gram) or ``"lanczos"`` (implicit
        operator, never forms the Gram).

    Returns
    -------
    numpy.ndarray
        ``min(n, p)`` (or ``top``) eigenvalues, float64, decreasing.
    """
    X = _check_matrix("F", F)
    meth = v.choice("method", method, _METHODS)
    n, p = (int(s) for s in X.shape)
    m = min(n, p)
    k = _top_arg(top, m)
    eigs, scale = _unit_spectrum(X, center, k, meth)
    return _rescale("F", eigs, scale)


def _unit_spectrum(X: Any, center: bool, k: int | None, meth: str) -> tuple[np.ndarray, float]:
    """Spectrum of ``X / s`` with ``s`` the largest absolute entry, and ``s``.

    Dividing first keeps the Gram finite and its eigenvalues normal floats
    for any finite ``X`` (1e155 * G would overflow, 1e-170 * G underflow).
    """
    n, p = (int(sz) for sz in X.shape)
    if _is_torch(X):
        X = X.double()
        scale = float(X.abs().max().item())
        if X.device.type != "cpu":
            Xs = X / scale if scale > 0 else X
            return _finish(gram_eigenvalues(Xs, center=center), k), scale
        X = to_numpy(X)  # a float64 CPU tensor shares memory with numpy
    else:
        scale = float(np.max(np.abs(X)))
    Xs = X / scale if scale > 0 else X
    if _use_lanczos(meth, k, min(n, p)):
        assert k is not None
        Xc = Xs - Xs.mean(axis=0, keepdims=True) if center else Xs
        if p <= n:
            vals = _lanczos_top(lambda u: Xc.T @ (Xc @ np.ravel(u)) / n, p, k)
        else:
            vals = _lanczos_top(lambda u: Xc @ (Xc.T @ np.ravel(u)) / n, n, k)
        return _finish(vals, k), scale
    if _gram_lanczos(min(n, p), k):
        assert k is not None
        return _finish(_gram_top(_smaller_gram(Xs, center, None, False), k), k), scale
    return _finish(gram_eigenvalues(Xs, center=center), k), scale


def _rescale(name: str, eigs: np.ndarray, scale: float, factor: float = 1.0) -> np.ndarray:
    """``eigs * scale**2 * factor``, or a clear error when that leaves float64's range."""
    if scale == 0.0:
        return eigs
    with np.errstate(over="ignore", under="ignore"):
        out = (eigs * scale) * (scale * factor)
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{name}: its eigenvalues overflow float64 (largest entry "
                         f"{scale:.3g}); divide {name} by a constant first")
    if eigs.size and eigs[0] > 0 and not out[0] > np.finfo(np.float64).tiny:
        raise ValueError(f"{name}: its eigenvalues underflow float64 (largest entry "
                         f"{scale:.3g}); multiply {name} by a constant first")
    return out


def gram_spectrum(H: Any, top: int | None = None, *, method: str = "auto") -> np.ndarray:
    """Eigenvalues of ``H^T H / n``, not centred: ``covariance_spectrum(H, center=False)``."""
    return covariance_spectrum(H, center=False, top=top, method=method)


def weight_spectrum(W: Any, normalize: str = "rows", top: int | None = None, *,
                    method: str = "auto") -> np.ndarray:
    """Eigenvalues of ``W^T W / c`` (squared singular values over ``c``), decreasing.

    Parameters
    ----------
    W
        ``N x D`` weight matrix, rows x columns (numpy or torch); a
        ``torch.nn.Linear`` weight is ``out_features x in_features``.
    normalize
        ``"rows"`` (default): ``c = N``, so i.i.d. entries of variance ``s2``
        give a Marchenko-Pastur spectrum with ``ratio = D / N`` and
        ``sigma2 = s2``; ``"cols"``: ``c = D``; ``"none"``: ``c = 1`` (squared
        singular values, WeightWatcher's convention); ``"trace"``:
        ``c = ||W||_F^2`` (eigenvalues sum to 1).
    top, method
        As in ``covariance_spectrum``.

    Returns
    -------
    numpy.ndarray
        ``min(N, D)`` (or ``top``) eigenvalues, float64, decreasing.
    """
    X = _check_matrix("W", W)
    norm = v.choice("normalize", normalize, _NORMALIZE)
    meth = v.choice("method", method, _METHODS)
    N, D = (int(s) for s in X.shape)
    k = _top_arg(top, min(N, D))
    # eig(W^T W / N) of W / s, and s; every normalisation is a rescaling of it.
    eigs, scale = _unit_spectrum(X, False, k, meth)
    if norm == "rows":
        return _rescale("W", eigs, scale)
    if norm == "cols":
        return _rescale("W", eigs, scale, N / D)
    if norm == "none":
        return _rescale("W", eigs, scale, float(N))
    if scale == 0.0:
        raise ValueError("W is all zeros: normalize='trace' is undefined")
    Xs = X.double() / scale if _is_torch(X) else X / scale
    fro2 = float((Xs**2).sum().item()) if _is_torch(X) else float(np.sum(Xs * Xs))
    return eigs * (N / fro2)  # the scale cancels


class CovarianceAccumulator:
    """Streaming feature covariance in float64, batch by batch.

    Merges batch means and scatter matrices with Chan's parallel update, so
    centring costs no precision even when the mean is large. Torch batches
    stay on their device; numpy batches are accumulated in numpy.

    Parameters
    ----------
    n_features
        ``p``, the number of columns of every batch; ``None`` takes it from
        the first batch.
    center
        Whether ``covariance()`` subtracts the mean (divisor ``n`` either way).

    Examples
    --------
    >>> acc = CovarianceAccumulator()
    >>> for batch in batches:           # doctest: +SKIP
    ...     acc.update(batch)           # (b, p) arrays or tensors
    >>> eigs = acc.spectrum()           # doctest: +SKIP
    """

    def __init__(self, n_features: int | None = None, center: bool = True) -> None:
        self.n_features = None if n_features is None else v.positive_int("n_features", n_features)
        self.center = bool(center)
        self.count = 0
        self._mean: Any = None
        self._m2: Any = None

    def update(self, batch: Any) -> CovarianceAccumulator:
        """Add the rows of a ``(b, p)`` batch (numpy or torch)."""
        X = _check_matrix("batch", batch)
        b, p = (int(s) for s in X.shape)
        if self.n_features is None:
            self.n_features = p
        if p != self.n_features:
            raise ValueError(f"batch must have {self.n_features} columns, got {p}")
        if _is_torch(X):
            X = X.double()
            mean_b = X.mean(dim=0)
            D = X - mean_b
            m2_b = D.T @ D
        else:
            mean_b = X.mean(axis=0)
            D = X - mean_b
            m2_b = D.T @ D
        if self.count == 0:
            self._mean, self._m2 = mean_b, m2_b
        else:
            n_a, n = self.count, self.count + b
            delta = mean_b - self._mean
            if _is_torch(X):
                self._mean = self._mean.to(X.device)
                self._m2 = self._m2.to(X.device)
                outer = delta[:, None] * delta[None, :]
            else:
                outer = np.outer(delta, delta)
            self._m2 = self._m2 + m2_b + outer * (n_a * b / n)
            self._mean = self._mean + delta * (b / n)
        self.count += b
        return self

    def _require(self) -> None:
        if self.count == 0:
            raise ValueError("no batches were added (call update first)")

    @property
    def mean(self) -> np.ndarray:
        """Feature means so far (float64 numpy)."""
        self._require()
        return to_numpy(self._mean, np.float64)

    def covariance(self) -> np.ndarray:
        """``p x p`` covariance ``F_c^T F_c / n`` (or ``F^T F / n`` if not centred), float64."""
        self._require()
        m2 = to_numpy(self._m2, np.float64)
        if self.center:
            return m2 / self.count
        mu = to_numpy(self._mean, np.float64)
        return (m2 + self.count * np.outer(mu, mu)) / self.count

    def spectrum(self, top: int | None = None) -> np.ndarray:
        """Eigenvalues of ``covariance()``, decreasing (all ``p`` of them, or ``top``)."""
        C = self.covariance()
        k = _top_arg(top, C.shape[0])
        return _finish(symmetric_eigenvalues(C, symmetrize=True), k)
