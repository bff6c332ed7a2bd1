"""Dump small runs of every simulator entry point to .npz, or compare two dumps bit for bit.

Used to check that a refactoring of :mod:`specdyn.sim` leaves every number unchanged::

    python scripts/dump_engine_runs.py dump OUT_DIR     # one .npz per case
    python scripts/dump_engine_runs.py compare A_DIR B_DIR

Each case is one call of a public entry point (every engine, dtypes, optimizers,
methods, a big seed, and diverging runs). A run's record is flattened to named
arrays (``meta`` as JSON without ``wall_time_s``); a diverging run stores the
error's ``step`` and its partial record. Messages are stored too but compared
separately (their text may change); arrays, steps and meta must be identical.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from specdyn.data.hermite import HermiteTarget
from specdyn.settings import PowerLawSetting
from specdyn.sim import (
    DeepLinearRecording,
    DivergenceError,
    LangevinUpdate,
    RunOptions,
    Sampling,
    gd_steps,
    mean_field_langevin,
    propagation_of_chaos,
    rank_one_teacher,
    train_deep_linear,
    train_linear,
    train_linear_student,
    train_two_layer,
)

BIG = 2**40 + 12345  # a seed wider than 32 bits
S = PowerLawSetting.paper(0.5, 2.0, D=8)
CPU = {"device": "cpu"}


def _tanh1(x: np.ndarray) -> np.ndarray:
    return np.tanh(x[:, 0])


def _teacher() -> np.ndarray:
    return rank_one_teacher(5, 7, 2.0, seed=3)[0]


def cases() -> dict[str, Callable[[], Any]]:
    """Every case: name -> a call returning a record (or raising DivergenceError)."""
    lin = {"progress": False, **CPU}
    two = {"progress": False, **CPU}
    c: dict[str, Callable[[], Any]] = {
        "linear_gram_gd": lambda: train_linear(S, 16, 24, 50, dt=0.5, checkpoints=6, seed=1,
                                               **lin),
        "linear_gram_gd_inf": lambda: train_linear(S, None, None, 40, checkpoints=5, **lin),
        "linear_gram_gd_f32": lambda: train_linear(S, 16, 24, 30, dtype="float32",
                                                   checkpoints=[0, 7, 30], seed=BIG, **lin),
        "linear_gram_flow_diag": lambda: train_linear(S, None, None, 40, method="flow",
                                                      checkpoints=4, **lin),
        "linear_gram_flow_full": lambda: train_linear(S, 12, 20, 20, method="flow",
                                                      checkpoints=3, seed=2, **lin),
        "linear_weights_gd": lambda: train_linear(S, 16, 24, 50, dt=0.5, engine="weights",
                                                  checkpoints=6, seed=1, **lin),
        "linear_weights_pop_f32": lambda: train_linear(S, 16, None, 30, engine="weights",
                                                       dtype="float32", checkpoints=4,
                                                       **lin),
        "linear_gram_diverge": lambda: train_linear(S, 16, 24, 400, dt=60.0,
                                                    checkpoints=[0, 1, 2, 400], **lin),
        "linear_weights_diverge": lambda: train_linear(S, 16, 24, 400, dt=60.0,
                                                       engine="weights",
                                                       checkpoints=[0, 1, 2, 400], **lin),
        "linear_gram_diverge_late": lambda: train_linear(S, 16, 24, 700, dt=7.2,
                                                         checkpoints=[0, 1, 700], **lin),
        "linear_weights_diverge_late": lambda: train_linear(S, 16, 24, 700, dt=7.2,
                                                            engine="weights",
                                                            checkpoints=[0, 1, 700], **lin),
        "two_layer_relu_f64_gd": lambda: train_two_layer(S, "relu", N=24, M=20, steps=40,
                                                         checkpoints=5, seed=3, **two),
        "two_layer_relu_f32_gd": lambda: train_two_layer(S, "relu", N=24, M=20, steps=40,
                                                         dtype="float32", checkpoints=5,
                                                         **two),
        "two_layer_tanh_f64_sgd": lambda: train_two_layer(S, "tanh", N=24, M=20, steps=30,
                                                          optimizer="sgd", B=6, checkpoints=4,
                                                          seed=BIG, **two),
        "two_layer_tanh_f32_online": lambda: train_two_layer(S, "tanh", N=24, M=20,
                                                             steps=30, optimizer="online",
                                                             B=9, dtype="float32",
                                                             checkpoints=4, **two),
        "two_layer_tanh_mup_ntk": lambda: train_two_layer(S, "tanh", N=16, M=16, steps=20,
                                                          parameterization="ntk",
                                                          checkpoints=3, **two),
        "two_layer_diverge": lambda: train_two_layer(S, "relu", N=32, M=32, steps=400,
                                                     dt=40.0, checkpoints=[0, 1, 2, 400],
                                                     **two),
        "two_layer_diverge_long": lambda: train_two_layer(S, "linear", N=16, M=16, steps=700,
                                                          dt=8.0, checkpoints=[0, 300, 700],
                                                          **two),
    }
    for meth in ("population", "gd", "sgd", "online"):
        c[f"linear_student_{meth}"] = (
            lambda meth=meth: train_linear_student(
                _teacher(), lr=0.2, steps=25, sampling=Sampling(meth, M=30, B=4, noise_std=0.1),
                replicas=2, checkpoints=5, seed=4, **CPU))
        c[f"deep_linear_{meth}"] = (
            lambda meth=meth: train_deep_linear(
                _teacher(), depth=3, N=9, parameterization="mup", lr=0.05, steps=25,
                sampling=Sampling(meth, M=30, B=4, noise_std=0.1), checkpoints=5,
                recording=DeepLinearRecording(sharpness=3), seed=5, **CPU))
    c["linear_student_inputs_bigseed"] = lambda: train_linear_student(
        _teacher(), lr=0.1, steps=20, sampling=Sampling("sgd", B=3),
        inputs=np.random.default_rng(0).standard_normal((11, 7)), top_k=None, seed=BIG, **CPU)
    c["linear_student_f32_nooverlap"] = lambda: train_linear_student(
        _teacher(), lr=0.1, steps=20, sampling=Sampling("gd", M=12), overlaps=False,
        dtype="float32", checkpoints=None, **CPU)
    c["linear_student_diverge"] = lambda: train_linear_student(
        _teacher(), lr=3.5, steps=200, checkpoints=4,
        options=RunOptions(check_every=7), **CPU)
    c["linear_student_diverge_default"] = lambda: train_linear_student(
        _teacher(), lr=2.0, steps=300, sampling=Sampling("online", B=2), checkpoints=4, **CPU)
    c["deep_linear_ntk_subspace"] = lambda: train_deep_linear(
        _teacher(), depth=2, N=12, parameterization="ntk", lr=0.1, steps=20,
        recording=DeepLinearRecording(spectra="subspace", top_k=2, layers=[1]), checkpoints=4,
        seed=BIG, **CPU)
    c["deep_linear_standard_init"] = lambda: train_deep_linear(
        _teacher(), depth=2, N=6, parameterization="standard", lr=0.1, steps=15,
        init=[np.full((6, 7), 0.1), np.full((5, 6), -0.1)], checkpoints=3, **CPU)
    c["deep_linear_diverge"] = lambda: train_deep_linear(
        _teacher(), depth=2, N=8, parameterization="standard", lr=0.75, steps=200,
        checkpoints=4, **CPU)
    c["deep_linear_diverge_every"] = lambda: train_deep_linear(
        _teacher(), depth=2, N=8, parameterization="standard", lr=3.0, steps=200,
        options=RunOptions(divergence_factor=1e3, check_every=3), checkpoints=4, **CPU)
    c["langevin_tanh"] = lambda: mean_field_langevin("tanh", _tanh1, 20, 4, 30,
                                                     update=LangevinUpdate(steps=40), seed=1,
                                                     checkpoints=4, **CPU)
    c["langevin_pop_bigseed"] = lambda: mean_field_langevin(
        "relu", HermiteTarget([0, 1, 0.5], direction=[1, 0, 0]), 16, 3, None,
        update=LangevinUpdate(steps=20, temperature=0.0), population_size=64, seed=BIG, **CPU)
    c["langevin_noise_array"] = lambda: mean_field_langevin(
        "tanh", _tanh1, 6, 3, 10, update=LangevinUpdate(steps=5), checkpoints=[0, 5],
        noise=np.random.default_rng(1).standard_normal((5, 6, 4)), dtype="float32", **CPU)
    c["langevin_diverge"] = lambda: mean_field_langevin(
        "quadratic", lambda x: 5 * x[:, 0] ** 2, 20, 3, 50,
        update=LangevinUpdate(dt=5.0, steps=400), checkpoints=[0, 1, 400], **CPU)
    c["chaos"] = lambda: propagation_of_chaos(
        "tanh", _tanh1, [4, 8], 3, 30, update=LangevinUpdate(steps=30), reference_N=64,
        replicas=2, checkpoints=4,
        record=("w2_distance", "reference_particles", "system_particles"), seed=2, **CPU)
    c["chaos_diverge"] = lambda: propagation_of_chaos(
        "quadratic", lambda x: 5 * x[:, 0] ** 2, [4], 3, 30,
        update=LangevinUpdate(dt=5.0, steps=300), reference_N=32, checkpoints=[0, 1, 300],
        **CPU)
    c["two_step_alphas"] = lambda: gd_steps(30, 40, 20, alphas=(0.2, 0.1), seed=3, **CPU)
    c["two_step_lrs_reuse"] = lambda: gd_steps(20, 25, 15, lrs=(2.0, 0.5), reuse_batch=True,
                                               target="He2", activation="relu", seed=BIG,
                                               **CPU)
    c["two_step_diverge"] = lambda: gd_steps(5, 5, 5, lrs=(1e200, 1e200),
                                             activation="quadratic", seed=0, **CPU)
    return c


def _flatten(prefix: str, obj: Any, out: dict[str, np.ndarray]) -> None:
    if obj is None:
        out[prefix] = np.array("None")
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            val = getattr(obj, f.name)
            if f.name == "meta":
                meta = {k: v for k, v in val.items() if k != "wall_time_s"}
                out[f"{prefix}.meta"] = np.array(json.dumps(meta, sort_keys=True, default=str))
            else:
                _flatten(f"{prefix}.{f.name}", val, out)
    elif isinstance(obj, dict):
        for k, val in obj.items():
            _flatten(f"{prefix}[{k}]", val, out)
    elif isinstance(obj, (list, tuple)) and not all(np.isscalar(x) for x in obj):
        for i, val in enumerate(obj):
            _flatten(f"{prefix}[{i}]", val, out)
    else:
        out[prefix] = np.asarray(obj)


def dump(folder: Path) -> None:
    """Run every case and write ``folder/<case>.npz``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, call in cases().items():
        out: dict[str, np.ndarray] = {}
        try:
            _flatten("record", call(), out)
        except DivergenceError as err:
            out["diverged_step"] = np.asarray(err.step)
            out["message"] = np.array(str(err))
            _flatten("partial", err.record, out)
        np.savez(folder / f"{name}.npz", **out)
        print(name, "diverged at" if "diverged_step" in out else "ok",
              out.get("diverged_step", ""), flush=True)


