"""real-data's networks beyond the paper's students: an SGD MLP and a CNN as a user trains
them, each beside a lazy baseline of the same architecture.

``net_M`` grey patches of the blurred-target task (:func:`specdyn.data.image_patches`,
``target="blur"``), a fifth held out (:meth:`~specdyn.data.RealData.split`); inputs and
targets divided by the training inputs' rms pixel standard deviation. A plain torch loop
trains, by mini-batch SGD on the squared error, an MLP (``net_depth`` ReLU hidden layers of
``net_N`` units, PyTorch's default initialisation) and a CNN (a 5 x 5 convolution to
``cnn_channels`` channels, ReLU, a 3 x 3 one, ReLU, a 3 x 3 one to the output image).

**Recorded.** Two :class:`~specdyn.measure.SpectrumTracker` per network record, at
log-spaced steps, the spectra of the first hidden layer's pre-activations (``pre1``), its
post-activations (``post1``, after the ReLU) and the second layer's pre- and
post-activations (``pre2``, ``post2``): one tracker on 1000 training inputs, one on the
held-out inputs (``capture`` switched between the two forward passes, which run under
``no_grad`` before the step's update). Beside them, per checkpoint, the first layer's
per-mode ``rho_k = lambda_k (U^T W^T W U)_kk / n`` in the data's own eigenbasis (training
and held-out sets), with ``W`` the first layer as a linear map of the patch (for the CNN:
the convolution applied to the ``D`` unit images), and the two losses.

**Lazy baselines** (student ``mlp-lazy``, ``cnn-lazy``): the same architecture from the
same initial weights, trained as ``f(x) = s (g(x) - g_0(x))`` with ``g_0`` a frozen copy of
the initial network (the initial output is exactly 0) and ``s = net_lazy_scale``, at the
step size ``lr / s^2``: the function moves at the speed of the network's own kernel at
initialisation while the weights move ``s`` times less (lazy training, Chizat, Oyallon
and Bach 2019). Recorded: the first layer's per-mode ``rho_k`` and the two losses.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from specdyn.experiments.real_data.config import BLUR_REGIMES, RealDataConfig
from specdyn.study import study

if TYPE_CHECKING:
    from specdyn.sim.protocol import DerivedSeed

#: Held-out share of the real networks' patches, and training inputs each tracker record reads.
HELDOUT, PROBE = 0.2, 1000
#: Networks trained by SGD.
ARCHITECTURES = ("mlp", "cnn")
#: The tracked layers, in order: the first layer's pre- and post-activations, the second's.
LAYERS = ("pre1", "post1", "pre2", "post2")


def spectrum_quantity(part: str, layer: str) -> str:
    """The table's name of a tracked spectrum: ``spectrum_train`` for the first layer's
    pre-activations (``pre1``), ``spectrum_train_post1`` etc. for the others."""
    return f"spectrum_{part}" if layer == "pre1" else f"spectrum_{part}_{layer}"


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


def _tracked(model: Any) -> list[Any]:
    """The modules of :data:`LAYERS`: the first two weight layers and their activations."""
    import torch

    mods = list(model)
    weights = [i for i, m in enumerate(mods) if isinstance(m, (torch.nn.Linear,
                                                               torch.nn.Conv2d))]
    return [mods[weights[0]], mods[weights[0] + 1], mods[weights[1]], mods[weights[1] + 1]]


def centred(model: Any, scale: float) -> Any:
    """``x -> scale (model(x) - model_0(x))`` with ``model_0`` a frozen copy of ``model`` as
    it is now (the lazy baseline: initial output exactly 0)."""
    import torch

    frozen = copy.deepcopy(model)
    for p in frozen.parameters():
        p.requires_grad_(False)

    class Centred(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net, self.init = model, frozen

        def forward(self, x: Any) -> Any:
            return scale * (self.net(x) - self.init(x))

    return Centred()


def _first_gram(first: Any, D: int) -> np.ndarray:
    """``W^T W / n`` (``D x D``) of the first layer as a linear map of the input (no bias)."""
    import torch

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


def _mode_rows(first: Any, data: dict[str, Any], step: int, losses: dict[str, float]
               ) -> list[dict[str, Any]]:
    """The per-mode ``rho_k`` of the first layer in each set's eigenbasis, and the losses."""
    g = _first_gram(first, data["X"].shape[1])
    rows: list[dict[str, Any]] = []
    for part, lam, u in (("train", data["lam"], data["U"]), ("heldout", data["lam_h"],
                                                              data["U_h"])):
        rho = lam * np.einsum("ik,ij,jk->k", u, g, u)
        rows += [{"quantity": f"rho_{part}", "step": step, "k": k + 1, "value": float(rho[k])}
                 for k in range(lam.size)]
        rows.append({"quantity": f"loss_{part}", "step": step, "k": 0, "value": losses[part]})
    return rows


