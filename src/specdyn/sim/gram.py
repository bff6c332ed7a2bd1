"""Gram-space engine of the two-layer linear network (used by :mod:`specdyn.sim.linear`).

Notation (``docs/linear-simulation.md``): ``f(x) = A^T W x / (gamma0 N)``, ``W`` is
``N x D``, ``A`` is ``N x P``; ``Gw = W^T W/N``, ``Ga = A^T A/N``, ``Gwa = W^T A/N``;
data statistics ``Sigma = X^T X/M`` (``D x D``), ``C = X^T Y/M`` (``D x P``),
``Syy = Y^T Y/M`` (``P x P``). With learning rate ``nu = N`` and step ``dt``,
one full-batch GD step is ``W' = W + c A G^T``, ``A' = A + c W G`` with
``c = dt/gamma0`` and ``G = C - Sigma Gwa/gamma0``, which closes on the Grams.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import scipy.sparse as sp
from scipy.integrate import solve_ivp

from specdyn import _validate as v
from specdyn._torch import to_numpy
from specdyn.measure.spectra import decompose, symmetric_eigenvalues
from specdyn.sim.divergence import Divergence, Watch, dt_advice
from specdyn.sim.protocol import DerivedSeed, Engine, EngineDefaults, StreamLayout, derive_seed
from specdyn.sim.registry import engine as register_engine
from specdyn.sim.trajectory import DIAGONALS
from specdyn.theory.reference import gram_flow_rhs

if TYPE_CHECKING:
    from specdyn.data.teacher import PowerLawTeacher

__all__ = ["GramEngine", "GramState", "GramWork", "Grams", "Stats", "example_data",
           "example_stats", "initial_grams", "loss_divergence", "loss_from_grams",
           "make_gd_step", "solve_flow_diagonal", "solve_flow_full", "spectrum",
           "teacher_diagonals", "watched_loss", "weight_chunks", "weight_generator",
           "weight_grams"]

Grams = tuple[np.ndarray, np.ndarray, np.ndarray]  # (Gw, Ga, Gwa)

_WEIGHT_CHUNK = 2048  # rows of [W A] drawn per call: same stream for both engines


@dataclass(frozen=True)
class Stats:
    """Float64 host statistics of the training data (or of the population)."""

    sigma: np.ndarray  # D x D
    c: np.ndarray  # D x P
    syy: np.ndarray  # P x P
    sigma_half: np.ndarray  # symmetric square root of sigma

    @classmethod
    def build(cls, sigma: np.ndarray, c: np.ndarray, syy: np.ndarray) -> Stats:
        """The statistics of ``(Sigma, C, Syy)``, with the symmetric square root of ``Sigma``."""
        w, v, _ = decompose(0.5 * (sigma + sigma.T), vectors=True, increasing=True)
        half = (v * np.sqrt(np.clip(w, 0.0, None))) @ v.T
        return cls(sigma, c, syy, 0.5 * (half + half.T))


def weight_generator(seed: DerivedSeed) -> Any:
    """The CPU ``torch.Generator`` the weights of the linear and two-layer engines are
    drawn from (their ``init`` argument), seeded by the run's weight stream."""
    from specdyn._torch import torch

    return torch().Generator().manual_seed(seed)


def weight_chunks(N: int, D: int, P: int, sigma_w: float, sigma_a: float,
                  generator: Any) -> Iterator[tuple[Any, Any]]:
    """Rows of the initial ``(W, A)`` in float64 CPU chunks, ``W_ij ~ N(0, sigma_w^2)``,
    ``A_ij ~ N(0, sigma_a^2)``, drawn from ``generator`` (a CPU ``torch.Generator``,
    :func:`weight_generator`); a fixed chunking so every engine sees the same weights."""
    from specdyn._torch import torch

    t = torch()
    gen = generator
    for start in range(0, N, _WEIGHT_CHUNK):
        rows = min(_WEIGHT_CHUNK, N - start)
        z = t.randn(rows, D + P, generator=gen, dtype=t.float64)
        yield sigma_w * z[:, :D], sigma_a * z[:, D:]


