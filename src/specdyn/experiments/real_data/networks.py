"""real-data's networks beyond the paper's students: an SGD MLP and a CNN, as a user trains
them, and the ReLU student's lazy runs (the paper's gamma0 and a width series).

**Real networks.** ``net_M`` grey patches of the blurred-target task
(:func:`specdyn.data.image_patches`, ``target="blur"``), a fifth held out
(:meth:`~specdyn.data.RealData.split`); inputs and targets divided by the training
inputs' rms pixel standard deviation. A plain torch loop trains, by mini-batch SGD on
the squared error, an MLP (``net_depth`` ReLU hidden layers of ``net_N`` units,
PyTorch's default initialisation) and a CNN (a 5 x 5 convolution to ``cnn_channels``
channels, ReLU, a 3 x 3 one, ReLU, a 3 x 3 one to the output image). Two
:class:`~specdyn.measure.SpectrumTracker` per network record the first hidden layer's
spectrum (its pre-activations) at log-spaced steps: one on 1000 training inputs, one on
the held-out inputs (``capture`` switched between the two forward passes, which run
under ``no_grad`` before the step's update). Beside them, per checkpoint, the first
layer's per-mode ``rho_k = lambda_k (U^T W^T W U)_kk / n`` in the data's own eigenbasis
(training and held-out sets), with ``W`` the first layer as a linear map of the patch
(for the CNN: the convolution applied to the ``D`` unit images), and the two losses.

**ReLU lazy runs.** The ReLU student (:func:`specdyn.sim.train_two_layer`, mean-field,
full batch) on the shifted patches at the paper's lazy ``gamma0 = 0.5 S / theta_1``, and
at specdyn's ``0.05 S / theta_1`` for each width of ``relu_widths``: the exponent drift
that the linear theory lacks shrinks with the width.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from specdyn.experiments.real_data.config import (
    BLUR_REGIMES,
    REGIMES,
    RELU_LAZY,
    RELU_LAZY_PAPER,
    RealDataConfig,
)
from specdyn.study import study

if TYPE_CHECKING:
    from specdyn.sim.protocol import DerivedSeed

#: Held-out share of the real networks' patches, and training inputs each tracker record reads.
HELDOUT, PROBE = 0.2, 1000
#: Networks trained by SGD.
ARCHITECTURES = ("mlp", "cnn")


def _build(arch: str, cfg: RealDataConfig, seed: DerivedSeed) -> Any:
    import torch

    with torch.random.fork_rng(devices=[]):  # the user's global generator is left alone
        torch.manual_seed(seed)
        if arch == "mlp":
            D = cfg.patch**2
            layers: list[Any] = []
            width_in = D
            for _ in range(cfg.net_depth):
                layers += [torch.nn.Linear(width_in, cfg.net_N), torch.nn.ReLU()]
                width_in = cfg.net_N
            return torch.nn.Sequential(*layers, torch.nn.Linear(width_in, D))
        c = cfg.cnn_channels
        return torch.nn.Sequential(
            torch.nn.Unflatten(1, (1, cfg.patch, cfg.patch)),
            torch.nn.Conv2d(1, c, 5, padding=2), torch.nn.ReLU(),
            torch.nn.Conv2d(c, c, 3, padding=1), torch.nn.ReLU(),
            torch.nn.Conv2d(c, 1, 3, padding=1), torch.nn.Flatten())


def _first_layer(model: Any) -> Any:
    import torch

    return next(m for m in model.modules() if isinstance(m, (torch.nn.Linear, torch.nn.Conv2d)))


def _first_gram(model: Any, D: int) -> np.ndarray:
    """``W^T W / n`` (``D x D``) of the first layer as a linear map of the input (no bias)."""
    import torch

    first = _first_layer(model)
    with torch.no_grad():
        if isinstance(first, torch.nn.Linear):
            w = first.weight.double()
        else:  # the convolution of each unit image: column j of the linear map
            side = int(round(D**0.5))
            eye = torch.eye(D, dtype=first.weight.dtype).reshape(D, 1, side, side)
            out = torch.nn.functional.conv2d(eye, first.weight, None, first.stride,
                                             first.padding)
            w = out.reshape(D, -1).T.double()
        return (w.T @ w / w.shape[0]).numpy()


def _sgd(arch: str, cfg: RealDataConfig, data: dict[str, Any], folder: Path
         ) -> pd.DataFrame:
    """Train one network; its rows ``student, regime, step, t, k, quantity, value``."""
    import torch

    from specdyn.measure import SpectrumTracker
    from specdyn.schedule import Schedule
    from specdyn.sim.protocol import derive_seed

    model = _build(arch, cfg, derive_seed(cfg.seed, "real-data", arch, "init"))
    lr = cfg.net_lr if arch == "mlp" else cfg.cnn_lr
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    x, y, xh, yh = (torch.tensor(data[k], dtype=torch.float32) for k in ("X", "Y", "Xh", "Yh"))
    probe = slice(0, min(PROBE, x.shape[0]))
    steps = Schedule.log(cfg.checkpoints).resolve(cfg.net_steps)
    first = _first_layer(model)
    common: dict[str, Any] = {
        "modules": [first], "schedule": [int(s) for s in steps], "steps": cfg.net_steps,
        "max_samples": PROBE, "fit": False, "outliers": False, "policy": "block",
        "summary_process": False, "overwrite": True}
    tr = SpectrumTracker(model, out=folder / arch / "train", **common)
    ho = SpectrumTracker(model, out=folder / arch / "heldout", weights=False, **common)
    gen = torch.Generator().manual_seed(derive_seed(cfg.seed, "real-data", arch, "batches"))
    lam_tr, u_tr, lam_ho, u_ho = data["lam"], data["U"], data["lam_h"], data["U_h"]
    D = lam_tr.size
    rows: list[dict[str, Any]] = []
    due = set(int(s) for s in steps)
    for step in range(cfg.net_steps + 1):
        if step in due:
            with torch.no_grad():  # the two tracked forward passes, then the per-mode rho
                tr.capture, ho.capture = True, False
                l_tr = float(0.5 * ((model(x[probe]) - y[probe]) ** 2).sum(1).mean())
                tr.capture, ho.capture = False, True
                l_ho = float(0.5 * ((model(xh) - yh) ** 2).sum(1).mean())
                tr.capture = ho.capture = False
            g = _first_gram(model, x.shape[1])
            for part, lam, u, loss in (("train", lam_tr, u_tr, l_tr),
                                       ("heldout", lam_ho, u_ho, l_ho)):
                rho = lam * np.einsum("ik,ij,jk->k", u, g, u)
                rows += [{"quantity": f"rho_{part}", "step": step, "k": k + 1,
                          "value": float(rho[k])} for k in range(D)]
                rows.append({"quantity": f"loss_{part}", "step": step, "k": 0, "value": loss})
        if step == cfg.net_steps:  # close the last iteration: its record has the probes
            tr.step()
            ho.step()
            break
        idx = torch.randint(0, x.shape[0], (cfg.net_batch,), generator=gen)
        loss = 0.5 * ((model(x[idx]) - y[idx]) ** 2).sum(1).mean()
        if not torch.isfinite(loss):
            raise FloatingPointError(f"real-data: the {arch} diverged at SGD step {step} "
                                     f"(lr = {lr:g}); lower net_lr / cnn_lr")
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        tr.step()
        ho.step()
    tr.close()
    ho.close()
    for part, trk in (("train", tr), ("heldout", ho)):
        t = trk.table()
        eig = t[t.quantity == "activation_eigenvalue"]
        rows += [{"quantity": f"spectrum_{part}", "step": int(r.step), "k": int(r.rank),
                  "value": float(r.value)} for r in eig.itertuples()]
    df = pd.DataFrame(rows)
    return df.assign(task="net", student=arch, regime="sgd", t=df.step.astype(float))


def real_networks(cfg: RealDataConfig, folder: Path
                  ) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """The MLP and the CNN on the blurred-target patches (the module docstring): their rows
    of ``real-data.parquet`` (task ``net``) with the theory and the exact reference on the
    same training data (student ``linear``, regimes IIIa, IIIb, lazy), the data's fits
    and a summary; the trackers' folders in ``folder``."""
    from specdyn.data import decompose_data as decompose
    from specdyn.data import image_patches
    from specdyn.measure import data_exponents

    full = image_patches(cfg.patch, cfg.net_M, seed=cfg.seed, target="blur", blur=cfg.blur)
    train, held = full.split(HELDOUT, seed=cfg.seed)
    assert train.Y is not None and held.Y is not None
    scale = float(np.sqrt(np.mean(np.var(train.X, axis=0))))
    dec_tr = decompose(train.X / scale, train.Y / scale)
    dec_ho = decompose(held.X / scale, held.Y / scale)
    # per-mode rho over the kept modes (the patch-mean direction has no variance)
    data = {"X": train.X / scale, "Y": train.Y / scale, "Xh": held.X / scale,
            "Yh": held.Y / scale, "lam": np.asarray(dec_tr.lam), "U": np.asarray(dec_tr.U),
            "lam_h": np.asarray(dec_ho.lam), "U_h": np.asarray(dec_ho.U)}
    frames = [_sgd(arch, cfg, data, folder) for arch in ARCHITECTURES]
    # the theory and the exact reference on the networks' own (scaled) training data
    st = study(data["X"], data["Y"], kmax=cfg.kmax_patches, regimes=BLUR_REGIMES,
               checkpoints=cfg.checkpoints, t_factor=cfg.t_factor, seed=cfg.seed)
    frames.append(st.dynamics_table().assign(task="net"))
    held_fits = pd.DataFrame(data_exponents(dec_ho.lam, dec_ho.mu, 2, cfg.kmax_patches,
                                            seed=cfg.seed).rows()).assign(task="net-heldout")
    summary = {"M_train": train.M, "M_heldout": held.M, "input_scale": scale,
               "preprocessing": train.preprocessing, "theory": st.summary()}
    return (pd.concat(frames, ignore_index=True),
            pd.concat([st.fits_table().assign(task="net"), held_fits], ignore_index=True),
            summary)


