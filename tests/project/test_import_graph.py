"""The import graph of ``src/specdyn``: no upward import between layers, no cycle.

Every ``specdyn`` import is read from the source (``ast``: module level, inside
functions and under ``TYPE_CHECKING`` alike, so a lazy import is no way around
the rule). Layers, lowest first (a module may import its own layer and lower
ones only; ``docs/design.md`` draws the same picture):

0. foundations: ``_version``, ``_validate``, ``_threads``, ``_progress``,
   ``_cancel``, ``_torch``, ``_experiment_index`` (the built-in experiments' names, read
   from their source), ``_repr`` (results' one-line repr), ``io`` (atomic writes),
   ``provenance``, ``ranges``, ``schedule``, ``settings``
1. ``data``
2. ``theory``, ``models``
3. ``measure`` (never imports ``sim``)
4. ``sim``
5. ``runs`` (the run machinery), ``plot``, ``report``, ``integrations``, ``study`` (your
   own data against the theory: it trains, draws and writes)
6. ``experiments`` (found by ``runs`` through an entry point, never imported by it)
7. ``cli``, ``__main__`` and the package root
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"

LAYERS: dict[str, int] = {
    **dict.fromkeys(["_version", "_validate", "_threads", "_progress", "_cancel", "_torch",
                     "_experiment_index", "_repr", "io", "provenance", "ranges", "schedule",
                     "settings"],
                    0),
    "data": 1,
    "theory": 2, "models": 2,
    "measure": 3,
    "sim": 4,
    "runs": 5, "plot": 5, "report": 5, "integrations": 5, "study": 5,
    "experiments": 6,
    "cli": 7, "__main__": 7, "": 7,
}


def _modules() -> dict[str, Path]:
    out = {}
    for f in sorted((SRC / "specdyn").rglob("*.py")):
        parts = f.relative_to(SRC).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = f
    return out


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The module a dotted name lives in (``specdyn.runs.store.RECORD``: ``runs.store``)."""
    while name not in modules:
        if "." not in name:
            return None
        name = name.rsplit(".", 1)[0]
    return name


def import_graph() -> dict[str, set[str]]:
    """Module -> the ``specdyn`` modules it imports anywhere in its source."""
    modules = _modules()
    graph: dict[str, set[str]] = defaultdict(set)
    for mod, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                    and node.module.split(".")[0] == "specdyn":
                targets = [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.split(".")[0] == "specdyn"]
            for t in targets:
                r = _resolve(t, modules)
                if r is not None and r != mod:
                    graph[mod].add(r)
    return graph


def layer(module: str) -> int:
    """The layer of a module: that of its top-level unit below ``specdyn``."""
    parts = module.split(".")
    unit = parts[1] if len(parts) > 1 else ""
    assert unit in LAYERS, f"{module}: add its unit {unit!r} to LAYERS"
    return LAYERS[unit]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(set(graph) | {w for ws in graph.values() for w in ws}):
        if v not in index:
            visit(v)
    return found


def test_no_module_imports_a_higher_layer() -> None:
    graph = import_graph()
    upward = sorted(f"{a} (layer {layer(a)}) imports {b} (layer {layer(b)})"
                    for a, bs in graph.items() for b in bs
                    if b != "specdyn" and layer(b) > layer(a))
    assert upward == []


def test_the_package_root_imports_only_foundations() -> None:
    assert all(layer(b) == 0 for b in import_graph()["specdyn"])


def test_no_import_cycle() -> None:
    assert cycles(import_graph()) == []


def test_the_checks_see_a_planted_violation() -> None:
    """The detectors fire: an upward edge and a two-module cycle are both found."""
    graph = {"specdyn.io": {"specdyn.runs.store"}, "specdyn.runs.store": {"specdyn.io"}}
    assert cycles(graph) == [["specdyn.io", "specdyn.runs.store"]]
    assert layer("specdyn.runs.store") > layer("specdyn.io")


def test_every_unit_has_a_layer() -> None:
    for mod in _modules():
        layer(mod)
