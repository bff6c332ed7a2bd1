"""fig4's config: the sizes, the two regimes' settings, the student (activation,
parameterization, precision) and the fit range, and the ``--full`` size.
"""

from __future__ import annotations

from dataclasses import dataclass

from specdyn import _validate as v
from specdyn.models.activations import ACTIVATIONS
from specdyn.settings import FEATURE_LEARNING, LAZY, PowerLawSetting
from specdyn.sim.parameterization import PARAMETERIZATIONS


@dataclass(frozen=True)
@v.constrained_fields(D=v.SIZE, N=v.SIZE, M=v.SIZE, steps=v.SIZE, dt=v.POSITIVE, kmin=v.SIZE,
                      kmax=v.SIZE, alpha=v.POSITIVE, beta=v.POSITIVE, sigma_a=v.POSITIVE,
                      fl_sigma_w=v.POSITIVE, fl_gamma0_ratio=v.POSITIVE,
                      lazy_sigma_w=v.POSITIVE, lazy_gamma0_ratio=v.POSITIVE,
                      activation=v.Choice(*ACTIVATIONS),
                      parameterization=v.Choice(*PARAMETERIZATIONS), checkpoints=v.SIZE,
                      dtype=v.Choice("float32", "float64"),
                      precision=v.Choice("tf32", "bf16", optional=True), seed=v.SEED)
class Fig4Config:
    """Fig. 4. Defaults: a CPU-sized version (< 2 min); ``--full``: the paper's sizes (GPU).

    ``checkpoints`` is a count of log-spaced steps (``Schedule.log``), as everywhere.
    """

    D: int = 64
    N: int = 512
    M: int = 512
    steps: int = 3000
    dt: float = 1.0
    kmin: int = 2
    kmax: int = 24
    alpha: float = 1.0
    beta: float = 1.0
    sigma_a: float = 1.0
    fl_sigma_w: float = FEATURE_LEARNING.sigma_w
    fl_gamma0_ratio: float = FEATURE_LEARNING.gamma0_ratio
    lazy_sigma_w: float = LAZY.sigma_w
    lazy_gamma0_ratio: float = LAZY.gamma0_ratio
    activation: str = "relu"
    parameterization: str = "mean-field"
    checkpoints: int = 40
    dtype: str = "float32"
    device: str | None = None
    precision: str | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        # the fit range kmin..kmax against the sizes (device is free-form: resolved at run time)
        for name in ("M", "D"):  # name the user's size first when it is what cuts the range
            size = getattr(self, name)
            if size < self.kmax:
                raise ValueError(f"{name} = {size} is below kmax = {self.kmax}: the fit range "
                                 f"kmin..kmax needs kmax <= min(D, M); raise {name} or lower kmax")
        if not self.kmin + 2 <= self.kmax:
            raise ValueError(f"kmax must be >= kmin + 2 = {self.kmin + 2}, got {self.kmax}")

    def settings(self) -> dict[str, PowerLawSetting]:
        """The two runs, keyed by regime."""
        def paper(sigma_w: float, ratio: float) -> PowerLawSetting:
            return PowerLawSetting.paper(sigma_w, ratio, alpha=self.alpha, beta=self.beta,
                                         sigma_a=self.sigma_a, D=self.D)

        return {"feature-learning": paper(self.fl_sigma_w, self.fl_gamma0_ratio),
                "lazy": paper(self.lazy_sigma_w, self.lazy_gamma0_ratio)}


def full_fig4() -> Fig4Config:
    """The paper-sized run (``--full``, Appendix G): D = P = 512, N = 8192, M = 4096."""
    # Appendix G: D = P = 512, N = 8192, M = 4096. 1e4 steps (t = 1e4) lets the modes of
    # the fit range learn; ~1.7e11 flop a step, i.e. minutes on one GPU.
    return Fig4Config(D=512, N=8192, M=4096, steps=10_000, kmin=2, kmax=64, checkpoints=60)
