"""Exact theory (numpy/scipy only, float64, no torch).

The core paper's two-layer linear network: the spectrum ``rho`` and Gram
diagonals with both layers trained (Appendix D), the first-layer-only warm-up
(Appendices B-C), local exponents, region boundaries and regimes (Section 3.2,
Appendix E). Every function takes the setting first, then ``k`` and ``t``
(broadcasting like numpy), and is finite for every ``t`` in ``[0, inf]``.
Reference ODE and quadrature solvers live in :mod:`specdyn.theory.oracles`.
"""

import specdyn.theory.outlier_escape as outlier_escape  # related work 1: BBP escape, trainability
from specdyn.theory import (
    mean_field,  # related work 3: where a ReLU teacher's atoms sit under weight decay
    rmt,  # random-matrix baselines (MP, TW, BBP)
    two_step,  # related work 2: outlier count and its lines
)
from specdyn.theory.boundaries import (
    RegimeReport,
    asymptotic_exponents,
    cross_level,
    feature_boundary,
    k_cross,
    k_l,
    k_layer,
    k_learn,
    k_region_ii,
    k_u,
    lazy_boundary,
    regime,
    region,
    region_quantities,
    t_cross,
    t_layer,
    t_learn,
    time_to_xi,
)
from specdyn.theory.effective import effective_setting, linear_coefficient
from specdyn.theory.finite_size import FiniteSizeMoments, finite_size_moments
from specdyn.theory.first_layer import (
    alpha_eff_first_layer,
    k1,
    k2,
    k_cross_first_layer,
    k_learn_first_layer,
    region_first_layer,
    rho_first_layer,
    t_star,
    xi_first_layer,
)
from specdyn.theory.linear import (
    alpha_eff,
    delta_eta,
    eta,
    loss,
    mode_loss,
    mode_rate,
    rho,
    xi,
    zeta,
)
from specdyn.theory.reference import ReferenceFlow, exact_reference  # flow on data

__all__ = [
    "FiniteSizeMoments",
    "ReferenceFlow",
    "RegimeReport",
    "alpha_eff",
    "alpha_eff_first_layer",
    "asymptotic_exponents",
    "cross_level",
    "feature_boundary",
    "delta_eta",
    "effective_setting",
    "exact_reference",
    "eta",
    "finite_size_moments",
    "k1",
    "k2",
    "k_cross",
    "k_cross_first_layer",
    "k_l",
    "k_layer",
    "k_learn",
    "k_learn_first_layer",
    "k_region_ii",
    "k_u",
    "lazy_boundary",
    "linear_coefficient",
    "loss",
    "mean_field",
    "mode_loss",
    "mode_rate",
    "outlier_escape",
    "regime",
    "region",
    "region_first_layer",
    "region_quantities",
    "rho",
    "rmt",
    "rho_first_layer",
    "t_cross",
    "t_layer",
    "t_learn",
    "t_star",
    "time_to_xi",
    "two_step",
    "xi",
    "xi_first_layer",
    "zeta",
]
