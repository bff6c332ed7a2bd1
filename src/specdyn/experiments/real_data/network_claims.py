"""real-data's claims on its networks: the ReLU student and its lazy controls, and the SGD
MLP and CNN with their lazy baselines; tolerances and their sources as in
:mod:`~specdyn.experiments.real_data.claims`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from specdyn.experiments.real_data.config import RealDataConfig
from specdyn.experiments.real_data.readings import (
    end_after_plateau,
    end_tolerance,
    exponents,
    fit,
    loss_fraction,
    nanmax,
    rms_level,
    series,
    transient_vs_theory,
    wide,
)
from specdyn.experiments.real_data.students import ZERO_OUTPUT
from specdyn.runs.claims import OWN, Claim, sized, within

#: ReLU student (N = 128) against the effective theory: max_t |a_relu - a_effective|.
#: Seeds 1-5: 0.2388 0.2224 0.2024 0.2279 0.1721.
RELU_EXPONENT_TOL = 0.32
#: The same on the blurred target, Region IIIa. Seeds 1-5: 0.2837 0.2794 0.3008 0.2332
#: 0.2808.
RELU_BLUR_TOL = 0.38
#: Lazy ReLU from a zero initial output: max over the widths of (its exponent drift - the
#: effective theory's). Seeds 1-5: 0.0501 0.0426 0.0169 0.0245 0.0017.
ZERO_DRIFT_TOL = 0.11
#: Lazy ReLU from a zero initial output: the distance from the effective theory (rms over
#: all modes of log rho_k / rho_k^theory, max over time) over its initial Wishart size
#: sqrt(2/(N/2)), geometric mean over the widths, predicted 1: within this factor. Seeds
#: 1-5, log of the ratio: 0.020 0.021 0.022 -0.072 0.063 (band -0.22..0.24; the random
#: start: 2.0-2.6 in log).
ZERO_LEVEL_FACTOR = 1.3
#: The random initial output's drift over the zero output's, at every width, at least this
#: (derived: two thirds of the drift is the initial output's; seeds 1-5: 8.4-20.1 at the
#: worst width).
F0_RATIO_MIN = 3.0
#: ReLU at the paper's lazy gamma0: |drift_network - drift_effective_theory|.
#: Seeds 1-5: -0.0442 -0.0357 -0.0969 -0.0915 -0.1120.
PAPER_LAZY_TOL = 0.22
#: SGD MLP: |a(0) - alpha| of the first hidden layer (train and held-out, their own alpha).
#: Seeds 1-5: 0.0146 0.0076 0.0396 0.0411 0.0463.
MLP_START_TOL = 0.099
#: The networks' first-layer transient against the two-layer theory (exact reference,
#: Region IIIb) at matched loss fraction: the size ratio and the log10 of the loss
#: fractions at the peaks, as (low, high) bands from seeds 1-5 (rounded outwards). Size:
#: MLP 0.1589 0.1668 0.1532 0.1615 0.1724; CNN 0.0661 0.0822 0.1294 0.0544 0.0329 (its
#: band's lower end, -0.10, is no bound: a ratio is >= 0). Time (MLP): -0.3427 -0.2547
#: -0.3571 -0.3100 -0.2393.
TRANSIENT_SIZE = {"mlp": (0.13, 0.20), "cnn": (0.0, 0.25)}
TRANSIENT_TIME = {"mlp": (-0.53, -0.08)}
#: Held-out loss over training loss at the end, (low, high) from seeds 1-5: MLP 1.7014
#: 1.5486 1.6843 1.7344 1.6481; CNN 0.9273 0.9131 0.9852 0.9149 0.9777.
HELDOUT_RATIO = {"mlp": (1.3, 2.0), "cnn": (0.79, 1.1)}
#: MLP: max_t |(a_ho - a_tr)(t) - (a_ho - a_tr)(0)| of the second layer's post-activation
#: spectrum. Seeds 1-5: 0.0463 0.0347 0.0559 0.0625 0.0366.
DEEP_HELDOUT_TOL = 0.099
#: MLP: the second layer's transient over the first's (tracker spectra, training inputs),
#: (low, high) from seeds 1-5: 2.5040 2.4852 2.7995 2.7210 2.4786.
DEEPER_RATIO = (1.9, 3.3)
#: Lazy baselines: max_t |a(t) - a(0)| of the first layer. Seeds 1-5: MLP 0.0006 0.0015
#: 0.0002 0.0013 0.0005; CNN 0.0002 0.0006 0.0016 0.0002 0.0001.
LAZY_NET_TOL = {"mlp": 0.0031, "cnn": 0.0034}
#: A lazy baseline must learn: its loss fraction at the end at most this (derived: half).
LAZY_LEARNS = 0.5


def zero_output_readings(widths: pd.DataFrame, kmax: int) -> pd.DataFrame:
    """Per width of the lazy series: the drifts of both starts, the theory's, and the zero
    output's distance from the theory in units of its initial Wishart size for ``N/2``
    units (:func:`~specdyn.experiments.real_data.readings.rms_level`)."""
    from specdyn.plot.real_data import lazy_drift

    dr = lazy_drift(widths, kmax)
    rows = []
    for N in sorted(int(n) for n in dr.N[dr.regime == ZERO_OUTPUT]):
        z = dr[(dr.regime == ZERO_OUTPUT) & (dr.N == N)].iloc[0]
        r = dr[(dr.regime == "lazy") & (dr.N == N)]
        g = widths[(widths.regime == ZERO_OUTPUT) & (widths.N == N)]
        rows.append({"N": N, "drift_zero": z.drift_sim, "drift_theory": z.drift_theory,
                     "drift_random": float(r.drift_sim.iloc[0]) if len(r) else np.nan,
                     "level_ratio": rms_level(wide(g, "rho_sim")[1], wide(g, "rho_theory")[1],
                                              N / 2)})
    return pd.DataFrame(rows, columns=["N", "drift_zero", "drift_theory", "drift_random",
                                       "level_ratio"])


def relu_claims(dyn: pd.DataFrame, widths: pd.DataFrame, fits: pd.DataFrame,
                cfg: RealDataConfig) -> list[Claim]:
    from specdyn.plot.real_data import lazy_drift

    kr = cfg.relu_kmax
    s = series(dyn, "relu-patches", "feature-learning", "relu")
    d = exponents(s["rho_sim"], kr) - exponents(s["rho_theory"], kr)
    b = series(dyn, "relu-blur", "IIIa", "relu")
    a_b, a_eff = exponents(b["rho_sim"], kr), exponents(b["rho_theory"], kr)
    db = a_b - a_eff if a_b.shape == a_eff.shape else np.full(1, np.nan)
    alpha, ab = fit(fits, "relu-blur", "alpha"), fit(fits, "relu-blur", "alpha_plus_beta")
    tol_end = end_tolerance(ab - alpha)
    dev, slope = end_after_plateau(b["t"], a_b, ab, tol_end)
    zr = zero_output_readings(widths, kr)
    excess = (zr.drift_zero - zr.drift_theory).to_numpy(float)
    ratios = zr.level_ratio.to_numpy(float)
    level = float(np.exp(np.mean(np.log(ratios)))) if ratios.size else float("nan")
    f0 = (zr.drift_random / zr.drift_zero).to_numpy(float)
    dr = lazy_drift(widths, kr)
    paper = dr[dr.regime == "lazy-paper"]
    gap = float(paper.drift_sim.iloc[0] - paper.drift_theory.iloc[0]) if len(paper) \
        else float("nan")
    name_zero = "ReLU, lazy, zero initial output: the exponent drift is the effective theory's"
    name_level = ("ReLU, lazy, zero initial output: its distance from the theory is its "
                  "width's Wishart level")
    name_fl = "patches, ReLU, feature learning: exponent follows the effective theory"
    return [
        within(name_fl, float(np.max(np.abs(d))) if d.size else float("nan"), 0.0,
               RELU_EXPONENT_TOL, source="core Sec. 3.3", key="relu-fl-exponent",
               note="max over checkpoints of |a_ReLU - a_effective| (effective linear theory "
                    "gamma0/c1, c1 = 1/2; the exponent rises by 1.7 in between, 5 times the "
                    "tolerance); tolerance from seeds 1-5"),
        within("blurred patches, ReLU, Region IIIa: exponent follows the effective theory",
               nanmax(np.abs(db)), 0.0, RELU_BLUR_TOL, source="core Sec. 3.3",
               key="relu-blur-exponent",
               note="max over checkpoints of |a_ReLU - a_effective| on the blurred target "
                    "(beta about 0.85: the end region can be told), sigma_w = 0.01, gamma0 = "
                    "0.3 S/theta_1 (the effective theory ends in Region IIIa); the exponent "
                    "rises by about 2.3 and falls back by 1.5; tolerance from seeds 1-5"),
        within("blurred patches, ReLU, Region IIIa: final exponent near alpha + beta (after a "
               "plateau)", dev, -tol_end, tol_end, source="core Sec. 3.3",
               key="relu-blur-end",
               rule="tolerance 0.8 |beta|/4 of the ReLU data's beta; NaN unless the slope over "
                    "the last half decade is at most the tolerance per decade",
               disputed="convergence study in t, seen before this claim was judged: at 3 "
                        "learning times of mode kmax (the run's end) the exponent still falls "
                        "by 0.42-0.53 per decade (no plateau, seeds 1-5); run 10 times longer "
                        "(seed 1) it reaches 1.72 (alpha + beta = 1.92, the effective theory's "
                        "end 1.83) still falling by 0.13 per decade, while the training loss "
                        "goes below the linear least-squares floor: on real data the ReLU "
                        "network keeps fitting what no linear map can, and its representation "
                        "keeps moving past the linear theory's end",
               note=f"exponent at the last checkpoint minus the ReLU data's fitted alpha + "
                    f"beta, judged only after a plateau (slope over the last half decade "
                    f"{slope:.3g} per decade; bound {tol_end:.3g})"),
        within(name_zero, nanmax(excess), -np.inf, ZERO_DRIFT_TOL, source="core Eq. (34)",
               key="relu-lazy-zero-drift", partner=name_level,
               note="at gamma0 = 0.05 S/theta_1, from antisymmetric pairs (W = [W0; W0], "
                    "A = [A0; -A0]: the initial output is exactly 0, as the theory's): max "
                    "over the widths of max_t |a(t) - a(0)| minus the effective theory's "
                    "(0.007); the lazy regime keeps alpha_eff at alpha (Eq. 34) up to the "
                    "theory's own drift; tolerance from seeds 1-5"),
        sized(name_level, level, 1.0, ZERO_LEVEL_FACTOR, source="core Eq. (34)",
              key="relu-lazy-zero-level",
              predicted_by="the initial fluctuation of N/2 independent units, sqrt(2/(N/2)) "
                           "in log rho_k, closed form; factor from seeds 1-5",
              note="per width, max over checkpoints of the rms over all modes of log rho_k / "
                   "rho_k^theory, over sqrt(2/(N/2)); geometric mean over the widths: in the "
                   "lazy regime the kernel stays at its initialisation, so the distance stays "
                   "at its initial size (a network equal to its theory gives 0, one with the "
                   "fluctuation of N units 0.71, the random start 7-14)"),
        within("ReLU, lazy, random initial output: the drift is the initial output's",
               float(np.min(f0)) if f0.size and np.isfinite(f0).all() else float("nan"),
               F0_RATIO_MIN, np.inf, source=OWN, key="relu-f0-effect", partner=name_level,
               note="min over the widths of the exponent drift from the engine's random start "
                    "over the drift from the zero initial output (same width, same kernel "
                    "statistics): the mean-field student's random output of rms ~ 1/(gamma0 "
                    "sqrt N) is unlearned by moving W in every direction; tolerance from "
                    "seeds 1-5"),
        within("ReLU at the paper's lazy gamma0: drift follows the effective theory", gap,
               -PAPER_LAZY_TOL, PAPER_LAZY_TOL, source="core App. G", key="relu-paper-lazy",
               note="drift of the network minus the effective theory's at gamma0 = 0.5 "
                    "S/theta_0 (Appendix G's lazy ReLU, only mildly lazy: the theory's own "
                    "drift is 0.3, 1.4 times the tolerance: a network that does not drift "
                    "fails); random start, as the paper's; tolerance from seeds 1-5"),
    ]


def _spectrum_exponent(n: pd.DataFrame, q: str, student: str, kp: int) -> np.ndarray:
    """A tracker spectrum's exponent over ranks ``2..min(kp, ranks - 1)`` (NaN if < 4)."""
    _, v = wide(n, q, student=student)
    kk = min(kp, v.shape[1] - 1) if v.ndim == 2 else 0
    return exponents(v, kk) if kk >= 4 else np.full(1, np.nan)


