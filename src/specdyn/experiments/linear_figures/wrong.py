"""The linear figures' wrong models: what fig2 and finite-size would have written under a
plausible mistake (:class:`~specdyn.runs.WrongModel`), built from a run's own tables.

Each rewrites a scratch copy of a finished folder (:func:`specdyn.runs.wrong.edit_table`)
into the wrong model's output, keeping the tables consistent with one another (fig2's
two-point exponent is computed again from the rewritten spectrum, as the run computes it);
``tests/experiments/test_wrong_models.py`` checks that an expected claim fails on each.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn import theory
from specdyn.experiments.linear_figures.readings import LOCAL_RANKS
from specdyn.measure.exponents import two_point_exponent
from specdyn.runs.registry import WrongModel
from specdyn.runs.wrong import edit_table, table_edit
from specdyn.settings import PowerLawSetting

#: fig2's simulated two-point exponent rows, computed from ``fig2.parquet``'s ``rho_sim``.
_SIM_ALPHA = "simulation-local-k1-2"


def _fig2_spectra(folder: Path, change: Any) -> None:
    """Rewrite fig2's simulated spectrum ``rho_sim[t, k]`` (a ``(times, D)`` array, times
    increasing) by ``change(t, rho)``, then its two-point exponent rows from it."""
    def spectra(df: pd.DataFrame) -> pd.DataFrame:
        wide = df.pivot(index="t", columns="k", values="rho_sim").sort_index()
        new = change(wide.index.to_numpy(dtype=float), wide.to_numpy(dtype=float))
        long = pd.DataFrame(new, index=wide.index, columns=wide.columns).stack()
        key = pd.MultiIndex.from_arrays([df["t"], df["k"]])
        return df.assign(rho_sim=long.reindex(key).to_numpy())

    edit_table(folder, "fig2.parquet", spectra)
    sp = pd.read_parquet(folder / "fig2.parquet")
    wide = sp.pivot(index="t", columns="k", values="rho_sim").sort_index()
    alpha_at = dict(zip(wide.index.to_numpy(dtype=float),
                        two_point_exponent(wide.to_numpy(dtype=float), LOCAL_RANKS),
                        strict=True))

    def alpha(df: pd.DataFrame) -> pd.DataFrame:
        sim = df["source"] == _SIM_ALPHA
        df.loc[sim, "alpha_eff"] = df.loc[sim, "t"].map(alpha_at).to_numpy()
        return df

    edit_table(folder, "fig2_alpha.parquet", alpha)


def _scaled(factor: float) -> Any:
    def change(t: np.ndarray, rho: np.ndarray) -> np.ndarray:
        return rho * factor
    return change


def _low_transient(keep: float) -> Any:
    """Rank 1 moved so that the two-point exponent keeps only ``keep`` of its change since
    ``t = 0``: ``a'(t) = a(0) + keep (a(t) - a(0))``, rank 2 and above unchanged."""
    def change(t: np.ndarray, rho: np.ndarray) -> np.ndarray:
        a = np.log(rho[:, 0] / rho[:, 1])
        out = rho.copy()
        out[:, 0] = rho[:, 1] * np.exp(a[0] + keep * (a - a[0]))
        return out
    return change


def slowed(factor: float, log: bool = True) -> Any:
    """``change(t, values)`` for a run ``factor`` times slower: each row (a checkpoint,
    ``t`` increasing) becomes the real run's at ``t / factor``, interpolated linearly in
    ``log t`` (of ``log values`` when ``log``, else of the values) above the first positive
    checkpoint and in ``t`` below it."""
    def change(t: np.ndarray, values: np.ndarray) -> np.ndarray:
        pos = t > 0
        lt = np.log(t[pos])
        lr = np.log(values[pos]) if log else values[pos]
        first = np.log(values[0]) if log else values[0]
        out = values.copy()
        for i, ti in enumerate(t):
            if ti <= 0:
                continue
            want = ti / factor
            if want >= t[pos][0]:
                w = np.log(want)
                row = np.array([np.interp(w, lt, lr[:, j]) for j in range(values.shape[1])])
            else:  # between t = 0 and the first positive checkpoint
                f = want / t[pos][0]
                row = (1 - f) * first + f * lr[0]
            out[i] = np.exp(row) if log else row
        return out
    return change


