"""simulate's wrong models: what the run would have written under a plausible mistake
(:class:`~specdyn.runs.WrongModel`), built from its own table ``simulate.parquet``.

The simulated spectrum (``preact`` rows) is rewritten and its fitted exponent
(``alpha_fit`` rows) computed again from it, as the run computes it
(:func:`specdyn.measure.exponents.fit_exponents` over ``kmin..kmax``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn.measure.exponents import fit_exponents
from specdyn.runs.registry import WrongModel
from specdyn.runs.wrong import edit_table


def _rewrite(change: Any) -> Any:
    """A wrong model changing the simulated spectrum ``preact[t, k]`` (times increasing) by
    ``change(t, spectra)``; the fitted exponent follows."""
    def apply(cfg: Any, folder: Path) -> None:
        def table(df: pd.DataFrame) -> pd.DataFrame:
            pre = df["quantity"] == "preact"
            wide = df[pre].pivot(index="t", columns="k", values="value").sort_index()
            new = change(wide.index.to_numpy(dtype=float), wide.to_numpy(dtype=float))
            long = pd.DataFrame(new, index=wide.index, columns=wide.columns).stack()
            key = pd.MultiIndex.from_arrays([df.loc[pre, "t"], df.loc[pre, "k"]])
            df.loc[pre, "value"] = long.reindex(key).to_numpy()
            fit = dict(zip(wide.index.to_numpy(dtype=float),
                           fit_exponents(new, cfg.kmin, cfg.kmax), strict=True))
            a = df["quantity"] == "alpha_fit"
            df.loc[a, "value"] = df.loc[a, "t"].map(fit).to_numpy()
            return df

        edit_table(folder, "simulate.parquet", table)
    return apply


def _jump(t: np.ndarray, rho: np.ndarray) -> np.ndarray:
    out = rho.copy()
    out[1:] = rho[-1]
    return out


SIMULATE_WRONG = (
    WrongModel("jump at the first checkpoint", "the spectrum (and its fitted exponent) jumps "
               "to its final value at the first checkpoint and stays there",
               _rewrite(_jump),
               catches=("every checkpoint: |fitted exponent: simulation - theory|",)),
    WrongModel("sim x1.25", "every simulated eigenvalue 1.25 times too large (a scale error "
               "of the spectrum's normalisation)",
               _rewrite(lambda t, rho: 1.25 * rho),
               catches=("end: median |log rho_sim/rho_theory|",)),
)
