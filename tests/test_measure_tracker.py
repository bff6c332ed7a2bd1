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

from specdyn.measure import SpectrumTracker, log_schedule


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
    tracker = SpectrumTracker(model, n_boot=20)
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
    assert list(df.columns) == ["step", "layer", "quantity", "rank", "value"]
    sched = log_schedule(10)
    expected_steps = [s for s in range(steps) if sched(s)]
    assert sorted(df["step"].unique()) == expected_steps
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
    assert last.sort_values("rank")["value"].to_numpy() == pytest.approx(sv, rel=1e-9)

    # Summaries: CI brackets the exponent; outlier counts are whole numbers.
    for kind in ("activation", "weight"):
        e = df[df.quantity == f"{kind}_exponent"].set_index(["step", "layer"])["value"]
        lo = df[df.quantity == f"{kind}_exponent_ci_low"].set_index(["step", "layer"])["value"]
        hi = df[df.quantity == f"{kind}_exponent_ci_high"].set_index(["step", "layer"])["value"]
        assert ((lo <= e + 1e-12) & (e <= hi + 1e-12)).all()
    outl = df[df.quantity.str.endswith("_outliers")]["value"]
    assert (outl >= 0).all() and (outl == np.round(outl)).all()
    # At initialisation the weights are i.i.d.: the calibrated test flags (almost) nothing.
    w0 = df[(df.step == 0) & (df.quantity == "weight_outliers")]["value"]
    assert w0.sum() <= 1
    # Training creates outliers in the weights (learned directions).
    wl = df[(df.step == expected_steps[-1]) & (df.quantity == "weight_outliers")]["value"]
    assert wl.sum() >= 1
    # Digits has constant (always zero) pixels, so layer 0's pre-activations are rank
    # deficient: no MP bulk applies, and the tracker says so instead of inventing one.
    assert any(layer == "0" and kind == "activation_outliers" and "rank deficient" in why
               for _, layer, kind, why in tracker.skipped)


def test_tracker_records_weight_spectrum_exactly_after_record() -> None:
    model = _mlp(1)
    tracker = SpectrumTracker(model, activations=False, schedule=[0])
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
    tracker = SpectrumTracker(model, schedule=1, max_samples=10_000, fit=False)
    x = torch.randn(4, 3, 8, 8)
    model(x)
    tracker.step()
    df = tracker.table()
    act = df[(df.layer == "0") & (df.quantity == "activation_eigenvalue")]
    assert act["rank"].max() == 8  # 8 channels; 4 * 36 positions are samples
    samples = df[(df.layer == "0") & (df.quantity == "activation_samples")]["value"]
    assert samples.iloc[0] == 4 * 6 * 6


def test_schedules_and_max_samples() -> None:
    sched = log_schedule(10)
    assert [s for s in range(41) if sched(s)] == [0, 1, 2, 3, 4, 5, 6, 8, 10, 13, 16, 20, 25,
                                                  32, 40]
    model = _mlp(2)
    tracker = SpectrumTracker(model, schedule=3, max_samples=50, weights=False, fit=False,
                              outliers=False)
    for _ in range(7):
        model(torch.randn(40, 64))
        model(torch.randn(40, 64))
        tracker.step()
    df = tracker.table()
    assert sorted(df.step.unique()) == [0, 3, 6]
    assert set(df[df.quantity == "activation_samples"]["value"]) == {50.0}
    tracker.close()
    model(torch.randn(5, 64))
    assert all(not b for b in tracker._buffers.values())  # hooks removed


def test_modules_by_name_and_divergence_reported() -> None:
    model = _mlp(3)
    tracker = SpectrumTracker(model, modules=["2"], schedule=[0, 1])
    model(torch.randn(30, 64))
    tracker.step()
    assert set(tracker.table().layer) == {"2"}
    with torch.no_grad():
        model[2].weight[0, 0] = float("nan")
    model(torch.randn(30, 64))
    with pytest.raises(FloatingPointError, match="step 1"):
        tracker.step()


def test_bad_arguments_rejected() -> None:
    model = _mlp(4)
    with pytest.raises(ValueError, match="schedule"):
        SpectrumTracker(model, schedule="sometimes")
    with pytest.raises(ValueError, match="modules"):
        SpectrumTracker(model, modules=["nope"])
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
    tracker = SpectrumTracker(model, schedule=1, n_boot=10)
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
