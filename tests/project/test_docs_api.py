"""The API reference covers the public API, and the public API is documented.

Fast checks without building the site (``test_docs_build.py`` builds it):

* every public function, class and method (``__all__`` of each package) has a
  docstring; a missing one is reported by its qualified name;
* the checker itself catches an undocumented function, method and dataclass;
* every ``::: identifier`` on an API page imports, and every public subpackage
  and submodule of specdyn that exists has an API page.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import re
import sys
import types
from pathlib import Path

import pytest

import specdyn

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("specdyn_docs_hooks",
                                               ROOT / "docs" / "_hooks" / "specdyn_docs.py")
assert _spec is not None and _spec.loader is not None
hooks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hooks)

API_TEXT = "\n".join(p.read_text() for p in sorted((ROOT / "docs" / "api").glob("*.md")))
API_IDS = re.findall(r"^:::\s+(\S+)", API_TEXT, flags=re.M)


def test_every_public_object_has_a_docstring() -> None:
    modules = hooks.api_modules()
    assert "specdyn.sim.linear" in modules and "specdyn.theory" in modules
    missing = hooks.missing_docstrings(modules)
    assert not missing, "public objects without a docstring: " + ", ".join(missing)


def test_checker_names_undocumented_objects(monkeypatch: pytest.MonkeyPatch) -> None:
    from dataclasses import dataclass

    mod = types.ModuleType("fake_api")

    def documented() -> None:
        """Documented."""

    def bare() -> None:
        pass

    @dataclass
    class Record:
        x: int

    class Tool:
        """Documented class."""

        def run(self) -> None:
            pass

        def _private(self) -> None:
            pass

    for obj in (documented, bare, Record, Tool):
        obj.__module__ = "fake_api"
        setattr(mod, obj.__name__, obj)
    setattr(mod, "__all__", ["documented", "bare", "Record", "Tool"])  # noqa: B010
    monkeypatch.setitem(sys.modules, "fake_api", mod)
    assert sorted(hooks.missing_docstrings(["fake_api"])) == [
        "fake_api.Record", "fake_api.Tool.run", "fake_api.bare"]


def test_every_api_identifier_imports() -> None:
    assert API_IDS
    for ident in API_IDS:
        parts = ident.split(".")
        for i in range(len(parts), 0, -1):  # longest importable prefix, then attributes
            try:
                obj = importlib.import_module(".".join(parts[:i]))
            except ModuleNotFoundError:
                continue
            for attr in parts[i:]:
                assert hasattr(obj, attr), f"API page references missing {ident}"
                obj = getattr(obj, attr)
            break
        else:
            pytest.fail(f"API page references {ident}, which does not import")


def _public_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(specdyn.__path__, "specdyn."):
        parts = info.name.split(".")
        if any(p.startswith("_") for p in parts[1:]):
            continue
        if parts[1] == "cli" or (parts[1] == "plot" and len(parts) > 2):
            continue  # command-line modules and figure functions are not library API
        if parts[1] == "experiments" and len(parts) > 2 and parts[2] not in (
                "registry", "config", "spec", "store", "executors", "sweep"):
            continue  # individual experiments are documented in the gallery
        names.append(info.name)
    return names


def _exported_by_parent(name: str, documented: set[str]) -> bool:
    """A submodule is covered when its package's page renders every name it defines."""
    parent = name.rsplit(".", 1)[0]
    if parent not in documented:
        return False
    exported = set(getattr(importlib.import_module(parent), "__all__", ()))
    mod = importlib.import_module(name)
    own = [n for n in hooks.public_names(mod)
           if getattr(getattr(mod, n), "__module__", None) == name]  # defined here
    return bool(own) and set(own) <= exported


def test_every_public_module_has_an_api_page() -> None:
    documented = set(API_IDS)
    missing = []
    for name in _public_modules():
        covered = (name in documented or any(i.startswith(name + ".") for i in documented)
                   or _exported_by_parent(name, documented))
        if not covered:
            missing.append(name)
    assert not missing, "modules without an API page entry: " + ", ".join(missing)
