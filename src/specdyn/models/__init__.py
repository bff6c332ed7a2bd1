"""Network functions, activations and teachers shared by the simulators and the measurements.

``sim/`` trains these models and ``measure/`` evaluates them; neither imports
the other. Torch is imported lazily.
"""

from specdyn.models.activations import ACTIVATIONS, Activation, get_activation, numpy_activation
from specdyn.models.mean_field import AtomTeacher, network_function

__all__ = ["ACTIVATIONS", "Activation", "AtomTeacher", "get_activation", "network_function",
           "numpy_activation"]
