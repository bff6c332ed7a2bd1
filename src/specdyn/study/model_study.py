"""One model in one regime on a data set: the aligned theory, the exact reference, a GD
step, and optionally a trained network.

Times: ``t_end = t_factor * max_{k <= kmax} t_learn(k)`` (the theory's learning time of
the slowest fitted mode, :func:`specdyn.theory.t_learn`), ``checkpoints`` log-spaced GD
steps; the theory and the reference are evaluated at exactly the steps' times ``step * dt``.

The step: ``dt = 0.5 / b`` with ``b`` the aligned theory's fastest mode rate
(:func:`specdyn.theory.mode_rate`, over every mode: ``mu_k`` of data is not monotone),
divided by the smallest integer ``m`` that brings ``dt`` below ``0.5 /`` the exact
reference's rate bound (``ReferenceFlow.rate``: the largest eigenvalues of the flow's
Grams, with the data's ``lambda_1``), so that the checkpoints keep their times; GD is
stable for ``dt b < 2`` (``dt = 1`` diverged at step 4 on ``Y = X A``).

The reference where the theory is lazy (``reference="auto"``): when every mode's learned
part stays below :data:`LAZY_SHARE` of its initial one in the aligned theory (``R_k(inf)
<= 0.02``, the lazy side of Eq. 33) and no network is trained, the exact reference is
not integrated: the representation then stays within ``log(1 + 0.02)`` of ``sigma_w^2
lambda_k`` in the theory, and where the reference was integrated anyway on the tested
data sets it was within that share of the theory (measured: below 1e-4 on
blurred patches and a rotated teacher, ``tests/study``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from specdyn._repr import array_result

__all__ = ["LAZY_SHARE", "REFERENCE_POLICIES", "ModelStudy"]

#: The learned share ``R_k(inf)`` below which ``reference="auto"`` skips the reference.
LAZY_SHARE = 0.02
#: ``study``'s ``reference``: ``True``/``"always"``, ``False``/``"never"``, ``"auto"``.
REFERENCE_POLICIES = ("always", "never", "auto")


@array_result
class ModelStudy:
    """One model (``linear``, or ``relu`` with its effective setting) in one regime.

    Attributes
    ----------
    setting
        The :class:`~specdyn.settings.AlignedSetting` of the theory (for ``relu``:
        :func:`specdyn.theory.effective_setting`, ``gamma0 / c1``).
    dt
        The GD step (the module docstring).
    steps
        Checkpoint steps (``0`` first); ``t = steps * dt``.
    t
        Checkpoint times.
    rho_theory
        ``(n_t, D)``: :func:`specdyn.theory.rho` on the data's ``lambda_k``, ``mu_k``.
    loss_theory
        ``(n_t,)``: the aligned theory's loss above the least-squares loss.
    regions
        ``(n_t, D)``: :func:`specdyn.theory.region` labels.
    max_share
        ``max_k R_k(inf)``: the largest learned share of the aligned theory (Eq. 33).
    reference
        The exact reference at ``t`` (``None`` when not integrated).
    reference_skipped
        Why the reference was not integrated (``""`` when it was or was not asked for).
    network
        The trained network's :class:`~specdyn.sim.Trajectory` (``None`` untrained).
    """

    setting: Any
    dt: float
    steps: np.ndarray
    t: np.ndarray
    rho_theory: np.ndarray
    loss_theory: np.ndarray
    regions: np.ndarray
    max_share: float = float("nan")
    reference: Any = None
    reference_skipped: str = ""
    network: Any = None

    @property
    def rho_network(self) -> np.ndarray | None:
        """``(n_t, D)``: ``lambda_k (U^T G^w U)_kk`` of the trained network (mode order)."""
        if self.network is None:
            return None
        return np.asarray(self.setting.lam_values * self.network.diagonals["eta"])

    @property
    def spectrum_network(self) -> np.ndarray | None:
        """``(n_t, D)``: the eigenvalues of the trained network's ``Sigma^1/2 G^w Sigma^1/2``
        (decreasing), the representation's spectrum."""
        if self.network is None:
            return None
        return np.asarray(self.network.series["preact"][:, :self.setting.D])

    def with_network(self, network: Any) -> ModelStudy:
        """This model with its trained network."""
        return ModelStudy(setting=self.setting, dt=self.dt, steps=self.steps, t=self.t,
                          rho_theory=self.rho_theory, loss_theory=self.loss_theory,
                          regions=self.regions, max_share=self.max_share,
                          reference=self.reference, reference_skipped=self.reference_skipped,
                          network=network)


