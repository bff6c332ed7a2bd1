"""real-data's config: the tasks' sizes, the regimes, the students' widths, the real
networks, the fit windows and run length, and the ``--full`` and test sizes.
"""

from __future__ import annotations

from dataclasses import dataclass

from specdyn import _validate as v
from specdyn.settings import LAZY, Regime
from specdyn.study import REGIMES as REGIMES

# The regimes of the patches (shifted target) and the digits: REGIMES, the study's
# defaults (sigma_a = 1).
#: Regimes of the blurred target (beta about 0.8), chosen so that the theory on the data's
#: own spectra ends in one region across the fit window: Region IIIa (gamma0 theta_k < S,
#: learned part ~ k^-(alpha+beta); sigma_w = 0.01 keeps the initial part below it) and
#: Region IIIb (gamma0 theta_k > S: k^-(alpha+beta/2)), and lazy.
BLUR_REGIMES = {"IIIa": Regime(0.01, 0.3), "IIIb": Regime(0.1, 10.0), "lazy": Regime(1.0, 0.05)}
#: The ReLU student's lazy runs: specdyn's lazy setting (gamma0 = 0.05 S/theta_1, the width
#: series) and the paper's (Appendix G: gamma0 = 0.5 S/theta0, only mildly lazy).
RELU_LAZY = Regime(1.0, 0.05)
RELU_LAZY_PAPER = LAZY
#: The seven tasks of the misalignment check (all at the feature-learning regime).
VALIDATION_TASKS = ("patches", "blur", "blur2", "digits", "text", "aligned", "rotated")


@dataclass(frozen=True)
@v.constrained_fields(patch=v.Int(4, 64), patches_M=v.Int(100), digits_M=v.Int(100, 1797),
                      N=v.SIZE, relu_N=v.SIZE, relu_widths=v.Tuple(v.Int(2), min_len=2,
                                                                   increasing=True),
                      checkpoints=v.Int(8), kmax_patches=v.Int(4), kmax_digits=v.Int(4),
                      t_factor=v.Real(1.0), text_D=v.Int(16, 512), blur=v.Real(0.1, 8.0),
                      blur2=v.Real(0.1, 8.0), synthetic_D=v.Int(16, 512),
                      net_M=v.Int(200), net_N=v.Int(8), net_depth=v.Int(2, 3),
                      net_steps=v.Int(10), net_lr=v.Real(0.0, 1.0, lo_open=True),
                      net_batch=v.Int(2), cnn_channels=v.Int(2), cnn_lr=v.Real(
                          0.0, 1.0, lo_open=True), seed=v.SEED, figure=v.Bool())
class RealDataConfig:
    """Quick default: 10 x 10 patches (``M = 1000``), all 1797 digits, ``N = 1024``.

    ``t_factor`` sets the run length of the full-batch students: ``t_end = t_factor *
    max_k t_learn(k)`` over the fit window ``2..kmax`` (the theory's learning time of the
    slowest fitted mode, :func:`specdyn.theory.t_learn`), per task, regime and student;
    ``dt`` from the data's largest rates (:mod:`specdyn.study`).
    ``relu_widths``: the ReLU student's lazy width series. ``net_*``: the real networks (an
    SGD MLP with ``net_depth`` ReLU hidden layers of ``net_N`` units and a CNN with
    ``cnn_channels`` channels) on ``net_M`` blurred-target patches, a fifth held out.
    """

    patch: int = 10
    patches_M: int = 1000
    digits_M: int = 1797
    N: int = 1024
    relu_N: int = 128
    relu_widths: tuple[int, ...] = (128, 512)
    checkpoints: int = 24
    kmax_patches: int = 25
    kmax_digits: int = 20
    t_factor: float = 3.0
    text_D: int = 64
    blur: float = 1.0
    blur2: float = 2.0
    synthetic_D: int = 64
    net_M: int = 5000
    net_N: int = 256
    net_depth: int = 2
    net_steps: int = 1000
    net_lr: float = 0.02
    net_batch: int = 64
    cnn_channels: int = 16
    cnn_lr: float = 0.003
    seed: int = 0
    figure: bool = True

    def __post_init__(self) -> None:
        if self.patches_M % 2 or self.net_M % 2:
            raise ValueError(f"patches_M must be even (half from each image), got "
                             f"{self.patches_M}" if self.patches_M % 2 else
                             f"net_M must be even (half from each image), got {self.net_M}")
        if self.kmax_patches > self.patch**2 - 1:
            raise ValueError(f"kmax_patches must be <= patch**2 - 1 = {self.patch**2 - 1} "
                             f"(the patch's modes), got {self.kmax_patches}")
        if self.kmax_digits > 60:
            raise ValueError(f"kmax_digits must be <= 60 (the digits' nonzero modes), got "
                             f"{self.kmax_digits}")


def full_real_data() -> RealDataConfig:
    """The paper-sized run (``--full``): 16 x 16 patches (``M = 20000``), ``N = 4096``, the
    ReLU width series to 2048, three hidden layers.

    The networks' step sizes are lower than the quick ones: at these sizes the quick
    ``net_lr = 0.02`` diverged at SGD step 2019 (three hidden layers) and ``cnn_lr = 0.003``
    at step 6-7 (32 channels; seeds 0 and 1). Measured on the networks alone at this config,
    6000 steps, one thread: the MLP at 0.01 converges on seeds 0-3 (loss 70-82 -> 2.1-2.7;
    0.012 and 0.015 also on seed 0), the CNN at 0.0005 falls monotonically on seeds 0 and 1
    (67-86 -> 0.87-0.90; at 0.001-0.0015 it converges through early spikes).
    """
    return RealDataConfig(patch=16, patches_M=20000, N=4096, relu_N=1024,
                          relu_widths=(128, 512, 2048), checkpoints=40, kmax_patches=64,
                          kmax_digits=30, text_D=128, synthetic_D=256, net_M=20000,
                          net_depth=3, net_steps=6000, net_lr=0.01, cnn_channels=32,
                          cnn_lr=0.0005)


def tiny() -> RealDataConfig:
    """The small config of the tests (seconds)."""
    return RealDataConfig(patch=8, patches_M=600, digits_M=600, N=512, relu_N=64,
                          relu_widths=(64, 128), checkpoints=12, kmax_patches=16,
                          kmax_digits=12, text_D=32, synthetic_D=32, net_M=1000,
                          net_N=64, net_steps=200, cnn_channels=4)
