"""Which matrices and activations of a torch model to measure, and how each is read.

``weight_matrices(model)`` lists every weight matrix of a model as people
build them, each with a stated rule that turns the stored parameter into an
``out x in`` matrix (rows are the map's outputs, as for ``torch.nn.Linear``);
``activation_sites(model)`` lists the modules whose outputs are measured,
each with its sample and feature axes. ``select_modules(model, patterns)``
resolves name patterns such as ``"blocks.*.attn"``.

Which module types are read, and how, is an open registry: :func:`register_layer`
(``register_layer(MyLayer, matrices, kind="my_layer")``) tells the tracker how to read a
module type of your own, and the built-in types below are registered the same way (a
later registration of a type replaces the earlier one; a subclass is read as its nearest
registered base). :func:`layer_type` is the lookup.

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
from dataclasses import dataclass, replace
from typing import Any

from specdyn.measure._tracker_shards import row_block

__all__ = ["ActivationSite", "LayerType", "WeightMatrix", "activation_sites", "layer_type",
           "register_layer", "resolve_modules", "select_modules", "tracked_layers",
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
        ``"attention_v"``, ``"conv1d_gpt2"``, ``"parameter"``, or the kind of a
        registered type (:func:`register_layer`).
    rule
        How the stored parameter becomes the ``out x in`` matrix (human-readable).
    shape
        ``(out, in)`` of the matrix.
    get
        ``get()`` returns the current matrix (a detached view of the parameter).
    params
        The module's own parameters it is made of (not listed again as plain
        ``"parameter"`` matrices).
    """

    name: str
    module: str
    kind: str
    rule: str
    shape: tuple[int, int]
    get: Callable[[], Any]
    params: tuple[str, ...] = ()

    @classmethod
    def of(cls, name: str, module: str, kind: str, rule: str, get: Callable[[], Any],
           params: Iterable[str] = ()) -> WeightMatrix:
        """The matrix that ``get()`` returns (its shape read once, from a call of ``get``)."""
        rows, cols = (int(n) for n in get().shape)
        return cls(name, module, kind, rule, (rows, cols), get, tuple(params))

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


#: ``(name, module, heads) -> [WeightMatrix]``: the matrices a module owns directly.
Matrices = Callable[[str, Any, bool], list[WeightMatrix]]


@dataclass(frozen=True)
class LayerType:
    """How the tracker reads one module type (an entry of the registry, :func:`register_layer`).

    Attributes
    ----------
    kind
        Its name in the layer table (``"linear"``, ``"conv"``, ...).
    matrices
        ``matrices(name, module, heads)``: the ``out x in`` weight matrices the module owns
        directly (``name`` is its name in the model; ``heads``: also split attention heads).
        Parameters it does not name in their ``params`` are listed as plain
        ``"parameter"`` matrices when 2-D.
    feature_axis
        The feature axis of its output (``-1``; ``1`` for a convolution's channels).
    activations
        Its output is measured by default (``modules=None``).
    """

    kind: str
    matrices: Matrices
    feature_axis: int = -1
    activations: bool = True


#: The registry: (a module type or a predicate ``module -> bool``, its LayerType), oldest first.
_LAYERS: list[tuple[Any, LayerType]] = []
_BUILTINS: list[bool] = []  # the built-in types are registered at the first lookup


def register_layer(layer: type | Callable[[Any], bool], matrices: Matrices, *, kind: str,
                   feature_axis: int = -1, activations: bool = True) -> LayerType:
    """Tell the tracker how to read a module type: its weight matrices and its output.

    Parameters
    ----------
    layer
        A ``torch.nn.Module`` subclass (its subclasses too, unless registered themselves),
        or a predicate ``module -> bool`` for modules recognised otherwise (GPT-2's
        ``Conv1D``, whose package specdyn does not import).
    matrices
        ``matrices(name, module, heads) -> [WeightMatrix]`` (:meth:`WeightMatrix.of` builds
        one from a function returning the current ``out x in`` matrix).
    kind, feature_axis, activations
        See :class:`LayerType`.

    Returns
    -------
    LayerType
        The entry; registering ``layer`` again replaces it.

    Examples
    --------
    >>> def low_rank(name, mod, heads):                      # doctest: +SKIP
    ...     return [WeightMatrix.of(name, name, "low_rank", "U V (out x in)",
    ...                             lambda: (mod.U @ mod.V).detach(), params=("U", "V"))]
    >>> register_layer(LowRank, low_rank, kind="low_rank")   # doctest: +SKIP
    """
    if not (isinstance(layer, type) or callable(layer)):
        raise ValueError(f"layer must be a module type or a predicate, got {layer!r}")
    if not callable(matrices):
        raise ValueError(f"matrices must be a callable (name, module, heads) -> matrices, "
                         f"got {matrices!r}")
    if feature_axis not in (-1, 1):
        raise ValueError(f"feature_axis must be -1 or 1, got {feature_axis!r}")
    entry = LayerType(str(kind), matrices, feature_axis, bool(activations))
    _LAYERS[:] = [(key, t) for key, t in _LAYERS if key is not layer] + [(layer, entry)]
    return entry


