"""Griffe extension used by the API reference (see ``mkdocs.yml``).

Two rewrites of specdyn's docstrings before they are parsed (parsing is lazy,
so changing ``docstring.value`` once the package is loaded is enough):

* **Sphinx roles become cross-references.** ``:func:`~specdyn.theory.rho``` (and
  ``:class:``, ``:meth:``, ``:mod:``, ``:data:``, ...) is rewritten to an
  optional autorefs link, ``<autoref identifier="specdyn.theory.rho" optional>``,
  titled ``rho`` (``~`` keeps only the last name, as in Sphinx). A name without a
  dot is looked up next to the object (same module, then same class). An
  optional reference that does not resolve renders as plain code and does not
  fail the build; references written in the Markdown pages are strict.
* **Member-list headings in module docstrings are retitled.** The numpy parser
  reads a heading such as ``Methods`` in a *module* docstring (used, e.g., for
  the training methods of a simulator) as a list of member functions, which it
  is not, and mkdocstrings then fails to render it; such headings become
  ``Methods (options)`` and render as text. Class and function docstrings are
  untouched.
"""

from __future__ import annotations

import html
import re
from typing import Any

import griffe

_MEMBER_SECTIONS = re.compile(r"^(\s*)(Methods|Functions|Classes|Modules)(\s*\n\s*-{3,}\s*)$",
                              re.MULTILINE)
_ROLE = re.compile(r":(?:py:)?(func|class|meth|mod|attr|data|obj|exc|const):`(~?)([\w.]+)(\(\))?`")


def _identifier(obj: griffe.Object, target: str) -> str:
    if "." in target or obj.module is None:
        return target
    owner = obj.parent if isinstance(obj, (griffe.Function, griffe.Attribute)) else obj
    if isinstance(owner, griffe.Class) and target in owner.members:
        return f"{owner.path}.{target}"
    member = obj.module.members.get(target)
    if isinstance(member, griffe.Alias):
        return str(member.target_path)  # an imported name: link to where it is defined
    return f"{obj.module.path}.{target}"


def _rewrite_roles(obj: griffe.Object, text: str) -> str:
    def repl(m: re.Match[str]) -> str:
        kind, tilde, target, call = m.groups()
        title = target.rsplit(".", 1)[-1] if tilde else target
        if kind in ("func", "meth") or call:
            title += "()"
        ident = html.escape(_identifier(obj, target), quote=True)
        return f'<autoref identifier="{ident}" optional><code>{html.escape(title)}</code></autoref>'

    return _ROLE.sub(repl, text)


def _walk(obj: griffe.Object) -> None:
    if obj.docstring is not None:
        text = _rewrite_roles(obj, obj.docstring.value)
        if isinstance(obj, griffe.Module):
            text = _MEMBER_SECTIONS.sub(r"\1\2 (options)\3", text)
        obj.docstring.value = text
    for member in obj.members.values():
        if not member.is_alias:
            _walk(member)  # type: ignore[arg-type]


class ModuleSectionTitles(griffe.Extension):
    """Rewrite Sphinx roles and module member-list headings in every docstring."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        """Walk the loaded package once."""
        _walk(pkg)
