"""The tracker's open registry of layer types, and its constructor's config.

Oracles: a user's own module type, registered with :func:`specdyn.measure.register_layer`,
is tracked without editing specdyn: its weight matrix's recorded spectrum is the
eigenvalues of ``W^T W / out`` recomputed with numpy from the module's parameters, its
output is an activation site by default, and the parameters the matrix is made of are not
listed again. A subclass of a registered type is read as its base; the built-in types go
through the same registry. ``SpectrumTracker(model, config=TrackerConfig(...))`` and the
keyword call make the same tracker.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from specdyn.measure import (
    LayerType,
    SpectrumTracker,
    TrackerConfig,
    WeightMatrix,
    register_layer,
)
from specdyn.measure.layers import activation_sites, layer_type, weight_matrices


class LowRank(torch.nn.Module):
    """A user's layer: ``y = x (U V)^T`` with ``U`` (``out x r``), ``V`` (``r x in``)."""

    def __init__(self, d_in: int, d_out: int, r: int) -> None:
        super().__init__()
        self.U = torch.nn.Parameter(torch.randn(d_out, r) / r**0.5)
        self.V = torch.nn.Parameter(torch.randn(r, d_in) / d_in**0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ (self.U @ self.V).T


def _low_rank(name: str, mod: Any, heads: bool) -> list[WeightMatrix]:
    return [WeightMatrix.of(name, name, "low_rank", "U V (out x in)",
                            lambda: (mod.U @ mod.V).detach(), params=("U", "V"))]


def _model() -> torch.nn.Sequential:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), LowRank(16, 12, 3),
                               torch.nn.Linear(12, 4))


def test_a_users_module_type_is_tracked_once_registered() -> None:
    model = _model()
    # unregistered: its two matrices are plain parameters, its output is not measured
    before = {m.name: m.kind for m in weight_matrices(model)}
    assert before["2.U"] == before["2.V"] == "parameter"
    assert "2" not in {s.name for s in activation_sites(model)}

    entry = register_layer(LowRank, _low_rank, kind="low_rank")
    assert isinstance(entry, LayerType) and layer_type(model[2]) is entry
    mats = {m.name: m for m in weight_matrices(model)}
    assert "2.U" not in mats and "2.V" not in mats  # made into the product, listed once
    assert mats["2"].kind == "low_rank" and mats["2"].shape == (12, 16)
    assert "2" in {s.name for s in activation_sites(model)}

    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    tracker = SpectrumTracker(model, schedule=[0, 3], n_boot=0, background=False)
    for _ in range(4):
        loss = model(torch.randn(32, 8)).square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        tracker.step()
    tracker.close()
    df = tracker.table()
    got = df[(df.step == 3) & (df.layer == "2") & (df.quantity == "weight_eigenvalue")]
    W = (model[2].U @ model[2].V).detach().double().numpy()  # the weights after step 3
    want = np.sort(np.linalg.eigvalsh(W.T @ W / W.shape[0]))[::-1]
    values = got.sort_values("rank")["value"].to_numpy()
    np.testing.assert_allclose(values[:3], want[:3], rtol=1e-5)  # rank 3: three nonzero
    assert np.all(np.abs(values[3:]) <= 1e-5 * values[0])
    table = {row["layer"]: row for row in tracker.layer_table()["weights"]}
    assert table["2"]["kind"] == "low_rank" and table["2"]["rule"] == "U V (out x in)"
    acts = df[(df.layer == "2") & (df.quantity == "activation_eigenvalue")]
    assert len(acts) > 0  # its output, measured by default


def test_registration_replaces_and_subclasses_read_as_their_base() -> None:
    class MyLinear(torch.nn.Linear):
        pass

    lin = MyLinear(5, 3)
    assert layer_type(lin) is layer_type(torch.nn.Linear(5, 3))  # the built-in's entry
    assert [m.kind for m in weight_matrices(lin)] == ["linear"]
    first = register_layer(MyLinear, _rows_only, kind="rows", activations=False)
    assert layer_type(lin) is first and [m.shape for m in weight_matrices(lin)] == [(1, 5)]
    assert activation_sites(torch.nn.Sequential(lin)) == []  # not measured by default
    second = register_layer(MyLinear, _rows_only, kind="rows-again")
    assert layer_type(lin) is second  # the newer registration
    with pytest.raises(ValueError, match="^feature_axis must be -1 or 1"):
        register_layer(MyLinear, _rows_only, kind="x", feature_axis=2)
    with pytest.raises(ValueError, match="^matrices must be a callable"):
        register_layer(MyLinear, "weight", kind="x")  # type: ignore[arg-type]


def _rows_only(name: str, mod: Any, heads: bool) -> list[WeightMatrix]:
    return [WeightMatrix.of(name, name, "rows", "first row", lambda: mod.weight.detach()[:1],
                            params=("weight",))]


def test_the_config_call_is_the_keyword_call() -> None:
    model, x = _model(), torch.randn(16, 8)
    kw = dict(schedule=[0], n_boot=0, background=False, top=5)
    tables = []
    for make in (lambda: SpectrumTracker(model, **kw),
                 lambda: SpectrumTracker(model, config=TrackerConfig(**kw))):
        tr = make()
        model(x)
        tr.step()
        tr.close()
        tables.append((tr.config, tr.settings(), tr.table()))
    (ca, sa, ta), (cb, sb, tb) = tables
    assert ca == cb and sa == sb and ta.equals(tb) and len(ta) > 0
    with pytest.raises(ValueError, match="^config: give the tracker's settings either"):
        SpectrumTracker(model, config=TrackerConfig(), n_boot=3)
    with pytest.raises(ValueError, match="^n_bot is not a setting of SpectrumTracker"):
        SpectrumTracker(model, n_bot=3)
    with pytest.raises(ValueError, match=r"^alpha must lie in \(0.0, 1.0\)"):
        TrackerConfig(alpha=1.5)
    with pytest.raises(ValueError, match="^weights and activations cannot both be False"):
        SpectrumTracker(model, weights=False, activations=False)