def weight_grams(W: Any, A: Any) -> Grams:
    """Float64 host ``(Gw, Ga, Gwa) = (W^T W, A^T A, W^T A) / N`` of the weights ``W``
    (``N x D``), ``A`` (``N x P``): the Grams of a weight-space state, products on the CPU."""
    from specdyn._torch import torch

    t = torch()
    N = W.shape[0]
    Wd, Ad = W.to("cpu", t.float64), A.to("cpu", t.float64)
    return to_numpy(Wd.T @ Wd) / N, to_numpy(Ad.T @ Ad) / N, to_numpy(Wd.T @ Ad) / N


def initial_grams(N: int | None, D: int, P: int, sigma_w: float, sigma_a: float,
                  generator: Any) -> Grams:
    """``(Gw, Ga, Gwa)`` at initialisation, float64: Wishart for finite ``N`` (weights
    from ``generator``, see :func:`weight_chunks`), ``(sigma_w^2 I, sigma_a^2 I, 0)``
    for ``N = None`` (no draw)."""
    if N is None:
        return sigma_w**2 * np.eye(D), sigma_a**2 * np.eye(P), np.zeros((D, P))
    gw, ga, gwa = np.zeros((D, D)), np.zeros((P, P)), np.zeros((D, P))
    for w, a in weight_chunks(N, D, P, sigma_w, sigma_a, generator):
        wn, an = to_numpy(w), to_numpy(a)
        gw += wn.T @ wn
        ga += an.T @ an
        gwa += wn.T @ an
    return gw / N, ga / N, gwa / N


@dataclass(frozen=True, eq=False)
class GramWork:
    """The scratch buffers of one Gram step (``g``, ``sg``, ``t2``, ``t5``, ``w``: ``D x P``;
    ``t1``, ``v``: ``D x D``; ``t4``, ``u``: ``P x P``), allocated once by
    :meth:`GramEngine.init` and handed from each state to the next: fresh megabyte-sized
    tensors each step cost page faults. Contents are undefined between steps: no part of
    a state's value."""

    g: Any
    sg: Any
    t1: Any
    v: Any
    t2: Any
    t5: Any
    w: Any
    t4: Any
    u: Any

    @classmethod
    def like(cls, c_mat: Any) -> GramWork:
        """Buffers for Grams of ``c_mat``'s sizes (``D x P``), dtype and device."""
        from specdyn._torch import torch

        t = torch()
        D, P = c_mat.shape
        opts = {"dtype": c_mat.dtype, "device": c_mat.device}
        dp, dd, pp = (lambda: t.empty(D, P, **opts)), (lambda: t.empty(D, D, **opts)), \
            (lambda: t.empty(P, P, **opts))
        return cls(g=dp(), sg=dp(), t1=dd(), v=dd(), t2=dp(), t5=dp(), w=dp(), t4=pp(), u=pp())


