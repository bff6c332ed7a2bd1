"""Typed experiment configs: dataclasses to and from plain dicts and TOML files.

A config is a frozen dataclass whose fields are simple values (int, float, str,
bool, a tuple of those, or ``Optional``/``Literal`` of those), so it maps onto a
flat TOML file one key per field. The file format of ``specdyn run`` and
``specdyn sweep``::

    experiment = "simulate"   # registered experiment name
    module = "mypkg.exps"     # optional: a module to import that registers it
    N = 256                   # config fields; a field left out keeps its default
    steps = 2000

    [sweep]                   # only for `specdyn sweep`; see specdyn.runs.sweep
    seeds = [0, 1, 2]
    [sweep.axes]
    sigma_w = [0.1, 0.3, 1.0]

Every error found in a file names the file, the line and the key, and is
raised before any run starts.

Public functions
----------------
config_to_dict, config_from_dict
    Dataclass <-> plain dict (JSON/TOML-friendly values).
config_to_toml(cfg, experiment=None) -> str
    The config as TOML text (what ``specdyn reproduce NAME --print-config`` prints).
load_config(path, cls, experiment=None) -> cfg
    Read a TOML file written by :func:`config_to_toml` (or by hand) into ``cls``.
read_toml(path) -> TomlFile
    The parsed file plus the line of every key, for errors that name the line.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import sys
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, Union, get_args, get_origin, get_type_hints

from specdyn._validate import did_you_mean

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

T = TypeVar("T")

#: How ``None`` is written in TOML (which has no null) for optional non-string fields.
NONE_TEXT = "none"
#: Top-level keys of a run/sweep file that are not config fields.
RESERVED_KEYS = ("experiment", "module", "sweep")


# --------------------------------------------------------------------------- dicts


def config_to_dict(cfg: Any) -> dict[str, Any]:
    """A config dataclass as a plain dict of JSON/TOML-friendly values."""
    if not dataclasses.is_dataclass(cfg) or isinstance(cfg, type):
        raise ValueError(f"config must be a dataclass instance, got {type(cfg).__name__}")
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cfg):
        value = getattr(cfg, f.name)
        out[f.name] = list(value) if isinstance(value, tuple) else value
    return out


def config_from_dict(cls: type[T], data: dict[str, Any], *, source: str = "config") -> T:
    """Build config ``cls`` from ``data``, rejecting unknown keys and wrong types.

    Errors name the key and ``source`` (a file name, say).
    """
    return build_config(cls, data, lambda key: source)


def build_config(cls: type[T], data: Mapping[str, Any], where: Callable[[str | None], str]) -> T:
    """Build config ``cls`` from ``data``; ``where(key)`` says where a key came from.

    ``where`` returns a location such as ``"run.toml, line 4"`` for a key (or
    for ``None``: the whole source); every error message starts with it.
    """
    if not dataclasses.is_dataclass(cls):
        raise ValueError(f"{cls!r} is not a config dataclass")
    hints = get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    for name in data:
        if name not in fields:
            raise ValueError(
                f"{where(name)}: unknown key {name!r} for {cls.__name__}"
                f"{did_you_mean(name, fields)}; valid keys: {', '.join(fields)}"
            )
    kwargs = {k: _coerce(k, val, hints[k], where(k)) for k, val in data.items()}
    try:
        return cls(**kwargs)
    except (ValueError, TypeError) as err:
        key = _field_named_in(str(err), list(fields))
        loc = where(key) if key is not None else where(None)
        raise ValueError(f"{loc}: {err}") from None


def field_types(cls: type) -> dict[str, Any]:
    """The resolved type hint of every field of config class ``cls``."""
    hints = get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}


def coerce_value(key: str, value: Any, tp: Any, where: str) -> Any:
    """Check ``value`` against field type ``tp`` and convert it (int -> float, list -> tuple)."""
    return _coerce(key, value, tp, where)


def _field_named_in(message: str, names: list[str]) -> str | None:
    # validators start their messages with the argument's name ("N must be ...")
    for name in sorted(names, key=len, reverse=True):
        if re.match(rf"\W*{re.escape(name)}\b", message):
            return name
    for name in sorted(names, key=len, reverse=True):
        if re.search(rf"\b{re.escape(name)}\b", message):
            return name
    return None


def _coerce(key: str, value: Any, tp: Any, source: str) -> Any:
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        args = get_args(tp)
        if value is None and type(None) in args:
            return None
        if (isinstance(value, str) and value.lower() == NONE_TEXT and type(None) in args
                and str not in args):
            return None  # TOML has no null: "none" stands for it where no string is allowed
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _coerce(key, value, arg, source)
            except ValueError as err:
                errors.append(str(err))
        raise ValueError(errors[0] if errors else f"{source}: bad value for {key!r}")
    if origin is typing.Literal:
        if value not in get_args(tp):
            raise ValueError(
                f"{source}: key {key!r} must be one of {get_args(tp)}, got {value!r}"
            )
        return value
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise ValueError(f"{source}: key {key!r} must be a list, got {value!r}")
        args = get_args(tp)
        inner = args[0] if args else Any
        return tuple(_coerce(key, x, inner, source) for x in value)
    if tp is Any:
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{source}: key {key!r} must be a number, got {value!r}")
        return float(value)
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{source}: key {key!r} must be an integer, got {value!r}")
        return value
    if tp is bool:
        if not isinstance(value, bool):
            raise ValueError(f"{source}: key {key!r} must be true or false, got {value!r}")
        return value
    if tp is str:
        if not isinstance(value, str):
            raise ValueError(f"{source}: key {key!r} must be a string, got {value!r}")
        return value
    return value


# --------------------------------------------------------------------------- TOML


@dataclass
class TomlFile:
    """A parsed TOML file and the line (1-based) where each key is defined.

    ``lines`` maps a dotted key path, e.g. ``("sweep", "axes", "N")``, to its
    line. ``tomllib`` reports no positions for valid files, so the lines are
    found by scanning the text for table headers and ``key =`` assignments.
    """

    path: Path
    data: dict[str, Any]
    lines: dict[tuple[str, ...], int] = field(default_factory=dict)

    def line(self, *key: str) -> int | None:
        """The line defining ``key`` (a dotted path), or of its table, or ``None``."""
        path = tuple(key)
        inner = [no for k, no in self.lines.items() if k[:len(path)] == path]
        if path and inner:
            return min(inner)  # the key itself, or its first dotted sub-key
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return None

    def where(self, *key: str) -> str:
        """``"FILE, line N, key 'a.b'"`` for error messages (line left out if unknown)."""
        loc = str(self.path)
        line = self.line(*key)
        if line is not None:
            loc += f", line {line}"
        if key:
            loc += f", key {'.'.join(key)!r}"
        return loc


def read_toml(path: str | os.PathLike[str]) -> TomlFile:
    """Parse a TOML file; a syntax error becomes a ``ValueError`` naming the file and line."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as err:
        raise ValueError(f"cannot read config file {str(p)!r}: {err.strerror or err}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        # the message already says "(at line L, column C)"
        raise ValueError(f"{p}: invalid TOML: {err}") from None
    return TomlFile(p, data, _key_lines(text))


_HEADER = re.compile(r"^\s*\[(\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_NAME = r"""(?:"[^"]*"|'[^']*'|[A-Za-z0-9_\-]+)"""
_KEY = re.compile(rf"^\s*({_NAME}(?:\s*\.\s*{_NAME})*)\s*=")
_PART = re.compile(r"""\s*("[^"]*"|'[^']*'|[A-Za-z0-9_\-]+)\s*(?:\.|$)""")


def _split_key(text: str) -> tuple[str, ...]:
    parts = []
    for m in _PART.finditer(text):
        part = m.group(1)
        if part[:1] in "\"'":
            part = part[1:-1]
        parts.append(part)
    return tuple(parts)


def _key_lines(text: str) -> dict[tuple[str, ...], int]:
    """Line of every table header and ``key =`` line, by full dotted path (first wins)."""
    lines: dict[tuple[str, ...], int] = {}
    table: tuple[str, ...] = ()
    in_multiline: str | None = None
    for no, raw in enumerate(text.splitlines(), start=1):
        if in_multiline is not None:
            # inside a multi-line string: nothing here is a key
            if raw.count(in_multiline) % 2 == 1:
                in_multiline = None
            continue
        header = _HEADER.match(raw)
        if header:
            table = _split_key(header.group(2))
            lines.setdefault(table, no)
            continue
        key = _KEY.match(raw)
        if key:
            full = table + _split_key(key.group(1))
            lines.setdefault(full, no)
            rest = raw[key.end():]
            for quote in ('"""', "'''"):
                if rest.count(quote) % 2 == 1:
                    in_multiline = quote
    return lines


def config_to_toml(cfg: Any, experiment: str | None = None, *, header: str | None = None) -> str:
    """The config as TOML text: one ``key = value`` line per field.

    Parameters
    ----------
    cfg
        A config dataclass instance with simple fields.
    experiment
        When given, an ``experiment = "NAME"`` line comes first, so the text is
        a complete input of ``specdyn run`` (and, with a ``[sweep]`` table
        added, of ``specdyn sweep``).
    header
        An optional comment placed at the top (each line prefixed with ``#``).

    Notes
    -----
    TOML has no null: a field whose value is ``None`` is written as the string
    ``"none"`` (read back as ``None`` by any optional field that does not also
    accept strings); an optional *string* field that is ``None`` is written as a
    comment, so it takes its default (which must then be ``None``).
    Floats keep full precision (``repr``); ``inf`` and ``nan`` are TOML floats.
    ``load_config(path, type(cfg))`` on the text gives back an equal config.
    """
    values = config_to_dict(cfg)
    hints = get_type_hints(type(cfg))
    defaults = {f.name: f.default for f in dataclasses.fields(cfg)}
    out: list[str] = []
    if header:
        out += [f"# {line}".rstrip() for line in header.splitlines()]
    if experiment is not None:
        out.append(f"experiment = {_toml_value(experiment, 'experiment')}")
    for key, value in values.items():
        if key in RESERVED_KEYS:
            raise ValueError(f"config field {key!r} clashes with a reserved TOML key")
        if value is None:
            if str not in get_args(hints[key]):
                out.append(f'{_bare_key(key)} = "{NONE_TEXT}"')
                continue
            if defaults[key] is not None:
                raise ValueError(
                    f"field {key!r} is None but its default is not: TOML cannot write it"
                )
            out.append(f"# {key} = (none: leave out to keep the default)")
            continue
        out.append(f"{_bare_key(key)} = {_toml_value(value, key)}")
    return "\n".join(out) + "\n"


def load_config(path: str | os.PathLike[str], cls: type[T], *,
                experiment: str | None = None) -> T:
    """Read config ``cls`` from a TOML file (as written by :func:`config_to_toml`).

    Fields left out keep their defaults. An ``experiment`` key, if present,
    must equal ``experiment`` (when given); a ``[sweep]`` table is not allowed
    here (use ``specdyn sweep``). Unknown keys, wrong types and values the
    config rejects raise a ``ValueError`` naming the file, the line and the key.
    """
    tf = read_toml(path)
    return config_from_toml(tf, cls, experiment=experiment)


def config_from_toml(tf: TomlFile, cls: type[T], *, experiment: str | None = None,
                     allow_sweep: bool = False) -> T:
    """Build ``cls`` from the top-level keys of a parsed file (see :func:`load_config`)."""
    data = dict(tf.data)
    name = data.pop("experiment", None)
    data.pop("module", None)
    if experiment is not None and name is not None and name != experiment:
        raise ValueError(
            f"{tf.where('experiment')}: file is for experiment {name!r}, not {experiment!r}"
        )
    if "sweep" in data:
        if not allow_sweep:
            raise ValueError(
                f"{tf.where('sweep')}: a [sweep] table belongs to `specdyn sweep`, "
                "not to a single run"
            )
        data.pop("sweep")
    for key, value in data.items():
        if isinstance(value, dict):
            raise ValueError(
                f"{tf.where(key)}: a table [{key}] is not a config field"
                f"{did_you_mean(key, RESERVED_KEYS[:2])}; "
                f"valid keys: {', '.join(RESERVED_KEYS[:2])} and the fields of {cls.__name__}"
            )
    return build_config(cls, data, lambda key: tf.where(key) if key else str(tf.path))


_BARE = re.compile(r"^[A-Za-z0-9_\-]+$")


def _bare_key(key: str) -> str:
    return key if _BARE.match(key) else json.dumps(key)


def _toml_value(value: Any, key: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        text = repr(value)
        return text if any(c in text for c in ".en") else text + ".0"
    if isinstance(value, str):
        # a JSON string is a TOML basic string, once DEL (legal in JSON) is escaped
        return json.dumps(value).replace("\x7f", "\\u007f")
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v, key) for v in value) + "]"
    raise ValueError(f"field {key!r}: cannot write a {type(value).__name__} to TOML")
