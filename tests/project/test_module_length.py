"""No module of ``src/specdyn`` is over 500 lines: a long one is split by concept.

The split follows what the code holds, never a line count: ``measure/spectra.py`` (the
public spectra) beside ``measure/eigen.py`` and ``measure/gram_spectra.py`` (the
kernels), ``runs/store.py`` (the folders' layout) beside ``runs/transaction.py`` (their
lock and atomic replacement). Lines are counted as ``wc -l`` counts them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "specdyn"

#: The longest a module may be, in lines.
MAX_LINES = 500


def long_modules(root: Path, limit: int = MAX_LINES) -> list[str]:
    """``"path: N lines"`` for every ``.py`` file under ``root`` longer than ``limit``."""
    out = []
    for path in sorted(root.rglob("*.py")):
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > limit:
            out.append(f"{path.relative_to(root.parent)}: {n} lines")
    return out


def test_no_module_is_over_500_lines() -> None:
    found = long_modules(SRC)
    assert not found, (f"modules over {MAX_LINES} lines (split each by concept; "
                       "docs/concepts.md):\n" + "\n".join(f"  {f}" for f in found))


@pytest.mark.parametrize(("lines", "flagged"), [(MAX_LINES, False), (MAX_LINES + 1, True)])
def test_the_checker_sees_a_long_module(tmp_path: Path, lines: int, flagged: bool) -> None:
    pkg = tmp_path / "pkg" / "sub"
    pkg.mkdir(parents=True)
    (pkg / "long.py").write_text("x = 1\n" * lines)
    (pkg / "short.py").write_text("x = 1\n")
    found = long_modules(tmp_path / "pkg")
    assert found == ([f"pkg/sub/long.py: {lines} lines"] if flagged else [])
