"""Lightning's DDP strategy on two CPU processes with the SpectrumCallback, for the tests.

python tests/integrations/ranks_lightning.py OUT

``Trainer(accelerator="cpu", devices=2, strategy="ddp")`` (gloo; Lightning launches
the second process by running this script again), an MLP, batches of 32 a rank
(Lightning's DistributedSampler splits the data), 6 optimiser steps,
``SpectrumCallback(schedule=[0, 2, 5], out=OUT/spectra)``. Each rank writes
``OUT/rank<r>.json``: its tracker's rank, world, ``out`` and record count.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

try:
    import lightning.pytorch as pl
except ImportError:
    import pytorch_lightning as pl

from specdyn.integrations.lightning import SpectrumCallback


class Module(pl.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(),
                                       torch.nn.Linear(32, 4))

    def training_step(self, batch, batch_idx):  # noqa: ANN001, ANN201
        x, y = batch
        return torch.nn.functional.mse_loss(self.net(x), y)

    def configure_optimizers(self):  # noqa: ANN201
        return torch.optim.SGD(self.parameters(), lr=0.05)


def main() -> None:
    out = Path(sys.argv[1])
    g = torch.Generator().manual_seed(0)
    X, Y = torch.randn(512, 16, generator=g), torch.randn(512, 4, generator=g)
    data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, Y), batch_size=32)
    cb = SpectrumCallback(schedule=[0, 2, 5], out=out / "spectra", n_boot=0)
    trainer = pl.Trainer(max_steps=6, accelerator="cpu", devices=2, strategy="ddp",
                         callbacks=[cb], logger=False, enable_progress_bar=False,
                         enable_model_summary=False, enable_checkpointing=False,
                         default_root_dir=str(out))
    trainer.fit(Module(), data)
    tr = cb.tracker
    assert tr is not None
    (out / f"rank{trainer.global_rank}.json").write_text(json.dumps(
        {"rank": tr.rank, "world": tr.world, "out": None if tr.out is None else str(tr.out),
         "n_records": tr.n_records}))


if __name__ == "__main__":
    main()
