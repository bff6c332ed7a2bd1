"""One seed derivation: every generator of ``src/specdyn`` is seeded by a derived seed.

Read from the source (``ast``), outside :mod:`specdyn.sim.protocol` (the helper's module):

- no arithmetic on a seed: a binary operation (or ``+=``) with an operand named
  ``seed``, ``cfg.seed``, ``data_seed``... (a name whose ``_``-separated parts
  include ``seed``; ``seeds``, a count, is not one) is how ``seed + 1000 i + j``
  made neighbouring cells share seeds;
- ``default_rng(x)``, ``SeedSequence(x)`` and ``.manual_seed(x)`` take a derived
  seed ``x``: a call of ``derive_seed``, an item of ``seed_streams(...)``, a name
  the enclosing function bound to one of these, or a parameter typed
  ``DerivedSeed`` (mypy then refuses a raw seed at every call). ``int(x)`` of
  one is one too.

The few public functions that take the *user's* seed for their own draw are
listed in :data:`ALLOWED`, each with its reason; an entry that no longer matches
anything fails too, so the list cannot go stale.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
HELPER = "specdyn/sim/protocol.py"
SEEDERS = {"default_rng", "SeedSequence", "manual_seed"}
DERIVERS = {"derive_seed", "seed_streams"}

#: ``path:function`` (``path:*``: any function of the module) -> why it seeds a generator
#: with a seed it was given.
ALLOWED: dict[str, str] = {
    # the data layer's public draws: documented as numpy.random.default_rng(seed) so that a
    # user can redraw them with numpy alone; every simulator passes them a derived stream
    "specdyn/data/teacher.py:__init__": "public PowerLawTeacher(seed=...): its random bases",
    "specdyn/data/teacher.py:sample": "public teacher.sample(M, seed): documented draw",
    "specdyn/data/hermite.py:sample": "public HermiteTarget sample: documented draw",
    "specdyn/data/hermite.py:random_direction": "public random_direction(D, seed)",
    "specdyn/data/real.py:image_patches": "public image_patches(..., seed): documented draw",
    "specdyn/data/real.py:digits": "public digits(M, seed): documented permutation",
    "specdyn/data/real.py:split": "public RealData.split(heldout, seed): documented permutation",
    # measurement estimators: a randomized sketch or bootstrap takes the caller's seed (or
    # a fixed one) as part of the estimator, not a run's randomness
    "specdyn/measure/eigen.py:_lanczos_pairs": "the Lanczos start vector's seed (0 or given)",
    "specdyn/measure/gram_spectra.py:_sketch": "the batched range sketch's fixed seed",
    "specdyn/measure/gram_spectra.py:top_gram_eigenvalues": "the randomized SVD's seed, the "
                                                            "caller's",
    "specdyn/measure/exponents.py:_fit_window": "fit_power_law's bootstrap seed, the caller's",
    "specdyn/measure/atoms.py:function_distance": "the probe inputs' seed, the caller's",
    "specdyn/measure/_tracker_reduce.py:_top_summed": "the distributed sketch's fixed seed: "
                                                      "every rank must draw the same sketch",
    # the spread over seeds other than the judged one: whole runs at the neighbouring base
    # seeds seed + 1 ... seed + k, each the run a user makes with --seed (each derives its
    # own streams from it through make_sweep), and named so in the claims
    "specdyn/experiments/regime_map/run.py:run_regime_map": "the spread runs' base seeds",
    "specdyn/experiments/regime_map/claims.py:regime_map_claims": "the spread seeds, named",
    "specdyn/experiments/mean_field/run.py:run_budget": "the statistical part's seed mean: "
                                                        "whole runs at seed, seed + 1, ...",
    "specdyn/experiments/real_data/tasks.py:task_seed": "a model task's seeds: the task "
                                                        "drawn at seed + j, as --seed does",
    "specdyn/experiments/real_data/tasks.py:_text_denoise": "seed % 2 picks which half of "
                                                            "a chunk is the input: no draw",
    # an oracle drawn with numpy alone (SeedSequence([seed, 47]), its own stream of the
    # caller's seed) so that it shares no code with the engines it checks
    "specdyn/experiments/linear_figures/readings.py:initial_deviation_draws": "the numpy "
                                                                              "oracle's draws",
}


def _name(node: ast.AST) -> str | None:
    """The last name of ``x``, ``a.b.x`` or a call of one."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _is_seed(node: ast.AST) -> bool:
    n = _name(node)
    return n is not None and "seed" in n.lower().split("_")


def _derived_call(node: ast.AST) -> bool:
    """``derive_seed(...)``, ``seed_streams(...)`` or an item of one."""
    if isinstance(node, ast.Subscript):
        node = node.value
    return isinstance(node, ast.Call) and _name(node.func) in DERIVERS


def _targets(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, (ast.Tuple, ast.List)):
        return [n for e in node.elts for n in _targets(e)]
    if isinstance(node, ast.Starred):
        return _targets(node.value)
    return []


