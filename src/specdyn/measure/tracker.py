"""Record spectra of any torch model during training, in two lines.

>>> tracker = SpectrumTracker(model)          # doctest: +SKIP
>>> for x, y in loader:                       # doctest: +SKIP
...     loss = loss_fn(model(x), y); loss.backward(); opt.step(); opt.zero_grad()
...     tracker.step()
>>> df = tracker.table()                      # doctest: +SKIP

Conventions
-----------
Steps
    ``tracker.step()`` closes iteration ``s`` (``s = 0, 1, ...``). At a
    scheduled ``s`` the forward hooks keep (a detached copy of) the outputs of
    the tracked modules seen during iteration ``s``, up to ``max_samples``
    rows; at other steps they return at once.
Activations
    A module output of shape ``(B, ..., d)`` is read as ``B * ...`` samples of
    ``d`` features; for convolutions the channel axis (1) is the feature axis
    and batch and positions are samples. Spectrum: eigenvalues of the centred
    covariance ``H_c^T H_c / n`` (``covariance_spectrum``), decreasing.
Weights
    ``module.weight`` reshaped to ``out x (in * kernel)``; spectrum: eigenvalues
    of ``W^T W / out`` (``weight_spectrum(W, "rows")``), so i.i.d. entries of
    variance ``s2`` give Marchenko-Pastur with ``ratio = in / out``.
Table
    Tidy rows ``(step, layer, quantity, rank, value)``. ``quantity`` is
    ``"<kind>_eigenvalue"`` (``rank`` = 1, 2, ... decreasing) or a per-layer
    summary with ``rank = 0``: ``<kind>_exponent``, ``<kind>_exponent_ci_low``,
    ``<kind>_exponent_ci_high``, ``<kind>_exponent_r2``, ``<kind>_exponent_kmin``,
    ``<kind>_exponent_kmax``, ``<kind>_mp_sigma2``, ``<kind>_mp_edge``,
    ``<kind>_outliers``, ``<kind>_samples``, where ``<kind>`` is
    ``activation`` or ``weight``. A summary that cannot be computed (e.g. a
    spectrum too short for a fit) is left out and counted in
    ``tracker.skipped``, with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import pandas as pd

from specdyn import _validate as v
from specdyn.measure.exponents import fit_power_law
from specdyn.measure.outliers import find_outliers
from specdyn.measure.spectra import covariance_spectrum, weight_spectrum

__all__ = ["SpectrumTracker", "log_schedule"]

_COLUMNS = ["step", "layer", "quantity", "rank", "value"]


def log_schedule(points_per_decade: int = 10) -> Callable[[int], bool]:
    """``s -> bool``: true at 0 and at ``round(10**(j / points_per_decade))``, j = 0, 1, ...

    With 10 points a decade: 0, 1, 2, 3, 4, 5, 6, 8, 10, 13, 16, 20, 25, 32, 40, ...
    so ``T`` steps record about ``10 log10(T)`` times.
    """
    ppd = v.positive_int("points_per_decade", points_per_decade)

    def scheduled(s: int) -> bool:
        if s <= 0:
            return s == 0
        j = round(ppd * math.log10(s))
        return any(round(10 ** (i / ppd)) == s for i in (j - 1, j, j + 1) if i >= 0)

    return scheduled


def _schedule(schedule: Any) -> Callable[[int], bool]:
    if schedule == "log":
        return log_schedule(10)
    if callable(schedule):
        return schedule
    if isinstance(schedule, (int, np.integer)) and not isinstance(schedule, bool):
        every = v.positive_int("schedule", schedule)
        return lambda s: s % every == 0
    if isinstance(schedule, Iterable) and not isinstance(schedule, str):
        steps = {v.positive_int("schedule", s, minimum=0) for s in schedule}
        return lambda s: s in steps
    raise ValueError("schedule must be 'log', a positive int (every so many steps), an "
                     f"iterable of steps or a callable step -> bool; got {schedule!r}")


def _default_modules(model: Any) -> dict[str, Any]:
    import torch.nn as nn

    kinds = (nn.Linear, nn.Conv1d, nn.Conv2d, nn.Conv3d)
    mods = {name: m for name, m in model.named_modules() if isinstance(m, kinds)}
    if not mods:
        raise ValueError("model has no Linear or Conv modules to track; pass modules=")
    return mods


def _resolve_modules(model: Any, modules: Any) -> dict[str, Any]:
    if modules is None:
        return _default_modules(model)
    named = dict(model.named_modules())
    if isinstance(modules, dict):
        return {str(k): m for k, m in modules.items()}
    out: dict[str, Any] = {}
    for item in modules:
        if isinstance(item, str):
            if item not in named:
                raise ValueError(f"modules: {item!r} is not a submodule name of the model "
                                 f"(known: {', '.join(n for n in named if n)})")
            out[item] = named[item]
        else:
            name = next((n for n, m in named.items() if m is item), None)
            if name is None:
                raise ValueError("modules: every module must belong to the model")
            out[name or "model"] = item
    if not out:
        raise ValueError("modules must name at least one module")
    return out


class SpectrumTracker:
    """Forward hooks that record activation and weight spectra at scheduled steps.

    Parameters
    ----------
    model
        A ``torch.nn.Module``.
    modules
        ``None`` (every Linear and Conv module), a list of submodule names or
        modules, or a ``{name: module}`` dict.
    schedule
        ``"log"`` (10 steps a decade, see ``log_schedule``), an int ``N``
        (every ``N`` steps), an iterable of steps, or a callable ``step -> bool``.
    max_samples
        At most this many activation rows per module and step (the first ones seen).
    weights, activations
        What to record.
    top
        Keep only the ``top`` largest eigenvalues of each spectrum in the table
        (the fits and outlier tests always use the full spectrum).
    fit, outliers
        Whether to add power-law fits and Marchenko-Pastur outlier counts.
    n_boot
        Bootstrap resamples for the exponent intervals (small keeps it cheap).
    alpha
        Level of the outlier test.
    """

    def __init__(self, model: Any, modules: Any = None, schedule: Any = "log", *,
                 max_samples: int = 2048, weights: bool = True, activations: bool = True,
                 top: int | None = None, fit: bool = True, outliers: bool = True,
                 n_boot: int = 50, alpha: float = 0.05) -> None:
        if not hasattr(model, "named_modules"):
            raise ValueError(f"model must be a torch.nn.Module, got {type(model).__name__}")
        self.model = model
        self.modules = _resolve_modules(model, modules)
        self._scheduled = _schedule(schedule)
        self.max_samples = v.positive_int("max_samples", max_samples, minimum=2)
        self.weights = bool(weights)
        self.activations = bool(activations)
        if not (self.weights or self.activations):
            raise ValueError("weights and activations cannot both be False: nothing to record")
        self.top = None if top is None else v.positive_int("top", top)
        self.fit = bool(fit)
        self.outliers = bool(outliers)
        self.n_boot = v.positive_int("n_boot", n_boot, minimum=0)
        self.alpha = v.in_range("alpha", alpha, 0.0, 1.0, lo_open=True, hi_open=True)
        self.current_step = 0
        self.skipped: list[tuple[int, str, str, str]] = []
        self._rows: list[tuple[int, str, str, int, float]] = []
        self._buffers: dict[str, list[Any]] = {name: [] for name in self.modules}
        self._counts: dict[str, int] = dict.fromkeys(self.modules, 0)
        self._handles: list[Any] = []
        if self.activations:
            for name, mod in self.modules.items():
                self._handles.append(mod.register_forward_hook(self._hook(name, mod)))

    # -- hooks ---------------------------------------------------------------
    def _hook(self, name: str, mod: Any) -> Callable[..., None]:
        import torch.nn as nn

        conv = isinstance(mod, (nn.Conv1d, nn.Conv2d, nn.Conv3d))

        def hook(_module: Any, _inputs: Any, output: Any) -> None:
            if not self._scheduled(self.current_step):
                return
            room = self.max_samples - self._counts[name]
            if room <= 0:
                return
            out = output[0] if isinstance(output, (tuple, list)) else output
            if not hasattr(out, "detach") or out.ndim < 2:
                return
            h = out.detach()
            h = h.movedim(1, -1) if conv else h
            h = h.reshape(-1, h.shape[-1])[:room]
            # Copy: an in-place op later in the forward (e.g. ReLU(inplace=True)) would
            # otherwise change what we recorded.
            self._buffers[name].append(h.clone())
            self._counts[name] += int(h.shape[0])

        return hook

    # -- public API ----------------------------------------------------------
    def step(self) -> None:
        """Close the current iteration: measure if it is scheduled, then advance."""
        if self._scheduled(self.current_step):
            self.record()
        self.current_step += 1

    def record(self) -> None:
        """Measure now (at ``current_step``) whatever is available, schedule or not."""
        s = self.current_step
        for name, mod in self.modules.items():
            if self.weights:
                W = getattr(mod, "weight", None)
                if W is None or W.ndim < 2:
                    self._skip(s, name, "weight", "module has no weight matrix")
                else:
                    Wm = W.detach().reshape(W.shape[0], -1)
                    self._check_finite(Wm, s, name, "weights")
                    N, M = (int(x) for x in Wm.shape)
                    eigs = weight_spectrum(Wm, normalize="rows")
                    self._measure(s, name, "weight", eigs, ratio=M / N, n_samples=N)
            if self.activations:
                buf = self._buffers[name]
                if not buf:
                    self._skip(s, name, "activation", "no forward pass seen at this step")
                    continue
                import torch

                H = torch.cat(buf, dim=0)
                self._check_finite(H, s, name, "activations")
                n, p = (int(x) for x in H.shape)
                if n < 2:
                    self._skip(s, name, "activation", "fewer than 2 samples")
                else:
                    eigs = covariance_spectrum(H, center=True)
                    # Centring leaves n - 1 degrees of freedom.
                    self._measure(s, name, "activation", eigs, ratio=p / (n - 1),
                                  n_samples=n - 1, n_rows=n)
                self._buffers[name] = []
                self._counts[name] = 0

    def table(self) -> pd.DataFrame:
        """All records as a tidy DataFrame ``(step, layer, quantity, rank, value)``."""
        df = pd.DataFrame(self._rows, columns=_COLUMNS)
        return df.astype({"step": "int64", "layer": "string", "quantity": "string",
                          "rank": "int64", "value": "float64"})

    def close(self) -> None:
        """Remove the hooks (the recorded table stays)."""
        for h in self._handles:
            h.remove()
        self._handles = []

    def __enter__(self) -> SpectrumTracker:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- internals -----------------------------------------------------------
    def _skip(self, step: int, layer: str, kind: str, reason: str) -> None:
        self.skipped.append((step, layer, kind, reason))

    @staticmethod
    def _check_finite(x: Any, step: int, layer: str, what: str) -> None:
        import torch

        if not bool(torch.isfinite(x).all()):
            raise FloatingPointError(
                f"SpectrumTracker: {what} of layer {layer!r} are not finite at step {step}: "
                "the run diverged. Lower the learning rate (or add gradient clipping) and "
                "rerun; nothing was recorded for this step.")

    def _measure(self, s: int, layer: str, kind: str, eigs: np.ndarray, *, ratio: float,
                 n_samples: float, n_rows: int | None = None) -> None:
        rows = self._rows
        keep = eigs if self.top is None else eigs[: self.top]
        rows.extend((s, layer, f"{kind}_eigenvalue", i + 1, float(x)) for i, x in enumerate(keep))
        if n_rows is not None:
            rows.append((s, layer, f"{kind}_samples", 0, float(n_rows)))
        if self.fit:
            try:
                f = fit_power_law(eigs, n_boot=self.n_boot)
            except ValueError as err:
                self._skip(s, layer, f"{kind}_exponent", str(err))
            else:
                for q, val in (("exponent", f.exponent), ("exponent_ci_low", f.ci_low),
                               ("exponent_ci_high", f.ci_high), ("exponent_r2", f.r2),
                               ("exponent_kmin", f.kmin), ("exponent_kmax", f.kmax)):
                    rows.append((s, layer, f"{kind}_{q}", 0, float(val)))
        if self.outliers:
            try:
                rep = find_outliers(eigs, ratio, self.alpha, n_samples=n_samples)
            except ValueError as err:
                self._skip(s, layer, f"{kind}_outliers", str(err))
            else:
                rows.append((s, layer, f"{kind}_outliers", 0, float(rep.n_outliers)))
                rows.append((s, layer, f"{kind}_mp_sigma2", 0, rep.sigma2))
                rows.append((s, layer, f"{kind}_mp_edge", 0, rep.edge))
