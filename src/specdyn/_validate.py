"""Checks applied where a value enters the library.

Every public function validates its arguments once, here, and raises a
``ValueError`` that names the argument and the allowed range before any work
starts. Nothing downstream re-checks.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

import numpy as np
from numpy.typing import ArrayLike


def positive(name: str, value: Any) -> float:
    """Return ``value`` as a float, or raise if it is not finite and > 0."""
    x = _real_scalar(name, value)
    if not x > 0:
        raise ValueError(f"{name} must be > 0 (allowed range (0, inf)), got {show(value)}")
    return x


def nonnegative(name: str, value: Any) -> float:
    """Return ``value`` as a float, or raise if it is not finite and >= 0."""
    x = _real_scalar(name, value)
    if not x >= 0:
        raise ValueError(f"{name} must be >= 0 (allowed range [0, inf)), got {show(value)}")
    return x


def in_range(
    name: str, value: Any, lo: float, hi: float, *, lo_open: bool = False, hi_open: bool = False
) -> float:
    """Return ``value`` as a float, or raise if it is outside [lo, hi] (ends as given)."""
    x = _real_scalar(name, value)
    ok_lo = x > lo if lo_open else x >= lo
    ok_hi = x < hi if hi_open else x <= hi
    if not (ok_lo and ok_hi):
        left = "(" if lo_open else "["
        right = ")" if hi_open else "]"
        raise ValueError(f"{name} must lie in {left}{lo}, {hi}{right}, got {show(value)}")
    return x


def positive_int(name: str, value: Any, *, minimum: int = 1) -> int:
    """Return ``value`` as an int, or raise if it is not an integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be an integer >= {minimum}, got {show(value)}")
    if int(value) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {show(value)}")
    return int(value)


