"""simulate's config: the paper's setting, the network's width and sample count, the
training steps and checkpoints, the fit range, and the ``--full`` size.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from specdyn import _validate as v
from specdyn.experiments.paper_setting import PaperSettingConfig


@dataclass(frozen=True)
@v.constrained_fields(N=v.Int(1, optional=True), M=v.Int(1, optional=True), steps=v.SIZE,
                      dt=v.Real(0.0, lo_open=True, optional=True),
                      method=v.Choice("gd", "flow"), engine=v.Choice("gram", "weights"),
                      checkpoints=v.Int(2), kmin=v.SIZE, kmax=v.SIZE,
                      dtype=v.Choice("float64", "float32"), figure=v.Bool(),
                      init_replicas=v.Int(0), clock_replicas=v.Int(0))
class SimulateConfig(PaperSettingConfig):
    """One linear-network run (quick default: D = 32, N = 512, 2000 GD steps).

    ``N = None`` is infinite width (Grams start at their means) and ``M = None``
    the population limit; ``dtype`` is the torch dtype of the GD loop.
    ``dt = None`` picks the step from the setting (:meth:`time_step`), so the
    same ``steps`` covers the same number of relaxation times of the fastest
    mode whatever ``gamma0`` is. ``checkpoints`` is a count of log-spaced steps
    (``Schedule.log``), as everywhere. ``init_replicas`` more networks are initialised by
    the same engine with their own seeds (one step each, the ``t = 0`` spectrum kept) so
    that the size of the finite-width deviation at ``t = 0`` is read off many draws, not
    one (0: the run's own alone). ``clock_replicas`` more are trained the whole run (their
    ``xi_k`` kept) so that the clock is read off several networks (0: the run alone).
    """

    N: int | None = 512
    M: int | None = None
    steps: int = 2000
    dt: float | None = None
    method: Literal["gd", "flow"] = "gd"
    engine: Literal["gram", "weights"] = "gram"
    checkpoints: int = 30
    kmin: int = 2
    kmax: int = 16
    dtype: Literal["float64", "float32"] = "float64"
    figure: bool = True
    init_replicas: int = 16
    clock_replicas: int = 8

    def __post_init__(self) -> None:
        super().__post_init__()
        # the fit range kmin..kmax against D, N and M
        if not self.kmin < self.kmax <= self.D:
            raise ValueError(f"kmax must satisfy kmin < kmax <= D = {self.D}, "
                             f"got kmin={self.kmin}, kmax={self.kmax}")
        # the measured spectrum has rank <= min(N, M): the fit range must lie inside it
        for name in ("M", "N"):
            size = getattr(self, name)
            if size is not None and size < self.kmax:
                raise ValueError(
                    f"{name} = {size} is below kmax = {self.kmax}: with {name} = {size} "
                    f"the measured spectrum has at most {size} nonzero eigenvalues; raise {name} "
                    f"or lower kmax")

    def finite(self) -> bool:
        """Whether the width or the sample count is finite: only then does a replica (another
        seed) differ from the run; at ``N = M = inf`` every network is the theory's."""
        return self.N is not None or self.M is not None

    def time_step(self) -> float:
        """``dt``, or when it is ``None``: ``0.5 / b_1``.

        ``b_k = lambda_k sqrt(S^2 + 4 gamma0^2 theta_k^2) / gamma0^2`` is the rate
        in the exponent ``E_k(t)`` of Eq. (12), the relaxation rate of mode k
        near its fixed point; GD is stable for ``dt b_1 < 2`` and ``b_1`` is the
        largest rate, so ``dt = 0.5 / b_1`` is stable for every mode.
        """
        if self.dt is not None:
            return float(self.dt)
        from specdyn.theory import mode_rate

        return float(0.5 / mode_rate(self.setting(), 1))


def full_simulate() -> SimulateConfig:
    """The paper-sized run (``--full``): D = 256, N = 4096, 20000 steps."""
    return SimulateConfig(D=256, N=4096, M=None, steps=20000, checkpoints=60, kmax=64,
                          clock_replicas=4)
