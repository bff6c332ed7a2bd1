"""The outlier-escape experiments' configs: bbp-escape, trainability and lr-transfer, and
their ``--full`` sizes.

Each config declares its fields' allowed values (``constrained_fields``); the defaults
are the quick size, :func:`full_bbp_escape`, :func:`full_trainability` and
:func:`full_lr_transfer` the larger one. ``lr-transfer``'s ``escape_runs`` entries
(:data:`ESCAPE_RUN`) are parsed by :func:`parse_escape_runs` and named by
:func:`escape_label`.
"""

from __future__ import annotations

from dataclasses import dataclass

from specdyn import _validate as v

# --------------------------------------------------------------------------
# bbp-escape
# --------------------------------------------------------------------------


@dataclass(frozen=True)
@v.constrained_fields(P=v.Int(3), D=v.Int(3), theta=v.POSITIVE, sigma0=v.POSITIVE,
                      lr=v.Real(0.0, 1.0, lo_open=True, hi_open=True),
                      horizon=v.Real(1.0, 100.0, lo_open=True),
                      alpha=v.Real(0.0, 1.0, lo_open=True, hi_open=True), top_k=v.Int(2),
                      sgd_P=v.Int(3), sgd_D=v.Int(3), sgd_theta=v.POSITIVE,
                      sgd_lr=v.Real(0.0, 1.0, lo_open=True, hi_open=True), sgd_B=v.SIZE,
                      sgd_noise=v.NONNEGATIVE, sgd_steps=v.SIZE, nonlinear_N=v.Int(3),
                      nonlinear_D=v.Int(3), nonlinear_B=v.SIZE,
                      nonlinear_lr=v.POSITIVE, nonlinear_steps=v.SIZE,
                      nonlinear_activation=v.Choice("tanh", "relu"), replicas=v.Int(2),
                      seed=v.SEED)
class BBPEscapeConfig:
    """Population GD, rank-one ``P x D`` teacher; beside it the same escape under online SGD
    (``sgd_*``: a linear student, batch ``sgd_B``, label noise ``sgd_noise``) and through a
    nonlinear layer (``nonlinear_*``: online SGD on the first layer of ``f(x) = N^(-1/2) a^T
    phi(W x)``, a fresh batch of ``nonlinear_B`` samples of a He1 teacher each step), and
    ``replicas`` more population GD students with their own ``W0``, whose outliers' spread
    about the path sizes its finite-size deviation
    (:mod:`~specdyn.experiments.outlier_escape.replicas`).
    Defaults: quick (~25 s); ``--full``: P = 1500.
    """

    P: int = 300
    D: int = 600
    theta: float = 0.005
    sigma0: float = 1.0
    lr: float = 0.05
    horizon: float = 1.6
    alpha: float = 0.01
    top_k: int = 6
    sgd_P: int = 300
    sgd_D: int = 600
    sgd_theta: float = 1.0
    sgd_lr: float = 0.05
    sgd_B: int = 64
    sgd_noise: float = 1.0
    sgd_steps: int = 80
    nonlinear_N: int = 400
    nonlinear_D: int = 400
    nonlinear_B: int = 400
    nonlinear_lr: float = 0.1
    nonlinear_steps: int = 40
    nonlinear_activation: str = "tanh"
    replicas: int = 32
    seed: int = 0

    def __post_init__(self) -> None:
        # online SGD has a stationary noise bulk only below lr_c = 2B / (B + D + 1)
        lr_c = 2.0 * self.sgd_B / (self.sgd_B + self.sgd_D + 1.0)
        if not self.sgd_lr < lr_c:
            raise ValueError(f"sgd_lr must be below 2 sgd_B / (sgd_B + sgd_D + 1) = {lr_c:.4g} "
                             f"(online SGD diverges in mean square there), got {self.sgd_lr:g}")


def full_bbp_escape() -> BBPEscapeConfig:
    """The ``--full`` size of ``bbp-escape``."""
    # SGD: D and B doubled together keep the stationary bulk sqrt(v D) of the quick size
    # (v = lr s^2 / (2B - lr (B + D + 1))), so the outlier clears it as at the quick size
    return BBPEscapeConfig(P=1500, D=3000, theta=0.0005, lr=0.02, sgd_P=600, sgd_D=1200,
                           sgd_B=128, nonlinear_N=1000, nonlinear_D=1000, nonlinear_B=1000,
                           replicas=32)


# --------------------------------------------------------------------------
# trainability
# --------------------------------------------------------------------------


_RANGE = v.Tuple(v.POSITIVE, length=2, increasing=True)  # (lo, hi) with 0 < lo < hi


