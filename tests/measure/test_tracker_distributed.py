"""SpectrumTracker under torch.distributed: two gloo processes on the CPU.

One run of ``tracker_ranks_probe.py`` (two ranks, three scenarios, under a timeout so
that a hang fails instead of stalling the suite) is read by every test here.

Oracles: the single-process tracker on the same weights and the same global batch
(the probe saves the weights after every step, so the oracle never depends on the
order of a reduction), numpy's SVD of the full weights (gathered by the probe, not
the tracker), and the bare DDP run's final weights (bit for bit). Tolerances: the
spectra are float64 on both sides and differ by the order of summation only (the
ranks' Grams summed, against one Gram): 1e-9 of the largest eigenvalue.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from specdyn.measure import SpectrumTracker, read_spectra

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import tracker_ranks_probe as probe  # noqa: E402

#: the whole probe (two process starts, three scenarios) on two busy cores
TIMEOUT_S = 420


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ranks")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(HERE.parents[1] / "src"), os.environ.get("PYTHONPATH", "")]))
    try:
        res = subprocess.run([sys.executable, str(HERE / "tracker_ranks_probe.py"), str(out)],
                             env=env, capture_output=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired as err:
        pytest.fail(f"the two-rank run did not finish in {TIMEOUT_S} s (a hang): "
                    f"{(err.stderr or b'').decode()[-3000:]}")
    assert res.returncode == 0, res.stderr.decode()[-4000:]
    return out


def _facts(runs: Path, name: str, rank: int) -> dict:
    return json.loads((runs / f"{name}-rank{rank}.json").read_text())


def _reference(model: torch.nn.Module, saved: list[dict], inputs, steps: list[int],
               **kw) -> pd.DataFrame:
    """The single-process tracker on the same weights and global batches: the forward
    pass of step s with the weights before it, the record with the weights after it."""
    tr = SpectrumTracker(model, schedule=steps, background=False, n_boot=0,
                         precision="float64", **kw)
    for s in range(max(steps) + 1):
        model.load_state_dict(saved[s])
        with torch.no_grad():
            model(inputs(s))
        model.load_state_dict(saved[s + 1])
        tr.step()
    df = tr.table()
    tr.close(final=False)
    return df


def _compare(got: pd.DataFrame, ref: pd.DataFrame) -> int:
    """Every eigenvalue and summary of ``ref`` in ``got``; returns the spectra compared."""
    key = ["step", "layer", "quantity", "rank"]
    m = ref.merge(got, on=key, how="left", suffixes=("_ref", ""), indicator=True)
    assert (m["_merge"] == "both").all(), m[m["_merge"] != "both"][key].head()
    eig = m[m.quantity.str.endswith("_eigenvalue")]
    top = eig.groupby(["step", "layer", "quantity"])["value_ref"].transform("max")
    assert np.all(np.abs(eig.value - eig.value_ref) <= 1e-9 * top)
    summ = m[m["rank"] == 0]
    assert np.allclose(summ.value, summ.value_ref, rtol=1e-6, atol=1e-9)
    assert (m.verdict == m.verdict_ref).all()
    return eig.groupby(["step", "layer", "quantity"]).ngroups


def test_ddp_spectra_equal_the_single_process_spectra_of_the_global_batch(runs) -> None:
    weights = torch.load(runs / "ddp-weights.pt", weights_only=True)
    ref = _reference(probe.mlp(), weights, lambda s: probe.batch(s)[0], [0, 2, 5],
                     max_samples=probe.GLOBAL_ROWS)
    got = read_spectra(runs / "ddp")
    assert sorted(got.step.unique()) == [0, 2, 5]
    assert _compare(got, ref) == 3 * 6                   # 3 weights + 3 outputs, 3 steps
    # the global batch, not one rank's half: 96 rows
    assert set(got[got.quantity == "activation_samples"].value) == {96.0}
    assert len(got) == len(ref)


def test_ddp_activation_spectrum_against_numpy(runs) -> None:
    """Layer "2"'s output at step 2 from the weights before that step, in numpy."""
    w = torch.load(runs / "ddp-weights.pt", weights_only=True)[2]
    x = probe.batch(2)[0].numpy()
    h = np.tanh(x @ w["0.weight"].numpy().T + w["0.bias"].numpy())
    y = h @ w["2.weight"].numpy().T + w["2.bias"].numpy()
    yc = y - y.mean(axis=0)
    ref = np.sort(np.linalg.eigvalsh(yc.T @ yc / len(y)))[::-1]
    df = read_spectra(runs / "ddp")
    got = df[(df.step == 2) & (df.layer == "2") & (df.quantity == "activation_eigenvalue")]
    assert np.max(np.abs(got.sort_values("rank").value.to_numpy() - ref)) < 1e-10 * ref[0]


