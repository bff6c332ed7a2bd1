"""Declaring constraints on a function's parameters or a dataclass's fields.

:func:`constrained` (a function, an engine's constructor) and :func:`constrained_fields`
(a config, a setting) attach :class:`~specdyn._validate.constraint.Constraint` s, checked
on every call or construction before any work; :func:`constraints_of` reads them back
(the bad-input tests are generated from them).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from specdyn._validate.constraint import Constraint

P = ParamSpec("P")
R = TypeVar("R")


def constrained(**spec: Constraint) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Declare the constraints of a function's parameters; they are checked on every call.

    The wrapped function receives the checked values (:meth:`Constraint.check`),
    before any of its own work; the declaration is kept as ``fn.__constraints__``
    (a name -> :class:`Constraint` dict), from which the bad-input tests are made.
    Cross-parameter rules (``B <= M``, ``precision`` needs CUDA) stay in the body.
    """
    def wrap(fn: Callable[P, R]) -> Callable[P, R]:
        sig = inspect.signature(fn)
        unknown = sorted(set(spec) - set(sig.parameters))
        if unknown:
            raise TypeError(f"{fn.__qualname__}: constraints for unknown parameters {unknown}")

        @functools.wraps(fn)
        def checked(*args: P.args, **kwargs: P.kwargs) -> R:
            bound = sig.bind(*args, **kwargs)
            for name, rule in spec.items():
                if name in bound.arguments:
                    bound.arguments[name] = rule.check(name, bound.arguments[name])
                else:  # the default, checked too: a declaration that refuses it is a bug
                    rule.check(name, sig.parameters[name].default)
            return fn(*bound.args, **bound.kwargs)

        checked.__constraints__ = dict(spec)  # type: ignore[attr-defined]
        return checked

    return wrap


C = TypeVar("C", bound=type)


def constrained_fields(**spec: Constraint) -> Callable[[C], C]:
    """Declare the constraints of a dataclass's fields (a config, a setting).

    Apply it *below* ``@dataclass(frozen=True)`` (so the generated ``__init__``
    calls ``__post_init__``): every instance checks the declared fields first,
    storing the normalised values (:meth:`Constraint.check`), then runs the
    class's own ``__post_init__`` (cross-field rules; a class without one runs its
    base's, so a subclass of a declared config keeps the base's checks). The
    declaration is kept as ``cls.__constraints__``, from which the bad-input tests
    are made, as for :func:`constrained`; :func:`constraints_of` merges those of the
    bases (a subclass may redeclare a field, e.g. a larger minimum ``D``).
    """
    def wrap(cls: C) -> C:
        # the class's annotated names, and its bases' (it may not be a dataclass yet)
        fields = {n for base in cls.__mro__ for n in inspect.get_annotations(base)}
        unknown = sorted(set(spec) - fields)
        if unknown:
            raise TypeError(f"{cls.__qualname__}: constraints for unknown fields {unknown}")
        own = cls.__dict__.get("__post_init__")

        def __post_init__(self: Any) -> None:  # noqa: N807
            for name, rule in spec.items():
                object.__setattr__(self, name, rule.check(name, getattr(self, name)))
            if own is not None:
                own(self)
            else:
                inherited = getattr(super(cls, self), "__post_init__", None)
                if inherited is not None:
                    inherited()

        cls.__post_init__ = __post_init__  # type: ignore[attr-defined]
        cls.__constraints__ = dict(spec)  # type: ignore[attr-defined]
        return cls

    return wrap


def constraints_of(obj: Any) -> dict[str, Constraint]:
    """The declared constraints of a function, of a class's ``__init__``, or of a
    class's fields (:func:`constrained_fields`); empty if none."""
    if isinstance(obj, type):
        merged: dict[str, Constraint] = {}
        for base in reversed(obj.__mro__):  # a subclass's declaration wins over its base's
            merged.update(vars(base).get("__constraints__", {}))
        if merged:
            return merged
        obj = vars(obj).get("__init__")
    return dict(getattr(obj, "__constraints__", {}))