def layer_type(module: Any) -> LayerType | None:
    """The registered :class:`LayerType` of ``module``: its type's, else its nearest
    registered base's, else the newest matching predicate's; ``None`` if none."""
    if not _BUILTINS:
        _BUILTINS.append(True)
        user = list(_LAYERS)
        _LAYERS.clear()
        _register_builtins()
        for key, entry in user:  # a user's registration stays newer than the built-ins
            _LAYERS[:] = [(k, t) for k, t in _LAYERS if k is not key] + [(key, entry)]
    types = {key: entry for key, entry in _LAYERS if isinstance(key, type)}
    for cls in type(module).__mro__:
        if cls in types:
            return types[cls]
    for key, entry in reversed(_LAYERS):
        if not isinstance(key, type) and key(module):
            return entry
    return None


def _kind(mod: Any) -> str | None:
    lt = layer_type(mod)
    return None if lt is None else lt.kind


def _split(name: str, module: str, kind: str, rule: str, get: Callable[[], Any], rows: int,
           cols: int, n_heads: int | None) -> list[WeightMatrix]:
    """Q, K, V blocks of a packed ``3E x in`` matrix (rows), optionally per head."""
    E = rows // 3
    out = []
    for i, part in enumerate("qkv"):
        def block(i: int = i) -> Any:
            return row_block(get(), i * E, (i + 1) * E)  # of a sharded matrix: no gather

        pk = f"attention_{part}"
        out.append(WeightMatrix(f"{name}.{part}", module, pk,
                                f"{rule}, {part.upper()} rows {i * E}:{(i + 1) * E}",
                                (E, cols), block, ("weight",)))
        if n_heads:
            hd = E // n_heads
            for h in range(n_heads):
                def head(block: Callable[[], Any] = block, h: int = h, hd: int = hd) -> Any:
                    return block()[h * hd:(h + 1) * hd]

                out.append(WeightMatrix(f"{name}.{part}.head{h}", module, pk,
                                        f"{rule}, {part.upper()} rows {i * E}:{(i + 1) * E}, "
                                        f"head {h} rows {h * hd}:{(h + 1) * hd}", (hd, cols),
                                        head, ("weight",)))
    return out


def _linear(name: str, mod: Any, heads: bool) -> list[WeightMatrix]:
    return [WeightMatrix.of(name, name, "linear", "weight (out x in) as stored",
                            lambda: mod.weight.detach(), ("weight",))]


def _conv(name: str, mod: Any, heads: bool) -> list[WeightMatrix]:
    return [WeightMatrix.of(name, name, "conv", "weight (out x in/groups x kernel) reshaped to "
                            "out x (in/groups * kernel)",
                            lambda: mod.weight.detach().reshape(mod.weight.shape[0], -1),
                            ("weight",))]


def _embedding(name: str, mod: Any, heads: bool) -> list[WeightMatrix]:
    return [WeightMatrix.of(name, name, "embedding", "weight (num_embeddings x dim) "
                            "transposed to dim x num_embeddings", lambda: mod.weight.detach().T,
                            ("weight",))]


def _gpt2_conv1d(name: str, mod: Any, heads: bool) -> list[WeightMatrix]:
    W = mod.weight
    n_in, n_out = int(W.shape[0]), int(W.shape[1])
    rule = "weight (in x out) transposed to out x in"
    if name.rsplit(".", 1)[-1] == "c_attn" and n_out == 3 * n_in:
        nh = _gpt2_heads(mod, n_in) if heads else None
        return _split(name, name, "conv1d_gpt2", rule, lambda: mod.weight.detach().T, n_out,
                      n_in, nh)
    return [WeightMatrix(name, name, "conv1d_gpt2", rule, (n_out, n_in),
                         lambda: mod.weight.detach().T, ("weight",))]


