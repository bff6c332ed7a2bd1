"""Tracker loggers and framework adapters, each run with the real library.

Each test skips only when its optional library is not installed.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from specdyn import Schedule
from specdyn.measure import SpectrumTracker, read_spectra


def _mlp() -> torch.nn.Sequential:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 4))


def test_tensorboard_logger_writes_scalars_and_histograms_read_back(tmp_path) -> None:
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from specdyn.integrations import TensorBoardLogger

    model = _mlp()
    tb = TensorBoardLogger(tmp_path / "tb")
    tr = SpectrumTracker(model, schedule=Schedule.every(2), n_boot=0, on_record=tb, max_samples=64,
                         policy="block")
    for i in range(5):
        model(torch.randn(64, 16, generator=torch.Generator().manual_seed(i)))
        tr.step()
    tr.close()
    tb.close()
    df = tr.table()
    acc = EventAccumulator(str(tmp_path / "tb"), size_guidance={"scalars": 0, "histograms": 0})
    acc.Reload()
    tag = "spectra/weight_exponent/0"
    events = acc.Scalars(tag)
    ref = df[(df.layer == "0") & (df.quantity == "weight_exponent")]
    assert [e.step for e in events] == [0, 2, 4]
    assert np.allclose([e.value for e in events], ref["value"], rtol=1e-6)
    # the last layer's 4 eigenvalues are too few for an exponent or an MP bulk: no scalar
    tags = acc.Tags()["scalars"]
    assert {"spectra/activation_exponent/0", "spectra/weight_n_outliers/0"} <= set(tags)
    assert not any(t.endswith("/2") for t in tags), tags
    hist = acc.Histograms("spectra/weight_log10_eigenvalues/2")
    assert [h.step for h in hist] == [0, 2, 4]
    assert hist[0].histogram_value.num == 4  # min(32, 4) eigenvalues of the last layer


def _lightning() -> tuple:
    """Lightning (either package name), a small LightningModule class and its data."""
    try:
        import lightning.pytorch as pl
    except ImportError:
        pl = pytest.importorskip("pytorch_lightning")

    class Module(pl.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.net = _mlp()

        def training_step(self, batch, batch_idx):  # noqa: ANN001, ANN201
            x, y = batch
            return torch.nn.functional.mse_loss(self.net(x), y)

        def validation_step(self, batch, batch_idx):  # noqa: ANN001, ANN201
            x, y = batch
            return torch.nn.functional.mse_loss(self.net(x), y)

        def configure_optimizers(self):  # noqa: ANN201
            return torch.optim.SGD(self.parameters(), lr=0.05)

    g = torch.Generator().manual_seed(0)
    X, Y = torch.randn(256, 16, generator=g), torch.randn(256, 4, generator=g)
    data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, Y), batch_size=32)
    return pl, Module, data


@pytest.mark.slow
def test_lightning_callback_records_and_resumes_from_checkpoint(tmp_path) -> None:
    pl, Module, data = _lightning()
    from specdyn.integrations.lightning import SpectrumCallback

    out = tmp_path / "spectra"

    def trainer(steps: int, cb: SpectrumCallback) -> pl.Trainer:
        return pl.Trainer(max_steps=steps, callbacks=[cb], logger=False, accelerator="cpu",
                          enable_progress_bar=False, enable_model_summary=False,
                          enable_checkpointing=False, limit_val_batches=2,
                          val_check_interval=4, num_sanity_val_steps=0,
                          default_root_dir=str(tmp_path))

    cb = SpectrumCallback(schedule=Schedule.every(3), out=out, n_boot=0, max_samples=32)
    t1 = trainer(6, cb)
    t1.fit(Module(), data, data)
    # The Trainer's run length (steps 0..5) is passed: every(3) adds the last step.
    assert sorted(read_spectra(out).step.unique()) == [0, 3, 5]
    # Validation batches never enter the activations: 32 rows, one training batch.
    assert set(read_spectra(out).query("quantity == 'activation_samples'").value) == {32.0}
    t1.save_checkpoint(tmp_path / "c.ckpt")
    cb2 = SpectrumCallback(schedule=Schedule.every(3), out=out, n_boot=0, max_samples=32)
    trainer(12, cb2).fit(Module(), data, data, ckpt_path=str(tmp_path / "c.ckpt"))
    df = read_spectra(out)
    assert sorted(df.step.unique()) == [0, 3, 5, 6, 9, 11]
    assert not df.duplicated(["step", "layer", "quantity", "rank"]).any()


@pytest.mark.slow
def test_lightning_callback_passes_the_run_length_in_optimiser_steps(tmp_path) -> None:
    pl, Module, data = _lightning()
    from specdyn.integrations.lightning import SpectrumCallback

    def fit(cb: SpectrumCallback) -> None:
        # 8 batches an epoch, 2 per optimiser step, 3 epochs: 12 optimiser steps.
        pl.Trainer(max_epochs=3, accumulate_grad_batches=2, callbacks=[cb], logger=False,
                   accelerator="cpu", enable_progress_bar=False, enable_model_summary=False,
                   enable_checkpointing=False, limit_val_batches=0,
                   default_root_dir=str(tmp_path)).fit(Module(), data)

    cb = SpectrumCallback(schedule=4, out=tmp_path / "a", n_boot=0, max_samples=64)
    fit(cb)
    assert cb.tracker is not None and cb.tracker.steps == 11  # tracker steps 0..11
    assert cb.tracker.current_step == 12
    df = read_spectra(tmp_path / "a")
    assert sorted(df.step.unique()) == list(Schedule.log(4).resolve(11))
    # Each tracker step saw the 2 batches (64 rows) of its optimiser step.
    assert set(df.query("quantity == 'activation_samples'").value) == {64.0}

    cb = SpectrumCallback(schedule=3, steps=5, out=tmp_path / "b", n_boot=0)  # steps= wins
    fit(cb)
    assert cb.tracker is not None and cb.tracker.steps == 5
    # ... and close() adds the run's last step (11), which that schedule misses
    assert sorted(read_spectra(tmp_path / "b").step.unique()) == [
        *Schedule.log(3).resolve(5), 11]


def test_huggingface_callback_tracks_gpt2_attention(tmp_path) -> None:
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("accelerate")
    from specdyn.integrations.huggingface import SpectrumTrainerCallback

    cfg = transformers.GPT2Config(vocab_size=50, n_positions=32, n_embd=32, n_layer=2,
                                  n_head=4)
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(cfg)
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, 50, (32, 16), generator=g)
    ds = [{"input_ids": r, "labels": r} for r in ids]
    args = transformers.TrainingArguments(
        output_dir=str(tmp_path / "hf"), max_steps=5, per_device_train_batch_size=4,
        report_to=[], save_strategy="no", logging_strategy="no", use_cpu=True,
        learning_rate=1e-3, disable_tqdm=True)
    cb = SpectrumTrainerCallback(schedule=Schedule.every(2), out=tmp_path / "spectra", n_boot=0,
                                 policy="block", precision="float64")
    transformers.Trainer(model=model, args=args, train_dataset=ds, callbacks=[cb]).train()
    df = read_spectra(tmp_path / "spectra")
    assert sorted(df.step.unique()) == [0, 2, 4]
    w = set(df[df.quantity == "weight_exponent"].layer)
    for i in range(2):
        assert {f"transformer.h.{i}.attn.c_attn.{p}" for p in "qkv"} <= w
        assert f"transformer.h.{i}.attn.c_proj" in w
    assert {"transformer.wte", "transformer.wpe"} <= w
    # c_attn's Q block is rows 0:32 of weight.T (GPT-2 stores Conv1D weights in x out).
    Wq = model.transformer.h[0].attn.c_attn.weight.detach().double().numpy().T[:32]
    ref = np.linalg.svd(Wq, compute_uv=False) ** 2 / 32
    got = df[(df.step == 4) & (df.layer == "transformer.h.0.attn.c_attn.q")
             & (df.quantity == "weight_eigenvalue")].sort_values("rank")["value"]
    assert got.to_numpy() == pytest.approx(ref, rel=1e-9)
