"""Settings of the two-layer linear teacher-student model of the core paper.

One settings object is shared by the theory and the simulations, so that a
theory curve and a simulation are always of the same system. Each object is
validated at construction; a bad value raises a ``ValueError`` naming the
field and its allowed range.

Notation follows the paper: input covariance eigenvalues ``lambda_k``, teacher
mode strengths ``mu_k = theta_k**2``, initial weight variances ``sigma_w**2``
(first layer) and ``sigma_a**2`` (second layer), and the mean-field output
scale ``gamma0`` in ``f(x) = a^T W x / (gamma0 N)``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Union

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import zeta

from specdyn import _validate as v


@dataclass(frozen=True)
@v.constrained_fields(alpha=v.POSITIVE, beta=v.POSITIVE, sigma_w=v.POSITIVE, sigma_a=v.POSITIVE,
                      gamma0=v.POSITIVE, lambda0=v.POSITIVE, mu0=v.POSITIVE,
                      D=v.Int(1, optional=True))
class PowerLawSetting:
    """Aligned power-law spectra: ``lambda_k = lambda0 k^-alpha``, ``mu_k = mu0 k^-beta``.

    Parameters
    ----------
    alpha, beta
        Exponents of the input covariance and of the teacher spectrum (> 0).
    sigma_w, sigma_a
        Standard deviations of the first- and second-layer initial weights (> 0).
    gamma0
        Mean-field output scale (> 0); large values mean feature learning.
    lambda0, mu0
        Amplitudes of the two power laws (> 0).
    D
        Number of modes (input dimension), or ``None`` for the continuum of
        modes ``k >= 1`` used by the theory.
    """

    alpha: float
    beta: float
    sigma_w: float
    sigma_a: float
    gamma0: float
    lambda0: float = 1.0
    mu0: float = 1.0
    D: int | None = None

    def __post_init__(self) -> None:
        # the fields are checked first, as declared above (constrained_fields)
        _check_representable(self.sigma_w, self.sigma_a, self.gamma0, self.lambda0, self.mu0)

    @classmethod
    def paper(
        cls,
        sigma_w: float,
        gamma0_ratio: float,
        *,
        alpha: float = 1.0,
        beta: float = 1.0,
        sigma_a: float = 1.0,
        D: int | None = None,
    ) -> PowerLawSetting:
        """The paper's numerical setting (Appendix G).

        ``lambda0 = 1``, ``mu0 = 1/zeta(alpha + beta)`` (so that
        ``sum_k lambda_k mu_k = 1``) and ``gamma0 = gamma0_ratio * S / theta0``
        with ``S = sigma_w**2 + sigma_a**2`` and ``theta0 = sqrt(mu0)``.
        The paper's two regimes are :data:`FEATURE_LEARNING` and :data:`LAZY`
        (``FEATURE_LEARNING.setting()`` is this setting in the Fig. 2 regime).
        """
        alpha = v.positive("alpha", alpha)
        beta = v.positive("beta", beta)
        if alpha + beta <= 1:
            raise ValueError(
                f"alpha + beta must be > 1 for mu0 = 1/zeta(alpha + beta), got {alpha + beta}"
            )
        sigma_w = v.positive("sigma_w", sigma_w)
        sigma_a = v.positive("sigma_a", sigma_a)
        ratio = v.positive("gamma0_ratio", gamma0_ratio)
        mu0 = 1.0 / float(zeta(alpha + beta))
        _check_sigma("sigma_w", sigma_w)
        _check_sigma("sigma_a", sigma_a)
        with np.errstate(over="ignore"):
            gamma0 = float(np.float64(ratio) * (sigma_w**2 + sigma_a**2) / np.sqrt(mu0))
        if not np.isfinite(gamma0):
            raise ValueError(f"gamma0_ratio: gamma0 = gamma0_ratio * S / theta0 overflows "
                             f"float64 (gamma0_ratio = {ratio:g}, S = {sigma_w**2 + sigma_a**2:g})")
        return cls(alpha, beta, sigma_w, sigma_a, gamma0, 1.0, mu0, D)

    @property
    def S(self) -> float:
        """``sigma_w**2 + sigma_a**2``, the conserved scale of the dynamics."""
        return self.sigma_w**2 + self.sigma_a**2

    @property
    def theta0(self) -> float:
        """``sqrt(mu0)``, the strength of the strongest teacher mode."""
        return float(np.sqrt(self.mu0))

    def lam(self, k: np.ndarray) -> np.ndarray:
        """Input covariance eigenvalue ``lambda_k`` at (real) mode ``k``."""
        return _amplitude_power(self.lambda0, k, self.alpha)

    def mu(self, k: np.ndarray) -> np.ndarray:
        """Teacher mode strength ``mu_k = theta_k**2`` at (real) mode ``k``."""
        return _amplitude_power(self.mu0, k, self.beta)

    def spectra(self, D: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(lambda_k, mu_k)`` for ``k = 1..D`` (``D`` defaults to the setting's)."""
        D = _resolve_D(self.D, D)
        k = np.arange(1, D + 1, dtype=np.float64)
        return self.lam(k), self.mu(k)

    def with_D(self, D: int) -> PowerLawSetting:
        """A copy of this setting truncated to ``D`` modes."""
        return dataclasses.replace(self, D=D)

    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dict (JSON- and TOML-friendly)."""
        return {"kind": "power-law", **dataclasses.asdict(self)}


@dataclass(frozen=True)
class AlignedSetting:
    """Arbitrary aligned spectra given as arrays over modes ``k = 1..D``.

    Parameters
    ----------
    lam
        Input covariance eigenvalues ``lambda_k`` (> 0), one per mode.
    mu
        Teacher mode strengths ``mu_k = theta_k**2`` (>= 0), same length.
    sigma_w, sigma_a, gamma0
        As in :class:`PowerLawSetting`.
    """

    lam_values: np.ndarray = field(repr=False)
    mu_values: np.ndarray = field(repr=False)
    sigma_w: float = 1.0
    sigma_a: float = 1.0
    gamma0: float = 1.0

    def __init__(self, lam: ArrayLike, mu: ArrayLike, sigma_w: float, sigma_a: float,
                 gamma0: float) -> None:
        lam_arr = v.real_array("lam", lam)
        mu_arr = v.real_array("mu", mu)
        if lam_arr.ndim != 1 or mu_arr.ndim != 1:
            raise ValueError("lam and mu must be 1-D arrays over modes")
        if lam_arr.shape != mu_arr.shape:
            raise ValueError(
                f"lam and mu must have the same length, got {lam_arr.size} and {mu_arr.size}"
            )
        if (lam_arr <= 0).any():
            raise ValueError("lam must be > 0 for every mode (allowed range (0, inf))")
        if (mu_arr < 0).any():
            raise ValueError("mu must be >= 0 for every mode (allowed range [0, inf))")
        lam_arr.setflags(write=False)
        mu_arr.setflags(write=False)
        object.__setattr__(self, "lam_values", lam_arr)
        object.__setattr__(self, "mu_values", mu_arr)
        object.__setattr__(self, "sigma_w", v.positive("sigma_w", sigma_w))
        object.__setattr__(self, "sigma_a", v.positive("sigma_a", sigma_a))
        object.__setattr__(self, "gamma0", v.positive("gamma0", gamma0))
        _check_representable(self.sigma_w, self.sigma_a, self.gamma0,
                             float(lam_arr.max()), float(mu_arr.max()) or 1.0)

    @property
    def D(self) -> int:
        """Number of modes."""
        return int(self.lam_values.size)

    @property
    def S(self) -> float:
        """``sigma_w**2 + sigma_a**2``."""
        return self.sigma_w**2 + self.sigma_a**2

    @property
    def theta0(self) -> float:
        """``sqrt(max mu_k)``."""
        return float(np.sqrt(self.mu_values.max()))

    def lam(self, k: np.ndarray) -> np.ndarray:
        """``lambda_k`` at integer modes ``k`` (1-based)."""
        return self.lam_values[np.asarray(k, dtype=np.int64) - 1]

    def mu(self, k: np.ndarray) -> np.ndarray:
        """``mu_k`` at integer modes ``k`` (1-based)."""
        return self.mu_values[np.asarray(k, dtype=np.int64) - 1]

    def spectra(self, D: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(lambda_k, mu_k)`` for ``k = 1..D`` (default: all modes)."""
        D = self.D if D is None else min(v.positive_int("D", D), self.D)
        return self.lam_values[:D].copy(), self.mu_values[:D].copy()

    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dict."""
        return {
            "kind": "aligned",
            "lam": self.lam_values.tolist(),
            "mu": self.mu_values.tolist(),
            "sigma_w": self.sigma_w,
            "sigma_a": self.sigma_a,
            "gamma0": self.gamma0,
        }

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AlignedSetting):
            return NotImplemented
        return (
            np.array_equal(self.lam_values, other.lam_values)
            and np.array_equal(self.mu_values, other.mu_values)
            and (self.sigma_w, self.sigma_a, self.gamma0)
            == (other.sigma_w, other.sigma_a, other.gamma0)
        )

    def __hash__(self) -> int:
        return hash((self.lam_values.tobytes(), self.mu_values.tobytes(), self.sigma_w,
                     self.sigma_a, self.gamma0))


Setting = Union[PowerLawSetting, AlignedSetting]  # noqa: UP007  (a runtime alias on 3.10)


@dataclass(frozen=True)
@v.constrained_fields(sigma_w=v.POSITIVE, gamma0_ratio=v.POSITIVE, sigma_a=v.POSITIVE)
class Regime:
    """A network's initial scales relative to its teacher: lazy, feature learning or between.

    ``sigma_w`` and ``sigma_a`` are the first- and second-layer initial standard
    deviations and ``gamma0 = gamma0_ratio * S / theta0`` the output scale, with
    ``S = sigma_w**2 + sigma_a**2`` and ``theta0`` the strength of the strongest
    teacher mode (``sqrt(mu0)`` of a power law; on data, that of its top-variance
    mode). The paper's two regimes are :data:`FEATURE_LEARNING` and :data:`LAZY`.
    """

    sigma_w: float
    gamma0_ratio: float
    sigma_a: float = 1.0

    def setting(self, *, alpha: float = 1.0, beta: float = 1.0,
                D: int | None = None) -> PowerLawSetting:
        """The paper's power-law setting in this regime (:meth:`PowerLawSetting.paper`)."""
        return PowerLawSetting.paper(self.sigma_w, self.gamma0_ratio, alpha=alpha, beta=beta,
                                     sigma_a=self.sigma_a, D=D)


