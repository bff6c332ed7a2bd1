"""Every Python code block in the documentation runs as shown.

The blocks of one page run in order in one fresh interpreter (later blocks use
the names of earlier ones), in a temporary working directory. A block that
cannot run here (it needs a cluster, say) is preceded in the page by
``<!-- docs-test: skip REASON -->`` and listed by ``test_skipped_blocks_say_why``.
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


PAGES = sorted(p for p in DOCS.rglob("*.md") if any(not s for s, _ in _blocks(p)))


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(DOCS)) for p in PAGES])
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
    for page in DOCS.rglob("*.md"):
        for m in re.finditer(r"<!-- docs-test: skip([^>]*)-->", page.read_text()):
            assert len(m.group(1).strip()) >= 10, f"{page.name}: a skipped block needs a reason"


def test_pages_have_runnable_code() -> None:
    names = {p.name for p in PAGES}
    for required in ("getting-started.md", "concepts.md", "theory.md", "measurement.md"):
        assert required in names
