"""real-data's readings (the numbers its claims judge) against independent computations, its
ReLU student's two starts, its lazy baselines and the tasks where the model applies."""

from __future__ import annotations

import numpy as np
import pytest

from specdyn.experiments.real_data import readings as rd


def test_wishart_level_matches_monte_carlo() -> None:
    """median_k |log (U^T W^T W U)_kk / N| for Gaussian W: the chi-square oracle."""
    from scipy.stats import chi2

    for n in (64, 512):
        x = chi2(n).rvs(size=200_000, random_state=np.random.default_rng(n)) / n
        mc = float(np.median(np.abs(np.log(x))))
        assert rd.wishart_level(n) == pytest.approx(mc, rel=0.03)


def test_plateau_slope_reads_the_last_half_decade() -> None:
    t = np.geomspace(1.0, 1e4, 25)
    a = 1.0 + 0.3 * np.log10(t)  # a straight line in log t: slope 0.3 a decade everywhere
    assert rd.plateau_slope(t, a) == pytest.approx(0.3)
    flat = np.where(t < 1e3, a, a[t < 1e3][-1])  # settles after t = 1e3
    assert abs(rd.plateau_slope(t, flat)) < 0.05
    assert np.isnan(rd.plateau_slope(t[:2], a[:2]))
    dev, slope = rd.end_after_plateau(t, a, target=2.0, bound=0.1)
    assert np.isnan(dev) and slope == pytest.approx(0.3)
    dev, _ = rd.end_after_plateau(t, flat, target=1.8, bound=0.1)
    assert dev == pytest.approx(flat[-1] - 1.8)


def test_end_tolerance_is_below_half_the_gap() -> None:
    for beta in (0.3, 0.85, -0.4):
        assert 0 < rd.end_tolerance(beta) < abs(beta) / 4


def test_learning_times_recover_known_half_rises() -> None:
    """Modes whose learned part follows a logistic in log t with a known half time."""
    t = np.r_[0.0, np.geomspace(0.1, 1e4, 60)]
    half = np.array([1.0, 10.0, 100.0, 300.0])
    rise = 1.0 / (1.0 + (half[None, :] / np.maximum(t[:, None], 1e-30)) ** 2)
    rho = 0.01 * (1.0 + 50.0 * rise)
    got = rd.learning_times(t, rho, 4)
    np.testing.assert_allclose(got, half, rtol=0.02)
    assert rd.clock_error(got, 2 * half) == pytest.approx(np.log(2), rel=0.03)
    # a mode that learns nothing has no learning time
    flat = rho.copy()
    flat[:, 2] = 0.01
    assert np.isnan(rd.learning_times(t, flat, 4)[2])


def test_transient_vs_theory_is_a_ratio_on_the_loss_clock() -> None:
    frac = np.geomspace(1.0, 1e-3, 30)
    a_th = 1.0 + 2.0 * np.exp(-6 * np.log10(frac / 1e-1) ** 2)  # peak 3.0 at frac 0.1
    a_net = 1.0 + 0.5 * np.exp(-6 * np.log10(frac / 1e-2) ** 2)  # peak 1.5 at frac 0.01
    size, time = rd.transient_vs_theory(a_net, frac, a_th, frac)
    assert size == pytest.approx(0.25, rel=0.01)
    assert time == pytest.approx(-1.0, abs=0.12)
    assert rd.transient_vs_theory(a_th, frac, a_th, frac) == pytest.approx((1.0, 0.0))
    assert np.isnan(rd.transient_vs_theory(a_net[:5], frac, a_th, frac)[0])


# ------------------------------------------------------------------------ the ReLU student


def _patches(M: int = 400, patch: int = 6) -> tuple[np.ndarray, np.ndarray]:
    from specdyn.data import image_patches

    d = image_patches(patch, M, 1, 0)
    assert d.Y is not None
    return d.X, d.Y


