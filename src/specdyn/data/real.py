"""Real data sets that ship with a dependency: offline, seeded, documented preprocessing.

Three modalities whose covariance spectra decay as a power law, each for a reason
that can be named:

- :func:`image_patches`: grey patches of scikit-learn's two bundled sample
  photographs (``sklearn.datasets.load_sample_images``). Natural images have a
  power spectrum ``~ 1/f^2`` (scale invariance, Field 1987; Ruderman and Bialek
  1993); the eigenvectors of a stationary patch covariance are close to Fourier
  modes, and counting the 2-D frequencies below ``f`` gives ``k ~ f^2``, so
  ``lambda_k ~ k^-1``. The target (``P = D``) is the patch shifted by a few pixels
  (a nearly orthogonal map: ``beta`` near 0) or the patch of the Gaussian-blurred
  image (``target="blur"``: a low-pass filter, which keeps the low frequencies, the
  top modes, and damps the high ones, so ``mu_k`` decays and ``beta`` is clearly
  positive: about 0.8 at ``blur = 1`` px). For a stationary image both
  cross-covariances are nearly diagonal in the same Fourier-like basis.
- :func:`digits`: scikit-learn's 8 x 8 handwritten digits (``load_digits``,
  1797 images) with one-hot labels (``P = 10``): a low-rank target, the
  opposite of the paper's aligned ``P = D`` teacher.
- :func:`text_ngrams`: relative frequencies of the most common character
  n-grams in chunks of the Python documentation bundled with the interpreter
  (``pydoc_data.topics``). N-gram frequencies follow Zipf's law (frequency
  ``~ rank^-s``), and the variance of a count across chunks grows with its mean
  (counting noise), so the covariance inherits a power law in rank. Inputs only, or
  with ``chars=P`` the chunk's frequencies of the ``P`` most common characters as the
  target (a low-rank, nearly linear function of the bigram counts).

Every loader returns a :class:`RealData` with centred float64 ``X`` (``M x D``)
and ``Y`` (``M x P``, or ``None``), a fixed-seed sample, and a one-paragraph
description of its preprocessing. Nothing is downloaded: scikit-learn carries
the images and digits inside its wheel, and ``pydoc_data`` is part of Python.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import field
from typing import Any

import numpy as np

from specdyn import _validate as v
from specdyn._repr import array_result

__all__ = ["RealData", "digits", "image_patches", "text_ngrams"]

#: ITU-R BT.601 luma weights: RGB to grey.
_LUMA = np.array([0.299, 0.587, 0.114])


@array_result
class RealData:
    """A real data set as a regression problem: centred inputs and targets.

    Attributes
    ----------
    name
        Short name (``"patches"``, ``"digits"``, ``"text"``).
    X
        ``M x D`` inputs, float64, every column centred over the ``M`` samples.
    Y
        ``M x P`` targets, float64, centred; ``None`` for inputs-only data.
    preprocessing
        What was done to the raw data, in words (goes into the run record).
    params
        The loader's arguments (goes into the run record).
    """

    name: str
    X: np.ndarray
    Y: np.ndarray | None
    preprocessing: str
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def M(self) -> int:
        """Number of samples."""
        return int(self.X.shape[0])

    @property
    def D(self) -> int:
        """Input dimension."""
        return int(self.X.shape[1])

    @property
    def P(self) -> int | None:
        """Output dimension (``None`` without targets)."""
        return None if self.Y is None else int(self.Y.shape[1])

    def split(self, heldout: float, seed: int = 0) -> tuple[RealData, RealData]:
        """A training and a held-out part: a ``numpy.random.default_rng(seed)`` permutation
        of the samples, its first ``round(heldout M)`` held out (``heldout`` in ``(0, 1)``,
        both parts at least 2 samples), each part in the permutation's order (so any first
        rows of a part are a random sample of it, whatever the order of the whole set).
        Each part keeps the whole set's centring (a part's own means are near 0, and
        :func:`specdyn.data.decompose_data` removes them).
        """
        frac = v.in_range("heldout", heldout, 0.0, 1.0, lo_open=True, hi_open=True)
        seed = v.positive_int("seed", seed, minimum=0)
        n_out = int(round(frac * self.M))
        if n_out < 2 or self.M - n_out < 2:
            raise ValueError(f"heldout must leave at least 2 samples in each part, got "
                             f"{frac:g} of {self.M}")
        order = np.random.default_rng(seed).permutation(self.M)

        def part(idx: np.ndarray, name: str) -> RealData:
            X = self.X[idx]
            X.setflags(write=False)
            Y = None if self.Y is None else self.Y[idx]
            if Y is not None:
                Y.setflags(write=False)
            text = f"{self.preprocessing}; the {name} part ({idx.size} of {self.M}, seed {seed})"
            return RealData(self.name, X, Y, text,
                            {**self.params, "part": name, "heldout": frac, "split_seed": seed})

        return part(order[n_out:], "training"), part(order[:n_out], "held-out")


def _centred(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    a = a - a.mean(axis=0, keepdims=True)
    a.setflags(write=False)
    return a


def _grey_images() -> list[np.ndarray]:
    from sklearn.datasets import load_sample_images  # bundled in the wheel: no download

    return [np.asarray(im, dtype=np.float64) @ _LUMA / 255.0
            for im in load_sample_images().images]


def image_patches(patch: int = 12, M: int = 4000, shift: int = 1, seed: int = 0, *,
                  target: str = "shift", blur: float = 1.0) -> RealData:
    """Grey ``patch x patch`` patches, and as target the same patches shifted ``shift``
    pixels right (``target="shift"``) or taken from the blurred image (``"blur"``).

    Preprocessing: each of the two sample photographs (``china.jpg``,
    ``flower.jpg``, 427 x 640) is converted to grey with the BT.601 luma weights
    and scaled to ``[0, 1]``; ``M/2`` patch positions per image are drawn
    uniformly with ``numpy.random.default_rng(seed)``; the input is the patch at
    ``(i, j)`` and the target the patch at ``(i, j + shift)`` (``"shift"``) or the
    patch at ``(i, j)`` of the image filtered by a Gaussian of standard deviation
    ``blur`` pixels (``"blur"``; ``scipy.ndimage.gaussian_filter``, reflecting at the
    image's border, so pixels outside the patch enter the target); each patch has its
    own mean subtracted (the mean brightness, a single mode that carries most of
    the variance and is not part of the ``1/f^2`` law), then every pixel column
    is centred over the samples. The patch-mean removal leaves one exactly
    zero direction, so ``X`` has rank ``D - 1``. The samples come in image order (the
    first ``M/2`` from ``china.jpg``): use :meth:`RealData.split` for a held-out part.

    Parameters
    ----------
    patch
        Side of a square patch, 2 to 64 (``D = P = patch**2``).
    M
        Number of patches, even, at least 2.
    shift
        Horizontal shift of the target patch in pixels, 0 to 64; with ``"blur"`` it only
        bounds the positions drawn, so both targets of one ``seed`` share their inputs.
    seed
        Seed of the patch positions.
    target
        ``"shift"`` or ``"blur"``.
    blur
        Standard deviation of the blur in pixels, in ``(0, 16]`` (``"blur"`` only).
    """
    patch = v.positive_int("patch", patch, minimum=2)
    if patch > 64:
        raise ValueError(f"patch must be in [2, 64], got {patch}")
    M = v.positive_int("M", M, minimum=2)
    if M % 2:
        raise ValueError(f"M must be even (M/2 patches from each of the two images), got {M}")
    shift = v.positive_int("shift", shift, minimum=0)
    if shift > 64:
        raise ValueError(f"shift must be in [0, 64], got {shift}")
    seed = v.positive_int("seed", seed, minimum=0)
    target = v.choice("target", target, ("shift", "blur"))
    sigma = v.in_range("blur", blur, 0.0, 16.0, lo_open=True)
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for g in _grey_images():
        H, W = g.shape
        src = g if target == "shift" else _blurred(g, sigma)
        i = rng.integers(0, H - patch + 1, size=M // 2)
        j = rng.integers(0, W - patch - shift + 1, size=M // 2)
        rows = i[:, None, None] + np.arange(patch)[None, :, None]
        cols = j[:, None, None] + np.arange(patch)[None, None, :]
        xs.append(g[rows, cols].reshape(M // 2, -1))
        ys.append(src[rows, cols + (shift if target == "shift" else 0)].reshape(M // 2, -1))
    X, Y = np.concatenate(xs), np.concatenate(ys)
    X = X - X.mean(axis=1, keepdims=True)
    Y = Y - Y.mean(axis=1, keepdims=True)
    what = (f"the patch {shift} px to the right" if target == "shift" else
            f"the same patch of the image blurred by a Gaussian of {sigma:g} px")
    text = (f"{M} grey {patch}x{patch} patches (BT.601 luma, [0, 1]) at seeded uniform "
            f"positions in scikit-learn's two sample images, target = {what}; per-patch "
            "mean removed, then every pixel centred")
    params: dict[str, Any] = {"patch": patch, "M": M, "seed": seed, "target": target}
    params.update({"shift": shift} if target == "shift" else {"blur": sigma})
    return RealData("patches", _centred(X), _centred(Y), text, params)


def _blurred(g: np.ndarray, sigma: float) -> np.ndarray:
    from scipy.ndimage import gaussian_filter

    return np.asarray(gaussian_filter(g, sigma, mode="reflect"), dtype=np.float64)


def digits(M: int | None = None, seed: int = 0) -> RealData:
    """scikit-learn's 8 x 8 handwritten digits and their one-hot labels (``D = 64``, ``P = 10``).

    Preprocessing: pixel values ``0..16`` divided by 16; the first ``M`` images of
    a ``numpy.random.default_rng(seed)`` permutation (all 1797 when ``M`` is
    ``None``); labels one-hot; inputs and targets centred per column. Pixels
    that are blank in every image (the corners) stay as zero columns: ``X`` is
    rank deficient.

    Parameters
    ----------
    M
        Number of images, 2 to 1797, or ``None`` for all.
    seed
        Seed of the permutation.
    """
    from sklearn.datasets import load_digits  # bundled in the wheel: no download

    seed = v.positive_int("seed", seed, minimum=0)
    d = load_digits()
    n = int(d.data.shape[0])
    if M is None:
        M = n
    M = v.positive_int("M", M, minimum=2)
    if M > n:
        raise ValueError(f"M must be in [2, {n}] (the number of digits), got {M}")
    order = np.random.default_rng(seed).permutation(n)[:M]
    X = np.asarray(d.data, dtype=np.float64)[order] / 16.0
    Y = np.eye(10)[np.asarray(d.target)[order]]
    text = (f"{M} of scikit-learn's 1797 8x8 digits (seeded permutation), pixels / 16, "
            "one-hot labels (P = 10); inputs and labels centred per column")
    return RealData("digits", _centred(X), _centred(Y), text, {"M": M, "seed": seed})


def text_ngrams(length: int = 2, D: int = 128, chunk: int = 1000,
                chars: int | None = None) -> RealData:
    """Relative frequencies of the ``D`` most common character n-grams per text chunk.

    Preprocessing: the texts of ``pydoc_data.topics`` (Python's bundled
    documentation topics) joined in sorted key order, cut into consecutive
    chunks of ``chunk`` characters (the remainder dropped); the vocabulary is
    the ``D`` most frequent n-grams (``n = length``) of the whole text (ties broken by
    first appearance); each chunk's feature is the count of each n-gram divided by
    ``chunk``; columns centred. Deterministic (no seed). Inputs only, unless ``chars``
    is given: then the target is the chunk's frequency of each of the ``chars`` most
    common characters of the whole text (``P = chars``), centred.

    Parameters
    ----------
    length
        N-gram length ``n``, 1 to 5.
    D
        Vocabulary size, at least 2.
    chunk
        Characters per chunk (one sample), 100 to 100000.
    chars
        ``None`` (no target) or the number of characters of the target, at least 1.
    """
    from pydoc_data.topics import topics  # part of the standard library

    n = v.positive_int("length", length)
    if n > 5:
        raise ValueError(f"length must be in [1, 5], got {n}")
    D = v.positive_int("D", D, minimum=2)
    chunk = v.positive_int("chunk", chunk, minimum=100)
    if chunk > 100_000:
        raise ValueError(f"chunk must be in [100, 100000], got {chunk}")
    text = "".join(topics[k] for k in sorted(topics))
    counts = Counter(text[i:i + n] for i in range(len(text) - n + 1))
    if len(counts) < D:
        raise ValueError(f"D must be <= {len(counts)} (distinct {n}-grams in the text), got {D}")
    vocab = {g: j for j, (g, _) in enumerate(counts.most_common(D))}
    starts = range(0, len(text) - chunk + 1, chunk)
    X = np.zeros((len(starts), D))
    for m, s in enumerate(starts):
        piece = text[s:s + chunk]
        for i in range(len(piece) - n + 1):
            j = vocab.get(piece[i:i + n])
            if j is not None:
                X[m, j] += 1.0
    X /= chunk
    desc = (f"{len(starts)} chunks of {chunk} characters of Python's pydoc_data topics; "
            f"features = frequency of each of the {D} most common character {n}-grams; "
            "columns centred")
    params: dict[str, Any] = {"length": n, "D": D, "chunk": chunk}
    if chars is None:
        return RealData("text", _centred(X), None, desc, params)
    P = v.positive_int("chars", chars)
    common = Counter(text).most_common(P)
    if len(common) < P:
        raise ValueError(f"chars must be <= {len(common)} (distinct characters), got {P}")
    cidx = {ch: j for j, (ch, _) in enumerate(common)}
    Y = np.zeros((len(starts), P))
    for m, s in enumerate(starts):
        for ch, cnt in Counter(text[s:s + chunk]).items():
            j = cidx.get(ch)
            if j is not None:
                Y[m, j] = cnt
    Y /= chunk
    desc += f"; target = frequency of each of the {P} most common characters, centred"
    return RealData("text", _centred(X), _centred(Y), desc, {**params, "chars": P})
