"""The configs of the entry points: each a checked dataclass, built from the keywords.

Every public entry point of :mod:`specdyn.sim` is ``config -> (engine, recorder) ->``
:func:`~specdyn.sim.loop.run`: its keywords become a frozen config dataclass (a
subclass of :class:`SimConfig`) whose fields declare their allowed values
(:func:`specdyn._validate.constrained_fields`), so a bad value is refused before any
work with one line naming it; the config's docstring is where each parameter is
documented, once. :meth:`SimConfig.of` is the one way keywords become a config: the
config's fields, plus the :class:`~specdyn.sim.options.RunOptions` shorthands
(``seed``, ``dtype``, ``device``, ``progress``, ``checkpoints``) and ``options``,
merged into the config's ``options`` (:func:`~specdyn.sim.options.run_options`);
:meth:`SimConfig.of_call` reads them from an entry point's ``locals()``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from specdyn import _validate as v
from specdyn.sim.options import SHORTHANDS, RunOptions, run_options

__all__ = ["SimConfig"]

C = TypeVar("C", bound="SimConfig")


@dataclass(frozen=True, kw_only=True)
@v.constrained_fields(options=v.Instance(RunOptions))
class SimConfig:
    """What every entry point's config holds besides its own fields: the run's options.

    Attributes
    ----------
    options
        The :class:`~specdyn.sim.options.RunOptions` (seed, dtype, device, progress,
        checkpoints, and the divergence check's ``check_every`` and
        ``divergence_factor``; ``None`` there: the engine's
        :class:`~specdyn.sim.options.EngineDefaults`). The entry points also take its
        fields ``seed``, ``dtype``, ``device``, ``progress`` and ``checkpoints`` as
        keywords (not both ways).
    """

    options: RunOptions = field(default_factory=RunOptions)

    @classmethod
    def of(cls: type[C], given: dict[str, Any], *, entry: str) -> C:
        """The config of an entry point's keywords ``given``: the config's fields and the
        options' shorthands. An unknown or missing name is one ``ValueError`` line naming
        it, before any work; the declared constraints check the values."""
        fields = {f.name: f for f in dataclasses.fields(cls)}
        unknown = sorted(set(given) - set(fields) - set(SHORTHANDS))
        if unknown:
            names = ", ".join(sorted(set(fields) | set(SHORTHANDS)))
            raise ValueError(f"{unknown[0]} is not a parameter of {entry}"
                             f"{_lives_in(unknown[0], fields.values())} (its parameters: "
                             f"{names})")
        rules = v.constraints_of(cls)
        for name, f in fields.items():
            if name not in given and f.default is dataclasses.MISSING \
                    and f.default_factory is dataclasses.MISSING:
                what = f": {rules[name].describe()}" if name in rules else ""
                raise ValueError(f"{name} must be given to {entry}{what}")
        own = {k: x for k, x in given.items() if k in fields and k != "options"}
        options = run_options(given.get("options"),
                              **{k: given[k] for k in SHORTHANDS if k in given})
        return cls(**own, options=options)

    @classmethod
    def of_call(cls: type[C], call: Mapping[str, Any], *, entry: str) -> C:
        """The config of an entry point's call, given its ``locals()`` at its first line: its
        parameters named after the config's fields (and ``options``), and its run-option
        keywords (``shorthands``, where an unknown name lands: refused by :meth:`of`); its
        other parameters (its system: a setting, a teacher) are not the config's."""
        fields = {f.name for f in dataclasses.fields(cls)}
        return cls.of({**{k: x for k, x in call.items() if k in fields},
                       **call.get("shorthands", {})}, entry=entry)


def _lives_in(name: str, fields: Iterable[dataclasses.Field[Any]]) -> str:
    """Where ``name`` lives when it is a field of a concept object a config takes (the
    students' ``sampling``): ``": it is a field of sampling, a Sampling"``, else ``""``."""
    for f in fields:
        concept: Any = f.default
        if dataclasses.is_dataclass(concept) and name in {g.name for g in
                                                          dataclasses.fields(concept)}:
            return f": it is a field of {f.name}, a {type(concept).__name__}"
    return ""
