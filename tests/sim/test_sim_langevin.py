"""Mean-field Langevin particle engine: gradients, coupling, bad input, blow-up, chaos."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from specdyn import Schedule
from specdyn.data.hermite import HermiteTarget, hermite_coefficients
from specdyn.models import AtomTeacher, network_function
from specdyn.models.activations import Activation
from specdyn.sim import (
    ChaosRun,
    DivergenceError,
    LangevinUpdate,
    mean_field_langevin,
    propagation_of_chaos,
    seed_streams,
)


def _notes_target() -> HermiteTarget:
    """f*(x) = tanh(2 x1) + 0.5 He2(x1) (related-notes.md, section 3)."""
    c = hermite_coefficients(lambda z: np.tanh(2 * z), 40)
    c[2] += 0.5 * np.sqrt(2.0)  # He2 = sqrt(2) h2 in the orthonormal basis
    return HermiteTarget(c)


def _tanh1(x: np.ndarray) -> np.ndarray:
    return np.tanh(x[:, 0])


#: two steps of the default update: enough for a check that runs before any work
TWO = LangevinUpdate(steps=2)


@pytest.mark.parametrize("activation", ["tanh", "relu", "quadratic", "gelu"])
def test_one_step_equals_autograd_gd_with_lr_eta_n(activation: str) -> None:
    # oracle: autograd of the network loss L = (1/2M) sum (f_N - y)^2 + (wd/2N) sum |theta|^2,
    # one GD step with per-particle learning rate eta N (temperature 0)
    N, d, eta, wd = 7, 3, 0.03, 0.2
    run = mean_field_langevin(activation, _tanh1, N, d, 50,
                              update=LangevinUpdate(dt=eta, temperature=0.0, weight_decay=wd,
                                                    steps=1), seed=3, checkpoints=[0, 1])
    theta = torch.tensor(run.particles[0], requires_grad=True)
    x = torch.tensor(run.x)
    y = torch.tensor(run.y)
    from specdyn.models.activations import get_activation

    act = get_activation(activation)
    f = act.fn(x @ theta[:, 1:].T) @ theta[:, 0] / N
    loss = 0.5 * ((f - y) ** 2).mean() + 0.5 * wd * (theta ** 2).sum() / N
    loss.backward()
    expected = run.particles[0] - eta * N * theta.grad.numpy()
    np.testing.assert_allclose(run.particles[1], expected, rtol=1e-12, atol=1e-13)


def test_loss_matches_network_function_oracle() -> None:
    run = mean_field_langevin("tanh", _tanh1, 20, 4, 64, update=LangevinUpdate(steps=10), seed=1,
                              checkpoints=[0, 10])
    for j, k in enumerate(run.steps):
        f = network_function(run.particles[j], run.x, "tanh")
        np.testing.assert_allclose(run.loss[k], 0.5 * np.mean((f - run.y) ** 2), rtol=1e-12)
    assert run.particles.shape == (2, 20, 5)
    np.testing.assert_allclose(run.times, [0.0, 0.5])


def test_noise_array_callable_and_seed_agree() -> None:
    N, d, steps = 6, 2, 15
    rng = np.random.default_rng(0)
    xi = rng.standard_normal((steps, N, d + 1))
    init = rng.standard_normal((N, d + 1))
    warm = LangevinUpdate(steps=steps, temperature=0.1)
    kw = dict(update=warm, seed=5, init=init, checkpoints=Schedule.even(3))
    r1 = mean_field_langevin("tanh", _tanh1, N, d, 30, noise=xi, **kw)
    r2 = mean_field_langevin("tanh", _tanh1, N, d, 30, noise=lambda k: xi[k], **kw)
    np.testing.assert_array_equal(r1.particles, r2.particles)
    # a different noise realisation moves the particles differently
    r3 = mean_field_langevin("tanh", _tanh1, N, d, 30, **kw)
    assert np.abs(r3.final - r1.final).max() > 1e-3
    # temperature 0 ignores the noise: plain GD
    kw0 = {**kw, "update": LangevinUpdate(steps=steps, temperature=0.0)}
    g1 = mean_field_langevin("tanh", _tanh1, N, d, 30, noise=xi, **kw0)
    g2 = mean_field_langevin("tanh", _tanh1, N, d, 30, **kw0)
    np.testing.assert_array_equal(g1.particles, g2.particles)


def test_noise_increment_has_variance_2_tau_eta() -> None:
    # zero target, particles started at 0, linear sigma, no decay: the drift is O(|theta|^2)
    # and stays negligible over t = 0.2, so theta_T is a Gaussian random walk with
    # Var = 2 tau eta steps per coordinate (tolerance: ~5 standard errors of a variance
    # estimated from N = 4000 samples, sqrt(2/4000) = 2.2%)
    N, d, steps, eta, tau = 4000, 2, 20, 0.01, 0.5
    run = mean_field_langevin("linear", lambda x: np.zeros(len(x)), N, d, 16,
                              update=LangevinUpdate(dt=eta, temperature=tau, weight_decay=0.0,
                                                    steps=steps), seed=2,
                              init=np.zeros((N, d + 1)), checkpoints=[0, steps])
    var = run.final.var(0)
    np.testing.assert_allclose(var, 2 * tau * eta * steps, rtol=0.08)  # 5 sigma at N=4000


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [({"N": 0}, "N"), ({"D": 0}, "D"), ({"M": 0}, "M"), ({"activation": "sigmoid"}, "activation"),
     ({"update": {"dt": 0.1}}, "update"), ({"checkpoints": [0, 99]}, "checkpoints"),
     ({"init": np.zeros((3, 3))}, "init"), ({"init": np.full((4, 3), np.nan)}, "init"),
     ({"init": (1.0, -1.0)}, r"init\[1\]"), ({"init": (1.0, 1.0, 1.0)}, "init"),
     ({"init": "gaussian"}, "init"), ({"init": [[1.0, 2.0, 3.0], [1.0]]}, "init"),
     ({"noise": np.zeros((2, 2, 2))}, "noise")],
)
def test_bad_input_names_the_argument(kwargs: dict, name: str) -> None:
    # one line that starts with the argument's name, before any work
    base = dict(activation="tanh", target=_tanh1, N=4, D=2, M=10, update=LangevinUpdate(steps=5))
    with pytest.raises(ValueError, match=f"^{name} ") as info:
        mean_field_langevin(**{**base, **kwargs})
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [({"temperature": -0.1}, "temperature"), ({"dt": 0.0}, "dt"), ({"dt": -1.0}, "dt"),
     ({"weight_decay": -1.0}, "weight_decay"), ({"steps": -1}, "steps"),
     ({"steps": 2.5}, "steps")],
)
def test_a_bad_update_names_its_field(kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=f"^{name} "):
        LangevinUpdate(**kwargs)


def test_the_update_and_the_init_reach_the_run() -> None:
    # the update's fields and the init's scales are the run's (its meta and its clock), and
    # scales (0, 0) start every particle at the origin; given particles are the start
    up = LangevinUpdate(dt=0.02, temperature=0.0, weight_decay=0.3, steps=4)
    run = mean_field_langevin("tanh", _tanh1, 5, 2, 10, update=up, init=(0.0, 0.0),
                              checkpoints=[0, 4])
    assert (run.meta["dt"], run.meta["temperature"], run.meta["weight_decay"],
            run.meta["steps"], run.meta["init_scale"]) == (0.02, 0.0, 0.3, 4, (0.0, 0.0))
    assert run.times.tolist() == [0.0, 0.08] and not run.particles[0].any()
    start = np.arange(15.0).reshape(5, 3) / 15
    given = mean_field_langevin("tanh", _tanh1, 5, 2, 10, update=up, init=start.tolist(),
                                checkpoints=[0, 4])
    np.testing.assert_array_equal(given.particles[0], start)
    assert given.meta["init_scale"] is None


def test_target_of_wrong_dimension_is_rejected() -> None:
    teacher = AtomTeacher("tanh", np.array([[1.0, 1.0, 0.0, 0.0]]))  # d = 3
    with pytest.raises(ValueError, match="target"):
        mean_field_langevin("tanh", teacher, 4, 5, 10, update=TWO)
    with pytest.raises(ValueError, match="target"):
        mean_field_langevin("tanh", lambda x: x[:, 7], 4, 5, 10, update=TWO)
    with pytest.raises(ValueError, match="target"):
        mean_field_langevin("tanh", lambda x: x, 4, 5, 10, update=TWO)  # not one value per row
    with pytest.raises(ValueError, match="target"):
        mean_field_langevin("tanh", HermiteTarget([0, 1], direction=[1, 0, 0]), 4, 5, 10,
                            update=TWO)


def test_blow_up_stops_with_step_and_suggestion() -> None:
    with pytest.raises(DivergenceError, match=r"step \d+.*[Rr]educe dt") as info:
        mean_field_langevin("quadratic", lambda x: 5 * x[:, 0] ** 2, 20, 3, 50,
                            update=LangevinUpdate(dt=5.0, temperature=0.0, weight_decay=0.0,
                                                  steps=400), seed=0)
    assert 0 < info.value.step < 400
    # the same problem with a small step is stable
    run = mean_field_langevin("quadratic", lambda x: 5 * x[:, 0] ** 2, 20, 3, 50,
                              update=LangevinUpdate(dt=0.002, temperature=0.0, weight_decay=0.0,
                                                    steps=50), seed=0)
    assert np.isfinite(run.loss).all()


@pytest.mark.parametrize("steps", [0, 5])
@pytest.mark.parametrize("run", ["langevin", "chaos"])
def test_non_finite_loss_is_caught_by_the_driver(run: str, steps: int) -> None:
    # sqrt is NaN at the negative pre-activations of the start: the loss of state 0 is not
    # finite while max |theta| is; the driver's check names step 0 (also for a run of no
    # steps, whose only loss no update fills). State 0's loss is known after update 1, so a
    # longer run has recorded checkpoint 0 (finite particles, no loss) before the check
    act = Activation("sqrt", lambda z: z.sqrt(), lambda z: 0.5 / z.sqrt())
    kw = dict(update=LangevinUpdate(temperature=0.0, steps=steps), seed=0)
    with pytest.raises(DivergenceError, match=r"diverged at step 0 .*: loss nan \(not finite\)"
                       ) as info:
        if run == "langevin":
            mean_field_langevin(act, _tanh1, 8, 3, 20, **kw)
        else:
            propagation_of_chaos(act, _tanh1, [2], 3, 20, reference_N=16, **kw)
    assert info.value.step == 0
    record = info.value.record  # a partial record, whether or not it has a checkpoint
    assert record.steps.tolist() == ([] if steps == 0 else [0])
    loss = record.loss if run == "langevin" else record.reference_loss
    assert len(loss) == 0 and record.meta["steps"] == steps


def test_chaos_blow_up_carries_the_partial_record() -> None:
    # the problem of the Langevin blow-up test, as a chaos run: the error carries the
    # checkpoints taken before the step it names, like every other engine's
    blow = dict(update=LangevinUpdate(dt=5.0, temperature=0.0, weight_decay=0.0, steps=400),
                seed=0, reference_N=40, checkpoints=Schedule.every(2))
    with pytest.raises(DivergenceError, match=r"step \d+.*[Rr]educe dt") as info:
        propagation_of_chaos("quadratic", lambda x: 5 * x[:, 0] ** 2, [4, 5], 3, 50, **blow)
    run = info.value.record
    assert isinstance(run, ChaosRun) and run.meta["engine"] == "propagation_of_chaos"
    k = info.value.step
    assert 0 < k < 400 and len(run.steps) >= 1 and run.steps[-1] < k
    assert run.steps.tolist() == list(range(0, int(run.steps[-1]) + 1, 2))
    assert run.sq_distance.shape == run.function_gap.shape == (2, len(run.steps))
    assert np.isfinite(run.sq_distance).all() and run.sq_distance[:, 0].tolist() == [0.0, 0.0]
    assert len(run.reference_loss) == run.steps[-1] and np.isfinite(run.reference_loss).all()


def test_chaos_distance_starts_at_zero_and_needs_valid_sizes() -> None:
    run = propagation_of_chaos("tanh", _tanh1, [4, 8], 2, 32, update=LangevinUpdate(steps=20),
                               seed=0, reference_N=64, replicas=2, checkpoints=Schedule.even(3),
                               record="w2_distance")
    assert run.sq_distance[:, 0].tolist() == [0.0, 0.0]
    assert (run.sq_distance[:, -1] > 0).all()
    # the optimal assignment never does worse than the identity pairing
    assert run.w2_distance is not None
    assert (run.w2_distance <= run.sq_distance + 1e-15).all()
    assert (run.w2_distance[:, -1] > 0).all()
    assert run.meta["replicas"] == [4, 2]
    assert run.reference_particles is None and run.system_particles is None  # not asked
    for bad, name in (({"N_values": [0, 8]}, r"N_values\[0\]"), ({"record": "w2"}, "record"),
                      ({"init": np.zeros((4, 3))}, "init"), ({"update": 0.05}, "update")):
        with pytest.raises(ValueError, match=f"^{name} ") as info:
            propagation_of_chaos(**{"activation": "tanh", "target": _tanh1, "N_values": [4],
                                    "D": 2, "M": 32, "update": TWO, **bad})
        assert "\n" not in str(info.value)


def test_chaos_system_equals_single_engine_with_same_start_and_noise() -> None:
    # the batched block engine against mean_field_langevin: replica 0 of each system size is
    # an ordinary N-particle run from the pool's first N particles with the pool's noise rows
    Ns, d, seed, steps = [5, 10], 2, 4, 12
    warm = LangevinUpdate(steps=steps, temperature=0.1)
    run = propagation_of_chaos("tanh", _tanh1, Ns, d, 20, update=warm, seed=seed,
                               reference_N=50, checkpoints=[0, steps],
                               record=["system_particles"])
    assert run.system_particles is not None
    for i, N in enumerate(Ns):
        gen = torch.Generator().manual_seed(seed_streams(seed, 5)[4])
        draws = [torch.randn((max(Ns), d + 1), generator=gen, dtype=torch.float64)
                 for _ in range(steps)]
        single = mean_field_langevin("tanh", _tanh1, N, d, data=(run.x, run.y), update=warm,
                                     init=run.system_particles[i][0],
                                     noise=lambda k, N=N, draws=draws: draws[k][:N],
                                     checkpoints=[0, steps])
        np.testing.assert_allclose(single.final, run.system_particles[i][-1], rtol=1e-12,
                                   atol=1e-13)


@pytest.mark.slow
def test_propagation_of_chaos_rate_is_one_over_n() -> None:
    # claim [A]: (1/N) sum_i |theta_i - bar theta_i|^2 = O(1/N). Log-log slope of the
    # seed-averaged distance over N = 25..800 must lie in [-1.3, -0.7]. Reference
    # population of 4000 particles (floor ~ 1/4000, about 20% of the N = 800 value).
    Ns = [25, 50, 100, 200, 400, 800]
    target = _notes_target()
    dists = []
    for seed in range(3):
        run = propagation_of_chaos("tanh-shift", target, Ns, 5, 100,
                                   update=LangevinUpdate(dt=0.05, temperature=0.02,
                                                         weight_decay=0.05, steps=40),
                                   seed=seed, reference_N=4000, replicas=4, checkpoints=[0, 40])
        dists.append(run.sq_distance[:, -1])
    mean = np.mean(dists, axis=0)
    slope = np.polyfit(np.log(Ns), np.log(mean), 1)[0]
    assert -1.3 <= slope <= -0.7, (slope, mean)
