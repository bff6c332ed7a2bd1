"""specdyn: spectral dynamics of learning.

Exact theory of how the eigenvalue spectra of a network's representations and
weights change during training, finite-width simulations that test it, and
fast spectral measurement of any model.

The theory (``specdyn.theory``) needs only numpy and scipy; the simulators
(``specdyn.sim``) import torch lazily.
"""

from specdyn._version import __version__
from specdyn.schedule import Schedule
from specdyn.settings import AlignedSetting, PowerLawSetting

__all__ = ["AlignedSetting", "PowerLawSetting", "Schedule", "__version__"]
