"""The math of one SpectrumTracker record: a job's copies in; spectra, precision policy, rows out.

:class:`RecordMath` turns a :class:`~specdyn.measure._tracker_hooks.Job` into
the record's rows: the finiteness check, the dense spectra (batched, float32
first: :func:`~specdyn.measure.spectra.batched_gram_eigenvalues` and
:func:`~specdyn.measure.spectra.linear_output_eigenvalues`), the top of the
layers above ``max_dense``, the summaries (in the shared helper process or
here: :mod:`specdyn.measure._summary_process`) and the a-posteriori precision
rule with its memory of which matrices needed float64.

Precision (``precision="auto"``)
    Float32 Grams and eigenvalues first, then a check *a posteriori*, matrix by
    matrix, of what its summaries read: float32 eigenvalues are off by at most
    about ``rank_tolerance(lambda_1, shape, float32)`` (``lambda_1 max(n, p)
    eps32``), and the power-law fit's window, its window search (the fit redone
    without the eigenvalues float32 does not resolve may not move the exponent
    by more than a quarter of its interval) and the MP noise variance must be
    resolved at that error (``_summary_process.float32_suffices``); a matrix
    that fails is redone in float64, its summaries with it, and starts in
    float64 at the next record (until its float64 spectrum shows float32 would
    do at twice the float32 bound: a margin, so that a matrix at the rule's
    boundary does not alternate); a matrix whose smaller side is below 128 is
    done in float64 at once (its float64 Gram costs less than the check);
    ``precision="float64"``: float64 throughout.
Cheaper Grams
    On a CPU a Gram is formed as its lower block triangle, what ``eigvalsh``
    reads. The output of a ``Linear(d_in, d_out)`` or an ``Embedding``, whose
    rank is at most ``d_in`` or its number of rows, is first projected on its
    range when that bound is below half its smaller side, so a ``d_in +
    10``-square Gram is diagonalised instead of a ``d_out``-square one. A
    widening ``Linear`` (``d_in < d_out``; ``_tracker_hooks.takes_input``) is
    cheaper still: its hook keeps the input rows and the weight of that
    forward pass instead of the output (a smaller copy), and the output's
    spectrum comes from the ``d_in``-square ``L^T X_c^T X_c L``, ``W^T W = L
    L^T`` (Cholesky; the QR factor ``R`` of the centred input and ``R W^T``
    when ``W^T W`` is singular: ``spectra.linear_output_eigenvalues``, about a
    quarter of the work); its float32 error bound is scaled by ``c^2`` (QR:
    ``c``), ``c = ||X_c|| ||W|| / ||Y_c||``.
Large layers
    Layers with ``min(rows, cols) > max_dense`` get the top ``top or 256``
    eigenvalues by randomized SVD (``spectra.top_gram_eigenvalues``, its sketch
    drawn from a local generator: the tracker never reads or changes torch's or
    numpy's global random state); their MP fit and outlier test, which need the
    whole spectrum, are skipped with that reason.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from specdyn.measure._summary_process import (
    Options,
    Row,
    Skip,
    Spectrum,
    Summary,
    shared_helper,
    summarize_all,
)
from specdyn.measure._tracker_hooks import Job, rank_bound
from specdyn.measure.layers import ActivationSite
from specdyn.measure.spectra import (
    batched_gram_eigenvalues,
    linear_output_eigenvalues,
    rank_tolerance,
    top_gram_eigenvalues,
)

__all__: list[str] = []

#: Matrices whose smaller side is below this are done in float64 at once (their float64
#: Gram costs less than the a-posteriori check).
F32_MIN = 128
#: A matrix done in float64 goes back to float32 at its next record only if its float64
#: spectrum passes the check at this many times the float32 error bound: without the
#: margin a matrix at the rule's boundary alternates, and every other record pays a
#: float32 try and its float64 redo.
F32_RETURN = 2.0


class RecordMath:
    """The spectra and summaries of a record; remembers which matrices need float64.

    Parameters
    ----------
    sites
        The tracker's activation sites (their modules give the rank bounds).
    max_dense, top, precision, options
        The tracker's settings of the same names; ``options`` the summaries'.
    in_helper
        Compute the summaries in the shared helper process.
    """

    def __init__(self, sites: list[ActivationSite], *, max_dense: int, top: int | None,
                 precision: str, options: Options, in_helper: bool) -> None:
        self.bound = {site.name: rank_bound(site.module) for site in sites}
        self.max_dense = max_dense
        self.top = top
        self.precision = precision
        self.options = options
        self.in_helper = in_helper
        self.needs64: dict[tuple[str, str], bool] = {}  # (layer, kind): float64 last time

    def measure(self, job: Job, cost: dict[str, float], out: Path | None,
                given: Sequence[Spectrum] = ()) -> tuple[list[Row], list[Skip], float]:
        """Rows of one record, what was skipped (with reasons), and the summary process's CPU.

        Fills ``cost``'s ``spectra_s``, ``summaries_s``, ``spectra_cpu_s``,
        ``summaries_cpu_s`` and ``redone_float64``. Non-finite input raises
        ``FloatingPointError`` (``out``: named in the message). ``given``: spectra
        measured elsewhere (reduced over ranks, float64), summarised with the job's.
        """
        import torch

        t0, c0 = time.perf_counter(), time.thread_time()
        s = job.step
        skipped: list[Skip] = []
        mats: list[tuple[str, str, Any]] = [(name, "weight", W) for name, W in job.weights]
        # a Linear whose input the hooks kept (``takes_input``): its output is X W^T (+ b)
        factor: dict[int, Any] = {}
        for name, buf in job.activations:
            if not buf:
                skipped.append((s, name, "activation", "no forward pass seen at this step"))
                continue
            X, Wf = torch.cat(buf, dim=0), job.factors.get(name)
            if Wf is not None and min(int(X.shape[0]), int(Wf.shape[0])) > self.max_dense:
                X, Wf = X @ Wf.to(X.dtype).mT, None  # the top-k path reads the output itself
            if Wf is not None:
                factor[len(mats)] = Wf
            mats.append((name, "activation", X))
        if mats:  # one host sync for every finiteness check of the record; min and max
            # (NaN and inf show there) in one pass each, without a mask the size of X
            finite = torch.stack([torch.isfinite(torch.stack(torch.aminmax(X))).all().to("cpu")
                                  for _, _, X in mats])
            for ok, (name, kind, _) in zip(finite.tolist(), mats, strict=True):
                if not ok:
                    what = "weights" if kind == "weight" else "activations"
                    _not_finite(s, name, what, out)
        keep, fac = [], []
        for j, (name, kind, X) in enumerate(mats):
            if kind == "activation" and int(X.shape[0]) < 2:
                skipped.append((s, name, "activation", "fewer than 2 samples"))
            else:
                keep.append((name, kind, X))
                fac.append(factor.get(j))
        # the measured matrix's shape: a kept input stands for the n x d_out output
        shape = [(int(X.shape[0]), int(X.shape[1]) if F is None else int(F.shape[0]))
                 for (_, _, X), F in zip(keep, fac, strict=True)]
        dense = [i for i, sh in enumerate(shape) if min(sh) <= self.max_dense]
        keys = [(keep[i][0], keep[i][1]) for i in dense]
        auto = self.precision == "auto"
        # float32 where it can pay: a Gram whose smaller side is below F32_MIN costs less
        # in float64 than the a-posteriori check costs
        small = {i for i in dense if min(shape[i]) < F32_MIN}
        for i, key in zip(dense, keys, strict=True):
            if i in small:
                self.needs64[key] = True
        # float64 from the start: not worth a float32 try, or needed it last time
        start64 = {i for i, key in zip(dense, keys, strict=True)
                   if not auto or self.needs64.get(key, False)}
        eigs = self.spectra([keep[i] for i in dense], [fac[i] for i in dense],
                            [i not in start64 for i in dense])
        spectra_of: dict[int, tuple[np.ndarray, bool]] = {
            i: (e[0], True) for i, e in zip(dense, eigs, strict=True)}
        via: dict[int, tuple[float, float]] = {
            i: e[1] for i, e in zip(dense, eigs, strict=True) if e[1] is not None}
        for i, (_, kind, X) in enumerate(keep):
            if i not in spectra_of:  # too big for a dense Gram: the top of it
                k = min(self.top or 256, min(int(d) for d in X.shape) - 1)
                spectra_of[i] = (top_gram_eigenvalues(X, k, center=kind == "activation"), False)
        spectra = [self.spectrum(s, name, kind, X, *spectra_of[i],
                                 check=auto and i in dense and i not in small,
                                 shape=shape[i], via=via.get(i),
                                 margin=F32_RETURN if i in start64 else 1.0)
                   for i, (name, kind, X) in enumerate(keep)]
        t1, c1 = time.perf_counter(), time.thread_time()
        results, cpu = self.summarize(spectra + list(given))
        # a posteriori: a float32 spectrum whose summaries read eigenvalues float32 did not
        # resolve is redone in float64 (and starts in float64 at the next record)
        redo = [i for i in dense if i not in start64 and not results[i][2]]
        for i, key in zip(dense, keys, strict=True):
            if auto:
                self.needs64[key] = i in small or not results[i][2]
        if redo:
            c2 = time.thread_time()
            again = self.spectra([keep[i] for i in redo], [fac[i] for i in redo],
                                 [False] * len(redo))
            redone = [self.spectrum(s, keep[i][0], keep[i][1], keep[i][2], e, True, check=True,
                                    shape=shape[i], via=info, margin=F32_RETURN)
                      for i, (e, info) in zip(redo, again, strict=True)]
            c3 = time.thread_time()
            more, cpu2 = self.summarize(redone)
            cpu += cpu2
            for i, res in zip(redo, more, strict=True):
                results[i] = res
            c1 += c3 - c2  # the float64 spectra count as decomposition
        rows = [r for res in results for r in res[0]]
        extra = [k for res in results for k in res[1]]
        cost["spectra_s"], cost["summaries_s"] = t1 - t0, time.perf_counter() - t1
        cost["spectra_cpu_s"] = c1 - c0
        cost["summaries_cpu_s"] = time.thread_time() - c1 + cpu
        cost["redone_float64"] = float(len(redo))
        return rows, skipped + extra, cpu

    def spectra(self, mats: list[tuple[str, str, Any]], factors: list[Any], f32: list[bool],
                ) -> list[tuple[np.ndarray, tuple[float, float] | None]]:
        """Dense spectra of ``(name, kind, X)``: float32 where ``f32``, else float64.

        With each, for a kept input (``factors[i]``, its weight): the trace and
        error amplification of ``linear_output_eigenvalues``; else ``None``.
        """
        import torch

        out: list[tuple[np.ndarray, tuple[float, float] | None]] = [(np.empty(0), None)] * len(mats)
        for i, W in enumerate(factors):
            if W is not None:
                e, trace, amp = linear_output_eigenvalues(
                    mats[i][2], W, dtype=torch.float32 if f32[i] else torch.float64)
                out[i] = (e, (trace, amp))
        rest = [i for i, W in enumerate(factors) if W is None]
        if rest:
            sub = [mats[i] for i in rest]
            eigs = batched_gram_eigenvalues(
                [X for _, _, X in sub], [kind == "activation" for _, kind, _ in sub],
                ranks=[self.bound.get(name) if kind == "activation" else None
                       for name, kind, _ in sub],
                start64=[not f32[i] for i in rest],
                precision="float32" if any(f32[i] for i in rest) else "float64")
            for i, e in zip(rest, eigs, strict=True):
                out[i] = (e, None)
        return out

    @staticmethod
    def spectrum(s: int, name: str, kind: str, X: Any, e: np.ndarray, complete: bool, *,
                 check: bool, shape: tuple[int, int] | None = None,
                 via: tuple[float, float] | None = None, margin: float = 1.0) -> Spectrum:
        """The summary process's input; ``check``: with the float32 error bound.

        ``shape``: of the measured matrix (default ``X``'s); ``via``: the trace
        and error amplification of ``linear_output_eigenvalues`` when ``X`` is
        the input; ``margin``: the bound is multiplied by it (``F32_RETURN`` for
        a float64 spectrum, whose check only decides the next record's precision).
        """
        import torch

        n, p = shape if shape is not None else (int(d) for d in X.shape)
        err, trace = 0.0, float("nan")
        if check and e.size and via is not None:
            # the route's rounding is relative to ||X_c|| ||W|| (and its Grams), not ||Y_c||
            # (the amplification); its trace carries the same rounding, so none is passed
            # and the noise variance's check counts each bulk eigenvalue's bound
            err = rank_tolerance(float(e[0]), (n, p), torch.float32) * via[1] * margin
        elif check and e.size:
            err = rank_tolerance(float(e[0]), (n, p), torch.float32) * margin
            # the eigenvalues' exact sum, for the a-posteriori check: norms of 256-entry
            # chunks in X's dtype (to ~256 eps32), their squares summed in float64
            Xc = X if kind == "weight" else X - X.mean(dim=0, keepdim=True)
            chunks = torch.linalg.vector_norm(Xc.reshape(-1, 256) if Xc.numel() % 256 == 0
                                              else Xc, dim=-1)
            trace = float(chunks.double().square().sum()) / n
        if kind == "weight":
            return Spectrum(s, name, "weight", e, complete, ratio=p / n, n_samples=float(n),
                            error32=err, trace=trace)
        # centring leaves n - 1 degrees of freedom
        return Spectrum(s, name, "activation", e, complete, ratio=p / (n - 1),
                        n_samples=float(n - 1), n_rows=n, error32=err, trace=trace)

    def summarize(self, spectra: list[Spectrum]) -> tuple[list[Summary], float]:
        """``summarize_all`` in the helper process or here, and the helper's CPU seconds."""
        if self.in_helper:
            return shared_helper().run(spectra, self.options)
        return summarize_all(spectra, self.options), 0.0


def _not_finite(step: int, layer: str, what: str, out: Path | None) -> None:
    where = (f"rows of earlier steps are in {str(out / 'rows')!r}" if out is not None
             else "rows of earlier steps are kept")
    raise FloatingPointError(
        f"SpectrumTracker: {what} of layer {layer!r} are not finite at step {step}: "
        "the run diverged. Lower the learning rate (or add gradient clipping) and "
        f"rerun; nothing was recorded for this step, {where}.")
