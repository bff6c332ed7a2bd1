"""The tracker's summary process: SpectrumTracker's per-spectrum rows, computed off its thread.

``summarize`` turns one spectrum into the tracker's rows: eigenvalues and the
columns of :func:`specdyn.measure.summary.summarize_spectrum` (power-law fit,
Marchenko-Pastur fit and outlier test, verdict), the one summary pipeline that
``analyze`` uses too. It is many small numpy and
scipy calls, which hold the GIL; in a thread of the training process they stall
a training step made of many small torch calls (each call gives the GIL up and
waits to get it back): measured on ``benchmarks/tracker.py``, the log schedule's
22 records in the first 250 steps cost as much wall time as the training thread
and the worker's CPU added together, though a core was free. So by default the
tracker's worker thread computes the spectra (torch, on the tensors' device) and
sends the eigenvalues to one helper process per training process, shared by its
trackers (``python -c`` running ``main`` below), fed length-prefixed pickles
over a pipe (not ``multiprocessing``, whose spawn re-imports the user's script).
The helper ends when its pipe closes, so it dies with the training process.
``summarize`` is the one code path, in the helper or in the thread.
"""

from __future__ import annotations

import atexit
import os
import pickle
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from specdyn._threads import THREAD_ENV
from specdyn.measure.exponents import fit_power_law
from specdyn.measure.summary import LayerSummary, summarize_spectrum

__all__: list[str] = []

Row = tuple[int, str, str, int, float, str]
Skip = tuple[int, str, str, str]
#: A float32 eigenvalue is resolved when it is at least this many times its error bound.
RESOLVED = 10.0
#: Largest shift of the exponent, as a fraction of its interval's width, that the
#: eigenvalues float32 did not resolve may cause (the fit redone without them).
EXPONENT_SHIFT = 0.25
#: Largest relative change of the MP noise variance the float32 error may cause.
SIGMA2_SHIFT = 1e-3


@dataclass(frozen=True)
class Options:
    """The tracker settings a summary depends on."""

    fit: bool
    n_boot: int
    outliers: bool
    alpha: float
    top: int | None
    max_dense: int


@dataclass(frozen=True)
class Spectrum:
    """One measured spectrum: ``eigs`` decreasing; ``complete`` False for top-k only.

    ``error32``: the absolute error bound of the matrix's eigenvalues in float32,
    ``rank_tolerance(lambda_1, shape, float32)``, whether ``eigs`` was computed in
    float32 or float64 (0: no check); ``trace``: the exact sum of the eigenvalues
    (the Gram's trace, summed in float64; NaN: unknown); see ``float32_suffices``.
    """

    step: int
    layer: str
    kind: str
    eigs: np.ndarray
    complete: bool
    ratio: float
    n_samples: float
    n_rows: int | None = None
    error32: float = 0.0
    trace: float = float("nan")


def float32_suffices(summ: LayerSummary, eigs: np.ndarray, error: float,
                     trace: float = float("nan")) -> bool:
    """Whether eigenvalues known to within ``error`` give this summary (a posteriori).

    The tracker's precision policy: a matrix's float32 spectrum is kept when
    what the summaries read from it is resolved, else the matrix is redone in
    float64. Float32 eigenvalues of a Gram are off by at most about ``error``
    (``rank_tolerance`` in float32: ``lambda_1 max(n, p) eps32``; observed
    errors are 10-1000 times smaller); one is *resolved* at ``RESOLVED *
    error`` and above. Read by the summaries:

    - the power-law fit: its window's eigenvalues, which must be resolved, and
      the window search, which reads every positive eigenvalue: the fit redone
      on the resolved ones alone (as if the rest were round-off zeros) must
      give an exponent within ``EXPONENT_SHIFT`` of the interval's width;
    - the MP fit and the outlier count: the noise variance, the bulk's mean
      (the ``k`` candidates above it left out), moves by at most the error of
      the bulk's sum over its size, which must be below ``SIGMA2_SHIFT`` of it.
      That sum is all eigenvalues' sum less the top ``k``: with the exact
      ``trace``, its error is at most ``|sum(eigs) - trace| + k error``
      (measured, plus the candidates' bound), else ``error`` per bulk
      eigenvalue. The candidates themselves are resolved (above the bulk).

    ``error <= 0`` (float64) passes.
    """
    if not error > 0:
        return True
    # the cheap tests first: the refit below runs only when nothing else failed
    mp = summ.mp
    if mp is not None:
        k, bulk = mp.n_excluded, max(mp.n_bulk, 1)
        drift = (abs(float(np.sum(eigs)) - trace) + k * error if np.isfinite(trace)
                 else bulk * error)
        if not drift <= SIGMA2_SHIFT * mp.sigma2 * bulk:
            return False
    floor = RESOLVED * error
    n_res = int(np.count_nonzero(eigs >= floor))
    unresolved = n_res < int(np.count_nonzero(eigs > 0))
    pl = summ.fit
    if pl is not None and unresolved:
        if not eigs[pl.kmax - 1] >= floor:
            return False
        try:
            alt = fit_power_law(eigs[:n_res], n_boot=0)
        except ValueError:
            return False
        return not abs(alt.exponent - pl.exponent) > EXPONENT_SHIFT * (pl.ci_high - pl.ci_low)
    return not (pl is None and unresolved
                and any(what == "exponent" for what, _ in summ.failed))


