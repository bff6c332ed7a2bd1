"""The outlier-escape experiments' wrong models: what bbp-escape, trainability and
lr-transfer would have written under a plausible mistake
(:class:`~specdyn.runs.WrongModel`), built from a run's own tables."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specdyn.experiments.outlier_escape import trainability as tr
from specdyn.runs.registry import WrongModel
from specdyn.runs.wrong import edit_table, table_edit
from specdyn.theory import outlier_escape as oe

# --------------------------------------------------------------------------
# bbp-escape
# --------------------------------------------------------------------------

_BBP = "bbp-escape.parquet"
_STOCHASTIC = "bbp-escape_stochastic.parquet"
_REPLICAS = "bbp-escape_replicas.parquet"
_POOLED = "outliers - predictions, once clear: RMS deviation / its pilot size (pooled)"


def _bbp_late(factor: float) -> Any:
    """Every measured row at step ``s`` shows what the real run measured at ``s / factor``
    (the nearest recorded step at or below it): the escape ``factor`` times late."""
    def late(df: pd.DataFrame) -> pd.DataFrame:
        meas = df[df["source"] == "measured"]
        steps = np.sort(meas["step"].unique())
        src = {int(st): int(steps[max(int(np.searchsorted(steps, st / factor, "right")) - 1,
                                      0)]) for st in steps}
        by = meas.set_index(["step", "quantity"])
        rows = df["source"] == "measured"
        key = pd.MultiIndex.from_arrays([df.loc[rows, "step"].map(src),
                                         df.loc[rows, "quantity"]])
        df.loc[rows, "value"] = by["value"].reindex(key).to_numpy()
        df.loc[rows, "flagged"] = by["flagged"].reindex(key).to_numpy()
        return df
    return table_edit(_BBP, late)


def _bbp_unaligned(df: pd.DataFrame) -> pd.DataFrame:
    """The outlier escapes along a direction unrelated to the teacher's: the top singular
    vectors' overlaps keep their t = 0 (random) values."""
    for side in ("left", "right"):
        rows = (df["source"] == "measured") & (df["quantity"] == f"{side}_overlap2")
        first = df[rows].sort_values("step")["value"].iloc[0]
        df.loc[rows, "value"] = first
    return df


def _bbp_outlier_high(df: pd.DataFrame) -> pd.DataFrame:
    """The top singular value 10 % above the measured one once it is an outlier (the
    spike's location formula off by 10 %, e.g. s(theta) read with c = D/P for P/D)."""
    rows = (df["source"] == "measured") & (df["quantity"] == "sv1") & (df["flagged"] > 0)
    df.loc[rows, "value"] *= 1.1
    return df


def _sgd_bulk_as_population(cfg: Any, folder: Path) -> None:
    """The SGD run's bulk shrinks as population GD's does, (1 - lr)^t: SGD's noise and
    slower mean-square decay left out (its singular values below the top one rescaled)."""
    def shrink(df: pd.DataFrame) -> pd.DataFrame:
        rows = (df["run"] == "sgd") & df["quantity"].str.match(r"sv[2-9]")
        df.loc[rows, "value"] *= (1.0 - cfg.sgd_lr) ** df.loc[rows, "step"]
        return df

    edit_table(folder, _STOCHASTIC, shrink)


def _nonlinear_high(df: pd.DataFrame) -> pd.DataFrame:
    """The nonlinear layer's top singular value 10 % above the run's once flagged."""
    rows = ((df["run"] == "nonlinear") & (df["quantity"] == "sv1")
            & (df["flagged"] > 0))
    df.loc[rows, "value"] *= 1.1
    return df


def _bbp_clear_rows(df: pd.DataFrame, quantity: str) -> tuple[pd.Series, np.ndarray]:
    """The measured rows of ``quantity`` at the steps where the table's own theory rows put
    the outlier beyond 1.1 x the edge, and the theory's values there (same order)."""
    th = df[df["source"] == "theory"].pivot(index="step", columns="quantity", values="value")
    clear = th.index[th["outlier"] > 1.1 * th["bulk_edge"]]
    name = {"sv1": "outlier"}.get(quantity, quantity)
    rows = (df["source"] == "measured") & (df["quantity"] == quantity) & df["step"].isin(clear)
    return rows, th.loc[df.loc[rows, "step"], name].to_numpy()


