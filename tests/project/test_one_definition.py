"""One definition each: the summary pipeline, the eigen/singular decompositions, the range
reader, the Marchenko-Pastur edge formula, the log-log slope fit and the divergence
threshold and message.

Checked on the source text of ``src/specdyn`` (``ast``: code only, never docstrings
or comments), so a second definition written anywhere fails here, naming the file
and the function. ``PENDING`` lists call sites in experiment modules that another
change owns; each is to be replaced by the one definition and removed from the list
("pending merge"). ``ALLOWED`` lists the other exceptions, each with its reason.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PKG = SRC / "specdyn"

#: Experiment modules edited by another change at the same time: their call sites are
#: to move to the one definition at merge (pending merge).
PENDING: dict[str, set[str]] = {}

#: Other exceptions, with the reason.
ALLOWED: dict[str, dict[str, str]] = {
    "mp_edge": {
        # (1 - lr)^2: the per-step contraction of online SGD's error, not a bulk edge
        "specdyn/theory/outlier_escape.py:predict_trainability": "a contraction factor",
    },
    "decomposition": {
        # theory imports nothing from measure (layers): its own float64 numerics. The Airy /
        # Bessel kernel of the Tracy-Widom Fredholm determinant is not a Gram matrix
        "specdyn/theory/rmt.py:_tw_log_det": "theory layer, a Fredholm kernel",
        "specdyn/theory/outlier_escape.py:full_batch_critical_lr": "theory layer, imports no "
                                                                   "measure",
        # data sits below measure too: the input covariance's float64 eigenbasis of a data set
        "specdyn/data/empirical.py:_decomposition": "data layer, imports no measure",
        # the exact reference on data: its Grams' spectra and the target's row space
        "specdyn/theory/reference.py:_symmetric_eig": "theory layer, imports no measure",
    },
}


def _functions(tree: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    """``(qualified-ish name, node)`` of every function, innermost last."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.name, node