def make_gd_step(sigma: Any, c_mat: Any, gamma0: float, dt: float) -> Callable[..., tuple]:
    """The exact Gram-space GD step as a pure function ``(Gw, Ga, Gwa, work) ->
    (Gw', Ga', Gwa')``.

    ``sigma`` is the ``D x D`` input covariance, or a length-``D`` vector when the
    Grams and ``C`` are expressed in the eigenbasis of ``Sigma`` (then
    ``Sigma Gwa`` is a row scaling and the step needs seven products, not eight).
    Eight matrix products a step, whatever ``N`` and ``M`` are::

        Gw'  = Gw  + c (G Gwa^T + Gwa G^T) + c^2 G Ga G^T
        Ga'  = Ga  + c (G^T Gwa + Gwa^T G) + c^2 G^T Gw G
        Gwa' = Gwa + c (Gw G + G Ga)       + c^2 G Gwa^T G

    The symmetric updates are written ``Gw' = Gw + V + V^T`` with
    ``V = c G Gwa^T + (c^2/2) G Ga G^T`` (and likewise for ``Ga``). The step leaves
    its Grams as they were and returns new ones; its products go into ``work``
    (:class:`GramWork`, the state's scratch buffers).
    """
    from specdyn._torch import torch

    t = torch()
    c = dt / gamma0
    half_c2 = 0.5 * c * c
    inv_g = 1.0 / gamma0
    diagonal = sigma.dim() == 1
    sigma_col = sigma.reshape(-1, 1)

    def step(gw: Any, ga: Any, gwa: Any, work: GramWork) -> tuple[Any, Any, Any]:
        g, sg, t1, v, t2, t5, w, t4, u = (work.g, work.sg, work.t1, work.v, work.t2, work.t5,
                                           work.w, work.t4, work.u)
        if diagonal:
            t.mul(gwa, sigma_col, out=sg)  # Sigma Gwa in Sigma's eigenbasis
        else:
            t.mm(sigma, gwa, out=sg)  # 1: Sigma Gwa
        t.sub(c_mat, sg, alpha=inv_g, out=g)  # G = C - Sigma Gwa / gamma0
        t.mm(g, gwa.T, out=t1)  # 2: G Gwa^T            (D x D)
        t.mm(g, ga, out=t2)  # 3: G Ga                   (D x P)
        t.mm(gw, g, out=t5)  # 4: Gw G                   (D x P)
        t.mm(g.T, gwa, out=t4)  # 5: G^T Gwa             (P x P)
        t.mm(t2, g.T, out=v)  # 6: G Ga G^T
        v.mul_(half_c2).add_(t1, alpha=c)
        t.mm(g.T, t5, out=u)  # 7: G^T Gw G
        u.mul_(half_c2).add_(t4, alpha=c)
        t.mm(t1, g, out=w)  # 8: G Gwa^T G
        w.mul_(2.0 * half_c2).add_(t5, alpha=c).add_(t2, alpha=c)
        # out of place: the state is a value (the same arithmetic as add_)
        return gw.add(v).add_(v.T), ga.add(u).add_(u.T), gwa.add(w)

    return step


def watched_loss(loss: Any, weights: Any) -> Any:
    """The loss, or NaN when a weight is not finite (a NaN ``Gw`` can hide behind a finite
    loss): the per-step entry of the linear engines' divergence history, on the device
    (no host sync)."""
    # one reduction, no weight-sized temporary: a NaN or infinite entry makes the sum NaN
    # or infinite, 0 * it NaN; a finite sum gives 0 * sum = +-0, and loss + +-0 is the
    # loss bit for bit. (A sum of finite weights that overflows, entries ~1e308 / count,
    # also reads NaN: weights that size are far past any loss limit.)
    return loss + 0.0 * weights.sum()


def loss_divergence(dt: float, start: float, value: Callable[[Any], Any]) -> Divergence[Any]:
    """What both linear engines watch: the training loss ``value(state)``
    (:func:`watched_loss`) against ``divergence_factor`` times its ``start``."""
    return Divergence("training", dt_advice(dt), dt, (Watch("loss", value, scale=start),))


def example_data() -> tuple[np.ndarray, np.ndarray]:
    """12 Gaussian samples ``(X, Y)`` (``D = 3``, ``P = 2``): the linear engines' examples."""
    g = np.random.default_rng(derive_seed(0))
    return g.standard_normal((12, 3)), g.standard_normal((12, 2))


def example_stats() -> Stats:
    """The statistics of :func:`example_data`."""
    X, Y = example_data()
    return Stats.build(X.T @ X / 12, X.T @ Y / 12, Y.T @ Y / 12)


@dataclass(frozen=True)
class GramState:
    """The state of a Gram-space run, a value: ``Gw`` (``D x D``), ``Ga`` (``P x P``) and
    ``Gwa`` (``D x P``) as device tensors in the eigenbasis of ``Sigma`` (see
    :class:`GramEngine`). It has no ``loss`` field: :meth:`GramEngine.loss` computes
    it on demand (one host sync)."""

    Gw: Any
    Ga: Any
    Gwa: Any
    #: the float64 host draw of :meth:`GramEngine.init` (its first checkpoint is the draw
    #: itself, not the device copy's round trip); ``None`` for the states after it
    start: Grams | None = field(default=None, compare=False, repr=False)
    #: the step's scratch buffers (:class:`GramWork`), no part of the value
    work: GramWork | None = field(default=None, compare=False, repr=False)


