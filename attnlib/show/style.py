"""Plot styles: ``laptop`` (default) and ``projector`` (for presenting in class).

A style is a seaborn theme (``white``) and context (``notebook`` / ``talk``) plus attnlib's
colormaps, font sizes and highlight colour. ``attnlib.show.style.use("projector")`` switches every plot
and live view made afterwards to large bold fonts, thick lines, black highlights and the colour-blind-safe
``cividis`` / ``PuOr`` colormaps; those made before restyle themselves for their next drawing (a PNG, an
explorer's fallback image), but a live explorer already on the page keeps the look it was displayed with.
``attnlib.show.style.use("laptop")`` switches back (``cividis`` / ``RdBu``, seaborn's ``notebook``).

Objects that want to follow register with :func:`register` (held weakly) and implement
``restyle()``, which reads :func:`current`. The diagrams of ``scripts/figures.py`` ignore the
style on purpose (they are fixed files).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Protocol

import matplotlib as mpl
from matplotlib.typing import RcKeyType

__all__ = ["STYLES", "Style", "current", "use"]


@dataclass(frozen=True)
class Style:
    """What the plotting functions read: colormaps, font sizes, line widths and resolution."""

    name: str
    context: str  # seaborn plotting context: "notebook", "talk"
    cmap: str  # sequential colormap for non-negative matrices (weights)
    diverging_cmap: str  # for matrices with both signs (scores, values)
    font_size: float
    annotation_size: float
    line_width: float
    highlight_color: str
    dpi: int
    rc: tuple[tuple[RcKeyType, object], ...] = ()  # matplotlib's rc keys, checked by mypy


STYLES: dict[str, Style] = {
    "laptop": Style(
        name="laptop",
        context="notebook",
        cmap="cividis",
        diverging_cmap="RdBu_r",
        font_size=9,
        annotation_size=8,
        line_width=1.5,
        highlight_color="#d62728",
        dpi=72,
        rc=(("axes.linewidth", 0.8), ("figure.facecolor", "white")),
    ),
    "projector": Style(
        name="projector",
        context="talk",
        cmap="cividis",
        diverging_cmap="PuOr_r",
        font_size=16,
        annotation_size=14,
        line_width=3.5,
        highlight_color="#000000",
        dpi=72,
        rc=(
            ("axes.linewidth", 2.0),
            ("figure.facecolor", "white"),
            ("axes.edgecolor", "black"),
            ("text.color", "black"),
            ("axes.labelcolor", "black"),
            ("xtick.color", "black"),
            ("ytick.color", "black"),
            ("font.weight", "bold"),
            ("axes.titleweight", "bold"),
        ),
    ),
}

_current: list[Style] = [STYLES["laptop"]]


class Restyles(Protocol):
    """What :func:`register` takes: an object that redraws itself in the current style."""

    def restyle(self) -> None: ...


_listeners: weakref.WeakSet[Restyles] = weakref.WeakSet()


def current() -> Style:
    """The style in force."""
    return _current[0]


def _apply_rc(style: Style) -> None:
    """seaborn's ``white`` theme and the style's context, then attnlib's sizes and colours on top."""
    import seaborn as sns  # here, not at the top: seaborn brings pandas and pyplot, paid only when a style is set

    mpl.rcParams.update(
        {
            **sns.axes_style("white"),
            **sns.plotting_context(style.context),
            "font.size": style.font_size,
            "axes.titlesize": style.font_size * 1.1,
            "axes.labelsize": style.font_size,
            "xtick.labelsize": style.font_size * 0.9,
            "ytick.labelsize": style.font_size * 0.9,
            "lines.linewidth": style.line_width,
            "image.cmap": style.cmap,
            "font.weight": "normal",
            "axes.titleweight": "normal",
            **dict(style.rc),
        }
    )


def use(name: str) -> Style:
    """Switch every plot and widget to style ``name`` (``"laptop"`` or ``"projector"``)."""
    if name not in STYLES:
        raise ValueError(f"style must be one of {sorted(STYLES)}, got {name!r}")
    _current[0] = STYLES[name]
    _apply_rc(STYLES[name])
    for listener in list(_listeners):
        listener.restyle()
    return _current[0]


def register(obj: Restyles) -> None:
    """Let ``obj.restyle()`` be called when the style changes (held weakly)."""
    _listeners.add(obj)
