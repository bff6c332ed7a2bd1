"""The bundled real data sets: shapes, centring, determinism, offline loading, bad input."""

from __future__ import annotations

import socket

import numpy as np
import pytest

from specdyn.data.real import digits, image_patches, text_ngrams


@pytest.fixture()
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to open a network connection fails the test."""
    def refuse(*_a: object, **_k: object) -> None:
        raise AssertionError("a loader tried to reach the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_patches_shapes_centring_and_rank(offline: None) -> None:
    d = image_patches(patch=6, M=200, shift=2, seed=3)
    assert d.X.shape == (200, 36) and d.Y is not None and d.Y.shape == (200, 36)
    assert d.M == 200 and d.D == 36 and d.P == 36
    np.testing.assert_allclose(d.X.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(d.Y.mean(axis=0), 0.0, atol=1e-12)
    # the per-patch mean is removed: every row sums to 0, one exactly-zero direction
    np.testing.assert_allclose(d.X.sum(axis=1), 0.0, atol=1e-10)
    assert np.linalg.matrix_rank(d.X) == 35
    assert not d.X.flags.writeable and "patch" in d.preprocessing


def test_patches_target_is_the_shifted_patch(offline: None) -> None:
    # with shift 0 the target is the input itself
    d = image_patches(patch=5, M=50, shift=0, seed=1)
    np.testing.assert_array_equal(d.X, d.Y)
    # with shift 1 the target's first columns are the input's next columns
    s = image_patches(patch=5, M=50, shift=1, seed=1)
    x = s.X.reshape(50, 5, 5)
    y = s.Y.reshape(50, 5, 5)
    # up to the per-patch means, y[:, :, :4] equals x[:, :, 1:]
    diff = (y[:, :, :4] - x[:, :, 1:])
    np.testing.assert_allclose(diff - diff.mean(axis=(1, 2), keepdims=True), 0.0, atol=1e-12)


def test_loaders_are_deterministic_and_seeded(offline: None) -> None:
    a, b = image_patches(patch=4, M=40, seed=7), image_patches(patch=4, M=40, seed=7)
    np.testing.assert_array_equal(a.X, b.X)
    assert not np.array_equal(a.X, image_patches(patch=4, M=40, seed=8).X)
    np.testing.assert_array_equal(digits(100, 2).X, digits(100, 2).X)
    assert not np.array_equal(digits(100, 2).X, digits(100, 3).X)
    np.testing.assert_array_equal(text_ngrams(2, 32).X, text_ngrams(2, 32).X)


def test_digits_shapes_and_labels(offline: None) -> None:
    d = digits()
    assert d.X.shape == (1797, 64) and d.Y is not None and d.Y.shape == (1797, 10)
    # centred one-hot labels: each row is e_label - class frequencies
    assert np.allclose(d.Y.sum(axis=1), 0.0)
    assert np.linalg.matrix_rank(d.Y) == 9


def test_text_ngrams_shape_and_power_law_spectrum(offline: None) -> None:
    from specdyn.measure import fit_power_law

    d = text_ngrams(length=2, D=64, chunk=2000)
    assert d.Y is None and d.P is None and d.D == 64 and d.M > 100
    lam = np.clip(np.linalg.eigvalsh(d.X.T @ d.X / d.M), 0, None)
    fit = fit_power_law(lam, 2, 30, n_boot=0)
    # Zipf: a clear power law in rank (exponent of order one, good straight-line fit)
    assert 0.5 < fit.exponent < 2.5 and fit.r2 > 0.9


@pytest.mark.parametrize(("fn", "kwargs", "name"), [
    (image_patches, {"patch": 1}, "patch"),
    (image_patches, {"patch": 65}, "patch"),
    (image_patches, {"M": 3}, "M"),
    (image_patches, {"shift": -1}, "shift"),
    (image_patches, {"seed": -1}, "seed"),
    (digits, {"M": 1798}, "M"),
    (digits, {"M": 1}, "M"),
    (text_ngrams, {"length": 6}, "length"),
    (text_ngrams, {"D": 1}, "D"),
    (text_ngrams, {"chunk": 10}, "chunk"),
])
def test_bad_arguments_name_themselves(fn, kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        fn(**kwargs)


def test_blurred_target_and_its_decaying_strengths(offline: None) -> None:
    """A low-pass target keeps the top modes and damps the high ones: mu_k decays faster
    than for the shifted patch (beta well above the shift's)."""
    from specdyn.data import decompose_data
    from specdyn.measure import data_exponents

    b = image_patches(patch=8, M=600, seed=0, target="blur", blur=1.0)
    s = image_patches(patch=8, M=600, seed=0)
    np.testing.assert_array_equal(b.X, s.X)  # the same inputs, another target
    assert b.params["target"] == "blur" and "blurred by a Gaussian of 1 px" in b.preprocessing
    beta_b = data_exponents(*(lambda d: (d.lam, d.mu))(decompose_data(b.X, b.Y)), 2, 16).beta
    beta_s = data_exponents(*(lambda d: (d.lam, d.mu))(decompose_data(s.X, s.Y)), 2, 16).beta
    assert beta_b > beta_s + 0.4
    with pytest.raises(ValueError, match="^target"):
        image_patches(patch=4, M=10, target="sharpen")
    with pytest.raises(ValueError, match="^blur"):
        image_patches(patch=4, M=10, target="blur", blur=0.0)


def test_text_with_a_character_target(offline: None) -> None:
    t = text_ngrams(2, 32, chars=8)
    assert t.Y is not None and t.Y.shape == (t.M, 8) and t.P == 8
    np.testing.assert_allclose(t.Y.mean(axis=0), 0.0, atol=1e-12)
    with pytest.raises(ValueError, match="^chars"):
        text_ngrams(2, 32, chars=0)


def test_split_is_a_seeded_partition() -> None:
    d = digits(M=100, seed=0)
    tr, ho = d.split(0.2, seed=1)
    assert (tr.M, ho.M) == (80, 20) and ho.params["part"] == "held-out"
    rows = {tuple(r) for r in np.vstack([tr.X, ho.X]).round(12)}
    assert rows == {tuple(r) for r in d.X.round(12)}
    tr2, _ = d.split(0.2, seed=1)
    np.testing.assert_array_equal(tr.X, tr2.X)
    with pytest.raises(ValueError, match="^heldout"):
        d.split(0.999)
