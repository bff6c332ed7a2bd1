"""Spectral summary of a spectrum, a matrix or every tensor in a weights file, and its verdict.

``summarize_spectrum`` is the one summary pipeline of specdyn: power-law fit,
Marchenko-Pastur bulk, outliers and the layer's verdict (``layer_verdict``) of
one spectrum. ``specdyn analyze`` (``summarize_matrix``) and the
``SpectrumTracker`` (in its summary process) both call it, and both report its
columns, ``SUMMARY_COLUMNS``, under the same names
(``LayerSummary.values``; docs/concepts.md). ``analyze(path_or_module)`` returns the same as a
``pandas.DataFrame``, one row per tensor (measured or skipped with the reason).
Files and checkpoints are read by :mod:`specdyn.measure.checkpoint`.

Conventions: a matrix ``W`` (``N x D``, rows x columns) is summarised through
the eigenvalues of ``W^T W / N`` (``weight_spectrum(W, "rows")``), so i.i.d.
entries of variance ``s2`` give Marchenko-Pastur with ``ratio = D / N``; with
``center=True`` the rows are treated as samples and centred first (a
representation ``F``: ``covariance_spectrum(F)``). Tensors with more than two
axes (convolutions) are reshaped to ``shape[0] x prod(shape[1:])``.

Verdict (``layer_verdict``), in this order:

1. ``"consistent with MP bulk (no power law)"``: the bulk fits Marchenko-Pastur
   (Kolmogorov-Smirnov distance at most ``1.36 / sqrt(n_bulk)``, the 5 %
   critical value for independent draws, conservative for eigenvalues, which
   are more regular) and no eigenvalue is a significant outlier. Pure noise
   gets this verdict, whatever exponent a fit would give.
2. ``"power law"``: the bulk does not fit MP (or most of the spectrum lies
   above the edge) and the rank power law holds over at least a decade
   (``short_window`` false) with weighted ``R^2 >= 0.9``.
3. ``"bulk + k outliers"``: an MP bulk with ``k`` significant outliers
   (``"bulk + >= k outliers (cap reached)"`` when the test stopped at its cap).
4. ``"unclear: no MP bulk, no power law over a decade"`` otherwise.

A spectrum with fewer than ``MIN_WINDOW_RANKS`` (5) eigenvalues above the rank
tolerance (a 4 x 128 layer has 4) is too short for either: no exponent (the fit's
automatic window needs 5 ranks), no MP bulk (its outlier test would stop at a cap of
one or two), and the verdict ``"too few eigenvalues (4)"``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn import _validate as v
from specdyn._torch import to_numpy
from specdyn.measure.checkpoint import (
    SUFFIXES,
    Skipped,
    count_non_finite,
    load_tensors,
    state_tensors,
)
from specdyn.measure.exponents import MIN_WINDOW_RANKS, PowerLawFit, fit_power_law
from specdyn.measure.outliers import MPFit, OutlierReport, find_outliers, fit_mp_bulk
from specdyn.measure.spectra import covariance_spectrum, rank_tolerance, weight_spectrum

__all__ = [
    "SUFFIXES",
    "SUMMARY_COLUMNS",
    "VERDICT_MP",
    "VERDICT_POWER_LAW",
    "VERDICT_TOO_FEW",
    "VERDICT_UNCLEAR",
    "LayerSummary",
    "analyze",
    "has_matrix",
    "layer_verdict",
    "load_tensors",
    "summaries_frame",
    "summarize_file",
    "summarize_matrix",
    "summarize_spectrum",
    "summarize_tensors",
]

VERDICT_MP = "consistent with MP bulk (no power law)"
VERDICT_POWER_LAW = "power law"
VERDICT_UNCLEAR = "unclear: no MP bulk, no power law over a decade"
#: The verdict of a spectrum too short to summarise: ``f"{VERDICT_TOO_FEW} (n)"``.
VERDICT_TOO_FEW = "too few eigenvalues"
# A power law needs at least this weighted R^2 over its (>= one decade) window.
MIN_R2 = 0.9


def mp_consistent(mp: MPFit | None) -> bool:
    """The bulk fits Marchenko-Pastur: KS distance <= 1.36 / sqrt(n_bulk), cap not reached."""
    if mp is None or mp.cap_reached or mp.n_bulk < 1:
        return False
    return mp.ks_distance <= 1.36 / math.sqrt(mp.n_bulk)


def layer_verdict(fit: PowerLawFit | None, mp: MPFit | None,
                  outliers: OutlierReport | None) -> str:
    """The layer's verdict from its power-law fit, MP bulk fit and outlier test.

    One of ``VERDICT_MP``, ``VERDICT_POWER_LAW``, ``"bulk + k outliers"`` (or
    ``"bulk + >= k outliers (cap reached)"``) and ``VERDICT_UNCLEAR``; the
    rules are in the module docstring. Any argument may be ``None`` (that
    step failed or was not run).
    """
    k = outliers.n_outliers if outliers is not None else 0
    bulk = mp_consistent(mp) and outliers is not None
    if bulk and k == 0:
        return VERDICT_MP
    if (not bulk and fit is not None and not fit.short_window and fit.r2 >= MIN_R2):
        return VERDICT_POWER_LAW
    if bulk and outliers is not None:
        if outliers.cap_reached:
            return f"bulk + >= {k} outliers (cap reached)"
        return f"bulk + {k} outlier{'s' if k != 1 else ''}"
    return VERDICT_UNCLEAR


#: The summary columns of one spectrum, in order: the same names in ``analyze``'s
#: table and (as ``<kind>_<column>`` quantities) in the tracker's. Meanings in
#: docs/concepts.md ("Spectral summaries").
SUMMARY_COLUMNS = (
    "exponent", "exponent_ci_low", "exponent_ci_high", "exponent_r2", "exponent_kmin",
    "exponent_kmax", "exponent_amplitude", "exponent_short_window", "density_exponent",
    "mp_sigma2", "mp_edge", "mp_ks", "n_outliers", "cap_reached", "max_outliers",
    "lambda_max",
)


@dataclass(frozen=True)
class LayerSummary:
    """Spectral summary of one tensor (or one spectrum).

    Attributes
    ----------
    name, shape
        The tensor's name and original shape.
    status
        ``"measured"`` or ``"skipped"``.
    reason
        Why it was skipped (``""`` when measured).
    matrix_shape
        ``(rows, cols)`` after reshaping, when it is a matrix.
    eigs
        The full spectrum (decreasing) when computed.
    fit, mp, outliers
        Power-law fit, MP bulk and outlier test; ``None`` when that step
        failed (the reason in ``failed``) or was not asked for.
    verdict
        ``layer_verdict(fit, mp, outliers)`` for a measured tensor, else ``None``.
    notes
        Reshaping, failed steps, a short window, a reached cap.
    failed
        ``(step, reason)`` of each step that was asked for and could not be
        computed; ``step`` is ``"exponent"`` (the power-law fit) or
        ``"outliers"`` (MP bulk and outlier test).
    """

    name: str
    shape: tuple[int, ...]
    status: str
    reason: str = ""
    matrix_shape: tuple[int, int] | None = None
    eigs: np.ndarray | None = None
    fit: PowerLawFit | None = None
    mp: MPFit | None = None
    outliers: OutlierReport | None = None
    verdict: str | None = None
    notes: tuple[str, ...] = field(default=())
    failed: tuple[tuple[str, str], ...] = field(default=())

    def values(self) -> dict[str, float | int | bool | None]:
        """The ``SUMMARY_COLUMNS`` of this summary: plain Python values, ``None`` where missing."""
        f, mp, r = self.fit, self.mp, self.outliers
        return {
            "exponent": f.exponent if f else None,
            "exponent_ci_low": f.ci_low if f else None,
            "exponent_ci_high": f.ci_high if f else None,
            "exponent_r2": f.r2 if f else None,
            "exponent_kmin": f.kmin if f else None,
            "exponent_kmax": f.kmax if f else None,
            "exponent_amplitude": f.amplitude if f else None,
            "exponent_short_window": f.short_window if f else None,
            "density_exponent": f.density_exponent if f else None,
            "mp_sigma2": mp.sigma2 if mp else None,
            "mp_edge": mp.hi if mp else None,
            "mp_ks": mp.ks_distance if mp else None,
            "n_outliers": r.n_outliers if r else None,
            "cap_reached": r.cap_reached if r else None,
            "max_outliers": r.max_candidates if r else None,
            "lambda_max": float(self.eigs[0]) if self.eigs is not None else None,
        }

    def record(self) -> dict[str, Any]:
        """One row of ``analyze``'s table: the tensor, its verdict and ``values()``."""
        return {
            "layer": self.name,
            "shape": list(self.shape),
            "matrix_shape": list(self.matrix_shape) if self.matrix_shape else None,
            "status": self.status,
            "reason": self.reason,
            "verdict": self.verdict,
            **self.values(),
            "notes": "; ".join(self.notes),
        }