def rho_sum_then_square(s: PowerLawSetting, k: Any, t: Any) -> np.ndarray:
    """Eq. (12) with a convention slip: ``S = (sigma_w + sigma_a)^2`` (the variance of a sum)
    in place of ``sigma_w^2 + sigma_a^2`` (a sum of variances), everywhere ``S`` enters
    (the rate, ``r_k^+``, ``xi`` and ``Delta eta``); the stable form of
    :mod:`specdyn.theory.linear`, ``e = exp(-b t)``."""
    kk, tt = np.broadcast_arrays(np.asarray(k, dtype=float), np.asarray(t, dtype=float))
    lam, theta, g = s.lam(kk), np.sqrt(s.mu(kk)), s.gamma0
    S = (s.sigma_w + s.sigma_a) ** 2
    root = np.sqrt(S * S + 4.0 * g * g * theta * theta)
    b, r = lam * root / g**2, (root - S) / (2.0 * g * theta)
    e = np.exp(-b * tt)
    v = r * (1.0 - e) / (1.0 + r * r * e)
    xi = S * v / (1.0 - v * v)
    return np.asarray(lam * (s.sigma_w**2 + 0.5 * (np.sqrt(S * S + 4.0 * xi * xi) - S)))


def _fig2_theory(rho_fn: Any) -> Any:
    """A wrong model whose Eq. (12) is ``rho_fn``: fig2's theory column and theory exponent
    rows written with it (what the run writes when ``theory.rho`` is ``rho_fn``)."""
    def apply(cfg: Any, folder: Path) -> None:
        s = cfg.setting()

        def spectra(df: pd.DataFrame) -> pd.DataFrame:
            return df.assign(rho_theory=rho_fn(s, df["k"].to_numpy(dtype=float),
                                               df["t"].to_numpy(dtype=float)))

        edit_table(folder, "fig2.parquet", spectra)
        ranks = np.asarray(LOCAL_RANKS, dtype=float)[None, :]

        def alpha(df: pd.DataFrame) -> pd.DataFrame:
            for src in ("theory-local-k1-2", "theory-local-k1-2-checkpoints"):
                m = df["source"] == src
                t = df.loc[m, "t"].to_numpy(dtype=float)[:, None]
                df.loc[m, "alpha_eff"] = two_point_exponent(rho_fn(s, ranks, t), LOCAL_RANKS)
            return df

        edit_table(folder, "fig2_alpha.parquet", alpha)
    return apply


def rho_mu0_one(s: PowerLawSetting, k: Any, t: Any) -> np.ndarray:
    """Eq. (12) of a teacher spectrum that lost its normalisation ``mu0 = 1/zeta(alpha +
    beta)`` (``mu_k = k^-beta``)."""
    return np.asarray(theory.rho(dataclasses.replace(s, mu0=1.0), k, t))


def theory_models(rewrite: Any, oracle_key: str, where: str) -> tuple[WrongModel, WrongModel]:
    """The two wrong theories of a table with a theory column: a convention slip inside
    Eq. (12) (:func:`rho_sum_then_square`, patched where the claims look ``theory.rho`` up)
    and a teacher that lost its normalisation (:func:`rho_mu0_one`), the network of the same
    wrong inputs. ``rewrite(rho_fn, sim_follows=...)`` builds each model's ``apply``; the
    claim ``oracle_key`` (the theory against its ODE) must catch both."""
    return (
        WrongModel("S = (sigma_w + sigma_a)^2", "Eq. (12) with S the square of a sum, not the "
                   f"sum of squares, in {where} (patched)",
                   rewrite(rho_sum_then_square, sim_follows=False), catches=(oracle_key,),
                   kind="convention", patch={"specdyn.theory.rho": rho_sum_then_square}),
        WrongModel("mu0 = 1", "theory and network of a teacher spectrum that lost its "
                   "normalisation 1/zeta(alpha + beta): they agree with each other",
                   rewrite(rho_mu0_one, sim_follows=True), catches=(oracle_key,),
                   kind="wrong-inputs"),
    )