@register_engine(examples={"gd": lambda: ((example_stats(), 1.0, 0.05), {
    "device": "cpu", "N": 8, "sigma_w": 0.5, "sigma_a": 1.0})})
class GramEngine(Engine[GramState, None]):
    """Exact full-batch GD of the Grams: the protocol's ``init``/``step`` pair.

    The state is a :class:`GramState`: torch tensors expressed in the eigenbasis
    ``U`` of ``Sigma`` (an exact orthogonal change of variables:
    ``Gw -> U^T Gw U``, ``Gwa -> U^T Gwa``, ``C -> U^T C``; ``Sigma Gwa`` becomes a
    row scaling). :meth:`init` (generator) draws the initial weights of width ``N``
    (scales ``sigma_w``, ``sigma_a``; ``N = None``: the infinite-width Grams, no draw)
    from a CPU ``torch.Generator`` (:func:`weight_generator`) and gives their Grams, with
    the step's scratch buffers (:class:`GramWork`) in the state; :meth:`step` returns a
    new state and leaves the given one as it was; :meth:`to_host` maps a state back to
    float64 host Grams in the original basis. The run loop re-symmetrises the Grams at
    each check (:meth:`settle`). It watches the training loss against its start.
    """

    defaults: ClassVar[EngineDefaults] = EngineDefaults(check_every=100)
    # the data stream 0 and the weights stream 1, shared with the two-layer engines
    streams: ClassVar[StreamLayout] = StreamLayout(data=0, init=1)

    @v.constrained(gamma0=v.POSITIVE, dt=v.POSITIVE, N=v.Int(1, optional=True),
                   sigma_w=v.NONNEGATIVE, sigma_a=v.NONNEGATIVE)
    def __init__(self, stats: Stats, gamma0: float, dt: float, dtype: Any = None,
                 device: Any = None, *, N: int | None, sigma_w: float,
                 sigma_a: float) -> None:
        from specdyn._torch import resolve_device, resolve_dtype, torch

        self.t = torch()
        self.N, self.sigma_w, self.sigma_a = N, sigma_w, sigma_a
        self.stats, self.gamma0, self.dt = stats, gamma0, dt
        self.dtype, self.device = resolve_dtype(dtype), resolve_device(device)
        evals, U, _ = decompose(stats.sigma, vectors=True, increasing=True)
        self.U = U
        evals = np.clip(evals, 0.0, None)
        c_u = U.T @ stats.c
        self._step = make_gd_step(self._dev(evals), self._dev(c_u), gamma0, dt)
        # the loss as 0.5 tr(Syy) + <B, (Lambda/2) B - C>, B = Gwa/gamma0: three operations
        self._half_evals = self._dev(0.5 * evals).reshape(-1, 1)
        self._neg_c = self._dev(-c_u)
        self._half_syy = 0.5 * float(np.trace(stats.syy))
        self._inv_g = 1.0 / gamma0

    def _dev(self, a: np.ndarray) -> Any:  # a device copy
        return self.t.tensor(a, dtype=self.dtype, device=self.device)

    def init(self, generator: Any) -> GramState:
        """The state of the initial Grams (:func:`initial_grams`, weights drawn from
        ``generator``), copied to the device in ``U``'s basis; ``start`` keeps the draw."""
        D, P = self.U.shape[0], self._neg_c.shape[1]
        grams = initial_grams(self.N, D, P, self.sigma_w, self.sigma_a, generator)
        U = self.U
        return GramState(self._dev(U.T @ grams[0] @ U), self._dev(grams[1]),
                         self._dev(U.T @ grams[2]), start=grams, work=GramWork.like(self._neg_c))

    def step(self, state: GramState, batch: None = None) -> GramState:
        """One exact GD step (full batch: ``batch`` is unused)."""
        work = state.work if state.work is not None else GramWork.like(self._neg_c)
        gw, ga, gwa = self._step(state.Gw, state.Ga, state.Gwa, work)
        return GramState(gw, ga, gwa, work=work)

    def divergence(self, state0: GramState) -> Divergence[GramState]:
        """The training loss (NaN when a Gram is not finite), against its start."""
        gwa0 = (state0.start if state0.start is not None else self.to_host(state0))[2]
        return loss_divergence(self.dt, loss_from_grams(self.stats, gwa0, self.gamma0),
                               lambda s: watched_loss(self.loss_tensor(s), s.Gw))

    def settle(self, state: GramState) -> GramState:
        """The state re-symmetrised (:meth:`symmetrize`), kept by the loop after a check."""
        return self.symmetrize(state)

    def loss(self, state: GramState) -> float:
        """The training loss of ``state`` (one host sync)."""
        return float(self.loss_tensor(state))

    def loss_tensor(self, state: GramState) -> Any:
        """The training loss of ``state``, a 0-d tensor on the device (no host sync; cheap
        enough to run every step: the loop's divergence history)."""
        b = (state.Gwa * self._inv_g).reshape(-1)
        r = self.t.addcmul(self._neg_c, self._half_evals, state.Gwa, value=self._inv_g)
        return self.t.dot(r.reshape(-1), b) + self._half_syy

    @staticmethod
    def symmetrize(state: GramState) -> GramState:
        """``Gw``, ``Ga`` made exactly symmetric (removes the roundoff of the products)."""
        gw, ga = state.Gw, state.Ga
        return GramState(0.5 * (gw + gw.T), 0.5 * (ga + ga.T), state.Gwa, work=state.work)

    def to_host(self, state: GramState) -> Grams:
        """Float64 host Grams in the original basis."""
        gw, ga, gwa = (to_numpy(x, np.float64) for x in (state.Gw, state.Ga, state.Gwa))
        return self.U @ gw @ self.U.T, ga.copy(), self.U @ gwa

    def host(self, state: GramState) -> tuple[Grams, float | None]:
        """A checkpoint's float64 host Grams (the draw itself at the first state) and its
        loss (``None``: computed from the Grams)."""
        return (state.start if state.start is not None else self.to_host(state)), None