def _skipped(name: str, shape: tuple[int, ...], reason: str,
             matrix_shape: tuple[int, int] | None = None,
             notes: tuple[str, ...] = ()) -> LayerSummary:
    return LayerSummary(name, shape, "skipped", reason, matrix_shape=matrix_shape, notes=notes)


def summarize_spectrum(eigs: np.ndarray, ratio: float, *, n_samples: float,
                       alpha: float = 0.05, n_boot: int = 200, fit: bool = True,
                       outliers: bool = True, complete: bool = True, name: str = "",
                       shape: tuple[int, ...] = (), matrix_shape: tuple[int, int] | None = None,
                       notes: tuple[str, ...] = ()) -> LayerSummary:
    """The one summary pipeline: power-law fit, MP bulk, outliers, verdict.

    Never raises on the spectrum's content: a step that fails is reported.

    Parameters
    ----------
    eigs
        The spectrum, decreasing (float64).
    ratio, n_samples
        Marchenko-Pastur aspect ratio ``p / n`` and samples (degrees of
        freedom) of the matrix it came from, as in ``fit_mp_bulk``.
    alpha, n_boot
        Level of the outlier test; bootstrap resamples of the exponent interval.
    fit, outliers
        Whether to fit the power law, and the MP bulk with its outlier test.
    complete
        ``False`` when ``eigs`` is only the top of the spectrum: no MP fit
        (it needs the whole spectrum), listed in ``failed``.
    name, shape, matrix_shape, notes
        Carried into the ``LayerSummary`` (notes are extended).

    Returns
    -------
    LayerSummary
        ``status="measured"``; a step that failed leaves its part ``None``,
        with the reason in ``failed`` and ``notes``.
    """
    a = v.in_range("alpha", alpha, 0.0, 1.0, lo_open=True, hi_open=True)
    out_notes = list(notes)
    failed: list[tuple[str, str]] = []
    pl = mp = rep = None
    n_pos = int(np.sum(eigs > rank_tolerance(float(eigs[0]), eigs.size))) if eigs.size else 0
    if n_pos < MIN_WINDOW_RANKS and (fit or outliers):
        why = (f"too few eigenvalues: {n_pos} above the rank tolerance, a summary needs at "
               f"least {MIN_WINDOW_RANKS}")
        steps = [st for st, asked in (("exponent", fit), ("outliers", outliers)) if asked]
        return LayerSummary(name, shape, "measured", matrix_shape=matrix_shape, eigs=eigs,
                            verdict=f"{VERDICT_TOO_FEW} ({n_pos})",
                            notes=(*out_notes, why), failed=tuple((st, why) for st in steps))
    if fit:
        try:
            pl = fit_power_law(eigs, n_boot=n_boot)
            if pl.short_window:
                out_notes.append(f"short window: k={pl.kmin}..{pl.kmax} spans "
                                 f"{pl.decades:.2f} decades (< 1); interval widened by the "
                                 "one-decade windows' spread")
        except ValueError as err:
            failed.append(("exponent", str(err)))
            out_notes.append(f"no exponent: {err}")
    if outliers and not complete:
        failed.append(("outliers", f"only the top {eigs.size} eigenvalues: no MP fit"))
    elif outliers:
        try:
            mp = fit_mp_bulk(eigs, ratio, n_samples=n_samples)
            rep = find_outliers(eigs, ratio, a, n_samples=n_samples, bulk=mp)  # one MP fit
            if rep.cap_reached:
                out_notes.append(f"outlier cap reached: all {rep.max_candidates} candidates "
                                 "tested were significant, there may be more")
        except ValueError as err:
            failed.append(("outliers", str(err)))
            out_notes.append(f"no MP fit: {err}")
    return LayerSummary(name, shape, "measured", matrix_shape=matrix_shape, eigs=eigs, fit=pl,
                        mp=mp, outliers=rep, verdict=layer_verdict(pl, mp, rep),
                        notes=tuple(out_notes), failed=tuple(failed))


