"""Interactive explorers, one or more per lesson, drawn live by the browser.

Each lesson's explorers live in a module named after the lesson's step
(``attnlib.widgets.scores`` …); :mod:`attnlib.widgets._core` holds the :class:`Explorer` base
class, :mod:`attnlib.widgets.view` the :class:`HeatmapView` every explorer draws with.
"""

from ._core import Explorer, MatrixParseError, parse_cell, parse_matrix
from .view import HeatmapView

__all__ = ["Explorer", "HeatmapView", "MatrixParseError", "parse_cell", "parse_matrix"]
