"""The record of a training run: spectra, Gram diagonals and loss at checkpoints."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from specdyn.sim.protocol import Record

__all__ = ["DIAGONALS", "Trajectory", "TrajectoryRows"]

#: The teacher-basis diagonals every network engine records, in order.
DIAGONALS = ("xi", "eta", "zeta")


@dataclass(frozen=True)
class Trajectory(Record):
    """Checkpoints of one training run (host numpy arrays, float64).

    Attributes
    ----------
    times
        ``(n,)`` theory time ``t = step * dt`` of each checkpoint.
    steps
        ``(n,)`` integer step counts (for gradient flow, ``t / dt``).
    loss
        ``(n,)`` training loss ``(1/2M) sum_m ||f(x_m) - y_m||^2`` (population
        loss ``(1/2) E||f - y||^2`` when ``M`` is infinite).
    series
        Named spectra, each ``(n, D)`` in decreasing order along axis 1. Linear
        networks store ``"preact"``: the nonzero eigenvalues of
        ``H H^T / (M N)``, ``H = X W^T``, i.e. those of
        ``Sigma^(1/2) Gw Sigma^(1/2)`` (padded with zeros to ``D`` when ``M < D``).
    diagonals
        Named ``(n, D)`` per-mode quantities in the teacher basis (mode order
        ``k = 1..D``, not sorted). Linear networks store ``"xi"``, ``"eta"``,
        ``"zeta"``: diagonals of ``Gwa``, ``Gw``, ``Ga`` (``Gwa`` and ``Ga`` are
        zero-padded beyond ``P``).
    meta
        How the run was made: engine, method, N, M, dt, seed, dtype, device,
        wall time, and anything engine-specific.
    """

    times: np.ndarray
    steps: np.ndarray
    loss: np.ndarray
    series: dict[str, np.ndarray]
    diagonals: dict[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__post_init__()
        n = len(self.times)
        if len(self.steps) != n or len(self.loss) != n:
            raise ValueError("times, steps and loss must have the same length")
        for name, arr in {**self.series, **self.diagonals}.items():
            if arr.ndim != 2 or arr.shape[0] != n:
                raise ValueError(f"{name} must be (n_checkpoints, D), got shape {arr.shape}")

    @property
    def spectra(self) -> np.ndarray:
        """The main spectrum series (``"preact"`` if present, else the first), ``(n, D)``."""
        if "preact" in self.series:
            return self.series["preact"]
        return next(iter(self.series.values()))

    @property
    def D(self) -> int:
        """Number of modes (columns of the spectra)."""
        return int(self.spectra.shape[1])

    def __len__(self) -> int:
        return len(self.times)

    def to_frame(self) -> pd.DataFrame:
        """Tidy table with columns ``step, t, quantity, k, value``.

        ``quantity`` is a series name (``k`` = rank, 1-based), a diagonal name
        (``k`` = mode index, 1-based) or ``"loss"`` (``k = 0``).
        """
        frames = []
        n = len(self.times)
        for name, arr in {**self.series, **self.diagonals}.items():
            d = arr.shape[1]
            frames.append(pd.DataFrame({
                "step": np.repeat(self.steps, d),
                "t": np.repeat(self.times, d),
                "quantity": name,
                "k": np.tile(np.arange(1, d + 1), n),
                "value": arr.ravel(),
            }))
        frames.append(pd.DataFrame({"step": self.steps, "t": self.times, "quantity": "loss",
                                    "k": 0, "value": self.loss}))
        df = pd.concat(frames, ignore_index=True)
        df["quantity"] = df["quantity"].astype(str)
        df["step"] = df["step"].astype(np.int64)
        df["k"] = df["k"].astype(np.int64)
        return df


class TrajectoryRows:
    """The checkpoints of a network run as they are taken (float64 host arrays), and the
    :class:`Trajectory` of those taken so far: the rows every network recorder keeps
    (``train_linear``, ``train_two_layer``, ``train_deep_network``)."""

    def __init__(self, dt: float, series: Sequence[str], meta: Callable[[], dict[str, Any]],
                 diagonals: Sequence[str] = DIAGONALS) -> None:
        self.dt, self.meta = dt, meta
        self.steps: list[int] = []
        self.loss: list[float] = []
        self.series: dict[str, list[np.ndarray]] = {k: [] for k in series}
        self.diagonals: dict[str, list[np.ndarray]] = {k: [] for k in diagonals}

    def add(self, step: int, loss: float, series: dict[str, np.ndarray],
            diagonals: Sequence[np.ndarray] = ()) -> None:
        """One checkpoint: its step, loss, spectra (by name) and diagonals (in order)."""
        self.steps.append(int(step))
        self.loss.append(loss)
        for name, arr in series.items():
            self.series[name].append(arr)
        for name, arr in zip(self.diagonals, diagonals, strict=False):
            self.diagonals[name].append(arr)

    def trajectory(self) -> Trajectory:
        """The checkpoints recorded so far (none: empty arrays)."""
        steps = np.asarray(self.steps, dtype=np.int64)
        return Trajectory(times=steps * self.dt, steps=steps,
                          loss=np.asarray(self.loss, dtype=np.float64),
                          series={k: _stack(x) for k, x in self.series.items()},
                          diagonals={k: _stack(x) for k, x in self.diagonals.items()},
                          meta=self.meta())


def _stack(rows: list[np.ndarray]) -> np.ndarray:
    return np.stack(rows) if rows else np.zeros((0, 0))
