"""Spectra: the Gram trick, Lanczos top-k, normalisations, streaming, bad input.

Oracles: numpy's dense eigvalsh of the explicit p x p covariance and
numpy.linalg.svd.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from specdyn.measure import (
    CovarianceAccumulator,
    covariance_spectrum,
    device_eigenvalues,
    gram_spectrum,
    symmetric_eigenvalues,
    weight_spectrum,
)

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def _direct(F: np.ndarray, center: bool) -> np.ndarray:
    Fc = F - F.mean(axis=0) if center else F
    return np.sort(np.linalg.eigvalsh(Fc.T @ Fc / F.shape[0]))[::-1]


@pytest.mark.parametrize(("n", "p"), [(200, 50), (50, 200), (64, 64)])
@pytest.mark.parametrize("center", [True, False])
def test_gram_trick_equals_direct(n: int, p: int, center: bool) -> None:
    rng = np.random.default_rng(0)
    F = rng.standard_normal((n, p)) @ np.diag(np.arange(1, p + 1) ** -0.5) + 2.0
    eigs = covariance_spectrum(F, center=center)
    direct = _direct(F, center)
    assert eigs.shape == (min(n, p),)
    assert np.all(np.diff(eigs) <= 0)
    assert np.max(np.abs(eigs - direct[: min(n, p)])) <= 1e-12 * direct[0]
    # What is not returned is exactly the null space.
    assert np.all(direct[min(n, p):] <= 1e-10 * direct[0])


@pytest.mark.parametrize(("n", "p"), [(1500, 800), (700, 1400)])
def test_top_k_lanczos_matches_full_spectrum(n: int, p: int) -> None:
    rng = np.random.default_rng(1)
    F = rng.standard_normal((n, p)) * np.arange(1, p + 1) ** -0.6
    full = covariance_spectrum(F, method="dense")
    for method in ("lanczos", "auto"):
        top = covariance_spectrum(F, top=40, method=method)
        assert top.shape == (40,)
        assert np.max(np.abs(top / full[:40] - 1)) < 1e-8


def test_top_larger_than_rank_is_clipped_and_dense_top_matches() -> None:
    rng = np.random.default_rng(2)
    F = rng.standard_normal((30, 10))
    assert covariance_spectrum(F, top=50).shape == (10,)
    assert covariance_spectrum(F, top=3) == pytest.approx(covariance_spectrum(F)[:3])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_torch_input_matches_numpy(device: str, dtype: torch.dtype) -> None:
    rng = np.random.default_rng(3)
    F = rng.standard_normal((120, 40))
    ref = covariance_spectrum(F)
    T = torch.tensor(F, dtype=dtype, device=device)
    got = covariance_spectrum(T)
    assert isinstance(got, np.ndarray) and got.dtype == np.float64
    tol = 1e-12 if dtype == torch.float64 else 1e-5
    assert np.max(np.abs(got - ref)) <= tol * ref[0]
    W = torch.tensor(F.T, dtype=dtype, device=device)
    assert np.max(np.abs(weight_spectrum(W) - weight_spectrum(F.T))) <= tol * ref[0] * 10


@pytest.mark.parametrize(("normalize", "divisor"), [("none", lambda N, M, W: 1.0),
                                                   ("rows", lambda N, M, W: N),
                                                   ("cols", lambda N, M, W: M),
                                                   ("trace", lambda N, M, W: np.sum(W**2))])
def test_weight_spectrum_normalisations_match_svd(normalize: str, divisor) -> None:
    rng = np.random.default_rng(4)
    for N, M in ((40, 90), (90, 40)):
        W = rng.standard_normal((N, M))
        s = np.linalg.svd(W, compute_uv=False)
        got = weight_spectrum(W, normalize=normalize)
        assert got == pytest.approx(s**2 / divisor(N, M, W), rel=1e-10)
    assert weight_spectrum(W, "trace").sum() == pytest.approx(1.0)


def test_weight_spectrum_rows_is_marchenko_pastur() -> None:
    from specdyn.measure import fit_mp_bulk

    rng = np.random.default_rng(5)
    N, M = 1000, 400
    W = rng.standard_normal((N, M)) * 0.3
    fit = fit_mp_bulk(weight_spectrum(W, "rows"), M / N)
    assert fit.sigma2 == pytest.approx(0.09, rel=0.01)


def test_gram_spectrum_is_uncentred() -> None:
    rng = np.random.default_rng(6)
    H = rng.standard_normal((50, 20)) + 5
    assert gram_spectrum(H) == pytest.approx(_direct(H, center=False)[:20])


@pytest.mark.parametrize("center", [True, False])
def test_accumulator_equals_batch_spectrum(center: bool) -> None:
    rng = np.random.default_rng(7)
    F = rng.standard_normal((1000, 30)) * np.linspace(1, 0.1, 30) + 1e4  # large mean
    acc = CovarianceAccumulator(30, center=center)
    for i in range(0, 1000, 137):
        acc.update(F[i:i + 137])
    assert acc.count == 1000
    Fc = F - F.mean(axis=0) if center else F
    direct_cov = Fc.T @ Fc / 1000
    # Chan's update: centred covariance exact to rounding despite the mean of 1e4.
    assert np.max(np.abs(acc.covariance() - direct_cov)) < 1e-7 * np.max(np.abs(direct_cov))
    assert acc.mean == pytest.approx(F.mean(axis=0), rel=1e-14)
    top = acc.spectrum(top=5)
    ref = np.sort(np.linalg.eigvalsh(direct_cov))[::-1][:5]
    assert np.max(np.abs(top - ref)) < 1e-8 * ref[0]


def test_accumulator_accepts_torch_batches() -> None:
    rng = np.random.default_rng(8)
    F = rng.standard_normal((300, 12))
    acc = CovarianceAccumulator()
    for i in range(0, 300, 100):
        acc.update(torch.tensor(F[i:i + 100]))
    assert acc.spectrum() == pytest.approx(covariance_spectrum(F), rel=1e-10)


def test_accumulator_bad_input() -> None:
    acc = CovarianceAccumulator(4)
    with pytest.raises(ValueError, match="no batches"):
        acc.spectrum()
    with pytest.raises(ValueError, match="columns"):
        acc.update(np.ones((3, 5)))
    with pytest.raises(ValueError, match="batch"):
        acc.update(np.ones(4))


@pytest.mark.parametrize(("F", "match"), [
    (np.zeros((0, 3)), "F must be non-empty"),
    (np.ones(5), "F must be a 2-D"),
    (np.ones((2, 2, 2)), "F must be a 2-D"),
    (np.array([[1.0, np.nan], [0.0, 1.0]]), "F must not contain NaN"),
    (np.array([[1.0, np.inf], [0.0, 1.0]]), "F must be finite"),
    (np.array([[1.0 + 2j, 0.0], [0.0, 1.0]]), "F must be real"),
    (torch.ones(4), "F must be a 2-D"),
    (torch.tensor([[1.0, float("nan")], [0.0, 1.0]]), "F must be finite"),
    (torch.ones((2, 2), dtype=torch.complex64), "F must be real"),
])
def test_bad_matrices_rejected(F, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        covariance_spectrum(F)


def test_bad_options_rejected() -> None:
    F = np.ones((5, 3))
    with pytest.raises(ValueError, match="top"):
        covariance_spectrum(F, top=0)
    with pytest.raises(ValueError, match="method"):
        covariance_spectrum(F, method="qr")
    with pytest.raises(ValueError, match="normalize"):
        weight_spectrum(F, normalize="max")
    with pytest.raises(ValueError, match="W must be a 2-D"):
        weight_spectrum(np.ones(3))
    with pytest.raises(ValueError, match="top must be <"):
        covariance_spectrum(np.random.default_rng(0).standard_normal((5, 3)), top=3,
                            method="lanczos")


@pytest.mark.parametrize("scale", [1e-150, 1e150])
def test_extreme_scales_give_rescaled_spectra(scale: float) -> None:
    """Entries near float64's limits: the spectrum is scale**2 times that of G (oracle: G)."""
    from specdyn.measure import covariance_spectrum, weight_spectrum

    G = np.random.default_rng(0).standard_normal((40, 25))
    np.testing.assert_allclose(covariance_spectrum(scale * G) / scale**2,
                               covariance_spectrum(G), rtol=1e-12)
    np.testing.assert_allclose(weight_spectrum(scale * G, "none") / scale**2,
                               weight_spectrum(G, "none"), rtol=1e-12)
    np.testing.assert_allclose(weight_spectrum(torch.tensor(scale * G), "trace"),
                               weight_spectrum(G, "trace"), rtol=1e-12)


