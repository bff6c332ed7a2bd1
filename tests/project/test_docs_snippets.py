"""Every Python code block in the documentation and the README runs as shown, and prints
what its comments say.

The blocks of one page run in order in one fresh interpreter (later blocks use
the names of earlier ones), in a temporary working directory. A page whose code reads
a command's output names the command in ``<!-- docs-test: setup specdyn ... -->``
(getting-started reads ``specdyn reproduce fig3``'s folder): the test runs it there
first, as the reader would have. A block that cannot run here (it needs a cluster,
say) is preceded in the page by ``<!-- docs-test: skip REASON -->`` and listed by
``test_skipped_blocks_say_why``.

A ``print(...)`` whose line ends in a comment states its output: ``# -> TEXT``, checked
against what the call printed (white space normalised, ``...`` matching anything, as
doctest's ELLIPSIS); a description goes on a line of its own, so that no comment on a
print line can claim an output unchecked. A ```` ```text ```` block right after a Python
block is that block's output, checked the same way. No page may print an empty pandas object
(``Empty DataFrame``: a filter that matched nothing, as getting-started's did).
The README's other blocks are checked as far as they can be without a network or
a cluster: its TOML files load as the configs they are, every ``specdyn`` command
in its shell blocks parses with the real parser, and CI (``.ci/run``) runs its test
command verbatim.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
_BLOCK = re.compile(r"(<!-- docs-test: skip[^>]*-->\s*\n)?```python\n(.*?)```"
                    r"(?:\s*```text\n(.*?)```)?", re.S)
_SETUP = re.compile(r"<!-- docs-test: setup (specdyn [^>]*?)\s*-->")
#: The marker the instrumented page prints around a checked print's output.
_MARK = "@@docs-test {}@@"


def _blocks(page: Path) -> list[tuple[bool, str]]:
    return [(bool(m.group(1)), m.group(2)) for m in _BLOCK.finditer(page.read_text())]


def _outputs(page: Path) -> list[tuple[str, str | None]]:
    """Each block that runs, with the ```` ```text ```` block right after it (its output as
    the page shows it), or None."""
    return [(m.group(2), m.group(3)) for m in _BLOCK.finditer(page.read_text())
            if not m.group(1)]


def page_code(page: Path) -> tuple[str, dict[int, str]]:
    """The page's runnable blocks as one script, each block's output between markers, and
    the output each block with a ```` ```text ```` block after it must print."""
    parts, shown = ["import matplotlib\nmatplotlib.use('Agg')\n"], {}
    for i, (code, text) in enumerate(_outputs(page), start=1):
        tag = 100000 + i  # block markers: apart from the line numbers of the prints
        parts.append(f"_docs_mark({tag})\n{code}\n_docs_mark(-{tag})\n")
        if text is not None:
            shown[tag] = text.strip()
    return "\n".join(parts), shown


def _comments(code: str) -> dict[int, str]:
    """The comment ending each line of ``code`` (1-based line numbers)."""
    import io
    import tokenize

    return {tok.start[0]: tok.string for tok in tokenize.generate_tokens(io.StringIO(code).readline)
            if tok.type == tokenize.COMMENT}


def checked_prints(code: str) -> tuple[str, dict[int, str], list[str]]:
    """``code`` with each ``print(...)  # -> TEXT`` wrapped in markers, the expected TEXT of
    each (by its first line) and the problems: a print whose comment states no output
    with ``->``, or that does not stand on lines of its own."""
    import ast

    lines = code.splitlines()
    comments = _comments(code)
    expected: dict[int, str] = {}
    problems: list[str] = []
    inserts: dict[int, list[str]] = {}  # before line i (0-based): lines to insert
    for node in ast.walk(ast.parse(code)):
        if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Name) and node.value.func.id == "print"):
            continue
        first, last = node.lineno, node.end_lineno or node.lineno
        said = [comments[i] for i in range(first, last + 1) if i in comments]
        if not said:
            continue
        text = lines[first - 1]
        if not said[0].startswith("# ->"):
            problems.append(f"line {first}: a comment on a print line must state the output "
                            f"('# -> TEXT'), or stand on its own line: {text.strip()!r}")
            continue
        if text[:node.col_offset].strip():
            problems.append(f"line {first}: a checked print stands on its own line: "
                            f"{text.strip()!r}")
            continue
        indent = " " * node.col_offset
        expected[first] = said[0].removeprefix("# ->").strip()
        inserts.setdefault(first - 1, []).append(f"{indent}_docs_mark({first!r})")
        inserts.setdefault(last, []).insert(0, f"{indent}_docs_mark(-{first!r})")
    out = []
    for i, line in enumerate(lines):
        out += inserts.get(i, []) + [line]
    out += inserts.get(len(lines), [])
    head = ("import sys as _docs_sys\n"
            "def _docs_mark(n):\n"
            f"    _docs_sys.stdout.write('\\n' + {_MARK!r}.format(n) + '\\n')\n")
    return head + "\n".join(out) + "\n", expected, problems


def printed(stdout: str, expected: dict[int, str]) -> list[str]:
    """What went wrong between each checked print's output in ``stdout`` and its comment."""
    import doctest

    checker = doctest.OutputChecker()
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    wrong = []
    for line, want in expected.items():
        begin, end = _MARK.format(line), _MARK.format(-line)
        parts = stdout.split(begin)[1:]
        what = f"block {line - 100000}" if line > 100000 else f"line {line}"
        if not parts:
            wrong.append(f"{what}: never printed (expected {want!r})")
        for part in parts:
            got = re.sub(r"\n?@@docs-test -?\d+@@\n", "\n", part.split(end, 1)[0]).strip("\n")
            if not checker.check_output(want + "\n", got + "\n", flags):
                wrong.append(f"{what}: printed {got!r}, the page says {want!r}")
    return wrong


