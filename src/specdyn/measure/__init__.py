"""Spectral measurement of any representation or weight matrix.

Spectra (``covariance_spectrum``, ``weight_spectrum``,
``CovarianceAccumulator``), power-law exponents (``local_exponent``,
``fit_power_law``, ``fit_broken_power_law``), random-matrix baselines and
outlier tests (``fit_mp_bulk``, ``find_outliers`` and the formulas of
:mod:`specdyn.theory.rmt`, re-exported here), alignment of eigenvectors with
given directions, ``SpectrumTracker`` for any torch model, and ``analyze``:
every tensor of a checkpoint, file or module summarised in a DataFrame, with
each layer's verdict (``layer_verdict``).

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
from specdyn.measure.checkpoint import Skipped, load_tensors, state_tensors
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
    rank_tolerance,
    weight_spectrum,
)
from specdyn.measure.summary import (
    VERDICT_MP,
    VERDICT_POWER_LAW,
    VERDICT_UNCLEAR,
    LayerSummary,
    analyze,
    layer_verdict,
    summaries_frame,
    summarize_file,
    summarize_matrix,
    summarize_tensors,
)
from specdyn.measure.tracker import SpectrumTracker, log_schedule
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
    "VERDICT_MP",
    "VERDICT_POWER_LAW",
    "VERDICT_UNCLEAR",
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
    "Skipped",
    "SpectrumTracker",
    "SpikePrediction",
    "analyze",
    "covariance_alignment",
    "covariance_spectrum",
    "find_outliers",
    "fit_broken_power_law",
    "fit_mp_bulk",
    "fit_power_law",
    "gram_spectrum",
    "layer_verdict",
    "load_tensors",
    "local_exponent",
    "log_schedule",
    "mp_cdf",
    "mp_density",
    "mp_edges",
    "mp_quantile",
    "overlaps",
    "rank_tolerance",
    "rectangular_bulk_edge",
    "rectangular_spike",
    "singular_alignment",
    "spike_strength_from_eigenvalue",
    "spike_strength_from_singular_value",
    "spiked_covariance",
    "state_tensors",
    "summaries_frame",
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
