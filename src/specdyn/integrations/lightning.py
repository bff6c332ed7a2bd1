"""A PyTorch Lightning callback that runs a ``SpectrumTracker`` on the LightningModule.

>>> trainer = Trainer(callbacks=[SpectrumCallback(out="runs/spectra")])  # doctest: +SKIP

One tracker step per training batch (``on_train_batch_end``); the tracker's state
is part of Lightning's checkpoints, so ``trainer.fit(..., ckpt_path=...)``
continues the same record. Needs ``lightning`` or ``pytorch_lightning``.
"""

from __future__ import annotations

from typing import Any

try:
    from lightning.pytorch import Callback
except ImportError:  # the standalone package
    try:
        from pytorch_lightning import Callback
    except ImportError as err:
        raise ImportError("specdyn.integrations.lightning needs PyTorch Lightning: "
                          "pip install lightning") from err

from specdyn.measure.tracker import SpectrumTracker

__all__ = ["SpectrumCallback"]


class SpectrumCallback(Callback):
    """Track the LightningModule's spectra; arguments are ``SpectrumTracker``'s.

    ``callback.tracker`` is the tracker once fitting has started. An ``int``
    schedule (a log-spaced count) needs the run length: pass ``steps=``
    (the last tracker step, one per training batch).
    """

    def __init__(self, modules: Any = None, schedule: Any = "log", **tracker_kwargs: Any
                 ) -> None:
        self.modules = modules
        self.schedule = schedule
        self.tracker_kwargs = tracker_kwargs
        self.tracker: SpectrumTracker | None = None
        self._pending: dict[str, Any] | None = None

    def setup(self, trainer: Any, pl_module: Any, stage: str) -> None:
        """Build the tracker on the LightningModule when fitting starts."""
        if stage == "fit" and self.tracker is None:
            self.tracker = SpectrumTracker(pl_module, self.modules, self.schedule,
                                           **self.tracker_kwargs)
            self.tracker.capture = False
            if self._pending is not None:
                self.tracker.load_state_dict(self._pending)
                self._pending = None

    def on_train_batch_start(self, trainer: Any, pl_module: Any, batch: Any,
                             batch_idx: int) -> None:
        """Close the tracker step (hooks off until the next training batch)."""
        """Let the hooks keep this training batch's module outputs."""
        if self.tracker is not None:
            self.tracker.capture = True

    def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any,
                           batch_idx: int) -> None:
        """Close the tracker step (hooks off until the next training batch)."""
        if self.tracker is not None:
            self.tracker.capture = False
            self.tracker.step()

    def on_train_end(self, trainer: Any, pl_module: Any) -> None:
        """Finish queued work and write the final record."""
        if self.tracker is not None:
            self.tracker.close()

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
