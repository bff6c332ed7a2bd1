"""Named, configured experiments and the registry the CLI and sweeps read.

An experiment is a function ``run(config, out_dir) -> ExperimentResult`` with a
typed config dataclass whose defaults are the quick, laptop-sized version, and
optionally a ``full()`` constructor for the paper-sized version. Modules
register their experiments with :func:`register`; nothing here knows about any
particular experiment. The experiments that ship with specdyn
(:mod:`specdyn.experiments`), and those of any installed package, are found
through the ``specdyn.experiments`` entry-point group the first time the
registry is read, so the run machinery never imports them.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specdyn._experiment_index import builtin_names as index_names
from specdyn._validate import did_you_mean
from specdyn.runs.claims import Claim


@dataclass
class ExperimentResult:
    """What an experiment wrote, and the few numbers that summarise it."""

    name: str
    out_dir: Path
    figures: list[Path] = field(default_factory=list)
    tables: list[Path] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    claims: list[Claim] = field(default_factory=list)


@dataclass(frozen=True)
class Measured:
    """The columns of one table an experiment measures, and the columns that group them.

    ``columns`` are the numbers the run measured (or computed) and its claims
    read: a wrong result would change them. ``by`` are the columns whose values
    name one quantity (``"quantity"``, ``"panel"``, a regime); within one group
    the measured values are comparable, so a test may replace them by their
    median or shuffle them inside the group and expect the claims to fail.
    Columns not named (the axes ``k``, ``t``, the config's grid) stay as written.
    ``where`` restricts the measured rows to those whose column holds one of the
    values given (``{"quantity": ("preact",)}``: the simulated rows, not the
    theory written beside them); empty, every row is measured.
    """

    columns: tuple[str, ...]
    by: tuple[str, ...] = ()
    where: Mapping[str, tuple[str, ...]] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if not self.columns:
            raise ValueError("Measured.columns must name at least one measured column")
        if set(self.columns) & set(self.by):
            raise ValueError(f"Measured: a column cannot be both measured and a group: "
                             f"{sorted(set(self.columns) & set(self.by))}")


#: The classes of plausible mistake a referee tries on any experiment where they can occur:
#: key -> what the class is. Each experiment registers a wrong model of every class that
#: applies to it (:attr:`WrongModel.kind`) and says why the others do not
#: (``register(..., wrong_na={kind: reason})``).
WRONG_KINDS: dict[str, str] = {
    "is-theory": "a simulation that returns its own theory (or the exact reference)",
    "fluctuation-size": "finite-size errors, spreads or distances of the right law but the "
                        "wrong level",
    "temperature": "a wrong temperature or noise level",
    "clock": "a run, or a theory, at another speed (a clock off by a constant factor)",
    "convention": "a convention error inside a theory function that the figure and the "
                  "claims both evaluate",
    "attribution": "a wrong attribution: a quantity read at the wrong step, a rescaling that "
                   "depends on width, a held-out quantity that is really the training one",
    "wrong-inputs": "theory from the wrong inputs: a mis-ordered or mis-normalised spectrum",
}


@dataclass(frozen=True)
class WrongModel:
    """A plausible wrong answer that an experiment's expected claims must catch.

    Not a constant or shuffled table (which any claim should fail), but the output a
    referee would fear: a neighbouring equation of the paper, a scale or exponent error
    the size of a real mistake, a transient of the wrong height or timing, a boundary
    shifted by a few tenths of a decade, a network that never learns, a rank-two update.
    It is built from the experiment's own finished folder: ``apply(config, folder)``
    rewrites the tables in ``folder`` (a scratch copy of a real run) in place into what
    the wrong model would have written; :func:`specdyn.runs.wrong.judge` then checks the
    experiment's claims on it, and at least one claim expected to hold must fail.

    Attributes
    ----------
    name
        Short identifier, unique within the experiment, e.g. ``"sim x1.25"``.
    what
        The mistake in one line a reader understands without the code, e.g.
        ``"every simulated eigenvalue 1.25 times too large (a scale error)"``.
    apply
        ``apply(config, folder)``: rewrite ``folder``'s tables into the wrong model's
        output (:func:`specdyn.runs.wrong.edit_table` reads, changes and writes one).
    catches
        The keys of the claims expected to catch it (documentation, checked by the
        test: each named claim must fail on it). Empty: any expected claim may.
    kind
        The class of mistake it stands for, a key of :data:`WRONG_KINDS` (a simulation
        that is its theory, fluctuations of the wrong size, a wrong clock...). Empty for
        a mistake of none of those classes (a neighbouring equation, a scale error).
    patch
        Functions replaced while the wrong model's tables are written and its claims
        checked: ``{"specdyn.theory.linear.rho": wrong_rho}`` (a dotted target, as
        :func:`unittest.mock.patch` names it: where the claims look the name up). For a
        convention error inside a theory function that the figure and the claims both
        call: only a claim that also evaluates it independently can catch it.
    """

    name: str
    what: str
    apply: Callable[[Any, Path], None]
    catches: tuple[str, ...] = ()
    kind: str = ""
    patch: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if not self.name.strip() or not self.what.strip():
            raise ValueError("WrongModel: name and what must say what the mistake is")
        if self.kind and self.kind not in WRONG_KINDS:
            raise ValueError(f"WrongModel {self.name!r}: kind {self.kind!r} is not one of "
                             f"{', '.join(WRONG_KINDS)}")


RunFn = Callable[[Any, Path], ExperimentResult]
#: ``claims(config, folder)``: the experiment's claims, computed from the tables it
#: wrote into ``folder`` (and its config) alone, so that they can be checked again on
#: any finished folder (``benchmarks/full_claims.py``) and fed a wrong table in tests.
ClaimsFn = Callable[[Any, Path], list[Claim]]


@dataclass(frozen=True)
class Experiment:
    """A registered experiment."""

    name: str
    description: str
    config_cls: type
    run: RunFn
    full: Callable[[], Any] | None = None
    claims: ClaimsFn | None = None
    #: table file name (in the run's folder) -> what it measures (:class:`Measured`)
    measured: Mapping[str, Measured] = field(default_factory=dict, hash=False)
    #: plausible wrong answers its expected claims must catch (:class:`WrongModel`)
    wrong_models: tuple[WrongModel, ...] = ()
    #: the :data:`WRONG_KINDS` that cannot occur in this experiment -> why not
    wrong_na: Mapping[str, str] = field(default_factory=dict, hash=False)

    def config(self, full: bool = False) -> Any:
        """The quick default config, or the full-size one when ``full``."""
        if full:
            if self.full is None:
                raise ValueError(f"experiment {self.name!r} has no --full variant")
            return self.full()
        return self.config_cls()


_REGISTRY: dict[str, Experiment] = {}
_PLUGINS_LOADED = False

#: The entry-point group whose modules register experiments when imported.
ENTRY_POINT_GROUP = "specdyn.experiments"


def _load_plugins() -> None:
    """Import every module declared in the ``specdyn.experiments`` entry-point group, once."""
    global _PLUGINS_LOADED
    if _PLUGINS_LOADED:
        return
    _PLUGINS_LOADED = True  # first: a plugin that reads the registry must not recurse
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        ep.load()


def register(name: str, description: str, config_cls: type,
             full: Callable[[], Any] | None = None,
             claims: ClaimsFn | None = None,
             measured: Mapping[str, Measured] | None = None,
             wrong_models: Sequence[WrongModel] = (),
             wrong_na: Mapping[str, str] | None = None) -> Callable[[RunFn], RunFn]:
    """Decorator registering ``run`` under ``name``.

    ``claims``, when given, computes the experiment's claims from the folder the
    run wrote; :func:`run_experiment` then calls it on that folder, so the claims
    are checked on exactly the tables a reader gets. ``measured`` declares, per
    table file the claims read, its measured columns and the columns grouping
    them (:class:`Measured`): what a wrong result would change, so that a test
    can feed the claims a constant or shuffled table and see them fail.
    ``wrong_models`` are the plausible wrong answers the claims must catch
    (:class:`WrongModel`; ``tests/experiments/test_wrong_models.py`` feeds each one);
    ``wrong_na`` names the classes of mistake (:data:`WRONG_KINDS`) that cannot occur in
    this experiment, each with the reason.
    """
    wrong = tuple(wrong_models)
    dup = sorted({w.name for w in wrong if [x.name for x in wrong].count(w.name) > 1})
    if dup:
        raise ValueError(f"experiment {name!r}: wrong models named twice: {dup}")
    na = dict(wrong_na or {})
    bad = sorted(set(na) - set(WRONG_KINDS)) + sorted(k for k, why in na.items()
                                                     if not str(why).strip())
    if bad:
        raise ValueError(f"experiment {name!r}: wrong_na must map kinds of WRONG_KINDS to a "
                         f"reason; bad: {bad}")
    both = sorted(set(na) & {w.kind for w in wrong})
    if both:
        raise ValueError(f"experiment {name!r}: kinds both registered and not applicable: "
                         f"{both}")

    def deco(run: RunFn) -> RunFn:
        if name in _REGISTRY:
            raise RuntimeError(f"experiment {name!r} registered twice")
        _REGISTRY[name] = Experiment(name, description, config_cls, run, full, claims,
                                     dict(measured or {}), wrong, na)
        return run

    return deco


def get(name: str) -> Experiment:
    """The experiment called ``name``; a ``ValueError`` lists the valid names otherwise."""
    _load_plugins()
    if name not in _REGISTRY:
        raise ValueError(f"unknown experiment {name!r}{did_you_mean(name, names())}; "
                         f"valid names: {', '.join(names())}")
    return _REGISTRY[name]


def names() -> list[str]:
    """Registered experiment names: the built-in ones in run order, then the others.

    The built-in ones (:func:`builtin_names`) come in the order ``specdyn reproduce``
    runs them (:func:`specdyn._experiment_index.run_order`: the core paper's figures
    first); those of plugins and users follow in registration order.
    """
    builtin = builtin_names()
    return builtin + [n for n in _REGISTRY if n not in builtin]


def builtin_names() -> list[str]:
    """Names of the experiments that ship with specdyn (not ones a user registered), in
    run order (:func:`specdyn._experiment_index.builtin_names`: read from the source)."""
    _load_plugins()
    shipped = [n for n, e in _REGISTRY.items()
               if getattr(e.run, "__module__", "").startswith("specdyn.experiments.")]
    # the order read from the source (not the order the modules happened to be imported in)
    order = {name: i for i, name in enumerate(index_names())}
    return sorted(shipped, key=lambda n: order.get(n, len(order)))


def experiment_named(name: str, module: str | None = None) -> Any:
    """The registered experiment ``name``, importing ``module`` first (it registers it)."""
    if module:
        try:
            importlib.import_module(module)
        except ImportError as err:
            raise ValueError(f"module {module!r} (which should register {name!r}) "
                             f"cannot be imported: {err}") from None
    return get(name)


def replace_config(cfg: Any, **changes: Any) -> Any:
    """A copy of ``cfg`` with fields changed (validated again by the dataclass)."""
    return dataclasses.replace(cfg, **changes)
