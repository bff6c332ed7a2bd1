"""Run plumbing shared by the simulators: checkpoints, seeds, sizes, divergence.

``train_linear`` and ``train_two_layer`` draw the same data and weight streams
from one seed and record at the same checkpoints, so that their runs can be
compared step for step; both use the helpers here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from specdyn import _validate as v
from specdyn.data.teacher import PowerLawTeacher
from specdyn.settings import AlignedSetting, PowerLawSetting, Setting


class DivergenceError(RuntimeError):
    """Training diverged (non-finite Grams/weights or a loss grown by more than 1e6x)."""


def default_checkpoints(steps: int, n: int = 60) -> np.ndarray:
    """``0`` and about ``n`` log-spaced steps in ``[1, steps]`` (always including ``steps``)."""
    n = v.positive_int("checkpoints", n)
    ck = np.unique(np.round(np.geomspace(1, steps, max(n - 1, 1))).astype(np.int64))
    return np.unique(np.concatenate([[0], ck, [steps]]))


def resolve_checkpoints(checkpoints: int | Sequence[int] | np.ndarray | None,
                        steps: int) -> np.ndarray:
    """Checkpoint steps from ``None`` (default log spacing), a count, or explicit steps."""
    if checkpoints is None:
        return default_checkpoints(steps)
    if isinstance(checkpoints, (int, np.integer)) and not isinstance(checkpoints, bool):
        return default_checkpoints(steps, int(checkpoints))
    arr = np.asarray(checkpoints)
    if arr.ndim != 1 or arr.size == 0 or not np.issubdtype(arr.dtype, np.number):
        raise ValueError("checkpoints must be None, an int count, or a 1-D list of steps")
    if not np.all(arr == np.round(arr)) or arr.min() < 0 or arr.max() > steps:
        raise ValueError(f"checkpoints must be integer steps in [0, steps={steps}]")
    return np.unique(arr.astype(np.int64))


def run_seeds(seed: int) -> tuple[int, int]:
    """Independent (data, weights) seeds derived from one run seed."""
    data_ss, weight_ss = np.random.SeedSequence(seed).spawn(2)
    return int(data_ss.generate_state(1)[0]), int(weight_ss.generate_state(1)[0])


def setting_dim(setting: Setting, teacher: PowerLawTeacher | None) -> int:
    """The number of modes ``D`` of a run, checking the setting against the teacher."""
    if isinstance(setting, AlignedSetting):
        D = setting.D
    elif isinstance(setting, PowerLawSetting):
        if setting.D is None:
            if teacher is None:
                raise ValueError("setting.D must be set (or a teacher given) to simulate")
            D = teacher.D
        else:
            D = setting.D
    else:
        raise ValueError(f"setting must be a PowerLawSetting or AlignedSetting, "
                         f"got {type(setting).__name__}")
    if teacher is not None:
        if not isinstance(teacher, PowerLawTeacher):
            raise ValueError(f"teacher must be a PowerLawTeacher, got {type(teacher).__name__}")
        if teacher.D != D:
            raise ValueError(f"teacher.D = {teacher.D} does not match the setting's D = {D}")
    return D
