"""The core every framework adapter shares: one ``SpectrumTracker`` driven by training steps.

A framework callback (Lightning, Hugging Face) subclasses :class:`TrackerAdapter`
and maps its own hooks onto four calls: :meth:`~TrackerAdapter.start` when
training starts (builds the tracker on the framework's model, hooks off),
:meth:`~TrackerAdapter.begin_step` / :meth:`~TrackerAdapter.end_step` around
each optimiser step (hooks on only inside it, so evaluation batches never enter
the activations; one tracker step per optimiser step), and
:meth:`~TrackerAdapter.finish` when training ends.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from specdyn.measure.tracker import DEFAULT_SCHEDULE, SpectrumTracker

__all__ = ["TrackerAdapter", "framework_class"]


def framework_class(candidates: Sequence[str], adapter: str, install: str) -> Any:
    """The first importable ``"module:Class"`` of ``candidates`` (an optional dependency),
    else an ImportError saying that ``adapter`` needs ``pip install {install}``."""
    for spec in candidates:
        module, _, name = spec.partition(":")
        try:
            return getattr(importlib.import_module(module), name)
        except ImportError:
            continue
    raise ImportError(f"specdyn.integrations.{adapter} needs {install}: pip install {install}")


class TrackerAdapter:
    """Holds the tracker's arguments (``modules``, ``schedule`` and keywords, those of
    ``SpectrumTracker``) and, once training has started, ``tracker``."""

    def __init__(self, modules: Any = None, schedule: Any = DEFAULT_SCHEDULE, **tracker_kwargs: Any
                 ) -> None:
        self.modules = modules
        self.schedule = schedule
        self.tracker_kwargs = tracker_kwargs
        self.tracker: SpectrumTracker | None = None

    def start(self, model: Any, steps: int | None = None) -> SpectrumTracker:
        """Build the tracker on ``model``, its hooks off until the first step begins.

        ``steps`` is the framework's run length (the last tracker step), used unless
        the caller passed ``steps=`` itself: an ``int`` schedule (a log-spaced count)
        then resolves over the whole run.
        """
        kwargs = dict(self.tracker_kwargs)
        if steps is not None and steps >= 0 and "steps" not in kwargs:
            kwargs["steps"] = steps
        self.tracker = SpectrumTracker(model, self.modules, self.schedule, **kwargs)
        self.tracker.capture = False
        return self.tracker

    def begin_step(self) -> None:
        """Let the hooks keep this training step's module outputs."""
        if self.tracker is not None:
            self.tracker.capture = True

    def end_step(self) -> None:
        """Close the tracker step (hooks off until the next training step)."""
        if self.tracker is not None:
            self.tracker.capture = False
            self.tracker.step()

    def finish(self) -> None:
        """Finish queued work and write the final record."""
        if self.tracker is not None:
            self.tracker.close()