def _bbp_towards_theory(factor: float, *, stochastic: bool = True) -> Any:
    """Every measured outlier (population GD's with its overlaps and its replicas', SGD's,
    the nonlinear layer's; population GD's alone without ``stochastic``), once clear,
    ``factor`` times as far from its prediction as the run's (0: the simulations return
    their theories)."""
    def population(df: pd.DataFrame) -> pd.DataFrame:
        for q in ("sv1", "left_overlap2", "right_overlap2"):
            rows, th = _bbp_clear_rows(df, q)
            df.loc[rows, "value"] = th + factor * (df.loc[rows, "value"].to_numpy() - th)
        return df

    with_stochastic = stochastic

    def apply(cfg: Any, folder: Path) -> None:
        from specdyn.experiments.outlier_escape.readings import nonlinear_reading, sgd_reading

        edit_table(folder, _BBP, population)

        def replicas(df: pd.DataFrame) -> pd.DataFrame:
            th = oe.population_gd_path(cfg.theta, cfg.sigma0, cfg.P / cfg.D, cfg.lr,
                                       df["step"].to_numpy(dtype=float)).singular_value
            df["value"] = th + factor * (df["value"].to_numpy() - th)
            return df

        if (folder / _REPLICAS).exists():  # every replica's step is a clear one
            edit_table(folder, _REPLICAS, replicas)

        def stochastic(df: pd.DataFrame) -> pd.DataFrame:
            for run, read in (("sgd", sgd_reading), ("nonlinear", nonlinear_reading)):
                r = read(df, cfg)
                cl = r.clear(1.1)
                pred = pd.Series(r.outlier[cl], index=r.steps[cl])
                rows = ((df["run"] == run) & (df["quantity"] == "sv1")
                        & df["step"].isin(pred.index))
                th = pred.reindex(df.loc[rows, "step"]).to_numpy()
                df.loc[rows, "value"] = th + factor * (df.loc[rows, "value"].to_numpy() - th)
            return df

        if with_stochastic and (folder / _STOCHASTIC).exists():
            edit_table(folder, _STOCHASTIC, stochastic)
    return apply


def _sgd_noise_high(cfg: Any, folder: Path) -> None:
    """The SGD run at 1.5 times its label noise: its bulk singular values scaled by the
    ratio of the second-moment recursion's edges at noise 1.5 s and s."""
    def hot(df: pd.DataFrame) -> pd.DataFrame:
        rows = (df["run"] == "sgd") & df["quantity"].str.match(r"sv[2-9]")
        t = df.loc[rows, "step"].to_numpy(np.float64)

        def edge(noise: float) -> np.ndarray:
            return oe.online_sgd_path(cfg.sgd_theta, cfg.sigma0, cfg.sgd_P, cfg.sgd_D,
                                      cfg.sgd_lr, cfg.sgd_B, noise, t).bulk_edge

        df.loc[rows, "value"] *= edge(1.5 * cfg.sgd_noise) / edge(cfg.sgd_noise)
        return df

    edit_table(folder, _STOCHASTIC, hot)


_REAL_PATH = oe.population_gd_path
_REAL_CROSSING = oe.bbp_crossing_time


def _crossing_c_half(theta: float, sigma0: float, c: float, lr: float) -> float:
    """The convention error: the crossing time with the spiked-covariance threshold
    ``c^(1/2)`` for the rectangular ``c^(1/4)`` (the notes list both)."""
    return _REAL_CROSSING(theta, sigma0, c * c, lr)


def _path_c_inverted(theta: float, sigma0: float, c: float, lr: float, t: Any) -> Any:
    """The convention error: the aspect ratio read as ``D / P`` (the notes write the student
    ``N x M``) inside the path."""
    return _REAL_PATH(theta, sigma0, 1.0 / c, lr, t)


def _path_theta_squared(theta: float, sigma0: float, c: float, lr: float, t: Any) -> Any:
    return _REAL_PATH(theta * theta, sigma0, c, lr, t)


def _crossing_theta_squared(theta: float, sigma0: float, c: float, lr: float) -> float:
    """Theory from a mis-normalised input: the teacher's singular value read off the
    eigenvalue of ``W* W*^T``, ``theta^2``."""
    return _REAL_CROSSING(theta * theta, sigma0, c, lr)