def relu_lazy_runs(cfg: RealDataConfig, X: np.ndarray, Y: np.ndarray, kmax: int
                   ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ReLU student on one task: feature learning at ``relu_N`` (rows of
    ``real-data.parquet``) and its lazy runs (rows ``regime, N, step, t, k, quantity,
    value`` of ``real-data_widths.parquet``): the paper's lazy ``gamma0`` at ``relu_N``
    (``lazy-paper``) and specdyn's at each of ``relu_widths`` (``lazy``)."""
    common: dict[str, Any] = {  # the ReLU student is compared with the effective theory
        "kmax": kmax, "checkpoints": cfg.checkpoints, "t_factor": cfg.t_factor,
        "train": ("relu",), "seed": cfg.seed, "drop_constant": True, "progress": True,
        "reference": False}
    st = study(X, Y, regimes={"feature-learning": REGIMES["feature-learning"],
                              "lazy-paper": RELU_LAZY_PAPER}, relu_N=cfg.relu_N, **common)
    dyn = st.dynamics_table()
    relu = dyn[dyn.student == "relu"]
    main = relu[relu.regime == "feature-learning"].assign(task="patches")
    runs = [relu[relu.regime == "lazy-paper"].assign(N=cfg.relu_N)]
    for N in cfg.relu_widths:
        w = study(X, Y, regimes={"lazy": RELU_LAZY}, relu_N=N, **common).dynamics_table()
        runs.append(w[w.student == "relu"].assign(N=N))
    widths = pd.concat(runs, ignore_index=True)
    widths = widths[widths.quantity.isin(["rho_sim", "rho_theory"])]
    return (main[["task", *dyn.columns]],
            widths[["regime", "N", "step", "t", "k", "quantity", "value"]].reset_index(
                drop=True))
