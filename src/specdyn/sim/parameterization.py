"""Width scalings of a two-layer network: output multiplier, init variances, learning rates.

The student is

    f(x) = s * A^T phi(W x),      W: N x D,  A: N x P,

trained on the loss ``L = (1/2B) sum_m ||f(x_m) - y_m||^2`` (``B`` samples) by

    W <- W - dt * lr_w * dL/dW,   A <- A - dt * lr_a * dL/dA.

A parameterisation fixes, as functions of the width ``N`` and the setting's
``gamma0``, the output multiplier ``s``, the init standard deviations
``W_ij ~ N(0, (sigma_w * w_std)^2)``, ``A_ip ~ N(0, (sigma_a * a_std)^2)``, and
the two learning rates. The input multiplier is 1 in every case: the input
scale is carried by the data covariance ``Sigma``.

All four are chosen so that **at initialisation** the neural tangent kernel in
the time ``t = steps * dt`` is that of the paper's mean-field network: the
readout part ``(1/(gamma0^2 N)) sum_i phi_i(x) phi_i(x')`` in every case, the
first-layer part ``(1/(gamma0^2 N)) sum_i a_i^2 phi'_i(x) phi'_i(x') x.x'`` in all
but ``"standard"`` (where it is ``1/N`` of that). The initial function is
``O(1/sqrt(N))`` for mean-field and muP and ``O(1)`` for ntk and standard. They
differ in how much the hidden features move as ``N`` grows:

============  =================  ========  ===================  ==========  ==================
name          output scale s     w_std     a_std                lr_w        lr_a
============  =================  ========  ===================  ==========  ==================
mean-field    1/(gamma0 N)       1         1                    N           N
mup           1                  1         1/(gamma0 N)         N           1/(gamma0^2 N)
ntk           1/(gamma0 sqrt N)  1         1                    1           1
standard      1/gamma0           1         1/sqrt(N)            1/N         1/N
============  =================  ========  ===================  ==========  ==================

- ``"mean-field"`` is the paper's Eq. (1) with learning rate ``nu = N``: one
  full-batch step of size ``dt`` advances the theory's time by ``dt``; feature
  learning stays O(1) as ``N -> inf`` and ``gamma0`` sets its strength.
- ``"mup"`` (maximal update) is the same network with the output multiplier
  absorbed into ``A`` (``A_mup = A_mf / (gamma0 N)``); for gradient descent the
  function, the hidden weights and every spectrum follow *exactly* the
  mean-field trajectory (a test checks this).
- ``"ntk"`` uses ``1/sqrt(N)`` multipliers and O(1) learning rates: identical
  kernel at initialisation, but the features move by O(1/sqrt(N)) -- lazy
  as ``N -> inf``. It equals mean-field with ``gamma0 -> gamma0 / sqrt(N)`` and
  time ``t -> N t``.
- ``"standard"`` (PyTorch-like: fan-in init of the readout, one global
  learning rate ``1/N``, the largest stable one): the readout part of the kernel
  matches, the first-layer part is ``O(1/N)`` smaller, so the first layer is
  nearly frozen at large ``N``. ``gamma0`` is kept only as an output scale
  (set ``gamma0 = 1`` for the textbook form).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from specdyn import _validate as v

#: valid parameterisation names, in the order of the table above
PARAMETERIZATIONS = ("mean-field", "mup", "ntk", "standard")


@dataclass(frozen=True)
class Parameterization:
    """Multipliers of one parameterisation at a given width (see the module table).

    Attributes
    ----------
    name
        One of :data:`PARAMETERIZATIONS`.
    output_scale
        ``s`` in ``f(x) = s * A^T phi(W x)``.
    w_std, a_std
        Init standard deviations relative to ``sigma_w`` and ``sigma_a``.
    lr_w, lr_a
        Learning rates of ``W`` and ``A`` (multiplying ``dt``).
    """

    name: str
    output_scale: float
    w_std: float
    a_std: float
    lr_w: float
    lr_a: float


@v.constrained(parameterization=v.Instance(Parameterization, names=PARAMETERIZATIONS),
               N=v.SIZE, gamma0=v.POSITIVE)
def get_parameterization(parameterization: str | Parameterization, N: int,
                         gamma0: float) -> Parameterization:
    """The multipliers of ``parameterization`` (a name) at width ``N`` and output scale
    ``gamma0``.

    A :class:`Parameterization` instance passes through unchanged (for custom
    scalings). Unknown names raise a ``ValueError`` listing the valid ones.
    """
    if isinstance(parameterization, Parameterization):
        return parameterization
    name, g = parameterization, gamma0
    if name == "mean-field":
        return Parameterization(name, 1.0 / (g * N), 1.0, 1.0, float(N), float(N))
    if name == "mup":
        return Parameterization(name, 1.0, 1.0, 1.0 / (g * N), float(N), 1.0 / (g * g * N))
    if name == "ntk":
        return Parameterization(name, 1.0 / (g * math.sqrt(N)), 1.0, 1.0, 1.0, 1.0)
    # standard
    return Parameterization(name, 1.0 / g, 1.0, 1.0 / math.sqrt(N), 1.0 / N, 1.0 / N)