def summarize_matrix(name: str, W: Any, *, center: bool = False, alpha: float = 0.05,
                     n_boot: int = 200) -> LayerSummary:
    """Spectrum of one tensor, then ``summarize_spectrum`` (never raises on content).

    Tensors that cannot be analysed (fewer than 2 axes, non-float, non-finite,
    fewer than 3 singular values) come back with ``status="skipped"`` and the
    ``reason``.
    """
    v.in_range("alpha", alpha, 0.0, 1.0, lo_open=True, hi_open=True)
    arr = _to_numpy(W)
    shape = tuple(int(s) for s in np.shape(arr))
    if isinstance(W, Skipped):
        return _skipped(name, (), W.reason)
    if arr is None:
        return _skipped(name, shape, f"not an array ({type(W).__name__})")
    notes: list[str] = []
    if arr.ndim < 2:
        what = "scalar" if arr.ndim == 0 else "1-D tensor (bias or normalisation)"
        return _skipped(name, shape, f"{what}, no matrix spectrum")
    if np.iscomplexobj(arr):
        return _skipped(name, shape, "complex dtype")
    if not np.issubdtype(arr.dtype, np.floating):
        return _skipped(name, shape, f"non-float dtype {arr.dtype}")
    if arr.ndim > 2:
        arr = arr.reshape(arr.shape[0], -1)
        notes.append(f"reshaped {shape} -> {arr.shape}")
    rows, cols = (int(s) for s in arr.shape)
    if min(rows, cols) < 3:
        return _skipped(name, shape, "fewer than 3 singular values", (rows, cols), tuple(notes))
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        nan, inf = count_non_finite(arr)
        kinds = ", ".join(f"{n} {what}" for n, what in ((nan, "NaN"), (inf, "inf")) if n)
        return _skipped(name, shape, f"contains NaN or inf: {nan + inf} of {arr.size} entries "
                        f"({kinds})", (rows, cols), tuple(notes))
    try:
        if center:
            eigs = covariance_spectrum(arr, center=True)
            ratio, n_samples = cols / (rows - 1), float(rows - 1)
        else:
            eigs = weight_spectrum(arr, normalize="rows")
            ratio, n_samples = cols / rows, float(rows)
    except ValueError as err:  # e.g. eigenvalues outside float64's range
        return _skipped(name, shape, str(err), (rows, cols), tuple(notes))
    return summarize_spectrum(eigs, ratio, n_samples=n_samples, alpha=alpha, n_boot=n_boot,
                              name=name, shape=shape, matrix_shape=(rows, cols),
                              notes=tuple(notes))


