"""What SpectrumTracker copies, and when: its schedule, forward hooks and a record's copies.

The hooks exist only around a scheduled step (``Hooks.arm`` registers them,
``Hooks.disarm`` removes them and drops what they kept), so every other
forward pass takes torch's hook-free path. A :class:`Job` is one record's
copies (weights after the update, the module outputs the hooks kept), on
their own device; it is all the training thread does for a record. On a CUDA
device the worker computes on its own stream (:class:`SideStreams`), so the
training stream never queues behind a record's kernels.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
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


def takes_input(module: Any) -> bool:
    """Whether the tracker keeps ``module``'s input (and weight) instead of its output.

    An exact ``Linear(d_in, d_out)`` with ``d_in < d_out`` (and, decided at
    the first forward pass of a record, ``(rows + d_out) d_in < rows d_out``:
    the input and weight are the smaller copy): its centred output
    is ``X_c W^T``, whose spectrum
    :func:`specdyn.measure.spectra.linear_output_eigenvalues` takes from the
    ``n x d_in`` input and the ``d_out x d_in`` weight, a smaller copy and a
    quarter of the work of the ``n x d_out`` output's.
    """
    import torch

    return type(module) is torch.nn.Linear and int(module.in_features) < int(module.out_features)


def nbytes(t: Any) -> int:
    """Bytes of a tensor's elements."""
    return int(t.nelement()) * int(t.element_size())


@dataclass
class Job:
    """One record's copies: ``(name, tensor)`` weights and ``(name, [chunks])`` outputs.

    ``coalesced`` lists the earlier records this one replaced before they
    started (``policy="coalesce"``): their steps. Across ranks
    (:mod:`specdyn.measure._tracker_ranks`): ``shards`` holds this rank's pieces of
    the sharded weights, and ``final`` marks ``close()``'s unscheduled record.
    """

    step: int
    weights: list[tuple[str, Any]]
    activations: list[tuple[str, Any]]
    copy_s: float = 0.0
    coalesced: list[int] = field(default_factory=list)
    #: for a module whose input was kept (``takes_input``): the weight of that forward pass
    factors: dict[str, Any] = field(default_factory=dict)
    #: ``(device, event)`` per CUDA device of the copies: recorded on the training thread's
    #: stream after the copies were queued (:meth:`SideStreams.mark`)
    ready: list[tuple[Any, Any]] = field(default_factory=list)
    shards: list[Any] = field(default_factory=list)
    final: bool = False
    nbytes: int = field(init=False)

    def __post_init__(self) -> None:
        # the copies this job holds (on their device) until the worker is done with it
        self.nbytes = sum(nbytes(t) for t in self.tensors())

    def tensors(self) -> list[Any]:
        """Every copy the job holds."""
        return ([W for _, W in self.weights] + [h for _, buf in self.activations for h in buf]
                + list(self.factors.values()) + [p.local for p in self.shards])


class SideStreams:
    """The worker's own CUDA stream on each device, so that training never waits for a record.

    Kernels on one stream run in the order they were queued, so a record computed
    on the training thread's stream would hold up every training kernel queued
    after it. :meth:`mark` (training thread) records an event on each CUDA
    device's current stream after a job's copies; :meth:`use` (worker) makes
    that device's side stream wait for the event, so the record reads finished
    copies, computes there, and synchronises the side stream before the job is
    released: the copies were allocated on the training stream, whose allocator
    may hand their memory out again as soon as they are freed. Copies on a CPU:
    no CUDA call at all.
    """

    def __init__(self) -> None:
        self._streams: dict[Any, Any] = {}

    @staticmethod
    def mark(job: Job) -> None:
        """Record, on each CUDA device's current stream, that ``job``'s copies are queued."""
        devices = {t.device for t in job.tensors() if t.device.type == "cuda"}
        if not devices:
            return
        import torch

        for device in sorted(devices, key=str):
            event = torch.cuda.Event()
            event.record(torch.cuda.current_stream(device))
            job.ready.append((device, event))

    def wait(self, job: Job) -> None:
        """Inside :meth:`use`: make the side streams wait for ``job``'s copies too (the
        ranks' agreement replaced the job in use by a later one)."""
        for device, event in job.ready:
            stream = self._streams.get(device)
            if stream is not None:
                stream.wait_event(event)

    @contextmanager
    def use(self, job: Job) -> Iterator[None]:
        """Run the block's kernels on the side streams, after ``job``'s copies are done."""
        if not job.ready:
            yield
            return
        import torch

        with ExitStack() as stack:
            streams = []
            for device, event in job.ready:
                stream = self._streams.get(device)
                if stream is None:
                    stream = self._streams[device] = torch.cuda.Stream(device=device)
                stream.wait_event(event)
                stack.enter_context(torch.cuda.stream(stream))
                streams.append(stream)
            try:
                yield
            finally:
                for stream in streams:  # before the copies go back to the allocator
                    stream.synchronize()


class Hooks:
    """Forward hooks on the tracked modules that keep up to ``max_samples`` output rows.

    ``capture()`` is asked at each forward pass: outputs are kept only while it
    is true (the framework adapters turn it off outside training steps).
    For a module with ``takes_input`` (while ``inputs`` is true) the hook keeps
    the input rows and, once a record, a copy of the weight they met.
    """

    def __init__(self, sites: list[ActivationSite], max_samples: int,
                 capture: Callable[[], bool]) -> None:
        self.sites = sites
        self.max_samples = max_samples
        self._capture = capture
        self.buffers: dict[str, list[Any]] = {s.name: [] for s in sites}
        self._counts: dict[str, int] = dict.fromkeys(self.buffers, 0)
        self._handles: list[Any] = []
        self.inputs = True
        self.factors: dict[str, Any] = {}

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
        self.factors = {}

    def take(self) -> tuple[list[tuple[str, list[Any]]], dict[str, Any]]:
        """What the hooks kept, per site, and the weights of the inputs kept (then disarmed)."""
        acts = [(site.name, self.buffers[site.name]) for site in self.sites]
        factors = self.factors
        self.disarm()
        return acts, factors

    def _hook(self, site: ActivationSite) -> Callable[..., None]:
        name, fax = site.name, site.feature_axis
        by_input = takes_input(site.module)

        def hook(module: Any, inputs: Any, output: Any) -> None:
            if not self._capture():
                return
            room = self.max_samples - self._counts[name]
            if room <= 0:
                return
            if by_input and self.inputs and (name in self.factors or not self._counts[name]):
                x = inputs[0] if isinstance(inputs, (tuple, list)) and inputs else None
                if (x is not None and hasattr(x, "detach") and x.ndim >= 2
                        and x.is_floating_point() and int(x.shape[-1]) == module.in_features):
                    h = x.detach().reshape(-1, int(x.shape[-1]))[:room]
                    if name not in self.factors:
                        # only when input and weight are the smaller copy (the first pass's
                        # rows decide; a few rows and a large weight: the output)
                        d_in, d_out, rows = module.in_features, module.out_features, h.shape[0]
                        if (rows + d_out) * d_in >= rows * d_out:
                            self._keep_output(name, fax, output, room)
                            return
                        self.factors[name] = module.weight.detach().clone()
                    self.buffers[name].append(h.clone())
                    self._counts[name] += int(h.shape[0])
                    return
                if name in self.factors:  # inputs so far: no output rows mixed in
                    return
            self._keep_output(name, fax, output, room)

        return hook

    def _keep_output(self, name: str, fax: int, output: Any, room: int) -> None:
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
