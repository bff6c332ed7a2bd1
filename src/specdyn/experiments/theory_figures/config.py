"""The theory figures' configs: the exponents and grids of fig3, fig5 and fig6, and their
``--full`` sizes.

Each config declares its fields' allowed values (``constrained_fields``); the defaults
are the quick size, :func:`full_fig3` and :func:`full_first_layer` the paper-sized one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from specdyn import _validate as v
from specdyn.settings import FEATURE_LEARNING, LAZY, PowerLawSetting

_K_MAX = v.Real(1.0, 1e300, lo_open=True)


@dataclass(frozen=True)
@v.constrained_fields(alpha=v.POSITIVE, beta=v.POSITIVE, sigma_a=v.POSITIVE, k_max=_K_MAX,
                      t_min=v.POSITIVE, t_max=v.POSITIVE, n_k=v.Int(2), n_t=v.Int(2))
class TheoryGrid:
    """Shared fields of the theory figures: exponents, grid extent and resolution."""

    alpha: float = 1.0
    beta: float = 1.0
    sigma_a: float = 1.0
    k_max: float = 1e4
    t_min: float = 1e-2
    t_max: float = 1e7
    n_k: int = 240
    n_t: int = 240

    def __post_init__(self) -> None:
        # the time axis runs forwards
        v.in_range("t_max", self.t_max, self.t_min, np.inf, lo_open=True)

    def axes(self) -> tuple[np.ndarray, np.ndarray]:
        """Log-spaced ``k`` and ``t`` axes."""
        k = np.logspace(0.0, np.log10(self.k_max), self.n_k)
        t = np.logspace(np.log10(self.t_min), np.log10(self.t_max), self.n_t)
        return k, t


#: |alpha_eff - asymptotic exponent| on a plateau (Eq. 31, Eq. 113): the default of
#: ``Fig3Config.plateau_tol`` and the tolerance of fig5's and fig6's exponent claims.
PLATEAU_TOL = 0.05


@dataclass(frozen=True)
@v.constrained_fields(deep_sigma_w=v.POSITIVE, deep_gamma0_ratio=v.POSITIVE, deep_k_max=_K_MAX,
                      deep_t_max=v.POSITIVE, sigma_w_feature=v.POSITIVE,
                      gamma0_ratio_feature=v.POSITIVE, sigma_w_lazy=v.POSITIVE,
                      gamma0_ratio_lazy=v.POSITIVE, gamma0_ratio_lazy_deep=v.POSITIVE,
                      gamma0_ratio_equal=v.POSITIVE, n_slices=v.SIZE,
                      plateau_tol=v.Real(0.0, 1.0, lo_open=True))
class Fig3Config(TheoryGrid):
    """Fig. 3: (a) deep feature learning, (b) the paper's Fig. 2 setting, (c) lazy.

    Panel (a) is the regime of the paper's Fig. 3(a, b), ``sigma_a >> sigma_w``
    and ``gamma0 >> S/theta0`` (default ``sigma_w = 1e-4``,
    ``gamma0 theta0/S = 1e3``), where all four asymptotic exponents of Eq. (31)
    coexist; it needs modes up to ``deep_k_max`` and times up to
    ``deep_t_max`` because Region IIIa lies between ``k_l = (gamma0
    theta0/S)^(2/beta)`` and ``k_u``. The paper gives no setting for Fig. 3: ``sigma_w``
    is the largest power of ten at which a mode meets Eq. (32)'s premise for the
    sequence that ends in IIIa (its Region II passage and its IIIa end both deep enough
    for the plateau tolerance, :func:`~.readings.premise_window`: ``sigma_w <= 5.6e-4``).
    Panel (b) uses the grid fields of :class:`TheoryGrid`. Panel (c) is lazy well below
    the Eq. (33) bound (``gamma0_ratio_lazy_deep``, panel ``lazy-below-bound``), where
    Eq. (34)'s premise ``gamma0 << bound`` holds; the paper's Fig. 4 lazy setting
    (``gamma0_ratio_lazy``, panel ``lazy``, only a factor 1.73 below the bound) is
    written to the table, not drawn. ``plateau_tol`` is the tolerance of the plateau
    claims. ``gamma0_ratio_equal`` is a feature-learning setting with ``sigma_w =
    sigma_a``, where Eq. (200) rules Region IIIa out (panel ``equal-scales``, on the deep
    panel's axes, not drawn).
    """

    deep_sigma_w: float = 1e-4
    deep_gamma0_ratio: float = 1e3
    deep_k_max: float = 1e10
    deep_t_max: float = 1e17
    sigma_w_feature: float = FEATURE_LEARNING.sigma_w
    gamma0_ratio_feature: float = FEATURE_LEARNING.gamma0_ratio
    sigma_w_lazy: float = LAZY.sigma_w
    gamma0_ratio_lazy: float = LAZY.gamma0_ratio
    gamma0_ratio_lazy_deep: float = 0.05
    gamma0_ratio_equal: float = 1e3
    n_slices: int = 7
    plateau_tol: float = PLATEAU_TOL

    def __post_init__(self) -> None:
        super().__post_init__()
        # the deep panel's time axis runs forwards from the shared t_min
        v.in_range("deep_t_max", self.deep_t_max, self.t_min, np.inf, lo_open=True)

    def panel_inputs(self) -> dict[str, tuple[float, float]]:
        """``(sigma_w, gamma0 theta0 / S)`` of every panel, by name."""
        return {
            "deep-feature-learning": (self.deep_sigma_w, self.deep_gamma0_ratio),
            "fig2-setting": (self.sigma_w_feature, self.gamma0_ratio_feature),
            "lazy": (self.sigma_w_lazy, self.gamma0_ratio_lazy),
            "lazy-below-bound": (self.sigma_w_lazy, self.gamma0_ratio_lazy_deep),
            "equal-scales": (self.sigma_a, self.gamma0_ratio_equal),
        }

    def settings(self) -> dict[str, PowerLawSetting]:
        """The settings of the figure's three panels and the checks not drawn, by name."""
        return {name: PowerLawSetting.paper(sigma_w, ratio, alpha=self.alpha, beta=self.beta,
                                            sigma_a=self.sigma_a)
                for name, (sigma_w, ratio) in self.panel_inputs().items()}

    def panel_axes(self, panel: str) -> tuple[np.ndarray, np.ndarray]:
        """``(k, t)`` axes of one panel: the deep and equal-scales panels span more modes and
        time."""
        if panel not in ("deep-feature-learning", "equal-scales"):
            return self.axes()
        k = np.logspace(0.0, np.log10(self.deep_k_max), self.n_k)
        t = np.logspace(np.log10(self.t_min), np.log10(self.deep_t_max), self.n_t)
        return k, t


@dataclass(frozen=True)
@v.constrained_fields(sigma_w=v.POSITIVE, gamma0_ratio=v.POSITIVE, n_curves=v.Int(2))
class FirstLayerConfig(TheoryGrid):
    """Figs. 5 and 6: second layer frozen, first layer trained (Appendices B-C).

    The paper gives no setting for Figs. 5-6; Eq. (113)'s Region II exponent 3 alpha +
    beta needs its premise ``sigma_w << sigma_a`` (a Region II where the learned part
    dominates long before the mode is learned): ``sigma_w = 1e-3`` (``gamma0 theta0 / S
    = 2`` as in Fig. 2), where ``alpha_eff`` rises to 3.98 in Region II (3.63 at the Fig. 2
    setting's 0.1, 3.92 at 1e-2). Then ``k1`` = 4e6 and ``t*`` = 2.6e7: the grid reaches
    ``k`` = 1e9 and ``t`` = 1e10, two decades past both, with ``n_k = 480`` modes so that
    its step (0.019 decade) stays what it was over the Fig. 2 setting's four decades (the
    boundary claims read crossings to a grid step). fig5 writes its spectrum at the ``n_t``
    times of the grid (and ``t = 0``) and draws ``n_curves`` of them.
    """

    sigma_w: float = 1e-3
    gamma0_ratio: float = FEATURE_LEARNING.gamma0_ratio
    k_max: float = 1e9
    t_max: float = 1e10
    n_k: int = 480
    n_curves: int = 12

    def setting(self) -> PowerLawSetting:
        """The setting of the figure."""
        return PowerLawSetting.paper(self.sigma_w, self.gamma0_ratio, alpha=self.alpha,
                                     beta=self.beta, sigma_a=self.sigma_a)


def full_fig3() -> Fig3Config:
    """fig3 at the paper's size (``--full``): wider grids, 800 x 800 cells."""
    return Fig3Config(k_max=1e5, t_max=1e8, deep_k_max=1e12, deep_t_max=1e19, n_k=800,
                      n_t=800)


def full_first_layer() -> FirstLayerConfig:
    """fig5 and fig6 at the paper's size (``--full``): 800 x 800 cells over a decade more
    of ``k`` and ``t``, 20 curves."""
    return FirstLayerConfig(k_max=1e10, t_max=1e11, n_k=800, n_t=800, n_curves=20)