def summarize(sp: Spectrum, opts: Options) -> tuple[list[Row], list[Skip], bool]:
    """The rows of one spectrum, the summaries skipped, with reasons, and ``float32_suffices``.

    ``summarize_spectrum`` computes the summary; its ``SUMMARY_COLUMNS`` become
    ``<kind>_<column>`` rows (``rank = 0``; missing values left out, booleans
    as 0 / 1), after the ``<kind>_eigenvalue`` rows and ``<kind>_samples``.
    """
    s, layer, kind, eigs = sp.step, sp.layer, sp.kind, sp.eigs
    summ = summarize_spectrum(eigs, sp.ratio, n_samples=sp.n_samples, alpha=opts.alpha,
                              n_boot=opts.n_boot, fit=opts.fit, outliers=opts.outliers,
                              complete=sp.complete)
    skipped: list[Skip] = []
    for what, why in summ.failed:
        if what == "outliers" and not sp.complete:
            why = (f"only the top {eigs.size} eigenvalues (min side > "
                   f"max_dense={opts.max_dense}): no MP fit")
        skipped.append((s, layer, f"{kind}_{what}", why))
    verdict = summ.verdict or ""
    keep = eigs if opts.top is None else eigs[: opts.top]
    rows: list[Row] = [(s, layer, f"{kind}_eigenvalue", i + 1, float(x), verdict)
                       for i, x in enumerate(keep)]
    values: list[tuple[str, float]] = []
    if sp.n_rows is not None:
        values.append(("samples", float(sp.n_rows)))
    values += [(q, float(val)) for q, val in summ.values().items() if val is not None]
    rows.extend((s, layer, f"{kind}_{q}", 0, val, verdict) for q, val in values)
    return rows, skipped, float32_suffices(summ, eigs, sp.error32, sp.trace)


Summary = tuple[list[Row], list[Skip], bool]


def summarize_all(spectra: list[Spectrum], opts: Options) -> list[Summary]:
    """``summarize`` each spectrum, in order."""
    return [summarize(sp, opts) for sp in spectra]


# -- the helper process -------------------------------------------------------------

def _send(f: IO[bytes], obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    f.write(struct.pack("<Q", len(data)))
    f.write(data)
    f.flush()


def _recv(f: IO[bytes]) -> Any:
    head = f.read(8)
    if len(head) < 8:
        raise EOFError
    (size,) = struct.unpack("<Q", head)
    data = f.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)  # noqa: S301 - our own pipe to our own child


# (not ``-m``: the package imports this module first, and runpy warns about that)
_CHILD = "from specdyn.measure._summary_process import main; main()"


class HelperProcess:
    """One child running ``main``; ``run`` is thread safe."""

    def __init__(self) -> None:
        env = dict(os.environ)
        # The child imports this copy of specdyn, and stays on one BLAS thread: its
        # matrices are small, and the training process has the cores.
        src = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        for var in THREAD_ENV:
            env[var] = "1"
        self._lock = threading.Lock()
        try:
            self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                [sys.executable, "-c", _CHILD], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, env=env)
        except OSError as err:
            raise RuntimeError(f"SpectrumTracker: cannot start the summary process "
                               f"({err}); pass summary_process=False") from err

    def run(self, spectra: list[Spectrum], opts: Options) -> tuple[list[Summary], float]:
        """``summarize_all(spectra, opts)`` and the child's CPU seconds."""
        with self._lock:
            proc = self._proc
            if proc is None or proc.stdin is None or proc.stdout is None:
                raise RuntimeError("SpectrumTracker: the summary process is closed")
            try:
                _send(proc.stdin, (spectra, opts))
                status, payload = _recv(proc.stdout)
            except (EOFError, OSError) as err:
                self._proc = None
                raise RuntimeError(f"SpectrumTracker: the summary process died (exit code "
                                   f"{proc.poll()}); pass summary_process=False to compute "
                                   "summaries in the worker thread") from err
        if status != "ok":
            raise RuntimeError(f"SpectrumTracker: the summary process failed:\n{payload}")
        results, cpu = payload
        return results, float(cpu)

    def close(self) -> None:
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is not None:
            if proc.stdin is not None:
                proc.stdin.close()  # the child ends at the end of its input
            proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()


_shared: HelperProcess | None = None
_shared_lock = threading.Lock()


def shared_helper() -> HelperProcess:
    """The process's helper, started on first use (closed at exit)."""
    global _shared
    with _shared_lock:
        if _shared is None or _shared._proc is None:
            _shared = HelperProcess()
            atexit.register(_shared.close)
        return _shared


def main() -> None:
    """The child: answer ``(spectra, opts)`` requests until the pipe closes."""
    import traceback

    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but replies on the pipe
    while True:
        try:
            spectra, opts = _recv(stdin)
        except EOFError:
            return
        c0 = time.process_time()
        try:
            results = summarize_all(spectra, opts)
            reply: tuple[str, Any] = ("ok", (results, time.process_time() - c0))
        except Exception:  # noqa: BLE001 - reported to the training process
            reply = ("error", traceback.format_exc())
        try:
            _send(stdout, reply)
        except BrokenPipeError:  # the training process is gone: so is the question
            return


if __name__ == "__main__":
    main()
