"""SpectrumTracker on a real data set (scikit-learn's bundled digits) and on edge cases.

Oracles: spectra recomputed independently with numpy from saved copies of the
weights and from the batches seen at the recorded steps.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from sklearn.datasets import load_digits

from specdyn import Schedule
from specdyn.measure import SpectrumTracker


def _digits() -> tuple[torch.Tensor, torch.Tensor]:
    X, y = load_digits(return_X_y=True)  # bundled with scikit-learn, no download
    return torch.tensor(X / 16.0, dtype=torch.float32), torch.tensor(y)


def _mlp(seed: int = 0) -> torch.nn.Sequential:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(64, 96), torch.nn.ReLU(inplace=True),
                               torch.nn.Linear(96, 96), torch.nn.ReLU(inplace=True),
                               torch.nn.Linear(96, 10))


def test_digits_mlp_tracker_table_matches_independent_spectra() -> None:
    X, y = _digits()
    model = _mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.2)
    tracker = SpectrumTracker(model, n_boot=20, policy="block")  # every record computed
    gen = torch.Generator().manual_seed(0)
    steps, batch = 120, 128
    snapshots: dict[int, tuple[dict, torch.Tensor]] = {}
    losses = []
    for it in range(steps):
        idx = torch.randint(0, len(X), (batch,), generator=gen)
        if it in (0, 13, 101):
            snapshots[it] = (copy.deepcopy(model.state_dict()), X[idx].clone())
        loss = torch.nn.functional.cross_entropy(model(X[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        tracker.step()
    tracker.close()
    assert np.mean(losses[-10:]) < 0.5 * np.mean(losses[:10])  # it learns

    df = tracker.table()
    assert list(df.columns) == ["step", "layer", "quantity", "rank", "value", "verdict"]
    sched = Schedule.per_decade(10).predicate()
    expected_steps = [s for s in range(steps) if sched(s)]
    # ... and close() records the last step, which the schedule missed (weights only)
    assert sorted(df["step"].unique()) == expected_steps + [steps - 1]
    assert set(df[df.step == steps - 1].quantity.str.split("_").str[0]) == {"weight"}
    assert set(df["layer"].unique()) == {"0", "2", "4"}
    assert df["value"].notna().all() and np.isfinite(df["value"]).all()

    state13, xb13 = snapshots[13]
    W0 = state13["0.weight"].double().numpy()
    # Activations of layer "0" at step 13: the forward pass before that step's update.
    H = xb13.double().numpy() @ W0.T + state13["0.bias"].double().numpy()
    Hc = H - H.mean(axis=0)
    ref_act = np.sort(np.linalg.eigvalsh(Hc.T @ Hc / H.shape[0]))[::-1][: min(H.shape)]
    got = df[(df.step == 13) & (df.layer == "0") & (df.quantity == "activation_eigenvalue")]
    got_vals = got.sort_values("rank")["value"].to_numpy()
    assert got_vals.size == min(H.shape)
    # float32 forward in torch vs float64 here: agreement to float32 rounding.
    assert np.max(np.abs(got_vals - ref_act)) < 1e-4 * ref_act[0]

    # Weights are measured at step() after that iteration's update: the spectrum
    # recorded at step 100 is that of the weights at the start of iteration 101.
    W4 = snapshots[101][0]["4.weight"].double().numpy()
    sv = np.linalg.svd(W4, compute_uv=False) ** 2 / W4.shape[0]
    last = df[(df.step == 100) & (df.layer == "4") & (df.quantity == "weight_eigenvalue")]
    # float32 Gram and eigenvalues (precision="auto"): round-off ~ size * 6e-8 of the largest
    got_w = last.sort_values("rank")["value"].to_numpy()
    assert np.max(np.abs(got_w - sv)) < 1e-5 * sv[0]

    # Summaries: CI brackets the exponent; outlier counts are whole numbers.
    for kind in ("activation", "weight"):
        e = df[df.quantity == f"{kind}_exponent"].set_index(["step", "layer"])["value"]
        lo = df[df.quantity == f"{kind}_exponent_ci_low"].set_index(["step", "layer"])["value"]
        hi = df[df.quantity == f"{kind}_exponent_ci_high"].set_index(["step", "layer"])["value"]
        assert ((lo <= e + 1e-12) & (e <= hi + 1e-12)).all()
    outl = df[df.quantity.str.endswith("_n_outliers")]["value"]
    assert (outl >= 0).all() and (outl == np.round(outl)).all()
    # At initialisation the weights are i.i.d.: the calibrated test flags (almost) nothing.
    w0 = df[(df.step == 0) & (df.quantity == "weight_n_outliers")]["value"]
    assert w0.sum() <= 1
    # Training creates outliers in the weights (learned directions).
    wl = df[(df.step == expected_steps[-1]) & (df.quantity == "weight_n_outliers")]["value"]
    assert wl.sum() >= 1
    # Digits has constant (always zero) pixels, so layer 0's pre-activations are rank
    # deficient: no MP bulk applies, and the tracker says so instead of inventing one.
    assert any(layer == "0" and kind == "activation_outliers" and "rank deficient" in why
               for _, layer, kind, why in tracker.skipped)


def test_tracker_records_weight_spectrum_exactly_after_record() -> None:
    model = _mlp(1)
    tracker = SpectrumTracker(model, activations=False, schedule=[0], precision="float64")
    tracker.record()
    df = tracker.table()
    for name in ("0", "2", "4"):
        W = dict(model.named_modules())[name].weight.detach().double().numpy()
        ref = np.linalg.svd(W, compute_uv=False) ** 2 / W.shape[0]
        got = df[(df.layer == name) & (df.quantity == "weight_eigenvalue")]
        assert got.sort_values("rank")["value"].to_numpy() == pytest.approx(ref, rel=1e-10)


def test_conv_activations_use_channels_as_features() -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.Flatten(),
                                torch.nn.Linear(8 * 6 * 6, 5))
    tracker = SpectrumTracker(model, schedule=Schedule.every(1), max_samples=10_000, fit=False)
    x = torch.randn(4, 3, 8, 8)
    model(x)
    tracker.step()
    df = tracker.table()
    act = df[(df.layer == "0") & (df.quantity == "activation_eigenvalue")]
    assert act["rank"].max() == 8  # 8 channels; 4 * 36 positions are samples
    samples = df[(df.layer == "0") & (df.quantity == "activation_samples")]["value"]
    assert samples.iloc[0] == 4 * 6 * 6


def test_schedules_and_max_samples() -> None:
    sched = Schedule.per_decade(10).predicate()
    assert [s for s in range(41) if sched(s)] == [0, 1, 2, 3, 4, 5, 6, 8, 10, 13, 16, 20, 25,
                                                  32, 40]
    model = _mlp(2)
    tracker = SpectrumTracker(model, schedule=Schedule.every(3), max_samples=50, weights=False,
                              policy="block",
                              fit=False, outliers=False)
    for _ in range(7):
        model(torch.randn(40, 64))
        model(torch.randn(40, 64))
        tracker.step()
    df = tracker.table()
    assert sorted(df.step.unique()) == [0, 3, 6]
    assert set(df[df.quantity == "activation_samples"]["value"]) == {50.0}
    tracker.close()
    model(torch.randn(5, 64))
    assert all(not b for b in tracker._hooks.buffers.values())  # hooks removed


def test_modules_by_name_and_divergence_reported() -> None:
    model = _mlp(3)
    tracker = SpectrumTracker(model, modules=["2"], schedule=[0, 1])
    model(torch.randn(30, 64))
    tracker.step()
    assert set(tracker.table().layer) == {"2"}
    with torch.no_grad():
        model[2].weight[0, 0] = float("nan")
    model(torch.randn(30, 64))
    tracker.step()  # queued: the background worker finds the NaN
    with pytest.raises(FloatingPointError, match="layer '2' are not finite at step 1"):
        tracker.flush()


def test_bad_arguments_rejected() -> None:
    model = _mlp(4)
    with pytest.raises(ValueError, match="schedule"):
        SpectrumTracker(model, schedule="sometimes")
    # "log" is Schedule.log (a count) everywhere, never another spacing: no strings
    with pytest.raises(ValueError, match=r"Schedule.per_decade\(10\)"):
        SpectrumTracker(model, schedule="log")
    with pytest.raises(ValueError, match="pattern 'nope' matches no submodule"):
        SpectrumTracker(model, modules=["nope"])
    with pytest.raises(ValueError, match="pattern 'blocks.*.attn' matches no submodule"):
        SpectrumTracker(model, modules="blocks.*.attn")
    with pytest.raises(ValueError, match="max_samples"):
        SpectrumTracker(model, max_samples=0)
    with pytest.raises(ValueError, match="nothing to record"):
        SpectrumTracker(model, weights=False, activations=False)
    with pytest.raises(ValueError, match="model"):
        SpectrumTracker(object())


def test_tracker_plots(tmp_path) -> None:
    from specdyn.plot import save_figure
    from specdyn.plot.measure import plot_tracker, plot_tracker_spectra

    model = _mlp(5)
    tracker = SpectrumTracker(model, schedule=Schedule.every(1), n_boot=10)
    for _ in range(3):
        model(torch.randn(100, 64))
        tracker.step()
    df = tracker.table()
    fig = plot_tracker(df, "weight_exponent")
    assert fig.axes[0].get_xscale() == "log"
    assert len(fig.axes[0].get_lines()) == 3  # one per layer
    fig2 = plot_tracker_spectra(df, "2", "weight")
    assert fig2.axes[0].get_yscale() == "log" and len(fig2.axes) == 2  # with colour bar
    paths = save_figure(fig2, tmp_path / "spec")
    assert all(p.stat().st_size > 0 for p in paths)


# -- layers as people build them ------------------------------------------------------

def _svd_eigs(W: np.ndarray) -> np.ndarray:
    """Independent oracle: squared singular values of an out x in matrix over out."""
    return np.linalg.svd(W, compute_uv=False) ** 2 / W.shape[0]


class _TinyLM(torch.nn.Module):
    def __init__(self, vocab: int = 40, d: int = 32, heads: int = 4, layers: int = 2) -> None:
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, d)
        block = torch.nn.TransformerEncoderLayer(d, heads, 2 * d, dropout=0.0, batch_first=True)
        self.enc = torch.nn.TransformerEncoder(block, layers, enable_nested_tensor=False)
        self.head = torch.nn.Linear(d, vocab)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.enc(self.emb(x)))


def test_transformer_encoder_every_projection_and_embedding_measured() -> None:
    torch.manual_seed(0)
    model = _TinyLM()
    tracker = SpectrumTracker(model, schedule=[0], n_boot=5, background=False, heads=True,
                              precision="float64")
    x = torch.randint(0, 40, (8, 24))
    model(x)
    tracker.step()
    df = tracker.table()
    w = df[df.quantity == "weight_eigenvalue"]
    for i in range(2):
        attn = model.enc.layers[i].self_attn
        P = attn.in_proj_weight.detach().double().numpy()
        for j, part in enumerate("qkv"):
            name = f"enc.layers.{i}.self_attn.{part}"
            got = w[w.layer == name].sort_values("rank")["value"].to_numpy()
            assert got == pytest.approx(_svd_eigs(P[32 * j:32 * (j + 1)]), rel=1e-9)
            for h in range(4):  # per head: rows h*8:(h+1)*8 of that block
                gh = w[w.layer == f"{name}.head{h}"].sort_values("rank")["value"].to_numpy()
                blk = P[32 * j + 8 * h:32 * j + 8 * (h + 1)]
                assert gh == pytest.approx(_svd_eigs(blk), rel=1e-9)
        out = w[w.layer == f"enc.layers.{i}.self_attn.out_proj"].sort_values("rank")["value"]
        Wo = attn.out_proj.weight.detach().double().numpy()
        assert out.to_numpy() == pytest.approx(_svd_eigs(Wo), rel=1e-9)
    # Embedding: the map one-hot -> vector is weight.T (32 x 40): eig of W^T W / 32.
    E = model.emb.weight.detach().double().numpy().T
    got = w[w.layer == "emb"].sort_values("rank")["value"].to_numpy()
    assert got == pytest.approx(_svd_eigs(E)[:32], rel=1e-9)
    # Every weight matrix has its verdict and exponent; no layer is silently missing.
    names = {m["layer"] for m in tracker.layer_table()["weights"]}
    assert {f"enc.layers.{i}.self_attn.{p}" for i in range(2) for p in "qkv"} <= names
    summ = df[df.quantity == "weight_exponent"].set_index("layer")
    assert set(summ.index) == names
    assert summ["verdict"].notna().all() and (summ["verdict"].str.len() > 0).all()
    # Activations: tokens are samples, the model width is the feature axis.
    a = df[(df.layer == "enc.layers.0.self_attn") & (df.quantity == "activation_samples")]
    assert a["value"].iloc[0] == 8 * 24
    assert df[(df.layer == "enc.layers.0.self_attn")
              & (df.quantity == "activation_eigenvalue")]["rank"].max() == 32


def test_patterns_select_attention_blocks_and_reject_non_matrices() -> None:
    model = _TinyLM()
    tr = SpectrumTracker(model, modules="enc.layers.*.self_attn", schedule=[0],
                         activations=False)
    assert [m["layer"] for m in tr.layer_table()["weights"]] == [
        f"enc.layers.{i}.self_attn.{p}" for i in range(2) for p in ("q", "k", "v", "out_proj")]
    with pytest.raises(ValueError, match="no weight matrix"):
        SpectrumTracker(model, modules="enc.layers.0.norm1", activations=False)


def test_gpt2_conv1d_read_as_out_by_in_and_c_attn_split() -> None:
    transformers = pytest.importorskip("transformers")
    from transformers.pytorch_utils import Conv1D

    class Block(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c_attn = Conv1D(3 * 16, 16)   # (nf, nx): weight stored 16 x 48
            self.c_proj = Conv1D(16, 16)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.c_proj(self.c_attn(x)[..., :16])

    assert transformers.__version__
    torch.manual_seed(0)
    model = Block()
    tr = SpectrumTracker(model, schedule=[0], background=False, n_boot=5, precision="float64")
    model(torch.randn(4, 10, 16))
    tr.step()
    df = tr.table()
    Wt = model.c_attn.weight.detach().double().numpy().T  # out x in = 48 x 16
    for j, part in enumerate("qkv"):
        got = df[(df.layer == f"c_attn.{part}") & (df.quantity == "weight_eigenvalue")]
        assert got.sort_values("rank")["value"].to_numpy() == pytest.approx(
            _svd_eigs(Wt[16 * j:16 * (j + 1)]), rel=1e-9)
    rule = {m["layer"]: m["rule"] for m in tr.layer_table()["weights"]}
    assert rule["c_proj"] == "weight (in x out) transposed to out x in"


# -- streamed, resumable, callbacks ---------------------------------------------------

def _train(model: torch.nn.Module, tracker: SpectrumTracker, steps: range) -> None:
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for it in steps:
        x = torch.randn(64, 64, generator=torch.Generator().manual_seed(it))
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        tracker.step()


def test_streamed_rows_equal_in_memory_rows_and_callback_sees_each_record(tmp_path) -> None:
    from specdyn.measure import read_spectra

    seen: list[int] = []
    model = _mlp(6)
    mem = copy.deepcopy(model)
    tr = SpectrumTracker(model, schedule=Schedule.every(2), out=tmp_path / "run", n_boot=5,
                         policy="block",
                         on_record=lambda rows: seen.append(int(rows["step"].iloc[0])))
    ref = SpectrumTracker(mem, schedule=Schedule.every(2), n_boot=5, background=False)
    _train(model, tr, range(7))
    _train(mem, ref, range(7))
    tr.close()
    ref.close()
    files = sorted(p.name for p in (tmp_path / "run" / "rows").iterdir())
    assert files == [f"step-{s:012d}.parquet" for s in (0, 2, 4, 6)]
    assert seen == [0, 2, 4, 6]
    a = read_spectra(tmp_path / "run")
    b = ref.table().sort_values(["step", "layer", "quantity", "rank"], ignore_index=True)
    pd_testing = pytest.importorskip("pandas.testing")
    pd_testing.assert_frame_equal(a, b)
    import json

    rec = json.loads((tmp_path / "run" / "record.json").read_text())
    assert rec["status"] == "finished" and rec["n_records"] == 4
    assert [w["layer"] for w in rec["layers"]["weights"]] == ["0", "2", "4"]


def test_resume_in_process_continues_without_duplicates_and_refuses_to_mix(tmp_path) -> None:
    model = _mlp(7)
    tr = SpectrumTracker(model, schedule=Schedule.every(1), out=tmp_path, n_boot=0,
                         activations=False, policy="block")
    _train(model, tr, range(5))
    state = tr.state_dict()      # step 5 ... and then the run goes on to step 8 and dies
    _train(model, tr, range(5, 8))
    tr.close()
    fresh = SpectrumTracker(model, schedule=Schedule.every(1), out=tmp_path, n_boot=0,
                            activations=False, policy="block")
    with pytest.raises(ValueError, match="already holds rows up to step 7"):
        fresh.step()
    fresh.load_state_dict(state)
    assert fresh.current_step == 5
    _train(model, fresh, range(5, 10))
    fresh.close()
    df = fresh.table()
    assert sorted(df.step.unique()) == list(range(10))
    assert not df.duplicated(["step", "layer", "quantity", "rank"]).any()


def test_nonfinite_activation_names_layer_and_step_and_keeps_rows(tmp_path) -> None:
    from specdyn.measure import read_spectra

    model = _mlp(8)
    tr = SpectrumTracker(model, schedule=Schedule.every(1), out=tmp_path, n_boot=0,
                         policy="block")
    model(torch.randn(20, 64))
    tr.step()
    model(torch.full((20, 64), float("inf")))
    tr.step()
    with pytest.raises(FloatingPointError, match="activations of layer '0' are not finite at "
                                                 "step 1"):
        tr.flush()
    tr.close()
    assert sorted(read_spectra(tmp_path).step.unique()) == [0]
    import json

    assert json.loads((tmp_path / "record.json").read_text())["status"] == "failed"


@pytest.mark.slow
def test_killed_run_keeps_its_rows_and_resumes_the_same_dataset(tmp_path) -> None:
    """A SIGKILL after step 25 (checkpoint at 20), then a resume, against an unkilled run."""
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path

    from specdyn.measure import read_spectra

    probe = Path(__file__).with_name("tracker_probe.py")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(__file__).parents[2] / "src"), os.environ.get("PYTHONPATH", "")]))

    def run(out: Path, *extra: str) -> int:
        cmd = [sys.executable, str(probe), str(out), str(out / "ckpt.pt"), "40", *extra]
        return subprocess.run(cmd, env=env, capture_output=True, timeout=600).returncode

    killed, ref = tmp_path / "killed", tmp_path / "ref"
    assert run(killed, "--kill-after", "25") == -signal.SIGKILL
    before = read_spectra(killed)               # every file there is whole
    steps = sorted(int(s) for s in before.step.unique())
    sched = list(range(0, 40, 3))
    # Everything up to the checkpoint (state_dict waits for the worker) is there; after
    # it, whatever the worker finished before the kill, in order.
    assert steps[:7] == [s for s in sched if s < 20]
    assert steps == [s for s in sched if s <= 25][:len(steps)]
    assert run(killed, "--resume") == 0
    assert run(ref) == 0
    after, whole = read_spectra(killed), read_spectra(ref)
    assert sorted(after.step.unique()) == sched
    assert not after.duplicated(["step", "layer", "quantity", "rank"]).any()
    # Rows written before the kill are kept as they were ...
    kept = after[after.step < 20].reset_index(drop=True)
    pd_testing = pytest.importorskip("pandas.testing")
    pd_testing.assert_frame_equal(kept, before[before.step < 20].reset_index(drop=True))
    # ... and the resumed run continues the same trajectory as a run never killed.
    pd_testing.assert_frame_equal(after, whole, rtol=1e-9)


# -- cost: hooks only around scheduled steps, a byte-bounded backlog ------------------

def test_hooks_exist_only_around_scheduled_steps() -> None:
    """A step without a record runs the model with no hook (torch's fast path)."""
    model = _mlp(9)
    tracker = SpectrumTracker(model, schedule=[0, 3], n_boot=0, background=False)
    hooked = []
    for _ in range(6):
        hooked.append(sum(len(m._forward_hooks) for m in model.modules()))
        model(torch.randn(30, 64))
        tracker.step()
    assert hooked == [3, 0, 0, 3, 0, 0]    # 3 Linear outputs, armed for steps 0 and 3 only
    df = tracker.table()
    assert sorted(df[df.quantity == "activation_samples"].step.unique()) == [0, 3]
    tracker.close()


def test_explicit_record_off_schedule_is_weights_only_unless_armed() -> None:
    model = _mlp(10)
    tracker = SpectrumTracker(model, schedule=[0], n_boot=0, background=False)
    model(torch.randn(30, 64))
    tracker.step()                                  # step 0: scheduled
    x = torch.randn(40, 64)
    model(x)
    tracker.record()                                # step 1: not scheduled, not armed
    assert {why for s, _, kind, why in tracker.skipped if s == 1 and kind == "activation"} \
        == {"hooks not armed: step 1 is not scheduled (call tracker.arm() before its forward "
            "pass to record them)"}
    tracker.step()
    tracker.arm()                                   # step 2: armed on demand
    model(x)
    tracker.record()
    tracker.step()                                  # already recorded: not again
    tracker.step()
    df = tracker.table()
    assert sorted(df.step.unique()) == [0, 1, 2]
    assert not df.duplicated(["step", "layer", "quantity", "rank"]).any()
    assert set(df[df.step == 1].quantity.str.split("_").str[0]) == {"weight"}
    # Step 2's outputs of layer "0" are those of the forward pass after arm() (oracle: numpy).
    W = model[0].weight.detach().double().numpy()
    H = x.double().numpy() @ W.T + model[0].bias.detach().double().numpy()
    Hc = H - H.mean(axis=0)
    ref = np.sort(np.linalg.eigvalsh(Hc.T @ Hc / 40))[::-1][:40]
    got = df[(df.step == 2) & (df.layer == "0") & (df.quantity == "activation_eigenvalue")]
    assert np.max(np.abs(got.sort_values("rank")["value"].to_numpy() - ref)) < 1e-4 * ref[0]
    assert sum(len(m._forward_hooks) for m in model.modules()) == 0
    tracker.close()


def _blocked_worker_run(max_pending_bytes: int) -> tuple[SpectrumTracker, int]:
    """Five scheduled steps while the worker is held at its first record; returns the
    tracker (closed) and the bytes of one record."""
    import threading

    release = threading.Event()
    model = _mlp(11)
    tracker = SpectrumTracker(model, schedule=Schedule.every(1), n_boot=0, fit=False,
                              max_pending_bytes=max_pending_bytes, policy="block",
                              on_record=lambda rows: release.wait())
    x = torch.randn(32, 64)
    one = (sum(p.numel() for n, p in model.named_parameters() if n.endswith("weight"))
           + 32 * (96 + 96 + 10)) * 4

    def train() -> None:
        for _ in range(5):
            model(x)
            tracker.step()

    loop = threading.Thread(target=train)
    loop.start()
    if max_pending_bytes >= 5 * one:
        loop.join(timeout=300)                       # must not wait for the worker
        assert not loop.is_alive(), "step() waited behind a backlog below its bound"
    release.set()
    loop.join()
    tracker.close()
    return tracker, one


def test_step_queues_records_up_to_the_byte_bound_without_waiting() -> None:
    tracker, one = _blocked_worker_run(256 * 2**20)
    assert tracker.peak_pending_bytes == 5 * one     # all five queued behind the held worker
    assert tracker.n_records == 5


def test_byte_bound_zero_keeps_one_record_in_flight() -> None:
    tracker, one = _blocked_worker_run(0)
    assert tracker.peak_pending_bytes == one         # each step waited for the previous record
    assert tracker.n_records == 5
    with pytest.raises(ValueError, match="max_pending_bytes"):
        SpectrumTracker(_mlp(12), max_pending_bytes=-1)


def test_summaries_in_the_helper_process_equal_those_in_the_thread(monkeypatch) -> None:
    from pandas.testing import assert_frame_equal

    from specdyn.measure import _tracker_measure as record_math

    model = _mlp(13)
    mem = copy.deepcopy(model)
    ref = SpectrumTracker(mem, schedule=Schedule.every(2), n_boot=5, summary_process=False,
                          policy="block")
    _train(mem, ref, range(5))
    ref.close()

    def not_here(*_args: object) -> None:
        raise AssertionError("summaries computed in the training process")

    monkeypatch.setattr(record_math, "summarize_all", not_here)  # the helper has its own
    tr = SpectrumTracker(model, schedule=Schedule.every(2), n_boot=5, policy="block")
    _train(model, tr, range(5))
    tr.close()
    assert_frame_equal(tr.table(), ref.table())
    assert tr.skipped == ref.skipped and tr.measure_cpu_s > 0


def test_a_dead_summary_process_is_reported_and_replaced() -> None:
    from specdyn.measure._summary_process import shared_helper

    model = _mlp(14)
    tr = SpectrumTracker(model, schedule=Schedule.every(1), n_boot=0)
    _train(model, tr, range(1))
    tr.flush()                                       # the helper is up
    proc = shared_helper()._proc
    assert proc is not None
    proc.kill()
    proc.wait()
    _train(model, tr, range(1, 2))
    with pytest.raises(RuntimeError, match="the summary process died"):
        tr.flush()
    tr.close()
    fresh = SpectrumTracker(model, schedule=Schedule.every(1), n_boot=0)
    _train(model, fresh, range(1))
    fresh.close()
    assert sorted(fresh.table().step.unique()) == [0]