def loss_from_grams(stats: Stats, gwa: np.ndarray, gamma0: float) -> float:
    """``(1/2) tr(Syy) - tr(C^T B) + (1/2) tr(B^T Sigma B)``, ``B = Gwa/gamma0``."""
    b = gwa / gamma0
    return float(0.5 * np.trace(stats.syy) - np.sum(stats.c * b)
                 + 0.5 * np.sum(b * (stats.sigma @ b)))


def spectrum(stats: Stats, gw: np.ndarray) -> np.ndarray:
    """Eigenvalues of ``Sigma^(1/2) Gw Sigma^(1/2)``, clipped at 0, decreasing (length D).

    These are the nonzero eigenvalues of ``H H^T / (M N)``, ``H = X W^T``
    (padded with zeros when ``M < D``). Eigenvalues at or below
    ``measure.rank_tolerance`` (``D eps rho_max``) are roundoff of a rank-deficient
    matrix and are set to exactly 0.
    """
    m = stats.sigma_half @ gw @ stats.sigma_half
    return symmetric_eigenvalues(m, symmetrize=True, zero_below_rank=True)


def teacher_diagonals(grams: Grams, teacher: PowerLawTeacher) -> dict[str, np.ndarray]:
    """The teacher-basis diagonals by name (:data:`~specdyn.sim.trajectory.DIAGONALS`):
    ``xi``, ``eta``, ``zeta``, the diagonals of ``Bx^T Gwa By``, ``Bx^T Gw Bx``,
    ``By^T Ga By`` (``Bx``, ``By``: the teacher's bases), each of length ``D``
    (zero-padded or truncated on the output side)."""
    gw, ga, gwa = grams
    bx, by = teacher.basis_x, teacher.basis_y
    D, P = gwa.shape
    if teacher.rotation is None:
        xi_r, eta, zeta_r = np.diagonal(gwa), np.diagonal(gw), np.diagonal(ga)
    else:
        xi_r = np.einsum("ik,ik->k", bx[:, : min(D, P)], (gwa @ by)[:, : min(D, P)])
        eta = np.einsum("ik,ik->k", bx, gw @ bx)
        zeta_r = np.einsum("ik,ik->k", by, ga @ by)
    xi, zeta = np.zeros(D), np.zeros(D)
    r = min(D, P)
    xi[:r] = xi_r[:r]
    zeta[:r] = zeta_r[:r]
    return dict(zip(DIAGONALS, (xi, np.array(eta, dtype=np.float64), zeta), strict=True))


