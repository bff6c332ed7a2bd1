"""Reading weights files and checkpoints into ``{layer name: tensor}``, never running code.

What is understood
------------------
Files
    ``.npy``, ``.npz`` (``allow_pickle=False``), ``.safetensors`` and torch
    files (``.pt``/``.pth``/``.bin``/``.ckpt``), the latter read with
    ``torch.load(weights_only=True)`` only: a file that needs more (a pickled
    ``nn.Module`` or any other class) is refused with a message, never
    unpickled.
Layouts
    A bare ``state_dict``; a checkpoint whose model state sits under
    ``state_dict`` (Lightning), ``model_state`` / ``model_state_dict`` (plain
    torch training loops), ``model`` / ``module`` / ``net`` / ``params``;
    keys prefixed ``module.`` (``DataParallel``/``DistributedDataParallel``)
    or ``_orig_mod.`` (``torch.compile``), which are removed.
Not weights
    Optimizer state (a mapping with ``param_groups``/``state``, or any entry
    whose name contains ``optim``: Adam's ``exp_avg``/``exp_avg_sq``, SGD's
    momentum buffers) is listed as one skipped entry with the reason and the
    number of tensors it holds, never measured. Scheduler state and the other
    entries beside the model state (``step``, ``epoch``, hyper-parameters)
    are listed as skipped too.

``load_tensors`` returns an ordered dict whose values are arrays/tensors (or
other leaves, which the summary lists with a reason) or ``Skipped`` markers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["SUFFIXES", "NonFinite", "Skipped", "count_non_finite", "load_tensors",
           "non_finite_tensors", "state_tensors"]

SUFFIXES = (".npy", ".npz", ".pt", ".pth", ".bin", ".ckpt", ".safetensors")
# Where checkpoints keep the model state (first match wins).
_WRAPPERS = ("state_dict", "model_state_dict", "model_state", "model", "module", "net", "params")
# Added to every key by DataParallel / DistributedDataParallel and torch.compile.
_PREFIXES = ("module.", "_orig_mod.")
_SCHEDULER = ("lr_scheduler", "lr_schedulers", "scheduler", "schedulers")


@dataclass(frozen=True)
class Skipped:
    """A checkpoint entry that is not a model weight, with the reason."""

    reason: str


@dataclass(frozen=True)
class NonFinite:
    """The non-finite entries of a tensor: how many NaN, how many +-inf, of ``size``."""

    name: str
    shape: tuple[int, ...]
    nan: int
    inf: int
    size: int

    @property
    def count(self) -> int:
        """NaN and inf entries together."""
        return self.nan + self.inf

    def describe(self) -> str:
        """``'w' (64x32): 3 of 2048 entries are not finite (2 NaN, 1 inf)``."""
        shape = "x".join(map(str, self.shape)) or "scalar"
        kinds = ", ".join(f"{n} {what}" for n, what in ((self.nan, "NaN"), (self.inf, "inf"))
                          if n)
        return (f"{self.name!r} ({shape}): {self.count} of {self.size} entries "
                f"{'is' if self.count == 1 else 'are'} not finite ({kinds})")


def count_non_finite(x: Any) -> tuple[int, int]:
    """(NaN entries, +-inf entries) of an array or a torch tensor; (0, 0) for anything that
    is not a floating-point (or complex) array."""
    if _is_tensor(x) and not isinstance(x, np.ndarray):
        if not (x.dtype.is_floating_point or x.dtype.is_complex):
            return 0, 0
        t = x.detach()
        return int(t.isnan().sum()), int(t.isinf().sum())
    a = np.asarray(x) if isinstance(x, np.ndarray) else None
    if a is None or not (np.issubdtype(a.dtype, np.floating)
                         or np.issubdtype(a.dtype, np.complexfloating)):
        return 0, 0
    return int(np.isnan(a).sum()), int(np.isinf(a).sum())


def non_finite_tensors(tensors: Mapping[str, Any]) -> list[NonFinite]:
    """The tensors with 2 or more axes (the ones a spectrum is computed of) that hold a NaN
    or an inf, with their counts, in order."""
    out = []
    for name, x in tensors.items():
        if isinstance(x, Skipped) or len(getattr(x, "shape", ())) < 2:
            continue
        nan, inf = count_non_finite(x)
        if nan or inf:
            shape = tuple(int(n) for n in x.shape)
            out.append(NonFinite(name, shape, nan, inf, int(np.prod(shape))))
    return out


def _is_tensor(x: Any) -> bool:
    return isinstance(x, np.ndarray) or (type(x).__module__.startswith("torch")
                                         and hasattr(x, "detach"))


def _count_tensors(obj: Any) -> int:
    if _is_tensor(obj):
        return 1
    if isinstance(obj, Mapping):
        return sum(_count_tensors(x) for x in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(_count_tensors(x) for x in obj)
    return 0


def _is_optimizer(key: str, value: Any) -> bool:
    if "optim" in key.lower():
        return True
    return isinstance(value, Mapping) and "param_groups" in value and "state" in value


def _skip_reason(key: str, value: Any) -> str | None:
    """Why an entry is not model weights, or ``None`` if it may be."""
    if _is_optimizer(key, value):
        n = _count_tensors(value)
        return (f"optimizer state ({n} tensor{'s' if n != 1 else ''}: moments or momentum "
                "buffers of the optimizer), not model weights")
    if key.lower() in _SCHEDULER:
        return "learning-rate scheduler state, not model weights"
    return None


def _walk(obj: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(obj, Mapping) and not _is_tensor(obj):
        for k, val in obj.items():
            name = f"{prefix}.{k}" if prefix else str(k)
            why = _skip_reason(str(k), val)
            if why is not None:
                out[name] = Skipped(why)
            else:
                _walk(val, name, out)
    elif isinstance(obj, (list, tuple)) and not hasattr(obj, "shape"):
        for i, val in enumerate(obj):
            _walk(val, f"{prefix}.{i}" if prefix else str(i), out)
    else:
        out[prefix or "tensor"] = obj


def _strip_prefixes(d: dict[str, Any]) -> dict[str, Any]:
    """Remove a ``module.``/``_orig_mod.`` prefix shared by every key (repeatedly)."""
    changed = True
    while changed and d:
        changed = False
        for pre in _PREFIXES:
            if all(k.startswith(pre) and len(k) > len(pre) for k in d):
                d = {k[len(pre):]: val for k, val in d.items()}
                changed = True
    return d


def state_tensors(obj: Any) -> dict[str, Any]:
    """The model's tensors in a loaded checkpoint, a state_dict or a ``torch.nn.Module``.

    Returns ``{name: tensor or leaf}`` for the model state (prefixes removed)
    followed by ``{name: Skipped(reason)}`` for what is not model weights.
    """
    if hasattr(obj, "state_dict") and hasattr(obj, "named_parameters"):  # an nn.Module
        obj = obj.state_dict()
    if not isinstance(obj, Mapping):
        out: dict[str, Any] = {}
        _walk(obj, "", out)
        return out
    wrapper = next((k for k in _WRAPPERS if isinstance(obj.get(k), Mapping)
                    and not _is_optimizer(k, obj[k])), None)
    model: dict[str, Any] = {}
    _walk(obj[wrapper] if wrapper is not None else obj, "", model)
    weights = _strip_prefixes({k: x for k, x in model.items() if not isinstance(x, Skipped)})
    skipped = {k: x for k, x in model.items() if isinstance(x, Skipped)}
    if wrapper is not None:
        for k, val in obj.items():
            if k == wrapper:
                continue
            why = _skip_reason(str(k), val)
            skipped[str(k)] = Skipped(why or f"checkpoint entry outside the model state "
                                      f"'{wrapper}' (metadata)")
    return {**weights, **skipped}


def load_tensors(path: str | Path) -> dict[str, Any]:
    """Read every array of a file into ``{name: array, tensor or Skipped}``.

    Raises ``ValueError("cannot read PATH: why")`` (one line) for a missing,
    unsupported, truncated or corrupt file, and for a torch file that
    ``torch.load(weights_only=True)`` refuses (it would need to run code).
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
        return state_tensors(_torch_load(p))
    except ImportError as err:
        raise ValueError(f"cannot read {p}: missing package ({err})") from None
    except Exception as err:  # noqa: BLE001 - any reader failure becomes a clear message
        if str(err).startswith(f"cannot read {p}"):
            raise
        raise ValueError(f"cannot read {p}: {type(err).__name__}: {_first_line(err)}") from None


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0].strip() if text else type(err).__name__