def _grid(s: Any, kmax: int, t_factor: float, checkpoints: int, b: float
          ) -> tuple[float, np.ndarray, np.ndarray]:
    """``(dt, steps, t)``: ``dt = 0.5 / b``, enough steps to reach ``t_end``."""
    from specdyn import theory
    from specdyn.schedule import Schedule

    t_end = t_factor * float(np.max(theory.t_learn(s, np.arange(1, kmax + 1))))
    dt = 0.5 / b
    total = max(int(np.ceil(t_end / dt)), checkpoints)
    steps = Schedule.log(checkpoints).resolve(total)
    return dt, steps, steps * dt


def model_study(s: Any, coeffs: np.ndarray, kmax: int, t_factor: float, checkpoints: int, *,
                reference: str, training: bool, progress: bool = False,
                announce: Callable[[], None] | None = None) -> ModelStudy:
    """Theory, reference (by the policy ``reference``, the module docstring) and the step
    of one setting, without training; ``announce`` is called before the reference is
    integrated."""
    from specdyn import theory

    k = np.arange(1, s.D + 1)
    b = float(np.max(theory.mode_rate(s, k)))
    dt, steps, t = _grid(s, kmax, t_factor, checkpoints, b)
    share = float(np.max(theory.region_quantities(s, k, np.inf)["R"]))
    skipped = ""
    if reference == "never":
        ref = None
    elif reference == "auto" and share <= LAZY_SHARE and not training:
        ref = None
        skipped = (f"lazy: every mode's learned part stays below {share:.2g} of its initial "
                   f"one in the aligned theory (<= {LAZY_SHARE}), so the reference equals "
                   f"it within that share")
    else:
        if announce is not None:
            announce()
        ref = theory.exact_reference(s, coeffs, t, progress=progress)
        # a faster rate on the data: a step m times smaller, the same times
        m = max(1, math.ceil(float(np.max(ref.rate)) / b - 1e-9))
        dt, steps = dt / m, steps * m
    return ModelStudy(setting=s, dt=dt, steps=steps, t=t, rho_theory=theory.rho(s, k, t[:, None]),
                      loss_theory=theory.loss(s, t), regions=np.asarray(
                          theory.region(s, k[None, :], t[:, None])), max_share=share,
                      reference=ref, reference_skipped=skipped)


def trained(m: ModelStudy, s: Any, dec: Any, x: np.ndarray, y: np.ndarray, student: str,
            width: int, seed: int, progress: bool) -> ModelStudy:
    """``m`` with its network trained by full-batch GD at ``m.dt`` to ``m.steps[-1]``."""
    from specdyn.data import DataTeacher
    from specdyn.schedule import Schedule
    from specdyn.sim import train_linear, train_two_layer

    teacher = DataTeacher(s, dec, x, y)
    ck = Schedule.at(m.steps)
    total = int(m.steps[-1])
    if student == "linear":
        traj = train_linear(s, width, None, total, dt=m.dt, teacher=teacher, checkpoints=ck,
                            seed=seed, progress=progress)
    else:
        traj = train_two_layer(s, "relu", N=width, M=dec.M, steps=total, dt=m.dt,
                               teacher=teacher, checkpoints=ck, record=("preact",), seed=seed,
                               progress=progress)
    return m.with_network(traj)
