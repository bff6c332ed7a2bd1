"""The linear figures' configs: fig2 (the paper's Fig. 2) and finite-size, their declared
constraints and ``--full`` sizes.

The defaults are the quick size, :func:`full_fig2` and :func:`full_finite_size` the
paper-sized one.
"""

from __future__ import annotations

from dataclasses import dataclass

from specdyn import _validate as v
from specdyn.experiments.paper_setting import PaperSettingConfig

#: Ranks of the t = 0 exponent fit: the top of the spectrum, where a sample covariance of
#: M >= 8 D samples moves a level by a few percent (its tail bends with D/M).
INIT_KMIN, INIT_KMAX = 2, 16
_INIT_FIT = f"the t = 0 exponent fit uses ranks {INIT_KMIN}..{INIT_KMAX}"


@dataclass(frozen=True)
@v.constrained_fields(D=v.Int(INIT_KMAX, why=_INIT_FIT), N=v.SIZE,
                      M=v.Int(INIT_KMAX, why=_INIT_FIT), steps=v.SIZE, dt=v.POSITIVE,
                      checkpoints=v.SIZE, n_curves=v.Int(2),
                      dtype=v.Choice("float32", "float64"),
                      spread_seeds=v.Int(2, why="a spread needs several seeds"))
class Fig2Config(PaperSettingConfig):
    """Fig. 2. Defaults: a laptop-sized version; ``--full``: the paper's sizes.

    ``checkpoints`` is a count of log-spaced steps (``Schedule.log``), as everywhere.
    ``spread_seeds`` more seeds (other than the judged one) are trained through the
    transient (to ``4 t_learn(2)``): the size the judged run's deviation from the theory
    should have.
    """

    D: int = 128
    N: int = 2048
    M: int = 1024
    steps: int = 10_000
    dt: float = 1.0
    checkpoints: int = 60
    n_curves: int = 8
    dtype: str = "float64"
    spread_seeds: int = 6



def full_fig2() -> Fig2Config:
    """fig2 at the paper's size (``--full``)."""
    # Appendix G: D = P = 512, N = 8192, M = 4096; 3e4 steps so mode 512 has learned.
    # float32 halves the cost of the O(D^3) step; spectra are taken in float64.
    return Fig2Config(D=512, N=8192, M=4096, steps=30_000, dtype="float32")


@dataclass(frozen=True)
@v.constrained_fields(sizes=v.Tuple(v.SIZE, min_len=2, why="two sizes at least, to fit a slope"),
                      t_max=v.POSITIVE, checkpoints=v.Int(2), n_seeds=v.SIZE)
class FiniteSizeConfig(PaperSettingConfig):
    """Agreement with theory vs width and samples. Defaults: quick; ``--full``: larger.

    ``checkpoints`` is a count of log-spaced steps (``Schedule.log``), as everywhere;
    step 0 is not recorded (the agreement is averaged over the dynamics, ``t > 0``).
    """

    sizes: tuple[int, ...] = (64, 128, 256, 512, 1024, 2048, 4096)
    t_max: float = 1000.0
    checkpoints: int = 12
    #: 12: the error level's claim reads an RMS over the seeds' cells, whose spread over
    #: base seeds falls like 1/sqrt(seeds) (log-sd 0.039 for M at 12, 0.047 at 8).
    n_seeds: int = 12



def full_finite_size() -> FiniteSizeConfig:
    """finite-size at a larger size (``--full``): D = 64, sizes to 16384, 12 seeds."""
    return FiniteSizeConfig(D=64, sizes=(64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384),
                            t_max=2000.0)
