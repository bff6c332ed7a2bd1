"""The per-mode comparison of a trained network with the theory and the exact reference, in
one call (the comparison every user of the data path makes after training)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["compare_modes"]


def compare_modes(traj: Any, setting: Any, coeffs: Any = None) -> pd.DataFrame:
    """Per mode and checkpoint: a trained network beside the theory and the exact reference.

    One call for the comparison every user of the data path makes: ``traj`` is a
    :class:`~specdyn.sim.Trajectory` of :func:`specdyn.sim.train_linear` or
    :func:`~specdyn.sim.train_two_layer` with a :class:`~specdyn.data.DataTeacher` (its
    recorded diagonals are in the data's eigenbasis), ``setting`` the theory's
    :class:`~specdyn.settings.AlignedSetting` (for a ReLU network,
    :func:`specdyn.theory.effective_setting`), ``coeffs`` the data's ``dec.coeffs`` for
    the exact reference (omitted: no reference columns).

    Returns
    -------
    DataFrame
        ``step, t, k, rho_network, rho_theory, log_network_theory`` and, with ``coeffs``,
        ``rho_reference, log_network_reference, log_reference_theory`` (the last: the
        misalignment effect), ``log_x_y = log(rho_x / rho_y)``.
    """
    from specdyn import theory
    from specdyn.settings import AlignedSetting

    if not isinstance(setting, AlignedSetting):
        raise ValueError(f"setting must be the data's AlignedSetting, got "
                         f"{type(setting).__name__}")
    eta = np.asarray(traj.diagonals["eta"], dtype=np.float64)
    if eta.shape[1] != setting.D:
        raise ValueError(f"setting has D = {setting.D} modes but the network {eta.shape[1]}")
    k = np.arange(1, setting.D + 1)
    t = np.asarray(traj.times, dtype=np.float64)
    net = setting.lam_values * eta
    th = theory.rho(setting, k, t[:, None])
    n = t.size
    cols: dict[str, Any] = {"step": np.repeat(traj.steps, setting.D), "t": np.repeat(t, setting.D),
                            "k": np.tile(k, n), "rho_network": net.ravel(),
                            "rho_theory": th.ravel()}
    with np.errstate(divide="ignore", invalid="ignore"):
        cols["log_network_theory"] = np.log(net / th).ravel()
        if coeffs is not None:
            ref = theory.exact_reference(setting, coeffs, t).rho
            cols["rho_reference"] = ref.ravel()
            cols["log_network_reference"] = np.log(net / ref).ravel()
            cols["log_reference_theory"] = np.log(ref / th).ravel()
    return pd.DataFrame(cols)
