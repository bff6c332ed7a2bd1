"""``real-data``: a small run writes its tables and figures; its wrong models rewrite what
they say; the linked config rules; the study behind it and behind ``specdyn data``.

The claims themselves are judged on the quick run (``test_experiments_claims.py``,
``test_claims_mutation_all.py``, ``test_wrong_models.py``); the tiny config here is too
small for their seed-spread tolerances, so only their structure is checked.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from specdyn.experiments.real_data.claims import TABLES, read_tables, real_data_claims
from specdyn.experiments.real_data.config import (
    MODEL_TASKS,
    VALIDATION_TASKS,
    RealDataConfig,
    full_real_data,
    tiny,
)
from specdyn.experiments.real_data.run import TIMES
from specdyn.runs import run_experiment

#: real-data's claims (the tiny config runs every kind of run the quick one does).
N_CLAIMS = 40


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    out = tmp_path_factory.mktemp("real")
    res = run_experiment("real-data", out, config=dataclasses.replace(tiny(), figure=True))
    return out / "real-data", res.claims


def test_tiny_run_writes_its_tables_and_figures(tiny_run: tuple[Path, list]) -> None:
    folder, claims = tiny_run
    for name in (*TABLES.values(), TIMES, "real-data.png", "real-data_networks.png",
                 "real-data_anchors.png", "real-data_glance.png", "record.json"):
        assert (folder / name).exists(), name
    t = read_tables(folder)
    df = t["dynamics"]
    assert set(df.task) == {*VALIDATION_TASKS, *MODEL_TASKS, "relu-patches", "relu-blur", "net"}
    assert {"rho_sim", "rho_theory", "rho_reference", "spectrum_sim", "loss_theory",
            "rho_train", "rho_heldout", "spectrum_train", "spectrum_heldout",
            "spectrum_train_post2", "spectrum_heldout_pre2"} <= set(df.quantity)
    assert set(df.student[df.task == "relu-patches"]) == {"relu"}
    assert set(df.student[df.task == "net"]) == {"mlp", "cnn", "mlp-lazy", "linear"}
    assert set(df.regime[df.task == "blur"]) == {"IIIa", "IIIb", "lazy"}
    # the linear network trains on denoise; text-denoise gives theory and reference only
    assert "rho_sim" in set(df.quantity[df.task == "denoise"])
    assert "rho_sim" not in set(df.quantity[df.task == "text-denoise"])
    assert list(t["tasks"].task) == [*VALIDATION_TASKS, *MODEL_TASKS]
    assert np.isfinite(t["tasks"].error).all() and (t["tasks"].error >= 0).all()
    tk = t["tasks"].set_index("task")
    assert tk.loc["digits", "rank_C"] == 9 and tk.loc["digits", "window_exceeds_rank"]
    assert not tk.loc["denoise", "window_exceeds_rank"]
    assert set(t["widths"].regime) == {"lazy", "lazy-paper", "lazy-zero-output"}
    assert set(t["modes"].task) == {*VALIDATION_TASKS, *MODEL_TASKS}
    assert {"net", "net-heldout", "relu-patches", "relu-blur"} <= set(t["fits"].task)
    # the theory's regions: lazy runs stay in Region I, feature learning reaches Region III
    reg = t["regions"]
    assert set(reg.region[reg.regime == "lazy"]) == {"I"}
    fl = reg[(reg.regime == "IIIb") & (reg.task == "blur")]
    assert {"I", "II"} <= set(fl.region) and fl.region.str.startswith("III").any()
    # the trackers wrote their folders (train and held-out, both networks)
    for arch in ("mlp", "cnn"):
        for part in ("train", "heldout"):
            assert list((folder / "trackers" / arch / part / "rows").glob("*.parquet"))
    names = [c.name for c in claims]
    assert len(names) == len(set(names)) == N_CLAIMS
    assert all(c.source.strip() for c in claims)
    assert [c.key for c in claims if c.disputed] == ["relu-blur-end", "mlp-end"]
    assert [c.key for c in claims if c.full_only] == ["cnn-lazy-stays"]
    assert [c.key for c in claims if c.sanity] == ["start-at-alpha", "mlp-start"]
    rec = __import__("json").loads((folder / "record.json").read_text())
    assert "rank(C) = 9" in rec["summary"]["digits"]["warning"]
    assert len(rec["summary"]["lazy_relu"]["widths"]) == len(tiny().relu_widths)


def test_no_claim_text_carries_an_issue_number_or_a_commit(tiny_run: tuple[Path, list]
                                                          ) -> None:
    import re

    _, claims = tiny_run
    for c in claims:
        for text in (c.name, c.expected, c.note, c.disputed):
            assert not re.search(r"issue \d|#\d|\b[0-9a-f]{7,40}\b", text), (c.name, text)


def test_the_wrong_models_rewrite_what_they_say(tiny_run: tuple[Path, list],
                                                tmp_path: Path) -> None:
    """Each wrong model's table, read back: the never-learning network is its step 0,
    the lazy run stands in for feature learning, the reference is the aligned theory."""
    import shutil

    from specdyn.experiments.real_data.wrong import REAL_DATA_WRONG

    folder, _ = tiny_run
    real = read_tables(folder)["dynamics"]
    models = {m.name: m for m in REAL_DATA_WRONG}
    copies = {}
    for name, m in models.items():
        dst = tmp_path / name.replace(" ", "-")
        shutil.copytree(folder, dst, ignore=shutil.ignore_patterns("*.png", "*.pdf"))
        m.apply(tiny(), dst)
        t = read_tables(dst)
        copies[name] = t["widths"] if "zero-output" in name or "width" in name or \
            "fluctuation" in name else t["dynamics"]
    frozen = copies["never learns"]
    assert {m.kind for m in REAL_DATA_WRONG} >= {"is-theory", "fluctuation-size", "clock",
                                                  "convention", "attribution", "wrong-inputs"}
    sim = frozen[frozen.quantity == "rho_sim"]
    for _, g in sim.groupby(["task", "student", "regime", "k"]):
        assert g.value.nunique() == 1
    lazy = copies["lazy as feature learning"]
    sel = (lazy.task == "blur") & (lazy.quantity == "rho_sim") & (lazy.student == "linear")
    first = lazy[sel & (lazy.regime == "IIIb")].sort_values(["step", "k"]).value.to_numpy()
    ref_lazy = real[sel & (real.regime == "lazy")].sort_values(["step", "k"]).value.to_numpy()
    np.testing.assert_array_equal(first[:10], ref_lazy[:10])
    aligned = copies["aligned theory as exact reference"]
    keys = ["task", "student", "regime", "step", "k"]
    r = aligned[aligned.quantity == "rho_reference"].set_index(keys).value.sort_index()
    th = aligned[aligned.quantity == "rho_theory"].set_index(keys).value.sort_index()
    np.testing.assert_array_equal(r.to_numpy(), th.reindex(r.index).to_numpy())

    def values(df: pd.DataFrame, q: str, **sel: str) -> pd.Series:
        m = df.quantity == q
        for col, val in sel.items():
            m &= df[col] == val
        return df[m].set_index(["task", "regime", "step", "k"]).value.sort_index()

    same = copies["network is its reference"]
    sim = values(same, "rho_sim", student="linear")
    np.testing.assert_array_equal(sim.to_numpy(), values(same, "rho_reference",
                                                         student="linear").reindex(sim.index))
    held = copies["held-out is training"]
    for arch in ("mlp", "cnn"):
        np.testing.assert_array_equal(values(held, "loss_heldout", student=arch).to_numpy(),
                                      values(held, "loss_train", student=arch).to_numpy())
    # the clock: at a middle checkpoint the wrong table holds the real value at 2t
    fast = copies["clock off by 2"]
    g = real[(real.task == "patches") & (real.regime == "feature-learning")
             & (real.student == "linear") & (real.quantity == "rho_sim") & (real.k == 3)]
    g = g.sort_values("t")
    t, v = g.t.to_numpy(), g.value.to_numpy()
    i = len(t) // 2
    want = np.interp(np.log(2 * t[i]), np.log(t[1:]), v[1:])
    got = fast[fast.index == g.index[i]].value.iloc[0]
    assert got == pytest.approx(want, rel=1e-12)
    zero = copies["zero-output control is the random start"]
    w = read_tables(folder)["widths"]
    z = zero[(zero.regime == "lazy-zero-output") & (zero.quantity == "rho_sim")]
    rnd = w[(w.regime == "lazy") & (w.quantity == "rho_sim")]
    np.testing.assert_array_equal(np.sort(z.value.to_numpy()), np.sort(rnd.value.to_numpy()))


def test_claims_are_not_held_on_nan_tables(tiny_run: tuple[Path, list]) -> None:
    """A table of NaN (a crashed measurement written out) holds no expected claim."""
    folder, _ = tiny_run
    t = read_tables(folder)
    t["dynamics"] = t["dynamics"].assign(value=np.nan)
    t["tasks"] = t["tasks"].assign(error=np.nan, output_overlap=np.nan)
    t["widths"] = t["widths"].assign(value=np.nan)
    held = [c.name for c in real_data_claims(t, tiny()) if c.held and not c.partner]
    assert held == ["blurred target: beta clearly above 0"] or held == [], held


def test_full_bands_judge_only_a_run_at_full_size(tiny_run: tuple[Path, list]) -> None:
    """A --full band names a claim the experiment makes, is read only at --full's size, and
    every claim it applies to says so (rule and revision) at every size."""
    from specdyn.experiments.real_data.full_bands import FULL_BANDS, at_size, is_full_size
    from specdyn.runs.claims import OWN, REVISED_HOW, within

    full = full_real_data()
    assert is_full_size(full) and is_full_size(dataclasses.replace(full, seed=3, figure=False))
    assert not is_full_size(RealDataConfig()) and not is_full_size(tiny())
    assert not is_full_size(dataclasses.replace(full, net_steps=5000))
    assert FULL_BANDS and set(FULL_BANDS) <= {c.key for c in tiny_run[1]}
    assert all(lo < hi and how in REVISED_HOW for lo, hi, how in FULL_BANDS.values())
    c = within("MLP transient", 0.28, 0.13, 0.20, source=OWN, key="mlp-transient-size")
    (quick,), (at_full,) = at_size([c], RealDataConfig()), at_size([c], full)
    lo, hi, _ = FULL_BANDS["mlp-transient-size"]
    assert not quick.held and quick.expected == "in [0.13, 0.2]"
    assert at_full.held and at_full.expected == f"in [{lo:g}, {hi:g}]" and lo <= 0.28 <= hi
    for d in (quick, at_full):
        assert "--full seeds 1-3" in d.rule and "--full seed 0" in d.revised and d.revised_how
        assert d.measured == 0.28 and d.note == c.note
    nan = within("MLP transient", float("nan"), 0.13, 0.20, source=OWN, key="mlp-transient-size")
    (j,) = at_size([nan], full)
    assert not j.held and "nan" in j.note
    other = within("x", 0.5, 0.0, 1.0, source=OWN)
    assert at_size([other], full) == [other]


@pytest.mark.parametrize(("changes", "start"), [
    ({"patches_M": 1001}, "patches_M"),
    ({"net_M": 1001}, "net_M"),
    ({"patch": 6, "kmax_patches": 36}, "kmax_patches"),
    ({"kmax_digits": 61}, "kmax_digits"),
])
def test_linked_config_rules(changes: dict, start: str) -> None:
    with pytest.raises(ValueError, match=rf"^{start}\b") as info:
        RealDataConfig(**changes)
    assert "\n" not in str(info.value)


# ------------------------------------------------------------------------------ the study


def _synthetic(rotated: bool, D: int = 12, M: int = 300, seed: int = 0
               ) -> tuple[np.ndarray, np.ndarray]:
    from specdyn.data import PowerLawTeacher
    from specdyn.settings import PowerLawSetting

    s = PowerLawSetting.paper(0.1, 2.0, alpha=1.2, beta=0.6).with_D(D)
    t = PowerLawTeacher(s, rotation="misaligned" if rotated else None, seed=seed)
    return t.sample(M, seed=seed)


def test_compare_modes_puts_a_network_beside_theory_and_reference() -> None:
    """One call for the per-mode comparison: its columns are the network's lambda_k eta_k,
    theory.rho and the exact reference at the trajectory's times."""
    from specdyn import theory
    from specdyn.data import DataTeacher, aligned_setting
    from specdyn.data import decompose_data as decompose
    from specdyn.experiments.real_data import compare_modes
    from specdyn.sim import train_linear

    X, Y = _synthetic(rotated=True)
    dec = decompose(X, Y)
    s = aligned_setting(dec, 0.1, 1.0, 2.0 / np.sqrt(dec.mu[0]))
    traj = train_linear(s, 256, None, 40, dt=0.2, teacher=DataTeacher(s, dec, X, Y),
                        checkpoints=5)
    df = compare_modes(traj, s, dec.coeffs)
    assert len(df) == len(traj) * dec.D
    last = df[df.step == traj.steps[-1]].sort_values("k")
    np.testing.assert_allclose(last.rho_network, dec.lam * traj.diagonals["eta"][-1])
    np.testing.assert_allclose(last.rho_theory,
                               theory.rho(s, np.arange(1, dec.D + 1), traj.times[-1]))
    ref = theory.exact_reference(s, dec.coeffs, traj.times).rho[-1]
    np.testing.assert_allclose(last.rho_reference, ref, rtol=1e-12)
    np.testing.assert_allclose(last.log_reference_theory,
                               np.log(ref / last.rho_theory.to_numpy()), rtol=1e-12)
    assert "rho_reference" not in compare_modes(traj, s).columns


