"""Checks applied where a value enters the library.

Every public function validates its arguments once, here, and raises a
``ValueError`` that names the argument and the allowed range before any work
starts. Nothing downstream re-checks.
"""

from __future__ import annotations

import functools
import inspect
import math
import re
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


def did_you_mean(value: Any, allowed: Iterable[Any]) -> str:
    """``" (did you mean 'gamma0_ratio'?)"`` for a misspelt name, the closest of
    ``allowed`` (:func:`difflib.get_close_matches`, case and ``-``/``_`` ignored);
    ``""`` when none is close."""
    import difflib

    options = [o for o in allowed if isinstance(o, str)]  # a None among them has no name

    def norm(x: str) -> str:
        return x.lower().replace("-", "_")

    by_norm = {norm(o): o for o in options}
    close = difflib.get_close_matches(norm(str(value)), list(by_norm), n=1, cutoff=0.6)
    return f" (did you mean {by_norm[close[0]]!r}?)" if close else ""


def choice(name: str, value: Any, allowed: Iterable[str]) -> str:
    """Return ``value`` if it is one of ``allowed``; else raise listing the valid names."""
    options = list(allowed)
    if value not in options:
        hint = did_you_mean(value, options) if isinstance(value, str) else ""
        raise ValueError(
            f"{name} must be one of {', '.join(map(repr, options))}; got {show(value)}{hint}")
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
    if arr.dtype == object and any(x is None for x in arr.flat):  # astype would make it NaN
        raise ValueError(f"{name} must be numeric, got None")
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

    Build one with :func:`Int`, :func:`Real`, :func:`Choice`, :func:`Subset`,
    :func:`Tuple`, :func:`Pattern` or :func:`Bool`, and
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
        ``choices``), ``"subset"`` (a name or a sequence of names, each in ``choices``),
        ``"tuple"`` (a sequence of values, each allowed by ``item``; returned as a
        tuple), ``"pattern"`` (a string matching ``pattern`` in full), ``"bool"``.
    lo, hi, lo_open, hi_open
        The range of ``"int"``/``"real"`` (``hi = inf`` for none); open or closed ends.
    choices
        The allowed values of ``"choice"``/``"subset"``.
    optional
        ``None`` is allowed too (and passed through).
    power_of_two
        ``"int"`` only: the value must be ``2**j``.
    item, min_len, max_len, increasing
        ``"tuple"`` only: the constraint of every entry, the allowed lengths, and
        whether the entries must increase strictly (a ``(lo, hi)`` range).
    pattern, what
        ``"pattern"`` only: the regular expression, and what it means in words.
    why
        Why the range is what it is (a size the method needs): added to the message.
    """

    kind: str
    lo: float = -_INF
    hi: float = _INF
    lo_open: bool = False
    hi_open: bool = False
    choices: tuple[Any, ...] = ()
    optional: bool = False
    power_of_two: bool = False
    item: Constraint | None = None
    min_len: int = 0
    max_len: float = _INF
    increasing: bool = False
    pattern: str = ""
    what: str = ""
    why: str = ""

    def check(self, name: str, value: Any) -> Any:
        """``value`` checked (and normalised), or a one-line ``ValueError`` naming ``name``."""
        if not self.why:
            return self._check(name, value)
        try:
            return self._check(name, value)
        except ValueError as err:
            raise ValueError(f"{err} ({self.why})") from None

    def _check(self, name: str, value: Any) -> Any:
        if value is None and self.optional:
            return None
        if self.kind == "tuple":
            return self._tuple(name, value)
        if self.kind == "pattern":
            if not (isinstance(value, str) and re.fullmatch(self.pattern, value)):
                raise ValueError(f"{name} must read {self.what}, got {show(value)}")
            return value
        if self.kind == "bool":
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"{name} must be true or false, got {show(value)}")
            return bool(value)
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

    def _tuple(self, name: str, value: Any) -> tuple[Any, ...]:
        assert self.item is not None
        what = f"a sequence of {self.item.describe()}"
        if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
            raise ValueError(f"{name} must be {what}, got {show(value)}")
        items = tuple(value)
        if not self.min_len <= len(items) <= self.max_len:
            raise ValueError(f"{name} must hold {self._lengths()} values, got {show(value)}")
        # an entry is named by its index, after the field: "sizes[1] must be ..."
        out = tuple(self.item.check(f"{name}[{i}]", x) for i, x in enumerate(items))
        if self.increasing and any(not a < b for a, b in zip(out[:-1], out[1:], strict=True)):
            raise ValueError(f"{name} must increase strictly, got {show(value)}")
        return out

    def _lengths(self) -> str:
        if self.min_len == self.max_len:
            return f"exactly {self.min_len}"
        if self.max_len < _INF:
            return f"{self.min_len} to {int(self.max_len)}"
        return f"at least {self.min_len}"

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
        if self.kind == "tuple":
            assert self.item is not None
            text = f"a sequence of {self._lengths()} values, each {self.item.describe()}"
            text += ", increasing strictly" if self.increasing else ""
        elif self.kind == "pattern":
            text = f"a string that reads {self.what}"
        elif self.kind == "bool":
            text = "true or false"
        elif self.kind in ("choice", "subset"):
            text = "one of " + ", ".join(map(repr, self.choices))
            text += " (or a sequence of them)" if self.kind == "subset" else ""
        else:
            left, right = ("(" if self.lo_open else "["), (")" if self.hi_open else "]")
            what = "a real number" if self.kind == "real" else "an integer"
            text = f"{what} in {left}{self.lo:g}, {self.hi:g}{right}"
            text += ", a power of two" if self.power_of_two else ""
        return text + (", or None" if self.optional else "")

    def example(self) -> Any:
        """One value this constraint allows (to build the bad tuples around a bad entry)."""
        if self.kind in ("choice", "subset"):
            return self.choices[0]
        if self.kind == "bool":
            return True
        if self.kind == "tuple":
            assert self.item is not None
            first = self.item.example()
            if not self.increasing:
                return (first,) * self.min_len
            return tuple(first + j for j in range(self.min_len))
        if self.kind == "pattern":
            raise ValueError(f"a pattern ({self.what}) has no generated example")
        if self.kind == "real":
            if self.lo > -_INF:
                return (self.lo + self.hi) / 2 if self.hi < _INF else self.lo + 1.0
            return min(0.0, self.hi - 1.0)
        n = int(self.lo) + int(self.lo_open) if self.lo > -_INF else int(min(0.0, self.hi - 1))
        return 1 << max(0, n - 1).bit_length() if self.power_of_two else n

    def _bad_tuples(self) -> list[Any]:
        assert self.item is not None
        bad: list[Any] = [3, "x"]  # not a sequence; a string is not a sequence of values
        if self.item.kind == "pattern":
            good: list[Any] = []  # a pattern's tuples: bad entries alone (no generated example)
            shapes = [[b] for b in self.item.bad_values()]
        else:
            good = list(self.example()) or [self.item.example()]
            shapes = [good[:-1] + [b] for b in self.item.bad_values()]  # one bad entry, last
            if self.increasing and len(good) >= 2:
                shapes.append(good[::-1])
        if self.min_len > 0:
            shapes.append(good[:self.min_len - 1] if good else [])
        if self.max_len < _INF and good:
            shapes.append(good + [good[-1]] * (int(self.max_len) + 1 - len(good)))
        return bad + [tuple(s) for s in shapes]

    def bad_values(self) -> list[Any]:
        """Values this constraint refuses: just outside each bound, a wrong type, NaN/inf."""
        bad: list[Any] = [] if self.optional else [None]
        if self.kind == "tuple":
            return bad + self._bad_tuples()
        if self.kind == "pattern":
            bad += [3, ["x"]]
            return bad + [s for s in ("", "x", "?:?:?", " ") if not re.fullmatch(self.pattern, s)]
        if self.kind == "bool":
            return bad + [1, 0, "true", 1.0]
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
        power_of_two: bool = False, strict: bool = False, why: str = "") -> Constraint:
    """An integer in ``[lo, hi]`` (``strict``: ``3.0`` refused, as for seeds)."""
    return Constraint("strict-int" if strict else "int", lo, hi, optional=optional,
                      power_of_two=power_of_two, why=why)


def Real(lo: float = -_INF, hi: float = _INF, *, lo_open: bool = False,  # noqa: N802
         hi_open: bool = False, optional: bool = False, why: str = "") -> Constraint:
    """A finite real number in the range ``lo..hi`` (ends open or closed)."""
    return Constraint("real", lo, hi, lo_open, hi_open, optional=optional, why=why)


def Choice(*choices: Any, optional: bool = False) -> Constraint:  # noqa: N802
    """One of ``choices``."""
    return Constraint("choice", choices=tuple(choices), optional=optional)


def Subset(*choices: Any) -> Constraint:  # noqa: N802
    """A name of ``choices`` or a sequence of them (returned as a tuple)."""
    return Constraint("subset", choices=tuple(choices))


def Tuple(item: Constraint, *, min_len: int = 0, max_len: float = _INF,  # noqa: N802
          length: int | None = None, increasing: bool = False, why: str = "") -> Constraint:
    """A sequence (not a string) of ``min_len..max_len`` values (or exactly ``length``),
    each allowed by ``item``, strictly increasing if asked; returned as a tuple."""
    if length is not None:
        min_len, max_len = length, length
    return Constraint("tuple", item=item, min_len=min_len, max_len=max_len,
                      increasing=increasing, why=why)


def Pattern(pattern: str, what: str) -> Constraint:  # noqa: N802
    """A string that ``pattern`` matches in full; ``what`` says what it reads in words."""
    return Constraint("pattern", pattern=pattern, what=what)


def Bool() -> Constraint:  # noqa: N802
    """``True`` or ``False`` (``1``, ``"true"`` refused)."""
    return Constraint("bool")


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