BBP_WRONG = (
    WrongModel("escape 30 % late", "the outlier leaves the bulk 30 % later than the run's "
               "(every measured row at step s is the run's at s / 1.3: a crossing time read "
               "off the wrong edge)", _bbp_late(1.3),
               catches=("measured escape / t* - 1",), kind="clock"),
    WrongModel("no alignment", "the outlier escapes along a random direction: the top "
               "singular vectors' overlaps with the teacher stay at their t = 0 values (read "
               "at the wrong step)", table_edit(_BBP, _bbp_unaligned), kind="attribution"),
    WrongModel("outliers are the theory", "the simulations return their theories: every "
               "outlier (and population GD's overlaps), once clear, on its predicted path",
               _bbp_towards_theory(0.0), catches=(_POOLED,), kind="is-theory"),
    WrongModel("deviations x3", "every outlier's deviation from its prediction, once clear, "
               "three times the run's", _bbp_towards_theory(3.0), catches=(_POOLED,),
               kind="fluctuation-size"),
    WrongModel("deviations x0.5", "every outlier's deviation from its prediction, once "
               "clear, half the run's (population GD's, its replicas', SGD's, the nonlinear "
               "layer's)", _bbp_towards_theory(0.5),
               catches=("population GD replicas: outlier - prediction, RMS level / its pilot",),
               kind="fluctuation-size"),
    WrongModel("SGD label noise x1.5", "the SGD run at 1.5 times its label noise (its bulk "
               "the recursion's at 1.5 s)", _sgd_noise_high,
               catches=("SGD: top bulk singular value / its second-moment edge - 1, every "
                        "checkpoint (largest |.|)",), kind="temperature"),
    WrongModel("c for 1/c", "the aspect ratio read as D / P inside the BBP path (the notes' "
               "N x M student), in the function the claims and the figure call",
               lambda cfg, folder: None, kind="convention",
               catches=("BBP path: rectangular-spike location - D-transform root (largest "
                        "relative)",),
               patch={"specdyn.theory.outlier_escape.population_gd_path": _path_c_inverted}),
    WrongModel("theta from the eigenvalue", "the theory built from the teacher's eigenvalue "
               "theta^2 of W* W*^T for its singular value theta", lambda cfg, folder: None,
               kind="wrong-inputs", catches=("measured escape / t* - 1",),
               patch={"specdyn.theory.outlier_escape.population_gd_path": _path_theta_squared,
                      "specdyn.theory.outlier_escape.bbp_crossing_time":
                          _crossing_theta_squared}),
    WrongModel("population GD is its path", "population GD returns its predicted path once "
               "the outlier is clear (location and overlaps), the SGD and nonlinear runs real",
               _bbp_towards_theory(0.0, stochastic=False),
               catches=("outliers - predictions, once clear: smallest RMS deviation / its "
                        "pilot size",), kind="is-theory"),
    WrongModel("t* at c^(1/2)", "the BBP crossing time with the spiked-covariance threshold "
               "c^(1/2) for the rectangular c^(1/4), in the function the claims and the "
               "figure call", lambda cfg, folder: None, kind="convention",
               catches=("t*: closed form = the root of the GD map's strength at c^(1/4)",),
               patch={"specdyn.theory.outlier_escape.bbp_crossing_time": _crossing_c_half}),
    WrongModel("outlier 10 % high", "the top singular value 10 % above the run's once it "
               "is flagged (a location formula 10 % off)", table_edit(_BBP, _bbp_outlier_high),
               catches=("top singular value / BBP outlier path - 1, once clear",)),
    WrongModel("SGD bulk as population GD's", "the SGD run's bulk shrinks as (1 - lr)^t, as "
               "under population GD (SGD's noise and slower mean-square decay left out)",
               _sgd_bulk_as_population,
               catches=("SGD: top bulk singular value / its second-moment edge - 1, every "
                        "checkpoint (largest |.|)",)),
    WrongModel("nonlinear outlier 10 % high", "the nonlinear layer's top singular value 10 % "
               "above the run's once flagged (its spike strength off: e.g. mu1 of another "
               "activation)", table_edit(_STOCHASTIC, _nonlinear_high),
               catches=("nonlinear layer: outlier location",)),
)

# --------------------------------------------------------------------------
# trainability
# --------------------------------------------------------------------------


def _single_layer_step(df: pd.DataFrame) -> pd.DataFrame:
    """Each single-layer cell shows the next larger learning rate's outcome (a status
    boundary one lr step low: a step size read off the wrong grid point)."""
    df = df.sort_values(["model", "init_var", "lr"]).copy()
    one = df["model"] == "single-layer"
    nxt = df[one].groupby("init_var")["rel_error"].shift(-1)
    df.loc[nxt.index, "rel_error"] = nxt.fillna(df.loc[nxt.index, "rel_error"])
    return df


