"""Spectral measurement of any representation or weight matrix.

Spectra (``covariance_spectrum``, ``weight_spectrum``,
``CovarianceAccumulator``), power-law exponents (``local_exponent``,
``fit_power_law``, ``fit_broken_power_law``), random-matrix baselines and
outlier tests (``fit_mp_bulk``, ``find_outliers`` and the formulas of
:mod:`specdyn.theory.rmt`, re-exported here), alignment of eigenvectors with
given directions, and ``SpectrumTracker`` for any torch model.

Conventions are stated in each module: covariance spectrum = eigenvalues of
``F_c^T F_c / n`` (n samples, centred), decreasing; ``ratio = p / n``;
rank exponent ``a`` in ``lambda_k ~ k^-a``.
"""

from specdyn.measure.alignment import (
    Alignment,
    SingularAlignment,
    covariance_alignment,
    overlaps,
    singular_alignment,
    top_eigenvectors,
    top_singular_vectors,
)
from specdyn.measure.atoms import (  # noqa: F401  (issue 8)
    AtomClusters,
    cluster_directions,
    function_distance,
    hermite_tail,
    mix_particles,
    moment_tensors,
    network_hermite_coefficients,
    relu_rescale,
    sign_flip,
    top_clusters_function,
)
from specdyn.measure.exponents import (
    BrokenPowerLawFit,
    LocalExponent,
    PowerLawFit,
    fit_broken_power_law,
    fit_power_law,
    local_exponent,
)
from specdyn.measure.outliers import MPFit, OutlierReport, find_outliers, fit_mp_bulk
from specdyn.measure.spectra import (
    CovarianceAccumulator,
    covariance_spectrum,
    gram_spectrum,
    weight_spectrum,
)
from specdyn.measure.summary import (
    LayerSummary,
    load_tensors,
    summarize_file,
    summarize_matrix,
    summarize_tensors,
)
from specdyn.measure.tracker import SpectrumTracker, layer_verdict, log_schedule, read_spectra
from specdyn.measure.transport import paired_sq_distance, wasserstein2_squared  # noqa: F401
from specdyn.theory.rmt import (
    RectangularSpike,
    SpikePrediction,
    mp_cdf,
    mp_density,
    mp_edges,
    mp_quantile,
    rectangular_bulk_edge,
    rectangular_spike,
    spike_strength_from_eigenvalue,
    spike_strength_from_singular_value,
    spiked_covariance,
    tw_cdf,
    tw_quantile,
    tw_sf,
    wishart_edge_scaling,
)

__all__ = [
    "Alignment",
    "BrokenPowerLawFit",
    "CovarianceAccumulator",
    "LayerSummary",
    "LocalExponent",
    "MPFit",
    "OutlierReport",
    "PowerLawFit",
    "RectangularSpike",
    "SingularAlignment",
    "SpectrumTracker",
    "SpikePrediction",
    "covariance_alignment",
    "covariance_spectrum",
    "find_outliers",
    "fit_broken_power_law",
    "fit_mp_bulk",
    "fit_power_law",
    "gram_spectrum",
    "load_tensors",
    "local_exponent",
    "layer_verdict",
    "log_schedule",
    "mp_cdf",
    "mp_density",
    "mp_edges",
    "mp_quantile",
    "overlaps",
    "rectangular_bulk_edge",
    "read_spectra",
    "rectangular_spike",
    "singular_alignment",
    "spike_strength_from_eigenvalue",
    "spike_strength_from_singular_value",
    "spiked_covariance",
    "summarize_file",
    "summarize_matrix",
    "summarize_tensors",
    "top_eigenvectors",
    "top_singular_vectors",
    "tw_cdf",
    "tw_quantile",
    "tw_sf",
    "weight_spectrum",
    "wishart_edge_scaling",
]
