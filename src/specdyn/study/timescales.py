"""When each mode is learned, and the rank-``P`` picture: what the anchors of the field
give on a user's data.

Per input mode ``k`` (:func:`learning_times`):

- the aligned theory's ``t_learn(k)``: ``xi_k`` reaches 90 % of ``gamma0 theta_k``
  (:func:`specdyn.theory.t_learn`, the paper's Eq. 182, closed form);
- the exact reference's: the first time its overlap ``xi_k = |(G^wa)_k|`` (the norm of
  row ``k``) reaches 90 % of its own end point ``gamma0 |theta_k|`` (the flow ends at the
  least-squares teacher ``Theta``, whose row ``k`` has norm ``sqrt(mu_k)``), interpolated
  linearly in ``log t`` between checkpoints (``inf``: not learned by ``t_end``);
- the scale of a mode-by-mode picture in the manner of Saxe, McClelland and Ganguli
  (2014, "Exact solutions to the nonlinear dynamics of learning in deep linear neural
  networks"): ``gamma0 / |c_k|``, a mode's strength in the input-output covariance.

Per singular mode ``r`` of ``C`` (:func:`cross_mode_rows`), the rank-``P`` picture: a
target of rank ``r < D`` drives only ``r`` directions. The singular value ``s_r``, its
share of ``|C|_F^2``, the input mode it weighs most and how many it spreads over, its
Saxe scale ``gamma0 / s_r``, and the representation's ``r``-th eigenvalue at ``t_end``
in the exact reference against its initial value: ``r`` learned eigenvalues, then the
initial tail ``sigma_w^2 lambda_k``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["LEARNED", "crossing_times", "cross_mode_rows", "learning_times"]

#: The fraction of its end point at which a mode counts as learned (Eq. 182's 90 %).
LEARNED = 0.9


def crossing_times(t: np.ndarray, values: np.ndarray, level: np.ndarray) -> np.ndarray:
    """Per column ``k``: the first time ``values[:, k]`` reaches ``level[k]``, linear in
    ``log t`` between the checkpoints ``t`` (linear in ``t`` from ``t = 0``); ``inf`` if
    never, NaN where ``level`` is not positive."""
    t = np.asarray(t, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    lv = np.asarray(level, dtype=np.float64)
    out = np.full(v.shape[1], np.inf)
    out[~(lv > 0)] = np.nan
    above = v >= lv[None, :]
    for k in np.flatnonzero((lv > 0) & above.any(axis=0)):
        i = int(np.argmax(above[:, k]))
        if i == 0:
            out[k] = t[0]
            continue
        v0, v1 = v[i - 1, k], v[i, k]
        f = (lv[k] - v0) / (v1 - v0) if v1 > v0 else 1.0
        if t[i - 1] > 0:
            out[k] = float(np.exp(np.log(t[i - 1]) + f * (np.log(t[i]) - np.log(t[i - 1]))))
        else:
            out[k] = t[i - 1] + f * (t[i] - t[i - 1])
    return out


def learning_times(m: Any, dec: Any) -> dict[str, np.ndarray]:
    """``t_theory``, ``t_reference`` (NaN without a reference) and ``t_saxe`` per input
    mode (the module docstring) of one :class:`~specdyn.study.ModelStudy`."""
    from specdyn import theory

    s = m.setting
    k = np.arange(1, s.D + 1)
    c_norm = np.sqrt((dec.coeffs * dec.coeffs).sum(axis=1))
    with np.errstate(divide="ignore"):
        saxe = np.where(c_norm > 0, s.gamma0 / np.where(c_norm > 0, c_norm, 1.0), np.inf)
    ref = np.full(s.D, np.nan)
    if m.reference is not None:
        ref = crossing_times(m.t, m.reference.xi, LEARNED * s.gamma0 * np.sqrt(s.mu_values))
    return {"k": k, "t_theory": np.asarray(theory.t_learn(s, k), dtype=np.float64),
            "t_reference": ref, "t_saxe": saxe}


def cross_mode_rows(m: Any, dec: Any) -> dict[str, np.ndarray]:
    """The rank-``P`` picture of one model (the module docstring): per singular mode ``r``
    of ``C``, ``s``, ``share``, ``top_input_mode``, ``input_spread``, ``t_saxe`` and, with
    a reference, ``eig_end_reference`` and ``eig_initial`` (``sigma_w^2 lambda_r``)."""
    cm = dec.cross_modes()
    r = cm.rank
    out: dict[str, np.ndarray] = {
        "r": np.arange(1, r + 1), "s": cm.s, "share": cm.s**2 / float(np.sum(cm.s**2)),
        "top_input_mode": cm.top_input_mode(), "input_spread": cm.input_spread(),
        "t_saxe": m.setting.gamma0 / cm.s}
    if m.reference is not None:
        out["eig_end_reference"] = m.reference.spectrum[-1, :r]
        out["eig_initial"] = m.setting.sigma_w**2 * dec.lam[:r]
    return out