@dataclass(frozen=True)
@v.constrained_fields(P=v.SIZE, D=v.SIZE, B=v.SIZE, noise_std=v.NONNEGATIVE,
                      theta=v.NONNEGATIVE, steps=v.SIZE,
                      tol=v.Real(0.0, 1.0, lo_open=True, hi_open=True), replicas=v.SIZE,
                      n_lr=v.SIZE, n_var=v.SIZE, lr_range=_RANGE, var_range=_RANGE,
                      two_layer_N=v.SIZE, two_layer_D=v.SIZE, two_layer_steps=v.SIZE,
                      two_layer_lr_range=_RANGE, two_layer_var_range=_RANGE, seed=v.SEED)
class TrainabilityConfig:
    """Phase diagrams. Defaults: quick (~40 s); ``--full``: finer grids, larger nets."""

    P: int = 32
    D: int = 32
    B: int = 4
    noise_std: float = 0.3
    theta: float = 1.0
    steps: int = 300
    tol: float = 0.05
    replicas: int = 4
    n_lr: int = 10
    n_var: int = 6
    lr_range: tuple[float, float] = (0.03, 1.4)
    var_range: tuple[float, float] = (0.01, 100.0)
    two_layer_N: int = 64
    two_layer_D: int = 16
    two_layer_steps: int = 200
    two_layer_lr_range: tuple[float, float] = (0.02, 20.0)
    two_layer_var_range: tuple[float, float] = (0.05, 5.0)
    seed: int = 0


def full_trainability() -> TrainabilityConfig:
    """The ``--full`` size of ``trainability``."""
    return TrainabilityConfig(P=64, D=64, B=8, steps=600, n_lr=20, n_var=12,
                              replicas=8, two_layer_N=256, two_layer_steps=400)


# --------------------------------------------------------------------------
# lr-transfer
# --------------------------------------------------------------------------


#: A positive decimal number without a sign (a nonzero digit before any exponent; at most
#: two exponent digits, so it is finite).
_POSITIVE_NUMBER = r"(?=[^:eE]*[1-9])(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]{1,2})?"
#: One entry of ``escape_runs``.
ESCAPE_RUN = v.Pattern(rf"(?:mup|ntk|standard):{_POSITIVE_NUMBER}:{_POSITIVE_NUMBER}",
                       "'parameterization:lr:theta' (parameterization mup, ntk or standard; "
                       "lr, theta > 0)")


@dataclass(frozen=True)
@v.constrained_fields(N_values=v.Tuple(v.SIZE, min_len=1), depth=v.Int(2), D=v.SIZE,
                      steps=v.SIZE, mup_lr_min=v.POSITIVE, ntk_lr_min=v.POSITIVE, n_lr=v.SIZE,
                      lr_step=v.Real(1.0, 100.0, lo_open=True),
                      escape_runs=v.Tuple(ESCAPE_RUN), escape_steps=v.SIZE,
                      escape_margin=v.NONNEGATIVE, seeds=v.SIZE, escape_seeds=v.SIZE,
                      seed=v.SEED)
class LRTransferConfig:
    """muP vs NTK sweeps. Defaults: quick (~50 s); ``--full``: N 256..4096, 3 seeds.

    The lr grids are geometric with ratio ``lr_step``; escape times are seed means.
    """

    N_values: tuple[int, ...] = (128, 256, 512, 1024)
    depth: int = 3
    D: int = 16
    steps: int = 30
    mup_lr_min: float = 0.025
    ntk_lr_min: float = 0.8
    n_lr: int = 8
    lr_step: float = 1.4142135623730951
    escape_runs: tuple[str, ...] = ("mup:0.05:4", "ntk:1.0:4", "ntk:0.1:64")
    escape_steps: int = 30
    escape_margin: float = 0.2
    seeds: int = 1
    escape_seeds: int = 2
    seed: int = 0


def parse_escape_runs(runs: tuple[str, ...]) -> list[tuple[str, float, float]]:
    """``"parameterization:lr:theta"`` strings (checked by :data:`ESCAPE_RUN`) -> tuples."""
    out = []
    for r in runs:
        par, lr, theta = r.split(":")
        out.append((par, float(lr), float(theta)))
    return out


def full_lr_transfer() -> LRTransferConfig:
    """The ``--full`` size of ``lr-transfer``."""
    return LRTransferConfig(N_values=(256, 512, 1024, 2048, 4096), seeds=3, n_lr=12,
                            mup_lr_min=0.0125, ntk_lr_min=0.4, escape_seeds=5)


def escape_label(par: str, lr: float, theta: float) -> str:
    """The name of one ``escape_runs`` entry in the tables, claims and figure."""
    return f"{par} (eta0={lr:g}, theta={theta:g})"

