"""The Hugging Face Trainer on two CPU processes (``accelerate launch``), for the tests.

accelerate launch --cpu --num_processes 2 tests/integrations/ranks_huggingface.py OUT

A tiny GPT-2 (2 layers, width 32), 5 optimiser steps, 4 sequences of 16 tokens a
process, ``SpectrumTrainerCallback(schedule=Schedule.every(2), out=OUT/spectra)``.
Each process writes ``OUT/rank<r>.json``: its tracker's rank, world, ``out`` and
record count.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
import transformers

from specdyn import Schedule
from specdyn.integrations.huggingface import SpectrumTrainerCallback


def main() -> None:
    out = Path(sys.argv[1])
    cfg = transformers.GPT2Config(vocab_size=50, n_positions=32, n_embd=32, n_layer=2,
                                  n_head=4)
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(cfg)
    ids = torch.randint(0, 50, (64, 16), generator=torch.Generator().manual_seed(0))
    ds = [{"input_ids": r, "labels": r} for r in ids]
    args = transformers.TrainingArguments(
        output_dir=str(out / "hf"), max_steps=5, per_device_train_batch_size=4,
        report_to=[], save_strategy="no", logging_strategy="no", use_cpu=True,
        learning_rate=1e-3, disable_tqdm=True)
    cb = SpectrumTrainerCallback(schedule=Schedule.every(2), out=out / "spectra", n_boot=0)
    transformers.Trainer(model=model, args=args, train_dataset=ds, callbacks=[cb]).train()
    tr = cb.tracker
    assert tr is not None
    (out / f"rank{tr.rank}.json").write_text(json.dumps(
        {"rank": tr.rank, "world": tr.world, "out": None if tr.out is None else str(tr.out),
         "n_records": tr.n_records}))


if __name__ == "__main__":
    main()