def test_the_suggested_step_trains_where_dt_1_diverged() -> None:
    """Y = X A (a random linear map, misaligned): the step the study suggests keeps GD
    stable where the dt = 1 of an earlier docs example diverged (at step 4)."""
    from specdyn.data import DataTeacher, aligned_setting
    from specdyn.data import decompose_data as decompose
    from specdyn.sim import DivergenceError, train_linear
    from specdyn.study import REGIMES, study

    rng = np.random.default_rng(0)
    X = rng.standard_normal((500, 20)) * np.arange(1, 21) ** -0.6 * 3.0
    Y = X @ rng.standard_normal((20, 5))
    st = study(X, Y, kmax=8, regimes={"feature-learning": REGIMES["feature-learning"]})
    m = st.regimes["feature-learning"][1]["linear"]
    dec = decompose(X, Y)
    s = aligned_setting(dec, 0.1, 1.0, m.setting.gamma0)
    teacher = DataTeacher(s, dec, X, Y)
    with pytest.raises(DivergenceError):
        train_linear(s, 256, None, 200, dt=1.0, teacher=teacher, checkpoints=4)
    traj = train_linear(s, 256, None, 2000, dt=m.dt, teacher=teacher, checkpoints=4)
    assert np.all(np.isfinite(traj.loss)) and traj.loss[-1] < traj.loss[0]