def _attention(name: str, mod: Any, heads: bool) -> list[WeightMatrix]:
    nh = int(mod.num_heads) if heads else None
    if getattr(mod, "in_proj_weight", None) is not None:
        P = mod.in_proj_weight
        return [replace(m, params=("in_proj_weight",)) for m in _split(
            name, name, "attention", "in_proj_weight (3E x E)",
            lambda: mod.in_proj_weight.detach(), int(P.shape[0]), int(P.shape[1]), nh)]
    mats: list[WeightMatrix] = []
    for part in "qkv":
        P = getattr(mod, f"{part}_proj_weight")
        rows, cols = int(P.shape[0]), int(P.shape[1])

        def get(p: str = part) -> Any:
            return getattr(mod, f"{p}_proj_weight").detach()

        pk, used = f"attention_{part}", (f"{part}_proj_weight",)
        rule = f"{part}_proj_weight (E x {dict(q='E', k='kdim', v='vdim')[part]})"
        mats.append(WeightMatrix(f"{name}.{part}", name, pk, rule, (rows, cols), get, used))
        if nh:
            hd = rows // nh
            mats += [WeightMatrix(f"{name}.{part}.head{h}", name, pk, f"{rule}, head {h} rows "
                                  f"{h * hd}:{(h + 1) * hd}", (hd, cols),
                                  _row_block(get, h * hd, (h + 1) * hd), used)
                     for h in range(nh)]
    return mats


def _register_builtins() -> None:
    """The built-in types, through the one registry (module docstring)."""
    import torch.nn as nn

    register_layer(nn.MultiheadAttention, _attention, kind="attention")
    register_layer(nn.Linear, _linear, kind="linear")
    for conv in (nn.Conv1d, nn.Conv2d, nn.Conv3d):
        register_layer(conv, _conv, kind="conv", feature_axis=1)
    register_layer(nn.Embedding, _embedding, kind="embedding")
    register_layer(_is_gpt2_conv1d, _gpt2_conv1d, kind="conv1d_gpt2")


def _module_matrices(name: str, mod: Any, heads: bool) -> list[WeightMatrix]:
    """The matrices owned directly by ``mod`` (not its children): its registered type's, then
    any other matrix parameter it owns directly, as stored."""
    lt = layer_type(mod)
    mats = [] if lt is None else list(lt.matrices(name, mod, heads))
    done = {p for m in mats for p in m.params}
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
        return row_block(get(), lo, hi)

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


def resolve_modules(model: Any, modules: Any) -> dict[str, Any] | None:
    """A tracker's ``modules`` (``None``, patterns, modules, or a ``{name: module}`` dict) as
    ``{name: module}`` of the model (``None``: the whole model)."""
    if modules is None:
        return None
    if isinstance(modules, dict):
        return {str(k): m for k, m in modules.items()}
    items = [modules] if isinstance(modules, str) else list(modules)
    named = dict(model.named_modules())
    out: dict[str, Any] = {}
    for item in items:
        if isinstance(item, str):
            out.update(select_modules(model, item))
        else:
            name = next((n for n, m in named.items() if m is item), None)
            if name is None:
                raise ValueError("modules: every module must belong to the model")
            out[name] = item
    if not out:
        raise ValueError("modules must name at least one module")
    return out


def tracked_layers(model: Any, modules: Any, *, weights: bool, activations: bool, heads: bool
                   ) -> tuple[list[WeightMatrix], list[ActivationSite]]:
    """What a tracker measures: the weight matrices and the activation sites of ``modules``
    (see :func:`resolve_modules`); a selection with nothing to track is refused, naming its
    layers and their parameters' shapes (that is what to change)."""
    selected = resolve_modules(model, modules)
    mats = weight_matrices(model, selected, heads=heads) if weights else []
    sites = activation_sites(model, selected) if activations else []
    if weights and not mats and not activations:
        held = "; ".join(
            f"{n!r} ({type(mod).__name__}): " + (", ".join(
                f"{p} {tuple(t.shape)}" for p, t in mod.named_parameters(recurse=False))
                or "no parameters")
            for n, mod in list((selected or {"<model>": model}).items())[:8])
        raise ValueError(f"modules: the selection holds no weight matrix (every parameter "
                         f"is 1-D or there is none): {held}; select other modules")
    if not (mats or sites):
        raise ValueError("modules: nothing to track in the selection")
    return mats, sites


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

    Default (``modules=None``): every module of a registered type whose output is measured
    (:func:`register_layer`; built in: Linear, Conv, Embedding, MultiheadAttention and
    GPT-2 Conv1D), not a MultiheadAttention's ``out_proj`` (whose output is the
    attention's output). Otherwise exactly the selected modules, whatever their type.
    """
    if modules is None:
        named = dict(model.named_modules())
        # MultiheadAttention applies out_proj's weight functionally (no forward call, so no
        # hook fires); the attention module's own output is that projection's output.
        inside_mha = {f"{n}.out_proj" for n, m in named.items() if _kind(m) == "attention"}
        modules = {n: m for n, m in named.items() if n not in inside_mha
                   and (lt := layer_type(m)) is not None and lt.activations}
    sites = []
    for n, m in modules.items():
        lt = layer_type(m)
        sites.append(ActivationSite(n, m, type(m).__name__ if lt is None else lt.kind,
                                    -1 if lt is None else lt.feature_axis))
    return sites