README = ROOT / "README.md"
PAGES = sorted(p for p in [*DOCS.rglob("*.md"), README] if any(not s for s, _ in _blocks(p)))


def _page_id(page: Path) -> str:
    return "README.md" if page == README else str(page.relative_to(DOCS))


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=[_page_id(p) for p in PAGES])
def test_page_code_runs(page: Path, tmp_path: Path) -> None:
    code, shown = page_code(page)
    script, expected, problems = checked_prints(code)
    expected.update(shown)
    assert not problems, f"{page.name}: " + "\n".join(problems)
    (tmp_path / "page.py").write_text(script)
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONWARNINGS="error::RuntimeWarning")
    import shlex

    for command in _SETUP.findall(page.read_text()):
        argv = shlex.split(command)
        res = subprocess.run([sys.executable, "-m", "specdyn", *argv[1:]], cwd=tmp_path,
                             env=env, capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, f"{page.name}: setup {command!r}:\n{res.stdout[-3000:]}"
    res = subprocess.run([sys.executable, str(tmp_path / "page.py")], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, f"{page.name}:\n{res.stdout[-2000:]}\n{res.stderr[-4000:]}"
    assert "Empty DataFrame" not in res.stdout and "Series([]" not in res.stdout, (
        f"{page.name} printed an empty pandas object (a filter that matched nothing):\n"
        f"{res.stdout[-3000:]}")
    wrong = printed(res.stdout, expected)
    assert not wrong, f"{page.name}: " + "\n".join(wrong)


def test_print_checks_catch_a_wrong_comment() -> None:
    """The check itself: a comment that states another output, or a description on a
    print line, is found; a right one (with ``...``) and a loop's prints pass."""
    code = ("x = [1, 2]\n"
            "print(x)  # -> [1, 2]\n"
            "print(len(x))  # -> 3\n"
            "for i in x:\n"
            "    print(i, 'of',\n"
            "          2)  # -> ... of 2\n"
            "print(sum(x))  # the sum\n")
    script, expected, problems = checked_prints(code)
    assert expected == {2: "[1, 2]", 3: "3", 5: "... of 2"}
    assert len(problems) == 1 and "line 7" in problems[0]
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=60).stdout
    assert printed(out, expected) == ["line 3: printed '2', the page says '3'"]


def test_skipped_blocks_say_why() -> None:
    for page in [*DOCS.rglob("*.md"), README]:
        for m in re.finditer(r"<!-- docs-test: skip([^>]*)-->", page.read_text()):
            assert len(m.group(1).strip()) >= 10, f"{page.name}: a skipped block needs a reason"


def test_pages_have_runnable_code() -> None:
    names = {p.name for p in PAGES}
    for required in ("getting-started.md", "concepts.md", "theory.md", "measurement.md",
                     "README.md"):
        assert required in names


def _fenced(page: Path, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", page.read_text(), flags=re.S)


def test_readme_toml_blocks_load_as_configs(tmp_path: Path) -> None:
    """A TOML block with ``[sweep]`` is a sweep file, one without a run file."""
    from specdyn.runs.spec import load_run, load_sweep

    blocks = _fenced(README, "toml")
    assert blocks
    for i, text in enumerate(blocks):
        path = tmp_path / f"block{i}.toml"
        path.write_text(text)
        if "[sweep]" in text:
            assert load_sweep(path).points
        else:
            load_run(path)


def _commands(page: Path) -> list[list[str]]:
    """Every command of the page's shell blocks, split on ``&&``, as argv lists (comments
    and redirections left out)."""
    import shlex

    out = []
    for block in _fenced(page, "bash"):
        for line in block.splitlines():
            for part in line.split("&&"):
                argv = shlex.split(part, comments=True)
                cut = next((i for i, a in enumerate(argv) if a in (">", ">>", "<", "|")),
                           len(argv))
                if argv[:cut]:
                    out.append(argv[:cut])
    return out


@pytest.mark.parametrize("page", [README, DOCS / "getting-started.md"], ids=_page_id)
def test_shell_blocks_name_real_commands_and_options(page: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """``specdyn ...`` parses with the real parser (no unknown option, no bad value);
    ``pip install`` names the constraints file and extras that exist."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    from specdyn.cli import build_parser

    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
                 ["optional-dependencies"])
    monkeypatch.chdir(tmp_path)  # output folders are checked for writing: here
    commands = _commands(page)
    assert any(c[0] == "specdyn" for c in commands)
    for argv in commands:
        if argv[0] == "specdyn":
            args, extra = build_parser().parse_known_args(argv[1:])
            assert not extra, argv
        elif argv[:2] == ["pip", "install"]:
            if "-c" in argv:
                assert (ROOT / argv[argv.index("-c") + 1]).is_file(), argv
            spec = argv[argv.index("-e") + 1] if "-e" in argv else "."
            wanted = set(re.findall(r"\[(.*)\]", spec)[0].split(",")) if "[" in spec else set()
            assert wanted <= extras, argv


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    """The README's (and the docs') test command is the line CI runs."""
    test_cmd = next(c for c in _fenced(README, "bash") if "pytest" in c).strip()
    line = test_cmd.split(". .venv/bin/activate && ", 1)[1]
    assert line in (ROOT / ".ci" / "run").read_text().splitlines()
    assert test_cmd in (DOCS / "getting-started.md").read_text()


#: The most words a table cell of a page may hold: a longer one is a paragraph squeezed
#: into a column (docs/measurement.md's worker-thread cell had 338).
MAX_CELL_WORDS = 60


def test_no_table_cell_is_a_paragraph() -> None:
    """docs/claims.md is left out: generated by scripts/claims_doc.py, its cells are each
    claim's recorded reason and revision, quoted whole."""
    long = []
    for page in [*DOCS.rglob("*.md"), README]:
        if page.name == "claims.md":
            continue
        for i, line in enumerate(page.read_text().splitlines(), 1):
            if line.startswith("|"):
                for cell in re.split(r"(?<!\\)\|", line)[1:-1]:
                    if len(cell.split()) > MAX_CELL_WORDS:
                        long.append(f"{_page_id(page)}:{i}: {len(cell.split())} words")
    assert not long, long
