"""Figures: functions that take data and return a matplotlib Figure.

Experiments decide what to plot and where to save it (``save_figure``).
:mod:`specdyn.plot.check` lists a figure's clutter (overlapping text, integer
colour bars with fractional ticks, panels without a title); a test runs it on
every experiment's figure.
"""

from specdyn.plot._figure import new_figure, save_figure

__all__ = ["new_figure", "save_figure"]