def test_random_start_is_train_two_layer() -> None:
    """The experiment's runner from the engine's random start reproduces the library's ReLU
    student (``study(train=("relu",))``, i.e. ``train_two_layer``) on the same data."""
    from specdyn.data import decompose_data as decompose
    from specdyn.experiments.real_data.config import RELU_LAZY
    from specdyn.experiments.real_data.students import relu_student
    from specdyn.study import study

    X, Y = _patches()
    kw = {"kmax": 8, "checkpoints": 6, "t_factor": 1.0, "seed": 3}
    st = study(X, Y, regimes={"lazy": RELU_LAZY}, train=("relu",), relu_N=32,
               reference=False, **kw)
    m = st.regimes["lazy"][1]["relu"]
    run = relu_student(decompose(X, Y), X, Y, RELU_LAZY, 32, zero_output=False, **kw)
    np.testing.assert_array_equal(run.steps, m.steps)
    np.testing.assert_allclose(run.rho, m.rho_network, rtol=1e-10)
    np.testing.assert_allclose(run.rho_theory, m.rho_theory, rtol=1e-12)


def test_zero_output_starts_at_the_theory_loss_with_half_the_units() -> None:
    """Antisymmetric pairs: the initial output is exactly 0 (so the excess loss at t = 0 is
    the theory's, which starts from f = 0) and W^T W / N is the Gram of N/2 drawn units
    (rho_k(0) of the pairs equals that of a half-width network of the same draw)."""
    from specdyn.data import decompose_data as decompose
    from specdyn.experiments.real_data.config import RELU_LAZY
    from specdyn.experiments.real_data.students import relu_student

    X, Y = _patches()
    dec = decompose(X, Y)
    kw = {"kmax": 8, "checkpoints": 5, "t_factor": 1.0, "seed": 1}
    zero = relu_student(dec, X, Y, RELU_LAZY, 64, zero_output=True, **kw)
    rand = relu_student(dec, X, Y, RELU_LAZY, 64, zero_output=False, **kw)
    assert zero.loss[0] == pytest.approx(zero.loss_theory[0], rel=1e-10)
    assert rand.loss[0] > 2 * rand.loss_theory[0]  # the random output at gamma0 = 0.05
    with pytest.raises(ValueError, match="^N must be even"):
        relu_student(dec, X, Y, RELU_LAZY, 63, zero_output=True, **kw)
    assert np.all(np.isfinite(zero.spectrum)) and zero.spectrum.shape == zero.rho.shape
    # the spectrum is that of Lambda^1/2 G Lambda^1/2: its trace is the diagonal's
    np.testing.assert_allclose(zero.spectrum.sum(axis=1), zero.rho.sum(axis=1), rtol=1e-10)


def test_centred_network_starts_at_zero_and_learns() -> None:
    """The lazy baseline: x -> s (g(x) - g_0(x)) is 0 at initialisation, has g's gradients
    times s, and its weights move s times less than g's for the same function change."""
    import torch

    from specdyn.experiments.real_data.networks import centred

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(5, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    lazy = centred(net, 100.0)
    x = torch.randn(7, 5)
    assert torch.count_nonzero(lazy(x)) == 0
    assert [p for p in lazy.parameters() if p.requires_grad] == list(net.parameters())
    lazy(x).sum().backward()
    g_lazy = net[0].weight.grad.clone()
    net.zero_grad()
    net(x).sum().backward()
    torch.testing.assert_close(g_lazy, 100.0 * net[0].weight.grad)


# ------------------------------------------------------------------------ the model tasks


def test_model_tasks_are_p_equals_d_and_nearly_aligned() -> None:
    from specdyn.data import decompose_data as decompose
    from specdyn.experiments.real_data.config import tiny
    from specdyn.experiments.real_data.tasks import load, model_task_names

    cfg = tiny()
    for task in model_task_names(cfg):
        X, Y, text, kmax = load(cfg, task)
        assert X.shape[1] == Y.shape[1] and text
        dec = decompose(X, Y)
        assert dec.output_overlap(kmax) < 0.2
    # text-denoise: the target is the mean of the chunk's two halves
    from specdyn.data import text_ngrams

    X, Y, _, _ = load(cfg, "text-denoise")
    d = text_ngrams(2, cfg.text_D, chunk=cfg.text_half_chunk)
    n = d.M // 2
    halves = np.asarray(d.X)[:2 * n].reshape(n, 2, -1)
    np.testing.assert_allclose(Y, halves.mean(axis=1) - halves.mean(axis=(0, 1)), atol=1e-15)
    X1, _, _, _ = load(cfg, "text-denoise@s1")
    np.testing.assert_allclose(X1, halves[:, 1] - halves[:, 1].mean(axis=0), atol=1e-15)