def _torch_load(p: Path) -> Any:
    with open(p, "rb") as fh:
        magic = fh.read(4)
    # torch.save writes a zip archive (PK..) or, in the legacy format, a pickle (0x80).
    if not (magic.startswith(b"PK") or magic[:1] == b"\x80"):
        raise ValueError(f"cannot read {p}: not a torch checkpoint (neither a zip archive "
                         "nor a pickle); is it another format or truncated?")
    import pickle
    import re

    import torch

    try:
        return torch.load(p, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as err:
        text = str(err)
        if "truncated" in text or "EOF" in text:
            raise ValueError(f"cannot read {p}: the file is truncated") from None
        # weights_only refused a global: building it would run code named in the file.
        glob = re.search(r"GLOBAL ([\w.]+)", text)
        what = f"it refers to {glob.group(1)}" if glob else _first_line(err).split(". ")[0]
        raise ValueError(f"cannot read {p}: it needs code to be unpickled ({what}), which "
                         "specdyn never runs (torch.load with weights_only=True); save "
                         "model.state_dict() instead of the model") from None
    except (RuntimeError, EOFError, OSError) as err:
        # The file opened (its magic was read): an I/O error while reading is corruption.
        text = (err.strerror or _first_line(err)) if isinstance(err, OSError) else \
            _first_line(err).split(". ")[0]
        if any(w in text for w in ("central directory", "zip archive", "EOF")) or isinstance(
                err, (EOFError, OSError)):
            raise ValueError(f"cannot read {p}: the file is truncated or corrupt "
                             f"({text})") from None
        raise
