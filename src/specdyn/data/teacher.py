"""Linear teachers with power-law input covariance: ``x ~ N(0, Sigma)``, ``y = Theta^T x``.

Conventions (used by every simulator in :mod:`specdyn.sim`):

- ``Theta`` is ``D x P`` and a target is ``y = Theta^T x (+ noise)``; samples are
  stacked as rows, ``X`` is ``M x D`` and ``Y = X Theta (+ noise)`` is ``M x P``.
- ``lam`` holds the input covariance eigenvalues ``lambda_k`` in decreasing
  order; ``basis_x`` (``D x D``, orthonormal columns) holds the matching
  eigenvectors, so ``Sigma = basis_x diag(lam) basis_x^T``.
- In the *aligned* cases (``rotation=None`` or ``"random"``) the teacher is
  ``Theta = basis_x diag_{D x P}(theta) basis_y^T`` with ``theta_k = sqrt(mu_k)``:
  column ``k`` of ``basis_x`` and of ``basis_y`` are the k-th input and output
  teacher directions. The Gram matrices of a network expressed in these bases
  (``basis_x^T Gw basis_x`` etc.) are what the paper's theory describes.
- ``rotation="misaligned"`` keeps ``Sigma`` diagonal (``basis_x = I``) but puts
  the teacher's input directions in an independent random orthonormal basis
  ``basis_theta``: ``Theta = basis_theta diag(theta) basis_y^T``. The closed-form
  theory does not apply there; the Gram engine does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from specdyn import _validate as v
from specdyn.settings import AlignedSetting, PowerLawSetting, Setting

_ROTATIONS = (None, "random", "misaligned")


def _haar_orthogonal(n: int, rng: np.random.Generator) -> np.ndarray:
    """A Haar-distributed ``n x n`` orthogonal matrix (``scipy.stats.ortho_group``)."""
    from scipy.stats import ortho_group  # here: scipy.stats takes a second to import

    if n == 1:  # O(1) = {-1, 1}; older scipy releases refuse dim = 1
        return rng.choice(np.array([-1.0, 1.0]), size=(1, 1))
    return np.asarray(ortho_group.rvs(n, random_state=rng), dtype=np.float64)


class PowerLawTeacher:
    """Gaussian inputs with spectrum ``lambda_k`` and a linear teacher of strengths ``mu_k``.

    Parameters
    ----------
    setting
        A :class:`~specdyn.settings.PowerLawSetting` with ``D`` set, or an
        :class:`~specdyn.settings.AlignedSetting`. Its ``lambda_k``, ``mu_k``
        (``k = 1..D``) define the data; the rest of the setting is not used here.
    P
        Output dimension (default ``D``). Mode ``k`` maps to output ``k`` for
        ``k <= min(D, P)``; modes beyond ``P`` carry no teacher signal.
    rotation
        ``None`` (coordinate bases, the paper's Appendix G), ``"random"`` (Haar
        random input and output bases, teacher still aligned with ``Sigma``) or
        ``"misaligned"`` (teacher input directions independent of ``Sigma``'s).
    noise_std
        Standard deviation of i.i.d. Gaussian label noise added to each output.
    seed
        Seed of the random bases (data samples take their own seed).
    """

    def __init__(self, setting: Setting, P: int | None = None, rotation: str | None = None,
                 noise_std: float = 0.0, seed: int = 0) -> None:
        if not isinstance(setting, (PowerLawSetting, AlignedSetting)):
            raise ValueError(
                f"setting must be a PowerLawSetting or AlignedSetting, got {type(setting).__name__}"
            )
        if isinstance(setting, PowerLawSetting) and setting.D is None:
            raise ValueError("setting.D must be set (e.g. setting.with_D(512)) to build a teacher")
        if rotation not in _ROTATIONS:
            raise ValueError(
                f"rotation must be one of None, 'random', 'misaligned'; got {rotation!r}"
            )
        self.setting = setting
        lam, mu = setting.spectra()
        self.D = int(lam.size)
        self.P = self.D if P is None else v.positive_int("P", P)
        self.rotation = rotation
        self.noise_std = v.nonnegative("noise_std", noise_std)
        self.seed = v.positive_int("seed", seed, minimum=0)
        self.lam = np.asarray(lam, dtype=np.float64)
        self.mu = np.asarray(mu, dtype=np.float64)
        r = min(self.D, self.P)
        theta_diag = np.zeros((self.D, self.P))
        theta_diag[np.arange(r), np.arange(r)] = np.sqrt(self.mu[:r])
        rng = np.random.default_rng(self.seed)
        if rotation is None:
            self.basis_x = np.eye(self.D)
            self.basis_y = np.eye(self.P)
            self.basis_theta = self.basis_x
        elif rotation == "random":
            self.basis_x = _haar_orthogonal(self.D, rng)
            self.basis_y = _haar_orthogonal(self.P, rng)
            self.basis_theta = self.basis_x
        else:  # misaligned
            self.basis_x = np.eye(self.D)
            self.basis_theta = _haar_orthogonal(self.D, rng)
            self.basis_y = np.eye(self.P)
        #: the teacher matrix, ``D x P``; ``y = theta.T @ x``.
        self.theta = self.basis_theta @ theta_diag @ self.basis_y.T
        for arr in (self.lam, self.mu, self.basis_x, self.basis_y, self.basis_theta, self.theta):
            arr.setflags(write=False)

    @property
    def aligned(self) -> bool:
        """Whether ``Theta``'s input directions coincide with ``Sigma``'s eigenvectors."""
        return self.rotation != "misaligned"

    def population(self) -> tuple[np.ndarray, np.ndarray]:
        """Population statistics ``(Sigma, C)``: ``Sigma = E[x x^T]`` (``D x D``),
        ``C = E[x y^T] = Sigma Theta`` (``D x P``), float64."""
        sigma = (self.basis_x * self.lam) @ self.basis_x.T
        sigma = 0.5 * (sigma + sigma.T)
        return sigma, sigma @ self.theta

    def output_second_moment(self) -> np.ndarray:
        """``E[y y^T] = Theta^T Sigma Theta + noise_std^2 I`` (``P x P``), float64."""
        sigma, c = self.population()
        return self.theta.T @ c + self.noise_std**2 * np.eye(self.P)

    def sample(self, M: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """``M`` i.i.d. samples ``(X, Y)``, ``X`` is ``M x D``, ``Y`` is ``M x P``, float64.

        The same ``(M, seed)`` always gives the same data.
        """
        M = v.positive_int("M", M)
        rng = np.random.default_rng(v.positive_int("seed", seed, minimum=0))
        z = rng.standard_normal((M, self.D))
        x = (z * np.sqrt(self.lam)) @ self.basis_x.T
        y = x @ self.theta
        if self.noise_std > 0:
            y = y + self.noise_std * rng.standard_normal((M, self.P))
        return x, y

    def sample_torch(self, M: int, seed: int = 0, dtype: Any = None,
                     device: Any = None) -> tuple[Any, Any]:
        """:meth:`sample` as torch tensors (same numbers, drawn in float64 then cast)."""
        from specdyn._torch import resolve_device, resolve_dtype, torch

        t = torch()
        x, y = self.sample(M, seed)
        dt, dev = resolve_dtype(dtype), resolve_device(device)
        return (t.as_tensor(x, dtype=dt, device=dev), t.as_tensor(y, dtype=dt, device=dev))

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict description (JSON-friendly)."""
        return {"setting": self.setting.to_dict(), "D": self.D, "P": self.P,
                "rotation": self.rotation, "noise_std": self.noise_std, "seed": self.seed}

    def __repr__(self) -> str:
        return (f"PowerLawTeacher(D={self.D}, P={self.P}, rotation={self.rotation!r}, "
                f"noise_std={self.noise_std}, seed={self.seed})")
