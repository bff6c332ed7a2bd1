"""The system of a network run: the setting and the teacher its data come from.

Every entry point that trains a network on a power-law teacher
(:func:`~specdyn.sim.train_linear`, :func:`~specdyn.sim.train_two_layer`,
:func:`~specdyn.sim.train_deep_network`, :func:`~specdyn.sim.train_weight_decay`)
takes a setting (``sigma_w``, ``sigma_a``, ``gamma0``, the spectra) and optionally a
teacher; :class:`System` checks them against each other once and draws the run's data
from its data stream (:meth:`~specdyn.sim.inputs.RunInputs.seed_of`), the same numbers
in every engine of one seed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from specdyn import _validate as v
from specdyn.data.teacher import PowerLawTeacher
from specdyn.settings import AlignedSetting, PowerLawSetting, Setting
from specdyn.sim.gram import Stats
from specdyn.sim.inputs import RunInputs

__all__ = ["SETTING", "TEACHER", "System"]

#: The declarations of a network run's system arguments (the entry points' ``setting`` and
#: ``teacher``).
SETTING = v.Instance(PowerLawSetting, AlignedSetting)
TEACHER = v.Instance(PowerLawTeacher, optional=True)


@dataclass(frozen=True)
class System:
    """A setting and its teacher, checked against each other (:meth:`of`).

    Attributes
    ----------
    setting
        ``sigma_w``, ``sigma_a``, ``gamma0`` and the spectra.
    teacher
        The data model (``PowerLawTeacher(setting)`` unless given): its ``lambda_k``,
        ``mu_k`` and bases define the data.
    """

    setting: Setting
    teacher: PowerLawTeacher

    @classmethod
    def of(cls, setting: Setting, teacher: PowerLawTeacher | None = None) -> System:
        """The system of ``setting`` and ``teacher`` (default ``PowerLawTeacher(setting)``:
        aligned, ``P = D``); a ``PowerLawSetting`` needs ``D`` set unless a teacher is
        given, whose ``D`` must match the setting's."""
        if isinstance(setting, AlignedSetting):
            D = setting.D
        elif setting.D is not None:
            D = setting.D
        elif teacher is None:
            raise ValueError("setting.D must be set (or a teacher given) to simulate")
        else:
            D = teacher.D
        if teacher is None:
            teacher = PowerLawTeacher(setting if isinstance(setting, AlignedSetting)
                                      else setting.with_D(D))
        elif teacher.D != D:
            raise ValueError(f"teacher.D = {teacher.D} does not match the setting's D = {D}")
        return cls(setting, teacher)

    @property
    def D(self) -> int:
        """Input dimension (modes)."""
        return self.teacher.D

    @property
    def P(self) -> int:
        """Output dimension."""
        return self.teacher.P

    def sample(self, M: int, inputs: RunInputs) -> tuple[np.ndarray, np.ndarray]:
        """``M`` samples ``(X, Y)`` from the run's data stream, host float64."""
        return self.teacher.sample(M, inputs.seed_of("data"))

    def sample_torch(self, M: int, inputs: RunInputs) -> tuple[Any, Any]:
        """:meth:`sample` as tensors in the run's dtype on its device (drawn in float64,
        then cast)."""
        return self.teacher.sample_torch(M, seed=inputs.seed_of("data"), dtype=inputs.dtype,
                                         device=inputs.device)

    def stats(self, data: tuple[np.ndarray, np.ndarray] | None) -> Stats:
        """The statistics ``(X^T X/M, X^T Y/M, Y^T Y/M)`` of host data, or the population's
        (``data`` ``None``)."""
        if data is None:
            sigma, c = self.teacher.population()
            return Stats.build(sigma, c, self.teacher.output_second_moment())
        x, y = data
        M = x.shape[0]
        return Stats.build(x.T @ x / M, x.T @ y / M, y.T @ y / M)

    def meta(self) -> dict[str, Any]:
        """The record's description of the system: ``D``, ``P``, the setting, the teacher."""
        return {"D": self.D, "P": self.P, "setting": self.setting.to_dict(),
                "teacher": self.teacher.to_dict()}