def _derived_names(scope: ast.AST) -> set[str]:
    """Names ``scope`` (a function or module) binds to derived seeds."""
    names: set[str] = set()
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        a = scope.args
        for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs]:
            if arg.annotation is not None and "DerivedSeed" in ast.unparse(arg.annotation):
                names.add(arg.arg)
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign) and _derived_call(node.value):
            for t in node.targets:
                names.update(_targets(t))
        elif isinstance(node, ast.comprehension) and _derived_call(node.iter):
            names.update(_targets(node.target))
    return names


def _derived(arg: ast.AST, names: set[str]) -> bool:
    if isinstance(arg, ast.Call) and _name(arg.func) == "int" and len(arg.args) == 1:
        return _derived(arg.args[0], names)
    if _derived_call(arg):
        return True
    return isinstance(arg, ast.Name) and arg.id in names


def _scopes(tree: ast.Module) -> list[tuple[str, ast.AST, list[ast.AST]]]:
    """``(name, scope, nodes)``: each function with the nodes it holds outside its own
    nested functions, and the module with the rest."""
    out = []

    def visit(name: str, scope: ast.AST, body: list[ast.stmt]) -> None:
        nodes: list[ast.AST] = []
        stack: list[ast.AST] = list(body)
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(node.name, node, node.body)
                stack.extend(d for d in [*node.args.defaults, *node.args.kw_defaults] if d)
                continue
            nodes.append(node)
            stack.extend(ast.iter_child_nodes(node))
        out.append((name, scope, nodes))

    visit("<module>", tree, tree.body)
    return out


def violations(root: Path = SRC) -> list[tuple[str, str]]:
    """``(path:function, what)`` for every seed made or used outside the derivation."""
    found = []
    for path in sorted((root / "specdyn").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel == HELPER:
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        for func, scope, nodes in _scopes(tree):
            names = _derived_names(scope)
            where = f"{rel}:{func}"
            for node in nodes:
                if isinstance(node, ast.BinOp) and not (
                        isinstance(node.left, ast.Constant) and isinstance(node.left.value, str)):
                    if _is_seed(node.left) or _is_seed(node.right):
                        found.append((where, f"line {node.lineno}: arithmetic on a seed: "
                                             f"{ast.unparse(node)}"))
                elif isinstance(node, ast.AugAssign) and _is_seed(node.target):
                    found.append((where, f"line {node.lineno}: arithmetic on a seed: "
                                         f"{ast.unparse(node)}"))
                elif isinstance(node, ast.Call) and _name(node.func) in SEEDERS:
                    args = list(node.args) + [k.value for k in node.keywords
                                              if k.arg in ("seed", "entropy")]
                    if not args or not _derived(args[0], names):
                        found.append((where, f"line {node.lineno}: a generator seeded by "
                                             f"what derive_seed did not make: "
                                             f"{ast.unparse(node)}"))
    return found


def _allowed(where: str) -> str | None:
    """The entry of :data:`ALLOWED` that covers ``where``, or ``None``."""
    module = where.rsplit(":", 1)[0] + ":*"
    return where if where in ALLOWED else module if module in ALLOWED else None


def test_every_seed_is_derived() -> None:
    bad = [f"{where}: {what}" for where, what in violations() if _allowed(where) is None]
    assert not bad, ("seeds made outside specdyn.sim.protocol.derive_seed (use derive_seed(seed, "
                     "*key) or seed_streams, or type the parameter DerivedSeed):\n"
                     + "\n".join(bad))


def test_allowed_entries_are_used() -> None:
    used = {_allowed(where) for where, _ in violations()}
    stale = sorted(set(ALLOWED) - used)
    assert not stale, f"ALLOWED entries that seed nothing any more (remove them): {stale}"


@pytest.mark.parametrize("source", [
    "def f(cfg):\n    return run(seed=cfg.seed + 1000 * i + j)\n",
    "def f(seed):\n    seed += 1\n",
    "def f(cfg):\n    return range(cfg.seed, cfg.seed + cfg.seeds)\n",
    "def f(cfg):\n    return np.random.default_rng(np.random.SeedSequence([cfg.seed, 7]))\n",
    "def f(seed: int):\n    return torch.Generator().manual_seed(int(seed))\n",
    "def f():\n    return np.random.default_rng()\n",
])
def test_the_checks_catch_the_former_patterns(source: str, tmp_path: Path) -> None:
    # each pattern the derivation replaced is found when written again
    (tmp_path / "specdyn").mkdir()
    (tmp_path / "specdyn" / "x.py").write_text(source)
    assert violations(tmp_path), source


@pytest.mark.parametrize("source", [
    "def f(cfg):\n    return run(seed=derive_seed(cfg.seed, 'cell', i, j))\n",
    "def f(seed):\n    a, b = seed_streams(seed, 2)\n    return np.random.default_rng(b)\n",
    "def f(seed: DerivedSeed):\n    return torch.Generator().manual_seed(int(seed))\n",
    "def f(cfg):\n    return np.sqrt(2.0 * (cfg.seeds - 1))\n",  # a count of seeds
])
def test_the_derived_forms_pass(source: str, tmp_path: Path) -> None:
    (tmp_path / "specdyn").mkdir()
    (tmp_path / "specdyn" / "x.py").write_text(source)
    assert not violations(tmp_path), source