def test_ddp_training_is_bit_identical_with_and_without_the_tracker(runs) -> None:
    tracked = torch.load(runs / "ddp-weights.pt", weights_only=True)[-1]
    bare = torch.load(runs / "ddp-bare.pt", weights_only=True)
    assert tracked.keys() == bare.keys()
    assert all(torch.equal(tracked[k], bare[k]) for k in bare)


def test_one_writer_one_folder(runs) -> None:
    r0, r1 = _facts(runs, "ddp", 0), _facts(runs, "ddp", 1)
    assert r0["out"] == str(runs / "ddp") and r0["rows"] > 0 and r0["world"] == 2
    assert r1["out"] is None and r1["rows"] == 0          # rank 1 measured, wrote nothing
    assert r0["n_records"] == r1["n_records"] == 3        # the same records on both
    assert sorted(p.name for p in (runs / "ddp").iterdir()) == ["record.json", "rows"]
    rec = json.loads((runs / "ddp" / "record.json").read_text())
    assert rec["status"] == "finished" and rec["ranks"]["world"] == 2
    assert rec["ranks"]["rows_per_rank"] == probe.GLOBAL_ROWS // 2


def test_fsdp_weight_spectra_from_the_shards_equal_the_full_weights(runs) -> None:
    """Every tracked matrix of the sharded model (Q/K/V and head blocks of in_proj_weight,
    the transposed embedding, uneven Linear shards) against numpy's SVD of the full
    weight, and the module outputs against the single-process tracker."""
    weights = torch.load(runs / "fsdp-weights.pt", weights_only=True)
    df = read_spectra(runs / "fsdp")
    assert sorted(df.step.unique()) == [0, 1, 3]
    sharded = json.loads((runs / "fsdp" / "record.json").read_text())["ranks"]["sharded"]
    model = probe.attend()
    tr = SpectrumTracker(model, heads=True, background=False, n_boot=0)
    names = [m.name for m in tr.matrices]
    tr.close(final=False)
    assert sharded == names and len(names) == 3 + 3 * 3 + 4   # every matrix from shards
    checked = 0
    for step in (0, 1, 3):
        model.load_state_dict(weights[step + 1])
        for m in tr.matrices:
            W = m.get().numpy()
            ref = np.linalg.svd(W, compute_uv=False) ** 2 / W.shape[0]
            got = df[(df.step == step) & (df.layer == m.name)
                     & (df.quantity == "weight_eigenvalue")].sort_values("rank").value
            assert got.size == ref.size, m.name
            assert np.max(np.abs(got.to_numpy() - ref)) < 1e-9 * ref[0], (step, m.name)
            checked += 1
    assert checked == 3 * len(names)
    ref = _reference(probe.attend(), weights, probe.tokens, [0, 1, 3], heads=True,
                     max_samples=96, weights=False)
    assert _compare(df[df.quantity.str.startswith("activation")], ref) == 3 * 4
    assert set(df[df.quantity == "activation_samples"].value) == {96.0}   # 8 x 12 tokens