def _fig2_rewrite(rho_fn: Any, *, sim_follows: bool) -> Any:
    """fig2's theory written with ``rho_fn``; with ``sim_follows`` the simulation keeps its
    deviation from it."""
    def apply(cfg: Any, folder: Path) -> None:
        if sim_follows:
            s = cfg.setting()

            def spectra(df: pd.DataFrame) -> pd.DataFrame:
                wrong = rho_fn(s, df["k"].to_numpy(dtype=float), df["t"].to_numpy(dtype=float))
                return df.assign(rho_sim=df["rho_sim"] * wrong / df["rho_theory"])

            edit_table(folder, "fig2.parquet", spectra)
        _fig2_theory(rho_fn)(cfg, folder)
        if sim_follows:
            _fig2_spectra(folder, lambda t, rho: rho)  # the simulation's exponent rows follow
    return apply


def _fig2_sim_from(change: Any) -> Any:
    """A wrong model setting the simulated spectrum to ``change(rho_sim, rho_theory)``
    (both ``(times, D)`` arrays, times increasing)."""
    def apply(cfg: Any, folder: Path) -> None:
        th = pd.read_parquet(folder / "fig2.parquet").pivot(index="t", columns="k",
                                                            values="rho_theory").sort_index()
        _fig2_spectra(folder, lambda t, rho: change(rho, th.to_numpy(dtype=float)))
    return apply


#: The unpatched constructor (the patch replaces the name; this keeps the function).
_PAPER = PowerLawSetting.paper


def paper_theta0_is_mu0(sigma_w: float, gamma0_ratio: float, *, alpha: float = 1.0,
                        beta: float = 1.0, sigma_a: float = 1.0,
                        D: int | None = None) -> PowerLawSetting:
    """``PowerLawSetting.paper`` with a convention slip: ``gamma0 = ratio S / mu0`` where App.
    G has ``S / theta0``, ``theta0 = sqrt(mu0)`` (gamma0 1.28 times too large at alpha = beta
    = 1); the network, the theory and the claims all build their setting through it."""
    s = _PAPER(sigma_w, gamma0_ratio, alpha=alpha, beta=beta, sigma_a=sigma_a, D=D)
    return dataclasses.replace(s, gamma0=float(gamma0_ratio * s.S / s.mu0))


#: The patch of :func:`paper_theta0_is_mu0`: every ``PowerLawSetting.paper`` call.
THETA0_PATCH = {"specdyn.settings.PowerLawSetting.paper": staticmethod(paper_theta0_is_mu0)}


def _fig2_spread_too(factor: float) -> Any:
    """Deviations from Eq. (12) ``factor`` times their size in the judged run and in every
    spread seed (one simulation code makes both)."""
    def apply(cfg: Any, folder: Path) -> None:
        th = pd.read_parquet(folder / "fig2.parquet").set_index(["t", "k"]).rho_theory

        def spread(df: pd.DataFrame) -> pd.DataFrame:
            t = th.reindex(pd.MultiIndex.from_arrays([df["t"], df["k"]])).to_numpy()
            return df.assign(rho_sim=t * (df["rho_sim"].to_numpy() / t) ** factor)

        edit_table(folder, "fig2_spread.parquet", spread)
        _fig2_sim_from(lambda sim, th: th * (sim / th) ** factor)(cfg, folder)
    return apply


def _one_checkpoint_late(t: np.ndarray, rho: np.ndarray) -> np.ndarray:
    out = rho.copy()
    out[:-1] = rho[1:]
    return out


