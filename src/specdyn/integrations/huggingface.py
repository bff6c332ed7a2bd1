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

try:
    from transformers import TrainerCallback
except ImportError as err:
    raise ImportError("specdyn.integrations.huggingface needs transformers: "
                      "pip install transformers") from err

from specdyn.measure.tracker import SpectrumTracker

__all__ = ["SpectrumTrainerCallback"]


class SpectrumTrainerCallback(TrainerCallback):
    """Track the Trainer's model; arguments are ``SpectrumTracker``'s.

    ``callback.tracker`` is the tracker once training has started. Tracker
    step ``s`` is optimiser step ``s + 1``; unless ``steps=`` is given, the
    tracker's run length is the Trainer's (``steps = state.max_steps - 1``),
    so an ``int`` schedule (a log-spaced count) resolves over the whole run.
    """

    def __init__(self, modules: Any = None, schedule: Any = "log", **tracker_kwargs: Any
                 ) -> None:
        self.modules = modules
        self.schedule = schedule
        self.tracker_kwargs = tracker_kwargs
        self.tracker: SpectrumTracker | None = None

    def on_train_begin(self, args: Any, state: Any, control: Any, model: Any = None,
                       **kwargs: Any) -> None:
        """Build the tracker on the model; continue the record when the Trainer resumes."""
        if model is None:
            raise ValueError("SpectrumTrainerCallback: the Trainer passed no model")
        kwargs_ = dict(self.tracker_kwargs)
        if "steps" not in kwargs_ and int(getattr(state, "max_steps", 0) or 0) > 0:
            kwargs_["steps"] = int(state.max_steps) - 1
        self.tracker = SpectrumTracker(model, self.modules, self.schedule, **kwargs_)
        self.tracker.capture = False
        if state.global_step > 0:
            st = self.tracker.state_dict()
            self.tracker.load_state_dict({**st, "step": int(state.global_step)})

    def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """Let the hooks keep this training step's module outputs."""
        if self.tracker is not None:
            self.tracker.capture = True

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """Close the tracker step (hooks off until the next training step)."""
        if self.tracker is not None:
            self.tracker.capture = False
            self.tracker.step()

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """Finish queued work and write the final record."""
        if self.tracker is not None:
            self.tracker.close()