def _naive_two_layer(df: pd.DataFrame) -> pd.DataFrame:
    """The two-layer network diverges wherever lr exceeds 2 / sharpness at initialisation
    (the naive stability line, no catapult)."""
    rows = (df["model"] == "two-layer") & (df["lr"] > df["naive_lr"])
    df.loc[rows, "rel_error"] = np.nan
    return df


_TR = "trainability.parquet"
_LEVEL = "single layer: RMS of log(final error / exact theory)"


def _single_towards_theory(factor: float) -> Any:
    """Each single-layer cell's final error ``factor`` times as far (in log) from the exact
    theory as the run's (0: the simulation returns its theory)."""
    def apply(cfg: Any, folder: Path) -> None:
        def edit(df: pd.DataFrame) -> pd.DataFrame:
            one = df["model"] == "single-layer"
            th = tr.theory_rel_error(df[one], cfg)
            meas = df.loc[one, "rel_error"].to_numpy(np.float64)
            ok = np.isfinite(th) & np.isfinite(meas) & (meas > 0) & (th > 0)
            new = meas.copy()
            new[ok] = th[ok] * (meas[ok] / th[ok]) ** factor
            df.loc[one, "rel_error"] = new
            return df
        edit_table(folder, _TR, edit)
    return apply


def _label_noise_high(cfg: Any, folder: Path) -> None:
    """The single layer at 1.5 times its label noise: each cell's final error scaled by the
    exact theory's ratio at noise 1.5 s and s."""
    def edit(df: pd.DataFrame) -> pd.DataFrame:
        one = df["model"] == "single-layer"
        hot = tr.theory_rel_error(df[one], replace(cfg, noise_std=1.5 * cfg.noise_std))
        df.loc[one, "rel_error"] = (df.loc[one, "rel_error"].to_numpy(np.float64) * hot
                                    / tr.theory_rel_error(df[one], cfg))
        return df
    edit_table(folder, _TR, edit)


_REAL_THEORY = tr.theory_rel_error
_REAL_PREDICT = oe.predict_trainability


def _theory_slow_clock(single: pd.DataFrame, cfg: Any) -> np.ndarray:
    """The theory at 1.3 times the steps (a clock off by a constant factor)."""
    return _REAL_THEORY(single, replace(cfg, steps=round(1.3 * cfg.steps)))


def _predict_unit_entries(lr: Any, sigma0: Any, **kw: Any) -> Any:
    """The convention error: init entries of variance sigma0^2 for sigma0^2 / D (the initial
    error sigma0^2 P D), inside the function the claims and the figure call."""
    return _REAL_PREDICT(lr, np.asarray(sigma0) * np.sqrt(kw["D"]), **kw)


def _theory_status_normalised_lr(cfg: Any, folder: Path) -> None:
    """Theory from a mis-normalised input: the single layer's theory status computed with
    the grid's normalised learning rate ``lr / lr_c`` (the figure's axis) for ``lr``."""
    def edit(df: pd.DataFrame) -> pd.DataFrame:
        one = df["model"] == "single-layer"
        lr_c = oe.online_sgd_critical_lr(cfg.B, cfg.D)
        pred = _REAL_PREDICT(df.loc[one, "lr"].to_numpy(np.float64) / lr_c,
                             np.sqrt(df.loc[one, "init_var"].to_numpy(np.float64)), P=cfg.P,
                             D=cfg.D,
                             theta=cfg.theta, steps=cfg.steps, B=cfg.B,
                             noise_std=cfg.noise_std, tol=cfg.tol)
        df.loc[one, "theory_status"] = pred.status
        return df
    edit_table(folder, _TR, edit)


def _one_replica(cfg: Any, folder: Path) -> None:
    """The single layer run with one replica a cell, the config still saying its
    ``replicas``: the experiment's own run re-done at ``replicas = 1`` (a few seconds at the
    quick size) and its single-layer rows written over the run's. Replicas do not touch the
    two layers: their rows are kept, and the rerun's cut to one step."""
    import tempfile

    from specdyn.runs.registry import get  # the registered run: run.py imports this module

    with tempfile.TemporaryDirectory(dir=folder.parent, prefix="one-replica-") as tmp:
        get("trainability").run(replace(cfg, replicas=1, two_layer_steps=1), Path(tmp))
        rerun = pd.read_parquet(Path(tmp) / _TR)
    one = rerun[rerun["model"] == "single-layer"]

    def edit(df: pd.DataFrame) -> pd.DataFrame:
        if len(one) != int((df["model"] == "single-layer").sum()):
            raise ValueError("the rerun's single-layer grid differs from the run's")
        return pd.concat([one[df.columns], df[df["model"] != "single-layer"]],
                         ignore_index=True)
    edit_table(folder, _TR, edit)