FIG2_WRONG = (
    WrongModel("sim x1.25", "every simulated eigenvalue 1.25 times too large (a scale error "
               "of the spectrum's normalisation)",
               lambda cfg, folder: _fig2_spectra(folder, _scaled(1.25)),
               catches=("every checkpoint: median |log rho_sim/rho_theory|",)),
    WrongModel("transient 30 % low", "the k = 1 exponent's transient 30 % lower than the "
               "simulation's (rank 1 moved, the two-point exponent keeps 0.7 of its change)",
               lambda cfg, folder: _fig2_spectra(folder, _low_transient(0.7)),
               catches=("k = 1 exponent: rise to its peak, simulation / theory",)),
    WrongModel("half speed", "the network learns at half the speed (a time unit off by 2: "
               "t = 2 x step x dt): the spectrum at t is the real one's at t / 2",
               lambda cfg, folder: _fig2_spectra(folder, slowed(2.0)),
               catches=("k = 1 exponent: peak checkpoint, simulation - theory",), kind="clock"),
    WrongModel("is its theory", "the simulation returns Eq. (12) itself (rho_sim = rho_theory "
               "at every checkpoint)", _fig2_sim_from(lambda sim, th: th.copy()),
               catches=("transient deviation: spread seeds' size",),
               kind="is-theory"),
    WrongModel("fluctuations x1.5", "finite-size deviations from Eq. (12) 1.5 times their size "
               "(log rho_sim - log rho_theory scaled by 1.5 at every rank and checkpoint)",
               _fig2_sim_from(lambda sim, th: th * (sim / th) ** 1.5),
               catches=("transient deviation: spread seeds' size",),
               kind="fluctuation-size"),
    WrongModel("one checkpoint late", "every checkpoint records the spectrum of the next one "
               "(a quantity read at the wrong step)", lambda cfg, folder: _fig2_spectra(
                   folder, _one_checkpoint_late), kind="attribution"),
    *theory_models(_fig2_rewrite, "theory column: ODE oracle",
                   "the theory that the figure draws and the claims read"),
    WrongModel("fluctuations x1.5, spread seeds too", "finite-size deviations from Eq. (12) "
               "1.5 times their size in the judged run and in the spread seeds (the same "
               "simulation code makes both, so the spread claim's prediction moves with it)",
               _fig2_spread_too(1.5), catches=("t = 0 deviation: finite-size size",),
               kind="fluctuation-size"),
    WrongModel("fluctuations x0.7, spread seeds too", "finite-size deviations 0.7 times their "
               "size in the judged run and the spread seeds (a size larger than configured)",
               _fig2_spread_too(0.7), catches=("t = 0 deviation: finite-size size",),
               kind="fluctuation-size"),
    WrongModel("theta0 = mu0", "gamma0 = ratio S / mu0, not S / sqrt(mu0), in the setting the "
               "network, the theory and the claims all build (PowerLawSetting.paper, patched)",
               _fig2_rewrite(lambda s, k, t: theory.rho(s, k, t), sim_follows=True),
               catches=("theory column: ODE oracle",), kind="convention", patch=THETA0_PATCH),
)


def _finite_size(change: Any) -> Any:
    """A wrong model rewriting finite-size's error by ``change(size, error)``."""
    return table_edit("finite-size.parquet", lambda df: df.assign(
        median_abs_log=change(df["size"].to_numpy(dtype=float),
                              df["median_abs_log"].to_numpy(dtype=float))))


def _cells(change: Any) -> Any:
    """A wrong model rewriting finite-size's cells by ``change(cfg, cells)`` (a DataFrame
    with ``axis, size, seed, t, k, rho_sim, rho_theory``), then each run's errors in
    ``finite-size.parquet`` from them, as the run computes them (per checkpoint the median
    and max over ranks of ``|log rho_sim / rho_theory|``, then the mean over checkpoints)."""
    def apply(cfg: Any, folder: Path) -> None:
        edit_table(folder, "finite-size_cells.parquet", lambda df: change(cfg, df))
        c = pd.read_parquet(folder / "finite-size_cells.parquet")
        c = c[c.rho_sim > 0].assign(err=lambda d: np.abs(np.log(d.rho_sim / d.rho_theory)))
        per_t = c.groupby(["axis", "size", "seed", "t"]).err.agg(["median", "max"])
        per_run = per_t.groupby(level=["axis", "size", "seed"]).mean()

        def runs(df: pd.DataFrame) -> pd.DataFrame:
            key = pd.MultiIndex.from_arrays([df["axis"], df["size"], df["seed"]])
            return df.assign(median_abs_log=per_run["median"].reindex(key).to_numpy(),
                             max_abs_log=per_run["max"].reindex(key).to_numpy())

        edit_table(folder, "finite-size.parquet", runs)
    return apply


