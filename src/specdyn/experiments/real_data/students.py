"""real-data's ReLU student with a random or a zero initial output, against its effective theory.

The mean-field ReLU student ``f(x) = A^T relu(W x) / (gamma0 N)`` (the paper's Appendix G
network) on a data set's own ``(X, Y)``, by full-batch GD at the step and checkpoints of
:func:`~specdyn.study.study` for the ReLU student (the
effective theory ``gamma0 / c1``, ``c1 = 1/2``: its fastest mode rate sets ``dt = 0.5 /
b``, its learning time of mode ``kmax`` the run length), through the public engine
(:class:`~specdyn.sim.TwoLayerEngine`) and loop (:func:`specdyn.sim.run`).

Why a zero initial output. At finite width the mean-field student starts with a random
function of rms ``~ 1 / (gamma0 sqrt N)`` (for ``gamma0 = 0.05 S/theta_1`` and ``N = 128``
several times the target's rms): a lazy network spends its run unlearning that function,
which moves ``W`` in every direction, and the exponent drifts although the kernel theory,
which starts at ``f = 0``, predicts no drift (core Eq. 34). ``zero_output=True`` draws
``N/2`` units and pairs each with its copy carrying the opposite readout (``W = [W0; W0]``,
``A = [A0; -A0]``): the initial function is exactly 0 and ``W^T W / N`` is that of the
``N/2`` drawn units (a Wishart matrix of ``N/2`` degrees of freedom), so only the initial
output differs from the random start. ``zero_output=False`` is the engine's own start
(the same weights :func:`specdyn.sim.train_two_layer` draws: a test checks the two runs
are identical).

Recorded per checkpoint, float64, in the data's eigenbasis (the inputs are
``(X - mean) U``, as :class:`~specdyn.data.DataTeacher` gives them): ``rho_k = lambda_k
(W^T W / N)_kk`` (the per-mode diagonal, mode order), the representation's spectrum
(eigenvalues of ``Lambda^(1/2) (W^T W / N) Lambda^(1/2)``, decreasing: those of the
pre-activation kernel ``H H^T / (M N)``) and the training loss minus the least-squares
loss.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from specdyn._repr import array_result
from specdyn.experiments.real_data.config import (
    BLUR_REGIMES,
    REGIMES,
    RELU_LAZY,
    RELU_LAZY_PAPER,
    RealDataConfig,
)
from specdyn.study import study

__all__ = ["ZERO_OUTPUT", "StudentRun", "relu_runs", "relu_student", "student_grid"]

#: The lazy width series' regime names: the random start and the zero initial output.
ZERO_OUTPUT = "lazy-zero-output"


@array_result
class StudentRun:
    """One ReLU student run (the module docstring).

    Attributes
    ----------
    N, zero_output, dt
        Width, start, step.
    steps, t
        Checkpoint steps (``0`` first) and times ``steps * dt``.
    rho, spectrum
        ``(n_t, D)``: per-mode diagonal (mode order) and the representation's
        eigenvalues (decreasing).
    loss
        ``(n_t,)``: training loss minus the least-squares loss.
    rho_theory, loss_theory
        The effective theory at ``t`` (per mode; its excess loss).
    """

    N: int
    zero_output: bool
    dt: float
    steps: np.ndarray
    t: np.ndarray
    rho: np.ndarray
    spectrum: np.ndarray
    loss: np.ndarray
    rho_theory: np.ndarray
    loss_theory: np.ndarray


def student_grid(eff: Any, kmax: int, t_factor: float, checkpoints: int
                 ) -> tuple[float, np.ndarray, np.ndarray]:
    """``(dt, steps, t)`` of a student whose theory is ``eff``: ``dt = 0.5 / b`` (``b`` the
    fastest mode rate), ``t_end = t_factor * max_{k <= kmax} t_learn(k)``, log-spaced
    checkpoints (the rule of :func:`~specdyn.study.study`)."""
    from specdyn import theory
    from specdyn.schedule import Schedule

    b = float(np.max(theory.mode_rate(eff, np.arange(1, eff.D + 1))))
    t_end = t_factor * float(np.max(theory.t_learn(eff, np.arange(1, kmax + 1))))
    dt = 0.5 / b
    total = max(int(np.ceil(t_end / dt)), checkpoints)
    steps = Schedule.log(checkpoints).resolve(total)
    return dt, steps, steps * dt


class _Recorder:
    """The checkpoints of a student run: ``rho_k``, the spectrum, the excess loss."""

    def __init__(self, engine: Any, lam: np.ndarray, X: Any, Y: Any, least: float) -> None:
        self.engine, self.lam, self.X, self.Y, self.least = engine, lam, X, Y, least
        self.half = np.sqrt(lam)
        self.rows: list[tuple[int, np.ndarray, np.ndarray, float]] = []

    def snapshot(self, state: Any, step: int) -> None:
        from specdyn.measure import symmetric_eigenvalues

        W = state.W.double()
        gw = (W.T @ W / W.shape[0]).numpy()
        loss, _ = self.engine.evaluate(state, self.X, self.Y, False)
        spec = symmetric_eigenvalues(self.half[:, None] * gw * self.half[None, :],
                                     symmetrize=True)
        self.rows.append((step, self.lam * np.diagonal(gw), np.asarray(spec), loss - self.least))

    def finish(self, outcome: Any) -> list[tuple[int, np.ndarray, np.ndarray, float]]:
        return self.rows


def relu_student(dec: Any, X: Any, Y: Any, regime: Any, N: int, *, kmax: int,
                 checkpoints: int, t_factor: float, seed: int, zero_output: bool,
                 progress: bool = False) -> StudentRun:
    """Train the mean-field ReLU student of width ``N`` on the data (the module docstring).

    Parameters
    ----------
    dec
        :func:`specdyn.data.decompose_data` of ``(X, Y)``.
    X, Y
        The data ``dec`` was built from.
    regime
        A :class:`~specdyn.settings.Regime` (``sigma_w``,
        ``gamma0 = gamma0_ratio * S / theta_1``, ``sigma_a``).
    N
        Width (even when ``zero_output``).
    kmax, checkpoints, t_factor
        The run length and checkpoints (:func:`student_grid`).
    seed
        The run's seed (weights: the engine's ``init`` stream).
    zero_output
        Start from antisymmetric pairs (initial output exactly 0) instead of the engine's
        random start.
    """
    import torch

    from specdyn import theory
    from specdyn.data import DataTeacher, aligned_setting
    from specdyn.models.activations import get_activation
    from specdyn.sim import (
        RunOptions,
        Streams,
        TwoLayerEngine,
        get_parameterization,
        init_weights,
        run,
    )

    if zero_output and N % 2:
        raise ValueError(f"N must be even for zero_output (pairs of units), got {N}")
    S = regime.sigma_w**2 + regime.sigma_a**2
    s = aligned_setting(dec, regime.sigma_w, regime.sigma_a,
                        regime.gamma0_ratio * S / float(np.sqrt(dec.mu[0])))
    eff = theory.effective_setting(s, "relu")
    dt, steps, t = student_grid(eff, kmax, t_factor, checkpoints)
    x, y = DataTeacher(s, dec, X, Y).sample(dec.M)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    par = get_parameterization("mean-field", N, s.gamma0)
    eng = TwoLayerEngine(get_activation("relu"), par, dt, dec.M, sizes=(N, dec.D, dec.P),
                         init_scale=(s.sigma_w, s.sigma_a), dtype=torch.float64,
                         device=torch.device("cpu"), data=(xt, yt),
                         loss_scale=0.5 * float(np.trace(dec.syy)))
    start = None
    if zero_output:
        gen = Streams.derive(eng, seed).init
        W0, A0 = init_weights(N // 2, dec.D, dec.P, s.sigma_w, s.sigma_a, par, gen,
                              torch.float64, torch.device("cpu"))
        start = eng.state_of(torch.cat([W0, W0]), torch.cat([A0, -A0]))
    least = 0.5 * float(np.trace(dec.syy) - np.sum(dec.coeffs**2 / dec.lam[:, None]))
    rows = run(eng, _Recorder(eng, np.asarray(dec.lam), xt, yt, least), steps=int(steps[-1]),
               options=RunOptions(seed=seed, progress=progress), checkpoints=steps,
               start=start, desc=f"ReLU N={N}" + (", f0 = 0" if zero_output else ""))
    k = np.arange(1, dec.D + 1)
    return StudentRun(
        N=N, zero_output=zero_output, dt=dt, steps=np.array([r[0] for r in rows]),
        t=np.array([r[0] for r in rows]) * dt, rho=np.array([r[1] for r in rows]),
        spectrum=np.array([r[2] for r in rows]), loss=np.array([r[3] for r in rows]),
        rho_theory=np.asarray(theory.rho(eff, k, t[:, None])),
        loss_theory=np.asarray(theory.loss(eff, t)))


def _rows(run: StudentRun, regime: str, kmax: int) -> pd.DataFrame:
    """Tidy rows ``regime, N, step, t, k, quantity, value`` of a run: ``rho_sim``,
    ``rho_theory`` (per mode), ``spectrum_sim`` (by rank; ranks ``1..kmax`` kept),
    ``loss_sim``, ``loss_theory`` (``k = 0``)."""
    D = run.rho.shape[1]
    n = run.t.size
    frames = []
    for q, v in (("rho_sim", run.rho), ("rho_theory", run.rho_theory),
                 ("spectrum_sim", run.spectrum)):
        frames.append(pd.DataFrame({"step": np.repeat(run.steps, D), "t": np.repeat(run.t, D),
                                    "k": np.tile(np.arange(1, D + 1), n), "quantity": q,
                                    "value": v.ravel()}))
    for q, v in (("loss_sim", run.loss), ("loss_theory", run.loss_theory)):
        frames.append(pd.DataFrame({"step": run.steps, "t": run.t, "k": 0, "quantity": q,
                                    "value": v}))
    df = pd.concat(frames, ignore_index=True)
    keep = (df.quantity != "spectrum_sim") | (df.k <= kmax)
    return df[keep].assign(regime=regime, N=run.N)[
        ["regime", "N", "step", "t", "k", "quantity", "value"]]


def relu_data(cfg: RealDataConfig, target: str) -> tuple[np.ndarray, np.ndarray]:
    """The ReLU student's patches (``relu_patch``, ``relu_M``; at the quick size those of the
    ``patches`` and ``blur`` tasks): ``target`` ``"shift"`` or ``"blur"``."""
    from specdyn.data import image_patches

    d = (image_patches(cfg.relu_patch, cfg.relu_M, 1, cfg.seed) if target == "shift" else
         image_patches(cfg.relu_patch, cfg.relu_M, seed=cfg.seed, target="blur",
                       blur=cfg.blur))
    assert d.Y is not None
    return d.X, d.Y


def relu_runs(cfg: RealDataConfig) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The ReLU student on its patches (:func:`relu_data`): feature learning on the shifted
    target (task ``relu-patches``) and Region IIIa on the blurred one (``relu-blur``) at
    ``relu_N`` (rows of ``real-data.parquet``, through
    :func:`~specdyn.study.study`); its lazy runs on the shifted
    target (rows of ``real-data_widths.parquet``): at the paper's lazy ``gamma0`` at
    ``relu_N`` (``lazy-paper``) and at specdyn's for each width of ``relu_widths``, from the
    random start (``lazy``) and from a zero initial output (:data:`ZERO_OUTPUT`); and the
    two data sets' fits (tasks ``relu-patches``, ``relu-blur``)."""
    from specdyn.data import decompose_data as decompose

    kmax = cfg.relu_kmax
    common: dict[str, Any] = {  # the ReLU student is compared with the effective theory
        "kmax": kmax, "checkpoints": cfg.checkpoints, "t_factor": cfg.t_factor,
        "train": ("relu",), "seed": cfg.seed, "drop_constant": True, "progress": True,
        "reference": False, "relu_N": cfg.relu_N}
    main, fits = [], []
    data = {"relu-patches": relu_data(cfg, "shift"), "relu-blur": relu_data(cfg, "blur")}
    for task, regimes in (("relu-patches", {"feature-learning": REGIMES["feature-learning"]}),
                          ("relu-blur", {"IIIa": BLUR_REGIMES["IIIa"]})):
        st = study(*data[task], regimes=regimes, **common)
        dyn = st.dynamics_table()
        main.append(dyn[dyn.student == "relu"].assign(task=task))
        fits.append(st.fits_table().assign(task=task))
    X, Y = data["relu-patches"]
    dec = decompose(X, Y)
    kw: dict[str, Any] = {"kmax": kmax, "checkpoints": cfg.checkpoints,
                          "t_factor": cfg.t_factor, "seed": cfg.seed, "progress": True}
    runs = [_rows(relu_student(dec, X, Y, RELU_LAZY_PAPER, cfg.relu_N, zero_output=False,
                               **kw), "lazy-paper", kmax)]
    for N in cfg.relu_widths:
        for zero, name in ((False, "lazy"), (True, ZERO_OUTPUT)):
            runs.append(_rows(relu_student(dec, X, Y, RELU_LAZY, N, zero_output=zero, **kw),
                              name, kmax))
    relu = pd.concat(main, ignore_index=True)
    fit_rows = pd.concat(fits, ignore_index=True)
    return (relu[["task", *relu.columns.drop("task")]],
            pd.concat(runs, ignore_index=True),
            fit_rows[["task", *fit_rows.columns.drop("task")]])
