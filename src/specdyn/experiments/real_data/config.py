"""real-data's config: the two regimes, the data sets' sizes, the students' widths, the
fit windows and run length, and the ``--full`` and test sizes.
"""

from __future__ import annotations

from dataclasses import dataclass

from specdyn import _validate as v

#: (sigma_w, gamma0 / (S / theta_1)) of the two regimes; sigma_a = 1.
REGIMES = {"feature-learning": (0.1, 2.0), "lazy": (1.0, 0.05)}


@dataclass(frozen=True)
@v.constrained_fields(patch=v.Int(4, 64), patches_M=v.Int(2), digits_M=v.Int(100, 1797),
                      N=v.SIZE, relu_N=v.SIZE, relu=v.Bool(), checkpoints=v.Int(4),
                      kmax_patches=v.Int(4), kmax_digits=v.Int(4), t_factor=v.Real(1.0),
                      text_D=v.Int(16, 512), seed=v.SEED, figure=v.Bool())
class RealDataConfig:
    """Quick default: 10 x 10 patches (``M = 1000``), all 1797 digits, ``N = 1024``.

    ``t_factor`` sets the run length: ``t_end = t_factor * max_k t_learn(k)`` over the
    fit window ``2..kmax`` (the theory's learning time of the slowest fitted mode,
    :func:`specdyn.theory.t_learn`), per task, regime and student; ``dt = 0.5 / b_1``
    (the fastest mode's rate, stable GD). ``relu`` adds the ReLU student on the
    patches (width ``relu_N``).
    """

    patch: int = 10
    patches_M: int = 1000
    digits_M: int = 1797
    N: int = 1024
    relu_N: int = 128
    relu: bool = True
    checkpoints: int = 24
    kmax_patches: int = 25
    kmax_digits: int = 20
    t_factor: float = 3.0
    text_D: int = 128
    seed: int = 0
    figure: bool = True

    def __post_init__(self) -> None:
        if self.patches_M % 2:
            raise ValueError(f"patches_M must be even (half from each image), got "
                             f"{self.patches_M}")
        if self.kmax_patches > self.patch**2 - 1:
            raise ValueError(f"kmax_patches must be <= patch**2 - 1 = {self.patch**2 - 1} "
                             f"(the patch's modes), got {self.kmax_patches}")
        if self.kmax_digits > 60:
            raise ValueError(f"kmax_digits must be <= 60 (the digits' nonzero modes), got "
                             f"{self.kmax_digits}")


def full_real_data() -> RealDataConfig:
    """The paper-sized run (``--full``): 16 x 16 patches (``M = 20000``), ``N = 4096``."""
    return RealDataConfig(patch=16, patches_M=20000, N=4096, relu_N=1024, checkpoints=40,
                          kmax_patches=64, kmax_digits=30)


def tiny() -> RealDataConfig:
    """The small config of the tests (seconds)."""
    return RealDataConfig(patch=10, patches_M=1000, digits_M=600, N=512, relu_N=128,
                          checkpoints=12, kmax_patches=25, kmax_digits=12, text_D=64)
