"""Interactive explorers, one or more per lesson, built on :mod:`attnlib.viz`.

Each lesson's explorers live in a module named after the lesson's step
(``attnlib.widgets.scores`` …); :mod:`attnlib.widgets._core` holds what they share.
"""

from ._core import Explorer, MatrixParseError, PlotView, parse_matrix

__all__ = ["Explorer", "MatrixParseError", "PlotView", "parse_matrix"]
