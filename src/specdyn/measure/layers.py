"""Which matrices and activations of a torch model to measure, and how each is read.

``weight_matrices(model)`` lists every weight matrix of a model as people
build them, each with a stated rule that turns the stored parameter into an
``out x in`` matrix (rows are the map's outputs, as for ``torch.nn.Linear``);
``activation_sites(model)`` lists the modules whose outputs are measured,
each with its sample and feature axes. ``select_modules(model, patterns)``
resolves name patterns such as ``"blocks.*.attn"``.

Weight rules (``rule`` column of the layer table)
-------------------------------------------------
Linear
    ``weight`` (``out x in``) as stored.
Conv1d/2d/3d
    ``weight`` (``out x in/groups x kernel...``) reshaped to ``out x (in/groups * kernel)``.
Embedding
    ``weight`` is stored ``num_embeddings x dim``; the map one-hot(token) -> vector
    is ``dim x num_embeddings``, so the matrix is ``weight.T``.
MultiheadAttention
    ``in_proj_weight`` (``3E x E``) split by rows into Q, K, V (each ``E x E``);
    with separate ``q_proj_weight``/``k_proj_weight``/``v_proj_weight`` (``kdim``
    / ``vdim`` differ from ``E``) those are used. With ``heads=True`` each of Q,
    K, V is further split by rows into ``num_heads`` blocks of ``E / num_heads``
    rows (listed as well as the whole Q, K, V). The output projection ``out_proj`` is a
    ``Linear`` and is listed as such.
Conv1D (GPT-2 style, ``transformers.pytorch_utils.Conv1D``)
    ``weight`` is stored ``in x out``; the matrix is ``weight.T``. A ``c_attn``
    Conv1D with ``out = 3 in`` packs Q, K, V and is split like ``in_proj_weight``.
Any other 2-D parameter (a custom positional embedding, a bare ``nn.Parameter``)
    As stored.

Activation axes
---------------
A module output of shape ``(d0, ..., d_{r-1})`` is read as ``d0 * ... * d_{r-2}``
samples of ``d_{r-1}`` features (batch and, for a transformer, tokens are
samples), except for convolutions, whose channel axis (1) is the feature axis
(batch and positions are samples). A module returning a tuple (e.g.
``MultiheadAttention``: ``(output, weights)``) is read through its first element.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["ActivationSite", "WeightMatrix", "activation_sites", "select_modules",
           "weight_matrices"]


@dataclass(frozen=True)
class WeightMatrix:
    """One weight matrix to measure.

    Attributes
    ----------
    name
        Layer name in the tracker's table: the module name, plus ``.q``/``.k``/``.v``
        (and ``.head<h>``) for split attention projections, or ``.<param>`` for a
        parameter that is not the module's ``weight``.
    module
        Name of the owning module.
    kind
        ``"linear"``, ``"conv"``, ``"embedding"``, ``"attention_q"``, ``"attention_k"``,
        ``"attention_v"``, ``"conv1d_gpt2"`` or ``"parameter"``.
    rule
        How the stored parameter becomes the ``out x in`` matrix (human-readable).
    shape
        ``(out, in)`` of the matrix.
    get
        ``get()`` returns the current matrix (a detached view of the parameter).
    """

    name: str
    module: str
    kind: str
    rule: str
    shape: tuple[int, int]
    get: Callable[[], Any]

    def as_row(self) -> dict[str, Any]:
        """The layer-table entry (JSON-friendly)."""
        return {"layer": self.name, "module": self.module, "kind": self.kind,
                "rule": self.rule, "rows": self.shape[0], "cols": self.shape[1]}


@dataclass(frozen=True)
class ActivationSite:
    """One module whose output is measured; ``feature_axis`` is -1 or 1 (convolutions)."""

    name: str
    module: Any
    kind: str
    feature_axis: int

    def as_row(self) -> dict[str, Any]:
        """The layer-table entry (JSON-friendly)."""
        axes = ("channels (axis 1) are features; batch and positions are samples"
                if self.feature_axis == 1 else
                "last axis is features; all leading axes (batch, tokens) are samples")
        return {"layer": self.name, "kind": self.kind, "axes": axes}


def _is_gpt2_conv1d(mod: Any) -> bool:
    # transformers' Conv1D is an nn.Module (not a torch conv) with weight in x out and .nf.
    W = getattr(mod, "weight", None)
    return (type(mod).__name__ == "Conv1D" and hasattr(mod, "nf") and W is not None
            and getattr(W, "ndim", 0) == 2 and int(W.shape[1]) == int(mod.nf))


def _kind(mod: Any) -> str | None:
    import torch.nn as nn

    if isinstance(mod, nn.MultiheadAttention):
        return "attention"
    if isinstance(mod, nn.Linear):
        return "linear"
    if isinstance(mod, (nn.Conv1d, nn.Conv2d, nn.Conv3d)):
        return "conv"
    if isinstance(mod, nn.Embedding):
        return "embedding"
    if _is_gpt2_conv1d(mod):
        return "conv1d_gpt2"
    return None


def _split(name: str, module: str, kind: str, rule: str, get: Callable[[], Any], rows: int,
           cols: int, n_heads: int | None) -> list[WeightMatrix]:
    """Q, K, V blocks of a packed ``3E x in`` matrix (rows), optionally per head."""
    E = rows // 3
    out = []
    for i, part in enumerate("qkv"):
        def block(i: int = i) -> Any:
            return get()[i * E:(i + 1) * E]

        pk = f"attention_{part}"
        out.append(WeightMatrix(f"{name}.{part}", module, pk,
                                f"{rule}, {part.upper()} rows {i * E}:{(i + 1) * E}",
                                (E, cols), block))
        if n_heads:
            hd = E // n_heads
            for h in range(n_heads):
                def head(block: Callable[[], Any] = block, h: int = h, hd: int = hd) -> Any:
                    return block()[h * hd:(h + 1) * hd]

                out.append(WeightMatrix(f"{name}.{part}.head{h}", module, pk,
                                        f"{rule}, {part.upper()} rows {i * E}:{(i + 1) * E}, "
                                        f"head {h} rows {h * hd}:{(h + 1) * hd}", (hd, cols),
                                        head))
    return out


def _module_matrices(name: str, mod: Any, heads: bool) -> list[WeightMatrix]:
    """The matrices owned directly by ``mod`` (not its children)."""
    kind = _kind(mod)
    W: Any = getattr(mod, "weight", None)
    mats: list[WeightMatrix] = []
    done: set[str] = set()
    if kind == "linear":
        mats.append(WeightMatrix(name, name, "linear", "weight (out x in) as stored",
                                 (int(W.shape[0]), int(W.shape[1])), lambda: mod.weight.detach()))
        done.add("weight")
    elif kind == "conv":
        shape = (int(W.shape[0]), int(W[0].numel()))
        mats.append(WeightMatrix(name, name, "conv",
                                 "weight (out x in/groups x kernel) reshaped to out x "
                                 "(in/groups * kernel)", shape,
                                 lambda: mod.weight.detach().reshape(mod.weight.shape[0], -1)))
        done.add("weight")
    elif kind == "embedding":
        mats.append(WeightMatrix(name, name, "embedding",
                                 "weight (num_embeddings x dim) transposed to dim x "
                                 "num_embeddings", (int(W.shape[1]), int(W.shape[0])),
                                 lambda: mod.weight.detach().T))
        done.add("weight")
    elif kind == "conv1d_gpt2":
        n_in, n_out = int(W.shape[0]), int(W.shape[1])
        rule = "weight (in x out) transposed to out x in"
        if name.rsplit(".", 1)[-1] == "c_attn" and n_out == 3 * n_in:
            nh = _gpt2_heads(mod, n_in) if heads else None
            mats.extend(_split(name, name, kind, rule, lambda: mod.weight.detach().T, n_out,
                               n_in, nh))
        else:
            mats.append(WeightMatrix(name, name, kind, rule, (n_out, n_in),
                                     lambda: mod.weight.detach().T))
        done.add("weight")
    elif kind == "attention":
        nh = int(mod.num_heads) if heads else None
        if getattr(mod, "in_proj_weight", None) is not None:
            P = mod.in_proj_weight
            mats.extend(_split(name, name, "attention", "in_proj_weight (3E x E)",
                               lambda: mod.in_proj_weight.detach(), int(P.shape[0]),
                               int(P.shape[1]), nh))
            done.add("in_proj_weight")
        else:
            for part in "qkv":
                P = getattr(mod, f"{part}_proj_weight")
                rows, cols = int(P.shape[0]), int(P.shape[1])
                def get(p: str = part) -> Any:
                    return getattr(mod, f"{p}_proj_weight").detach()

                pk = f"attention_{part}"
                rule = f"{part}_proj_weight (E x {dict(q='E', k='kdim', v='vdim')[part]})"
                mats.append(WeightMatrix(f"{name}.{part}", name, pk, rule, (rows, cols), get))
                if nh:
                    hd = rows // nh
                    for h in range(nh):
                        mats.append(WeightMatrix(
                            f"{name}.{part}.head{h}", name, pk, f"{rule}, head {h} rows "
                            f"{h * hd}:{(h + 1) * hd}", (hd, cols),
                            _row_block(get, h * hd, (h + 1) * hd)))
                done.add(f"{part}_proj_weight")
    # Any other matrix parameter owned directly by this module, as stored.
    for pname, p in mod.named_parameters(recurse=False):
        if pname in done or p.ndim != 2:
            continue
        mats.append(WeightMatrix(f"{name}.{pname}" if name else pname, name, "parameter",
                                 f"parameter {pname} ({int(p.shape[0])} x {int(p.shape[1])}) "
                                 "as stored", (int(p.shape[0]), int(p.shape[1])),
                                 _row_block(p.detach, 0, int(p.shape[0]))))
    return mats


def _row_block(get: Callable[[], Any], lo: int, hi: int) -> Callable[[], Any]:
    """``() -> get()[lo:hi]``: rows ``lo:hi`` of the current matrix."""
    def block() -> Any:
        return get()[lo:hi]

    return block


def _gpt2_heads(mod: Any, n_in: int) -> int | None:
    # The Conv1D does not know its attention's head count; GPT-2's attention module does,
    # but we only see the Conv1D here: callers pass heads through the parent (see below).
    return getattr(mod, "_specdyn_heads", None)


def select_modules(model: Any, patterns: Iterable[str] | str) -> dict[str, Any]:
    """``{name: module}`` for every submodule whose name matches a pattern (``fnmatch``).

    ``"blocks.*.attn"`` matches ``blocks.0.attn``, ``blocks.1.attn``...; an exact name
    matches itself; ``""`` is the model itself. Raises ``ValueError`` naming a pattern
    that matches nothing.
    """
    pats = [patterns] if isinstance(patterns, str) else list(patterns)
    if not pats:
        raise ValueError("modules must name at least one module or pattern")
    named = dict(model.named_modules())
    out: dict[str, Any] = {}
    for pat in pats:
        if not isinstance(pat, str):
            raise ValueError(f"modules: patterns must be strings, got {type(pat).__name__}")
        hits = [n for n in named if n == pat or (n and fnmatch.fnmatchcase(n, pat))]
        if not hits:
            some = ", ".join(n for n in list(named)[1:9] if n)
            raise ValueError(f"modules: pattern {pat!r} matches no submodule of the model "
                             f"(names look like: {some}, ...)")
        for n in hits:
            out[n] = named[n]
    return out


def weight_matrices(model: Any, modules: dict[str, Any] | None = None, *,
                    heads: bool = False) -> list[WeightMatrix]:
    """Every weight matrix inside ``modules`` (default: the whole model), each listed once.

    A selected module contributes its own matrices and those of its descendants.
    """
    chosen = {"": model} if modules is None else modules
    seen: set[str] = set()
    mats: list[WeightMatrix] = []
    for root_name, root in chosen.items():
        for sub, mod in root.named_modules():
            full = f"{root_name}.{sub}" if root_name and sub else (root_name or sub)
            if full in seen:
                continue
            seen.add(full)
            if heads and _kind(mod) is None and hasattr(mod, "num_heads"):
                # GPT-2 attention: tell its packed c_attn Conv1D the head count.
                c_attn = getattr(mod, "c_attn", None)
                if c_attn is not None and _is_gpt2_conv1d(c_attn):
                    object.__setattr__(c_attn, "_specdyn_heads", int(mod.num_heads))
            mats.extend(_module_matrices(full, mod, heads))
    return mats


def activation_sites(model: Any, modules: dict[str, Any] | None = None) -> list[ActivationSite]:
    """Modules whose outputs are measured.

    Default (``modules=None``): every Linear, Conv, Embedding, MultiheadAttention and
    GPT-2 Conv1D module (not a MultiheadAttention's ``out_proj``, whose output is the
    attention's output). Otherwise exactly the selected modules, whatever their type.
    """
    if modules is None:
        named = dict(model.named_modules())
        # MultiheadAttention applies out_proj's weight functionally (no forward call, so no
        # hook fires); the attention module's own output is that projection's output.
        inside_mha = {f"{n}.out_proj" for n, m in named.items() if _kind(m) == "attention"}
        modules = {n: m for n, m in named.items()
                   if _kind(m) is not None and n not in inside_mha}
    return [ActivationSite(n, m, _kind(m) or type(m).__name__,
                           1 if _kind(m) == "conv" else -1) for n, m in modules.items()]
