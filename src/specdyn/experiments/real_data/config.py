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
#: Tasks where the paper's model applies (P = D, a nearly aligned target; see ``tasks``).
MODEL_TASKS = ("denoise", "text-denoise")


@dataclass(frozen=True)
@v.constrained_fields(patch=v.Int(4, 64), patches_M=v.Int(100), digits_M=v.Int(100, 1797),
                      N=v.SIZE, relu_N=v.SIZE, relu_patch=v.Int(4, 64), relu_M=v.Int(100),
                      relu_kmax=v.Int(4), relu_widths=v.Tuple(v.Int(2), min_len=2,
                                                                   increasing=True),
                      checkpoints=v.Int(8), kmax_patches=v.Int(4), kmax_digits=v.Int(4),
                      t_factor=v.Real(1.0), text_D=v.Int(16, 512), blur=v.Real(0.1, 8.0),
                      blur2=v.Real(0.1, 8.0), synthetic_D=v.Int(16, 512),
                      net_M=v.Int(200), net_N=v.Int(8), net_depth=v.Int(2, 3),
                      net_steps=v.Int(10), net_lr=v.Real(0.0, 1.0, lo_open=True),
                      net_batch=v.Int(2), cnn_channels=v.Int(2), cnn_lr=v.Real(
                          0.0, 1.0, lo_open=True), net_lazy_scale=v.Real(1.0, 1e4),
                      net_lazy=v.Tuple(v.Choice("mlp", "cnn")),
                      denoise_noise=v.Real(0.0, 10.0, lo_open=True),
                      text_half_chunk=v.Int(100, 50_000), model_task_seeds=v.Int(1, 4),
                      model_task_networks=v.Tuple(v.Choice(*MODEL_TASKS)), seed=v.SEED,
                      figure=v.Bool())
class RealDataConfig:
    """Quick default: 10 x 10 patches (``M = 1000``), all 1797 digits, ``N = 1024``.

    ``t_factor`` sets the run length of the full-batch students: ``t_end = t_factor *
    max_k t_learn(k)`` over the fit window ``2..kmax`` (the theory's learning time of the
    slowest fitted mode, :func:`specdyn.theory.t_learn`), per task, regime and student;
    ``dt`` from the data's largest rates (:mod:`specdyn.study`).
    ``relu_patch``, ``relu_M``, ``relu_kmax``: the ReLU student's patches and fit window
    (quick: those of the patch tasks); ``relu_widths``: its lazy width series (even widths:
    the zero-output start pairs units). ``net_*``: the real networks (an SGD MLP with
    ``net_depth`` ReLU hidden layers of ``net_N`` units and a CNN with ``cnn_channels``
    channels) on ``net_M`` blurred-target patches, a fifth held out; ``net_lazy_scale``: the
    output scale of their lazy baselines, ``net_lazy`` the architectures that get one (the
    CNN's only at ``--full``: 9 s of the quick run). The tasks where the model applies
    (:data:`MODEL_TASKS`): ``denoise_noise`` (pixel noise in units of the patches' rms
    pixel standard deviation), ``text_half_chunk`` (characters in half a text chunk),
    ``model_task_seeds`` (seeds of each), ``model_task_networks`` (those the linear network
    trains on; the others give the theory and the exact reference only).
    """

    patch: int = 10
    patches_M: int = 1000
    digits_M: int = 1797
    N: int = 1024
    relu_N: int = 128
    relu_patch: int = 10
    relu_M: int = 1000
    relu_kmax: int = 25
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
    net_lazy_scale: float = 100.0
    net_lazy: tuple[str, ...] = ("mlp",)
    denoise_noise: float = 1.0
    text_half_chunk: int = 250
    model_task_seeds: int = 1
    model_task_networks: tuple[str, ...] = ("denoise",)
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
        if self.relu_M % 2 or any(n % 2 for n in self.relu_widths):
            raise ValueError(f"relu_M must be even (half from each image), got {self.relu_M}"
                             if self.relu_M % 2 else f"relu_widths must be even (the zero "
                             f"output pairs units), got {self.relu_widths}")
        if self.relu_kmax > self.relu_patch**2 - 1:
            raise ValueError(f"relu_kmax must be <= relu_patch**2 - 1 = "
                             f"{self.relu_patch**2 - 1}, got {self.relu_kmax}")
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

    The ReLU student trains on 10 x 10 patches (``M = 2000``): its width series to 2048,
    from both starts, on the 16 x 16 patches of ``M = 20000`` would take most of the run
    (a full-batch step there costs 20000 x 255 x 2048 multiply-adds per product, five
    products a step). The tasks where the model applies run at two seeds, with networks.
    """
    return RealDataConfig(patch=16, patches_M=20000, N=4096, relu_N=1024, relu_M=2000,
                          relu_widths=(128, 512, 2048), checkpoints=40, kmax_patches=64,
                          kmax_digits=30, text_D=128, synthetic_D=256, net_M=20000,
                          net_depth=3, net_steps=6000, net_lr=0.01, cnn_channels=32,
                          cnn_lr=0.0005, net_lazy=("mlp", "cnn"), model_task_seeds=2,
                          model_task_networks=("denoise", "text-denoise"))


def tiny() -> RealDataConfig:
    """The small config of the tests (seconds)."""
    return RealDataConfig(patch=8, patches_M=600, digits_M=600, N=512, relu_N=64, relu_patch=8,
                          relu_M=600, relu_kmax=16,
                          relu_widths=(64, 128), checkpoints=12, kmax_patches=16,
                          kmax_digits=12, text_D=32, synthetic_D=32, net_M=1000,
                          net_N=64, net_steps=200, cnn_channels=4)
