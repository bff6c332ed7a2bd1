"""What SpectrumTracker copies, and when: its schedule, forward hooks and a record's copies.

The hooks exist only around a scheduled step (``Hooks.arm`` registers them,
``Hooks.disarm`` removes them and drops what they kept), so every other
forward pass takes torch's hook-free path. A :class:`Job` is one record's
copies (weights after the update, the module outputs the hooks kept), on
their own device; it is all the training thread does for a record.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from specdyn.measure.layers import ActivationSite
from specdyn.schedule import Schedule

__all__: list[str] = []


def schedule_predicate(schedule: Any, steps: int | None) -> Callable[[int], bool]:
    """The tracker's ``step -> bool`` from its ``schedule`` and ``steps`` arguments."""
    if isinstance(schedule, str):  # "log" would read as Schedule.log, a count: no strings
        raise ValueError(f"schedule must be a Schedule, a list of steps, an int count (with "
                         f"steps=) or a callable step -> bool; got {schedule!r} (about 10 "
                         "steps a decade, the default, is Schedule.per_decade(10))")
    if callable(schedule):
        return schedule
    elif isinstance(schedule, Iterable) and not isinstance(schedule, (Sequence, np.ndarray)):
        schedule = list(schedule)  # a set or a generator of steps
    return Schedule.of(schedule, name="schedule").predicate(steps, name="schedule")


def rank_bound(module: Any) -> int | None:
    """An upper bound on the rank of ``module``'s (centred) output, from its construction.

    ``Linear(d_in, d_out)``: ``d_in`` (an affine map of ``d_in`` features);
    ``Embedding(num, dim)``: ``num`` (one row per index). Exact types only: a
    subclass may compute something else. ``None``: no bound known.
    """
    import torch

    if type(module) is torch.nn.Linear:
        return int(module.in_features)
    if type(module) is torch.nn.Embedding:
        return int(module.num_embeddings)
    return None


def nbytes(t: Any) -> int:
    """Bytes of a tensor's elements."""
    return int(t.nelement()) * int(t.element_size())


@dataclass
class Job:
    """One record's copies: ``(name, tensor)`` weights and ``(name, [chunks])`` outputs.

    ``coalesced`` lists the earlier records this one replaced before they
    started (``policy="coalesce"``): their steps.
    """

    step: int
    weights: list[tuple[str, Any]]
    activations: list[tuple[str, Any]]
    copy_s: float = 0.0
    coalesced: list[int] = field(default_factory=list)
    nbytes: int = field(init=False)

    def __post_init__(self) -> None:
        # the copies this job holds (on their device) until the worker is done with it
        self.nbytes = (sum(nbytes(W) for _, W in self.weights)
                       + sum(nbytes(h) for _, buf in self.activations for h in buf))


class Hooks:
    """Forward hooks on the tracked modules that keep up to ``max_samples`` output rows.

    ``capture()`` is asked at each forward pass: outputs are kept only while it
    is true (the framework adapters turn it off outside training steps).
    """

    def __init__(self, sites: list[ActivationSite], max_samples: int,
                 capture: Callable[[], bool]) -> None:
        self.sites = sites
        self.max_samples = max_samples
        self._capture = capture
        self.buffers: dict[str, list[Any]] = {s.name: [] for s in sites}
        self._counts: dict[str, int] = dict.fromkeys(self.buffers, 0)
        self._handles: list[Any] = []

    @property
    def armed(self) -> bool:
        """Whether the hooks are registered."""
        return bool(self._handles)

    def arm(self) -> None:
        """Register the hooks (no-op when they are)."""
        if not self._handles:
            self._handles = [site.module.register_forward_hook(self._hook(site))
                             for site in self.sites]

    def disarm(self) -> None:
        """Remove the hooks and drop what they kept."""
        for h in self._handles:
            h.remove()
        self._handles = []
        for name in self.buffers:
            self.buffers[name], self._counts[name] = [], 0

    def take(self) -> list[tuple[str, list[Any]]]:
        """What the hooks kept, per site (then disarmed)."""
        acts = [(site.name, self.buffers[site.name]) for site in self.sites]
        self.disarm()
        return acts

    def _hook(self, site: ActivationSite) -> Callable[..., None]:
        name, fax = site.name, site.feature_axis

        def hook(_module: Any, _inputs: Any, output: Any) -> None:
            if not self._capture():
                return
            room = self.max_samples - self._counts[name]
            if room <= 0:
                return
            out = output[0] if isinstance(output, (tuple, list)) else output
            if not hasattr(out, "detach") or out.ndim < 2 or not out.is_floating_point():
                return
            h = out.detach()
            h = h.movedim(fax, -1) if fax != -1 else h
            h = h.reshape(-1, h.shape[-1])[:room]
            # Copy: an in-place op later in the forward (e.g. ReLU(inplace=True)) would
            # otherwise change what we recorded.
            self.buffers[name].append(h.clone())
            self._counts[name] += int(h.shape[0])

        return hook
