"""Building blocks of the explorers: the live view, text parsing, the one explorer shape.

Every explorer has the same shape (read one, you have read them all)::

    class ScoresExplorer(Explorer):
        def __init__(self, example="001", *, query=0):      # keyword arguments = initial state
            super().__init__()
            self.controls["query"] = ui.Dropdown(...)         # name → control (attnlib.show.ui: no comm)
            self.views["scores"] = HeatmapView(None, ...)     # name → HeatmapView (drawn by the browser)
            self.texts["terms"] = ui.HTML()                   # name → HTML text
            self.update()                                     # shows compute(values_now())
            self.observe_controls()                           # a control change calls update()
            self.widget = ui.VBox([...])                      # the layout (uses self.message)

        def compute(self, values) -> Shown:                   # pure: the controls' values → what is shown
            ...                                               # raise ValueError → inline message,
                                                              # the views keep their last good state
        def summary(self) -> str: ...                         # deterministic text/plain (nbval)

What an explorer shows is a function of its controls' values (:meth:`Explorer.values_now`, plus any state a
learner typed into a cell, which subclasses add there): :meth:`Explorer.compute` returns every view's
:class:`~attnlib.show.view.Frame`, every text's HTML and every dependent control's options, limits and
clamped value, and :meth:`Explorer.update` only shows it. Nothing is kept from the previous state, so the
same values show the same thing however the learner got there, and a table of states can be computed
without a widget (:meth:`Explorer.state`).

The maths comes from the maths modules (:mod:`attnlib.steps`, :mod:`attnlib.modules`), the text of
numbers and of per-cell explanations from :mod:`attnlib.formatting`. Nothing is printed or displayed
from callbacks (an ``Output`` filled during execution breaks nbval).

Displayed, an explorer sends three representations: its one widget model
(:class:`~attnlib.show.page.ExplorerWidget`, whose front end draws the controls, the views, the texts and the
message), a PNG of its current state drawn with matplotlib (what GitHub and nbviewer show without a kernel) and the
``text/plain`` summary (what nbval compares).

Python's state is always what the page shows. A change made in Python sends the explorer's ``values`` and
``shown`` in one message; a change made in the page that the table of states covers is drawn by the page, and
here the values are adopted and that state computed at once, sending nothing back (:meth:`Explorer.adopt_drawn`);
one the table does not cover (typed text, a typed cell) is computed here and answered with ``shown``, tagged with
the values it was computed for (see :mod:`attnlib.show.page`). An explorer whose :meth:`Explorer.compute` is too
slow to run on every drawn state sets :attr:`Explorer.lazy`: it computes when the kernel is next idle, or
before a read of what it shows (:meth:`Explorer.catch_up`).

Linking views (e.g. the "all eight steps" explorer): :meth:`HeatmapView.on_select` tells which cell
was chosen, :meth:`Explorer.on_edit` turns a number typed into an editable view into a change of
the explorer's state followed by :meth:`update`.
"""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from functools import partial
from typing import Any, ClassVar

import numpy as np

from . import ui
from .page import ExplorerWidget
from .plots import heatmap_png, png_bundle
from .table import Shown
from .ui import choices, plain
from .view import Frame, HeatmapView, parse_cell

__all__ = ["Explorer", "Frame", "HeatmapView", "MatrixParseError", "Shown", "choices", "parse_cell", "parse_matrix"]


class MatrixParseError(ValueError):
    """Text that does not describe a rectangular matrix of numbers."""


def parse_matrix(text: str, *, max_size: int = 64) -> np.ndarray:
    """Read a matrix typed as rows of numbers.

    Rows are separated by new lines or ``;``, numbers by commas or spaces; brackets are ignored,
    so both ``1 0 1 0; 0 2 0 2`` and ``[[1, 0, 1, 0], [0, 2, 0, 2]]`` work.

    Returns:
        ``(n_rows, n_cols)`` float64 array.

    Raises:
        MatrixParseError: with a message naming the row and the offending text.
    """
    cleaned = text.replace("[[", "").replace("]]", "").replace("],", ";").replace("]", ";").replace("[", "")
    rows = [r for r in re.split(r"[;\n]", cleaned) if r.strip().strip(",")]
    if not rows:
        raise MatrixParseError("the text is empty: type one row of numbers per line")
    matrix: list[list[float]] = []
    for i, row in enumerate(rows, start=1):
        cells = [c for c in re.split(r"[,\s]+", row.strip().strip(",")) if c]
        values = []
        for c in cells:
            try:
                v = float(c)
            except ValueError:
                raise MatrixParseError(f"row {i}: {c!r} is not a number") from None
            if not np.isfinite(v):
                raise MatrixParseError(f"row {i}: {c!r} is not a finite number")
            values.append(v)
        if matrix and len(values) != len(matrix[0]):
            raise MatrixParseError(
                f"row {i} has {len(values)} numbers but row 1 has {len(matrix[0])}: every row needs the same length"
            )
        matrix.append(values)
    if len(matrix) > max_size or len(matrix[0]) > max_size:
        raise MatrixParseError(f"at most {max_size}×{max_size} numbers, got {len(matrix)}×{len(matrix[0])}")
    return np.array(matrix, dtype=np.float64)


