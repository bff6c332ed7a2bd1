"""One-call spectral summary of a matrix, and of every tensor in a weights file.

``summarize_matrix`` is what ``specdyn analyze`` prints for each layer:
spectrum, power-law fit, Marchenko-Pastur bulk and outliers. ``load_tensors``
reads ``.npy``, ``.npz``, torch checkpoints (``.pt``/``.pth``/``.bin``, with
``weights_only=True``) and ``.safetensors`` into a flat ``{name: array}`` dict.

Conventions: a matrix ``W`` (``N x M``, rows x columns) is summarised through
the eigenvalues of ``W^T W / N`` (``weight_spectrum(W, "rows")``), so i.i.d.
entries of variance ``s2`` give Marchenko-Pastur with ``ratio = M / N``; with
``center=True`` the rows are treated as samples and centred first (a
representation ``F``: ``covariance_spectrum(F)``). Tensors with more than two
axes (convolutions) are reshaped to ``shape[0] x prod(shape[1:])``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from specdyn import _validate as v
from specdyn._torch import to_numpy
from specdyn.measure.exponents import PowerLawFit, fit_power_law
from specdyn.measure.outliers import MPFit, OutlierReport, find_outliers, fit_mp_bulk
from specdyn.measure.spectra import covariance_spectrum, weight_spectrum

__all__ = [
    "LayerSummary",
    "load_tensors",
    "summarize_file",
    "summarize_matrix",
    "summarize_tensors",
]

SUFFIXES = (".npy", ".npz", ".pt", ".pth", ".bin", ".ckpt", ".safetensors")
_STATE_KEYS = ("state_dict", "model_state_dict", "model", "module", "net", "params")


@dataclass(frozen=True)
class LayerSummary:
    """Spectral summary of one tensor; ``status`` is ``"ok"`` or why it was not analysed.

    ``eigs`` is the full spectrum (decreasing) when computed; ``fit``,
    ``mp`` and ``outliers`` are ``None`` when that step failed, with the
    reason in ``notes``.
    """

    name: str
    shape: tuple[int, ...]
    status: str
    matrix_shape: tuple[int, int] | None = None
    eigs: np.ndarray | None = None
    fit: PowerLawFit | None = None
    mp: MPFit | None = None
    outliers: OutlierReport | None = None
    notes: tuple[str, ...] = field(default=())


def summarize_matrix(name: str, W: Any, *, center: bool = False, alpha: float = 0.05,
                     n_boot: int = 200) -> LayerSummary:
    """Spectrum, power-law fit, MP bulk and outliers of one tensor (never raises on content).

    Tensors that cannot be analysed (fewer than 2 axes, non-float, non-finite,
    fewer than 3 singular values) come back with ``status`` saying why.
    """
    a = v.in_range("alpha", alpha, 0.0, 1.0, lo_open=True, hi_open=True)
    arr = _to_numpy(W)
    shape = tuple(int(s) for s in np.shape(arr))
    if arr is None:
        return LayerSummary(name, shape, f"skipped: not an array ({type(W).__name__})")
    notes: list[str] = []
    if arr.ndim < 2:
        what = "scalar" if arr.ndim == 0 else "1-D tensor (bias or normalisation)"
        return LayerSummary(name, shape, f"skipped: {what}, no matrix spectrum")
    if np.iscomplexobj(arr):
        return LayerSummary(name, shape, "skipped: complex dtype")
    if not np.issubdtype(arr.dtype, np.floating):
        return LayerSummary(name, shape, f"skipped: non-float dtype {arr.dtype}")
    if arr.ndim > 2:
        arr = arr.reshape(arr.shape[0], -1)
        notes.append(f"reshaped {shape} -> {arr.shape}")
    N, M = (int(s) for s in arr.shape)
    if min(N, M) < 3:
        return LayerSummary(name, shape, "skipped: fewer than 3 singular values",
                            matrix_shape=(N, M), notes=tuple(notes))
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        return LayerSummary(name, shape, "skipped: contains NaN or inf", matrix_shape=(N, M),
                            notes=tuple(notes))
    if center:
        eigs = covariance_spectrum(arr, center=True)
        ratio, n_samples = M / (N - 1), float(N - 1)
    else:
        eigs = weight_spectrum(arr, normalize="rows")
        ratio, n_samples = M / N, float(N)
    fit = mp = rep = None
    try:
        fit = fit_power_law(eigs, n_boot=n_boot)
    except ValueError as err:
        notes.append(f"no exponent: {err}")
    try:
        mp = fit_mp_bulk(eigs, ratio, n_samples=n_samples)
        rep = find_outliers(eigs, ratio, a, n_samples=n_samples)
    except ValueError as err:
        notes.append(f"no MP fit: {err}")
    return LayerSummary(name, shape, "ok", matrix_shape=(N, M), eigs=eigs, fit=fit, mp=mp,
                        outliers=rep, notes=tuple(notes))


def summarize_tensors(tensors: Mapping[str, Any], *, center: bool = False,
                      alpha: float = 0.05, n_boot: int = 200) -> list[LayerSummary]:
    """``summarize_matrix`` for every entry, in order; nothing is dropped."""
    return [summarize_matrix(k, t, center=center, alpha=alpha, n_boot=n_boot)
            for k, t in tensors.items()]


def _to_numpy(x: Any) -> Any:
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        arr = to_numpy(x)
        return arr.astype(np.float64) if arr.dtype.kind == "f" else arr
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, (int, float, np.number)):
        return np.asarray(x)
    return None


def _flatten(obj: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(obj, Mapping):
        for k, val in obj.items():
            _flatten(val, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(obj, (list, tuple)) and not hasattr(obj, "shape"):
        for i, val in enumerate(obj):
            _flatten(val, f"{prefix}.{i}" if prefix else str(i), out)
    else:
        out[prefix or "tensor"] = obj


def _checkpoint_tensors(obj: Any) -> dict[str, Any]:
    """A state_dict, or the model state inside a checkpoint; other entries kept as-is."""
    out: dict[str, Any] = {}
    if isinstance(obj, Mapping):
        for key in _STATE_KEYS:
            if isinstance(obj.get(key), Mapping):
                _flatten(obj[key], "", out)
                for other in obj:
                    if other != key:
                        out[str(other)] = _NotAnalysed(
                            "checkpoint entry outside the model state (optimizer or metadata)")
                return out
    _flatten(obj, "", out)
    return out


@dataclass(frozen=True)
class _NotAnalysed:
    reason: str


def load_tensors(path: str | Path) -> dict[str, Any]:
    """Read every array of a file into ``{name: array or tensor}``.

    Raises ``ValueError("cannot read PATH: why")`` for a missing, unsupported or
    corrupt file. Non-array checkpoint entries are kept, so that the summary
    lists them with a reason.
    """
    p = Path(path)
    if not p.exists():
        raise ValueError(f"cannot read {p}: no such file")
    if p.is_dir():
        raise ValueError(f"cannot read {p}: it is a directory")
    suffix = p.suffix.lower()
    if suffix not in SUFFIXES:
        raise ValueError(f"cannot read {p}: unsupported file type {suffix or '(none)'!r} "
                         f"(expected one of {', '.join(SUFFIXES)})")
    try:
        if suffix == ".npy":
            return {p.stem: np.load(p, allow_pickle=False)}
        if suffix == ".npz":
            with np.load(p, allow_pickle=False) as z:
                return {k: z[k] for k in z.files}
        if suffix == ".safetensors":
            from safetensors.torch import load_file

            return dict(load_file(str(p)))
        with open(p, "rb") as fh:
            magic = fh.read(4)
        # torch.save writes a zip archive (PK..) or, in the legacy format, a pickle (0x80).
        if not (magic.startswith(b"PK") or magic[:1] == b"\x80"):
            raise ValueError(f"cannot read {p}: not a torch checkpoint (neither a zip archive "
                             "nor a pickle); is it another format or truncated?")
        import torch

        obj = torch.load(p, map_location="cpu", weights_only=True)
        return _checkpoint_tensors(obj)
    except ImportError as err:
        raise ValueError(f"cannot read {p}: missing package ({err})") from None
    except Exception as err:  # noqa: BLE001 - any reader failure becomes a clear message
        if str(err).startswith(f"cannot read {p}"):
            raise
        msg = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ValueError(f"cannot read {p}: {type(err).__name__}: {msg}") from None


def _reason_of(x: Any) -> str | None:
    return x.reason if isinstance(x, _NotAnalysed) else None


def summarize_file(path: str | Path, *, center: bool = False, alpha: float = 0.05,
                   n_boot: int = 200) -> list[LayerSummary]:
    """``load_tensors`` then ``summarize_matrix`` for every entry (listed, never dropped)."""
    out = []
    for name, t in load_tensors(path).items():
        why = _reason_of(t)
        if why is not None:
            out.append(LayerSummary(name, (), f"skipped: {why}"))
        else:
            out.append(summarize_matrix(name, t, center=center, alpha=alpha, n_boot=n_boot))
    return out
