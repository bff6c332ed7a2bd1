"""Named, configured experiments and the registry the CLI and sweeps read.

An experiment is a function ``run(config, out_dir) -> ExperimentResult`` with a
typed config dataclass whose defaults are the quick, laptop-sized version, and
optionally a ``full()`` constructor for the paper-sized version. Modules
register their experiments with :func:`register`; nothing here knows about any
particular experiment.
"""

from __future__ import annotations

import dataclasses
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specdyn import io
from specdyn.experiments.claims import Claim
from specdyn.experiments.config import config_to_dict


@dataclass
class ExperimentResult:
    """What an experiment wrote, and the few numbers that summarise it."""

    name: str
    out_dir: Path
    figures: list[Path] = field(default_factory=list)
    tables: list[Path] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    claims: list[Claim] = field(default_factory=list)


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

    def config(self, full: bool = False) -> Any:
        """The quick default config, or the full-size one when ``full``."""
        if full:
            if self.full is None:
                raise ValueError(f"experiment {self.name!r} has no --full variant")
            return self.full()
        return self.config_cls()


_REGISTRY: dict[str, Experiment] = {}


def register(name: str, description: str, config_cls: type,
             full: Callable[[], Any] | None = None,
             claims: ClaimsFn | None = None) -> Callable[[RunFn], RunFn]:
    """Decorator registering ``run`` under ``name``.

    ``claims``, when given, computes the experiment's claims from the folder the
    run wrote; :func:`run_experiment` then calls it on that folder, so the claims
    are checked on exactly the tables a reader gets.
    """

    def deco(run: RunFn) -> RunFn:
        if name in _REGISTRY:
            raise RuntimeError(f"experiment {name!r} registered twice")
        _REGISTRY[name] = Experiment(name, description, config_cls, run, full, claims)
        return run

    return deco


def get(name: str) -> Experiment:
    """The experiment called ``name``; a ``ValueError`` lists the valid names otherwise."""
    if name not in _REGISTRY:
        raise ValueError(f"unknown experiment {name!r}; valid names: {', '.join(names())}")
    return _REGISTRY[name]


def names() -> list[str]:
    """Registered experiment names, in registration order."""
    return list(_REGISTRY)


def builtin_names() -> list[str]:
    """Names of the experiments that ship with specdyn (not ones a user registered)."""
    return [n for n, e in _REGISTRY.items()
            if getattr(e.run, "__module__", "").startswith("specdyn.experiments.")]


def run_experiment(name: str, out_root: str | Path = "specdyn-out", *, full: bool = False,
                   config: Any = None) -> ExperimentResult:
    """Run one experiment into ``out_root/name`` as a transaction, with its JSON run record.

    The experiment writes into a fresh temporary folder beside
    ``out_root/name``, which replaces the folder in one rename only when the
    run finished (see :mod:`specdyn.experiments.store`); the folder is locked
    meanwhile, so a second run into it is refused at once
    (:class:`~specdyn.experiments.store.FolderBusyError`, naming the holder's
    PID). The record (``record.json``) holds the exact config, the specdyn
    version and commit, the host, the wall time, the summary and the claims.

    A failure leaves the previous finished result untouched: it is recorded
    beside it in ``out_root/name.failed.json`` (status ``failed``, with the
    traceback) and then re-raised.
    """
    from specdyn.experiments import store

    exp = get(name)
    cfg = exp.config(full) if config is None else config
    if not isinstance(cfg, exp.config_cls):
        raise ValueError(f"config for {name!r} must be a {exp.config_cls.__name__}")
    target = Path(out_root) / name
    cfg_dict = config_to_dict(cfg)
    seed = cfg_dict.get("seed")
    with store.transaction(target) as tmp:
        start = time.perf_counter()
        try:
            result = exp.run(cfg, tmp)
            if exp.claims is not None:
                result = dataclasses.replace(result, claims=exp.claims(cfg, tmp))
        except Exception:
            store.record_failure(target, io.run_record(
                {"experiment": name, **cfg_dict}, seed=seed,
                wall_time=time.perf_counter() - start, status="failed",
                error=traceback.format_exc()))
            raise
        wall = time.perf_counter() - start
        io.write_json(
            io.run_record({"experiment": name, **cfg_dict}, seed=seed, wall_time=wall,
                          extra={"figures": [p.name for p in result.figures],
                                 "tables": [p.name for p in result.tables],
                                 "summary": result.summary,
                                 "claims": [c.to_dict() for c in result.claims]}),
            tmp / store.RECORD,
        )

    def moved(p: Path) -> Path:
        return target / Path(p).relative_to(tmp) if Path(p).is_relative_to(tmp) else Path(p)

    return dataclasses.replace(result, out_dir=target, figures=[moved(p) for p in result.figures],
                               tables=[moved(p) for p in result.tables])


def recheck_claims(folder: str | Path) -> list[Claim]:
    """The claims of a finished experiment folder, computed again by the current code.

    Reads the experiment's name and config from ``folder/record.json`` and calls
    its registered ``claims`` function on the tables in ``folder``: the claims of
    a long run (a ``--full`` size, say) can be checked by a later version without
    running it again. An experiment without a ``claims`` function, or a folder
    that did not finish, is a ``ValueError``.
    """
    from specdyn.experiments import store
    from specdyn.experiments.config import config_from_dict

    folder = Path(folder)
    rec = io.read_json(folder / store.RECORD)
    if rec.get("status") != "finished":
        raise ValueError(f"{folder}: the run did not finish (status {rec.get('status')!r})")
    data = dict(rec["config"])
    exp = get(data.pop("experiment"))
    if exp.claims is None:
        raise ValueError(f"experiment {exp.name!r} has no claims function to check again")
    cfg: Any = config_from_dict(exp.config_cls, data, source=str(folder / store.RECORD))
    return exp.claims(cfg, folder)


def replace_config(cfg: Any, **changes: Any) -> Any:
    """A copy of ``cfg`` with fields changed (validated again by the dataclass)."""
    return dataclasses.replace(cfg, **changes)
