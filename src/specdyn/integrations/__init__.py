"""Loggers and training-framework adapters for ``SpectrumTracker`` (optional dependencies).

- ``TensorBoardLogger(log_dir)``: an ``on_record`` callback writing exponents,
  outlier counts and MP edges as scalars and each spectrum (``log10``
  eigenvalues) as a histogram; needs ``tensorboard``.
- ``specdyn.integrations.lightning.SpectrumCallback``: a PyTorch Lightning
  callback (``lightning`` or ``pytorch_lightning``).
- ``specdyn.integrations.huggingface.SpectrumTrainerCallback``: a Hugging Face
  ``transformers.TrainerCallback``.

Each adapter builds a ``SpectrumTracker`` on the framework's model when training
starts, calls ``tracker.step()`` after every optimiser step, keeps the hooks
off outside training steps (evaluation batches never enter the activations),
saves and restores the tracker state with the framework's checkpoints, and
closes the tracker when training ends.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["TensorBoardLogger"]

_SCALARS = ("exponent", "n_outliers", "mp_edge")


class TensorBoardLogger:
    """``on_record`` callback: tracker rows to TensorBoard.

    Tags: ``spectra/<kind>_<quantity>/<layer>`` for the scalars (``quantity`` in
    exponent, n_outliers, mp_edge) and ``spectra/<kind>_log10_eigenvalues/<layer>``
    for the histograms; the global step is the tracker's step.

    Parameters
    ----------
    log_dir
        A folder (a ``SummaryWriter`` is made there) or an existing
        ``torch.utils.tensorboard.SummaryWriter``.
    histograms
        Also write each spectrum as a histogram.
    """

    def __init__(self, log_dir: Any, *, histograms: bool = True) -> None:
        if hasattr(log_dir, "add_scalar"):
            self.writer = log_dir
        else:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except ImportError as err:
                raise ImportError("TensorBoardLogger needs tensorboard: pip install tensorboard"
                                  ) from err
            self.writer = SummaryWriter(str(log_dir))
        self.histograms = bool(histograms)

    def __call__(self, rows: pd.DataFrame) -> None:
        """Write one recorded step's rows."""
        for r in rows[rows["rank"] == 0].itertuples(index=False):
            kind, _, q = str(r.quantity).partition("_")
            if q in _SCALARS:
                self.writer.add_scalar(f"spectra/{r.quantity}/{r.layer}", float(r.value),
                                       int(r.step))
        if self.histograms:
            eig = rows[rows["quantity"].str.endswith("_eigenvalue")]
            for (layer, quantity), g in eig.groupby(["layer", "quantity"], sort=False):
                vals = g["value"].to_numpy(dtype=np.float64)
                vals = vals[vals > 0]
                if vals.size:
                    kind = str(quantity).removesuffix("_eigenvalue")
                    self.writer.add_histogram(f"spectra/{kind}_log10_eigenvalues/{layer}",
                                              np.log10(vals), int(g["step"].iloc[0]))
        self.writer.flush()

    def close(self) -> None:
        """Close the writer."""
        self.writer.close()
