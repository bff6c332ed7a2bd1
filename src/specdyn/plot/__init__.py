"""Figures: functions that take data and return a matplotlib Figure.

Experiments decide what to plot and where to save it (``save_figure``).
"""

from specdyn.plot._figure import new_figure, save_figure

__all__ = ["new_figure", "save_figure"]
