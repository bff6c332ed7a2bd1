"""real-data's tasks: the data sets, and per task the study (theory, exact reference,
full-batch students) as tidy tables.

Seven tasks (:data:`~specdyn.experiments.real_data.config.VALIDATION_TASKS`), each a
:func:`~specdyn.study.study` of its ``(X, Y)``:

- ``patches``: 10 x 10 grey patches -> the patch shifted 1 px (``beta`` near 0);
- ``blur``, ``blur2``: the same patches -> the patches of the image blurred by a
  Gaussian of ``blur`` (1 px) and ``blur2`` (2 px) (``beta`` about 0.8 and 1.5);
- ``digits``: 8 x 8 digits -> one-hot labels (rank 9: misaligned beyond rank 9);
- ``text``: character-bigram frequencies of Python's docs -> the 32 most common
  characters' frequencies (rank 32);
- ``aligned``, ``rotated``: Gaussian inputs with ``lambda_k ~ k^-1.2`` and a linear
  teacher ``mu_k ~ k^-0.6`` in the input's eigenbasis (aligned) or in an independent
  random basis (rotated), ``M = 8 D`` samples.

Two more real tasks where the paper's model applies (:data:`MODEL_TASKS`: ``P = D`` and a
target nearly aligned with the input's eigenbasis, because the input is a noisy copy of
the target), each at ``model_task_seeds`` seeds (task ``name`` at the config's seed,
``name@s<j>`` at seed ``+ j``):

- ``denoise``: the 10 x 10 patches plus white pixel noise of ``denoise_noise`` times the
  patches' rms pixel standard deviation (per-patch mean removed) -> the clean patch. The
  Wiener filter is diagonal in the patches' eigenbasis, so the teacher is aligned up to
  sampling; ``mu_k = (lambda_k^clean / lambda_k)^2`` falls where the noise dominates
  (``beta > 0``).
- ``text-denoise``: a second modality: the character-bigram frequencies of one half of a
  ``2 x text_half_chunk``-character chunk of Python's docs -> those of the whole chunk
  (the mean of its two halves' frequencies); the input is a noisy estimate of the target.
  Seed ``j`` takes the half ``j mod 2``.

The linear student trains on ``patches``, ``blur``, ``digits`` and the model tasks named
in ``model_task_networks`` (the ReLU student:
:mod:`~specdyn.experiments.real_data.students`; the SGD networks:
:mod:`~specdyn.experiments.real_data.networks`); the others give the theory, the exact
reference and the misalignment measures only.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from specdyn.experiments.real_data.config import (
    BLUR_REGIMES,
    MODEL_TASKS,
    REGIMES,
    VALIDATION_TASKS,
    RealDataConfig,
)
from specdyn.settings import Regime
from specdyn.study import DataStudy, study

#: Exponents of the synthetic tasks' power laws (lambda_k ~ k^-alpha, mu_k ~ k^-beta).
SYNTHETIC_ALPHA, SYNTHETIC_BETA = 1.2, 0.6
#: Characters in the text task's target.
TEXT_CHARS = 32

def task_seed(cfg: RealDataConfig, task: str) -> tuple[str, int]:
    """``(base task, seed)`` of a task name: ``name@s<j>`` is ``name`` at ``cfg.seed + j``."""
    base, _, j = task.partition("@s")
    return base, cfg.seed + (int(j) if j else 0)


def model_task_names(cfg: RealDataConfig) -> list[str]:
    """Every model task at every seed of ``model_task_seeds``, in run order."""
    return [t if j == 0 else f"{t}@s{j}" for t in MODEL_TASKS
            for j in range(cfg.model_task_seeds)]


def _denoise(cfg: RealDataConfig, seed: int) -> tuple[np.ndarray, np.ndarray, str]:
    from specdyn.data import image_patches
    from specdyn.sim.protocol import derive_seed

    clean = image_patches(cfg.patch, cfg.patches_M, 0, seed)
    rms = float(np.sqrt(np.mean(np.var(clean.X, axis=0))))
    rng = np.random.default_rng(derive_seed(seed, "real-data", "denoise"))
    noise = rng.standard_normal(clean.X.shape) * (cfg.denoise_noise * rms)
    X = clean.X + (noise - noise.mean(axis=1, keepdims=True))
    return X - X.mean(axis=0), np.array(clean.X), (
        f"{clean.preprocessing}; input = the patch plus white pixel noise of "
        f"{cfg.denoise_noise:g} times the rms pixel standard deviation (per-patch mean "
        "removed, centred), target = the clean patch")


def _text_denoise(cfg: RealDataConfig, seed: int) -> tuple[np.ndarray, np.ndarray, str]:
    from specdyn.data import text_ngrams

    d = text_ngrams(2, cfg.text_D, chunk=cfg.text_half_chunk)
    n = d.M // 2
    halves = np.asarray(d.X)[:2 * n].reshape(n, 2, -1)
    X, Y = halves[:, seed % 2], halves.mean(axis=1)
    return X - X.mean(axis=0), Y - Y.mean(axis=0), (
        f"{d.preprocessing}; pairs of consecutive chunks: input = the frequencies of half "
        f"{seed % 2 + 1} of a {2 * cfg.text_half_chunk}-character chunk, target = the mean "
        f"of both halves' (the whole chunk's, but for the bigram across the halves), {n} "
        "chunks")


def _synthetic(cfg: RealDataConfig, rotated: bool) -> tuple[np.ndarray, np.ndarray, str]:
    from specdyn.data import PowerLawTeacher
    from specdyn.settings import FEATURE_LEARNING

    D = cfg.synthetic_D
    s = FEATURE_LEARNING.setting(alpha=SYNTHETIC_ALPHA, beta=SYNTHETIC_BETA).with_D(D)
    teacher = PowerLawTeacher(s, rotation="misaligned" if rotated else None, seed=cfg.seed)
    X, Y = teacher.sample(8 * D, seed=cfg.seed)
    what = ("teacher in an independent random basis" if rotated else
            "teacher in the input's eigenbasis")
    return X, Y, (f"{8 * D} Gaussian samples, D = {D}, lambda_k ~ k^-{SYNTHETIC_ALPHA}, "
                  f"mu_k ~ k^-{SYNTHETIC_BETA}, {what}")


def load(cfg: RealDataConfig, task: str) -> tuple[np.ndarray, np.ndarray, str, int]:
    """``(X, Y, preprocessing, kmax)`` of one task."""
    from specdyn.data import digits, image_patches, text_ngrams

    kp = cfg.kmax_patches
    if task in ("patches", "blur", "blur2"):
        d = (image_patches(cfg.patch, cfg.patches_M, 1, cfg.seed) if task == "patches" else
             image_patches(cfg.patch, cfg.patches_M, seed=cfg.seed, target="blur",
                           blur=cfg.blur if task == "blur" else cfg.blur2))
        assert d.Y is not None
        return d.X, d.Y, d.preprocessing, kp
    if task == "digits":
        d = digits(cfg.digits_M, cfg.seed)
        assert d.Y is not None
        return d.X, d.Y, d.preprocessing, cfg.kmax_digits
    if task == "text":
        d = text_ngrams(2, cfg.text_D, chars=TEXT_CHARS)
        assert d.Y is not None
        return d.X, d.Y, d.preprocessing, min(cfg.text_D // 4, 30)
    if task in ("aligned", "rotated"):
        X, Y, text = _synthetic(cfg, task == "rotated")
        return X, Y, text, max(8, cfg.synthetic_D // 4)
    base, seed = task_seed(cfg, task)
    if base == "denoise":
        return (*_denoise(cfg, seed), kp)
    if base == "text-denoise":
        return (*_text_denoise(cfg, seed), min(cfg.text_D // 4, 30))
    raise ValueError(f"task must be one of {', '.join(VALIDATION_TASKS + MODEL_TASKS)}, got "
                     f"{task!r}")


def regimes_of(task: str) -> dict[str, Regime]:
    """The regimes the linear student trains in on a task (none: the task gives the theory,
    the exact reference and the misalignment measures in feature learning only)."""
    if task == "blur":
        return dict(BLUR_REGIMES)
    if task in ("patches", "digits"):
        return dict(REGIMES)
    return {}


def trains(cfg: RealDataConfig, task: str) -> bool:
    """Whether the linear student trains on ``task``."""
    base = task.partition("@s")[0]
    return bool(regimes_of(task)) or base in cfg.model_task_networks


def run_task(cfg: RealDataConfig, task: str) -> tuple[DataStudy, DataStudy, str]:
    """The task's studies at the config's sizes: with the linear student in its regimes
    (the first; ``None`` for a task without one), the misalignment check's (feature
    learning, no network), and its preprocessing text."""
    X, Y, text, kmax = load(cfg, task)
    common: dict[str, Any] = {"kmax": kmax, "checkpoints": cfg.checkpoints,
                              "t_factor": cfg.t_factor, "seed": task_seed(cfg, task)[1],
                              "drop_constant": True}
    fl = {"feature-learning": REGIMES["feature-learning"]}
    regs = regimes_of(task) or (fl if trains(cfg, task) else {})
    if set(regs) >= set(fl):  # the trained study holds the check's regime: one study
        trained = study(X, Y, regimes=regs, train=("linear",), N=cfg.N, progress=True,
                        **common)
        return trained, trained, text
    check = study(X, Y, regimes=fl, **common)
    if not regs:
        return check, check, text
    trained = study(X, Y, regimes=regs, train=("linear",), N=cfg.N, progress=True, **common)
    return trained, check, text


def _tagged(df: pd.DataFrame, task: str) -> pd.DataFrame:
    return df.assign(task=task)[["task", *df.columns]]


def task_tables(st: DataStudy, task: str) -> dict[str, pd.DataFrame]:
    """The task's rows of the tables ``dynamics``, ``modes``, ``fits`` and ``regions``."""
    dyn = st.dynamics_table()
    reg = st.regions_table()
    return {"dynamics": _tagged(dyn, task), "modes": _tagged(st.modes_table(), task),
            "fits": _tagged(st.fits_table(), task), "regions": _tagged(reg, task)}


