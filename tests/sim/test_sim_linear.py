"""The exact Gram-space engine against weight-space GD and direct spectra."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from specdyn.data import PowerLawTeacher
from specdyn.settings import PowerLawSetting
from specdyn.sim import DivergenceError, gram, seed_streams, train_linear

FIG2 = PowerLawSetting.paper(0.1, 2.0)  # the paper's Fig. 2 setting (feature learning)
LAZY = PowerLawSetting.paper(1.0, 0.5)


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b) / np.abs(b)))


def test_gram_engine_equals_weight_engine() -> None:
    # Issue 3: D = P = 64, N = 1024, M = 512, 300 steps, float64, same seed.
    # Both are exact GD; only roundoff separates them (measured ~1e-13).
    s = FIG2.with_D(64)
    kw = dict(N=1024, M=512, steps=300, checkpoints=12, seed=3, dtype=torch.float64,
              progress=False)
    g = train_linear(s, engine="gram", **kw)
    w = train_linear(s, engine="weights", **kw)
    np.testing.assert_array_equal(g.steps, w.steps)
    assert _rel(g.spectra, w.spectra) < 1e-9
    assert _rel(g.loss, w.loss) < 1e-9  # Gram-formula loss vs loss from the residuals
    for q in ("xi", "eta", "zeta"):
        np.testing.assert_allclose(g.diagonals[q], w.diagonals[q], rtol=1e-9, atol=1e-12)
    assert g.loss[-1] < 0.05 * g.loss[0]  # it learned


@pytest.mark.parametrize("rotation, P, M", [("random", 24, None), ("misaligned", 40, 60),
                                            (None, 32, 20)])
def test_gram_engine_equals_weight_engine_rect_rotated(rotation: str | None, P: int,
                                                       M: int | None) -> None:
    # P != D, rotated bases, population gradients and M < D all exercise other paths.
    s = LAZY.with_D(32)
    t = PowerLawTeacher(s, P=P, rotation=rotation, seed=5)
    kw = dict(N=300, M=M, steps=60, checkpoints=[0, 1, 7, 60], seed=1, teacher=t,
              progress=False)
    g = train_linear(s, engine="gram", **kw)
    w = train_linear(s, engine="weights", **kw)
    assert _rel(g.spectra[g.spectra > 1e-12], w.spectra[g.spectra > 1e-12]) < 1e-9
    np.testing.assert_allclose(g.loss, w.loss, rtol=1e-9)
    for q in ("xi", "eta", "zeta"):
        np.testing.assert_allclose(g.diagonals[q], w.diagonals[q], rtol=1e-8, atol=1e-12)


def test_spectrum_equals_direct_hht_eigenvalues() -> None:
    # Oracle: an independent numpy GD on the same data and initial weights, and the
    # M x M eigendecomposition of H H^T / (M N), H = X W^T (Appendix G of the paper).
    s = FIG2.with_D(16)
    N, M, steps, dt = 200, 40, 30, 1.0
    tr = train_linear(s, N, M, steps, dt=dt, engine="gram", checkpoints=[0, steps], seed=9,
                      progress=False)
    teacher = PowerLawTeacher(s)
    data_seed, weight_seed = seed_streams(9, 2)
    X, Y = teacher.sample(M, data_seed)
    chunks = list(gram.weight_chunks(N, 16, 16, s.sigma_w, s.sigma_a,
                                     gram.weight_generator(weight_seed)))
    W = np.concatenate([w.numpy() for w, _ in chunks])
    A = np.concatenate([a.numpy() for _, a in chunks])
    for k in range(steps + 1):
        if k in (0, steps):
            H = X @ W.T
            direct = np.sort(np.linalg.eigvalsh(H @ H.T / (M * N)))[::-1][:16]
            row = list(tr.steps).index(k)
            np.testing.assert_allclose(tr.spectra[row], direct, rtol=1e-9, atol=1e-14)
        E = Y - X @ W.T @ A / (s.gamma0 * N)
        gW = -(A @ E.T @ X) / (s.gamma0 * N * M)  # dL/dW, L = |E|^2 / (2M)
        gA = -(W @ X.T @ E) / (s.gamma0 * N * M)
        W, A = W - N * dt * gW, A - N * dt * gA  # learning rate nu = N


@pytest.mark.parametrize("N, M", [(None, None), (64, None), (None, 48), (64, 48)])
def test_all_four_limits_run_and_learn(N: int | None, M: int | None) -> None:
    s = FIG2.with_D(24)
    tr = train_linear(s, N, M, 400, checkpoints=8, progress=False)
    assert np.isfinite(tr.spectra).all() and np.isfinite(tr.loss).all()
    assert (np.diff(tr.spectra, axis=1) <= 0).all()  # decreasing order
    assert tr.loss[-1] < 0.1 * tr.loss[0]
    assert tr.times[0] == 0 and tr.times[-1] == 400


def test_infinite_width_population_init_is_exact() -> None:
    # t = 0, N = M = None: rho_k(0) = sigma_w^2 lambda_k exactly.
    s = LAZY.with_D(10)
    tr = train_linear(s, None, None, 5, checkpoints=[0], progress=False)
    np.testing.assert_allclose(tr.spectra[0], s.sigma_w**2 * s.spectra()[0], rtol=1e-14)


def test_random_rotation_leaves_spectra_invariant() -> None:
    # Rotating input and output bases together is a symmetry of the problem
    # (N = M = None); the engine works in the rotated coordinates.
    s = FIG2.with_D(20)
    a = train_linear(s, None, None, 200, checkpoints=6, progress=False)
    r = train_linear(s, None, None, 200, checkpoints=6, progress=False,
                     teacher=PowerLawTeacher(s, rotation="random", seed=11))
    assert _rel(r.spectra, a.spectra) < 1e-10
    for q in ("xi", "eta", "zeta"):
        np.testing.assert_allclose(r.diagonals[q], a.diagonals[q], atol=1e-11)


def test_misaligned_teacher_runs_and_differs() -> None:
    s = FIG2.with_D(32)
    a = train_linear(s, None, None, 300, checkpoints=6, progress=False)
    m = train_linear(s, None, None, 300, checkpoints=6, progress=False,
                     teacher=PowerLawTeacher(s, rotation="misaligned", seed=1))
    assert np.isfinite(m.spectra).all()
    assert m.loss[-1] < m.loss[0]
    np.testing.assert_allclose(m.spectra[0], a.spectra[0], rtol=1e-12)  # same init
    assert _rel(m.spectra[-1], a.spectra[-1]) > 0.05


def test_weights_engine_float32_close_to_float64() -> None:
    s = FIG2.with_D(32)
    kw = dict(N=512, M=256, steps=200, checkpoints=5, progress=False)
    w32 = train_linear(s, engine="weights", dtype=torch.float32, **kw)
    g64 = train_linear(s, engine="gram", **kw)
    assert w32.meta["dtype"] == "float32"
    # float32 roundoff over 200 steps; the top of the spectrum is accurate to ~1e-5
    np.testing.assert_allclose(w32.spectra[:, :8], g64.spectra[:, :8], rtol=1e-3)


def test_divergence_names_first_bad_step() -> None:
    s = FIG2.with_D(16)
    with pytest.raises(DivergenceError, match=r"step (\d+).*reduce dt \(now \S+, try dt=") as info:
        train_linear(s, None, None, 1000, dt=60.0, progress=False)
    step = int(str(info.value).split("step ")[1].split(" ")[0])
    assert step >= 1
    if step > 1:  # the step before the reported one is still fine
        train_linear(s, None, None, step - 1, dt=60.0, progress=False)
    with pytest.raises(DivergenceError, match="reduce dt"):
        train_linear(s, 64, 64, 1000, dt=60.0, engine="weights", progress=False)


@pytest.mark.parametrize("engine, N, M", [("gram", None, None), ("gram", 64, 64),
                                           ("weights", 64, 64)])
def test_each_engine_names_the_first_bad_step_without_replay(engine: str, N: int | None,
                                                             M: int | None) -> None:
    # the driver checks every 100 steps, the steps fill the loss history: the reported step
    # is the first bad one (the run one step shorter passes every check), its loss above the
    # limit (or not finite) in the message
    s = FIG2.with_D(16)
    with pytest.raises(DivergenceError, match=r"training diverged at step \d+ .*: loss "
                       ) as info:
        train_linear(s, N, M, 1000, dt=60.0, engine=engine, progress=False)
    step = info.value.step
    assert 1 <= step < 1000
    # the partial record: the checkpoints before the bad step, set by the driver
    record = info.value.record
    assert record.steps[0] == 0 and record.steps[-1] < step and np.isfinite(record.loss).all()
    assert record.meta["engine"] == engine
    ok = train_linear(s, N, M, step - 1, dt=60.0, engine=engine, checkpoints=[0, step - 1],
                      progress=False)
    assert np.isfinite(ok.loss).all()


@pytest.mark.parametrize("kwargs, match", [
    ({"N": 0}, "N"), ({"N": -5}, "N"), ({"M": 0}, "M"), ({"steps": 0}, "steps"),
    ({"dt": 0.0}, "dt"), ({"dt": -1.0}, "dt"), ({"engine": "fast"}, "engine"),
    ({"method": "adam"}, "method"), ({"engine": "weights", "N": None}, "N"),
    ({"engine": "weights", "method": "flow"}, "flow"), ({"checkpoints": [0, 99]}, "checkpoints"),
    ({"setting": FIG2}, "D"), ({"seed": -1}, "seed"),
    ({"teacher": PowerLawTeacher(FIG2.with_D(9))}, "teacher"),
])
def test_bad_input_raises_before_work(kwargs: dict, match: str) -> None:
    args = {"setting": FIG2.with_D(8), "N": 16, "M": 16, "steps": 10, "progress": False,
            **kwargs}
    with pytest.raises(ValueError, match=match):
        train_linear(**args)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_the_watched_loss_shows_a_non_finite_weight_and_is_the_loss_otherwise(bad: float
                                                                              ) -> None:
    # oracle: the definition of the divergence history's entry: NaN (not finite) when any
    # weight is not finite, whatever the loss; the loss itself, bit for bit, otherwise
    # (the watched value is what the history records, so finite runs must not move)
    from specdyn.sim.gram import watched_loss as _watched_loss

    g = torch.Generator().manual_seed(0)
    W = torch.randn(7, 5, generator=g, dtype=torch.float64)
    for loss in (0.0, 0.3125, 1e-300, 7.5e12):
        lt = torch.tensor(loss, dtype=torch.float64)
        for w in (W, -W.abs()):  # a sum of either sign (0 * a negative sum is -0.0)
            assert _watched_loss(lt, w).item() == loss
            assert np.signbit(_watched_loss(lt, w).item()) == np.signbit(loss)
        for i, j in ((0, 0), (3, 2), (6, 4)):
            Wb = W.clone()
            Wb[i, j] = bad
            assert not np.isfinite(_watched_loss(lt, Wb).item()), (loss, i, j)
