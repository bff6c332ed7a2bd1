"""A Hugging Face ``TrainerCallback`` that runs a ``SpectrumTracker`` on the Trainer's model.

>>> trainer = Trainer(model, args, train_dataset=ds,                      # doctest: +SKIP
...                   callbacks=[SpectrumTrainerCallback(out="runs/spectra")])

One tracker step per optimiser step (``on_step_end``). When the Trainer resumes
from a checkpoint (``state.global_step > 0`` at ``on_train_begin``), the tracker
continues the same record from that step: rows the interrupted run wrote at or
after it are replaced. Needs ``transformers``.
"""

from __future__ import annotations

from typing import Any

from specdyn.integrations._adapter import TrackerAdapter, framework_class

TrainerCallback: Any = framework_class(["transformers:TrainerCallback"], "huggingface",
                                       "transformers")

__all__ = ["SpectrumTrainerCallback"]


class SpectrumTrainerCallback(TrackerAdapter, TrainerCallback):
    """Track the Trainer's model (arguments and ``tracker``: :class:`TrackerAdapter`)."""

    def on_train_begin(self, args: Any, state: Any, control: Any, model: Any = None,
                       **kwargs: Any) -> None:
        """Build the tracker on the model; continue the record when the Trainer resumes."""
        if model is None:
            raise ValueError("SpectrumTrainerCallback: the Trainer passed no model")
        tracker = self.start(model)
        if state.global_step > 0:
            tracker.load_state_dict({**tracker.state_dict(), "step": int(state.global_step)})

    def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """Let the hooks keep this training step's module outputs."""
        self.begin_step()

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """Close the tracker step (hooks off until the next training step)."""
        self.end_step()

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """Finish queued work and write the final record."""
        self.finish()