def _naive_from_final(df: pd.DataFrame) -> pd.DataFrame:
    """Each two-layer row's naive line read off the final sharpness (at the smallest lr's
    solution) instead of the initial one."""
    two = df["model"] == "two-layer"
    df.loc[two, "naive_lr"] = df.loc[two, "naive_lr_final"]
    return df


def _naive_halved(df: pd.DataFrame) -> pd.DataFrame:
    """The naive line 1 / sharpness: the sharpness of ||.||^2 taken for that of ||.||^2 / 2."""
    two = df["model"] == "two-layer"
    df.loc[two, "naive_lr"] = 0.5 * df.loc[two, "naive_lr"]
    return df


TRAINABILITY_WRONG = (
    WrongModel("naive line from the final sharpness", "each two-layer row's line 2/sharpness "
               "read off the sharpness at the end of the smallest lr's run, not at "
               "initialisation", table_edit("trainability.parquet", _naive_from_final),
               catches=("naive line",), kind="attribution"),
    WrongModel("naive line halved", "the naive line 1/sharpness (a loss's 1/2 counted in the "
               "sharpness)", table_edit("trainability.parquet", _naive_halved),
               catches=("naive line",), kind="convention"),
    WrongModel("boundary one lr step low", "every single-layer cell shows the outcome of "
               "the next larger learning rate (the boundary one grid step off)",
               table_edit("trainability.parquet", _single_layer_step),
               catches=("single layer: cells agreeing with the theory",)),
    WrongModel("naive 2/sharpness", "the two-layer network diverges past the naive line "
               "2 / sharpness at initialisation (no catapult phase)",
               table_edit("trainability.parquet", _naive_two_layer),
               catches=("two layers: rows converging up to a boundary beyond 2/sharpness",)),
    WrongModel("errors are the theory", "the simulation returns its theory: every "
               "single-layer cell's final error the exact theory's", _single_towards_theory(0.0),
               catches=(_LEVEL,), kind="is-theory"),
    WrongModel("deviations x3", "the single layer's deviations from the exact theory three "
               "times the run's (in log)", _single_towards_theory(3.0), catches=(_LEVEL,),
               kind="fluctuation-size"),
    WrongModel("one replica for four", "the single-layer cells run with one replica each "
               "for the config's four (the table written by 1, the config still saying 4): "
               "fluctuations about twice the size", _one_replica, catches=(_LEVEL,),
               kind="fluctuation-size"),
    WrongModel("label noise x1.5", "the single layer at 1.5 times its label noise",
               _label_noise_high, kind="temperature",
               catches=("single layer: mean of log(final error / exact theory)",)),
    WrongModel("theory clock x1.3", "the exact theory evaluated at 1.3 times the steps",
               lambda cfg, folder: None, kind="clock",
               patch={"specdyn.experiments.outlier_escape.trainability.theory_rel_error":
                      _theory_slow_clock}),
    WrongModel("unit init entries", "the theory's initial error sigma0^2 P D (entries of "
               "variance sigma0^2 for sigma0^2 / D), inside predict_trainability",
               lambda cfg, folder: None, kind="convention",
               catches=("trainability theory: closed form - step-by-step recursion (largest "
                        "relative)",),
               patch={"specdyn.theory.outlier_escape.predict_trainability":
                      _predict_unit_entries}),
    WrongModel("normalised lr", "the theory status of each cell computed with the grid's "
               "normalised learning rate lr / lr_c for lr", _theory_status_normalised_lr,
               kind="wrong-inputs", catches=("single layer: cells agreeing with the theory",)),
)

#: The classes of mistake that cannot occur in ``trainability``, and why.
TRAINABILITY_WRONG_NA: dict[str, str] = {}

# --------------------------------------------------------------------------
# lr-transfer
# --------------------------------------------------------------------------