def summarize_tensors(tensors: Mapping[str, Any], *, center: bool = False,
                      alpha: float = 0.05, n_boot: int = 200) -> list[LayerSummary]:
    """``summarize_matrix`` for every entry, in order; nothing is dropped."""
    return [summarize_matrix(k, t, center=center, alpha=alpha, n_boot=n_boot)
            for k, t in tensors.items()]


def _to_numpy(x: Any) -> Any:
    """Arrays and tensors as numpy (floating tensors as float64: bfloat16 has no numpy
    dtype), numbers as 0-d arrays, anything else ``None``."""
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        return to_numpy(x.double() if x.dtype.is_floating_point else x)
    if isinstance(x, (np.ndarray, int, float, np.number)):
        return np.asarray(x)
    return None


def has_matrix(tensors: Mapping[str, Any]) -> bool:
    """Whether any entry is an array or tensor with at least 2 axes (something to measure)."""
    return any(not isinstance(t, Skipped) and len(getattr(t, "shape", ())) >= 2
               for t in tensors.values())


def summarize_file(path: str | Path, *, center: bool = False, alpha: float = 0.05,
                   n_boot: int = 200) -> list[LayerSummary]:
    """``load_tensors`` then ``summarize_matrix`` for every entry (listed, never dropped)."""
    return summarize_tensors(load_tensors(path), center=center, alpha=alpha, n_boot=n_boot)


_INT_COLS = ("exponent_kmin", "exponent_kmax", "n_outliers", "max_outliers")
_BOOL_COLS = ("exponent_short_window", "cap_reached")


def summaries_frame(summaries: list[LayerSummary]) -> pd.DataFrame:
    """One row per summary (``LayerSummary.record``), missing values as NaN / <NA>."""
    cols = list(LayerSummary("", (), "skipped").record())
    df = pd.DataFrame([s.record() for s in summaries], columns=cols)
    for c in _INT_COLS:
        df[c] = df[c].astype("Int64")
    for c in _BOOL_COLS:
        df[c] = df[c].astype("boolean")
    for c in cols:
        if c not in _INT_COLS + _BOOL_COLS and c not in ("shape", "matrix_shape") and \
                df[c].dtype == object and all(x is None or isinstance(x, float)
                                              for x in df[c]):
            df[c] = df[c].astype(np.float64)
    return df


def analyze(source: Any, *, center: bool = False, alpha: float = 0.05,
            n_boot: int = 200) -> pd.DataFrame:
    """Spectral summary of every tensor of a file, checkpoint, state_dict or torch module.

    Parameters
    ----------
    source
        A path (``.pt``/``.pth``/``.bin``/``.ckpt``, ``.safetensors``,
        ``.npy``, ``.npz``), a ``torch.nn.Module``, or a mapping of names to
        tensors (a ``state_dict`` or a loaded checkpoint).
    center, alpha, n_boot
        As in ``summarize_matrix``.

    Returns
    -------
    pandas.DataFrame
        One row per tensor: ``layer``, ``shape``, ``matrix_shape``, ``status``
        (measured / skipped), ``reason``, ``verdict``, the ``SUMMARY_COLUMNS``
        (``exponent``, ``exponent_ci_low``, ..., ``n_outliers``, ...) and
        ``notes``.
    """
    if isinstance(source, (str, Path)):
        tensors = load_tensors(source)
    else:
        tensors = state_tensors(source)
    return summaries_frame(summarize_tensors(tensors, center=center, alpha=alpha,
                                             n_boot=n_boot))
