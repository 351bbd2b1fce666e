"""Every lesson is a slide deck: each cell's slide type is one every tool reads the same way.

jupyterlab-slideshow (live, widgets working) and `make slides` (static reveal.js decks) both read
``cell.metadata.slideshow.slide_type``. A cell without one continues the current slide, for both.
The classic Notebook's explicit ``"-"`` means the same to nbconvert, but jupyterlab-slideshow 0.3.4
leaves such cells out of the deck entirely (tests/browser/test_lab.py, the deck test): the lessons never use it.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parent.parent
LESSONS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
SLIDE_TYPES = {"slide", "subslide", "fragment", "skip", "notes", None}  # None: continue the slide
MIN_SLIDES = 4  # a lesson is a few slides, not one long page


def slide_types(path: Path) -> list[object]:
    nb = nbformat.read(path, as_version=4)
    return [cell.metadata.get("slideshow", {}).get("slide_type") for cell in nb.cells]


def test_there_are_lessons() -> None:
    assert LESSONS, "no notebooks/NN_*.ipynb found"


@pytest.mark.parametrize("path", LESSONS, ids=[p.name for p in LESSONS])
def test_every_cell_has_a_valid_slide_type(path: Path) -> None:
    bad = [(i, t) for i, t in enumerate(slide_types(path)) if t not in SLIDE_TYPES]
    hint = ' ("-" hides the cell in jupyterlab-slideshow: leave the slide type out to continue a slide)'
    assert not bad, f"{path.name}: cells with an invalid slideshow.slide_type (index, value): {bad}" + hint


@pytest.mark.parametrize("path", LESSONS, ids=[p.name for p in LESSONS])
def test_lesson_opens_with_a_slide(path: Path) -> None:
    assert slide_types(path)[0] == "slide", f"{path.name}: the first cell must be a 'slide'"


@pytest.mark.parametrize("path", LESSONS, ids=[p.name for p in LESSONS])
def test_lesson_has_a_few_slides(path: Path) -> None:
    n = sum(t == "slide" for t in slide_types(path))
    assert n >= MIN_SLIDES, f"{path.name}: {n} 'slide' cells, expected at least {MIN_SLIDES}"


def test_static_decks_point_at_local_copies_only() -> None:
    """``make slides`` renders without a CDN URL (the browser test opens such a deck offline)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_slides", REPO / "scripts" / "build_slides.py")
    build_slides = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build_slides)
    nb = nbformat.read(LESSONS[0], as_version=4)
    html, _ = build_slides.exporter().from_notebook_node(nb)
    assert build_slides.remote_references(html) == []
    # a link the reader may follow is not something the deck loads; a script, a stylesheet or an image would be
    assert not build_slides.remote_references('<a href="https://arxiv.org/abs/1706.03762">Vaswani</a>')
    assert not build_slides.remote_references('<a href="https://cdn.openai.com/paper.pdf">GPT-2</a>')  # a cdn link
    assert build_slides.remote_references('<script src="https://cdn.example.org/x.js"></script>')
    assert build_slides.remote_references('<link rel="stylesheet" href="//fonts.example.org/a.css">')
    # the lessons store no widget state (readers without a kernel see each explorer's PNG fallback), and
    # nbconvert loads the widget renderer only for stored state: with state it must be the local copy
    assert "widgets" not in nb.metadata
    for option, url in build_slides.URLS.items():
        if option != "widget_renderer_url":
            assert url.split("?")[0] in html, f"the deck does not load {url}"
    nb.metadata["widgets"] = {
        "application/vnd.jupyter.widget-state+json": {"state": {}, "version_major": 2, "version_minor": 0}
    }
    with_state, _ = build_slides.exporter().from_notebook_node(nb)
    assert build_slides.URLS["widget_renderer_url"] in with_state and build_slides.remote_references(with_state) == []
    assert "theme/white.css" in html
    default, _ = build_slides.SlidesExporter().from_notebook_node(nbformat.read(LESSONS[0], as_version=4))
    assert build_slides.remote_references(default), "the check must catch nbconvert's default CDN URLs"
