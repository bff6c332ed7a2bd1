"""Every Python code block in the documentation and the README runs as shown.

The blocks of one page run in order in one fresh interpreter (later blocks use
the names of earlier ones), in a temporary working directory. A block that
cannot run here (it needs a cluster, say) is preceded in the page by
``<!-- docs-test: skip REASON -->`` and listed by ``test_skipped_blocks_say_why``.
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
_BLOCK = re.compile(r"(<!-- docs-test: skip[^>]*-->\s*\n)?```python\n(.*?)```", re.S)


def _blocks(page: Path) -> list[tuple[bool, str]]:
    return [(bool(m.group(1)), m.group(2)) for m in _BLOCK.finditer(page.read_text())]


README = ROOT / "README.md"
PAGES = sorted(p for p in [*DOCS.rglob("*.md"), README] if any(not s for s, _ in _blocks(p)))


def _page_id(page: Path) -> str:
    return "README.md" if page == README else str(page.relative_to(DOCS))


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=[_page_id(p) for p in PAGES])
def test_page_code_runs(page: Path, tmp_path: Path) -> None:
    code = "\n\n".join(src for skip, src in _blocks(page) if not skip)
    script = tmp_path / "page.py"
    script.write_text("import matplotlib\nmatplotlib.use('Agg')\n" + code)
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONWARNINGS="error::RuntimeWarning")
    res = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, f"{page.name}:\n{res.stdout[-2000:]}\n{res.stderr[-4000:]}"


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
