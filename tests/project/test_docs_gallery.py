"""The gallery page and the README list every `specdyn reproduce` experiment; the gallery
shows only images that exist.

The images are made by ``scripts/update_gallery.py`` from quick runs; this test
does not run the experiments, it checks the page against the registry and the
files (and the page writer against a registry it controls).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from PIL import Image

from specdyn import runs

ROOT = Path(__file__).resolve().parents[2]
GALLERY = ROOT / "docs" / "gallery"
PAGE = ROOT / "docs" / "gallery.md"
MAX_BYTES = 300 * 1024

_spec = importlib.util.spec_from_file_location("update_gallery",
                                               ROOT / "scripts" / "update_gallery.py")
assert _spec is not None and _spec.loader is not None
update_gallery = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(update_gallery)


def test_every_experiment_has_a_section_with_its_command() -> None:
    text = PAGE.read_text()
    for name in runs.builtin_names():
        assert f"## `{name}`" in text, f"gallery has no section for {name}"
        assert f"specdyn reproduce {name}\n" in text, f"gallery lacks the command for {name}"


def test_readme_table_lists_every_experiment_and_no_other() -> None:
    text = (ROOT / "README.md").read_text()
    table = text.split("### Experiments (`specdyn reproduce NAME`)", 1)[1].split("\n\n", 2)[1]
    listed = re.findall(r"^\| `([^`]+)` \|", table, flags=re.M)
    assert sorted(listed) == sorted(runs.builtin_names()), (
        "README.md's experiment table and the registry differ: add or remove rows")


def test_every_experiment_has_a_figure_in_the_gallery() -> None:
    text = PAGE.read_text()
    sections = re.split(r"^## ", text, flags=re.M)[1:]
    without = [s.split("`")[1] for s in sections if "](gallery/" not in s]
    assert not without, ("no figure yet for: " + ", ".join(without)
                         + " (run python scripts/update_gallery.py NAME)")


def test_referenced_images_exist_are_small_pngs() -> None:
    images = re.findall(r"\]\((gallery/[^)]+)\)", PAGE.read_text())
    assert images
    for rel in images:
        path = ROOT / "docs" / rel
        assert path.exists(), f"{rel} is referenced but missing"
        assert path.stat().st_size <= MAX_BYTES, f"{rel} is {path.stat().st_size} bytes"
        with Image.open(path) as im:
            assert im.format == "PNG" and im.width >= 300


def test_shrink_keeps_png_under_the_limit(tmp_path: Path) -> None:
    import numpy as np

    rng = np.random.default_rng(0)  # noise does not compress: forces downscaling
    Image.fromarray(rng.integers(0, 255, (1500, 2400, 3), dtype=np.uint8)).save(tmp_path / "a.png")
    update_gallery._shrink_png(tmp_path / "a.png", tmp_path / "b.png", max_kb=300, max_width=1200)
    with Image.open(tmp_path / "b.png") as im:
        assert im.width <= 1200
        assert im.height / im.width == __import__("pytest").approx(1500 / 2400, rel=0.01)
    assert (tmp_path / "b.png").stat().st_size <= MAX_BYTES
