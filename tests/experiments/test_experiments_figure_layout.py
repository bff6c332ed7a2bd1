"""Every experiment's figure, and ``analyze --plot``'s, checked by a program for clutter.

Every figure that each registered experiment's quick run saves (the session's one quick
run, ``quick_runs.py``, shared with the quick-claims and mutation tests) went through
:func:`specdyn.plot.check.figure_problems` on its way out of
:func:`~specdyn.plot.save_figure`: overlapping text (tick labels, axis labels, titles,
colour-bar labels, annotations, legend boxes; within and across panels), text off the
figure, text inside a panel that a line or a marker crosses, a band or hatched area no
legend entry or text explains, non-integer ticks on a colour bar of integer data, panels
titled with only their letter, a figure beyond 4 : 1, and a commit hash or an issue
number in any text. The figures checked are those a user of ``specdyn reproduce`` gets.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib.figure import Figure
from quick_runs import QuickRuns

from specdyn import io
from specdyn.plot import new_figure
from specdyn.plot.check import figure_problems, on_save
from specdyn.runs import builtin_names


def _checked_saves(run: Any) -> list[tuple[str, list[str]]]:
    """``run()`` with every saved figure checked: (file stem, its problems) per figure."""
    found: list[tuple[str, list[str]]] = []

    def hook(fig: Figure, stem: Path) -> None:
        found.append((stem.name, figure_problems(fig)))

    with on_save(hook):
        run()
    return found


def _report(found: list[tuple[str, list[str]]]) -> str:
    return "\n".join(f"{stem}: {p}" for stem, probs in found for p in probs)


@pytest.mark.parametrize("name", builtin_names())
def test_experiment_figure_has_no_clutter(quick_run: QuickRuns, name: str) -> None:
    run = quick_run(name)
    found = run.figures
    assert found, f"{name} saved no figure through specdyn.plot.save_figure"
    # every figure the run wrote was checked
    written = {Path(f).stem for f in io.read_json(run.folder / "record.json")["figures"]}
    assert written <= {stem for stem, _ in found}, (name, written)
    assert not any(probs for _, probs in found), _report(found)


def test_analyze_plot_has_no_clutter(tmp_path: Path) -> None:
    from specdyn.cli import main

    rng = np.random.default_rng(2)
    W = rng.standard_normal((300, 150))
    W[:, 0] *= 4.0
    path = tmp_path / "w.npz"
    # a spiked bulk, a power law, and an output layer of 5 eigenvalues: its rank axis spans
    # under a decade, where matplotlib's minor labels "3x10^0", "4x10^0" ran together
    np.savez(path, w=W, v=rng.standard_normal((120, 40)) @ np.diag(np.arange(1, 41) ** -1.0),
             out=rng.standard_normal((5, 64)))
    found = _checked_saves(lambda: main(["analyze", str(path), "--plot",
                                         "--out", str(tmp_path / "fig")]))
    assert len(found) == 1 and not found[0][1], _report(found)


# --- the checker itself finds what it is for -------------------------------------------


def _two_panels() -> tuple[Figure, list]:
    fig, axes = new_figure(2, 1)
    for i, ax in enumerate(axes):
        ax.plot([1, 2], [1, 2])
        ax.set_title(f"panel {i}")
    return fig, axes


def test_checker_passes_a_clean_figure() -> None:
    fig, _ = _two_panels()
    assert figure_problems(fig) == []


def test_checker_finds_overlapping_text_and_legends() -> None:
    fig, (ax, _) = _two_panels()
    ax.plot([1, 2], [2, 1], label="a long legend entry")
    ax.legend(loc="upper left")
    ax.text(1.05, 1.95, "a label on the legend")
    probs = figure_problems(fig)
    assert any("legend" in p and "a label on the legend" in p for p in probs), probs


def test_checker_finds_crowded_tick_labels_and_text_off_the_figure() -> None:
    fig, (ax, _) = _two_panels()
    ax.set_xticks(np.linspace(1, 2, 40))
    ax.text(2.5, 1.5, "far outside the figure", transform=ax.transAxes)
    probs = figure_problems(fig)
    assert any("x tick label" in p and "overlaps" in p for p in probs), probs
    assert any("runs off the figure" in p for p in probs), probs


def test_checker_finds_half_integer_ticks_on_an_integer_colour_bar() -> None:
    from matplotlib.colors import BoundaryNorm

    fig, (ax, _) = _two_panels()
    counts = np.array([[0, 1], [2, 3]])
    mesh = ax.pcolormesh(counts, norm=BoundaryNorm(np.arange(-0.5, 4.5), 256))
    cb = fig.colorbar(mesh, ax=ax)
    cb.set_ticks([-0.5, 0.5, 1.5, 2.5, 3.5])
    probs = figure_problems(fig)
    assert any("ticks between integers" in p for p in probs), probs


def test_checker_finds_a_panel_titled_only_with_its_letter() -> None:
    fig, (_, ax) = _two_panels()
    ax.set_title("(b)")
    probs = figure_problems(fig)
    assert any("no title beyond its letter" in p for p in probs), probs


def test_checker_finds_text_on_a_line_and_a_marker() -> None:
    fig, (ax, bx) = _two_panels()
    ax.text(1.5, 1.5, "on the line", ha="center", va="center")        # y = x passes here
    ax.text(1.2, 1.8, "beside it", ha="center", va="center")          # clear of y = x
    bx.plot([1.5], [1.2], "o", label="a point")
    bx.text(1.5, 1.2, "on the point", ha="center", va="center")
    probs = figure_problems(fig)
    assert any("'on the line' is crossed by a line" in p for p in probs), probs
    assert any("'on the point' is crossed by 'a point' (marker)" in p for p in probs), probs
    assert not any("beside it" in p for p in probs), probs
    # a label's box counts: the text clear of the line, its padded box not
    fig, (ax, _) = _two_panels()
    ax.text(1.5, 1.43, "IIIa", ha="center", va="center", bbox=dict(pad=6))
    assert any("'IIIa' is crossed" in p for p in figure_problems(fig))


def test_checker_finds_an_unexplained_band_or_hatch_and_accepts_a_named_one() -> None:
    from matplotlib.patches import Rectangle

    fig, (ax, bx) = _two_panels()
    ax.axvspan(1.2, 1.4, color="0.9")
    bx.fill_between([1, 2], [1, 1.5], [1.2, 1.9], alpha=0.3)
    bx.add_patch(Rectangle((1.1, 1.6), 0.2, 0.2, fill=False, hatch="///"))
    probs = figure_problems(fig)
    assert sum("is explained by no legend entry or text" in p for p in probs) == 3, probs
    fig, (ax, bx) = _two_panels()
    ax.axvspan(1.2, 1.4, color="0.9", label="fit window")
    ax.legend(loc="lower right")
    bx.fill_between([1, 2], [1, 1.5], [1.2, 1.9], alpha=0.3, label="95 % band")
    bx.text(1.05, 1.8, "95 % band", fontsize=8)
    bx.bar([1.5], [1.0], width=0.1)  # a data bar is not a band
    assert figure_problems(fig) == []


def test_checker_finds_a_figure_beyond_4_to_1_and_project_history() -> None:
    fig, axes = new_figure(5, 1, width=4.3, height=3.9)  # two-step-phase was 5.5 : 1
    for i, ax in enumerate(axes):
        ax.set_title(f"panel {i}")
    axes[0].set_xlabel("t (revised in b6f669e, issue 30)")
    probs = figure_problems(fig)
    assert any("aspect 5.5 : 1, beyond 4 : 1" in p for p in probs), probs
    assert sum("names project history" in p for p in probs) == 2, probs
