"""Monitor the spectra of a small character-level transformer while it trains, then report.

The text is Python's own documentation (``pydoc_data.topics``, shipped with
Python: no download). The model is a causal transformer: 4 layers, 4 heads,
width 128, context 64, built from ``torch.nn.TransformerEncoder``. One line
attaches specdyn::

    tracker = SpectrumTracker(model, out=OUT)     # then tracker.step() each step

At log-spaced steps (10 a decade, and the last one: ``steps=`` gives the run
length; see :class:`specdyn.Schedule`) the tracker copies every weight matrix (token and
position embeddings, attention Q, K, V split from ``in_proj_weight``, the
output projection, both feed-forward matrices, the head) and the outputs of
the attention and linear modules (tokens are samples), and a background thread
computes their spectra, power-law fits, Marchenko-Pastur outliers and verdicts,
streaming rows to ``OUT/rows/*.parquet``. Then ``write_report`` (the same as
``specdyn report OUT``) writes ``OUT/report.html``.

Run:  python examples/monitor_a_transformer.py [--small] [--steps N] [--out DIR]
``--small`` (or SPECDYN_EXAMPLES_SMALL=1) trains a few steps, for CI. Training never
waits for the measurement (the default ``policy="coalesce"``): the copies of records
that fall due while the worker is busy queue up to ``max_pending_bytes``, so every
scheduled step is measured unless the measurement falls behind for good; then a record
replaces the newest waiting ones (never the first decade), ``close()`` says how many,
and the counts printed and the report's are of measured steps only.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import torch

from specdyn.measure import SpectrumTracker, read_spectra
from specdyn.report import write_report


def load_text() -> tuple[torch.Tensor, list[str]]:
    """Python's bundled documentation topics as one tensor of character ids."""
    from pydoc_data.topics import topics

    text = "\n".join(topics[k] for k in sorted(topics))
    chars = sorted(set(text))
    lookup = {c: i for i, c in enumerate(chars)}
    return torch.tensor([lookup[c] for c in text], dtype=torch.long), chars


class CharTransformer(torch.nn.Module):
    """Causal character model: embeddings, ``layers`` pre-norm encoder blocks, a linear head."""

    def __init__(self, vocab: int, width: int = 128, heads: int = 4, layers: int = 4,
                 context: int = 64) -> None:
        super().__init__()
        self.tok = torch.nn.Embedding(vocab, width)
        self.pos = torch.nn.Embedding(context, width)
        block = torch.nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.0,
                                                 batch_first=True, norm_first=True)
        self.blocks = torch.nn.TransformerEncoder(block, layers, enable_nested_tensor=False)
        self.norm = torch.nn.LayerNorm(width)
        self.head = torch.nn.Linear(width, vocab)
        self.register_buffer("mask", torch.nn.Transformer.generate_square_subsequent_mask(
            context), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        T = x.shape[1]
        h = self.tok(x) + self.pos(torch.arange(T, device=x.device))
        h = self.blocks(h, mask=self.mask[:T, :T], is_causal=True)
        return self.head(self.norm(h))


def batches(data: torch.Tensor, batch: int, context: int, seed: int):  # noqa: ANN201
    """Random windows of ``context + 1`` characters, reproducible from ``seed``."""
    gen = torch.Generator().manual_seed(seed)
    while True:
        start = torch.randint(0, data.numel() - context - 1, (batch,), generator=gen)
        w = torch.stack([data[s:s + context + 1] for s in start.tolist()])
        yield w[:, :-1], w[:, 1:]


def training_steps(model: torch.nn.Module, data: torch.Tensor, *, batch: int = 32,
                   context: int = 64, seed: int = 0, device: str = "cpu",
                   lr: float = 3e-3):  # noqa: ANN201
    """AdamW on next-character cross-entropy, one update per ``next()``; yields the loss."""
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    for x, y in batches(data, batch, context, seed):
        x, y = x.to(device), y.to(device)
        loss = torch.nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        yield float(loss.detach())


def train(model: torch.nn.Module, data: torch.Tensor, steps: int, *, batch: int = 32,
          context: int = 64, tracker: SpectrumTracker | None = None, seed: int = 0,
          device: str = "cpu", lr: float = 3e-3) -> list[float]:
    """``steps`` updates of ``training_steps``; ``tracker.step()`` after each update."""
    losses = []
    it = training_steps(model, data, batch=batch, context=context, seed=seed, device=device,
                        lr=lr)
    for _ in range(steps):
        losses.append(next(it))
        if tracker is not None:
            tracker.step()
    return losses


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--small", action="store_true", help="smoke-test size")
    ap.add_argument("--steps", type=int, default=None, help="training steps (default 1000)")
    ap.add_argument("--out", type=Path, default=Path("runs/monitor_a_transformer"),
                    help="folder for the spectra and report.html")
    args = ap.parse_args()
    small = args.small or os.environ.get("SPECDYN_EXAMPLES_SMALL") == "1"
    steps = args.steps or (20 if small else 1000)
    batch = 8 if small else 32
    device = "cuda" if torch.cuda.is_available() else "cpu"

    data, chars = load_text()
    print(f"text: {data.numel():,} characters of pydoc_data.topics, vocabulary {len(chars)}")
    torch.manual_seed(0)
    model = CharTransformer(len(chars)).to(device)
    print(f"model: {sum(p.numel() for p in model.parameters()):,} parameters on {device}")

    # default schedule Schedule.per_decade(10); steps= adds the last step (index steps - 1)
    tracker = SpectrumTracker(model, out=args.out, steps=steps - 1, overwrite=True,
                              max_samples=1024, n_boot=50)  # then tracker.step() each update
    print(f"tracking {len(tracker.matrices)} weight matrices and {len(tracker.sites)} "
          "module outputs, e.g. " + ", ".join(m.name for m in tracker.matrices[2:6]))
    t0 = time.perf_counter()
    losses = train(model, data, steps, batch=batch, tracker=tracker, device=device)
    tracker.close()
    print(f"{steps} steps in {time.perf_counter() - t0:.1f} s; loss {np.mean(losses[:10]):.3f}"
          f" -> {np.mean(losses[-10:]):.3f} (log {len(chars)} = {np.log(len(chars)):.3f})")

    df = read_spectra(args.out)  # measured steps only; the coalesced ones: record.json
    coalesced = tracker.coalesced
    last = int(df["step"].max())
    w = df[(df.step == last) & (df.quantity == "weight_exponent")]
    measured = df["step"].nunique()
    print(f"\n{measured} recorded steps of {measured + len(coalesced)} scheduled"
          + (f" ({len(coalesced)} coalesced while the measurement was behind)"
             if coalesced else "")
          + f", {len(df):,} rows; weights at step {last}:")
    print(w[["layer", "value", "verdict"]].rename(columns={"value": "exponent a"})
          .to_string(index=False, float_format="%.3f"))
    if tracker.skipped:
        print(f"\n{len(tracker.skipped)} summaries skipped (reasons in record.json), e.g. "
              f"{tracker.skipped[0]}")
    path = write_report(args.out)
    print(f"\nreport: {path} (open it in a browser; works offline)")


if __name__ == "__main__":
    main()