#: The core paper's feature-learning regime (Appendix G; Figs. 2-4): ``sigma_w = 0.1``,
#: ``sigma_a = 1``, ``gamma0 = 2 S/theta0``.
FEATURE_LEARNING = Regime(sigma_w=0.1, gamma0_ratio=2.0)
#: The core paper's lazy regime (Appendix G; Figs. 3(c), 4): ``sigma_w = sigma_a = 1``,
#: ``gamma0 = 0.5 S/theta0``; only mildly lazy (``docs/concepts.md``, "Settings").
LAZY = Regime(sigma_w=1.0, gamma0_ratio=0.5)
#: The paper's two regimes by the names the experiments and their tables use.
PAPER_REGIMES: dict[str, Regime] = {"feature-learning": FEATURE_LEARNING, "lazy": LAZY}


def setting_from_dict(d: dict[str, Any]) -> Setting:
    """Inverse of ``to_dict`` for either settings class."""
    d = dict(d)
    kind = d.pop("kind", "power-law")
    if kind == "power-law":
        return PowerLawSetting(**d)
    if kind == "aligned":
        return AlignedSetting(**d)
    raise ValueError(f"kind must be 'power-law' or 'aligned', got {kind!r}")


# Largest magnitude a theory quantity may reach: float64's max with room for sums and products.
_HUGE_LOG10 = 300.0
# sigma**2 must be a normal float64 (neither overflow nor lose digits to subnormals).
_SIGMA_RANGE = (float(np.sqrt(np.finfo(np.float64).tiny)), 1e150)


