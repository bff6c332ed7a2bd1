"""Package boundaries: private names stay in their package, measure never imports sim.

A name is private when a component of its dotted path starts with one
underscore (``specdyn.sim._gram``, ``specdyn.sim.two_layer._Engine``). It
belongs to the package that holds it (``specdyn.sim`` for both; ``specdyn`` for
``specdyn._validate``) and may be imported, or reached as ``module._name``, only
from inside that package. Tests, benchmarks, examples and scripts are inside no
package. Checked on the source text (``ast``), so nothing is imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
TREES = ("src/specdyn", "tests", "benchmarks", "examples", "scripts")

#: Known crossings, each with its reason. Keep this list short: a new entry needs a reason
#: here, not just a line.
ALLOWED = {
    # the benchmarks share the library's progress bar (tqdm, quiet when not a terminal)
    ("benchmarks/finite_size_theory.py", "specdyn._progress.progress"),
    ("benchmarks/real_checkpoints.py", "specdyn._progress.progress"),
    ("benchmarks/tracker.py", "specdyn._progress.progress"),
    # ... and the library's one torch-to-numpy conversion (no other is written)
    ("benchmarks/linear_sim.py", "specdyn._torch.to_numpy"),
    ("benchmarks/real_checkpoints.py", "specdyn._torch.to_numpy"),
    # the bad-input table checks the device refusal where it is made
    ("tests/cli/test_cli_bad_input.py", "specdyn._torch.resolve_device"),
    # the stand-in experiment of the sweep tests validates its config as experiments do
    ("tests/experiments/sweep_probe.py", "specdyn._validate"),
    # the bad-input tests are generated from the declared constraints, read where declared
    ("tests/sim/test_sim_declared_constraints.py", "specdyn._validate"),
    ("tests/experiments/test_config_declared_constraints.py", "specdyn._validate"),
    # the one thread-pool policy, tested where it is written; reproduce --threads sets
    # these variables, and its test puts them back
    ("tests/test_threads.py", "specdyn._threads.THREAD_ENV"),
    ("tests/test_threads.py", "specdyn._threads.limit_threads"),
    ("tests/experiments/test_experiments_claims.py", "specdyn._threads.THREAD_ENV"),
    # the tracker's summary process is killed to check that its death is reported
    ("tests/measure/test_measure_tracker.py", "specdyn.measure._summary_process.shared_helper"),
    # the math of a tracker record: the reference arm of the per-record benchmark puts the
    # old decomposition in its place, and two tests spy on which routine it calls
    ("benchmarks/tracker.py", "specdyn.measure._tracker_measure"),
    ("tests/measure/test_measure_tracker.py", "specdyn.measure._tracker_measure"),
    ("tests/measure/test_measure_tracker_policy.py", "specdyn.measure._tracker_measure"),
    # the worker's CUDA stream protocol, checked with fake streams and events (no GPU here)
    ("tests/measure/test_measure_tracker_policy.py", "specdyn.measure._tracker_hooks"),
    # ... and one replaces the a-posteriori rule by a matrix at its boundary (hysteresis)
    ("tests/measure/test_measure_tracker_policy.py", "specdyn.measure._summary_process"),
    # the tracker's a-posteriori precision rule, tested on spectra with a known error
    ("tests/measure/test_measure_tracker_policy.py",
     "specdyn.measure._summary_process.float32_suffices"),
    # the two callers of the one range reader (specdyn.ranges) give the same values
    ("tests/test_ranges.py", "specdyn.cli._args.number_list"),
    ("tests/test_ranges.py", "specdyn.runs.spec._axis_values"),
    # reproduce's exit status is tested on a probe experiment put into the registry for one
    # test (monkeypatched, so it leaves no name behind for other tests)
    ("tests/experiments/test_experiments_claims.py", "specdyn.runs.registry._REGISTRY"),
    # ... and a cancel's exit status on a probe that swallows the signal as a library can
    ("tests/cli/test_cli_cancel.py", "specdyn.runs.registry._REGISTRY"),
    # ... and the wrong-model judge on a toy experiment registered for one test (removed after)
    ("tests/experiments/test_wrong_models.py", "specdyn.runs.registry._REGISTRY"),
    # bars only on a terminal: the one progress helper, tested with a fake terminal
    ("tests/experiments/test_reproduce_console.py", "specdyn._progress"),
    # the reader of the built-in experiments' names from their source, tested on trees of
    # its own (a module of the package root, so that --help imports nothing heavy)
    ("tests/project/test_experiment_modules.py", "specdyn._experiment_index"),
    # the results' one-line repr (a private module of the package root), on a class of its own
    ("tests/test_repr.py", "specdyn._repr.array_result"),
    # accuracy of the fast Tracy-Widom tail against the Fredholm determinant
    ("tests/measure/test_measure_outliers.py", "specdyn.measure.outliers._tw1_sf"),
    ("tests/measure/test_measure_outliers.py", "specdyn.measure.outliers._tw1_sf_deconvolved"),
}


def _private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def _is_module(dotted: str) -> bool:
    path = SRC.joinpath(*dotted.split("."))
    return path.is_dir() or path.with_suffix(".py").is_file()


def _package_of(path: Path) -> str | None:
    """Dotted package a source file belongs to (``None`` outside ``src``)."""
    if SRC not in path.parents:
        return None
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1])  # a package's __init__ and its modules alike


def _owner(dotted: str) -> str | None:
    """The package holding the first private component of ``dotted`` (``None``: public)."""
    parts = dotted.split(".")
    i = next((j for j, p in enumerate(parts) if _private(p)), None)
    if i is None:
        return None
    head = ".".join(parts[:i])
    return head if (SRC / Path(*parts[:i])).is_dir() else ".".join(parts[:i - 1])


def _references(path: Path) -> list[str]:
    """Dotted ``specdyn`` names a file imports, and ``module._name`` attributes it reads."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = _package_of(path)
    names: list[str] = []
    modules: dict[str, str] = {}  # local alias -> dotted module
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                names.append(a.name)
                if a.asname:
                    modules[a.asname] = a.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                assert package is not None, f"relative import outside src: {path}"
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            for a in node.names:
                full = f"{base}.{a.name}"
                names.append(full)
                if _is_module(full):
                    modules[a.asname or a.name] = full
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in modules and _private(node.attr)):
            names.append(f"{modules[node.value.id]}.{node.attr}")
    return [n for n in names if n.split(".")[0] == "specdyn"]


