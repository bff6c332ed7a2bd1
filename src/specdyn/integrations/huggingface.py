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
    """Track the Trainer's model (arguments and ``tracker``: :class:`TrackerAdapter`).

    Tracker step ``s`` is optimiser step ``s + 1``; unless ``steps=`` is given, the
    tracker's run length is the Trainer's (``steps = state.max_steps - 1``), so an
    ``int`` schedule (a log-spaced count) resolves over the whole run.
    """

    def on_train_begin(self, args: Any, state: Any, control: Any, model: Any = None,
                       **kwargs: Any) -> None:
        """Build the tracker on the model; continue the record when the Trainer resumes."""
        if model is None:
            raise ValueError("SpectrumTrainerCallback: the Trainer passed no model")
        max_steps = int(getattr(state, "max_steps", 0) or 0)
        tracker = self.start(model, max_steps - 1 if max_steps > 0 else None)
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