def _ntk_as_mup(df: pd.DataFrame) -> pd.DataFrame:
    """NTK behaves as muP: its escape steps are muP's (the parameterisation's width scaling
    lost), width by width and seed by seed."""
    mup = df[df["parameterization"].str.startswith("mup")]
    first = mup["parameterization"].iloc[0]
    ref = mup[mup["parameterization"] == first].set_index(["width", "seed"])["escape_step"]
    ntk = df["parameterization"].str.startswith("ntk")
    key = pd.MultiIndex.from_arrays([df.loc[ntk, "width"], df.loc[ntk, "seed"]])
    df.loc[ntk, "escape_step"] = ref.reindex(key).to_numpy()
    return df


def _mup_lr_drifts(df: pd.DataFrame) -> pd.DataFrame:
    """muP's best lr falls one grid step per doubling of the width (lr not scaled with
    gamma0^2 N): the loss of width N at lr_i is the real one's at lr_(i + log2(N / N0))."""
    mup = df["parameterization"] == "mup"
    grid = np.sort(df.loc[mup, "lr"].unique())
    n0 = df.loc[mup, "width"].min()
    by = df[mup].set_index(["width", "seed", "lr"])["loss"]
    idx = np.searchsorted(grid, df.loc[mup, "lr"].to_numpy())
    shift = np.round(np.log2(df.loc[mup, "width"].to_numpy() / n0)).astype(int)
    src = idx + shift
    ok = src < grid.size
    key = pd.MultiIndex.from_arrays([df.loc[mup, "width"], df.loc[mup, "seed"],
                                     grid[np.minimum(src, grid.size - 1)]])
    df.loc[mup, "loss"] = np.where(ok, by.reindex(key).to_numpy(), np.nan)
    return df


def _sweep_at_twice_lr(df: pd.DataFrame) -> pd.DataFrame:
    """The sweep trained at twice the lr its table records: each cell shows the real cell
    at 2 lr (same parameterisation, width, seed); where 2 lr is off the grid, diverged."""
    by = df.set_index(["parameterization", "width", "seed", "lr"])
    out = []
    for r in df.itertuples():
        grid = by.loc[(r.parameterization, r.width, r.seed)].index.to_numpy()
        hit = grid[np.isclose(grid, 2.0 * r.lr)]
        src = by.loc[(r.parameterization, r.width, r.seed, hit[0])] if hit.size else None
        out.append((src["loss"], src["diverged"]) if src is not None else (np.nan, True))
    return df.assign(loss=[o[0] for o in out], diverged=[bool(o[1]) for o in out])


LR_TRANSFER_WRONG = (
    WrongModel("NTK as muP", "the NTK runs escape as the muP ones do (the width scaling of "
               "the parameterisation lost)", table_edit("lr-transfer_escape.parquet", _ntk_as_mup),
               catches=("NTK: escape step growth, widest / narrowest - 1 (smallest over "
                        "runs)",)),
    WrongModel("muP lr drifts", "muP's best learning rate falls one grid step per doubling "
               "of the width (lr not scaled with gamma0^2 N: a rescaling that depends on the "
               "width)", table_edit("lr-transfer.parquet", _mup_lr_drifts),
               catches=("muP: best lr moves across widths (grid steps)",), kind="attribution"),
    WrongModel("escape x1.3", "every escape step 1.3 times the run's (a run at another speed: "
               "widths and parameterisations alike)",
               table_edit("lr-transfer_escape.parquet",
                          lambda df: df.assign(escape_step=1.3 * df["escape_step"])),
               catches=("muP escape step against the reference",), kind="clock"),
    WrongModel("sweep at lr x2", "the sweep trained at twice the learning rate its table "
               "records (the best lr's shift across widths, which a uniform factor keeps, "
               "is all the other sweep claims read)",
               table_edit("lr-transfer.parquet", _sweep_at_twice_lr),
               catches=("muP loss at a fixed lr against its pilot",), kind="clock"),
)

#: The classes of mistake that cannot occur in ``lr-transfer``, and why.
LR_TRANSFER_WRONG_NA = {
    "is-theory": "no theory curve is compared: the claims compare widths and "
                 "parameterisations of the same simulation",
    "fluctuation-size": "no finite-size prediction is compared: the claims are grid steps, "
                        "a flatness and a growth across widths",
    "temperature": "full-batch GD on a noiseless teacher: no temperature, no label noise",
    "convention": "no theory function: the best lr and the escape step are read off the "
                  "runs",
    "wrong-inputs": "no theory is built from a spectrum",
}
