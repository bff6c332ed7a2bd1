"""``specdyn report``: one offline HTML page from a streamed tracker run."""

from __future__ import annotations

import json
import re
import shutil

import pytest
import torch

from specdyn import io
from specdyn.cli import main
from specdyn.measure import SpectrumTracker, read_spectra
from specdyn.report import select_steps, write_report


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):  # noqa: ANN001, ANN201
    out = tmp_path_factory.mktemp("run")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Embedding(30, 24), torch.nn.Linear(24, 48),
                                torch.nn.GELU(), torch.nn.Linear(48, 30))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    tr = SpectrumTracker(model, out=out, n_boot=5, schedule=[0, 3, 10, 29], policy="block")
    for i in range(30):
        x = torch.randint(0, 30, (16, 12), generator=torch.Generator().manual_seed(i))
        loss = torch.nn.functional.cross_entropy(model(x).flatten(0, 1), x.flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
        tr.step()
    tr.close()
    return out


def test_select_steps_spreads_in_log_and_keeps_ends() -> None:
    assert select_steps([0, 1, 2]) == [0, 1, 2]
    got = select_steps(list(range(0, 1001)), 4)
    assert got[0] == 0 and got[-1] == 1000 and len(got) == 4
    assert got == [0, 9, 99, 1000]  # log(step + 1) evenly: 1, 10, 100, 1001


def test_report_is_self_contained_and_names_every_layer(run_dir) -> None:
    path = write_report(run_dir)
    page = path.read_text()
    assert page.startswith("<!DOCTYPE html>")
    # Offline: no external script or stylesheet, plotly embedded once.
    assert not re.search(r"<script[^>]+src=", page)
    assert "cdn.plot.ly" not in page
    assert page.count("class='plotly-figure'") >= 1 + 2 * 3  # overview + weights + activations
    df = read_spectra(run_dir)
    for layer in df["layer"].unique():
        assert f"id='weight-{layer}'" in page or f"id='activation-{layer}'" in page
    for verdict in df["verdict"].unique():
        assert verdict in page
    for label in ("rank exponent a", "rank k", "step + 1", "outliers", "MP edge"):
        assert label in page


def test_report_cli_and_bad_input(run_dir, tmp_path, capsys) -> None:
    dest = tmp_path / "r.html"
    assert main(["report", str(run_dir), "--out", str(dest), "--steps", "0,10",
                 "--layers", "1", "3"]) == 0
    assert dest.is_file() and "wrote" in capsys.readouterr().out
    assert main(["report", str(tmp_path / "nope")]) == 2
    assert "is not a folder" in capsys.readouterr().err
    assert main(["report", str(run_dir), "--steps", "7"]) == 2
    assert "[7] were not recorded" in capsys.readouterr().err
    assert main(["report", str(run_dir), "--layers", "blocks.*"]) == 2
    assert "match no recorded layer" in capsys.readouterr().err
    assert main(["report", str(tmp_path)]) == 2
    assert "no tracker rows" in capsys.readouterr().err


def test_overview_draws_a_layer_recorded_at_one_step(tmp_path) -> None:
    """Activations recorded at step 0 only (close() adds the last step's weights, no
    activations): the overview's activation panel shows them, as points, not an empty panel."""
    torch.manual_seed(0)
    # 8 outputs: a spectrum of 8 eigenvalues has an exponent (4 would be too few)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    X, y = torch.randn(64, 16), torch.randint(0, 8, (64,))
    with SpectrumTracker(model, out=tmp_path / "run", n_boot=5, schedule=[0],
                         policy="block") as tr:
        for _ in range(5):
            loss = torch.nn.functional.cross_entropy(model(X), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            tr.step()
    df = read_spectra(tmp_path / "run")
    acts = df[df["quantity"].str.startswith("activation")]
    assert sorted(acts["step"].unique()) == [0]  # the case: one point per activation layer
    page = write_report(tmp_path / "run").read_text()
    block = re.search(r"data-figure='specdyn-figure-1'>(.*?)</script>", page, flags=re.S)
    assert block, "no overview figure"
    overview = json.loads(block[1].replace("<\\/", "</"))
    traces = [t for t in overview["data"] if t["name"].endswith("(activation)")]
    assert traces and all(len(t["x"]) == 1 for t in traces)
    for t in overview["data"]:
        assert "markers" in t.get("mode", ""), t["name"]


def test_the_page_says_how_many_scheduled_steps_were_coalesced(run_dir, tmp_path) -> None:
    """A first run on CPU (the README's) records steps 0 and the last only, the rest
    coalesced while the worker measured step 0: the page says so, and how to get them."""
    assert "coalesced" not in write_report(run_dir, tmp_path / "a.html").read_text()
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    rec = io.read_json(copy / "record.json")
    io.write_json({**rec, "coalesced": [[1, 3], [2, 3]]}, copy / "record.json")
    page = write_report(copy).read_text()
    assert "4 recorded steps (0 .. 29) and 2 scheduled steps not recorded: coalesced" in page
    assert "policy=&#x27;block&#x27;" in page
