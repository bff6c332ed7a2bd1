"""The documentation site builds in strict mode, and strict mode catches what it should.

* The real site (``mkdocs.yml``, ``docs/``) builds with ``--strict`` (every warning
  is an error): every API page resolves its ``::: identifier`` blocks, every link
  and image exists, and the public API has docstrings (the build hook in
  ``docs/_hooks/specdyn_docs.py``).
* Small throw-away sites show that a broken cross-reference, a missing image and
  a public function without a docstring each fail the strict build, with the name
  of what is missing in the output.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import mkdocs  # noqa: F401  (test extra: mkdocs, mkdocs-material, mkdocstrings[python])
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _mkdocs(config: Path, site: Path,
            extra_path: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", OMP_NUM_THREADS="1")
    if extra_path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(extra_path), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        capture_output=True, text=True, cwd=config.parent, env=env, timeout=300,
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    res = _mkdocs(ROOT / "mkdocs.yml", out)
    assert res.returncode == 0, f"mkdocs build --strict failed:\n{res.stdout}\n{res.stderr}"
    return out


def _api_identifiers() -> dict[str, list[str]]:
    ids = {}
    for page in sorted((ROOT / "docs" / "api").glob("*.md")):
        ids[page.stem] = re.findall(r"^:::\s+(\S+)", page.read_text(), flags=re.M)
    return ids


def test_site_builds_strict_and_every_api_page_renders_its_objects(site: Path) -> None:
    ids = _api_identifiers()
    assert ids, "no API pages"
    for stem, identifiers in ids.items():
        html = (site / "api" / stem / "index.html").read_text()
        for ident in identifiers:
            # mkdocstrings gives every rendered object an HTML id equal to its path
            assert f'id="{ident}"' in html, f"{ident} not rendered on api/{stem}"


def test_every_nav_page_is_built(site: Path) -> None:
    for md in (ROOT / "docs").rglob("*.md"):
        rel = md.relative_to(ROOT / "docs").with_suffix("")
        target = site / ("index.html" if rel.name == "index" else rel / "index.html")
        assert target.exists(), f"{md} was not built"


def test_gallery_page_shows_images_that_exist(site: Path) -> None:
    html = (site / "gallery" / "index.html").read_text()
    images = re.findall(r'<img[^>]+src="([^"]+)"', html)
    assert images, "the gallery page shows no image"
    for src in images:
        assert (site / "gallery" / src).resolve().exists(), f"gallery image {src} missing"


def test_cli_page_has_every_command(site: Path) -> None:
    import argparse

    from specdyn.cli import build_parser

    html = (site / "cli" / "index.html").read_text()
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for name in sub.choices:
        assert f"<code>specdyn {name}</code>" in html, f"CLI page lacks {name}"
        assert f"usage: specdyn {name}" in html


def test_changelog_is_included(site: Path) -> None:
    html = (site / "changelog" / "index.html").read_text()
    assert "0.1.0" in html


def _mini_site(tmp_path: Path, page: str, extra: str = "") -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text(textwrap.dedent(page))
    cfg = tmp_path / "mkdocs.yml"
    cfg.write_text(textwrap.dedent(f"""\
        site_name: t
        strict: true
        validation:
          unrecognized_links: warn
          anchors: warn
        hooks:
          - {ROOT / 'docs' / '_hooks' / 'specdyn_docs.py'}
        plugins:
          - mkdocstrings:
              handlers:
                python:
                  paths: [{ROOT / 'src'}]
                  options:
                    docstring_style: numpy
        """) + extra)
    return cfg


def test_broken_cross_reference_fails_with_its_name(tmp_path: Path) -> None:
    cfg = _mini_site(tmp_path, """\
        # t
        ::: specdyn.theory.no_such_function
        """, "extra:\n  api_modules: [specdyn.settings]\n")
    res = _mkdocs(cfg, tmp_path / "site")
    assert res.returncode != 0
    assert "specdyn.theory.no_such_function" in res.stdout + res.stderr


def test_broken_link_and_missing_image_fail_with_their_names(tmp_path: Path) -> None:
    cfg = _mini_site(tmp_path, """\
        # t
        See [the theory](theory-page-that-does-not-exist.md).

        ![fig](gallery/no-such-figure.png)
        """, "extra:\n  api_modules: [specdyn.settings]\n")
    res = _mkdocs(cfg, tmp_path / "site")
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "theory-page-that-does-not-exist.md" in out
    assert "no-such-figure.png" in out


def test_public_function_without_docstring_fails_with_its_name(tmp_path: Path) -> None:
    pkg = tmp_path / "pkgs" / "fakepkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(textwrap.dedent('''\
        """A package with one documented and one undocumented public function."""

        __all__ = ["documented", "undocumented_thing", "Klass"]


        def documented():
            """Has a docstring."""


        def undocumented_thing():
            pass


        class Klass:
            """Documented class with an undocumented public method."""

            def method_without_doc(self):
                pass
        '''))
    cfg = _mini_site(tmp_path, "# t\n", "extra:\n  api_modules: [fakepkg]\n")
    res = _mkdocs(cfg, tmp_path / "site", extra_path=tmp_path / "pkgs")
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "fakepkg.undocumented_thing" in out
    assert "fakepkg.Klass.method_without_doc" in out
    assert "fakepkg.documented" not in out.replace("fakepkg.documented_", "")


def test_included_file_brings_its_images_and_neutralises_repo_links(tmp_path: Path) -> None:
    from PIL import Image

    repo = tmp_path / "repo"
    (repo / "benchmarks").mkdir(parents=True)
    Image.new("RGB", (40, 30), "white").save(repo / "benchmarks" / "speed.png")
    (repo / "BENCHMARKS.md").write_text(textwrap.dedent("""\
        # Benchmarks

        Run [the script](benchmarks/linear_sim.py); see [docs](https://example.org/x).

        ![speed-up](benchmarks/speed.png)

        ## Linear engine
        """))
    cfg = _mini_site(tmp_path, """\
        # Performance

        <!-- include: BENCHMARKS.md -->

        <!-- include: NOT_THERE.md -->
        """, f"extra:\n  api_modules: [specdyn.settings]\n  include_root: {repo}\n")
    site = tmp_path / "site"
    res = _mkdocs(cfg, site)
    assert res.returncode == 0, res.stdout + res.stderr
    html = (site / "index.html").read_text()
    assert (site / "included" / "benchmarks" / "speed.png").exists()
    assert 'src="included/benchmarks/speed.png"' in html
    assert "<code>benchmarks/linear_sim.py</code>" in html     # repo link -> code text
    assert 'href="https://example.org/x"' in html               # web link kept
    assert "<h3" in html and "Linear engine" in html            # headings demoted
    assert "NOT_THERE.md" in html and "not in this checkout" in html