@pytest.mark.parametrize(("scale", "word"), [(1e-170, "underflow"), (1e155, "overflow")])
def test_unrepresentable_spectra_raise_clearly(scale: float, word: str) -> None:
    """Eigenvalues beyond float64 (1e-340, 1e310): a clear error, not zeros or LinAlgError."""
    from specdyn.measure import covariance_spectrum, weight_spectrum

    G = np.random.default_rng(0).standard_normal((40, 25))
    with pytest.raises(ValueError, match=f"F: its eigenvalues {word}"):
        covariance_spectrum(scale * G)
    with pytest.raises(ValueError, match=f"W: its eigenvalues {word}"):
        weight_spectrum(torch.tensor(scale * G))


def test_rank_tolerance_is_lambda1_size_eps() -> None:
    from specdyn.measure import rank_tolerance

    assert rank_tolerance(4.0, (300, 200)) == 4.0 * 300 * np.finfo(np.float64).eps
    assert rank_tolerance(1.0, 10, np.float32) == 10 * np.finfo(np.float32).eps
    assert rank_tolerance(1.0, 10, torch.bfloat16) == 10 * torch.finfo(torch.bfloat16).eps
    assert rank_tolerance(-1.0, 10) == 0.0


@pytest.mark.parametrize("shape", [(40, 25), (25, 40), (30, 30)])
@pytest.mark.parametrize("kind", ["numpy", "torch32", "torch64"])
@pytest.mark.parametrize("precision", ["float64", "auto"])
def test_gram_eigenvalues_match_svd(shape: tuple[int, int], kind: str, precision: str) -> None:
    from specdyn.measure import gram_eigenvalues

    X = np.random.default_rng(sum(shape)).standard_normal(shape)
    Xc = X - X.mean(axis=0)
    ref = np.linalg.svd(Xc, compute_uv=False) ** 2 / 7.0  # oracle: singular values
    arg = X if kind == "numpy" else torch.from_numpy(X).to(
        torch.float32 if kind == "torch32" else torch.float64)
    got = gram_eigenvalues(arg, center=True, divisor=7.0, precision=precision)
    assert got.dtype == np.float64 and got.shape == (min(shape),)
    assert np.all(np.diff(got) <= 0) and np.all(got >= 0)
    # float32 input is cast to float64 before the Gram on the CPU ("auto" too): the
    # only float32 error is the input's rounding, ~1e-7 relative
    rtol = 1e-6 if kind == "torch32" else 1e-10
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=rtol * ref[0])