def _cells_sim(change: Any) -> Any:
    """``_cells`` with ``rho_sim := change(rho_sim, rho_theory)``."""
    return _cells(lambda cfg, df: df.assign(rho_sim=change(df["rho_sim"].to_numpy(),
                                                           df["rho_theory"].to_numpy())))


def _cells_theory(rho_fn: Any, *, sim_follows: bool) -> Any:
    """``_cells`` with the theory column ``rho_fn(setting, k, t)``; with ``sim_follows`` the
    simulation keeps its deviation from it (a network of the same wrong inputs)."""
    def change(cfg: Any, df: pd.DataFrame) -> pd.DataFrame:
        new = rho_fn(cfg.setting(), df["k"].to_numpy(dtype=float), df["t"].to_numpy(dtype=float))
        sim = df["rho_sim"] * new / df["rho_theory"] if sim_follows else df["rho_sim"]
        return df.assign(rho_sim=sim, rho_theory=new)
    return _cells(change)


def _cells_slowed(cfg: Any, df: pd.DataFrame) -> pd.DataFrame:
    """Every run at half the speed: its spectrum at t is the real one's at t / 2."""
    out = []
    for _, g in df.groupby(["axis", "size", "seed"], sort=False):
        w = g.pivot(index="t", columns="k", values="rho_sim").sort_index()
        new = slowed(2.0)(w.index.to_numpy(dtype=float), w.to_numpy(dtype=float))
        long = pd.DataFrame(new, index=w.index, columns=w.columns).stack()
        out.append(g.assign(rho_sim=long.reindex(pd.MultiIndex.from_arrays(
            [g["t"], g["k"]])).to_numpy()))
    return pd.concat(out).loc[df.index]


def _sizes_doubled(cfg: Any, folder: Path) -> None:
    """Each run recorded at twice the size that produced it (a width or sample count read
    off the wrong run): both tables relabelled."""
    for name in ("finite-size.parquet", "finite-size_cells.parquet"):
        edit_table(folder, name, lambda df: df.assign(size=2 * df["size"]))


FINITE_SIZE_WRONG = (
    WrongModel("rate 1/size", "the error falls as 1/size, not 1/sqrt(size) (fluctuations "
               "taken as a mean's over size draws squared)",
               _finite_size(lambda n, e: e * np.sqrt(n.min() / n))),
    WrongModel("error floor", "a size-independent error floor the size of the largest "
               "size's error (a theory off by a fixed amount, e.g. a few % in sigma_w)",
               _finite_size(lambda n, e: e + e[n == n.max()].mean()),
               catches=("error slope against N, upper half of the sizes",)),
    WrongModel("is its theory", "every run returns Eq. (12) itself (rho_sim = rho_theory)",
               _cells_sim(lambda sim, th: th.copy()),
               catches=("error level, finite N", "error level, finite M"), kind="is-theory"),
    WrongModel("fluctuations x1.5", "finite-size errors 1.5 times their size at every size "
               "(log rho_sim - log rho_theory scaled by 1.5): the same slopes",
               _cells_sim(lambda sim, th: th * (sim / th) ** 1.5),
               catches=("error level, finite N", "error level, finite M"),
               kind="fluctuation-size"),
    WrongModel("fluctuations x1.25", "finite-size errors 1.25 times their size at every "
               "size (log rho_sim - log rho_theory scaled by 1.25): a modest factor",
               _cells_sim(lambda sim, th: th * (sim / th) ** 1.25),
               catches=("error level, finite N", "error level, finite M"),
               kind="fluctuation-size"),
    WrongModel("half speed", "every run learns at half the speed (a time unit off by 2)",
               _cells(_cells_slowed), kind="clock"),
    WrongModel("sizes doubled", "each run recorded at twice the width or sample count that "
               "produced it: the same slopes, errors sqrt(2) too large for their size",
               _sizes_doubled, catches=("error level, finite N",), kind="attribution"),
    *theory_models(_cells_theory, "theory column: ODE oracle",
                   "the theory every error is measured against"),
)
