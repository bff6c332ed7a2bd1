"""The report page of a 3-layer MLP run: small, interactive offline, no numerical zeros
on a log axis (issue 34: it was 5.0 MB, with y axes spanning 17 decades)."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from specdyn import io
from specdyn.measure import SpectrumTracker, read_spectra
from specdyn.measure.spectra import rank_tolerance
from specdyn.report import PLOTLY_BUNDLE, write_report

MB = 1_000_000


@pytest.fixture(scope="module")
def mlp_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """64 -> 256 -> 256 -> 10 ReLU MLP, 200 SGD steps on batches of 64 drawn with replacement:
    the 256-wide activations of 64 samples are rank deficient (numerical zeros)."""
    out = tmp_path_factory.mktemp("mlp")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    X, y = torch.randn(512, 64), torch.randint(0, 10, (512,))
    with SpectrumTracker(model, out=out, n_boot=5) as tr:
        for i in range(200):
            idx = torch.randint(0, 512, (64,), generator=torch.Generator().manual_seed(i))
            loss = torch.nn.functional.cross_entropy(model(X[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            tr.step()
    return out


def _figures(page: str) -> dict[tuple[str, str], dict]:
    """(kind, layer) -> the figure's JSON, for every per-layer section of the page."""
    found = {}
    for m in re.finditer(r"<h3 id='(weight|activation)-([^']+)'>.*?<script type='application/"
                         r"json' data-figure='[^']+'>(.*?)</script>", page, flags=re.S):
        found[(m[1], m[2])] = json.loads(m[3].replace("<\\/", "</"))
    return found


def test_report_of_a_3_layer_mlp_is_under_1_mb_and_interactive(mlp_run: Path) -> None:
    page_path = write_report(mlp_run)
    assert page_path.stat().st_size < MB, f"{page_path.stat().st_size / MB:.2f} MB"
    page = page_path.read_text()
    # offline: plotly.js is on the page (gzipped, base64), no script comes from elsewhere
    assert not re.search(r"<script[^>]+src=", page)
    bundle = re.search(r"id='specdyn-plotly'>([A-Za-z0-9+/=]+)</script>", page)
    assert bundle, "the plotly.js bundle is not embedded"
    import base64

    js = gzip.decompress(base64.b64decode(bundle[1])).decode()
    assert "newPlot" in js and js.startswith("/**\n* plotly.js")
    # every figure is drawn by Plotly.newPlot from its own data (zoom, hover, legend toggles)
    figs = _figures(page)
    assert len(figs) >= 2 * 3 and page.count("class='plotly-figure'") == len(figs) + 1
    assert "Plotly.newPlot" in page
    for spec in figs.values():
        assert spec["data"] and all("x" in t and "y" in t for t in spec["data"])


def test_no_eigenvalue_at_or_below_the_rank_tolerance_on_a_log_axis(mlp_run: Path) -> None:
    page = write_report(mlp_run).read_text()
    df = read_spectra(mlp_run)
    rec = io.read_json(mlp_run / "record.json")["layers"]
    sizes = {(w["layer"], "weight"): max(w["rows"], w["cols"]) for w in rec["weights"]}
    hidden_total = 0
    for (kind, layer), spec in _figures(page).items():
        layout = spec["layout"]
        for trace in spec["data"]:
            axis = "yaxis" + trace.get("yaxis", "y")[1:]
            if layout.get(axis, {}).get("type") != "log":
                continue
            y = np.asarray([v for v in trace["y"] if v is not None], dtype=np.float64)
            assert (y > 0).all(), (layer, kind, trace.get("name"))
            m = re.fullmatch(r"step (\d+)", trace.get("name", ""))
            if not m:
                continue
            e = df[(df["layer"] == layer) & (df["quantity"] == f"{kind}_eigenvalue")
                   & (df["step"] == int(m[1]))]["value"].to_numpy()
            tol = rank_tolerance(float(e.max()), sizes.get((layer, kind), e.size))
            assert y.min() > tol, (layer, kind, m[1], y.min(), tol)
            hidden_total += int(np.sum(e <= tol))
        # decades spanned by the spectrum panel: the zeros (1e-15 of the largest) are gone
        spectra = [np.asarray(t["y"], dtype=np.float64) for t in spec["data"]
                   if re.fullmatch(r"step \d+", t.get("name", ""))]
        if spectra:
            allv = np.concatenate(spectra)
            assert np.log10(allv.max() / allv.min()) < 12, (layer, kind)
    # the run has numerical zeros (64 samples of 256-wide activations), and the page says so
    assert hidden_total > 0
    assert "at or below the rank tolerance" in page


def test_the_vendored_bundle_matches_the_plotly_package() -> None:
    """The basic bundle draws the figures plotly.py writes: same major version."""
    from plotly.offline import get_plotlyjs_version

    head = gzip.decompress(PLOTLY_BUNDLE.read_bytes())[:200].decode()
    vendored = re.search(r"v(\d+)\.(\d+)\.(\d+)", head)
    assert vendored, head
    assert vendored[1] == get_plotlyjs_version().split(".")[0], (
        f"vendored plotly.js {vendored[0]} vs the plotly package's "
        f"{get_plotlyjs_version()}: refresh it (src/specdyn/_assets/README.md)")


def test_log_axes_label_whole_decades_and_eigenvalues_lie_above_the_lines(
        mlp_run: Path) -> None:
    """The screenshot showed log axes labelled at one decade and small 2 and 5 ticks,
    the markers of steps 0, 3 and 16 on top of each other, and the top eigenvalues under
    the dotted MP-edge lines."""
    page = write_report(mlp_run).read_text()
    figs = _figures(page)
    most = 0
    for (kind, layer), spec in figs.items():
        layout = spec["layout"]
        for name, axis in layout.items():
            if not (name.startswith(("xaxis", "yaxis")) and axis.get("type") == "log"):
                continue
            lo, hi = axis["range"]
            # at least two whole decades labelled, every one of them up to 8
            assert np.floor(hi) - np.ceil(lo) + 1 >= 2, (layer, kind, name, axis["range"])
            assert axis["dtick"] == max(1, int(np.ceil((hi - lo) / 8))), (layer, name)
            assert axis["exponentformat"] == "power"
        traces = spec["data"]
        steps = [t for t in traces if re.fullmatch(r"step \d+", t.get("name", ""))]
        symbols = [t["marker"]["symbol"] for t in steps]
        assert len(set(symbols)) == len(symbols) >= 1, (layer, kind, symbols)
        most = max(most, len(symbols))
        # the eigenvalues are drawn last, over the fits and MP edges of every step
        first_point = traces.index(steps[0])
        assert all(t.get("mode") == "markers" for t in traces[first_point:]), (layer, kind)
        assert any("MP edge" in t.get("name", "") for t in traces[:first_point]) or \
            kind == "activation", (layer, kind)
    assert most >= 2  # a panel of several steps, each its own symbol