def _band(name: str, value: float, band: tuple[float, float], **kw: object) -> Claim:
    return within(name, value, band[0], band[1], **kw)  # type: ignore[arg-type]


# the CNN's two claims hold on a constant table (a rise of 0 is in its band, a loss ratio of
# 1 too): their partner is the MLP's transient, which a constant table fails


def sgd_claims(dyn: pd.DataFrame, fits: pd.DataFrame, cfg: RealDataConfig) -> list[Claim]:
    """The SGD MLP and CNN and their lazy baselines (task ``net``; a baseline not in
    ``cfg.net_lazy`` is not run: its claim is ``full_only``)."""
    kp, lazy_archs = cfg.kmax_patches, cfg.net_lazy
    n = dyn[dyn.task == "net"]
    th = series(dyn, "net", "IIIb")
    a_th = exponents(th["rho_reference"], kp)
    f_th = loss_fraction(th["loss_reference"])
    alpha, alpha_ho = fit(fits, "net", "alpha"), fit(fits, "net-heldout", "alpha")
    b = fit(fits, "net", "alpha_plus_beta") - alpha
    out: list[Claim] = []
    read = {}
    for arch in ("mlp", "cnn"):
        a_tr = exponents(wide(n, "rho_train", student=arch)[1], kp)
        _, l_tr = wide(n, "loss_train", student=arch)
        _, l_ho = wide(n, "loss_heldout", student=arch)
        size, time = transient_vs_theory(a_tr, loss_fraction(l_tr), a_th, f_th)
        ratio = float(l_ho[-1, 0] / l_tr[-1, 0]) if l_tr.size and l_ho.shape == l_tr.shape \
            else float("nan")
        lz = exponents(wide(n, "rho_train", student=f"{arch}-lazy")[1], kp)
        _, l_lz = wide(n, "loss_train", student=f"{arch}-lazy")
        learned = loss_fraction(l_lz)[-1] <= LAZY_LEARNS if l_lz.size else False
        read[arch] = (a_tr, size, time, ratio, nanmax(np.abs(lz - lz[0])) if learned
                      else float("nan"))
    a_tr = read["mlp"][0]
    a_ho = exponents(wide(n, "rho_heldout", student="mlp")[1], kp)
    name_size = "MLP: first-layer transient against the two-layer theory, at matched loss"
    out.append(within(
        "MLP: the first hidden layer starts at the data's alpha",
        float(max(abs(a_tr[0] - alpha), abs(a_ho[0] - alpha_ho))), 0.0, MLP_START_TOL,
        source="core Eq. (17)", key="mlp-start", sanity=True,
        revised="after its values were seen: an expected claim demoted to a sanity check "
                "(forced by the initialisation)", revised_how="restated",
        note="a sanity check (true at t = 0 for any isotropic initialisation): max of |a(0) - "
             "alpha| on the training and on the held-out patches, each against its own "
             "data's alpha (per-mode rho_k of the first layer, PyTorch's default "
             "initialisation); tolerance from seeds 1-5"))
    for arch, label in (("mlp", "MLP"), ("cnn", "CNN")):
        _, size, time, ratio, lazy = read[arch]
        nm = name_size if arch == "mlp" else f"{label}: first-layer transient against the " \
            "two-layer theory, at matched loss"
        out.append(_band(
            nm, size, TRANSIENT_SIZE[arch], source=OWN, key=f"{arch}-transient-size",
            partner="" if arch == "mlp" else name_size, aspect="size",
            note="(max_t a - a(0)) of the first layer's per-mode exponent over the same for "
                 "the two-layer linear theory (exact reference, Region IIIb) on the same "
                 "training patches, each peak found on its own clock of the loss fraction "
                 "still to learn: the measured ratio is the finding (a network as the theory: "
                 "1; a lazy one: 0); band from seeds 1-5"))
        if arch == "mlp":
            out.append(_band(
                f"{label}: its transient peaks at the theory's share of the loss learned",
                time, TRANSIENT_TIME[arch], source=OWN, key=f"{arch}-transient-time",
                partner=name_size,
                note="log10 of the loss fraction (loss / initial loss) at the network's peak "
                     "exponent over that at the two-layer theory's peak (Region IIIb; 0: "
                     "the same share learned); band from seeds 1-5"))
        out.append(_band(
            f"{label}: held-out loss over training loss at the end", ratio,
            HELDOUT_RATIO[arch], source=OWN, key=f"{arch}-heldout-loss",
            # the MLP's too: at --full its band reaches down to 1.01, and a constant table
            # (each loss its median over the run) gives 1.03 there
            partner=name_size,
            note="the loss on the held-out fifth over the loss on 1000 training patches, at "
                 "the last SGD step (a quantity nonlinear in x: a held-out table that is "
                 "really the training one gives 1); band from seeds 1-5"))
        out.append(within(
            f"{label} lazy baseline (zero initial output): the first layer stays", lazy, 0.0,
            LAZY_NET_TOL[arch], source="core Eq. (34)", key=f"{arch}-lazy-stays",
            partner=name_size, full_only=arch not in lazy_archs,
            note=f"the same architecture and initial weights trained as s (g(x) - g_0(x)), "
                 f"s = 100, at lr / s^2: max_t |a(t) - a(0)| of the first layer's per-mode "
                 f"exponent, NaN unless its loss falls below {LAZY_LEARNS:g} of its start (a "
                 "baseline that does not learn shows nothing); tolerance from seeds 1-5"))
    pre1 = _spectrum_exponent(n, "spectrum_train", "mlp", kp)
    pre2 = _spectrum_exponent(n, "spectrum_train_pre2", "mlp", kp)
    deeper = ((nanmax(pre2) - pre2[0]) / (nanmax(pre1) - pre1[0])
              if pre1.size > 1 and pre2.size > 1 else float("nan"))
    post_tr = _spectrum_exponent(n, "spectrum_train_post2", "mlp", kp)
    post_ho = _spectrum_exponent(n, "spectrum_heldout_post2", "mlp", kp)
    diff = post_ho - post_tr if post_ho.shape == post_tr.shape else np.full(1, np.nan)
    slope = end_after_plateau(wide(n, "rho_train", student="mlp")[0], a_tr, alpha + b / 2,
                              end_tolerance(b))
    out += [
        _band("MLP: the second layer steepens more than the first", deeper, DEEPER_RATIO,
              source=OWN, key="mlp-deeper", partner=name_size,
              note="the transient (max_t a - a(0)) of the second hidden layer's pre-activation "
                   "spectrum over the first's (the trackers' spectra on 1000 training inputs, "
                   "ranks 2..kmax): the reshaping grows with depth; band from seeds 1-5"),
        within("MLP: the second layer's held-out spectrum follows the training one",
               nanmax(np.abs(diff - diff[0])), 0.0, DEEP_HELDOUT_TOL, source=OWN,
               key="mlp-heldout-deep", partner=name_size,
               note="max over checkpoints of |(a_heldout - a_train)(t) - (a_heldout - "
                    "a_train)(0)| of the second hidden layer's post-activation spectrum (two "
                    "ReLUs deep: nonlinear in x): the reshaping is the representation's, not "
                    "the training sample's; tolerance from seeds 1-5"),
        within("MLP: final exponent at the theory's end (alpha + beta/2, after a plateau)",
               slope[0], -end_tolerance(b), end_tolerance(b), source=OWN, key="mlp-end",
               rule="in [-0.8 |beta|/4, 0.8 |beta|/4] (beta of the data)",
               disputed="own claim reported as failing, seen in runs before it was written: "
                        "after its transient the SGD MLP's first layer returns toward alpha: "
                        "at the quick size it ends 0.20-0.25 below alpha + beta/2 (seeds 1-5) "
                        "and still falls by 0.11-0.23 per decade of steps (above the bound at "
                        "seeds 1 and 4); at --full it was still falling",
               note=f"exponent at the last SGD step minus the data's alpha + beta/2, judged "
                    f"only after a plateau (slope over the last half decade {slope[1]:.3g} "
                    f"per decade; bound {end_tolerance(b):.3g}); tolerance 0.8 |beta|/4",
               revised="after the --full value was seen: tolerance 0.2 -> 0.8 |beta|/4 and "
                       "the end judged only after a plateau (it held at --full at -0.17 "
                       "while still falling)", revised_how="restated"),
    ]
    return out