def test_study_of_an_aligned_teacher_has_no_misalignment_effect() -> None:
    from specdyn.study import study

    X, Y = _synthetic(rotated=False, M=2000)
    s = study(X, Y, kmax=8).summary()
    assert s["output_overlap"] < 0.1  # sampling noise of M = 2000 samples only
    fl = s["regimes"]["feature-learning"]["linear"]
    assert fl["misalignment_effect"] < 0.02
    assert s["regimes"]["lazy"]["linear"]["regime_eq33"] == "lazy"
    r = study(*_synthetic(rotated=True, M=2000), kmax=8).summary()
    assert r["output_overlap"] > 3 * s["output_overlap"]
    assert r["regimes"]["feature-learning"]["linear"]["misalignment_effect"] > \
        3 * fl["misalignment_effect"]


def test_study_refuses_bad_arguments_before_any_work() -> None:
    from specdyn.settings import Regime
    from specdyn.study import study

    X, Y = _synthetic(rotated=False)
    for kwargs, start in (({"kmax": 2}, "kmax"), ({"checkpoints": 2}, "checkpoints"),
                          ({"train": ("tanh",)}, "train"), ({"t_factor": 0.5}, "t_factor"),
                          ({"regimes": {"x": (0.1, 2.0)}}, "regimes")):
        with pytest.raises(ValueError, match=rf"^{start}\b"):
            study(X, Y, **kwargs)
    with pytest.raises(ValueError, match="^sigma_w"):
        Regime(0.0, 1.0)
    # a target with nothing along the top input mode: gamma0 = ratio S / theta_1 is undefined
    rng = np.random.default_rng(0)
    q, _ = np.linalg.qr(rng.standard_normal((200, 6)))
    q, _ = np.linalg.qr(q - q.mean(axis=0))
    Xo = q * np.arange(6, 0, -1)
    with pytest.raises(ValueError, match=r"^Y: the target has no component along the top"):
        study(Xo, Xo[:, 1:3], kmax=4)


def test_study_tables_are_tidy_and_finite() -> None:
    from specdyn.study import study

    X, Y = _synthetic(rotated=True)
    st = study(X, Y, kmax=6, checkpoints=6, train=("linear",), N=128)
    dyn = st.dynamics_table()
    assert list(dyn.columns) == ["regime", "student", "step", "t", "k", "quantity", "value"]
    assert np.isfinite(dyn.value).all()
    assert set(dyn.quantity) >= {"rho_theory", "rho_reference", "rho_sim", "loss_sim"}
    modes = st.modes_table()
    assert modes.overlap.notna().sum() == 6
    assert isinstance(st.summary()["alpha"], float)
    assert pd.api.types.is_string_dtype(st.regions_table().region)