def integer(name: str, value: Any) -> int:
    """Return ``value`` as an int, or raise if it is not an integer (``bool`` and ``3.0`` refused).

    For seeds, where any integer is allowed and a float is a mistake.
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {show(value)}")
    return int(value)


def choice(name: str, value: Any, allowed: Iterable[str]) -> str:
    """Return ``value`` if it is one of ``allowed``; else raise listing the valid names."""
    options = list(allowed)
    if value not in options:
        raise ValueError(
            f"{name} must be one of {', '.join(map(repr, options))}; got {show(value)}")
    return str(value)


def real_array(name: str, value: ArrayLike, *, lo: float | None = None,
               allow_inf: bool = False, positive: bool = False) -> np.ndarray:
    """Return ``value`` as a float64 array, checking reality, finiteness and a lower bound
    (``lo``: every entry ``>= lo``; ``positive``: every entry ``> 0``)."""
    arr = np.asarray(value)
    if arr.size == 0:
        raise ValueError(f"{name} must be non-empty")
    if np.iscomplexobj(arr):
        raise ValueError(f"{name} must be real, got a complex array")
    try:
        arr = arr.astype(np.float64, copy=False)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be numeric: {err}") from None
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not contain NaN")
    if not allow_inf and np.isinf(arr).any():
        raise ValueError(f"{name} must be finite")
    if lo is not None and (arr < lo).any():
        bad = arr[arr < lo].flat[0]
        raise ValueError(f"{name} must be >= {lo} everywhere, got {show(bad)}")
    if positive and (arr <= 0).any():
        bad = arr[arr <= 0].flat[0]
        raise ValueError(f"{name} must be > 0 everywhere (allowed range (0, inf)), "
                         f"got {show(bad)}")
    return arr


def show(value: Any) -> str:
    """``value`` for a message: plain numbers (``0.5``, not ``np.float64(0.5)``)."""
    if isinstance(value, np.generic):
        value = value.item()
    return repr(value)


def broadcastable(**arrays: np.ndarray) -> None:
    """Raise a ``ValueError`` naming the arguments if they do not broadcast together."""
    try:
        np.broadcast_shapes(*(a.shape for a in arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k}{v.shape}" for k, v in arrays.items())
        raise ValueError(f"arguments have shapes that do not broadcast: {shapes}") from None


def _real_scalar(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a real number, got {show(value)}")
    x = float(value)
    if math.isnan(x) or math.isinf(x):
        raise ValueError(f"{name} must be finite, got {show(value)}")
    return x


# ---------------------------------------------------------------------------- declared constraints


_INF = math.inf


@dataclass(frozen=True)
class Constraint:
    """The allowed values of one parameter, declared once; checks it and names its bad values.

    Build one with :func:`Int`, :func:`Real`, :func:`Choice` or :func:`Subset`, and
    attach them to a function with :func:`constrained` (or call :meth:`check`
    in a config's ``__post_init__``). :meth:`check` returns the value (ints as
    ``int``, reals as ``float``) or raises the one-line ``ValueError`` of the
    checks above, naming the parameter and the allowed range; :meth:`bad_values`
    lists values just outside each bound, of a wrong type, NaN and infinities,
    from which the bad-input tests are generated.

    Attributes
    ----------
    kind
        ``"int"`` (integral floats such as ``3.0`` accepted), ``"strict-int"``
        (only ``int``: seeds), ``"real"`` (finite), ``"choice"`` (one of
        ``choices``), ``"subset"`` (a name or a sequence of names, each in ``choices``).
    lo, hi, lo_open, hi_open
        The range of ``"int"``/``"real"`` (``hi = inf`` for none); open or closed ends.
    choices
        The allowed values of ``"choice"``/``"subset"``.
    optional
        ``None`` is allowed too (and passed through).
    power_of_two
        ``"int"`` only: the value must be ``2**j``.
    """

    kind: str
    lo: float = -_INF
    hi: float = _INF
    lo_open: bool = False
    hi_open: bool = False
    choices: tuple[Any, ...] = ()
    optional: bool = False
    power_of_two: bool = False

    def check(self, name: str, value: Any) -> Any:
        """``value`` checked (and normalised), or a one-line ``ValueError`` naming ``name``."""
        if value is None and self.optional:
            return None
        if self.kind == "choice":
            if value not in self.choices:
                choice(name, value, self.choices)
            return value
        if self.kind == "subset":
            items = (value,) if isinstance(value, str) else value
            try:
                items = tuple(items)
            except TypeError:
                raise ValueError(f"{name} must be one of {', '.join(map(repr, self.choices))} "
                                 f"or a sequence of them; got {show(value)}") from None
            for item in items:
                choice(name, item, self.choices)
            return items
        if self.kind in ("int", "strict-int"):
            return self._int(name, value)
        if self.lo == 0 and self.hi == _INF and not self.hi_open:
            return positive(name, value) if self.lo_open else nonnegative(name, value)
        return in_range(name, value, self.lo, self.hi, lo_open=self.lo_open,
                        hi_open=self.hi_open)

    def _int(self, name: str, value: Any) -> int:
        lo = int(self.lo + 1 if self.lo_open else self.lo) if self.lo > -_INF else None
        what = f"an integer >= {lo}" if lo is not None else "an integer"
        n = value
        if self.kind == "int" and isinstance(value, (float, np.floating)) \
                and float(value).is_integer():
            n = int(value)  # 3.0 is the integer 3 (a strict int refuses it)
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) \
                or (lo is not None and n < lo):
            raise ValueError(f"{name} must be {what}, got {show(value)}")
        n = int(n)
        if self.hi < _INF:
            hi = int(self.hi - 1 if self.hi_open else self.hi)
            if n > hi:
                low = "" if lo is None else f"{lo}, "
                raise ValueError(f"{name} must be an integer in [{low}{hi}], got {show(value)}")
        if self.power_of_two and (n < 1 or n & (n - 1)):
            raise ValueError(f"{name} must be a power of two (1, 2, 4, ...), got {show(value)}")
        return n

    def describe(self) -> str:
        """The allowed values in words (for docs and reports)."""
        if self.kind in ("choice", "subset"):
            text = "one of " + ", ".join(map(repr, self.choices))
            text += " (or a sequence of them)" if self.kind == "subset" else ""
        else:
            left, right = ("(" if self.lo_open else "["), (")" if self.hi_open else "]")
            what = "a real number" if self.kind == "real" else "an integer"
            text = f"{what} in {left}{self.lo:g}, {self.hi:g}{right}"
            text += ", a power of two" if self.power_of_two else ""
        return text + (", or None" if self.optional else "")

    def bad_values(self) -> list[Any]:
        """Values this constraint refuses: just outside each bound, a wrong type, NaN/inf."""
        bad: list[Any] = [] if self.optional else [None]
        if self.kind in ("choice", "subset"):
            bad += ["not-a-choice", 3]
            return [b for b in bad if b not in self.choices]
        if self.kind in ("int", "strict-int"):
            bad += ["1", True, 2.5, float("nan")]
            if self.kind == "strict-int":
                bad.append(2.0)
            if self.lo > -_INF:
                bad.append(int(self.lo) if self.lo_open else int(self.lo) - 1)
            if self.hi < _INF:
                bad.append(int(self.hi) if self.hi_open else int(self.hi) + 1)
            if self.power_of_two:
                bad.append(max(3, int(self.lo) + 3) | 1)
            return bad
        bad += ["1", True, float("nan"), _INF, -_INF]
        if self.lo > -_INF:
            bad.append(self.lo if self.lo_open else float(np.nextafter(self.lo, -_INF)))
        if self.hi < _INF:
            bad.append(self.hi if self.hi_open else float(np.nextafter(self.hi, _INF)))
        return bad


def Int(lo: float = -_INF, hi: float = _INF, *, optional: bool = False,  # noqa: N802
        power_of_two: bool = False, strict: bool = False) -> Constraint:
    """An integer in ``[lo, hi]`` (``strict``: ``3.0`` refused, as for seeds)."""
    return Constraint("strict-int" if strict else "int", lo, hi, optional=optional,
                      power_of_two=power_of_two)


def Real(lo: float = -_INF, hi: float = _INF, *, lo_open: bool = False,  # noqa: N802
         hi_open: bool = False, optional: bool = False) -> Constraint:
    """A finite real number in the range ``lo..hi`` (ends open or closed)."""
    return Constraint("real", lo, hi, lo_open, hi_open, optional=optional)


def Choice(*choices: Any, optional: bool = False) -> Constraint:  # noqa: N802
    """One of ``choices``."""
    return Constraint("choice", choices=tuple(choices), optional=optional)


def Subset(*choices: Any) -> Constraint:  # noqa: N802
    """A name of ``choices`` or a sequence of them (returned as a tuple)."""
    return Constraint("subset", choices=tuple(choices))


POSITIVE = Real(0.0, lo_open=True)
"""A finite real ``> 0``."""
NONNEGATIVE = Real(0.0)
"""A finite real ``>= 0``."""
SIZE = Int(1)
"""An integer ``>= 1`` (a size: ``D``, ``P``, ``N``, ``M``, ``B``, steps)."""
SEED = Int(0)
"""An integer ``>= 0`` (a run seed)."""

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
    class's own ``__post_init__`` (cross-field rules). The declaration is kept as
    ``cls.__constraints__``, from which the bad-input tests are made, as for
    :func:`constrained`.
    """
    def wrap(cls: C) -> C:
        own = cls.__dict__.get("__post_init__")

        def __post_init__(self: Any) -> None:  # noqa: N807
            for name, rule in spec.items():
                object.__setattr__(self, name, rule.check(name, getattr(self, name)))
            if own is not None:
                own(self)

        cls.__post_init__ = __post_init__  # type: ignore[attr-defined]
        cls.__constraints__ = dict(spec)  # type: ignore[attr-defined]
        return cls

    return wrap


def constraints_of(obj: Any) -> dict[str, Constraint]:
    """The declared constraints of a function, of a class's ``__init__``, or of a
    class's fields (:func:`constrained_fields`); empty if none."""
    if isinstance(obj, type):
        declared = vars(obj).get("__constraints__")
        if declared is not None:
            return dict(declared)
        obj = vars(obj).get("__init__")
    return dict(getattr(obj, "__constraints__", {}))