def test_a_rank_closing_early_leaves_no_collective_waiting(runs) -> None:
    """Rank 1 closes after 4 steps while rank 0 trains 8: rank 1 answers rank 0's four
    later records (with no rows: rank 0's 48 alone), and nobody hangs."""
    df = read_spectra(runs / "early")
    assert sorted(df.step.unique()) == list(range(8))
    rows = df[(df.quantity == "activation_samples") & (df.layer == "0")].set_index("step")
    assert rows.value.to_dict() == {s: 96.0 if s < 4 else 48.0 for s in range(8)}
    assert _facts(runs, "early", 1)["n_records"] == 4
    # close()'s unscheduled final records (rank 1 at step 3, rank 0 at step 7): dropped,
    # with the reason in rank 0's record
    df = read_spectra(runs / "early-final")
    assert sorted(df.step.unique()) == [0, 2]
    why = [k for k in _facts(runs, "early-final", 0)["skipped"] if k[2] == "record"]
    assert len(why) == 1 and "closed at different steps" in why[0][3]
    assert "rank 0 at step 7" in why[0][3] and "rank 1 at step 3" in why[0][3]


def test_coalescing_is_agreed_by_the_ranks(runs) -> None:
    """Rank 0's worker slowed, no room for waiting copies: both ranks drop the same
    steps (else a collective would pair different records), none of the first decade."""
    r0, r1 = _facts(runs, "slow", 0), _facts(runs, "slow", 1)
    assert r0["coalesced"] == r1["coalesced"] and r0["n_records"] == r1["n_records"]
    dropped = sorted(s for s, _ in r0["coalesced"])
    assert dropped and min(dropped) >= 10
    steps = sorted(read_spectra(runs / "slow").step.unique())
    assert steps[:10] == list(range(10)) and steps[-1] == 29
    assert sorted(steps + dropped) == list(range(30))
    rec = json.loads((runs / "slow" / "record.json").read_text())
    assert sorted(s for s, _ in rec["coalesced"]) == dropped
    # the same with rank 1 closed after 15 steps: it answers rank 0's later records,
    # coalescing included (rank 0's agreement with a closed rank), and nobody hangs
    df = read_spectra(runs / "slow-early")
    steps = sorted(df.step.unique())
    r0 = _facts(runs, "slow-early", 0)
    assert steps[:10] == list(range(10)) and steps[-1] == 29
    assert sorted(steps + [s for s, _ in r0["coalesced"]]) == list(range(30))
    rows = df[(df.quantity == "activation_samples") & (df.layer == "0")].set_index("step")
    assert all(v == (96.0 if s < 15 else 48.0) for s, v in rows.value.items())


def test_top_eigenvalues_of_wide_layers_by_reduced_subspace_iteration(runs) -> None:
    """Layers above max_dense (20): the top 6 eigenvalues of every sharded weight and module
    output, against numpy on the full weights and the global batch (randomized subspace
    iteration, 4 power iterations: within 1 %, the bound the one-process path is held to)."""
    w = torch.load(runs / "topk-weights.pt", weights_only=True)
    model = probe.attend()
    model.load_state_dict(w)
    tr = SpectrumTracker(model, schedule=[0], background=False, n_boot=0, precision="float64")
    with torch.no_grad():
        model(probe.tokens(0))
    tr.step()
    full = tr.table()                                  # whole spectra, one process
    tr.close(final=False)
    df = read_spectra(runs / "topk")
    checked = 0
    for (layer, q), g in df[df.quantity.str.endswith("_eigenvalue")].groupby(
            ["layer", "quantity"]):
        ref = full[(full.layer == layer) & (full.quantity == q)].sort_values("rank").value
        got = g.sort_values("rank").value.to_numpy()
        assert got.size <= 6 and got.size >= 4, (layer, q)
        assert got == pytest.approx(ref.to_numpy()[:got.size], rel=1e-2), (layer, q)
        checked += 1
    assert checked == 7 + 4                             # 7 weights, 4 module outputs
    skipped = df[(df["rank"] == 0) & df.quantity.str.endswith("_mp_sigma2")]
    assert set(skipped.layer) == {"down"}               # no MP fit of a top-k spectrum