def validation_row(st: DataStudy, task: str) -> dict[str, Any]:
    """The misalignment measures of a task beside the aligned theory's error (the max over
    checkpoints of the median over modes ``1..kmax`` of ``|log rho_reference /
    rho_theory|`` in feature learning: the misalignment effect), and the two exponents of
    the exact reference in feature learning (:func:`spectrum_row`)."""
    m = st.regimes["feature-learning"][1]["linear"]
    assert m.reference is not None
    err = np.abs(np.log(m.reference.rho / m.rho_theory))[:, :st.kmax]
    return {"task": task, "D": st.dec.D, "P": st.dec.P, "M": st.dec.M, "kmax": st.kmax,
            "alpha": st.fits.alpha.exponent, "beta": st.fits.beta,
            **{k: float(x) for k, x in st.measures.items()},
            "error": float(np.max(np.median(err, axis=1))), **spectrum_row(st, m)}


def spectrum_row(st: DataStudy, m: Any) -> dict[str, Any]:
    """The exact reference's two exponents over ``kmin..kmax``, at their peak and at the end:
    ``mode_*`` of the per-input-mode diagonal ``lambda_k (U^T G^w U)_kk`` (mode order) and
    ``spectrum_*`` of the representation's spectrum (eigenvalues of ``Sigma^(1/2) G^w
    Sigma^(1/2)``, by rank: the spectrum the paper defines and a tracker measures); they
    coincide for an aligned teacher. ``rank_C``: the rank of ``C = X^T Y / M``, the most
    eigenvalues learning can lift; ``window_exceeds_rank`` where ``kmax > rank_C`` (past the
    rank, the spectrum is the initial tail)."""
    from specdyn.measure import mode_exponents

    a_mode = st.exponents(m.reference.rho)
    a_spec = mode_exponents(m.reference.spectrum, st.kmin, st.kmax)
    rank = int(np.linalg.matrix_rank(st.dec.coeffs))
    return {"rank_C": rank, "window_exceeds_rank": bool(st.kmax > rank),
            "mode_peak": float(np.nanmax(a_mode)), "mode_end": float(a_mode[-1]),
            "spectrum_peak": float(np.nanmax(a_spec)), "spectrum_end": float(a_spec[-1])}


def rank_warning(row: dict[str, Any]) -> str | None:
    """One line where the paper's ``P >= D`` premise fails or the fit window passes rank(C)
    (``None`` otherwise)."""
    if row["P"] >= row["D"] and not row["window_exceeds_rank"]:
        return None
    return (f"P = {row['P']} < D = {row['D']}: rank(C) = {row['rank_C']}, so at most "
            f"{row['rank_C']} eigenvalues of the representation are learned; the fit window "
            f"2..{row['kmax']} {'exceeds' if row['window_exceeds_rank'] else 'is within'} "
            "the rank, and the per-mode diagonal's exponent is not the spectrum's (the "
            "paper's broad evolution needs P >= D)")