def _sgd(arch: str, cfg: RealDataConfig, data: dict[str, Any], folder: Path, *,
         lazy: bool = False) -> pd.DataFrame:
    """Train one network (or its lazy baseline); its rows ``student, regime, step, t, k,
    quantity, value``."""
    import torch

    from specdyn.measure import SpectrumTracker
    from specdyn.schedule import Schedule
    from specdyn.sim.protocol import derive_seed

    net = _build(arch, cfg, derive_seed(cfg.seed, "real-data", arch, "init"))
    first = _tracked(net)[0]
    lr = cfg.net_lr if arch == "mlp" else cfg.cnn_lr
    model = centred(net, cfg.net_lazy_scale) if lazy else net
    if lazy:
        lr /= cfg.net_lazy_scale**2
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    x, y, xh, yh = (torch.tensor(data[k], dtype=torch.float32) for k in ("X", "Y", "Xh", "Yh"))
    probe = slice(0, min(PROBE, x.shape[0]))
    steps = Schedule.log(cfg.checkpoints).resolve(cfg.net_steps)
    trackers: dict[str, Any] = {}
    if not lazy:
        common: dict[str, Any] = {
            "modules": _tracked(net), "schedule": [int(s) for s in steps],
            "steps": cfg.net_steps, "max_samples": PROBE, "fit": False, "outliers": False,
            "policy": "block", "summary_process": False, "overwrite": True}
        trackers = {"train": SpectrumTracker(model, out=folder / arch / "train", **common),
                    "heldout": SpectrumTracker(model, out=folder / arch / "heldout",
                                               weights=False, **common)}
    gen = torch.Generator().manual_seed(derive_seed(cfg.seed, "real-data", arch, "batches"))
    rows: list[dict[str, Any]] = []
    due = set(int(s) for s in steps)
    for step in range(cfg.net_steps + 1):
        if step in due:
            losses = {}
            with torch.no_grad():  # the tracked forward passes, then the per-mode rho
                for part, (xs, ys) in (("train", (x[probe], y[probe])), ("heldout", (xh, yh))):
                    for name, trk in trackers.items():
                        trk.capture = name == part
                    losses[part] = float(0.5 * ((model(xs) - ys) ** 2).sum(1).mean())
                for trk in trackers.values():
                    trk.capture = False
            rows += _mode_rows(first, data, step, losses)
        if step == cfg.net_steps:  # close the last iteration: its record has the probes
            for trk in trackers.values():
                trk.step()
            break
        idx = torch.randint(0, x.shape[0], (cfg.net_batch,), generator=gen)
        loss = 0.5 * ((model(x[idx]) - y[idx]) ** 2).sum(1).mean()
        if not torch.isfinite(loss):
            raise FloatingPointError(f"real-data: the {arch}{' (lazy)' if lazy else ''} "
                                     f"diverged at SGD step {step} (lr = {lr:g}); lower "
                                     "net_lr / cnn_lr")
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        for trk in trackers.values():
            trk.step()
    names = dict(zip([n for n, m in model.named_modules()
                      if any(m is t for t in _tracked(net))], LAYERS, strict=True))
    for part, trk in trackers.items():
        trk.close()
        t = trk.table()
        eig = t[(t.quantity == "activation_eigenvalue") & t.layer.isin(list(names))]
        rows += [{"quantity": spectrum_quantity(part, names[str(r.layer)]), "step": int(r.step),
                  "k": int(r.rank), "value": float(r.value)} for r in eig.itertuples()]
    df = pd.DataFrame(rows)
    return df.assign(task="net", student=f"{arch}-lazy" if lazy else arch, regime="sgd",
                     t=df.step.astype(float))


def net_data(cfg: RealDataConfig) -> tuple[dict[str, Any], Any, Any]:
    """The networks' data (scaled training and held-out arrays, each set's ``lambda_k`` and
    eigenbasis), and the two parts (:class:`~specdyn.data.RealData`)."""
    from specdyn.data import decompose_data as decompose
    from specdyn.data import image_patches

    full = image_patches(cfg.patch, cfg.net_M, seed=cfg.seed, target="blur", blur=cfg.blur)
    train, held = full.split(HELDOUT, seed=cfg.seed)
    assert train.Y is not None and held.Y is not None
    scale = float(np.sqrt(np.mean(np.var(train.X, axis=0))))
    dec_tr = decompose(train.X / scale, train.Y / scale)
    dec_ho = decompose(held.X / scale, held.Y / scale)
    # per-mode rho over the kept modes (the patch-mean direction has no variance)
    data = {"X": train.X / scale, "Y": train.Y / scale, "Xh": held.X / scale,
            "Yh": held.Y / scale, "lam": np.asarray(dec_tr.lam), "U": np.asarray(dec_tr.U),
            "lam_h": np.asarray(dec_ho.lam), "U_h": np.asarray(dec_ho.U), "scale": scale,
            "dec_h": dec_ho}
    return data, train, held


def real_networks(cfg: RealDataConfig, folder: Path
                  ) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """The MLP and the CNN on the blurred-target patches and their lazy baselines (the
    module docstring): their rows of ``real-data.parquet`` (task ``net``) with the theory
    and the exact reference on the same training data (student ``linear``, regimes IIIa,
    IIIb, lazy), the data's fits and a summary; the trackers' folders in ``folder``."""
    from specdyn.measure import data_exponents

    data, train, held = net_data(cfg)
    frames = [_sgd(arch, cfg, data, folder, lazy=lazy) for arch in ARCHITECTURES
              for lazy in (False, True) if not lazy or arch in cfg.net_lazy]
    # the theory and the exact reference on the networks' own (scaled) training data
    st = study(data["X"], data["Y"], kmax=cfg.kmax_patches, regimes=BLUR_REGIMES,
               checkpoints=cfg.checkpoints, t_factor=cfg.t_factor, seed=cfg.seed)
    frames.append(st.dynamics_table().assign(task="net"))
    dec_ho = data["dec_h"]
    held_fits = pd.DataFrame(data_exponents(dec_ho.lam, dec_ho.mu, 2, cfg.kmax_patches,
                                            seed=cfg.seed).rows()).assign(task="net-heldout")
    summary = {"M_train": train.M, "M_heldout": held.M, "input_scale": data["scale"],
               "preprocessing": train.preprocessing, "theory": st.summary()}
    return (pd.concat(frames, ignore_index=True),
            pd.concat([st.fits_table().assign(task="net"), held_fits], ignore_index=True),
            summary)
