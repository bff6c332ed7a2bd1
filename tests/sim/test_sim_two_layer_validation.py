"""Bad input to the two-layer engine fails early and clearly; divergence is reported."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from specdyn.settings import PowerLawSetting
from specdyn.sim import DivergenceError
from specdyn.sim.parameterization import (
    PARAMETERIZATIONS,
    Parameterization,
    get_parameterization,
)
from specdyn.sim.two_layer import train_two_layer

S = PowerLawSetting.paper(0.1, 2.0, D=8)
KW = dict(N=16, M=12, steps=5, progress=False, device="cpu")


def test_unknown_activation_lists_valid_names() -> None:
    with pytest.raises(ValueError, match=r"activation must be one of .*'relu'.*'tanh'"):
        train_two_layer(S, "swish", **KW)


def test_unknown_parameterization_lists_valid_names() -> None:
    with pytest.raises(ValueError, match="parameterization must be one of 'mean-field', 'mup', "
                                         "'ntk', 'standard'"):
        train_two_layer(S, "relu", parameterization="sp", **KW)


def test_unknown_optimizer_and_record() -> None:
    with pytest.raises(ValueError, match="optimizer must be one of 'gd', 'sgd', 'online'"):
        train_two_layer(S, optimizer="adam", **KW)
    with pytest.raises(ValueError, match="record must be one of"):
        train_two_layer(S, record=("preact", "kernel"), **KW)


def test_batch_size_rules() -> None:
    with pytest.raises(ValueError, match=r"^B must lie in \[1, M=12\]"):
        train_two_layer(S, optimizer="sgd", B=13, **KW)
    with pytest.raises(ValueError, match="^B must be None for optimizer='gd'"):
        train_two_layer(S, optimizer="gd", B=4, **KW)
    with pytest.raises(ValueError, match=r"^B \(the batch size\) is required for optimizer='sgd'"):
        train_two_layer(S, optimizer="sgd", **KW)
    with pytest.raises(ValueError, match="^B must be an integer >= 1"):
        train_two_layer(S, optimizer="online", B=0, **KW)


@pytest.mark.parametrize(("field", "value", "pattern"), [
    ("N", 0, "N must be an integer >= 1"),
    ("M", 2.5, "M must be an integer >= 1"),
    ("steps", 0, "steps must be an integer >= 1"),
    ("dt", -1.0, r"dt must be > 0"),
    ("seed", -1, "seed must be an integer >= 0"),
    ("checkpoints", [0, 9], r"checkpoints must be integer steps in \[0, steps=5\]"),
    ("dtype", torch.float16, "dtype must be float32 or float64"),
    ("precision", "fp8", "precision must be one of None, 'tf32', 'bf16'"),
    ("precision", "bf16", "needs a CUDA device"),
])
def test_bad_scalars_name_the_argument(field: str, value: object, pattern: str) -> None:
    kw = {**KW, field: value}
    with pytest.raises(ValueError, match=pattern):
        train_two_layer(S, "relu", **kw)


def test_setting_without_D_is_rejected() -> None:
    with pytest.raises(ValueError, match="setting.D must be set"):
        train_two_layer(PowerLawSetting.paper(0.1, 2.0), "relu", **KW)


def test_parameterization_table() -> None:
    # the documented multipliers (module table), at N = 100, gamma0 = 2
    want = {
        "mean-field": (1 / 200, 1, 1, 100, 100),
        "mup": (1, 1, 1 / 200, 100, 1 / 400),
        "ntk": (1 / 20, 1, 1, 1, 1),
        "standard": (1 / 2, 1, 1 / 10, 1 / 100, 1 / 100),
    }
    for name in PARAMETERIZATIONS:
        p = get_parameterization(name, 100, 2.0)
        got = (p.output_scale, p.w_std, p.a_std, p.lr_w, p.lr_a)
        np.testing.assert_allclose(got, want[name], rtol=1e-15, err_msg=name)
    custom = Parameterization("custom", 0.5, 1.0, 1.0, 3.0, 3.0)
    assert get_parameterization(custom, 100, 2.0) is custom


def test_divergence_names_step_and_suggests_smaller_dt() -> None:
    # linear net, mean-field: dt = 40 is far beyond the stability limit of mode 1
    with pytest.raises(DivergenceError, match=r"diverged at step \d+.*try dt=10") as info:
        train_two_layer(S, "relu", N=32, M=32, steps=400, dt=40.0, progress=False,
                        device="cpu", checkpoints=[0, 1, 2, 400])
    err = info.value
    assert 1 <= err.step < 400
    tr = err.record
    assert tr is not None and len(tr) >= 1
    assert all(np.isfinite(a).all() for a in tr.series.values())  # never NaNs in the record
    assert tr.steps.max() <= err.step
