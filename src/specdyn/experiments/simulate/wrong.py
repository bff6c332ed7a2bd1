"""simulate's wrong models: what the run would have written under a plausible mistake
(:class:`~specdyn.runs.WrongModel`), built from its own table ``simulate.parquet``.

The simulated spectrum (``preact`` rows) is rewritten and its fitted exponent
(``alpha_fit`` rows) computed again from it, as the run computes it
(:func:`specdyn.measure.exponents.fit_exponents` over ``kmin..kmax``); a mistake of the
simulation changes the replicas' ``t = 0`` spectra (``simulate_init.parquet``) as it
changes the run's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn import theory
from specdyn.experiments.linear_figures.wrong import slowed, theory_models
from specdyn.experiments.simulate.claims import INIT_TABLE
from specdyn.measure.exponents import fit_exponents
from specdyn.runs.registry import WrongModel
from specdyn.runs.wrong import edit_table

_DIAGONALS = ("xi", "eta", "zeta")


def _wide(df: pd.DataFrame, q: str) -> pd.DataFrame:
    return df[df["quantity"] == q].pivot(index="t", columns="k", values="value").sort_index()


def _put(df: pd.DataFrame, q: str, new: np.ndarray, like: pd.DataFrame) -> None:
    """Write ``new`` (``like``'s shape: times x k) into the rows of quantity ``q``."""
    m = df["quantity"] == q
    long = pd.DataFrame(new, index=like.index, columns=like.columns).stack()
    df.loc[m, "value"] = long.reindex(pd.MultiIndex.from_arrays([df.loc[m, "t"],
                                                                 df.loc[m, "k"]])).to_numpy()


def _refit(df: pd.DataFrame, cfg: Any, source: str, target: str) -> None:
    """Fit the exponent of ``source``'s spectrum again into the ``target`` rows."""
    w = _wide(df, source)
    fit = dict(zip(w.index.to_numpy(dtype=float),
                   fit_exponents(w.to_numpy(dtype=float), cfg.kmin, cfg.kmax), strict=True))
    m = df["quantity"] == target
    df.loc[m, "value"] = df.loc[m, "t"].map(fit).to_numpy()


def _rewrite(change: Any, diagonals: Any = None) -> Any:
    """A wrong model changing the simulated spectrum ``preact[t, k]`` (times increasing) by
    ``change(t, spectra, theory)``, and the Gram diagonals by ``diagonals(cfg, t, {q:
    values})`` when given; the fitted exponent follows."""
    def apply(cfg: Any, folder: Path) -> None:
        def table(df: pd.DataFrame) -> pd.DataFrame:
            pre, th = _wide(df, "preact"), _wide(df, "rho_theory")
            _put(df, "preact", change(pre.index.to_numpy(dtype=float),
                                      pre.to_numpy(dtype=float), th.to_numpy(dtype=float)), pre)
            if diagonals is not None:
                wide = {q: _wide(df, q) for q in _DIAGONALS}
                t = wide["xi"].index.to_numpy(dtype=float)
                new = diagonals(cfg, t, {q: w.to_numpy(dtype=float) for q, w in wide.items()})
                for q in _DIAGONALS:
                    _put(df, q, new[q], wide[q])
            _refit(df, cfg, "preact", "alpha_fit")
            return df

        def init(df: pd.DataFrame) -> pd.DataFrame:
            s = cfg.setting()
            lam, _ = s.spectra()
            t0 = np.zeros(1)
            for r in df["replica"].unique():
                m = (df["replica"] == r).to_numpy()
                th0 = s.sigma_w**2 * lam[df.loc[m, "k"].to_numpy(dtype=np.int64) - 1]
                df.loc[m, "value"] = change(t0, df.loc[m, "value"].to_numpy(dtype=float)[None],
                                            th0[None])[0]
            return df

        edit_table(folder, "simulate.parquet", table)
        if (folder / INIT_TABLE).exists():
            edit_table(folder, INIT_TABLE, init)
    return apply


def _twice_the_width(cfg: Any, folder: Path) -> None:
    """The run (and its replicas) made again at width 2N, the config still saying N, every
    table as that run writes it (a few seconds at the quick size)."""
    from dataclasses import replace

    from specdyn.runs.registry import get  # the registered run: run.py imports this module

    if cfg.N is not None:
        get("simulate").run(replace(cfg, N=2 * cfg.N, figure=False), folder)


def _lr_off(cfg: Any, folder: Path) -> None:
    """The run (and its replicas) made again with a step 5 % larger than the config's, the
    config still saying its own, every table as that run writes it."""
    from dataclasses import replace

    from specdyn.runs.registry import get  # the registered run: run.py imports this module

    get("simulate").run(replace(cfg, dt=1.05 * cfg.time_step(), figure=False), folder)


def _jump(t: np.ndarray, rho: np.ndarray, th: np.ndarray) -> np.ndarray:
    out = rho.copy()
    out[1:] = rho[-1]
    return out


def _theory_diagonals(cfg: Any, t: np.ndarray, old: dict[str, np.ndarray]
                      ) -> dict[str, np.ndarray]:
    """The flow theory's xi, eta, zeta (Eqs. 173-174) at the checkpoints."""
    s = cfg.setting()
    k = np.arange(1, cfg.D + 1, dtype=float)[None, :]
    return {"xi": theory.xi(s, k, t[:, None]), "eta": theory.eta(s, k, t[:, None]),
            "zeta": theory.zeta(s, k, t[:, None])}


def _slowed_diagonals(cfg: Any, t: np.ndarray, old: dict[str, np.ndarray]
                      ) -> dict[str, np.ndarray]:
    """Each diagonal at t is the real one's at t / 2 (linear interpolation in log t)."""
    return {q: slowed(2.0, log=False)(t, v) for q, v in old.items()}


def _theory_from(rho_fn: Any, *, sim_follows: bool) -> Any:
    """A wrong model whose Eq. (12) is ``rho_fn(setting, k, t)``: the theory rows and their
    fitted exponent written with it; with ``sim_follows`` the simulated spectrum keeps its
    deviation from the theory (a network of the same wrong inputs)."""
    def apply(cfg: Any, folder: Path) -> None:
        s = cfg.setting()

        def table(df: pd.DataFrame) -> pd.DataFrame:
            th = _wide(df, "rho_theory")
            t = th.index.to_numpy(dtype=float)
            k = th.columns.to_numpy(dtype=float)
            new = rho_fn(s, k[None, :], t[:, None])
            if sim_follows:
                pre = _wide(df, "preact")
                _put(df, "preact", pre.to_numpy(dtype=float) * new / th.to_numpy(dtype=float),
                     pre)
                _refit(df, cfg, "preact", "alpha_fit")
            _put(df, "rho_theory", new, th)
            _refit(df, cfg, "rho_theory", "alpha_fit_theory")
            return df

        edit_table(folder, "simulate.parquet", table)
    return apply


SIMULATE_WRONG = (
    WrongModel("jump at the first checkpoint", "the spectrum (and its fitted exponent) jumps "
               "to its final value at the first checkpoint and stays there (the last step's "
               "spectrum read at every checkpoint)",
               _rewrite(_jump),
               catches=("every checkpoint: |fitted exponent: simulation - theory|",),
               kind="attribution"),
    WrongModel("sim x1.25", "every simulated eigenvalue 1.25 times too large (a scale error "
               "of the spectrum's normalisation)",
               _rewrite(lambda t, rho, th: 1.25 * rho),
               catches=("end: median |log rho_sim/rho_theory|",)),
    WrongModel("is its theory", "the simulation returns the flow theory itself: the spectrum "
               "is Eq. (12), the Gram diagonals Eqs. (173)-(174)",
               _rewrite(lambda t, rho, th: th.copy(), _theory_diagonals),
               catches=("t = 0 deviation: finite-size size", "eta - zeta: drift"),
               kind="is-theory"),
    WrongModel("fluctuations x2", "finite-size deviations from Eq. (12) twice their size "
               "(log rho_sim - log rho_theory doubled at every rank and checkpoint)",
               _rewrite(lambda t, rho, th: th * (rho / th) ** 2.0),
               catches=("t = 0 deviation: finite-size size",), kind="fluctuation-size"),
    WrongModel("width 2N", "the network (and every replica) at twice the configured width: "
               "finite-size deviations 0.71 times their size, learned as the run's",
               _twice_the_width, catches=("t = 0 deviation: finite-size size",),
               kind="fluctuation-size"),
    WrongModel("half speed", "the network learns at half the speed (a time unit off by 2): "
               "spectrum and Gram diagonals at t are the real ones at t / 2",
               _rewrite(lambda t, rho, th: slowed(2.0)(t, rho), _slowed_diagonals),
               catches=("clock: half-learning time",), kind="clock"),
    WrongModel("lr x1.05", "the network trained with a learning rate 5 % above the one its "
               "config and theory use (every replica too)", _lr_off,
               catches=("clock: half-learning time",), kind="clock"),
    *theory_models(_theory_from, "theory rows: ODE oracle",
                   "the theory the figure draws and the claims read"),
)
