"""MkDocs hooks for the specdyn documentation.

* ``on_pre_build``: walk specdyn's public API and log a warning naming every
  public function, class or method without a docstring. In strict mode
  (``mkdocs build --strict``, and ``strict: true`` in ``mkdocs.yml``) each
  warning fails the build, so an undocumented public object cannot ship.
* ``on_page_markdown``: replace ``<!-- include: PATH -->`` (a path relative to
  the repository root, e.g. ``CHANGELOG.md`` or ``BENCHMARKS.md``) with the
  file's text, its headings demoted one level, so the site always shows the
  current file; a missing file leaves a short note instead of failing. Images
  the included file shows are copied into the site (``on_files``); links to
  other repository files become code text. ``<!-- cli-help -->`` becomes the
  help text of ``specdyn`` and of every subcommand, so the command-line
  reference is always the parser's own.

The public API is what each package's ``__all__`` exports; a package without
``__all__`` exports its public (no leading underscore) names defined inside
specdyn. Dataclasses count as undocumented when their ``__doc__`` is the
signature that ``dataclasses`` generates.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import logging
import re
from pathlib import Path
from typing import Any

log = logging.getLogger("mkdocs.hooks.specdyn_docs")

ROOT = Path(__file__).resolve().parents[2]

# Modules whose public names form the API reference (checked when importable).
PUBLIC_MODULES = [
    "specdyn",
    "specdyn.settings",
    "specdyn.theory",
    "specdyn.theory.oracles",
    "specdyn.theory.rmt",
    "specdyn.theory.outlier_escape",
    "specdyn.data",
    "specdyn.sim",
    "specdyn.measure",
    "specdyn.experiments",
    "specdyn.io",
    "specdyn.plot",
]


def api_modules(docs_dir: Path | None = None) -> list[str]:
    """``PUBLIC_MODULES`` plus every module named by a ``::: identifier`` on an API page."""
    docs_dir = docs_dir or ROOT / "docs"
    names = list(PUBLIC_MODULES)
    for page in sorted((docs_dir / "api").glob("*.md")):
        for ident in re.findall(r"^:::\s+(\S+)", page.read_text(), flags=re.M):
            if ident not in names and importlib.util.find_spec(ident.rsplit(".", 1)[0]) is not None:
                try:
                    if importlib.util.find_spec(ident) is not None:
                        names.append(ident)
                except ModuleNotFoundError:
                    pass  # a class or function, not a module
    return names


def public_names(module: Any) -> list[str]:
    """Names exported by ``module``: its ``__all__``, or public names defined in specdyn."""
    names = getattr(module, "__all__", None)
    if names is not None:
        return list(names)
    out = []
    for name, obj in vars(module).items():
        if name.startswith("_"):
            continue
        if inspect.isfunction(obj) or inspect.isclass(obj):
            if getattr(obj, "__module__", "").startswith("specdyn"):
                out.append(name)
    return out


def _has_doc(obj: Any) -> bool:
    doc = obj.__doc__
    if not doc or not doc.strip():
        return False
    # dataclasses write "Name(field: type, ...)" when the class has no docstring
    return not (inspect.isclass(obj) and doc.startswith(f"{obj.__name__}("))


def missing_docstrings(module_names: list[str] | None = None) -> list[str]:
    """Qualified names of public functions, classes and methods without a docstring.

    A module that does not exist is skipped (an API page that references it
    fails the build by itself); an import error inside a module is raised.
    Methods are checked when defined in the class itself and public (no
    leading underscore).
    """
    missing: list[str] = []
    seen: set[int] = set()
    for mod_name in module_names or PUBLIC_MODULES:
        try:
            module = importlib.import_module(mod_name)
        except ModuleNotFoundError as err:
            if err.name is not None and mod_name.startswith(err.name):
                continue  # the module itself is absent (not a broken import inside it)
            raise
        for name in public_names(module):
            obj = getattr(module, name, None)
            if obj is None or id(obj) in seen:
                continue
            if not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            seen.add(id(obj))
            qual = f"{mod_name}.{name}"
            if not _has_doc(obj):
                missing.append(qual)
            if inspect.isclass(obj):
                for meth_name, meth in vars(obj).items():
                    if meth_name.startswith("_"):
                        continue
                    fn = meth.__func__ if isinstance(meth, (classmethod, staticmethod)) else meth
                    if isinstance(fn, property):
                        fn = fn.fget
                    if (inspect.isfunction(fn) and fn.__name__ != "<lambda>"
                            and not (fn.__doc__ or "").strip()):
                        missing.append(f"{qual}.{meth_name}")
    return missing


def on_pre_build(config: Any) -> None:
    """Fail (in strict mode) on every public object without a docstring.

    The modules checked are ``PUBLIC_MODULES`` and every module on an API page
    (:func:`api_modules`), or the list under ``extra: api_modules:`` in
    ``mkdocs.yml`` when given.
    """
    modules = ((config.get("extra") or {}).get("api_modules")
               or api_modules(Path(config["docs_dir"])))
    for qual in missing_docstrings(list(modules)):
        log.warning("public object without a docstring: %s", qual)


_INCLUDE = re.compile(r"<!--\s*include:\s*(\S+)\s*-->")
_LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")
ASSETS = "included"  # site folder for images that included files reference


def _demote(text: str) -> str:
    out, fence = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
        out.append("#" + line if (not fence and line.startswith("#")) else line)
    return "\n".join(out)


def _is_relative(target: str) -> bool:
    return not re.match(r"^([a-z]+:|#|/)", target)


def _root(config: Any) -> Path:
    """Folder that include paths are relative to (``extra: include_root``, for tests)."""
    return Path((config.get("extra") or {}).get("include_root") or ROOT).resolve()


def _included_images(docs_dir: Path, root: Path) -> dict[str, Path]:
    """Images referenced by files that the pages include: ``{site path: source file}``."""
    found: dict[str, Path] = {}
    for page in docs_dir.rglob("*.md"):
        for inc in _INCLUDE.findall(page.read_text()):
            src = root / inc
            if not src.exists():
                continue
            for bang, _, target in _LINK.findall(src.read_text()):
                path = (src.parent / target).resolve()
                if bang and _is_relative(target) and path.is_file() and path.is_relative_to(root):
                    found[f"{ASSETS}/{path.relative_to(root).as_posix()}"] = path
    return found


def on_files(files: Any, config: Any) -> Any:
    """Add the images that included files (e.g. BENCHMARKS.md) show to the site."""
    from mkdocs.structure.files import File

    for uri, path in _included_images(Path(config["docs_dir"]), _root(config)).items():
        if files.get_file_from_path(uri) is None:
            files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files


_CLI = re.compile(r"<!--\s*cli-help\s*-->")


def cli_reference() -> str:
    """``specdyn --help`` and the help of every subcommand, as Markdown."""
    import argparse
    import os

    from specdyn.cli import build_parser

    os.environ["COLUMNS"] = "96"  # argparse wraps to the terminal; fix it for the page
    parser = build_parser()
    parser.prog = "specdyn"
    parts = ["## `specdyn`", "", "```text", parser.format_help().rstrip(), "```", ""]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                parts += [f"## `specdyn {name}`", "", "```text", sub.format_help().rstrip(),
                          "```", ""]
    return "\n".join(parts)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Expand ``<!-- include: PATH -->`` markers with files from the repository root.

    Relative links inside the included file are rewritten: images point at the
    copies added by :func:`on_files`, links to other repository files become
    plain code text (the site holds only the docs), web links are kept.
    """
    depth = page.file.src_uri.count("/")
    root = _root(config)

    def repl(m: re.Match[str]) -> str:
        src = root / m.group(1)
        if not src.exists():
            return f"*`{m.group(1)}` is not in this checkout yet.*"
        text = src.read_text()
        # drop the included file's own title: the page has one
        text = re.sub(r"\A#\s[^\n]*\n", "", text.lstrip())

        def link(lm: re.Match[str]) -> str:
            bang, label, target = lm.groups()
            if not _is_relative(target):
                return lm.group(0)
            path = (src.parent / target).resolve()
            inside = path.is_relative_to(root)
            rel = path.relative_to(root).as_posix() if inside else target
            if bang and inside and path.is_file():
                return f"![{label}]({'../' * depth}{ASSETS}/{rel})"
            return f"{label} (`{rel}`)" if label and label.strip("`") != rel else f"`{rel}`"

        return _demote(_LINK.sub(link, text))

    markdown = _CLI.sub(lambda _: cli_reference(), markdown)
    return _INCLUDE.sub(repl, markdown)
