"""specdyn: spectral dynamics of learning.

Exact theory of how the eigenvalue spectra of a network's representations and
weights change during training, finite-width simulations that test it, and
fast spectral measurement of any model.

The theory (``specdyn.theory``) needs only numpy and scipy; the simulators
(``specdyn.sim``) import torch lazily. The names below are imported on first
use, so that ``import specdyn`` (and ``specdyn --help``) loads neither numpy
nor scipy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from specdyn._version import __version__

if TYPE_CHECKING:
    from specdyn.schedule import Schedule
    from specdyn.settings import AlignedSetting, PowerLawSetting

__all__ = ["AlignedSetting", "PowerLawSetting", "Schedule", "__version__"]

#: public name -> the module that defines it
_LAZY = {"AlignedSetting": "specdyn.settings", "PowerLawSetting": "specdyn.settings",
         "Schedule": "specdyn.schedule"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value  # once: later lookups do not come here
        return value
    raise AttributeError(f"module 'specdyn' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