#: the traits of a control that an explorer's state may set, in the order the page must get them
#: (a menu's options before its choice, a slider's range before its value)
CONTROL_TRAITS = ("options", "min", "max", "step", "disabled", "value")


class Explorer:
    """Base class: ``controls`` (name → control of :mod:`attnlib.show.ui`), ``views`` (name → HeatmapView),
    ``texts`` (name → HTML text), an inline ``message``.

    Subclasses build their controls, views and texts, lay them out in ``self.widget`` and implement
    :meth:`compute`; :meth:`update` shows ``compute(values_now())``. The base class calls it when a control
    changes and keeps the last good state when it raises a ``ValueError`` (the message is shown inline
    instead). Displayed, the explorer is one widget model, :attr:`page`.
    """

    #: how many views the static PNG fallback shows, in the order of ``views``
    SNAPSHOT_VIEWS = 4
    #: compute a state the page drew when the kernel is next idle (:data:`IDLE_SECONDS` without a message), or
    #: before something reads what it shows, instead of at once: for an explorer whose compute is slow
    lazy: ClassVar[bool] = False
    #: a lazy explorer computes a drawn state once the kernel has had no message for this long
    IDLE_SECONDS: ClassVar[float] = 0.25

    def __init__(self) -> None:
        self.controls: dict[str, Any] = {}
        self.views: dict[str, HeatmapView] = {}
        self.texts: dict[str, ui.HTML] = {}
        self._quiet = 0  # > 0 while the explorer sets its own controls
        self.message = ui.HTML(value="")
        self.widget: ui.Box = ui.VBox()
        self._page: ExplorerWidget | None = None
        self.behind = False  # a lazy explorer: the values are the page's, what is shown is not computed yet
        self._idle: asyncio.TimerHandle | None = None

    # wiring -------------------------------------------------------------
    def observe_controls(self) -> None:
        """A change of any control applies :meth:`transition`, then calls :meth:`update`."""
        for name, control in self.controls.items():
            control.observe(partial(self._on_control, name), names="value")

    def _on_control(self, name: str, _change: object = None) -> None:
        if self._quiet:
            return  # set by the explorer itself (set_quietly)
        values = self.values_now()
        after = self.transition(values, name)
        if after is not values:
            self.adopt(after)
        self.changed()

    def set_quietly(self, name: str, **traits: object) -> None:
        """Set traits of control ``name`` (e.g. ``options=…, value=…``) without triggering :meth:`update`."""
        control = self.controls[name]
        self._quiet += 1
        try:
            for trait, value in traits.items():
                setattr(control, trait, value)
        finally:
            self._quiet -= 1

    def changed(self) -> None:
        """Show the controls' current values: :meth:`refresh`, then :meth:`publish` (what a control's change runs;
        an explorer that sets its controls quietly, e.g. from a click on a view, calls it once after them)."""
        self.refresh()
        self.publish()

    def refresh(self, *, reraise: bool = False) -> None:
        """:meth:`update`; a ``ValueError`` is shown inline (raised again with ``reraise``), else the message clears.
        Nothing is sent (:meth:`publish` sends)."""
        self.behind = False
        try:
            self.update()
        except ValueError as exc:
            self.show_error(str(exc))
            if reraise:
                raise
        else:
            self.message.value = ""

    def on_edit(self, view: str, apply: Callable[[int, int, float], None]) -> None:
        """A number typed into cell ``(i, j)`` of editable view ``view`` → ``apply(i, j, value)``, then :meth:`update`.

        ``apply`` changes the explorer's state (e.g. one entry of ``X``); it must raise
        ``ValueError`` *before* changing anything when the value is not acceptable. A ``ValueError``
        from ``apply`` or from :meth:`update` is shown under the view and in ``message``.
        """

        def edited(i: int, j: int, value: float) -> None:
            apply(i, j, value)
            self.refresh(reraise=True)

        self.views[view].on_edit(edited)

    def show_error(self, text: str) -> None:
        """Show ``text`` inline (the views keep their last good state)."""
        self.message.value = f'<span style="color:#b00020">⚠ {html.escape(text)}</span>'

    # the page ----------------------------------------------------------------
    @property
    def page(self) -> ExplorerWidget:
        """The explorer's one widget model (made when first asked for, e.g. when the explorer is displayed)."""
        if self._page is None:
            self._page = ExplorerWidget(self)
        return self._page

    def control_values(self) -> dict[str, object]:
        """Every control's value (what the page's ``values`` holds)."""
        return {name: control.value for name, control in self.controls.items()}

    def shown_now(self) -> dict[str, object]:
        """What the page shows now, in the form of :meth:`state`, for every output, with the values and message."""
        self.catch_up()
        return {
            "values": self.control_values(),
            "views": {name: view.shown() for name, view in self.views.items()},
            "texts": {name: text.value for name, text in self.texts.items()},
            "controls": {name: control.state() for name, control in self.controls.items()},
            "message": self.message.value,
        }

    def publish(self) -> None:
        """Send the values and what is shown to the page, in one message (nothing when not displayed)."""
        if self._page is not None:
            self._page.push(self.control_values(), self.shown_now())

    def tree(self) -> dict[str, object]:
        """The layout as the page draws it: boxes, each control's kind, label, options and limits, each view's
        fixed look, the texts and the message, named as in :attr:`controls`, :attr:`views` and :attr:`texts`."""
        names: dict[int, tuple[str, str]] = {id(self.message): ("message", "message")}
        for kind, parts in (("control", self.controls), ("view", self.views), ("text", self.texts)):
            names.update({id(part): (kind, name) for name, part in parts.items()})

        def node(part: object) -> dict[str, object]:
            kind, name = names.get(id(part), ("", ""))
            if isinstance(part, HeatmapView):
                return {"kind": "view", "name": name, "look": part.look(), **part.layout.describe()}
            assert isinstance(part, ui.Widget), f"{type(self).__name__}: {part!r} is not a part of attnlib.show.ui"
            described = part.describe()
            if isinstance(part, ui.Box):
                return {**described, "children": [node(child) for child in part.children]}
            if kind == "message":
                return {**described, "kind": "message"}
            if isinstance(part, ui.HTML) and not name:
                return {**described, "value": part.value}  # a fixed text
            return {**described, "name": name}

        return node(self.widget)

    # state ---------------------------------------------------------------
    def values_now(self) -> dict[str, object]:
        """The state :meth:`compute` reads: every control's value (subclasses add what a learner typed in cells)."""
        return {name: control.value for name, control in self.controls.items()}

    def compute(self, values: Mapping[str, object]) -> Shown:  # pragma: no cover - overridden
        """What the explorer shows for ``values``: pure (no widget is read or changed)."""
        raise NotImplementedError

    def control_grid(self) -> dict[str, list[object]]:
        """The enumerable controls and the values a table of states takes for each (default: the widget's steps).

        Controls a learner types into are not here; explorers whose widget steps are too fine for a table
        override it with a coarser grid.
        """
        grid = {name: choices(control) for name, control in self.controls.items()}
        return {name: values for name, values in grid.items() if values is not None}

    def transition(self, values: Mapping[str, object], name: str) -> Mapping[str, object]:
        """The values after control ``name`` changed to ``values[name]``: pure; by default ``values`` itself.

        Explorers whose controls reset others override it (a new example resets a text typed for the old one):
        the page and the tables apply the same function.
        """
        return values

    def adopt(self, values: Mapping[str, object]) -> None:
        """Take ``values`` as the state: the controls quietly (subclasses keep their other state, e.g. edits)."""
        for name, value in values.items():
            if name in self.controls and self.controls[name].value != value:
                self.set_quietly(name, value=value)

    def adopt_drawn(self, values: Mapping[str, object]) -> None:
        """Take ``values``, a state the page drew from its table, as the state, and show it here: at once, or for a
        :attr:`lazy` explorer when the kernel is next idle. Nothing is sent (the page drew it).

        The controls take their values unchecked by their options and limits, which are the state's before until
        it is shown: the tables hold ``values`` as a state, so :meth:`compute` keeps them (the page's handler checks
        it, see :mod:`attnlib.show.page`).
        """
        with ExitStack() as unchecked:
            for control in self.controls.values():
                unchecked.enter_context(control.cross_validation_lock)
            self.adopt(values)
        if not self.lazy:
            self.refresh()
            return
        self.behind = True
        if self._idle is not None:
            self._idle.cancel()
        try:
            self._idle = asyncio.get_running_loop().call_later(self.IDLE_SECONDS, self.catch_up)
        except RuntimeError:  # no event loop (a script, a test): the next read computes it
            self._idle = None

    def catch_up(self) -> None:
        """Show the state a :attr:`lazy` explorer adopted and has not computed yet (nothing otherwise): its read paths
        call it first."""
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None
        if self.behind:
            self.refresh()

    def update(self) -> None:
        """Show ``compute(values_now())``."""
        self.show(self.compute(self.values_now()))

    def show(self, shown: Shown) -> None:
        """Set every output to ``shown``: the dependent controls first (quietly), then the views and the texts."""
        for name, traits in shown.controls.items():
            control = self.controls[name]
            changed = {
                t: traits[t] for t in CONTROL_TRAITS if t in traits and plain(getattr(control, t)) != plain(traits[t])
            }
            if changed and "value" in traits:
                changed["value"] = traits["value"]  # new options or limits may have moved the value: set it again
                changed = {t: changed[t] for t in CONTROL_TRAITS if t in changed}
            if changed:
                self.set_quietly(name, **changed)
        for name, frame in shown.views.items():
            self.views[name].show(frame)
        for name, text in shown.texts.items():
            if self.texts[name].value != text:
                self.texts[name].value = text

    def state(self, shown: Shown) -> dict[str, object]:
        """``shown`` as the page gets it: each view's drawn traits, each text, each dependent control's traits."""
        return {
            "views": {name: self.views[name].drawn(frame) for name, frame in shown.views.items()},
            "texts": dict(shown.texts),
            "controls": {name: {t: plain(v) for t, v in traits.items()} for name, traits in shown.controls.items()},
        }

    def displayed(self) -> dict[str, object]:
        """What the widgets hold now, in the form of :meth:`state` (for the outputs that :meth:`compute` sets)."""
        self.catch_up()
        shown = self.compute(self.values_now())
        return {
            "views": {name: self.views[name].shown() for name in shown.views},
            "texts": {name: self.texts[name].value for name in shown.texts},
            "controls": {
                name: {t: plain(getattr(self.controls[name], t)) for t in traits}
                for name, traits in shown.controls.items()
            },
        }

    # display ------------------------------------------------------------
    def summary(self) -> str:
        """Short deterministic description (the ``text/plain`` that nbval compares)."""
        return f"{type(self).__name__}()"

    def snapshot_png(self) -> bytes:
        """PNG shown where no kernel renders the widget: the views' current state, drawn with matplotlib."""
        self.catch_up()
        specs = [v.spec() for v in self.views.values() if isinstance(v, HeatmapView)]
        return heatmap_png(specs[: self.SNAPSHOT_VIEWS])

    def _repr_mimebundle_(
        self, include: object = None, exclude: object = None
    ) -> tuple[dict[str, object], dict[str, dict[str, int]]]:
        """The live widget, the PNG fallback (shown at half its pixel size: sharp when zoomed) and the summary."""
        # anywidget annotates its **kwargs as dict; IPython passes include/exclude as None or a set of MIME types
        bundle: tuple[dict[str, object], dict[str, object]] | dict[str, object]
        bundle = self.page._repr_mimebundle_(include=include, exclude=exclude) or {}  # type: ignore[arg-type]
        data: dict[str, object] = dict(bundle[0] if isinstance(bundle, tuple) else bundle)
        metadata: dict[str, dict[str, int]] = {}
        if self.views:
            picture, metadata = png_bundle(self.snapshot_png(), "")
            data["image/png"] = picture["image/png"]
        data["text/plain"] = self.summary()
        return data, metadata

    def __repr__(self) -> str:
        return self.summary()
