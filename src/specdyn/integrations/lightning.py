"""A PyTorch Lightning callback that runs a ``SpectrumTracker`` on the LightningModule.

>>> trainer = Trainer(callbacks=[SpectrumCallback(out="runs/spectra")])  # doctest: +SKIP

One tracker step per optimiser step (closed at the ``on_train_batch_end`` after
which ``trainer.global_step`` has moved, so with ``accumulate_grad_batches = k`` a
tracker step sees the ``k`` batches of one optimiser step); the tracker's state is
part of Lightning's checkpoints, so ``trainer.fit(..., ckpt_path=...)`` continues
the same record. Needs ``lightning`` or ``pytorch_lightning``.
"""

from __future__ import annotations

import math
from typing import Any

from specdyn.integrations._adapter import TrackerAdapter, framework_class
from specdyn.measure.tracker import DEFAULT_SCHEDULE

# lightning, else the standalone package
Callback: Any = framework_class(["lightning.pytorch:Callback", "pytorch_lightning:Callback"],
                                "lightning", "lightning")

__all__ = ["SpectrumCallback"]


class SpectrumCallback(TrackerAdapter, Callback):
    """Track the LightningModule (arguments and ``tracker``: :class:`TrackerAdapter`).

    Tracker step ``s`` is optimiser step ``s + 1``; unless ``steps=`` is given, the
    tracker's run length is the Trainer's (``steps =
    trainer.estimated_stepping_batches - 1``; none for an endless run), so an ``int``
    schedule (a log-spaced count) resolves over the whole run.
    """

    def __init__(self, modules: Any = None, schedule: Any = DEFAULT_SCHEDULE, **tracker_kwargs: Any
                 ) -> None:
        super().__init__(modules, schedule, **tracker_kwargs)
        self._pending: dict[str, Any] | None = None
        self._global_step = 0

    def on_train_start(self, trainer: Any, pl_module: Any) -> None:
        """Build the tracker on the LightningModule (its data and checkpoint are loaded by now)."""
        if self.tracker is None:
            total = trainer.estimated_stepping_batches  # optimiser steps; inf if endless
            tracker = self.start(pl_module, int(total) - 1 if math.isfinite(total) else None)
            if self._pending is not None:
                tracker.load_state_dict(self._pending)
                self._pending = None
        self._global_step = int(trainer.global_step)

    def on_train_batch_start(self, trainer: Any, pl_module: Any, batch: Any,
                             batch_idx: int) -> None:
        """Let the hooks keep this training batch's module outputs."""
        self.begin_step()

    def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any,
                           batch_idx: int) -> None:
        """Close the tracker step once the optimiser has stepped (hooks off until the next)."""
        if int(trainer.global_step) != self._global_step:
            self._global_step = int(trainer.global_step)
            self.end_step()

    def on_train_end(self, trainer: Any, pl_module: Any) -> None:
        """Finish queued work and write the final record."""
        self.finish()

    def state_dict(self) -> dict[str, Any]:
        """The tracker state, saved in Lightning's checkpoint."""
        return self.tracker.state_dict() if self.tracker is not None else {}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Continue the saved record (applied when the tracker is built, if not yet)."""
        if not state_dict:
            return
        if self.tracker is None:
            self._pending = dict(state_dict)
        else:
            self.tracker.load_state_dict(dict(state_dict))
