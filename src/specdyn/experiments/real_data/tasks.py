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

The linear student trains on ``patches``, ``blur`` and ``digits`` (the ReLU student and
the SGD networks: :mod:`~specdyn.experiments.real_data.networks`); the others give the
theory, the exact reference and the misalignment measures only.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from specdyn.experiments.real_data.config import (
    BLUR_REGIMES,
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
    raise ValueError(f"task must be one of {', '.join(VALIDATION_TASKS)}, got {task!r}")


def regimes_of(task: str) -> dict[str, Regime]:
    """The regimes the linear student trains in on a task (none: the task gives the theory,
    the exact reference and the misalignment measures in feature learning only)."""
    if task == "blur":
        return dict(BLUR_REGIMES)
    if task in ("patches", "digits"):
        return dict(REGIMES)
    return {}


def run_task(cfg: RealDataConfig, task: str) -> tuple[DataStudy, DataStudy, str]:
    """The task's studies at the config's sizes: with the linear student in its regimes
    (the first; ``None`` for a task without one), the misalignment check's (feature
    learning, no network), and its preprocessing text."""
    X, Y, text, kmax = load(cfg, task)
    common: dict[str, Any] = {"kmax": kmax, "checkpoints": cfg.checkpoints,
                              "t_factor": cfg.t_factor, "seed": cfg.seed, "drop_constant": True}
    fl = {"feature-learning": REGIMES["feature-learning"]}
    regs = regimes_of(task)
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
    """The misalignment measures of a task beside the aligned theory's error: the max over
    checkpoints of the median over modes ``1..kmax`` of ``|log rho_reference /
    rho_theory|`` in feature learning (the misalignment effect)."""
    m = st.regimes["feature-learning"][1]["linear"]
    assert m.reference is not None
    err = np.abs(np.log(m.reference.rho / m.rho_theory))[:, :st.kmax]
    return {"task": task, "D": st.dec.D, "P": st.dec.P, "M": st.dec.M, "kmax": st.kmax,
            "alpha": st.fits.alpha.exponent, "beta": st.fits.beta,
            **{k: float(x) for k, x in st.measures.items()},
            "error": float(np.max(np.median(err, axis=1)))}
