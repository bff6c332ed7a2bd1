"""Put a simulated trajectory and the exact theory on the same (t, k) points."""

from __future__ import annotations

import numpy as np
import pandas as pd

from specdyn.settings import AlignedSetting, PowerLawSetting, Setting
from specdyn.sim.trajectory import Trajectory


def theory_spectra(traj: Trajectory, setting: Setting) -> np.ndarray:
    """``theory.rho`` at the trajectory's checkpoint times and ranks ``k = 1..D``,
    sorted decreasing per checkpoint (the theory's order is already decreasing;
    sorting makes the rank comparison explicit), shape ``(n, D)``."""
    from specdyn import theory

    D = traj.D
    if isinstance(setting, PowerLawSetting):
        setting = setting.with_D(D)
    elif isinstance(setting, AlignedSetting) and setting.D != D:
        raise ValueError(f"setting has D = {setting.D} modes but the trajectory has {D}")
    k = np.arange(1, D + 1, dtype=np.float64)
    rho = theory.rho(setting, k[None, :], traj.times[:, None])
    return np.sort(rho, axis=1)[:, ::-1]


def theory_agreement(traj: Trajectory, setting: Setting) -> pd.DataFrame:
    """Per checkpoint, how far the simulated spectrum is from ``theory.rho``.

    Compares rank ``k`` of the simulated spectrum with the theory's ``rho_k(t)``
    for every rank with a positive simulated eigenvalue (with ``M < D`` samples
    only ``M`` are nonzero).

    Returns
    -------
    DataFrame
        Columns ``step, t, median_abs_log, max_abs_log, n_modes``, where the
        statistics are over modes of ``|log(rho_sim / rho_theory)|``.
    """
    th = theory_spectra(traj, setting)
    sim = traj.spectra
    med, mx, nm = [], [], []
    for i in range(len(traj)):
        ok = sim[i] > 0
        err = np.abs(np.log(sim[i, ok] / th[i, ok]))
        med.append(float(np.median(err)))
        mx.append(float(err.max()))
        nm.append(int(ok.sum()))
    return pd.DataFrame({"step": traj.steps, "t": traj.times, "median_abs_log": med,
                         "max_abs_log": mx, "n_modes": nm})
