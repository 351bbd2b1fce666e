"""An explorer's controls and boxes: plain traitlets objects with ipywidgets' names and keywords, no comm.

An explorer is displayed as ONE widget model (:class:`attnlib.show.page.ExplorerWidget`) whose front end
draws everything; the objects here are what Python code and tests read and set
(``explorer.controls["query"].value = 2``), and each describes itself for the page
(:meth:`Widget.describe`: its kind, label, options, limits; a box its children). Nothing here sends a message:
the explorer sends its values and what it shows, in one message, when they change.

The names and keywords are ipywidgets' (``Dropdown(options=..., value=..., description=...)``,
``IntSlider(value, min, max, step)``, ``FloatLogSlider(base, min, max, step)``, ``VBox([...])``,
``Layout(width=...)``), so an explorer's constructor reads as it did with ipywidgets. Which controls a
table of states can enumerate is :func:`choices`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import traitlets

__all__ = [
    "HTML",
    "Box",
    "Checkbox",
    "Control",
    "Dropdown",
    "FloatLogSlider",
    "FloatSlider",
    "FloatText",
    "GridBox",
    "HBox",
    "IntSlider",
    "IntText",
    "Layout",
    "SelectionSlider",
    "Text",
    "Textarea",
    "ToggleButton",
    "ToggleButtons",
    "VBox",
    "Widget",
    "choices",
    "plain",
]


class Layout:
    """CSS of a box, a control or a view (``Layout(width="320px")``; ``display="none"`` hides it).

    ``visible_if={"head": ["all"]}`` shows the element only while control ``head`` has one of those values
    (``hidden_if`` the opposite): a rule the page applies itself, with no message, for an element whose
    visibility follows a control.
    """

    def __init__(self, **css: Any) -> None:
        self.display: str | None = None
        self.visible_if: dict[str, list[object]] | None = None
        self.hidden_if: dict[str, list[object]] | None = None
        for name, value in css.items():
            setattr(self, name, value)

    def describe(self) -> dict[str, object]:
        """``{"css": {property: value}, "visible_if": ..., "hidden_if": ...}`` without what is not set."""
        css = {
            name.replace("_", "-"): value
            for name, value in vars(self).items()
            if value is not None and name not in ("visible_if", "hidden_if")
        }
        out: dict[str, object] = {"css": css} if css else {}
        for rule in ("visible_if", "hidden_if"):
            if getattr(self, rule):
                out[rule] = {k: list(v) for k, v in getattr(self, rule).items()}
        return out


class Widget(traitlets.HasTraits):
    """A part of an explorer's layout: its kind (what the page draws) and its :class:`Layout`."""

    kind = "widget"

    def __init__(self, *, layout: Layout | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.layout = layout if layout is not None else Layout()

    def describe(self) -> dict[str, object]:
        """What the page needs to draw this part (its state that changes travels in ``shown``)."""
        return {"kind": self.kind, **self.layout.describe()}


# ------------------------------------------------------------------------------------ controls
class Control(Widget):
    """A control: a ``value`` the learner sets, a label (``description``), ``disabled``."""

    description = traitlets.Unicode("")
    disabled = traitlets.Bool(False)
    tooltip = traitlets.Unicode("")
    continuous_update = traitlets.Bool(True)
    #: the traits that may change after the control is built (sent with every state)
    STATE: tuple[str, ...] = ("disabled", "value")

    def state(self) -> dict[str, object]:
        """The traits of :attr:`STATE` as they are now, in the order the page must set them."""
        return {name: plain(getattr(self, name)) for name in self.STATE}

    def describe(self) -> dict[str, object]:
        return {
            **super().describe(),
            "label": self.description,
            "tooltip": self.tooltip,
            "continuous": self.continuous_update,
            **self.state(),
        }


class _Options(Control):
    """A choice among ``options``: values, or ``(label, value)`` pairs."""

    options = traitlets.Any(())
    value = traitlets.Any(None)
    STATE = ("options", "disabled", "value")

    def __init__(self, options: Sequence[object] = (), value: object = None, **kwargs: Any) -> None:
        super().__init__(options=tuple(options), **kwargs)
        if value is not None or not self.values():
            self.value = value
        else:
            self.value = self.values()[0]

    def values(self) -> list[object]:
        """The values of the options, in order."""
        return [o[1] if isinstance(o, tuple | list) else o for o in self.options]

    def labels(self) -> list[str]:
        """The labels of the options, in order."""
        return [str(o[0]) if isinstance(o, tuple | list) else str(o) for o in self.options]

    @property
    def index(self) -> int | None:
        """The position of ``value`` among the options (``None`` when it is not one of them)."""
        values = self.values()
        return values.index(self.value) if self.value in values else None

    @property
    def label(self) -> str | None:
        """The label of the option chosen."""
        index = self.index
        return None if index is None else self.labels()[index]

    @traitlets.validate("options")
    def _tuple(self, proposal: Any) -> tuple[object, ...]:
        return tuple(tuple(o) if isinstance(o, list) else o for o in proposal["value"])

    @traitlets.validate("value")
    def _known(self, proposal: Any) -> object:
        values = self.values()
        if values and proposal["value"] not in values:
            raise traitlets.TraitError(
                f"{self.description or 'the menu'}: {proposal['value']!r} is not one of {values}"
            )
        return proposal["value"]

    @traitlets.observe("options")
    def _keep_value(self, change: Any) -> None:
        values = self.values()
        if values and self.value not in values:
            self.value = values[0]


class Dropdown(_Options):
    kind = "dropdown"


class ToggleButtons(_Options):
    kind = "toggle-buttons"


class SelectionSlider(_Options):
    kind = "selection-slider"


class _Slider(Control):
    readout_format = traitlets.Unicode("")
    STATE: tuple[str, ...] = ("min", "max", "step", "disabled", "value")
    value: Any
    min: Any
    max: Any
    step: Any

    def __init__(self, value: float | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.value = self.min if value is None else value

    @traitlets.validate("value")
    def _clamp(self, proposal: Any) -> float:
        lo, hi = self.limits()
        clamped: float = min(max(proposal["value"], lo), hi)
        return clamped

    @traitlets.observe("min", "max")
    def _clamp_value(self, change: Any) -> None:
        lo, hi = self.limits()
        if not lo <= self.value <= hi:
            self.value = min(max(self.value, lo), hi)

    def limits(self) -> tuple[float, float]:
        return self.min, self.max

    def describe(self) -> dict[str, object]:
        return {**super().describe(), "format": self.readout_format}


class IntSlider(_Slider):
    kind = "int-slider"
    value = traitlets.Int(0)
    min = traitlets.Int(0)
    max = traitlets.Int(100)
    step = traitlets.Int(1)


class FloatSlider(_Slider):
    kind = "float-slider"
    value = traitlets.Float(0.0)
    min = traitlets.Float(0.0)
    max = traitlets.Float(10.0)
    step = traitlets.Float(0.1)

    def steps(self) -> list[float]:
        """Every value the slider moves through, rounded as Python rounds them (the page sends these numbers)."""
        n = round((self.max - self.min) / self.step)
        return [round(self.min + k * self.step, 10) for k in range(n + 1)]

    def describe(self) -> dict[str, object]:
        return {**super().describe(), "steps": self.steps()}


class FloatLogSlider(_Slider):
    """A slider over exponents: ``value = base ** x`` for ``x`` from ``min`` to ``max`` in ``step``\\ s."""

    kind = "log-slider"
    value = traitlets.Float(1.0)
    base = traitlets.Float(10.0)
    min = traitlets.Float(0.0)
    max = traitlets.Float(4.0)
    step = traitlets.Float(0.1)
    STATE = ("base", "min", "max", "step", "disabled", "value")

    def __init__(self, value: float | None = None, **kwargs: Any) -> None:
        super().__init__(value=1.0 if value is None else value, **kwargs)

    def limits(self) -> tuple[float, float]:
        return self.base**self.min, self.base**self.max

    def steps(self) -> list[float]:
        """Every value the slider moves through: ``base ** (min + k · step)`` (the page sends these numbers)."""
        n = round((self.max - self.min) / self.step)
        return [self.base ** (self.min + k * self.step) for k in range(n + 1)]

    def describe(self) -> dict[str, object]:
        return {**super().describe(), "steps": self.steps()}


class _Toggle(Control):
    value = traitlets.Bool(False)

    def __init__(self, value: bool = False, **kwargs: Any) -> None:
        super().__init__(value=value, **kwargs)


class Checkbox(_Toggle):
    kind = "checkbox"


class ToggleButton(_Toggle):
    kind = "toggle"


class _Typed(Control):
    placeholder = traitlets.Unicode("")

    def describe(self) -> dict[str, object]:
        return {**super().describe(), "placeholder": self.placeholder}


class Text(_Typed):
    kind = "text"
    value = traitlets.Unicode("")


class Textarea(_Typed):
    kind = "textarea"
    value = traitlets.Unicode("")
    rows = traitlets.Int(None, allow_none=True)


class IntText(_Typed):
    kind = "int-text"
    value = traitlets.Int(0)


class FloatText(_Typed):
    kind = "float-text"
    value = traitlets.Float(0.0)


# ------------------------------------------------------------------------------------ texts and boxes
class HTML(Widget):
    """HTML the page shows as it is (an explorer's texts and its message)."""

    kind = "html"
    value = traitlets.Unicode("")
    description = traitlets.Unicode("")

    def __init__(self, value: str = "", **kwargs: Any) -> None:
        super().__init__(value=value, **kwargs)


class Box(Widget):
    """Children laid out in a row that wraps (``HBox``: a row, ``VBox``: a column, ``GridBox``: a CSS grid)."""

    kind = "box"
    children = traitlets.Tuple()

    def __init__(self, children: Sequence[object] = (), **kwargs: Any) -> None:
        super().__init__(children=tuple(children), **kwargs)


class HBox(Box):
    kind = "hbox"


class VBox(Box):
    kind = "vbox"


class GridBox(Box):
    kind = "grid"


def choices(control: Widget) -> list[object] | None:
    """The values a learner can give ``control`` by clicking or dragging (``None``: typed, not enumerable)."""
    if isinstance(control, Dropdown | ToggleButtons | SelectionSlider):
        return [o[1] if isinstance(o, tuple) else o for o in control.options]
    if isinstance(control, Checkbox | ToggleButton):
        return [False, True]
    if isinstance(control, FloatLogSlider):
        return list(control.steps())
    if isinstance(control, IntSlider):
        return list(range(control.min, control.max + 1, control.step))
    return None


def plain(value: object) -> object:
    """A trait's value as JSON holds it (tuples become lists), as the page gets it and compares it."""
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value
