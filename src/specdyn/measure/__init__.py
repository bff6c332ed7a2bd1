"""Spectral measurement of any representation or weight matrix.

Spectra (``covariance_spectrum``, ``weight_spectrum``,
``CovarianceAccumulator``), power-law exponents (``local_exponent``,
``two_point_exponent``, ``fit_power_law``, ``fit_broken_power_law``; a data set's
``data_exponents`` and a network's per-mode ``mode_exponents`` (and ``rank_exponent`` of
its eigenvalue spectrum), one estimator in mode
order), random-matrix baselines and
outlier tests (``fit_mp_bulk``, ``find_outliers``; the random-matrix formulas
live in :mod:`specdyn.theory.rmt`), alignment of eigenvectors with given
directions, ``SpectrumTracker`` for any torch model (``TrackerConfig``; module types of your
own with ``register_layer``), and ``analyze``: every
tensor of a checkpoint, file or module summarised in a DataFrame, with each
layer's verdict (``layer_verdict``).

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
from specdyn.measure.atoms import (
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
from specdyn.measure.data_spectra import (
    DataExponents,
    data_exponents,
    mode_exponents,
    rank_exponent,
)
from specdyn.measure.exponents import (
    BrokenPowerLawFit,
    LocalExponent,
    PowerLawFit,
    fit_broken_power_law,
    fit_exponents,
    fit_power_law,
    local_exponent,
    loglog_fit,
    two_point_exponent,
)
from specdyn.measure.layers import LayerType, WeightMatrix, register_layer
from specdyn.measure.outliers import MPFit, OutlierReport, find_outliers, fit_mp_bulk
from specdyn.measure.spectra import (
    CovarianceAccumulator,
    covariance_spectrum,
    device_eigenvalues,
    gram_eigenvalues,
    gram_spectrum,
    rank_tolerance,
    symmetric_eigenvalues,
    weight_spectrum,
)
from specdyn.measure.summary import (
    SUMMARY_COLUMNS,
    VERDICT_MP,
    VERDICT_POWER_LAW,
    VERDICT_UNCLEAR,
    LayerSummary,
    analyze,
    layer_verdict,
    summaries_frame,
    summarize_file,
    summarize_matrix,
    summarize_spectrum,
    summarize_tensors,
)
from specdyn.measure.tracker import SpectrumTracker, read_spectra
from specdyn.measure.tracker_config import TrackerConfig
from specdyn.measure.transport import paired_sq_distance, wasserstein2_squared

__all__ = [
    "SUMMARY_COLUMNS",
    "VERDICT_MP",
    "VERDICT_POWER_LAW",
    "VERDICT_UNCLEAR",
    "Alignment",
    "AtomClusters",
    "BrokenPowerLawFit",
    "CovarianceAccumulator",
    "DataExponents",
    "LayerSummary",
    "LayerType",
    "LocalExponent",
    "MPFit",
    "OutlierReport",
    "PowerLawFit",
    "SingularAlignment",
    "Skipped",
    "SpectrumTracker",
    "TrackerConfig",
    "WeightMatrix",
    "analyze",
    "cluster_directions",
    "data_exponents",
    "covariance_alignment",
    "covariance_spectrum",
    "find_outliers",
    "fit_broken_power_law",
    "fit_exponents",
    "fit_mp_bulk",
    "fit_power_law",
    "function_distance",
    "gram_eigenvalues",
    "gram_spectrum",
    "hermite_tail",
    "layer_verdict",
    "load_tensors",
    "local_exponent",
    "loglog_fit",
    "mode_exponents",
    "rank_exponent",
    "mix_particles",
    "moment_tensors",
    "network_hermite_coefficients",
    "overlaps",
    "paired_sq_distance",
    "rank_tolerance",
    "relu_rescale",
    "sign_flip",
    "read_spectra",
    "register_layer",
    "singular_alignment",
    "state_tensors",
    "summaries_frame",
    "device_eigenvalues",
    "symmetric_eigenvalues",
    "summarize_file",
    "summarize_matrix",
    "summarize_spectrum",
    "summarize_tensors",
    "top_clusters_function",
    "top_eigenvectors",
    "top_singular_vectors",
    "two_point_exponent",
    "wasserstein2_squared",
    "weight_spectrum",
]
