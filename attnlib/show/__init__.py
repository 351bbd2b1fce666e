"""Drawing and live views — imports the maths core, never the other way round.

- :mod:`attnlib.show.plots` — static figures with matplotlib and seaborn (heatmaps, curves);
- :mod:`attnlib.show.style` — the ``laptop`` and ``projector`` styles;
- :mod:`attnlib.show.ui` — an explorer's controls and boxes: plain traitlets objects with ipywidgets' names;
- :mod:`attnlib.show.view` — :class:`HeatmapView`, the Python half of a live heatmap (its frames, its PNG);
- :mod:`attnlib.show.explorer` — :class:`Explorer`, the shape every lesson's explorer shares;
- :mod:`attnlib.show.table` — the table of an explorer's states, computed by attnlib;
- :mod:`attnlib.show.page` — :class:`ExplorerWidget`, an explorer's one widget model, drawn by ``static/explorer.js``.
"""

from .explorer import Explorer, MatrixParseError, parse_cell, parse_matrix
from .page import ExplorerWidget
from .view import HeatmapView

__all__ = ["Explorer", "ExplorerWidget", "HeatmapView", "MatrixParseError", "parse_cell", "parse_matrix"]