def _files() -> list[Path]:
    return sorted(p for tree in TREES if (ROOT / tree).is_dir()
                  for p in (ROOT / tree).rglob("*.py"))


def _crossings() -> set[tuple[str, str]]:
    found = set()
    for path in _files():
        package = _package_of(path)
        for name in _references(path):
            owner = _owner(name)
            if owner is None:
                continue
            if package is not None and (package == owner or package.startswith(owner + ".")):
                continue
            found.add((path.relative_to(ROOT).as_posix(), name))
    return found


def test_no_private_name_crosses_a_package() -> None:
    new = _crossings() - ALLOWED
    assert not new, "private names imported from outside their package:\n" + "\n".join(
        f"  {f}: {n}" for f, n in sorted(new))


def test_allowlist_holds_only_live_entries() -> None:
    stale = ALLOWED - _crossings()
    assert not stale, "fixed crossings still on ALLOWED (remove them): " + ", ".join(
        f"{f}: {n}" for f, n in sorted(stale))


@pytest.mark.parametrize(("source", "expected"), [
    ("from specdyn.sim import _gram\n", {"specdyn.sim._gram"}),
    ("from specdyn.sim.two_layer import _Engine, train_two_layer\n",
     {"specdyn.sim.two_layer._Engine", "specdyn.sim.two_layer.train_two_layer"}),
    ("from specdyn.measure import outliers as o\no._tw1_sf(1.0)\n",
     {"specdyn.measure.outliers", "specdyn.measure.outliers._tw1_sf"}),
    ("import specdyn.sim._run\n", {"specdyn.sim._run"}),
])
def test_checker_sees_imports_and_private_attributes(tmp_path: Path, source: str,
                                                     expected: set[str]) -> None:
    f = tmp_path / "probe.py"
    f.write_text(source)
    assert set(_references(f)) == expected
    assert _owner("specdyn.sim._gram") == "specdyn.sim"
    assert _owner("specdyn.sim.two_layer._Engine") == "specdyn.sim"
    assert _owner("specdyn._validate") == "specdyn"
    assert _owner("specdyn.measure.outliers.find_outliers") is None


def test_measure_never_imports_sim() -> None:
    offenders = [f"{p.relative_to(ROOT).as_posix()}: {n}"
                 for p in sorted((SRC / "specdyn" / "measure").rglob("*.py"))
                 for n in _references(p) if n == "specdyn.sim" or n.startswith("specdyn.sim.")]
    assert not offenders, "measure imports sim: " + ", ".join(offenders)


def test_every_package_declares_all() -> None:
    missing = [p.parent.relative_to(SRC).as_posix()
               for p in sorted((SRC / "specdyn").rglob("__init__.py"))
               if "__all__" not in {t.id for n in ast.parse(p.read_text()).body
                                    if isinstance(n, (ast.Assign, ast.AnnAssign))
                                    for t in (n.targets if isinstance(n, ast.Assign)
                                              else [n.target])
                                    if isinstance(t, ast.Name)}]
    assert missing == [], f"packages without __all__: {missing}"


def _foreign_exports(package: str) -> list[str]:
    """Names a package exports whose home (``__module__``) is outside it."""
    import importlib

    mod = importlib.import_module(package)
    names = getattr(mod, "__all__", None) or [n for n in vars(mod) if not n.startswith("_")]
    out = []
    for name in names:
        home = getattr(getattr(mod, name), "__module__", None)
        if (isinstance(home, str) and home.startswith("specdyn")
                and not (home == package or home.startswith(package + "."))):
            out.append(f"{package}.{name} (from {home})")
    return out


def test_one_import_path_per_public_name() -> None:
    # a package exports its own objects only; re-exporting another package's names
    # (measure once re-exported theory.rmt) gives one object two import paths
    packages = [".".join(p.parent.relative_to(SRC).parts)
                for p in sorted((SRC / "specdyn").rglob("__init__.py"))]
    foreign = [f for p in packages for f in _foreign_exports(p)]
    assert not foreign, "re-exported from another package: " + ", ".join(foreign)
