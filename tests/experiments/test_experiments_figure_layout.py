"""Every experiment's figure, and ``analyze --plot``'s, checked by a program for clutter.

Each registered experiment runs at a tiny size (same panels, titles, legends and
colour bars as the quick default; fewer steps, smaller matrices) and every
figure it saves goes through :func:`specdyn.plot.check.figure_problems` on its
way out of :func:`~specdyn.plot.save_figure`: overlapping text (tick labels,
axis labels, titles, colour-bar labels, annotations, legend boxes; within and
across panels), text off the figure, non-integer ticks on a colour bar of
integer data, and panels titled with only their letter. An experiment that has
no tiny size listed here runs at its quick default, so a newly registered one is
covered (if slowly) until it gets one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib.figure import Figure

from specdyn.plot import new_figure
from specdyn.plot.check import figure_problems, on_save
from specdyn.runs import builtin_names, get
from specdyn.runs.registry import replace_config

#: Per experiment, the config fields that make it tiny. Sizes that shape the figure
#: (numbers of curves, panels, grid cells, legend entries) stay at the quick default.
TINY: dict[str, dict[str, Any]] = {
    "fig2": dict(D=16, N=64, M=64, steps=200, checkpoints=12),
    "fig3": dict(n_k=40, n_t=40),
    "fig5": dict(n_k=40, n_t=40),
    "fig6": dict(n_k=40, n_t=40),
    "fig4": dict(D=16, N=64, M=48, steps=40, kmin=2, kmax=10, checkpoints=8, device="cpu"),
    "simulate": dict(D=16, N=64, steps=200, checkpoints=10, kmax=8),
    "regime-map": dict(D=16, N=None, steps=200, checkpoints=10, kmax=8, executor="inline",
                       theory_resolution=24),
    "finite-size": dict(D=8, t_max=50.0, checkpoints=6, n_seeds=1),
    "bbp-escape": dict(P=80, D=160),
    "trainability": dict(P=8, D=8, B=2, steps=40, replicas=2, two_layer_N=8, two_layer_D=4,
                         two_layer_steps=30),
    "lr-transfer": dict(N_values=(16, 32, 64), steps=5, escape_steps=5, D=4, escape_seeds=1),
    "propagation-of-chaos": dict(reference_N=64, replicas=1, M=16, steps=6, seeds=(0, 1),
                                 even_checkpoints=3),
    "sparse-atoms": dict(N=20, M=32, steps=10, even_checkpoints=3),
    "error-budget": dict(N=16, steps=4, M_values=(8, 16), population_size=64, M_test=64,
                         chaos_M=16, chaos_N_values=(4, 8), chaos_reference_N=64,
                         chaos_steps=4, K_max=3, hermite_degree=4),
    "two-step-phase": dict(N=120, D=120, M=120),
    "batch-reuse": dict(N=120, D=120, M=120, seeds=1),
    "finite-size-theory": dict(D=8, seeds=4, nl_D=16, nl_N=64, nl_M=64, nl_steps=30, kmin=2,
                               kmax=8),
}


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
def test_experiment_figure_has_no_clutter(tmp_path: Path, name: str) -> None:
    exp = get(name)
    cfg = replace_config(exp.config(), **TINY.get(name, {}))
    found = _checked_saves(lambda: exp.run(cfg, tmp_path))
    assert found, f"{name} saved no figure through specdyn.plot.save_figure"
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
