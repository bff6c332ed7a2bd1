"""Project hygiene: one version, a wheel that installs and runs, CITATION.cff, CHANGELOG.

The wheel test builds specdyn from a copy of the sources (so the working tree is
left untouched), installs it with ``pip install --no-deps --target DIR`` and runs
``python -m specdyn --version`` and ``import specdyn.theory`` from there, with the
current interpreter's dependencies (numpy, scipy, ...).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import specdyn

ROOT = Path(__file__).resolve().parents[2]


def _version_file() -> str:
    text = (ROOT / "src" / "specdyn" / "_version.py").read_text()
    m = re.search(r'^__version__ = "([^"]+)"', text, flags=re.M)
    assert m, "_version.py must define __version__ = \"X.Y.Z\""
    return m.group(1)


def test_version_is_written_in_one_place() -> None:
    version = _version_file()
    assert specdyn.__version__ == version
    assert re.fullmatch(r"\d+\.\d+\.\d+([.-]?(a|b|rc|dev|post)\d*)?", version)
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject
    assert "specdyn._version.__version__" in pyproject
    # no other file under src hard-codes the version string
    for path in (ROOT / "src").rglob("*.py"):
        if path.name != "_version.py":
            assert f'"{version}"' not in path.read_text(), f"{path} repeats the version"


def _can_build_offline() -> bool:
    """setuptools >= 77 and wheel in this interpreter: build without an isolated env."""
    # metadata, not import: setuptools puts its vendored copy of wheel on sys.path
    try:
        setuptools_version = importlib.metadata.version("setuptools")
        importlib.metadata.version("wheel")
    except importlib.metadata.PackageNotFoundError:
        return False
    return int(setuptools_version.split(".")[0]) >= 77


def _build_wheel(src: Path, out: Path) -> Path:
    if importlib.util.find_spec("build") is not None:
        cmd = [sys.executable, "-m", "build", "--wheel", "--outdir", str(out)]
        if _can_build_offline():
            cmd.append("--no-isolation")
    else:
        cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(out)]
        if _can_build_offline():
            cmd.append("--no-build-isolation")
        cmd.append(".")
    res = subprocess.run(cmd + ([] if cmd[2] == "pip" else [str(src)]), cwd=src,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, f"wheel build failed:\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    wheels = list(out.glob("specdyn-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md", "LICENSE", "setup.cfg", "MANIFEST.in"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, src / name)
    shutil.copytree(ROOT / "src", src / "src",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc"))
    return _build_wheel(src, tmp_path_factory.mktemp("dist"))


def test_wheel_contents(wheel: Path) -> None:
    version = _version_file()
    assert wheel.name.startswith(f"specdyn-{version}-py3-none-any")
    names = zipfile.ZipFile(wheel).namelist()
    for required in ("specdyn/__init__.py", "specdyn/__main__.py", "specdyn/_version.py",
                     "specdyn/theory/__init__.py", "specdyn/theory/linear.py",
                     "specdyn/cli/__init__.py", "specdyn/_assets/plotly-basic.min.js.gz",
                     "specdyn/_assets/plotly-basic.LICENSE"):
        assert required in names, f"{required} missing from the wheel"
    assert not [n for n in names if n.startswith(("tests/", "docs/", "examples/"))]
    entry = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    # the console script keeps its signal handlers while the process exits (cli.console)
    assert "specdyn = specdyn.cli:console" in zipfile.ZipFile(wheel).read(entry).decode()


def test_installed_wheel_runs(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    res = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index",
                          "--target", str(target), str(wheel)],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    env = dict(os.environ, PYTHONPATH=str(target), OMP_NUM_THREADS="1")
    run_dir = tmp_path / "elsewhere"  # not the repository: nothing importable by accident
    run_dir.mkdir()
    ver = subprocess.run([sys.executable, "-m", "specdyn", "--version"], cwd=run_dir, env=env,
                         capture_output=True, text=True, timeout=120)
    assert ver.returncode == 0, ver.stderr
    assert ver.stdout.strip() == f"specdyn {_version_file()}"
    code = ("import sys, specdyn, specdyn.theory as th; "
            "from specdyn import PowerLawSetting; "
            "s = PowerLawSetting.paper(sigma_w=0.1, gamma0_ratio=2.0); "
            "print(specdyn.__file__); print(float(th.rho(s, 1.0, 0.0))); "
            "print('torch' in sys.modules)")
    imp = subprocess.run([sys.executable, "-c", code], cwd=run_dir, env=env,
                         capture_output=True, text=True, timeout=120)
    assert imp.returncode == 0, imp.stderr
    path, rho0, torch_loaded = imp.stdout.split()
    assert Path(path).resolve().is_relative_to(target.resolve()), path  # the wheel's copy ran
    assert float(rho0) == pytest.approx(0.1**2)   # rho(k=1, t=0) = sigma_w^2 lambda_1
    assert torch_loaded == "False"                  # the theory never imports torch


def test_citation_cff_is_valid_cff_1_2_0() -> None:
    import yaml  # installed with mkdocs (test extra)

    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0"
    for key in ("message", "title", "authors"):
        assert cff.get(key), f"CITATION.cff needs {key!r}"
    assert cff["type"] in ("software", "dataset")
    assert str(cff["version"]) == _version_file()
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(cff["date-released"]))
    for person in cff["authors"]:
        assert "name" in person or "family-names" in person
    refs = cff["references"]
    paper = [r for r in refs if "power-law anisotropy" in r["title"]]
    assert paper, "CITATION.cff must reference the core paper"
    names = {a["family-names"] for a in paper[0]["authors"]}
    assert names == {"Nakamuta", "Teramae"}
    # the official validator, when present (pip install cffconvert)
    if shutil.which("cffconvert"):
        res = subprocess.run(["cffconvert", "--validate", "-i", str(ROOT / "CITATION.cff")],
                             capture_output=True, text=True, timeout=60)
        assert res.returncode == 0, res.stdout + res.stderr


def test_changelog_has_an_entry_for_this_version() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    assert re.search(rf"^## \[{re.escape(_version_file())}\] - \d{{4}}-\d{{2}}-\d{{2}}$", text,
                     flags=re.M), "CHANGELOG.md has no dated entry for the current version"