def _check_sigma(name: str, value: float) -> None:
    lo, hi = _SIGMA_RANGE
    if not lo <= value <= hi:
        raise ValueError(
            f"{name} must lie in [{lo:.3g}, {hi:.3g}] so that {name}**2 is a normal float64, "
            f"got {value:g}"
        )


def _check_representable(sigma_w: float, sigma_a: float, gamma0: float, lambda0: float,
                         mu0: float) -> None:
    """Refuse a setting whose spectra cannot be represented in float64, naming the fields.

    The largest values the theory produces are at mode 1 and ``t = inf``:
    ``lambda0 (sigma_w^2 + Delta eta)`` with ``Delta eta <= gamma0 theta0`` (both
    layers) and ``lambda0 (sigma_w^2 + mu0 gamma0^2 / sigma_a^2)`` (second layer
    frozen). Each is checked in log space, so the check itself cannot overflow.
    """
    _check_sigma("sigma_w", sigma_w)
    _check_sigma("sigma_a", sigma_a)
    lg = np.log10
    S = sigma_w**2 + sigma_a**2
    if lg(lambda0) + lg(S) > _HUGE_LOG10:
        raise ValueError(f"lambda0 * (sigma_w**2 + sigma_a**2) = 1e{lg(lambda0) + lg(S):.0f} "
                         f"is beyond float64 (lambda0 = {lambda0:g}, S = {S:g})")
    checks = [  # (what, log10 of its largest value); the first field named is the blamed one
        ("gamma0 * sqrt(mu0)", lg(gamma0) + 0.5 * lg(mu0)),
        ("lambda0 * gamma0 * sqrt(mu0)", lg(lambda0) + lg(gamma0) + 0.5 * lg(mu0)),
        ("lambda0 * mu0", lg(lambda0) + lg(mu0)),
        ("gamma0 * sqrt(mu0) / sigma_w**2 (the ratio R)",
         lg(gamma0) + 0.5 * lg(mu0) - 2.0 * lg(sigma_w)),
        ("gamma0**2 * mu0 * lambda0 / sigma_a**2 (second layer frozen)",
         lg(lambda0) + lg(mu0) + 2.0 * (lg(gamma0) - lg(sigma_a))),
    ]
    for what, log10_value in checks:
        if log10_value > _HUGE_LOG10:
            raise ValueError(
                f"{what} = 1e{log10_value:.0f} is beyond float64, so the setting cannot be "
                f"represented (gamma0 = {gamma0:g}, mu0 = {mu0:g}, lambda0 = {lambda0:g}, "
                f"sigma_w = {sigma_w:g}, sigma_a = {sigma_a:g})"
            )


