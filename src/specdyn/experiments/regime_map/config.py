"""The regime map's config: its (sigma_w/sigma_a, gamma0 theta0/S) grid, the size of every
``simulate`` point, the executor of their sweep, and the ``--full`` size.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from specdyn import _validate as v


@dataclass(frozen=True)
@v.constrained_fields(alpha=v.POSITIVE, beta=v.POSITIVE, sigma_a=v.POSITIVE,
                      ratio_min=v.POSITIVE, ratio_max=v.POSITIVE, n_ratio=v.SIZE,
                      gamma_min=v.POSITIVE, gamma_max=v.POSITIVE, n_gamma=v.SIZE, D=v.SIZE,
                      N=v.Int(1, optional=True), steps=v.SIZE, checkpoints=v.Int(2),
                      kmin=v.SIZE, kmax=v.SIZE, seed=v.SEED,
                      executor=v.Choice("local", "dask", "inline"), workers=v.Int(0),
                      theory_resolution=v.Int(2), spread_seeds=v.Int(1))
class RegimeMapConfig:
    """Grid, simulation size and executor of the regime map (quick default: 5 x 5, D = 32).

    ``checkpoints`` is a count of log-spaced steps (``Schedule.log``), as everywhere.
    Every cell runs at ``seed`` (the judged run) and at ``spread_seeds`` more seeds
    (``seed + 1, ...``), whose deviations from the theory predict the size the judged
    run's should have.
    """

    alpha: float = 1.0
    beta: float = 1.0
    sigma_a: float = 1.0
    ratio_min: float = 0.05
    ratio_max: float = 3.0
    n_ratio: int = 5
    gamma_min: float = 0.03
    gamma_max: float = 30.0
    n_gamma: int = 5
    D: int = 32
    N: int | None = 512
    steps: int = 2000
    checkpoints: int = 30
    kmin: int = 2
    kmax: int = 16
    seed: int = 0
    executor: Literal["local", "dask", "inline"] = "local"
    workers: int = 0
    theory_resolution: int = 120
    spread_seeds: int = 1

    def __post_init__(self) -> None:
        # each grid's max above its min; the simulation fields together (kmax <= D, N)
        v.in_range("ratio_max", self.ratio_max, self.ratio_min, np.inf, lo_open=True)
        v.in_range("gamma_max", self.gamma_max, self.gamma_min, np.inf, lo_open=True)
        self.simulate_base()

    def simulate_base(self) -> dict[str, object]:
        """The fixed fields of every ``simulate`` point (checked by ``SimulateConfig``)."""
        from specdyn.experiments.simulate.config import SimulateConfig

        base: dict[str, object] = {
            "alpha": self.alpha, "beta": self.beta, "sigma_a": self.sigma_a, "D": self.D,
            "N": self.N, "steps": self.steps, "checkpoints": self.checkpoints,
            "kmin": self.kmin, "kmax": self.kmax,
            "seed": self.seed, "figure": False, "dt": None,
            # a cell reads its own run; no claim of its reads replicas
            "init_replicas": 0, "clock_replicas": 0,
        }
        SimulateConfig(**base)  # type: ignore[arg-type]  # checked at run time
        return base

    def ratios(self) -> np.ndarray:
        """``sigma_w / sigma_a`` values (log-spaced)."""
        return np.geomspace(self.ratio_min, self.ratio_max, self.n_ratio)

    def gammas(self) -> np.ndarray:
        """``gamma0 theta0 / S`` values (log-spaced)."""
        return np.geomspace(self.gamma_min, self.gamma_max, self.n_gamma)


def full_regime_map() -> RegimeMapConfig:
    """The paper-sized regime map (``--full``): a 9 x 9 grid, D = 128, N = 4096."""
    return RegimeMapConfig(n_ratio=9, n_gamma=9, D=128, N=4096, steps=6000, kmax=32,
                           checkpoints=50)
