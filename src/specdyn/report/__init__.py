"""One self-contained HTML report of a ``SpectrumTracker`` run (``specdyn report DIR``).

The page works offline with no server and stays small (well under 1 MB for a
few layers): plotly.js's basic bundle is embedded once, gzipped (the page unzips
it with the browser's ``DecompressionStream``), and each figure is a ``<div>``
with its data inline as JSON, numbers rounded to 5 significant digits, the
shared template written once. Without the vendored bundle the full plotly.js
of the ``plotly`` package is embedded instead (about 5 MB). It shows

1. an overview: the rank exponent ``a`` (``lambda_k ~ k^-a``) of every layer
   over steps, weights and activations side by side;
2. a table: per layer and kind, the matrix rule and shape, exponent with its
   95 % interval, outlier count and verdict at the last recorded step, and the
   verdict at the first one;
3. per layer and kind, two panels: exponent (with its interval) and the
   number of outliers above the Marchenko-Pastur edge over steps; and the
   spectrum at chosen steps on log axes, with the power-law fit (dashed, over
   its window) and the MP edge (dotted), one colour and one marker symbol per
   step, the eigenvalues drawn above the lines. Eigenvalues at or below the rank
   tolerance (numerical zeros, :func:`specdyn.measure.spectra.rank_tolerance`) are
   left off the log axis and counted in a note under the figure; they stay in the
   tracker's tables.

Every log axis labels whole decades, at least two (:func:`log_axis`). Scheduled
steps the tracker coalesced (not measured) are gaps in every curve over steps, under a
grey band, never bridged by a line. The figures are made in :mod:`specdyn.report._figures`.
"""

from __future__ import annotations

import base64
import fnmatch
import html
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn.report._figures import KINDS, gaps, layer_figure, log_axis, overview
from specdyn.runs.store import load_tracker

__all__ = ["log_axis", "select_steps", "write_report"]

_DIGITS = 5  # significant digits of every number in the page's figure data
#: plotly.js's basic bundle (scatter is all the page draws), gzipped; see _assets/README.md
PLOTLY_BUNDLE = Path(__file__).resolve().parents[1] / "_assets" / "plotly-basic.min.js.gz"


def select_steps(steps: Any, count: int = 5) -> list[int]:
    """``count`` recorded steps spread evenly in log(step + 1), always the first and last."""
    s = np.unique(np.asarray(steps, dtype=np.int64))
    if s.size <= count:
        return [int(x) for x in s]
    target = np.geomspace(s[0] + 1, s[-1] + 1, count) - 1
    picked = {int(s[np.argmin(np.abs(np.log1p(s) - np.log1p(t)))]) for t in target}
    return sorted(picked)


def _summary(df: pd.DataFrame, kind: str) -> pd.DataFrame:
    """One row per (step, layer) with the rank-0 summaries of ``kind`` as columns."""
    sub = df[(df["rank"] == 0) & df["quantity"].str.startswith(f"{kind}_")]
    if sub.empty:
        return pd.DataFrame()
    wide = sub.pivot_table(index=["layer", "step"], columns="quantity", values="value",
                           aggfunc="first")
    wide.columns = [str(c).removeprefix(f"{kind}_") for c in wide.columns]
    verdict = sub.groupby(["layer", "step"])["verdict"].first()
    return wide.join(verdict).reset_index()


def _table(summ: dict[str, pd.DataFrame], layers: dict[tuple[str, str], dict[str, Any]]) -> str:
    head = ("<tr><th>layer</th><th>kind</th><th>matrix / axes</th><th>first step: verdict</th>"
            "<th>last step</th><th>exponent a [95 % CI]</th><th>outliers</th>"
            "<th>verdict</th></tr>")
    body = []
    for kind in KINDS:
        s = summ[kind]
        if s.empty:
            continue
        for layer, g in s.groupby("layer", sort=False):
            g = g.sort_values("step")
            first, last = g.iloc[0], g.iloc[-1]
            info = layers.get((str(layer), kind), {})
            what = (info.get("rule", "") + (f" ({info['rows']} x {info['cols']})"
                                            if "rows" in info else "")) or info.get("axes", "")
            ex = "-"
            if pd.notna(last.get("exponent")):
                ex = (f"{last['exponent']:.3f} [{last.get('exponent_ci_low', np.nan):.3f}, "
                      f"{last.get('exponent_ci_high', np.nan):.3f}]")
            out = "-" if pd.isna(last.get("n_outliers")) else f"{int(last['n_outliers'])}"
            body.append(
                f"<tr><td><a href='#{html.escape(_anchor(str(layer), kind))}'>"
                f"{html.escape(str(layer))}</a></td><td>{kind}</td><td>{html.escape(what)}</td>"
                f"<td>{int(first['step'])}: {html.escape(str(first['verdict']))}</td>"
                f"<td>{int(last['step'])}</td><td>{ex}</td><td>{out}</td>"
                f"<td><b>{html.escape(str(last['verdict']))}</b></td></tr>")
    return f"<table>{head}{''.join(body)}</table>"


