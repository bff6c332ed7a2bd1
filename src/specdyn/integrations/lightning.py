"""A PyTorch Lightning callback that runs a ``SpectrumTracker`` on the LightningModule.

>>> trainer = Trainer(callbacks=[SpectrumCallback(out="runs/spectra")])  # doctest: +SKIP

One tracker step per training batch (``on_train_batch_end``); the tracker's state
is part of Lightning's checkpoints, so ``trainer.fit(..., ckpt_path=...)``
continues the same record. Needs ``lightning`` or ``pytorch_lightning``.
"""

from __future__ import annotations

from typing import Any

from specdyn.integrations._adapter import TrackerAdapter, framework_class

# lightning, else the standalone package
Callback: Any = framework_class(["lightning.pytorch:Callback", "pytorch_lightning:Callback"],
                                "lightning", "lightning")

__all__ = ["SpectrumCallback"]


class SpectrumCallback(TrackerAdapter, Callback):
    """Track the LightningModule (arguments and ``tracker``: :class:`TrackerAdapter`).

    An ``int`` schedule (a log-spaced count) needs the run length: pass ``steps=``
    (the last tracker step, one per training batch).
    """

    def __init__(self, modules: Any = None, schedule: Any = "log", **tracker_kwargs: Any
                 ) -> None:
        super().__init__(modules, schedule, **tracker_kwargs)
        self._pending: dict[str, Any] | None = None

    def setup(self, trainer: Any, pl_module: Any, stage: str) -> None:
        """Build the tracker on the LightningModule when fitting starts."""
        if stage == "fit" and self.tracker is None:
            tracker = self.start(pl_module)
            if self._pending is not None:
                tracker.load_state_dict(self._pending)
                self._pending = None

    def on_train_batch_start(self, trainer: Any, pl_module: Any, batch: Any,
                             batch_idx: int) -> None:
        """Let the hooks keep this training batch's module outputs."""
        self.begin_step()

    def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any,
                           batch_idx: int) -> None:
        """Close the tracker step (hooks off until the next training batch)."""
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
