"""The repository stands on its own: no path outside it, no project history in the code.

A user's clone has only this repository, so nothing in ``src/``, ``docs/``, the README or
``examples/`` points to a file outside it (``../shared/...``, ``shared/papers/...``, the
related works' notes): the notation and design the code relies on are in ``docs/``
(``docs/design.md``, ``docs/related-works.md``) or in the module docstrings, and a paper
is cited by its title and section. The project's history (which issue changed what) is
kept in ``CHANGELOG.md`` and ``docs/claims.md``, never in a docstring, a comment or a
documentation page: no "issue N" there. Checked on the source text (``ast`` for
docstrings, ``tokenize`` for comments), so nothing is imported.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: A path (or the name of a file) outside the repository.
OUTSIDE = re.compile(r"\.\./shared|shared/(papers|design\.md|style\.md)|related-notes")
#: A mention of an issue of the project's tracker.
ISSUE = re.compile(r"\bissues? #?\d+\b", re.IGNORECASE)
#: The pages that hold the project's history (generated from the claims and the changelog).
HISTORY_PAGES = ("docs/claims.md", "docs/changelog.md")


def _prose_of_python(text: str) -> Iterator[tuple[int, str]]:
    """``(line, text)`` of every docstring and comment of a Python source."""
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc is not None and node.body:
                first = node.body[0].lineno
                for i, line in enumerate(doc.splitlines()):
                    yield first + i, line
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string


def problems(root: Path) -> list[str]:
    """``"path:line: what"`` for every outside path and issue mention under ``root``."""
    found = []

    def flag(rel: str, lineno: int, line: str, issue_too: bool) -> None:
        for m in OUTSIDE.finditer(line):
            found.append(f"{rel}:{lineno}: a path outside the repository ({m.group(0)!r})")
        if issue_too:
            for m in ISSUE.finditer(line):
                found.append(f"{rel}:{lineno}: project history ({m.group(0)!r}): it belongs "
                             "in CHANGELOG.md or docs/claims.md")

    py = sorted([*(root / "src").rglob("*.py"), *(root / "examples").rglob("*.py")])
    for path in py:
        rel = str(path.relative_to(root))
        text = path.read_text(encoding="utf-8")
        for lineno, line in enumerate(text.splitlines(), 1):  # code and strings: paths
            flag(rel, lineno, line, issue_too=False)
        for lineno, line in _prose_of_python(text):  # docstrings and comments: history
            for m in ISSUE.finditer(line):
                found.append(f"{rel}:{lineno}: project history ({m.group(0)!r}): it belongs "
                             "in CHANGELOG.md or docs/claims.md")
    pages = sorted([*(root / "docs").rglob("*.md"), *(root / "examples").rglob("*.md")])
    readme = root / "README.md"
    for path in [*pages, *([readme] if readme.exists() else [])]:
        rel = str(path.relative_to(root))
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            flag(rel, lineno, line, issue_too=rel not in HISTORY_PAGES)
    return found


def test_no_outside_path_and_no_issue_history() -> None:
    found = problems(ROOT)
    assert not found, ("the repository must stand on its own (cite papers by title and "
                       "section; put notation in docs/; history in CHANGELOG.md):\n"
                       + "\n".join(f"  {f}" for f in found))


@pytest.mark.parametrize(("files", "expected"), [
    ({"src/a.py": '"""Clean."""\nx = "ok"  # fine\n'}, []),
    ({"src/a.py": '"""See ../shared/design.md."""\n'}, ["src/a.py:1: a path outside"]),
    ({"src/a.py": 'SOURCE = "shared/papers/x.txt"\n'}, ["src/a.py:1: a path outside"]),
    ({"src/a.py": 'def f():\n    """Since issue 30."""\n'}, ["src/a.py:2: project history"]),
    ({"src/a.py": "x = 1  # Issue #12 made this\n"}, ["src/a.py:1: project history"]),
    ({"src/a.py": 'REVISED = "issue 40: 0.25 -> 0.1"\n'}, []),  # a claim's data, not prose
    ({"docs/p.md": "As issue 7 says.\n"}, ["docs/p.md:1: project history"]),
    ({"docs/claims.md": "revised in issue 7\n"}, []),
    ({"docs/claims.md": "see related-notes.md\n"}, ["docs/claims.md:1: a path outside"]),
    ({"README.md": "tissue 5 is no issue\n", "examples/e.py": "# 5 issues\n"}, []),
])
def test_the_checker_sees_outside_paths_and_history(tmp_path: Path, files: dict[str, str],
                                                    expected: list[str]) -> None:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    found = problems(tmp_path)
    assert len(found) == len(expected), found
    for line, start in zip(found, expected, strict=True):
        assert line.startswith(start), (line, start)