def test_symmetric_eigenvalues_zero_only_roundoff_below_rank_tolerance() -> None:
    from specdyn.measure import rank_tolerance, symmetric_eigenvalues

    A = np.random.default_rng(5).standard_normal((20, 6))
    S = A @ A.T  # rank 6: 14 eigenvalues that are round-off
    w = symmetric_eigenvalues(S, symmetrize=True, zero_below_rank=True)
    assert np.count_nonzero(w) == 6 and np.all(w[6:] == 0.0)
    assert w[5] > rank_tolerance(w[0], 20)
    raw = symmetric_eigenvalues(S, symmetrize=True)
    np.testing.assert_array_equal(raw[:6], w[:6])  # same solver, same numbers
    with pytest.raises(ValueError, match="precision"):
        from specdyn.measure import gram_eigenvalues

        gram_eigenvalues(A, precision="float32")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_device_eigenvalues_are_the_torch_branch_of_symmetric_eigenvalues(dtype: str) -> None:
    g = torch.Generator().manual_seed(3)
    X = torch.randn(4, 6, generator=g, dtype=getattr(torch, dtype))
    S = X.T @ X  # rank 4 of 6: two eigenvalues at round-off, possibly negative
    w = device_eigenvalues(S)
    assert w.dtype == S.dtype and bool((w[:-1] >= w[1:]).all()) and bool((w >= 0).all())
    np.testing.assert_array_equal(w.double().numpy(), symmetric_eigenvalues(S))


