"""Checks applied where a value enters the library.

Every public function validates its arguments once, where they enter, and raises a
``ValueError`` that names the argument and the allowed range before any work starts.
Nothing downstream re-checks. Three modules, one concept each:

- :mod:`~specdyn._validate.checks`: the checks of one value (:func:`positive`,
  :func:`choice`, :func:`real_array`, ...);
- :mod:`~specdyn._validate.constraint`: a parameter's allowed values declared as data
  (:class:`Constraint`: :func:`Int`, :func:`Real`, :func:`Choice`, :func:`Subset`,
  :func:`Tuple`, :func:`Pattern`, :func:`Bool`, :func:`Instance`, and :func:`Free` for a
  parameter that takes any value, said explicitly);
- :mod:`~specdyn._validate.declare`: attaching them to a function (:func:`constrained`)
  or a dataclass's fields (:func:`constrained_fields`), and reading them back
  (:func:`constraints_of`).
"""

from specdyn._validate.checks import (
    broadcastable,
    choice,
    did_you_mean,
    in_range,
    integer,
    nonnegative,
    positive,
    positive_int,
    real_array,
    show,
)
from specdyn._validate.constraint import (
    NONNEGATIVE,
    POSITIVE,
    SEED,
    SIZE,
    Bool,
    Choice,
    Constraint,
    Free,
    Instance,
    Int,
    Pattern,
    Real,
    Subset,
    Tuple,
)
from specdyn._validate.declare import constrained, constrained_fields, constraints_of

__all__ = ["NONNEGATIVE", "POSITIVE", "SEED", "SIZE", "Bool", "Choice", "Constraint", "Free",
           "Instance", "Int", "Pattern", "Real", "Subset", "Tuple", "broadcastable", "choice",
           "constrained", "constrained_fields", "constraints_of", "did_you_mean", "in_range",
           "integer", "nonnegative", "positive", "positive_int", "real_array", "show"]
