"""Typed experiment configs: dataclasses to and from plain dicts, with clear errors."""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, TypeVar, Union, get_args, get_origin, get_type_hints

T = TypeVar("T")


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
    if not dataclasses.is_dataclass(cls):
        raise ValueError(f"{cls!r} is not a config dataclass")
    hints = get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ValueError(
            f"{source}: unknown key {unknown[0]!r} for {cls.__name__}; "
            f"valid keys: {', '.join(fields)}"
        )
    kwargs = {k: _coerce(k, val, hints[k], source) for k, val in data.items()}
    try:
        return cls(**kwargs)
    except ValueError as err:
        raise ValueError(f"{source}: {err}") from None


def _coerce(key: str, value: Any, tp: Any, source: str) -> Any:
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        args = get_args(tp)
        if value is None and type(None) in args:
            return None
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
