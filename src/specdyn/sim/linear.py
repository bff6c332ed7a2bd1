"""Exact finite-width, finite-sample training of the two-layer linear network.

The student is ``f(x) = A^T W x / (gamma0 N)`` (mean-field scaling) with
``W`` ``N x D``, ``A`` ``N x P``, initial entries ``N(0, sigma_w^2)`` and
``N(0, sigma_a^2)``, trained by full-batch gradient descent on
``L = (1/2M) sum_m ||f(x_m) - y_m||^2`` with learning rate ``nu = N`` and step
``dt``, so that one step advances the theory's time by ``dt`` (``t = step * dt``).

Two engines:

- ``engine="gram"`` evolves the Gram matrices ``Gw = W^T W/N``, ``Ga = A^T A/N``,
  ``Gwa = W^T A/N`` by the exact Gram-space GD update (eight ``D``-sized
  matrix products a step, independent of ``N`` and ``M``), or integrates their
  gradient flow (``method="flow"``).
- ``engine="weights"`` trains ``W`` and ``A`` in torch with hand-written
  gradients; the reference the Gram engine is tested against.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from specdyn import _validate as v
from specdyn._progress import progress as _progress
from specdyn.data.teacher import PowerLawTeacher
from specdyn.settings import AlignedSetting, Setting
from specdyn.sim import _gram
from specdyn.sim._run import (
    DivergenceError,
    resolve_checkpoints,
    run_seeds,
    setting_dim,
)
from specdyn.sim.trajectory import Trajectory

_CHECK_EVERY = 100  # steps between divergence checks (one host sync each)
_BLOWUP = 1e6  # loss growth factor treated as divergence
_FLOW_RTOL = 1e-10




def train_linear(
    setting: Setting,
    N: int | None,
    M: int | None,
    steps: int,
    dt: float = 1.0,
    method: str = "gd",
    engine: str = "gram",
    checkpoints: int | Sequence[int] | np.ndarray | None = None,
    seed: int = 0,
    dtype: Any = None,
    device: Any = None,
    teacher: PowerLawTeacher | None = None,
    progress: bool = True,
) -> Trajectory:
    """Train the two-layer linear network and record spectra at checkpoints.

    Parameters
    ----------
    setting
        The system (``lambda_k``, ``mu_k``, ``sigma_w``, ``sigma_a``, ``gamma0``);
        a ``PowerLawSetting`` needs ``D`` set unless a ``teacher`` is given.
    N
        Width, or ``None`` for infinite width (Grams start at ``sigma_w^2 I``,
        ``sigma_a^2 I``, ``0``).
    M
        Number of training samples, or ``None`` for the population limit
        (``Sigma = Lambda``, ``C = Lambda Theta``).
    steps
        Number of GD steps; the run covers ``t in [0, steps * dt]``.
    dt
        Step size; learning rate ``nu = N``, one step advances ``t`` by ``dt``.
    method
        ``"gd"`` (discrete full-batch GD, exact) or ``"flow"`` (gradient flow,
        ``engine="gram"`` only). The flow integrates the decoupled per-mode ODE
        with an implicit solver (Radau, ``rtol = 1e-10``) when the problem is
        diagonal in the teacher basis (``N = None``, ``M = None``, aligned
        teacher) and the full Gram ODE with explicit DOP853 otherwise (which
        needs many steps at late times: the flow is stiff). The flow is always
        float64 on the CPU.
    engine
        ``"gram"`` (exact Gram-space update, cost O(D^3) a step) or ``"weights"``
        (weight-space torch GD with hand-written gradients; needs finite ``N``;
        with finite ``M`` it uses the data matrix each step, with ``M = None``
        the population gradient ``G = Lambda Theta - Lambda W^T A/(gamma0 N)``).
    checkpoints
        ``None`` (60 log-spaced steps and 0), an int count of log-spaced
        steps, or explicit integer steps in ``[0, steps]``.
    seed
        Seeds the data sample and the initial weights (independent streams);
        the same seed gives the same data and weights in both engines.
    dtype, device
        Torch dtype (default float64) and device (default CUDA if present) of
        the GD loop. Spectra are always computed in float64 on the host.
    teacher
        Data model (default ``PowerLawTeacher(setting)``: aligned, ``P = D``).
        Its ``lambda_k``, ``mu_k`` and bases define the data; the setting supplies
        ``sigma_w``, ``sigma_a`` and ``gamma0``. Its ``D`` must match the setting's.
    progress
        Show a progress bar for long runs.

    Returns
    -------
    Trajectory
        ``series["preact"]``: eigenvalues of ``Sigma^(1/2) Gw Sigma^(1/2)`` (the
        nonzero eigenvalues of ``H H^T/(MN)``), decreasing; ``diagonals``
        ``xi, eta, zeta`` in the teacher basis; the training loss.

    Raises
    ------
    ValueError
        Bad arguments (before any work).
    DivergenceError
        The run diverged; the message names the first bad step.
    """
    D = setting_dim(setting, teacher)
    if N is not None:
        N = v.positive_int("N", N)
    if M is not None:
        M = v.positive_int("M", M)
    steps = v.positive_int("steps", steps)
    dt = v.positive("dt", dt)
    method = v.choice("method", method, ("gd", "flow"))
    engine = v.choice("engine", engine, ("gram", "weights"))
    seed = v.positive_int("seed", seed, minimum=0)
    if engine == "weights" and N is None:
        raise ValueError("N must be a finite width for engine='weights' (N=None needs 'gram')")
    if engine == "weights" and method == "flow":
        raise ValueError("method='flow' is only available with engine='gram'")
    ck = resolve_checkpoints(checkpoints, steps)
    if teacher is None:
        teacher = PowerLawTeacher(setting if isinstance(setting, AlignedSetting)
                                  else setting.with_D(D))
    from specdyn._torch import resolve_device, resolve_dtype

    tdtype = resolve_dtype(dtype)
    tdevice = resolve_device(device)

    start = time.perf_counter()
    data_seed, weight_seed = run_seeds(seed)
    P = teacher.P
    if M is None:
        sigma, c = teacher.population()
        stats = _gram.Stats.build(sigma, c, teacher.output_second_moment())
        xy = None
    else:
        x, y = teacher.sample(M, data_seed)
        stats = _gram.Stats.build(x.T @ x / M, x.T @ y / M, y.T @ y / M)
        xy = (x, y)
    run = _Run(setting, teacher, stats, ck, dt)
    if method == "flow":
        diagonal = _flow(run, N, weight_seed)
        extra: dict[str, Any] = {"flow_solver": "Radau (per mode)" if diagonal else "DOP853",
                                 "rtol": _FLOW_RTOL}
        dtype_name, device_name = "float64", "cpu"
    else:
        if engine == "gram":
            _gram_gd(run, N, weight_seed, tdtype, tdevice, progress)
        else:
            assert N is not None
            _weights_gd(run, N, xy, weight_seed, tdtype, tdevice, progress)
        extra = {}
        dtype_name, device_name = str(tdtype).replace("torch.", ""), str(tdevice)
    meta = {"engine": engine, "method": method, "N": N, "M": M, "D": D, "P": P,
            "dt": dt, "seed": seed, "dtype": dtype_name, "device": device_name,
            "wall_time": time.perf_counter() - start, "setting": setting.to_dict(),
            "teacher": teacher.to_dict(), **extra}
    return run.trajectory(meta)


class _Run:
    """Checkpoint recorder shared by the engines (float64 host measurements)."""

    def __init__(self, setting: Setting, teacher: PowerLawTeacher, stats: _gram.Stats,
                 ck: np.ndarray, dt: float) -> None:
        self.setting, self.teacher, self.stats, self.ck, self.dt = setting, teacher, stats, ck, dt
        self.gamma0 = setting.gamma0
        self.identity = teacher.rotation is None
        self.rows: list[tuple[int, float, np.ndarray, tuple[np.ndarray, ...]]] = []

    def record(self, step: int, gw: np.ndarray, ga: np.ndarray, gwa: np.ndarray,
               loss: float | None = None) -> None:
        if loss is None:
            loss = _gram.loss_from_grams(self.stats, gwa, self.gamma0)
        diag = _gram.teacher_diagonals(gw, ga, gwa, self.teacher.basis_x, self.teacher.basis_y,
                                       self.identity)
        self.rows.append((step, loss, _gram.spectrum(self.stats, gw), diag))

    def trajectory(self, meta: dict[str, Any]) -> Trajectory:
        steps = np.array([r[0] for r in self.rows], dtype=np.int64)
        return Trajectory(
            times=steps * self.dt,
            steps=steps,
            loss=np.array([r[1] for r in self.rows]),
            series={"preact": np.stack([r[2] for r in self.rows])},
            diagonals={name: np.stack([r[3][i] for r in self.rows])
                       for i, name in enumerate(("xi", "eta", "zeta"))},
            meta=meta,
        )


def _diverged(loss: float, ref: float) -> bool:
    return not np.isfinite(loss) or loss > _BLOWUP * ref


def _divergence_error(step: int, dt: float, loss: float) -> DivergenceError:
    return DivergenceError(
        f"training diverged at step {step} (t = {step * dt:g}, loss = {loss:.3g}); "
        f"the step is too large for this setting: try a smaller dt (e.g. dt={dt / 4:g})"
    )


def _gram_gd(run: _Run, N: int | None, weight_seed: int, tdtype: Any, tdevice: Any,
             show: bool) -> None:
    from specdyn._torch import torch

    t = torch()
    s = run.setting
    D, P = run.stats.c.shape
    grams0 = _gram.initial_grams(N, D, P, s.sigma_w, s.sigma_a, weight_seed)

    # Work in the eigenbasis U of Sigma (an exact orthogonal change of variables):
    # Gw -> U^T Gw U, Gwa -> U^T Gwa, C -> U^T C; Sigma Gwa becomes a row scaling.
    evals, U = np.linalg.eigh(run.stats.sigma)
    evals = np.clip(evals, 0.0, None)

    def dev(a: np.ndarray) -> Any:  # a copy: the step updates the Grams in place
        return t.tensor(a, dtype=tdtype, device=tdevice)

    def host(g: tuple[Any, ...]) -> _gram.Grams:
        gw, ga, gwa = (x.detach().to("cpu", t.float64).numpy() for x in g)
        return U @ gw @ U.T, ga.copy(), U @ gwa

    c_u = U.T @ run.stats.c
    step_fn = _gram.make_gd_step(dev(evals), dev(c_u), run.gamma0, run.dt)
    evals_d, c_d, syy_tr = dev(evals).reshape(-1, 1), dev(c_u), float(np.trace(run.stats.syy))
    inv_g = 1.0 / run.gamma0

    def loss_dev(gwa: Any) -> float:
        b = gwa * inv_g
        return float(0.5 * syy_tr - (c_d * b).sum() + 0.5 * (evals_d * b * b).sum())

    grams = (dev(U.T @ grams0[0] @ U), dev(grams0[1]), dev(U.T @ grams0[2]))
    ref = max(_gram.loss_from_grams(run.stats, grams0[2], run.gamma0), 1e-12)
    ck = set(run.ck.tolist())
    steps = int(run.ck.max())
    if 0 in ck:
        run.record(0, *grams0)
    good, good_step = tuple(g.clone() for g in grams), 0
    for k in _progress(range(1, steps + 1), total=steps, desc="gram GD",
                       enabled=show and steps >= 2000):
        grams = step_fn(*grams)
        if k % _CHECK_EVERY == 0 or k in ck:
            loss = loss_dev(grams[2])
            if _diverged(loss, ref) or not bool(t.isfinite(grams[0]).all()):
                # replay from the last good state one step at a time to name the step
                g2 = good
                for j in range(good_step + 1, k + 1):
                    g2 = step_fn(*g2)
                    lj = loss_dev(g2[2])
                    if _diverged(lj, ref) or not bool(t.isfinite(g2[0]).all()):
                        raise _divergence_error(j, run.dt, lj)
                raise _divergence_error(k, run.dt, loss)
            # symmetrise away the roundoff asymmetry of the products
            grams = (0.5 * (grams[0] + grams[0].T), 0.5 * (grams[1] + grams[1].T), grams[2])
            good, good_step = tuple(g.clone() for g in grams), k
            if k in ck:
                run.record(k, *host(grams))


def _weights_gd(run: _Run, N: int, xy: tuple[np.ndarray, np.ndarray] | None, weight_seed: int,
                tdtype: Any, tdevice: Any, show: bool) -> None:
    from specdyn._torch import torch

    t = torch()
    s = run.setting
    D, P = run.stats.c.shape
    chunks = list(_gram.weight_chunks(N, D, P, s.sigma_w, s.sigma_a, weight_seed))
    W = t.cat([w for w, _ in chunks]).to(tdevice, tdtype)
    A = t.cat([a for _, a in chunks]).to(tdevice, tdtype)
    del chunks
    c = run.dt / run.gamma0
    scale = 1.0 / (run.gamma0 * N)
    if xy is not None:
        X = t.as_tensor(xy[0], dtype=tdtype, device=tdevice)
        Y = t.as_tensor(xy[1], dtype=tdtype, device=tdevice)
        M = X.shape[0]

        def grad_and_loss(W: Any, A: Any) -> tuple[Any, Any]:
            E = Y - (X @ W.T) @ A * scale  # residuals, M x P
            return X.T @ E / M, 0.5 * (E * E).sum() / M  # G = X^T E / M
    else:
        sigma = t.as_tensor(run.stats.sigma, dtype=tdtype, device=tdevice)
        cm = t.as_tensor(run.stats.c, dtype=tdtype, device=tdevice)
        syy_tr = float(np.trace(run.stats.syy))

        def grad_and_loss(W: Any, A: Any) -> tuple[Any, Any]:
            B = (W.T @ A) * scale
            SB = sigma @ B
            return cm - SB, 0.5 * syy_tr - (cm * B).sum() + 0.5 * (B * SB).sum()

    def grams_host() -> _gram.Grams:
        Wd, Ad = W.to("cpu", t.float64), A.to("cpu", t.float64)
        return (Wd.T @ Wd).numpy() / N, (Ad.T @ Ad).numpy() / N, (Wd.T @ Ad).numpy() / N

    ck = set(run.ck.tolist())
    steps = int(run.ck.max())
    _, loss0 = grad_and_loss(W, A)
    ref = max(float(loss0), 1e-12)
    for k in _progress(range(0, steps + 1), total=steps + 1, desc="weight GD",
                       enabled=show and steps >= 2000):
        G, loss = grad_and_loss(W, A)  # loss of the current (step-k) weights
        if k in ck or k % _CHECK_EVERY == 0:
            lk = float(loss)
            if _diverged(lk, ref) or not bool(t.isfinite(W).all()):
                raise _divergence_error(k, run.dt, lk)
            if k in ck:
                run.record(k, *grams_host(), loss=lk)
        if k == steps:
            break
        dW = A @ G.T  # uses the old A
        A.addmm_(W, G, alpha=c)  # A' = A + c W G
        W.add_(dW, alpha=c)  # W' = W + c A G^T


def _flow(run: _Run, N: int | None, weight_seed: int) -> bool:
    """Gradient flow of the Grams; returns whether the per-mode (diagonal) path was used."""
    s = run.setting
    D, P = run.stats.c.shape
    bx, by = run.teacher.basis_x, run.teacher.basis_y
    sig_b = bx.T @ run.stats.sigma @ bx
    c_b = bx.T @ run.stats.c @ by
    r = min(D, P)
    scale = max(np.abs(sig_b).max(), 1e-300)
    off_sig = np.abs(sig_b - np.diag(np.diagonal(sig_b))).max() / scale
    c_off = c_b.copy()
    c_off[np.arange(r), np.arange(r)] = 0.0
    off_c = np.abs(c_off).max() / max(np.abs(c_b).max(), 1e-300)
    diagonal = N is None and off_sig < 1e-12 and off_c < 1e-12
    times = run.ck * run.dt
    if diagonal:
        lam = np.diagonal(sig_b).copy()
        cdiag = np.zeros(D)
        cdiag[:r] = np.diagonal(c_b)[:r]
        init = (np.zeros(D), np.full(D, s.sigma_w**2), np.full(D, s.sigma_a**2))
        atol = 1e-14 * max(s.S, 1.0)
        states, _ = _gram.solve_flow_diagonal(lam, cdiag, run.gamma0, init, times,
                                              _FLOW_RTOL, atol)
        for step, st in zip(run.ck, states, strict=True):
            xi, eta, zeta = st
            gwa_b = np.zeros((D, P))
            gwa_b[np.arange(r), np.arange(r)] = xi[:r]
            ga_b = s.sigma_a**2 * np.eye(P)
            ga_b[np.arange(r), np.arange(r)] = zeta[:r]
            run.record(int(step), bx @ np.diag(eta) @ bx.T, by @ ga_b @ by.T, bx @ gwa_b @ by.T)
    else:
        grams0 = _gram.initial_grams(N, D, P, s.sigma_w, s.sigma_a, weight_seed)
        states3, _ = _gram.solve_flow_full(run.stats, run.gamma0, grams0, times, _FLOW_RTOL,
                                           1e-14 * max(s.S, 1.0))
        for step, g in zip(run.ck, states3, strict=True):
            run.record(int(step), *g)
    return diagonal
