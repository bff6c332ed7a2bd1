"""Declared constraints: the allowed values of one parameter, stated once as data.

A :class:`Constraint` checks a value (:meth:`Constraint.check`, the one-line
``ValueError`` of :mod:`specdyn._validate.checks`) and names the values it refuses
(:meth:`Constraint.bad_values`), from which the bad-input tests are generated. Build one
with :func:`Int`, :func:`Real`, :func:`Choice`, :func:`Subset`, :func:`Tuple`,
:func:`Pattern`, :func:`Bool`, :func:`Instance` or :func:`Free`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from specdyn._validate.checks import choice, did_you_mean, in_range, nonnegative, positive, show

_INF = math.inf


@dataclass(frozen=True)
class Constraint:
    """The allowed values of one parameter, declared once; checks it and names its bad values.

    Build one with :func:`Int`, :func:`Real`, :func:`Choice`, :func:`Subset`,
    :func:`Tuple`, :func:`Pattern`, :func:`Bool`, :func:`Instance` or :func:`Free`, and
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
        tuple), ``"pattern"`` (a string matching ``pattern`` in full), ``"bool"``,
        ``"instance"`` (an instance of ``types`` or one of the names ``choices``) and
        ``"free"`` (any value: a parameter whose values are free, said explicitly).
    lo, hi, lo_open, hi_open
        The range of ``"int"``/``"real"`` (``hi = inf`` for none); open or closed ends.
    choices
        The allowed values of ``"choice"``/``"subset"``, the names of ``"instance"``.
    types
        ``"instance"`` only: the allowed classes.
    optional
        ``None`` is allowed too (and passed through).
    power_of_two
        ``"int"`` only: the value must be ``2**j``.
    item, min_len, max_len, increasing
        ``"tuple"`` only: the constraint of every entry, the allowed lengths, and
        whether the entries must increase strictly (a ``(lo, hi)`` range).
    pattern, what
        ``"pattern"`` only: the regular expression, and what it means in words;
        ``"free"``: what the value is, in words.
    why
        Why the range is what it is (a size the method needs): added to the message.
    """

    kind: str
    lo: float = -_INF
    hi: float = _INF
    lo_open: bool = False
    hi_open: bool = False
    choices: tuple[Any, ...] = ()
    types: tuple[type, ...] = ()
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
        if self.kind == "free":
            return value
        if self.kind == "instance":
            return self._instance(name, value)
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

    def _instance(self, name: str, value: Any) -> Any:
        if isinstance(value, self.types) or (isinstance(value, str) and value in self.choices):
            return value
        hint = did_you_mean(value, self.choices) if isinstance(value, str) else ""
        raise ValueError(f"{name} must be {self._instance_words()}; got {show(value)}{hint}")

    def _instance_words(self) -> str:
        kinds = " or ".join(("an " if t.__name__[0] in "AEIOUaeiou" else "a ") + t.__name__
                            for t in self.types)
        if not self.choices:
            return kinds
        return f"one of {', '.join(map(repr, self.choices))} or {kinds}"

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
        elif self.kind == "free":
            text = self.what or "any value"
        elif self.kind == "instance":
            text = self._instance_words()
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
        if self.kind in ("choice", "subset") or (self.kind == "instance" and self.choices):
            return self.choices[0]
        if self.kind in ("free", "instance"):
            raise ValueError(f"{self.describe()}: no generated example")
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
        if self.kind == "free":
            return []  # free: nothing to refuse
        bad: list[Any] = [] if self.optional else [None]
        if self.kind == "instance":
            return bad + [b for b in (3, "not-a-choice") if b not in self.choices]
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
          length: int | None = None, increasing: bool = False, optional: bool = False,
          why: str = "") -> Constraint:
    """A sequence (not a string) of ``min_len..max_len`` values (or exactly ``length``),
    each allowed by ``item``, strictly increasing if asked; returned as a tuple."""
    if length is not None:
        min_len, max_len = length, length
    return Constraint("tuple", item=item, min_len=min_len, max_len=max_len,
                      increasing=increasing, optional=optional, why=why)


def Pattern(pattern: str, what: str) -> Constraint:  # noqa: N802
    """A string that ``pattern`` matches in full; ``what`` says what it reads in words."""
    return Constraint("pattern", pattern=pattern, what=what)


def Bool() -> Constraint:  # noqa: N802
    """``True`` or ``False`` (``1``, ``"true"`` refused)."""
    return Constraint("bool")


def Instance(*types: type, names: Iterable[str] = (),  # noqa: N802
             optional: bool = False) -> Constraint:
    """An instance of one of ``types``, or one of the ``names`` (an activation: a name of
    ``ACTIVATIONS`` or an ``Activation``); returned as given."""
    return Constraint("instance", choices=tuple(names), types=tuple(types), optional=optional)


def Free(what: str) -> Constraint:  # noqa: N802
    """Any value: a parameter whose values are free (a callable, a schedule checked where it
    is read), declared so, with ``what`` it is in words."""
    return Constraint("free", what=what)


POSITIVE = Real(0.0, lo_open=True)
"""A finite real ``> 0``."""
NONNEGATIVE = Real(0.0)
"""A finite real ``>= 0``."""
SIZE = Int(1)
"""An integer ``>= 1`` (a size: ``D``, ``P``, ``N``, ``M``, ``B``, steps)."""
SEED = Int(0)
"""An integer ``>= 0`` (a run seed)."""