# ------------------------------------------------------------------ the spectral core


def _sym(m: int, seed: int = 0) -> np.ndarray:
    X = np.random.default_rng(seed).standard_normal((3 * m, m))
    return X.T @ X / (3 * m)


def test_decompose_eigenpairs_satisfy_their_equation_and_are_decreasing() -> None:
    from specdyn.measure.spectra import decompose

    S = _sym(12)
    w, V, right = decompose(S, vectors=True)
    assert right is None and np.all(np.diff(w) <= 0)
    np.testing.assert_allclose(S @ V, V * w, atol=1e-12)
    np.testing.assert_allclose(V.T @ V, np.eye(12), atol=1e-12)
    # values alone (another LAPACK path: round-off apart), then top-k and LAPACK order of
    # those: the same numbers
    only = decompose(S).values
    np.testing.assert_allclose(only, w, rtol=1e-12)
    np.testing.assert_array_equal(decompose(S, top=3).values, only[:3])
    np.testing.assert_array_equal(decompose(S, increasing=True).values, only[::-1])


def test_decompose_singular_triplets_rebuild_the_matrix_centred_or_not() -> None:
    from specdyn.measure.spectra import decompose

    A = np.random.default_rng(1).standard_normal((9, 5)) + 3.0
    s, U, V = decompose(A, singular=True, vectors=True)
    np.testing.assert_allclose((U * s) @ V.T, A, atol=1e-12)
    sc = decompose(A, singular=True, center=True).values
    np.testing.assert_allclose(decompose(A - A.mean(0), singular=True).values, sc)
    assert sc[0] < s[0]  # the mean (a rank-one 3.0 shift) is gone


def test_decompose_lanczos_top_k_matches_the_dense_decomposition() -> None:
    from specdyn.measure.spectra import decompose

    S = _sym(80, seed=2)
    dense = decompose(S, vectors=True, top=4)
    lan = decompose(S, vectors=True, top=4, method="lanczos",
                    generator=np.random.default_rng(7))
    np.testing.assert_allclose(lan.values, dense.values, rtol=1e-12)
    # the same vectors up to sign
    np.testing.assert_allclose(np.abs(np.sum(lan.vectors * dense.vectors, axis=0)), 1.0,
                               atol=1e-10)


def test_decompose_keeps_torch_input_on_its_dtype_and_matches_numpy() -> None:
    import torch

    from specdyn.measure.spectra import decompose

    S = _sym(10, seed=3)
    got = decompose(torch.as_tensor(S), vectors=True)
    assert isinstance(got.values, torch.Tensor) and got.values.dtype == torch.float64
    np.testing.assert_allclose(got.values.numpy(), decompose(S).values, rtol=1e-12)
    s32 = decompose(torch.as_tensor(S, dtype=torch.float32), singular=True, top=2).values
    assert s32.dtype == torch.float32 and s32.shape == (2,)


@pytest.mark.parametrize("kwargs, match", [
    ({"center": True}, "center=True needs singular=True"),
    ({"method": "lanczos"}, "method='lanczos'"),
    ({"increasing": True, "top": 2}, "increasing=True"),
    ({"method": "qr"}, "method"),
    ({"top": 0}, "top"),
])
def test_decompose_refuses_bad_arguments(kwargs: dict, match: str) -> None:
    from specdyn.measure.spectra import decompose

    with pytest.raises(ValueError, match=match):
        decompose(_sym(6), **kwargs)


def test_decompose_takes_a_stack_of_symmetric_matrices() -> None:
    from specdyn.measure.spectra import decompose

    S = np.stack([_sym(7, seed=i) for i in range(3)])
    for batch in (S, torch.as_tensor(S)):
        w = np.asarray(decompose(batch, top=2).values)
        assert w.shape == (3, 2)
        for i in range(3):
            np.testing.assert_allclose(w[i], decompose(S[i]).values[:2], rtol=1e-12)