def _sites(match: Callable[[ast.AST], bool]) -> set[str]:
    """``path:function`` of every node that ``match``es, by its innermost function."""
    out: set[str] = set()
    for path in sorted(PKG.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        rel = str(path.relative_to(SRC))
        owner: dict[int, str] = {}
        for name, fn in _functions(tree):  # walk order: outer before inner, so inner wins
            for node in ast.walk(fn):
                owner[id(node)] = name
        for node in ast.walk(tree):
            if match(node):
                out.add(f"{rel}:{owner.get(id(node), '<module>')}")
    return out


def _call_to(*names: str) -> Callable[[ast.AST], bool]:
    def match(node: ast.AST) -> bool:
        if not isinstance(node, ast.Call):
            return False
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
        return name in names
    return match


def _expected(kind: str, one: set[str]) -> set[str]:
    return one | PENDING.get(kind, set()) | set(ALLOWED.get(kind, {}))


def test_one_summary_pipeline() -> None:
    # the pipeline is what decides a verdict: one function calls layer_verdict
    assert _sites(_call_to("layer_verdict")) == {
        "specdyn/measure/summary.py:summarize_spectrum"}
    # and one function outside the estimators' own modules runs both the power-law fit and
    # the MP bulk / outlier test
    fits = _sites(_call_to("fit_power_law"))
    mps = _sites(_call_to("fit_mp_bulk", "find_outliers"))
    assert fits & mps == {"specdyn/measure/summary.py:summarize_spectrum"}


#: Every eigen/singular decomposition routine (numpy, scipy, torch): called in one place.
DECOMPOSITIONS = ("eig", "eigh", "eigvals", "eigvalsh", "svd", "svdvals", "svd_lowrank",
                  "eigsh", "lobpcg")


def test_one_spectral_core() -> None:
    # measure.eigen.decompose (and its Lanczos helper) is the one caller of every
    # decomposition: a second solver anywhere else fails here, naming the function
    sites = _sites(_call_to(*DECOMPOSITIONS))
    assert sites == _expected("decomposition", {
        "specdyn/measure/eigen.py:decompose",
        "specdyn/measure/eigen.py:_lanczos_pairs"})


def test_one_gram_routine_called_by_the_tracker_and_the_simulators() -> None:
    callers = _sites(_call_to("gram_eigenvalues", "symmetric_eigenvalues",
                              "device_eigenvalues", "batched_gram_eigenvalues"))
    for user in ("specdyn/measure/_tracker_measure.py", "specdyn/sim/gram.py",
                 "specdyn/sim/two_layer.py", "specdyn/measure/spectra.py",
                 "specdyn/measure/gram_spectra.py",
                 "specdyn/sim/deep_linear.py", "specdyn/sim/linear_student.py"):
        assert any(c.startswith(user + ":") for c in callers), user


def test_one_range_reader() -> None:
    # the grid: one function makes both log- and evenly spaced ranges
    logs = _sites(_call_to("logspace"))
    lins = _sites(_call_to("linspace"))
    assert logs & lins == {"specdyn/ranges.py:range_values"}

    # the text: nobody else spells out a 'log:'/'lin:' prefix or a (log|lin) pattern
    def spelled(node: ast.AST) -> bool:
        return (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and (node.value.startswith(("log:", "lin:")) or "(log|lin)" in node.value))
    assert _sites(spelled) == set()


def _mp_edge_formula(node: ast.AST) -> bool:
    """``1 +- sqrt(...)`` (either order; ``sqrt`` or ``** 0.5``) or ``(1 +- r) ** 2``:
    a Marchenko-Pastur (or rectangular) edge."""
    if not isinstance(node, ast.BinOp):
        return False
    text = ast.unparse(node)
    one = r"1(\.0*)?"  # 1, 1.0, 1.
    root = r"((np\.|math\.)?sqrt\(.*\)|\S+ \*\* 0\.5|\(.*\) \*\* 0\.5)"
    return bool(re.fullmatch(one + r" [+-] " + root, text)
                or re.fullmatch(root + r" \+ " + one, text)
                or re.fullmatch(r"\(" + one + r" [+-] [^()]+\) \*\* 2", text))


def test_one_mp_edge_formula() -> None:
    assert _sites(_mp_edge_formula) == _expected("mp_edge", {
        "specdyn/theory/rmt.py:_mp_edges", "specdyn/theory/rmt.py:_rectangular_edge"})


def test_one_line_fit_for_log_log_slopes() -> None:
    assert _sites(_call_to("polyfit")) == _expected("polyfit", {
        "specdyn/measure/slopes.py:_line"})


@pytest.mark.parametrize("source, hits", [
    ("import numpy as np\ndef f(m):\n    return np.linalg.eigvalsh(m)\n", 1),
    ("def g(r):\n    return (1 + r) ** 2\n", 1),
    ("import math\ndef h(c):\n    return 1 + math.sqrt(c)\n", 1),
    ("import math\ndef h(c):\n    return 1.0 + math.sqrt(c)\n", 1),
    ("import numpy as np\ndef h(c):\n    return np.sqrt(c) + 1.0\n", 1),
    ("def h(c):\n    return 1.0 + c ** 0.5\n", 1),
    ("def h(n, d):\n    return 1 + (n / d) ** 0.5\n", 1),
    ("def h(c):\n    return 2.0 + c ** 0.5\n", 0),
    ("def g(r):\n    return (1.0 - r) ** 2\n", 1),
    ("import torch\ndef s(w):\n    return torch.linalg.svdvals(w)\n", 1),
    ("import scipy.linalg\ndef e(m):\n    return scipy.linalg.eigh(m)\n", 1),
    ("from scipy.sparse.linalg import eigsh\ndef l(m):\n    return eigsh(m, k=2)\n", 1),
    ("import torch\ndef r(x):\n    return torch.svd_lowrank(x, q=4)\n", 1),
    ('def doc():\n    """(1 + sqrt(ratio))**2 and np.linalg.eigvalsh in a docstring."""\n', 0),
])
def test_the_checks_see_a_second_definition(source: str, hits: int) -> None:
    tree = ast.parse(source)
    found = [n for n in ast.walk(tree)
             if _call_to(*DECOMPOSITIONS)(n) or _mp_edge_formula(n)]
    assert len(found) == hits


# ------------------------------------------------------------------------ divergence

#: Names of the divergence settings: a parameter, a keyword or a constant so named holds
#: a threshold or a check interval.
_DIVERGENCE_NAMES = ("divergence_factor", "check_every")
_DIVERGENCE_CONSTANT = re.compile(r"DIVERG|CHECK_EVERY|ENGINE_DEFAULTS", re.IGNORECASE)


def _number(node: ast.AST | None) -> bool:
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    return (isinstance(node, ast.Constant) and isinstance(node.value, (int, float))
            and not isinstance(node.value, bool))


def _divergence_number(node: ast.AST) -> bool:
    """A numeric divergence setting written down: a constant named after divergence, a
    ``divergence_factor=``/``check_every=`` number (keyword or parameter default), or a
    number given to ``divergence_limit``."""
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        named = any(isinstance(t, ast.Name) and _DIVERGENCE_CONSTANT.search(t.id)
                    for t in targets)
        return named and node.value is not None and any(map(_number, ast.walk(node.value)))
    if isinstance(node, ast.keyword):
        return node.arg in _DIVERGENCE_NAMES and _number(node.value)
    if isinstance(node, ast.arguments):
        pos = node.posonlyargs + node.args
        pairs = list(zip(pos[len(pos) - len(node.defaults):], node.defaults, strict=True))
        pairs += [(a, d) for a, d in zip(node.kwonlyargs, node.kw_defaults, strict=True)
                  if d is not None]
        return any(a.arg in _DIVERGENCE_NAMES and _number(d) for a, d in pairs)
    if _call_to("divergence_limit")(node):  # (start scale, factor): a number as the factor
        assert isinstance(node, ast.Call)
        factor = [*node.args[1:2], *(k.value for k in node.keywords if k.arg == "factor")]
        return any(map(_number, factor))
    return False


def test_one_divergence_message_builder() -> None:
    # DivergenceError is built in one place, the one message builder
    assert _sites(_call_to("DivergenceError")) == {
        "specdyn/sim/divergence.py:divergence_error"}


def _engine_modules() -> set[str]:
    """The modules of the registered engine classes (the engines carry their defaults, each
    in its class body): read from the registry, no list to edit."""
    import specdyn.sim

    return {e.cls.__module__.rsplit(".", 1)[1] for e in specdyn.sim.engines()}


def test_divergence_defaults_live_with_their_engines() -> None:
    # the common factor is DIVERGENCE_FACTOR at divergence.py's module level; each check
    # interval (and linear_student's factor) is in its engine's class body, and nowhere else
    # (no entry point, experiment or loop writes one down)
    sites = _sites(_divergence_number)
    assert "specdyn/sim/divergence.py:<module>" in sites
    assert sites <= _expected("divergence_number", {
        "specdyn/sim/divergence.py:<module>",
        *(f"specdyn/sim/{m}.py:<module>" for m in _engine_modules())})


@pytest.mark.parametrize("source, hits", [
    ("def f(step):\n    raise DivergenceError('boom', step)\n", 1),
    ("import protocol\ndef f(s):\n    raise protocol.DivergenceError('x', s)\n", 1),
    ("MY_DIVERGENCE_FACTOR = 1e8\n", 1),
    ("check_every_default: int = 50\n", 1),
    ("def run(x, divergence_factor=1e6):\n    return x\n", 1),
    ("def run(x, *, check_every: int = 100):\n    return x\n", 1),
    ("def f(r):\n    return r(divergence_factor=1e8)\n", 1),
    ("def f(e0):\n    return divergence_limit(e0, 1e6)\n", 1),
    ("def f(e0, opts):\n    return divergence_limit(e0, opts.factor)\n", 0),
    ("def f(t):\n    return divergence_limit(1.0, t.factor)\n", 0),
    ("def f(opts):\n    check_every = opts.every\n    return check_every\n", 0),
    ("def run(x, divergence_factor=None, check_every=None):\n    return x\n", 0),
    ("def f(r, o):\n    return r(divergence_factor=o.factor)\n", 0),
    ('def doc():\n    """DivergenceError(...) above 1e6 (divergence_factor=1e6)."""\n', 0),
])
def test_the_divergence_checks_see_a_second_definition(source: str, hits: int) -> None:
    found = [n for n in ast.walk(ast.parse(source))
             if _call_to("DivergenceError")(n) or _divergence_number(n)]
    assert len(found) == hits


#: The core paper's regimes as ``(sigma_w, gamma0_ratio)``: feature learning and lazy.
PAPER_REGIMES = {(0.1, 2.0), (1.0, 0.5)}


def _number(node: ast.AST | None) -> float | None:
    ok = isinstance(node, ast.Constant) and isinstance(node.value, (int, float))
    return float(node.value) if ok else None  # type: ignore[union-attr]


def _regime_written(node: ast.AST) -> bool:
    """A paper regime's two numbers written down: in a call (``paper(0.1, 2.0)``,
    ``Regime(sigma_w=1.0, gamma0_ratio=0.5)``) or as a class's two field defaults
    (``fl_sigma_w = 0.1`` beside ``fl_gamma0_ratio = 2.0``)."""
    if isinstance(node, ast.Call):
        args: list[ast.AST | None] = list(node.args[:2]) + [None] * (2 - len(node.args[:2]))
        for kw in node.keywords:
            if kw.arg in ("sigma_w", "gamma0_ratio"):
                args[kw.arg == "gamma0_ratio"] = kw.value
        return (_number(args[0]), _number(args[1])) in PAPER_REGIMES
    if isinstance(node, ast.ClassDef):
        fields = {n.target.id: _number(n.value) for n in node.body
                  if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
        return any((value, fields.get(name.replace("sigma_w", "gamma0_ratio")))
                   in PAPER_REGIMES for name, value in fields.items() if "sigma_w" in name)
    return False


def test_the_paper_regimes_are_written_once() -> None:
    # specdyn.settings.FEATURE_LEARNING and LAZY: every config, example and benchmark on the
    # paper's setting takes them from there
    assert _sites(_regime_written) == {"specdyn/settings.py:<module>"}
    root = SRC.parent
    elsewhere = [f"{p.relative_to(root)}" for tree in ("benchmarks", "examples", "scripts")
                 for p in sorted((root / tree).rglob("*.py"))
                 if any(_regime_written(n) for n in ast.walk(ast.parse(p.read_text())))]
    assert elsewhere == []


@pytest.mark.parametrize("source, hits", [
    ("s = PowerLawSetting.paper(0.1, 2.0, D=6)\n", 1),
    ("s = paper(sigma_w=1.0, gamma0_ratio=0.5)\n", 1),
    ("r = Regime(1.0, 0.5)\n", 1),
    ("r = Regime(1.0, 0.05)\n", 0),
    ("class C:\n    fl_sigma_w: float = 0.1\n    fl_gamma0_ratio: float = 2.0\n", 1),
    ("class C:\n    sigma_w: float = FEATURE_LEARNING.sigma_w\n    gamma0_ratio: float = 2.0\n", 0),
    ("class C:\n    sigma_w_lazy: float = 1.0\n    gamma0_ratio_lazy: float = 0.5\n", 1),
])
def test_the_regime_check_sees_a_second_copy(source: str, hits: int) -> None:
    assert sum(_regime_written(n) for n in ast.walk(ast.parse(source))) == hits