def _amplitude_power(amplitude: float, k: ArrayLike, exponent: float) -> np.ndarray:
    """``amplitude * k**-exponent``, in log space where ``k**-exponent`` alone is subnormal
    (or overflows) but the product is not: a subnormal factor would cost digits."""
    with np.errstate(over="ignore", under="ignore"):
        power = np.power(k, -exponent)
        out = amplitude * power
        tiny = np.finfo(np.float64).tiny
        edge = (power < tiny) | np.isinf(power)
        if np.any(edge):
            with np.errstate(divide="ignore"):
                logs = np.log(amplitude) - exponent * np.log(k)
            out = np.where(edge, np.exp(logs), out)
    return out


def as_modes(s: Setting, k: ArrayLike) -> np.ndarray:
    """Validate mode indices for a setting and return them as float64.

    Power-law settings accept real ``k >= 1`` (and ``k <= D`` when ``D`` is set);
    aligned settings accept integers ``1 <= k <= D``.
    """
    arr = v.real_array("k", k, lo=1.0)
    if isinstance(s, AlignedSetting):
        if not np.all(arr == np.round(arr)):
            raise ValueError("k must be integer mode indices for an AlignedSetting")
        if (arr > s.D).any():
            raise ValueError(f"k must be <= D = {s.D}")
    elif s.D is not None and (arr > s.D).any():
        raise ValueError(f"k must be <= D = {s.D} for this setting")
    return arr


def as_times(t: ArrayLike) -> np.ndarray:
    """Validate times ``t >= 0`` (``inf`` allowed) and return them as float64."""
    return v.real_array("t", t, lo=0.0, allow_inf=True)


def _resolve_D(own: int | None, D: int | None) -> int:
    if D is None:
        if own is None:
            raise ValueError("D must be given: this setting has D=None (a continuum of modes)")
        return own
    return v.positive_int("D", D)
