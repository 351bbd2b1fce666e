"""Drawing and live views — imports the maths core, never the other way round.

- :mod:`attnlib.show.plots` — static figures with seaborn/matplotlib (heatmaps, curves);
- :mod:`attnlib.show.style` — the ``laptop`` and ``projector`` styles;
- :mod:`attnlib.show.view` — :class:`HeatmapView`, the live heatmap drawn by the browser (anywidget), and
  :class:`ViewGroup`, which carries the views of one explorer in one message;
- :mod:`attnlib.show.explorer` — :class:`Explorer`, the shape every lesson's explorer shares.
"""

from .explorer import Explorer, MatrixParseError, parse_cell, parse_matrix
from .view import HeatmapView, ViewGroup

__all__ = ["Explorer", "HeatmapView", "MatrixParseError", "ViewGroup", "parse_cell", "parse_matrix"]
