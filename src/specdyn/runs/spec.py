"""The sweep language: a grid of settings and seeds over one experiment, checked before any run.

A sweep file is a run file (see :mod:`specdyn.runs.config`) with a
``[sweep]`` table::

    experiment = "simulate"
    steps = 2000                              # fixed fields (defaults otherwise)

    [sweep]
    seeds = [0, 1, 2]                         # or a count: seeds = 3 -> 0, 1, 2
    executor = "local"                        # optional: local, dask or inline
    [sweep.axes]
    sigma_w = [0.1, 0.3, 1.0]                 # a list of values
    gamma0_ratio = {log = [0.1, 10.0], num = 5}   # log-spaced (also {lin = ..})
    D = "log:16:256:5"                        # the same as a string; ints are rounded

The points are the Cartesian product of the axes (in file order) times the
seeds. Each point's config is built and validated before anything runs, and
gets a stable run id: the first 12 hex digits of the SHA-256 of its
experiment name and full config (so the same setting always has the same id,
whatever the file or the order of the axes).

Experiments are found by name in the registry: the built-in ones, or those
registered by the module named in the file (``module = "pkg.mod"``,
importable on every worker), so your own experiments sweep the same way.
Running a spec is :func:`specdyn.runs.sweep.run_sweep`; where the
results go is :mod:`specdyn.runs.store`.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from specdyn._validate import did_you_mean
from specdyn.ranges import is_range, parse_range, range_values
from specdyn.runs.config import (
    RESERVED_KEYS,
    TomlFile,
    build_config,
    coerce_value,
    config_from_toml,
    config_to_dict,
    field_types,
    read_toml,
)
from specdyn.runs.registry import experiment_named

#: The executors a sweep can run on (see :mod:`specdyn.runs.executors`).
EXECUTORS = ("local", "dask", "inline")


@dataclass(frozen=True)
class Axis:
    """One swept config field and its values (already checked against the field's type)."""

    name: str
    values: tuple[Any, ...]


@dataclass(frozen=True)
class Point:
    """One run of a sweep: the full config (a plain dict) and its stable id."""

    run_id: str
    experiment: str
    config: dict[str, Any]
    setting: dict[str, Any]
    seed: int | None = None
    module: str | None = None


@dataclass(frozen=True)
class SweepSpec:
    """A validated sweep: experiment, fixed fields, axes, seeds and the expanded points.

    Build it with :func:`load_sweep` (from a file) or :func:`make_sweep` (in code).
    """

    experiment: str
    base: dict[str, Any]
    axes: tuple[Axis, ...]
    seeds: tuple[int, ...] | None
    points: tuple[Point, ...]
    module: str | None = None
    source: str | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The spec as JSON: everything but the configs of the points."""
        return {
            "experiment": self.experiment,
            "module": self.module,
            "source": self.source,
            "base": self.base,
            "axes": {a.name: list(a.values) for a in self.axes},
            "seeds": None if self.seeds is None else list(self.seeds),
            "points": [{"run_id": p.run_id, **p.setting} for p in self.points],
        }


def check_address(address: object) -> None:
    """Raise ``ValueError`` unless ``address`` looks like a Dask scheduler's ``tcp://HOST:PORT``."""
    if not isinstance(address, str) or ":" not in address:
        raise ValueError(f"address must look like 'tcp://HOST:PORT', got {address!r}")


def run_id(experiment: str, config: Mapping[str, Any]) -> str:
    """Stable id of a run: 12 hex digits of SHA-256 over the experiment name and full config."""
    blob = json.dumps({"experiment": experiment, "config": dict(config)}, sort_keys=True,
                      default=str, allow_nan=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def make_sweep(experiment: str, axes: Mapping[str, Any] | None = None, *,
               base: Mapping[str, Any] | None = None, seeds: Any = None,
               module: str | None = None) -> SweepSpec:
    """A sweep built in code: the same checks and points as a sweep file.

    ``axes`` maps a config field to a list of values, a ``{"log": [lo, hi],
    "num": n}`` / ``{"lin": ...}`` range or a ``"log:LO:HI:N"`` string;
    ``seeds`` is a list of seeds or a count.
    """
    exp = experiment_named(experiment, module)
    axes = dict(axes or {})
    base = dict(base or {})

    def where(*key: str) -> str:
        if not key:
            return "sweep"
        head = "sweep" if key[0] in ("axes", "seeds") else "base"
        return head + "".join(f"[{k!r}]" for k in key)

    return _build_spec(exp, base, axes, seeds, module, where, source=None,
                       seeds_given=seeds is not None)


def load_sweep(path: str | os.PathLike[str]) -> SweepSpec:
    """Read and validate a sweep file; every error names the file, line and key.

    Nothing runs here; every point's config is built (and so validated by the
    experiment's config class) before this returns.
    """
    tf = read_toml(path)
    name, module = _head(tf)
    exp = experiment_named(name, module)
    sweep = tf.data.get("sweep")
    if sweep is None:
        raise ValueError(f"{tf.where()}: no [sweep] table; a sweep file needs "
                         "[sweep] with seeds and/or [sweep.axes]")
    if not isinstance(sweep, dict):
        raise ValueError(f"{tf.where('sweep')}: 'sweep' must be a table")
    allowed = ("axes", "seeds", "executor", "workers", "address")
    for key in sweep:
        if key not in allowed:
            raise ValueError(f"{tf.where('sweep', key)}: unknown key {key!r} in [sweep]"
                             f"{did_you_mean(key, allowed)}; valid keys: {', '.join(allowed)}")
    axes = sweep.get("axes", {})
    if not isinstance(axes, dict):
        raise ValueError(f"{tf.where('sweep', 'axes')}: 'axes' must be a table of field = values")
    options: dict[str, Any] = {}
    if "executor" in sweep:
        if sweep["executor"] not in EXECUTORS:
            raise ValueError(f"{tf.where('sweep', 'executor')}: executor must be one of "
                             f"{', '.join(map(repr, EXECUTORS))}, got {sweep['executor']!r}")
        options["executor"] = sweep["executor"]
    if "workers" in sweep:
        w = sweep["workers"]
        if isinstance(w, bool) or not isinstance(w, int) or w < 1:
            raise ValueError(f"{tf.where('sweep', 'workers')}: workers must be an integer "
                             f">= 1, got {w!r}")
        options["workers"] = w
    if "address" in sweep:
        try:
            check_address(sweep["address"])
        except ValueError as err:
            raise ValueError(f"{tf.where('sweep', 'address')}: {err}") from None
        options["address"] = sweep["address"]
    base = {k: val for k, val in tf.data.items() if k not in RESERVED_KEYS}
    for key, value in base.items():
        if isinstance(value, dict):
            raise ValueError(f"{tf.where(key)}: a table [{key}] is not a config field of "
                             f"{exp.config_cls.__name__}")

    def where(*key: str) -> str:
        if key and key[0] in ("axes", "seeds"):
            return tf.where("sweep", *key)
        return tf.where(*key)

    spec = _build_spec(exp, base, axes, sweep.get("seeds"), module, where, source=str(tf.path),
                       seeds_given="seeds" in sweep)
    return SweepSpec(spec.experiment, spec.base, spec.axes, spec.seeds, spec.points,
                     spec.module, spec.source, options)


def _head(tf: TomlFile) -> tuple[str, str | None]:
    name = tf.data.get("experiment")
    if name is None:
        raise ValueError(f"{tf.where()}: missing key 'experiment' (the experiment to run)")
    if not isinstance(name, str):
        raise ValueError(f"{tf.where('experiment')}: experiment must be a string, got {name!r}")
    module = tf.data.get("module")
    if module is not None and not isinstance(module, str):
        raise ValueError(f"{tf.where('module')}: module must be a string, got {module!r}")
    try:
        experiment_named(name, module)
    except ValueError as err:
        raise ValueError(f"{tf.where('experiment')}: {err}") from None
    return name, module


def load_run(path: str | os.PathLike[str]) -> tuple[str, Any]:
    """Read a run file: the experiment's name and its validated config."""
    tf = read_toml(path)
    name, module = _head(tf)
    exp = experiment_named(name, module)
    return name, config_from_toml(tf, exp.config_cls, experiment=name)


def _axis_values(raw: Any, loc: str) -> list[Any]:
    """One axis: a list, a ``{log|lin = [lo, hi], num = n}`` table or a 'log:lo:hi:n' string."""
    if is_range(raw):
        try:
            kind, lo, hi, num = parse_range(raw)
        except ValueError as err:
            raise ValueError(f"{loc}: {err}") from None
        raw = {kind: [lo, hi], "num": num}
    if isinstance(raw, dict):
        kinds = [k for k in ("log", "lin") if k in raw]
        extra = set(raw) - {"log", "lin", "num"}
        if len(kinds) != 1 or extra or "num" not in raw:
            raise ValueError(f"{loc}: a range is {{log = [LO, HI], num = N}} or "
                             f"{{lin = [LO, HI], num = N}}, got {raw!r}")
        kind = kinds[0]
        ends, num = raw[kind], raw["num"]
        if (not isinstance(ends, list) or len(ends) != 2
                or not all(isinstance(e, (int, float)) and not isinstance(e, bool) for e in ends)):
            raise ValueError(f"{loc}: {kind} must be [LO, HI] (two numbers), got {ends!r}")
        if isinstance(num, bool) or not isinstance(num, int) or num < 1:
            raise ValueError(f"{loc}: num must be an integer >= 1, got {num!r}")
        try:
            grid = range_values(kind, float(ends[0]), float(ends[1]), num)
        except ValueError as err:
            raise ValueError(f"{loc}: {err}") from None
        # 12 significant digits: readable values, ids that do not hang on the last ulp
        return [float(f"{x:.12g}") for x in grid]
    if isinstance(raw, list):
        return list(raw)
    raise ValueError(f"{loc}: an axis is a list of values or a range "
                     f"({{log = [LO, HI], num = N}}), got {raw!r}")


def _build_spec(exp: Any, base: dict[str, Any], raw_axes: Mapping[str, Any], raw_seeds: Any,
                module: str | None, where: Callable[..., str], *, source: str | None,
                seeds_given: bool) -> SweepSpec:
    cls = exp.config_cls
    types_ = field_types(cls)
    for key in base:
        if key not in types_:
            raise ValueError(f"{where(key)}: unknown key {key!r} for {cls.__name__}"
                             f"{did_you_mean(key, types_)}; valid keys: {', '.join(types_)}")
    axes: list[Axis] = []
    for name, raw in raw_axes.items():
        loc = where("axes", name)
        if name == "seed":
            raise ValueError(f"{loc}: sweep seeds with [sweep] seeds = [...], not an axis")
        if name not in types_:
            raise ValueError(f"{loc}: experiment {exp.name!r} has no field {name!r} to sweep"
                             f"{did_you_mean(name, types_)}; its fields: {', '.join(types_)}")
        if name in base:
            raise ValueError(f"{loc}: {name!r} is both an axis and a fixed field "
                             f"({where(name)}); keep one")
        values = _axis_values(raw, loc)
        if not values:
            raise ValueError(f"{loc}: axis {name!r} is empty; give at least one value")
        values = [coerce_value(name, x, types_[name], loc) if not _is_int_type(types_[name])
                  else _as_int(name, x, loc) for x in values]
        values = list(dict.fromkeys(_hashable(x) for x in values))  # drop repeats, keep order
        axes.append(Axis(name, tuple(values)))
    seeds: tuple[int, ...] | None = None
    if seeds_given:
        loc = where("seeds")
        if "seed" not in types_:
            raise ValueError(f"{loc}: experiment {exp.name!r} has no 'seed' field to sweep")
        if "seed" in base:
            raise ValueError(f"{loc}: seeds are set both here and by 'seed' at "
                             f"{where('seed')}; keep one")
        if isinstance(raw_seeds, int) and not isinstance(raw_seeds, bool):
            if raw_seeds < 1:
                raise ValueError(f"{loc}: seeds must be a count >= 1 or a list, got {raw_seeds}")
            seeds = tuple(range(raw_seeds))
        elif isinstance(raw_seeds, (list, tuple)):
            if not raw_seeds:
                raise ValueError(f"{loc}: seeds is empty; give at least one seed")
            bad = [s for s in raw_seeds if isinstance(s, bool) or not isinstance(s, int) or s < 0]
            if bad:
                raise ValueError(f"{loc}: seeds must be integers >= 0, got {bad[0]!r}")
            seeds = tuple(dict.fromkeys(int(s) for s in raw_seeds))
        else:
            raise ValueError(f"{loc}: seeds must be a list of integers or a count, "
                             f"got {raw_seeds!r}")
    names = [a.name for a in axes]

    def point_where(key: str | None) -> str:
        if key is None:
            return where()
        if key in names:
            return where("axes", key)
        if key == "seed" and seeds is not None:
            return where("seeds")
        return where(key)

    points: dict[str, Point] = {}
    for combo in itertools.product(*(a.values for a in axes), *([seeds] if seeds else [])):
        setting = dict(zip(names + (["seed"] if seeds else []), combo, strict=True))
        data = {**base, **{k: _unhashable(x) for k, x in setting.items()}}
        try:
            cfg = build_config(cls, data, point_where)
        except ValueError as err:
            raise ValueError(f"{err} (at the sweep point {setting})") from None
        cfg_dict = config_to_dict(cfg)
        rid = run_id(exp.name, cfg_dict)
        seed = cfg_dict.get("seed")
        points.setdefault(rid, Point(rid, exp.name, cfg_dict, dict(setting),
                                     seed if isinstance(seed, int) else None, module))
    return SweepSpec(exp.name, dict(base), tuple(axes), seeds, tuple(points.values()), module,
                     source)


def _is_int_type(tp: Any) -> bool:
    return tp is int


def _as_int(name: str, x: Any, loc: str) -> int:
    # integer fields accept log/lin ranges: values are rounded to the nearest integer
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ValueError(f"{loc}: key {name!r} must be an integer, got {x!r}")
    if isinstance(x, float) and not math.isfinite(x):
        raise ValueError(f"{loc}: key {name!r} must be a finite integer, got {x!r}")
    return int(round(x))


def _hashable(x: Any) -> Any:
    return tuple(x) if isinstance(x, list) else x


def _unhashable(x: Any) -> Any:
    return list(x) if isinstance(x, tuple) else x
