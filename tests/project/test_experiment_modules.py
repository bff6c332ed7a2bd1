"""Experiments as packages: one package a topic, found by its folder.

A topic is a package under ``src/specdyn/experiments`` with three modules at least:
``config`` (the config dataclasses, their constraints and ``--full`` sizes), ``claims``
(tolerances, dispute and revision records, the claims as pure functions of a table and
its config) and ``run`` (the ``@register``-ed runs, their tables and figures). A module
that would pass the 500-line rule (``test_module_length.py``, all of ``src/``) is split by
concept (``readings``, ``tables``), never cut at a line count. The package's
``__init__`` imports ``run``, so importing the topic (as ``specdyn.experiments`` does for
every topic folder) registers its experiments; the names and their run order are read
from the ``@register`` calls (``specdyn._experiment_index``), so no list names them.
``docs/concepts.md`` describes the layout. Checked on the source text (``ast``), so
nothing is imported.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from specdyn import _experiment_index as index

EXPERIMENTS = Path(__file__).resolve().parents[2] / "src" / "specdyn" / "experiments"

#: The modules every topic package has.
TOPIC_MODULES = ("config", "claims", "run")
#: Flat topic modules allowed while they wait to become packages (the test fails while a
#: split one is still listed). Empty: every topic is a package.
NOT_YET_SPLIT: set[str] = set()
#: Flat modules that are no topic: they register nothing and are shared by several topics.
SHARED = {
    # the paper's power-law setting fields, the config base of fig2, finite-size,
    # finite-size-theory and simulate (one home for fields several topics inherit)
    "paper_setting",
}


def _registers(path: Path) -> bool:
    """Whether a module calls ``register(...)`` (as a decorator or not)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    return any(isinstance(n, ast.Call) and (
        (isinstance(n.func, ast.Name) and n.func.id == "register")
        or (isinstance(n.func, ast.Attribute) and n.func.attr == "register"))
        for n in ast.walk(tree))


def _imports_run(init: Path, package: str) -> bool:
    """Whether a topic's ``__init__`` imports its ``run`` module."""
    tree = ast.parse(init.read_text(), filename=str(init))
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.module == package and any(
                a.name == "run" for a in n.names):
            return True
        if isinstance(n, ast.ImportFrom) and n.module == f"{package}.run":
            return True
        if isinstance(n, ast.Import) and any(a.name == f"{package}.run" for a in n.names):
            return True
    return False


def layout_problems(root: Path, not_yet_split: set[str], shared: set[str]) -> list[str]:
    """What breaks the layout under ``root`` (an ``experiments`` folder), one line each."""
    problems = []
    dotted = "specdyn.experiments"
    for path in sorted(root.glob("*.py")):
        name = path.stem
        if name == "__init__":
            continue
        if name in shared:
            if _registers(path):
                problems.append(f"{name}.py: a shared module registers an experiment")
        elif name not in not_yet_split:
            problems.append(f"{name}.py: a flat topic module (make it a package with "
                            f"{', '.join(m + '.py' for m in TOPIC_MODULES)})")
    for pkg in sorted(p for p in root.iterdir() if (p / "__init__.py").is_file()):
        missing = [m for m in TOPIC_MODULES if not (pkg / f"{m}.py").is_file()]
        if missing:
            problems.append(f"{pkg.name}/: no {', '.join(m + '.py' for m in missing)}")
        if not _imports_run(pkg / "__init__.py", f"{dotted}.{pkg.name}"):
            problems.append(f"{pkg.name}/__init__.py: does not import its run module")
        for path in sorted(pkg.rglob("*.py")):
            if path.name != "run.py" and _registers(path):
                problems.append(f"{path.relative_to(root)}: registers an experiment "
                                f"outside run.py")
    return problems


def test_every_topic_is_a_package_of_short_modules() -> None:
    problems = layout_problems(EXPERIMENTS, NOT_YET_SPLIT, SHARED)
    assert not problems, "experiment layout:\n" + "\n".join(f"  {p}" for p in problems)


def test_lists_hold_only_live_entries() -> None:
    flat = {p.stem for p in EXPERIMENTS.glob("*.py")}
    stale = sorted((NOT_YET_SPLIT | SHARED) - flat)
    assert not stale, f"no longer flat modules (remove them from the list): {stale}"
    assert not NOT_YET_SPLIT & SHARED


def test_every_topic_package_is_found_by_its_folder() -> None:
    packages = {p.name for p in EXPERIMENTS.iterdir() if (p / "__init__.py").is_file()}
    assert set(index.topics(EXPERIMENTS)) == packages | NOT_YET_SPLIT


def test_the_names_read_from_the_source_are_the_registry_s() -> None:
    from specdyn import runs

    assert list(index.builtin_names()) == runs.builtin_names()
    assert runs.names()[:len(runs.builtin_names())] == runs.builtin_names()


def test_the_core_paper_s_figures_run_first_by_number() -> None:
    names = index.builtin_names()
    figures = [n for n in names if re.fullmatch(r"fig\d+", n)]
    assert figures and list(names[:len(figures)]) == sorted(figures, key=lambda n: int(n[3:]))
    assert index.run_order(["b", "fig10", "a", "fig2", "figure", "fig3"]) == [
        "fig2", "fig3", "fig10", "b", "a", "figure"]


def test_the_reader_finds_every_register_call_in_source_order(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "beta/__init__.py": "", "beta/run.py":
            '@register("b1", "one")\ndef r1(c, o): ...\n\n\n@runs.register(\n'
            '    "fig7", "two")\ndef r2(c, o): ...\n# @register("not-a-decorator")\n',
        "alpha/__init__.py": "", "alpha/run.py": "@register('a1', 'x')\ndef r(c, o): ...\n",
        "norun/__init__.py": "", "flat.py": "@register('flat')\n"})
    assert index.topics(tmp_path) == ["alpha", "beta"]
    assert index.registered_in(tmp_path / "beta" / "run.py") == ["b1", "fig7"]
    assert index.builtin_names(tmp_path) == ("fig7", "a1", "b1")


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


_INIT = "from specdyn.experiments.topic import run\n"
_REG = "@register('x')\ndef run_x(cfg, out): ...\n"


@pytest.mark.parametrize(("files", "expected"), [
    ({"topic/__init__.py": _INIT, "topic/config.py": "", "topic/claims.py": "",
      "topic/run.py": _REG}, []),
    ({"flat.py": _REG}, ["flat.py: a flat topic module"]),
    ({"topic/__init__.py": _INIT, "topic/config.py": "", "topic/run.py": _REG},
     ["topic/: no claims.py"]),
    ({"topic/__init__.py": "", "topic/config.py": "", "topic/claims.py": "",
      "topic/run.py": _REG}, ["topic/__init__.py: does not import its run module"]),
    ({"topic/__init__.py": _INIT, "topic/config.py": "", "topic/claims.py": _REG,
      "topic/run.py": ""}, ["topic/claims.py: registers an experiment outside run.py"]),
    ({"helper.py": _REG}, ["helper.py: a shared module registers an experiment"]),
    ({"old.py": _REG}, []),
])
def test_the_checker_sees_a_broken_layout(tmp_path: Path, files: dict[str, str],
                                          expected: list[str]) -> None:
    found = layout_problems(_tree(tmp_path, files), not_yet_split={"old"}, shared={"helper"})
    assert len(found) == len(expected)
    for line, start in zip(found, expected, strict=True):
        assert line.startswith(start), (line, start)
