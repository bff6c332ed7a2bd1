"""Every public signature follows the vocabulary of ``docs/concepts.md``.

``D`` inputs, ``P`` outputs, ``N`` width, ``M`` samples, ``B`` batch, ``dt`` flow
step, ``lr`` plain step size. The test walks every public callable and public
dataclass field of specdyn -- the ``__all__`` of each package (and of the
modules a package exports), the methods of exported classes, and the config
dataclass of every built-in experiment (its fields are what TOML files and
``--set`` name) -- and fails on a parameter or field spelled the other ways.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import types
from collections.abc import Iterator
from typing import Any

import pytest

import specdyn
from specdyn.runs import registry

#: Forbidden name -> the vocabulary's spelling.
FORBIDDEN = {
    "d": "D", "dim": "D", "input_dim": "D", "n_inputs": "D", "n_features": "D",
    "output_dim": "P", "n_outputs": "P",
    "width": "N", "widths": "N_values", "hidden_dim": "N", "n_hidden": "N",
    "n": "M (samples) or N (width)", "n_samples": "M", "num_samples": "M", "samples": "M_values",
    "n_train": "M", "n_test": "M_test",
    "batch_size": "B",
    "eta": "dt (flow step) or lr (plain step size)", "step_size": "lr",
    "learning_rate": "lr",
}
#: A composite name (``chaos_n``, ``two_layer_dim``, ``n_values``) is checked by these parts.
SUFFIXES = ("d", "n", "dim", "width", "eta", "batch_size", "n_samples")
PREFIXES = ("d", "n", "dim", "width", "eta")

#: (where, name) -> why the name means something else there. Keep it short.
ALLOWED = {
    # matplotlib figure size in inches, not a network width
    ("specdyn.plot.new_figure", "width"): "figure width in inches",
    # The measurement API describes the shape of whatever matrix it is handed
    # (rows x columns of an activation or weight matrix of any model): for a
    # weight matrix the "samples" are its output rows, so M/D would be wrong there.
    ("specdyn.measure.find_outliers", "n_samples"): "rows of the measured matrix",
    ("specdyn.measure.fit_mp_bulk", "n_samples"): "rows of the measured matrix",
    ("specdyn.measure.summarize_spectrum", "n_samples"): "rows of the measured matrix",
    ("specdyn.measure.OutlierReport", "n_samples"): "rows of the measured matrix",
    ("specdyn.measure.OutlierReport", "n_features"): "columns of the measured matrix",
    ("specdyn.measure.CovarianceAccumulator", "n_features"): "columns of the streamed matrix",
    # Johnstone's n x p Gaussian matrix (symmetric in n and p), the random-matrix letters
    ("specdyn.theory.rmt.wishart_edge_scaling", "n"): "rows of an n x p Gaussian matrix",
}


def forbidden(name: str) -> str | None:
    """The vocabulary's spelling for a forbidden ``name``, or ``None`` when it is fine."""
    if name in FORBIDDEN:
        return FORBIDDEN[name]
    for s in SUFFIXES:
        if name.endswith("_" + s) and name != "_" + s:
            return f"..._{FORBIDDEN[s].split()[0]}"
    for p in PREFIXES:
        if name == p + "_values":
            return f"{FORBIDDEN[p].split()[0]}_values"
    return None


def _packages() -> list[types.ModuleType]:
    mods = [specdyn]
    for info in pkgutil.walk_packages(specdyn.__path__, "specdyn."):
        if info.ispkg and not any(p.startswith("_") for p in info.name.split(".")):
            mods.append(importlib.import_module(info.name))
    return mods


def _signature_names(fn: Any) -> list[str]:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # builtins without a signature
        return []
    return [p for p in sig.parameters if p not in ("self", "cls")]


def public_names() -> Iterator[tuple[str, str]]:
    """``(where, name)`` for every parameter and dataclass field of the public API."""
    seen: set[int] = set()

    def walk(obj: Any, where: str) -> Iterator[tuple[str, str]]:
        if id(obj) in seen:
            return
        seen.add(id(obj))
        if isinstance(obj, types.ModuleType):
            for n in getattr(obj, "__all__", []):
                yield from walk(getattr(obj, n), f"{obj.__name__}.{n}")
            return
        if inspect.isclass(obj):
            if dataclasses.is_dataclass(obj):
                for f in dataclasses.fields(obj):
                    yield where, f.name
            for attr, member in vars(obj).items():
                if attr.startswith("_") and attr != "__init__":
                    continue
                if isinstance(member, (staticmethod, classmethod)):
                    member = member.__func__
                if inspect.isfunction(member):
                    for p in _signature_names(member):
                        yield where, p
            return
        if callable(obj):
            for p in _signature_names(obj):
                yield where, p

    for pkg in _packages():
        yield from walk(pkg, pkg.__name__)
    for name in registry.builtin_names():
        yield from walk(registry.get(name).config_cls, f"experiment {name!r} config")


def test_the_walk_sees_the_public_api() -> None:
    # the walk reaches sim entry points, theory submodules and experiment configs
    wheres = {w for w, _ in public_names()}
    for expected in ("specdyn.sim.train_linear",
                     "specdyn.theory.outlier_escape.predict_trainability",
                     "experiment 'propagation-of-chaos' config", "specdyn.data.HermiteTarget",
                     "specdyn.measure.SpectrumTracker", "specdyn.Schedule"):
        assert expected in wheres, expected


@pytest.mark.parametrize(("name", "expected"), [
    ("d", "D"), ("eta", "dt (flow step) or lr (plain step size)"), ("chaos_n", "..._M"),
    ("two_layer_dim", "..._D"), ("n_values", "M_values"), ("batch_size", "B"),
    ("N", None), ("n_boot", None), ("M_values", None), ("theta", None), ("dt", None),
])
def test_forbidden_rule(name: str, expected: str | None) -> None:
    assert forbidden(name) == expected


def test_every_public_signature_follows_the_vocabulary() -> None:
    bad = sorted({f"{where}: {name!r} (use {forbidden(name)})"
                  for where, name in public_names()
                  if forbidden(name) is not None and (where, name) not in ALLOWED})
    assert not bad, "names outside the vocabulary of docs/concepts.md:\n" + "\n".join(bad)


def test_every_allowlist_entry_is_still_needed() -> None:
    used = {(w, n) for w, n in public_names()}
    stale = sorted(str(k) for k in ALLOWED if k not in used)
    assert not stale, f"allowlist entries no longer in the API: {stale}"
