"""The exact reference on data (``theory.exact_reference``): the infinite-width flow on a
data set's own ``Sigma`` and ``C``.

Oracles: the closed form of the aligned theory (``theory.rho``, an independent solution)
for aligned coefficients, and the Gram engine's own flow (``sim.train_linear(N=None,
method="flow")`` through a ``DataTeacher``: another integrator, in another basis) for
misaligned ones.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import ortho_group

from specdyn import theory
from specdyn.settings import AlignedSetting


def _aligned(D: int = 24, P: int | None = None, seed: int = 0
             ) -> tuple[AlignedSetting, np.ndarray]:
    """An aligned setting and its coefficients: rows ``lambda_k theta_k v_k`` with
    orthonormal output directions ``v_k`` (a random basis: still aligned)."""
    k = np.arange(1, D + 1, dtype=float)
    lam, mu = k**-1.2, 0.5 * k**-0.6
    P = D if P is None else P
    V = ortho_group.rvs(P, random_state=seed)[:, :min(D, P)].T  # rows orthonormal
    c = np.zeros((D, P))
    r = min(D, P)
    c[:r] = (lam[:r] * np.sqrt(mu[:r]))[:, None] * V
    if P < D:  # modes beyond rank P have no target
        mu = mu.copy()
        mu[r:] = 0.0
    return AlignedSetting(lam, mu, 0.1, 1.0, 2.0 * 1.01 / np.sqrt(mu[0])), c


def test_t0_is_the_initial_state() -> None:
    s, c = _aligned()
    ref = theory.exact_reference(s, c, [0.0])
    np.testing.assert_allclose(ref.rho[0], s.sigma_w**2 * s.lam_values, rtol=1e-15)
    np.testing.assert_allclose(ref.spectrum[0], np.sort(s.sigma_w**2 * s.lam_values)[::-1],
                               rtol=1e-12)
    assert ref.xi[0].max() == 0.0 and ref.nfev == 0
    assert ref.excess_loss[0] == pytest.approx(0.5 * np.sum(c**2 / s.lam_values[:, None]))


@pytest.mark.parametrize("P", [24, 10])
def test_aligned_coefficients_give_the_closed_form(P: int) -> None:
    """For mutually orthogonal rows the flow decouples: the closed form of Eq. (12)."""
    s, c = _aligned(P=P)
    t = np.r_[0.0, np.geomspace(0.3, 3e4, 25)]
    ref = theory.exact_reference(s, c, t, method="RK45", rtol=1e-9)
    th = theory.rho(s, np.arange(1, s.D + 1), t[:, None])
    # RK45 at rtol 1e-9 measured within 1.2e-8 on this setting; 1e-6 leaves room
    assert np.max(np.abs(np.log(ref.rho / th))) < 1e-6
    np.testing.assert_allclose(ref.excess_loss, theory.loss(s, t), rtol=1e-5, atol=1e-12)
    assert ref.rank == min(s.D, P)


def test_rk23_is_close_to_the_closed_form() -> None:
    s, c = _aligned()
    t = np.geomspace(1.0, 1e4, 12)
    ref = theory.exact_reference(s, c, t, method="RK23", rtol=1e-7)  # the default before
    th = theory.rho(s, np.arange(1, s.D + 1), t[:, None])
    assert np.max(np.abs(np.log(ref.rho / th))) < 1e-4  # measured 8e-6


@pytest.mark.parametrize("P", [24, 10])
def test_rosenbrock_is_close_to_the_closed_form(P: int) -> None:
    """ROS34PW2 at its default rtol 1e-5 is held to 5e-4 in log rho and in the spectrum
    (the module docstring; measured 1.5e-4), over five decades of time: a stiff run, which
    ``method="auto"`` gives it."""
    s, c = _aligned(P=P)
    t = np.r_[0.0, np.geomspace(0.3, 3e4, 25)]
    ref = theory.exact_reference(s, c, t)
    assert ref.method == "ROS34PW2" and ref.rtol == 1e-5
    th = theory.rho(s, np.arange(1, s.D + 1), t[:, None])
    assert np.max(np.abs(np.log(ref.rho / th))) < 5e-4
    np.testing.assert_allclose(ref.spectrum, -np.sort(-th, axis=1), rtol=5e-4)
    # the stiff tail costs an explicit pair its stability limit, the W-method its accuracy
    rk23 = theory.exact_reference(s, c, t, method="RK23", rtol=1e-5)
    assert ref.nfev < rk23.nfev / 5

def test_rosenbrock_matches_the_tight_explicit_pair_on_misaligned_data() -> None:
    """The oracle of a misaligned target: RK45 at rtol 1e-10 (the integrator before, run
    tight) on patches whose target is the shifted patch."""
    from specdyn.data import aligned_setting, decompose_data, image_patches

    d = image_patches(patch=5, M=300, shift=1, seed=2)
    dec = decompose_data(d.X, d.Y)
    s = aligned_setting(dec, 0.1, 1.0, 2.0 / np.sqrt(dec.mu[0]))
    t = np.r_[0.0, np.geomspace(0.1, 2e3, 20)]
    tight = theory.exact_reference(s, dec.coeffs, t, method="RK45", rtol=1e-10)
    ref = theory.exact_reference(s, dec.coeffs, t, method="ROS34PW2")
    assert np.max(np.abs(np.log(ref.rho / tight.rho))) < 5e-4
    # the smallest eigenvalues gather the error of every entry of G^w: 2e-3 (measured 1e-3
    # at ranks 22-25 of 25; the top ten within 1e-4)
    assert np.max(np.abs(np.log(ref.spectrum / tight.spectrum))) < 2e-3
    assert np.max(np.abs(np.log(ref.spectrum / tight.spectrum))[:, :10]) < 2e-4
    np.testing.assert_allclose(ref.xi, tight.xi, rtol=5e-4, atol=1e-9)
    # and the misalignment is there to be missed: the aligned theory is far from both
    th = theory.rho(s, np.arange(1, dec.D + 1), t[:, None])
    assert np.max(np.abs(np.log(tight.rho / th))) > 0.01


def test_auto_takes_the_explicit_pair_where_the_flow_is_not_stiff() -> None:
    s, c = _aligned(D=10)
    short = theory.exact_reference(s, c, [1.0, 10.0])
    assert short.method == "RK23" and short.rtol == 1e-7
    long = theory.exact_reference(s, c, [1.0, 1e5])
    assert long.method == "ROS34PW2"


def test_times_in_any_order() -> None:
    s, c = _aligned(D=10)
    t = np.array([50.0, 0.0, 5.0, 500.0])
    a = theory.exact_reference(s, c, t, method="RK45", rtol=1e-9)
    b = theory.exact_reference(s, c, np.sort(t), method="RK45", rtol=1e-9)
    np.testing.assert_allclose(a.rho[np.argsort(t)], b.rho, rtol=1e-12)
    np.testing.assert_array_equal(a.t, t)


def test_misaligned_data_match_the_gram_engine_flow() -> None:
    """Another integrator (the sim's DOP853 on the full Grams, in the data's teacher basis)
    on patches whose target is the shifted patch (misaligned)."""
    from specdyn.data import DataTeacher, aligned_setting, decompose_data, image_patches
    from specdyn.sim import train_linear

    d = image_patches(patch=5, M=300, shift=1, seed=2)
    dec = decompose_data(d.X, d.Y)
    s = aligned_setting(dec, 0.1, 1.0, 2.0 / np.sqrt(dec.mu[0]))
    steps = [0, 1, 3, 10, 30, 100, 300]
    traj = train_linear(s, None, None, 300, dt=1.0, method="flow", checkpoints=steps,
                        teacher=DataTeacher(s, dec, d.X, d.Y))
    ref = theory.exact_reference(s, dec.coeffs, traj.times, method="RK45", rtol=1e-10)
    sim = dec.lam * traj.diagonals["eta"]
    assert np.max(np.abs(np.log(ref.rho / sim))) < 1e-6  # measured 7e-9
    np.testing.assert_allclose(ref.spectrum, traj.series["preact"][:, :dec.D], rtol=1e-6,
                               atol=1e-14)
    # and the aligned theory misses it: the misalignment effect the reference measures
    th = theory.rho(s, np.arange(1, dec.D + 1), traj.times[:, None])
    assert np.max(np.abs(np.log(ref.rho / th))) > 0.01


def test_the_rate_bound_is_the_fastest_mode_at_the_fixed_point() -> None:
    s, c = _aligned(D=6)  # every mode learned by t = 1e3 (t_learn of mode 6: 96)
    ref = theory.exact_reference(s, c, [0.0, 1e3], method="RK45", rtol=1e-9)
    b = float(np.max(theory.mode_rate(s, np.arange(1, s.D + 1))))
    assert ref.rate[-1] == pytest.approx(b, rel=1e-5)
    assert ref.rate[0] == pytest.approx(s.lam_values[0] * s.S / s.gamma0**2)


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"coeffs": np.ones((3, 2))}, "coeffs"),  # wrong D
    ({"t": [-1.0]}, "t"),
    ({"t": [np.inf]}, "t"),
    ({"t": [[1.0]]}, "t"),
    ({"rtol": 0.0}, "rtol"),
    ({"method": "DOP853"}, "method"),
    ({"rtol": 0.1}, "rtol"),
])
def test_bad_input_is_one_line_naming_the_argument(kwargs: dict, name: str) -> None:
    s, c = _aligned(D=6)
    args = {"coeffs": c, "t": [1.0], **kwargs}
    t = args.pop("t")
    coeffs = args.pop("coeffs")
    with pytest.raises(ValueError, match=rf"^{name}\b") as info:
        theory.exact_reference(s, coeffs, t, **args)
    assert "\n" not in str(info.value)


def test_coefficients_of_another_system_are_refused() -> None:
    s, c = _aligned(D=6)
    with pytest.raises(ValueError, match="^coeffs must be the rows"):
        theory.exact_reference(s, 2.0 * c, [1.0])
    with pytest.raises(ValueError, match="^s must be an AlignedSetting"):
        theory.exact_reference(object(), c, [1.0])  # type: ignore[arg-type]