# --------------------------------------------------------------------- gradient flow


def solve_flow_full(stats: Stats, gamma0: float, grams: Grams, times: np.ndarray,
                    rtol: float, atol: float) -> tuple[list[Grams], int]:
    """Integrate the full-matrix Gram flow (explicit DOP853) to each of ``times``."""
    gw, ga, gwa = grams
    D, P = gwa.shape
    rhs = gram_flow_rhs(stats.sigma, stats.c, gamma0)
    y = np.concatenate([gw.ravel(), ga.ravel(), gwa.ravel()])
    out: list[Grams] = []
    nfev, t_prev = 0, 0.0
    for t in times:
        if t > t_prev:
            sol = solve_ivp(rhs, (t_prev, t), y, method="DOP853", rtol=rtol, atol=atol)
            if not sol.success:
                raise RuntimeError(f"gradient-flow integration failed at t = {t_prev}: "
                                   f"{sol.message}")
            y, nfev, t_prev = sol.y[:, -1], nfev + sol.nfev, t
        out.append((y[:D * D].reshape(D, D).copy(), y[D * D:D * D + P * P].reshape(P, P).copy(),
                    y[D * D + P * P:].reshape(D, P).copy()))
    return out, nfev


def solve_flow_diagonal(lam: np.ndarray, cdiag: np.ndarray, gamma0: float,
                        init: tuple[np.ndarray, np.ndarray, np.ndarray], times: np.ndarray,
                        rtol: float, atol: float) -> tuple[list[np.ndarray], int]:
    """Integrate the decoupled per-mode flow (implicit Radau, exact sparse Jacobian).

    In a basis where ``Sigma = diag(lam)``, ``C = diag(cdiag)`` and the Grams start
    diagonal they stay diagonal; the flow is, per mode,
    ``xi' = g_k (eta + zeta)/gamma0``, ``eta' = zeta' = 2 g_k xi/gamma0`` with
    ``g_k = cdiag_k - lam_k xi_k/gamma0`` (Eqs. 144-145 of the paper). It is
    stiff at late times (relaxation rate ``~ lam_1 sqrt(S^2 + 4 gamma0^2 theta^2)
    / gamma0^2``), hence the implicit solver. Returns ``[state (3, D)]`` per time.
    """
    D = lam.size
    inv_g = 1.0 / gamma0

    def rhs(_t: float, y: np.ndarray) -> np.ndarray:
        xi, eta, zeta = y[:D], y[D:2 * D], y[2 * D:]
        g = cdiag - lam * xi * inv_g
        dxi = inv_g * g * (eta + zeta)
        de = 2.0 * inv_g * g * xi
        return np.concatenate([dxi, de, de])

    def jac(_t: float, y: np.ndarray) -> sp.csc_matrix:
        xi, eta, zeta = y[:D], y[D:2 * D], y[2 * D:]
        g = cdiag - lam * xi * inv_g
        a = -inv_g * inv_g * lam * (eta + zeta)  # d xi'/d xi
        b = inv_g * g  # d xi'/d eta = d xi'/d zeta
        e = 2.0 * inv_g * (g - lam * xi * inv_g)  # d eta'/d xi
        z = sp.csc_matrix((D, D))
        return sp.bmat([[sp.diags(a), sp.diags(b), sp.diags(b)],
                        [sp.diags(e), z, z],
                        [sp.diags(e), z, z]], format="csc")

    y = np.concatenate(init)
    out, nfev, t_prev = [], 0, 0.0
    for t in times:
        if t > t_prev:
            sol = solve_ivp(rhs, (t_prev, t), y, method="Radau", jac=jac, rtol=rtol,
                            atol=atol)
            if not sol.success:
                raise RuntimeError(f"gradient-flow integration failed at t = {t_prev}: "
                                   f"{sol.message}")
            y, nfev, t_prev = sol.y[:, -1], nfev + sol.nfev, t
        out.append(y.reshape(3, D).copy())
    return out, nfev