def _anchor(layer: str, kind: str) -> str:
    return f"{kind}-{layer}".replace(" ", "_")


def _compact(obj: Any) -> Any:
    """``obj`` as plain JSON values, floats rounded to ``_DIGITS`` significant digits
    (non-finite ones as null): the spectra's 17-digit floats were most of the data."""
    if isinstance(obj, dict):
        if set(obj) in ({"dtype", "bdata"}, {"dtype", "bdata", "shape"}):
            # plotly's typed array (base64 of the raw float64 or int bytes): back to numbers
            arr = np.frombuffer(base64.b64decode(obj["bdata"]), dtype=np.dtype(obj["dtype"]))
            if "shape" in obj:
                arr = arr.reshape([int(n) for n in str(obj["shape"]).split(",")])
            return _compact(arr)
        return {k: _compact(v) for k, v in obj.items()}
    if isinstance(obj, np.ndarray):
        return _compact(obj.tolist())
    if isinstance(obj, (list, tuple)):
        return [_compact(v) for v in obj]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        return float(f"{x:.{_DIGITS}g}") if math.isfinite(x) else None
    return obj


def _json_block(data: Any, **attrs: str) -> str:
    """A ``<script type="application/json">`` holding ``data`` (``</`` escaped)."""
    text = json.dumps(data, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    extra = "".join(f" {k.replace('_', '-')}='{html.escape(v)}'" for k, v in attrs.items())
    return f"<script type='application/json'{extra}>{text}</script>"


class _Figures:
    """The page's figures: a ``<div>`` and a JSON block each, the template written once."""

    def __init__(self) -> None:
        self.template: Any = None
        self.count = 0

    def html(self, fig: Any) -> str:
        spec = fig.to_plotly_json()
        layout = dict(spec.get("layout", {}))
        template = layout.pop("template", None)
        if template is not None and self.template is None:
            self.template = _compact(template)
        if template is not None and _compact(template) != self.template:
            layout["template"] = template  # not the shared one: kept with its figure
        self.count += 1
        div = f"specdyn-figure-{self.count}"
        height = int(layout.get("height") or 450)
        return (f"<div id='{div}' class='plotly-figure' style='height:{height}px'></div>"
                + _json_block({"data": _compact(spec.get("data", [])),
                               "layout": _compact(layout)}, data_figure=div))


# Unzips the embedded bundle (when plotly.js is not already on the page), then draws every
# figure; a browser without DecompressionStream gets a line saying so instead of blank space.
_LOADER = """
(async () => {
  const say = (msg) => { const p = document.getElementById("specdyn-status");
                         p.textContent = msg; p.style.display = "block"; };
  try {
    if (!window.Plotly) {
      const b64 = document.getElementById("specdyn-plotly").textContent.trim();
      const raw = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const stream = new Blob([raw]).stream().pipeThrough(new DecompressionStream("gzip"));
      const code = document.createElement("script");
      code.textContent = await new Response(stream).text();
      document.head.appendChild(code);
    }
    const node = document.getElementById("specdyn-template");
    const template = node ? JSON.parse(node.textContent) : null;
    for (const block of document.querySelectorAll("script[data-figure]")) {
      const fig = JSON.parse(block.textContent);
      if (template && !fig.layout.template) fig.layout.template = template;
      Plotly.newPlot(block.dataset.figure, fig.data, fig.layout,
                     {responsive: true, displaylogo: false});
    }
  } catch (err) {
    say("The figures could not be drawn (" + err + "): this page needs a browser " +
        "with DecompressionStream (Chrome 80, Firefox 113, Safari 16.4 or later).");
  }
})();
"""


def _plotly_script() -> str:
    """plotly.js for the page: the gzipped basic bundle (base64), else the full bundle."""
    if PLOTLY_BUNDLE.is_file():
        b64 = base64.b64encode(PLOTLY_BUNDLE.read_bytes()).decode("ascii")
        return f"<script type='application/octet-stream' id='specdyn-plotly'>{b64}</script>"
    from plotly.offline import get_plotlyjs

    return f"<script>{get_plotlyjs()}</script>"


_CSS = """
body { font-family: system-ui, sans-serif; margin: 24px; color: #222; max-width: 1500px; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 28px; }
h3 { font-size: 15px; margin: 18px 0 2px 0; }
.meta, .rule { color: #555; font-size: 13px; }
table { border-collapse: collapse; font-size: 13px; }
td, th { border: 1px solid #ddd; padding: 3px 7px; text-align: left; }
th { background: #f3f3f3; }
.verdict { background: #eef3ff; border-radius: 4px; padding: 1px 6px; font-size: 13px; }
.note { color: #555; font-size: 12px; margin: 0 0 6px 0; }
#specdyn-status { display: none; color: #a00; font-weight: bold; }
"""


def write_report(out: str | Path, path: str | Path | None = None, *,
                 steps: list[int] | None = None, layers: list[str] | None = None,
                 n_steps: int = 5) -> Path:
    """Write the HTML report of the tracker run in ``out``; returns its path.

    Parameters
    ----------
    out
        The folder given to ``SpectrumTracker(..., out=out)``.
    path
        Where to write (default ``out/report.html``).
    steps
        Steps whose spectra are drawn (default: ``n_steps`` recorded steps spread
        in log(step)); each must have been recorded.
    layers
        Name patterns (``fnmatch``) of the layers to show (default: all).
    n_steps
        How many steps to pick when ``steps`` is not given (1 to 10).
    """

    folder = Path(out)
    if not folder.is_dir():
        raise ValueError(f"report: {str(folder)!r} is not a folder")
    df, rec = load_tracker(folder)  # measured rows (no coalesced markers), record.json
    if df.empty:
        raise ValueError(f"report: {str(folder)!r} holds no recorded rows yet")
    if not 1 <= int(n_steps) <= 10:
        raise ValueError(f"n_steps must be in 1..10, got {n_steps}")
    recorded = sorted(int(s) for s in df["step"].unique())
    if steps is None:
        chosen = select_steps(recorded, int(n_steps))
    else:
        missing = sorted(set(steps) - set(recorded))
        if missing:
            raise ValueError(f"steps: {missing} were not recorded (recorded: {recorded[0]} .. "
                             f"{recorded[-1]}, {len(recorded)} steps)")
        chosen = sorted(set(int(s) for s in steps))
    if layers:
        keep = [n for n in df["layer"].unique() if any(fnmatch.fnmatchcase(n, p) for p in layers)]
        if not keep:
            raise ValueError(f"layers: {layers} match no recorded layer")
        df = df[df["layer"].isin(keep)]
    table = rec.get("layers") or {}
    info = {(w["layer"], "weight"): w for w in table.get("weights", [])}
    info.update({(a["layer"], "activation"): a for a in table.get("activations", [])})

    summ = {k: _summary(df, k) for k in KINDS}
    model = (rec.get("config") or {}).get("model", "?")
    coalesced = rec.get("coalesced") or []  # [step, the step whose record replaced it]
    skipped = gaps(recorded, [int(c[0]) for c in coalesced])
    dropped = (f" and {len(coalesced)} scheduled steps not recorded: coalesced into later "
               "records while the measurement was slower than training (grey bands in the "
               "figures; SpectrumTracker(..., policy='block') records every one)"
               if coalesced else "")
    figures = _Figures()
    parts = [f"<h1>specdyn spectral report: {html.escape(folder.name)}</h1>",
             "<p id='specdyn-status'></p>",
             "<p class='meta'>" + html.escape(
                 f"status {rec.get('status', '?')}; {len(recorded)} recorded steps "
                 f"({recorded[0]} .. {recorded[-1]}){dropped}; model {model}; "
                 f"created {rec.get('created', '?')}; specdyn {rec.get('specdyn_version', '?')}")
             + "</p>",
             "<p class='meta'>Rank exponent a: lambda_k ~ C k^-a, fitted on the plateau of the "
             "local exponent. Outliers: eigenvalues above the Marchenko-Pastur bulk edge, "
             "Tracy-Widom test. Weights: eigenvalues of W^T W / out for the out x in matrix; "
             "activations: of the centred covariance of the module output.</p>",
             "<h2>Exponents over training</h2>",
             figures.html(overview(summ, skipped)),
             "<h2>Layers at the last recorded step</h2>", _table(summ, info),
             "<h2>Per layer</h2>"]
    for kind in KINDS:
        s = summ[kind]
        if s.empty:
            continue
        eig_all = df[df["quantity"] == f"{kind}_eigenvalue"]
        for layer, g in s.groupby("layer", sort=False):
            last = g.sort_values("step").iloc[-1]
            meta = info.get((str(layer), kind), {})
            rule = meta.get("rule") or meta.get("axes") or ""
            size = max(int(meta.get("rows", 0) or 0), int(meta.get("cols", 0) or 0)) or None
            fig, note = layer_figure(str(layer), kind, g, eig_all[eig_all["layer"] == layer],
                                     chosen, size, skipped)
            parts.append(
                f"<h3 id='{html.escape(_anchor(str(layer), kind))}'>{html.escape(str(layer))} "
                f"({kind}) <span class='verdict'>{html.escape(str(last['verdict']))}</span>"
                f"</h3><div class='rule'>{html.escape(rule)}</div>" + figures.html(fig)
                + (f"<p class='note'>{html.escape(note)}</p>" if note else ""))
    if figures.template is not None:
        parts.append(_json_block(figures.template, id="specdyn-template"))
    page = ("<!DOCTYPE html><html><head><meta charset='utf-8'>"
            f"<title>specdyn report: {html.escape(folder.name)}</title>"
            f"<style>{_CSS}</style></head><body>"
            + "\n".join(parts) + _plotly_script() + f"<script>{_LOADER}</script></body></html>")
    dest = Path(path) if path is not None else folder / "report.html"
    from specdyn.io import atomic_open

    with atomic_open(dest, "w") as fh:
        fh.write(page)
    return dest
