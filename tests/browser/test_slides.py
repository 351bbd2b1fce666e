"""A `make slides` deck works offline in headless Chromium: no CDN, no page error, math typeset,
the explorers shown as their PNG fallbacks, slides advance.

The deck is built from a copy of lesson 04 executed here with ``scripts/execute_notebooks.py``
(no widget state stored), so it shows what the next `make execute` + `make slides` will give.

Every request that is not ``file://`` (or localhost) is blocked and recorded; the test fails if
the deck tried any. Skipped only when there is no Chromium or no npm (needed once to fetch
reveal.js, MathJax … from package-lock.json into node_modules/).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.labdriver import find_chromium, headless_chromium, load_module, offline

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = find_chromium()
LESSONS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
DECK_LESSON = next((p for p in LESSONS if p.name.startswith("04_")), LESSONS[0] if LESSONS else None)


def _build_slides():
    return load_module(REPO / "scripts" / "build_slides.py")


@pytest.fixture(scope="module")
def deck(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if CHROMIUM is None:
        pytest.skip("no chromium executable on this machine (install it with `make chromium`, needs root and apt-get)")
    build_slides = _build_slides()
    have_modules = all((build_slides.NODE_MODULES / n / "package.json").is_file() for n in build_slides.PACKAGES)
    if not have_modules and shutil.which("npm") is None:
        pytest.skip("no npm to fetch the decks' JavaScript (reveal.js, MathJax …) into node_modules/")
    if DECK_LESSON is None:
        pytest.skip("no lesson in notebooks/ yet")
    root = tmp_path_factory.mktemp("deck")
    (root / "images").symlink_to(REPO / "images")  # decks show ../images/*.png like the lessons
    (root / "notebooks").mkdir()
    lesson = root / "notebooks" / DECK_LESSON.name
    shutil.copy(DECK_LESSON, lesson)
    load_module(REPO / "scripts" / "execute_notebooks.py").execute(str(lesson))
    (deck,) = build_slides.build([lesson], root / "slides")
    return deck


@pytest.fixture(scope="module")
def browser():
    with headless_chromium() as chromium:
        yield chromium


@pytest.fixture
def opened(deck: Path, browser):
    """The deck opened from disk; yields (page, blocked requests, page errors)."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    blocked, errors = offline(page, local_servers=True)
    page.goto(deck.as_uri())
    page.wait_for_selector(".reveal .slides section.present", timeout=30_000)
    yield page, blocked, errors
    page.close()


def test_deck_loads_nothing_remote(deck: Path, opened) -> None:
    page, blocked, errors = opened
    page.wait_for_timeout(1500)  # late loaders (widget renderer, MathJax extensions)
    assert blocked == [], f"the deck tried the network: {blocked}"
    assert errors == [], f"page errors: {errors}"
    html = deck.read_text(encoding="utf-8")
    for cdn in ("unpkg.com", "cdnjs", "jsdelivr", "cdn.mathjax", "fonts.googleapis"):
        assert cdn not in html


def test_math_is_typeset(opened) -> None:
    page, _, errors = opened
    page.wait_for_function(
        "() => document.querySelectorAll('.MathJax_CHTML, .mjx-chtml, mjx-container, .MathJax').length > 0",
        timeout=60_000,
    )
    assert errors == []


def test_explorers_show_their_fallback_images(deck: Path, opened) -> None:
    page, _, errors = opened
    html = deck.read_text(encoding="utf-8")
    assert "application/vnd.jupyter.widget-state+json" not in html  # no saved state to render
    page.wait_for_function(
        "() => [...document.querySelectorAll('img[src^=\"data:image/png\"]')].some(i => i.naturalWidth > 0)",
        timeout=60_000,
    )
    n_png = page.evaluate("() => document.querySelectorAll('img[src^=\"data:image/png\"]').length")
    assert n_png >= 2, f"expected the explorers' fallback PNGs (and the lesson's figures), got {n_png}"
    assert page.get_by_text("Error displaying widget").count() == 0
    assert errors == []


def test_slides_advance(opened) -> None:
    page, _, errors = opened
    page.wait_for_function("() => location.hash.startsWith('#/')", timeout=30_000)
    before = page.evaluate("location.hash")
    for _ in range(3):  # fragments may take a key press or two first
        page.keyboard.press("ArrowRight")
        page.wait_for_timeout(200)
    after = page.evaluate("location.hash")
    assert after != before, f"still on slide {before} after three ArrowRight"
    page.keyboard.press("Home")
    page.wait_for_timeout(200)
    assert page.evaluate("location.hash") in ("#/", "#/0", "")
    assert errors == []