def compare(a: Path, b: Path) -> int:
    """Compare two dumps bit for bit; print every difference; return the number of them."""
    bad = 0
    names = sorted({p.name for p in a.glob("*.npz")} | {p.name for p in b.glob("*.npz")})
    for name in names:
        if not (a / name).exists() or not (b / name).exists():
            print(f"{name}: only in one dump")
            bad += 1
            continue
        x, y = np.load(a / name), np.load(b / name)
        for key in sorted(set(x.files) | set(y.files)):
            if key not in x.files or key not in y.files:
                print(f"{name}: {key} only in one dump")
                bad += 1
                continue
            u, w = x[key], y[key]
            if key == "message":
                if str(u) != str(w):
                    print(f"{name}: message changed\n  - {u}\n  + {w}")
                continue
            same = (u.dtype == w.dtype and u.shape == w.shape
                    and u.tobytes() == w.tobytes())
            if not same:
                print(f"{name}: {key} differs ({u.dtype}{u.shape} vs {w.dtype}{w.shape})")
                bad += 1
    print(f"{len(names)} cases compared, {bad} differences in arrays, steps or meta")
    return bad


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "dump":
        dump(Path(sys.argv[2]))
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(1 if compare(Path(sys.argv[2]), Path(sys.argv[3])) else 0)
    else:
        sys.exit(__doc__)
