"""The registries of :mod:`specdyn.sim`: every entry point with its config, every engine.

An entry point registers itself with :func:`entry_point` (its config class and one small
valid call), an engine class with :func:`engine` (small constructor calls, one a kind of
run it makes); the tests of the protocol, of the declared constraints and of the run
options find them here, so a new engine or entry point is tested as soon as it is
registered, with no list to edit::

    @engine(examples={"gd": lambda: ((X, Y), {"lr": 0.1})})
    class RidgeEngine(Engine[RidgeState, None]): ...

    @entry_point(RidgeConfig, example=lambda: ((X, Y), {"lr": 0.1, "steps": 3}))
    def train_ridge(X, Y, *, lr, steps, ...): ...
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ["EngineEntry", "EntryPoint", "engine", "engines", "entry_point", "entry_points"]

#: a call: positional arguments and keywords
Call = tuple[tuple[Any, ...], dict[str, Any]]

F = TypeVar("F", bound=Callable[..., Any])
E = TypeVar("E", bound=type)


@dataclass(frozen=True)
class EntryPoint:
    """A registered entry point.

    Attributes
    ----------
    name
        Its name (``train_linear``).
    function
        The entry point.
    config
        Its config class (a :class:`~specdyn.sim.config.SimConfig`): where its parameters
        are declared and documented, once.
    example
        ``() -> (args, kwargs)``: a small valid call on the CPU.
    """

    name: str
    function: Callable[..., Any]
    config: type
    example: Callable[[], Call]


@dataclass(frozen=True)
class EngineEntry:
    """A registered engine class and its examples: name -> ``() -> (args, kwargs)``, small
    constructor calls on the CPU, one for each kind of run it makes (its methods, its
    optimisers)."""

    cls: type
    examples: Mapping[str, Callable[[], Call]]


_ENTRY_POINTS: dict[str, EntryPoint] = {}
_ENGINES: dict[type, EngineEntry] = {}


def entry_point(config: type, *, example: Callable[[], Call]) -> Callable[[F], F]:
    """Register an entry point with its config class and a small valid call."""
    def register(fn: F) -> F:
        name = fn.__name__
        if name in _ENTRY_POINTS:
            raise RuntimeError(f"entry point {name!r} registered twice")
        _ENTRY_POINTS[name] = EntryPoint(name, fn, config, example)
        return fn
    return register


def engine(*, examples: Mapping[str, Callable[[], Call]]) -> Callable[[E], E]:
    """Register an engine class with its examples (at least one)."""
    if not examples:
        raise ValueError("examples must name at least one constructor call")

    def register(cls: E) -> E:
        if cls in _ENGINES:
            raise RuntimeError(f"engine {cls.__name__} registered twice")
        _ENGINES[cls] = EngineEntry(cls, dict(examples))
        return cls
    return register


def entry_points() -> tuple[EntryPoint, ...]:
    """Every registered entry point, in registration order (importing :mod:`specdyn.sim`
    registers the built-in ones)."""
    return tuple(_ENTRY_POINTS.values())


def engines() -> tuple[EngineEntry, ...]:
    """Every registered engine class, in registration order (importing :mod:`specdyn.sim`
    registers the built-in ones)."""
    return tuple(_ENGINES.values())
