"""Wrong models fed to an experiment's claims: does any expected claim catch them?

A claim that holds for a plausible wrong answer is not a result. Each experiment
registers, beside its claims, the wrong answers a referee would try
(:class:`~specdyn.runs.registry.WrongModel`: a neighbouring equation, a 25 % scale
error, a transient at the wrong height, a shifted boundary, a network that never
learns). :func:`judge` copies a finished folder, lets the wrong model rewrite the copy's
tables, checks the experiment's claims on it (:func:`~specdyn.runs.recheck_claims`)
and reports which expected claims caught it, with the measured value on the real and on
the wrong table.

    from specdyn.runs import wrong
    for verdict in wrong.judge_all("specdyn-out/fig2"):
        print(verdict.model.name, [c.key for c in verdict.caught])
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from specdyn import io
from specdyn.runs import store
from specdyn.runs.claims import Claim, fmt_measured
from specdyn.runs.config import config_from_dict
from specdyn.runs.registry import WrongModel, get
from specdyn.runs.run import recheck_claims

__all__ = ["Caught", "WrongVerdict", "edit_table", "expected_claims", "judge", "judge_all",
           "patched", "table_edit"]


def edit_table(folder: Path, table: str, change: Callable[[pd.DataFrame], pd.DataFrame]) -> None:
    """Read ``folder/table`` (Parquet), apply ``change`` and write it back in place.

    The one way a :class:`~specdyn.runs.registry.WrongModel` rewrites a table; ``change``
    returns the wrong model's table (a copy: the input may be changed freely).
    """
    path = Path(folder) / table
    df = pd.read_parquet(path)
    out = change(df.copy())
    if not isinstance(out, pd.DataFrame):
        raise TypeError(f"edit_table({table!r}): change must return a DataFrame, "
                        f"got {type(out).__name__}")
    out.to_parquet(path)


def table_edit(tables: str | tuple[str, ...],
               change: Callable[[pd.DataFrame], pd.DataFrame]) -> Callable[[Any, Path], None]:
    """A :class:`~specdyn.runs.registry.WrongModel`'s ``apply`` that rewrites each of
    ``tables`` by ``change`` (:func:`edit_table`), for a wrong model that needs nothing but
    the table itself (not the config, not another table)::

        WrongModel("change x0.75", "...", table_edit(
            "regime-map.parquet", lambda df: df.assign(delta_alpha=0.75 * df["delta_alpha"])))
    """
    names = (tables,) if isinstance(tables, str) else tuple(tables)

    def apply(cfg: Any, folder: Path) -> None:
        for name in names:
            edit_table(folder, name, change)
    return apply


@contextlib.contextmanager
def patched(targets: Mapping[str, Any]) -> Iterator[None]:
    """Replace each dotted ``target`` by its object while the block runs
    (:func:`unittest.mock.patch`; :attr:`~specdyn.runs.registry.WrongModel.patch`).

    A target names the attribute where the caller looks it up: a claims module that did
    ``from specdyn.theory import rho`` reads ``"specdyn.experiments.x.claims.rho"``.
    """
    from unittest import mock

    with contextlib.ExitStack() as stack:
        for target, obj in targets.items():
            stack.enter_context(mock.patch(target, obj))
        yield


def expected_claims(claims: list[Claim]) -> list[Claim]:
    """The claims expected to hold at this size: not disputed, not ``full_only``, not
    sanity checks (those hold for any input and catch nothing)."""
    return [c for c in claims if not c.disputed and not c.full_only and not c.sanity]


@dataclass(frozen=True)
class Caught:
    """An expected claim that held on the real run and failed on the wrong model."""

    key: str
    name: str
    expected: str
    real: Any
    wrong: Any

    def line(self) -> str:
        """``name: measured R on the run, W on the wrong model (expected E)``."""
        return (f"{self.name}: {fmt_measured(self.real)} on the run, {fmt_measured(self.wrong)} "
                f"on the wrong model (expected {self.expected})")


@dataclass(frozen=True)
class WrongVerdict:
    """The claims of one experiment on its real folder and on one wrong model of it."""

    experiment: str
    model: WrongModel
    real: list[Claim]
    wrong: list[Claim]

    @property
    def judged(self) -> list[Claim]:
        """The expected claims that held on the real run (only these can catch anything)."""
        return [c for c in expected_claims(self.real) if c.held]

    @property
    def caught(self) -> list[Caught]:
        """The judged claims that fail on the wrong model, in the experiment's order."""
        wrong = {c.key: c for c in self.wrong}
        out = []
        for c in self.judged:
            w = wrong.get(c.key)
            if w is None or not w.held:
                out.append(Caught(c.key, c.name, c.expected, c.measured,
                                  None if w is None else w.measured))
        return out

    @property
    def missed(self) -> list[str]:
        """Keys named in the model's ``catches`` that did not catch it."""
        got = {c.key for c in self.caught}
        return [k for k in self.model.catches if k not in got]


def _config_of(folder: Path) -> tuple[str, Any]:
    rec = io.read_json(folder / store.RECORD)
    data = dict(rec["config"])
    name = data.pop("experiment")
    return name, config_from_dict(get(name).config_cls, data, source=str(folder / store.RECORD))


def judge(folder: str | Path, model: WrongModel, *, real: list[Claim] | None = None,
          scratch: str | Path | None = None) -> WrongVerdict:
    """The claims of the finished experiment ``folder`` on a copy rewritten by ``model``.

    ``real``: the claims of ``folder`` itself, when already computed. The copy is made
    under ``scratch`` (a temporary folder by default; figures are not copied) and removed.
    """
    folder = Path(folder)
    name, cfg = _config_of(folder)
    if real is None:
        real = recheck_claims(folder)
    with tempfile.TemporaryDirectory(dir=scratch, prefix="wrong-") as tmp:
        dst = Path(tmp) / folder.name
        shutil.copytree(folder, dst, ignore=shutil.ignore_patterns("*.png", "*.pdf"))
        with patched(model.patch):
            model.apply(cfg, dst)
            wrong = recheck_claims(dst)
    return WrongVerdict(name, model, real, wrong)


def judge_all(folder: str | Path, *, scratch: str | Path | None = None) -> list[WrongVerdict]:
    """:func:`judge` of every wrong model the folder's experiment registered."""
    folder = Path(folder)
    name, _ = _config_of(folder)
    real = recheck_claims(folder)
    return [judge(folder, m, real=real, scratch=scratch) for m in get(name).wrong_models]
