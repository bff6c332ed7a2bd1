"""finite-size-theory's wrong models: a theory of the finite-size corrections that a
referee would fear (:class:`~specdyn.runs.WrongModel`), written into a run's own tables in
place of the project's (the simulated moments stay as measured)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from specdyn.runs.registry import WrongModel
from specdyn.runs.wrong import edit_table, table_edit

_TABLE = "finite-size-theory.parquet"


def _plain_linear(cfg: Any, folder: Path) -> None:
    """The nonlinear students compared with the plain linear theory: c1 = E[phi'(h)] not
    folded into gamma0."""
    eff = folder / "finite-size-theory_effective.parquet"
    if eff.exists():
        edit_table(folder, eff.name,
                   lambda df: df.assign(slope_effective=df["slope_linear"]))


FINITE_SIZE_THEORY_WRONG = (
    WrongModel("no finite-size shift", "the infinite-size theory: no finite-N or finite-M "
               "shift of log rho_k", table_edit(_TABLE, lambda df: df.assign(shift_theory=0.0)),
               catches=("where bias > 5 SE: |bias - shift| in SE",)),
    WrongModel("std x1.25", "the predicted std of log rho_k 25 % too large",
               table_edit(_TABLE, lambda df: df.assign(std_theory=1.25 * df["std_theory"])),
               catches=("std of log rho_k within 3 sampling SE (fraction of valid cells)",)),
    WrongModel("plain linear theory", "the nonlinear students against the plain linear "
               "theory (c1 = E[phi'(h)] not folded into gamma0)", _plain_linear),
)
