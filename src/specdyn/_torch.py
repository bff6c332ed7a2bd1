"""Lazy access to torch and device choice; the theory never imports this module."""

from __future__ import annotations

from typing import Any


def torch() -> Any:
    """Import and return torch, with a clear message if it is missing."""
    try:
        import torch as _torch
    except ImportError as err:  # pragma: no cover - torch is a declared dependency
        raise ImportError(
            "this part of specdyn needs PyTorch: pip install torch (see the README)"
        ) from err
    return _torch


def resolve_device(device: Any = None) -> Any:
    """``device`` as a ``torch.device``: CUDA when present and none was asked for, else CPU."""
    t = torch()
    if device is None:
        return t.device("cuda" if t.cuda.is_available() else "cpu")
    try:
        dev = t.device(device)
    except (RuntimeError, TypeError) as err:
        raise ValueError(f"device must be a torch device such as 'cpu' or 'cuda', "
                         f"got {device!r} ({' '.join(str(err).split())})") from None
    if dev.type == "cuda" and not t.cuda.is_available():
        raise ValueError(f"device {str(device)!r} asked for, but CUDA is not available "
                         "here; use device='cpu' or None (CUDA when present)")
    if dev.type == "cuda" and dev.index is not None and dev.index >= t.cuda.device_count():
        raise ValueError(f"device {str(device)!r}: there are only {t.cuda.device_count()} "
                         "CUDA devices")
    return dev


def resolve_dtype(dtype: Any = None) -> Any:
    """``dtype`` as a torch dtype (``None`` means float64); strings like 'float32' accepted."""
    t = torch()
    if dtype is None:
        return t.float64
    if isinstance(dtype, str):
        names = {"float64": t.float64, "float32": t.float32, "double": t.float64,
                 "float": t.float32, "bfloat16": t.bfloat16}
        if dtype not in names:
            raise ValueError(f"dtype must be one of {', '.join(map(repr, names))}; got {dtype!r}")
        return names[dtype]
    return dtype


def to_numpy(x: Any, dtype: Any = None) -> Any:
    """``x`` (a torch tensor, numpy array or array-like) as a numpy array on the host.

    The one torch-to-numpy conversion of specdyn: detaches, moves to the CPU and
    converts; ``dtype`` (e.g. ``np.float64``) casts afterwards. Never imports
    torch for non-torch input.
    """
    import numpy as np

    if type(x).__module__.startswith("torch") and hasattr(x, "detach"):
        t = x.detach().cpu()
        if str(t.dtype) == "torch.bfloat16":  # numpy has no bfloat16; float32 holds it exactly
            t = t.float()
        x = t.numpy()
    return np.asarray(x, dtype=dtype)
