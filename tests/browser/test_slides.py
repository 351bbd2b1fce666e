"""A `make slides` deck works with no kernel and no network in headless Chromium, opened from disk and over
http: no CDN, no page or console error, math typeset when the deck was built (no MathJax loaded; its web fonts
from the deck's folder), every explorer drawn live from its saved widget state,
nothing left animating once the deck is shown, slides advance; no slide has a WCAG 2.x A/AA violation that
axe-core finds, and nothing moves for a reader who asks for reduced motion.

The deck is built as `make slides` builds it: scripts/build_slides.py shows lesson 04 executed with its widget
state (scripts/widget_state.py: the execution the site's build ran, the fixture ``site``, when BROWSER_LESSONS
selects the lesson; else a copy executed here) in a temporary folder, so it shows what the next `make slides`
will give; with lesson 12 too when BROWSER_LESSONS selects it (unset or ``all``: it does), whose deck loads the
chunks of its table from the files beside it (``slides/attnlib-chunks/``). Every request that is not ``file://`` (or
the test's own server on 127.0.0.1) is blocked and recorded; the test fails if the deck tried any. Nothing
waits on the clock: each step waits for what it checks. Skipped only when there is no Chromium or no npm
(needed once to fetch reveal.js, mathjax-full … from package-lock.json into node_modules/).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from harness.labdriver import find_chromium, load_module
from harness.static_pages import (
    SharedPages,
    axe_violations,
    check_chunk_walk,
    check_explorers,
    compare_with_python,
    math_problems,
    open_page,
    python_states,
    sample_states,
    serve,
    wait_for_widgets,
)

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = find_chromium()
LESSONS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
DECK_LESSON = next((p for p in LESSONS if p.name.startswith("04_")), LESSONS[0] if LESSONS else None)
LIVE = os.environ.get("BROWSER_LESSONS", "all").replace(" ", "") or "all"
# lesson 12's deck too (its table in chunks), when BROWSER_LESSONS selects lesson 12
POSITIONS = next((p for p in LESSONS if p.name.startswith("12_") and (LIVE == "all" or "12" in LIVE.split(","))), None)
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _build_slides():
    return load_module(REPO / "scripts" / "build_slides.py")


@pytest.fixture(scope="module")
def decks(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> dict[str, Path]:
    """The decks of lesson 04 (and 12: :data:`POSITIONS`), built into one folder as `make slides` builds them:
    from the lessons the site's build executed with their widget state (the fixture ``site``, once per run) when
    it executed them, else from copies executed here (``make slides``' own step, scripts/widget_state.py)."""
    if CHROMIUM is None:
        pytest.skip("no chromium executable on this machine (install it with `make chromium`, needs root and apt-get)")
    build_slides = _build_slides()
    have_modules = all((build_slides.NODE_MODULES / n / "package.json").is_file() for n in build_slides.PACKAGES)
    if not have_modules and shutil.which("npm") is None:
        pytest.skip("no npm to fetch the decks' JavaScript (reveal.js, mathjax-full …) into node_modules/")
    if DECK_LESSON is None:
        pytest.skip("no lesson in notebooks/ yet")
    root = tmp_path_factory.mktemp("deck")
    (root / "images").symlink_to(REPO / "images")  # decks show ../images/*.png like the lessons
    wanted = [p for p in (DECK_LESSON, POSITIONS) if p is not None]
    if _site_executes(wanted):  # the same execution (scripts/widget_state.execute) `make slides` runs first
        site = request.getfixturevalue("site")
        executed = load_module(REPO / "site" / "build.py").executed_folder(site.parent / "src")
        built = build_slides.build([executed / p.name for p in wanted], root / "slides", executed=None)
    else:
        (root / "notebooks").mkdir()
        lessons = [root / "notebooks" / p.name for p in wanted]
        for lesson in lessons:
            shutil.copy(REPO / "notebooks" / lesson.name, lesson)
        executed = root / "executed"
        built = build_slides.build(lessons, root / "slides", executed=executed)
    EXECUTED[:] = [executed]
    return {deck.name.split(".")[0]: deck for deck in built}


#: the folder of the executed lessons the decks show (set by the fixture ``decks``)
EXECUTED: list[Path] = []


def _site_executes(lessons: list[Path]) -> bool:
    """Whether the site's build (tests/browser/conftest.py ``site``) executes every one of ``lessons`` with its
    widget state and can be built here (Sphinx and myst-nb installed)."""
    if not all(importlib.util.find_spec(name) for name in ("sphinx", "myst_nb")):
        return False
    return all(LIVE == "all" or p.name[:2] in LIVE.split(",") for p in lessons)


@pytest.fixture(scope="module")
def deck(decks: dict[str, Path]) -> Path:
    """Lesson 04's deck."""
    return decks[DECK_LESSON.stem]


@pytest.fixture(scope="module")
def server(deck: Path):
    with serve(deck.parent.parent) as base:
        yield base


@pytest.fixture(scope="module")
def pages(browser):
    """Lesson 04's deck opened once from disk and once over http for the tests that only read it, then taken by
    those that change it (a slide, a control), which come after the readers: :class:`SharedPages`."""
    shared = SharedPages(browser, viewport={"width": 1280, "height": 800})
    yield shared
    shared.close()


@pytest.fixture(params=["file", "http"])
def opened(request, deck: Path, pages: SharedPages):
    """The deck opened from disk or over http, for a test that only reads it (the page ``pages`` keeps); yields
    (page, blocked requests, page and console errors since it opened)."""
    page, blocked, errors, _ = pages.get(_url(deck, request, request.param))
    page.wait_for_selector(".reveal .slides section.present", timeout=30_000)
    return page, blocked, errors


@pytest.fixture(params=["file", "http"])
def taken(request, deck: Path, pages: SharedPages):
    """The deck opened from disk or over http, for a test that changes it: the page the readers had (no longer
    kept, so no later test reads it) or a new one; closed after the test."""
    page, blocked, errors, _ = pages.take(_url(deck, request, request.param))
    page.wait_for_selector(".reveal .slides section.present", timeout=30_000)
    yield page, blocked, errors
    page.close()


def _widget_outputs(deck: Path) -> int:
    nb = nbformat.read(EXECUTED[0] / f"{deck.name.split('.')[0]}.ipynb", as_version=4)
    return sum(WIDGET_VIEW in o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.outputs)


# the CSS animations and transitions still running, each with its name and the element it moves
RUNNING_JS = """() => document.getAnimations().filter((a) => a.playState === 'running').map((a) => {
  const target = a.effect?.target;
  return `${a.animationName || a.transitionProperty || 'animation'} on ${target?.className || target?.tagName}`;
})"""


def test_nothing_animates_once_the_deck_is_shown(opened) -> None:
    """While anything animates, Chromium draws a frame at every tick and an explorer's change waits for the next
    one: reveal.js's controls tutorial bounced the "next" arrow for 100 s after a deck opened (build_slides'
    NO_BOUNCE). A slide's own short transitions end within the wait. The first test to read the deck: the page is
    opened here (``pages``), so the wait starts once it is drawn, as for a reader."""
    page, _, errors = opened
    wait_for_widgets(page)
    try:
        page.wait_for_function(f"() => ({RUNNING_JS})().length === 0", timeout=10_000)
    except PlaywrightTimeout:
        pytest.fail(f"still animating 10 s after the deck was drawn: {page.evaluate(RUNNING_JS)}")
    assert errors == []


def test_deck_loads_nothing_remote(deck: Path, opened) -> None:
    page, blocked, errors = opened
    wait_for_widgets(page)  # the widget renderer and anywidget's front end: the last scripts a deck loads
    page.evaluate("() => document.fonts.ready.then(() => true)")  # and the math's web fonts
    assert blocked == [], f"the deck tried the network: {blocked}"
    assert errors == [], f"page errors: {errors}"
    html = deck.read_text(encoding="utf-8")
    for cdn in ("unpkg.com", "cdnjs", "jsdelivr", "cdn.mathjax", "fonts.googleapis"):
        assert cdn not in html


def test_every_formula_of_the_decks_is_typeset_when_built(decks: dict[str, Path]) -> None:
    """build_slides typesets every deck's math (site/typeset.mjs, ``$…$`` too): each formula is MathJax's output
    with its MathML for screen readers, none a MathJax error; no TeX left in the text outside code; no MathJax
    script, and MathJax 2 no longer copied beside the decks."""
    problems = []
    for name, deck in decks.items():
        html = deck.read_text(encoding="utf-8")
        problems += [f"{name}: {problem}" for problem in math_problems(html, dollars=True)]
        problems += [] if "<mjx-container" in html else [f"{name}: no typeset formula"]
    assert not problems, "\n".join(problems)
    folder = next(iter(decks.values())).parent
    assert not (folder / "_vendor" / "mathjax").exists(), "MathJax 2 copied beside the decks"


def test_math_is_shown_in_its_fonts_with_no_mathjax(opened) -> None:
    page, _, errors = opened
    state = page.evaluate("""async () => {
      await document.fonts.ready;
      const fonts = [...document.fonts].filter(f => f.family.startsWith('MJX'));
      return {
        formulas: document.querySelectorAll('mjx-container').length,
        mathjax: 'MathJax' in window,
        loaded: fonts.filter(f => f.status === 'loaded').length,
        failed: fonts.filter(f => f.status === 'error').map(f => f.family),
      };
    }""")
    assert state["formulas"] > 0 and not state["mathjax"], state
    assert state["loaded"] > 0 and not state["failed"], state  # the fonts' URL, relative to the deck, is right
    assert errors == []


def test_explorers_are_drawn_from_their_saved_state(deck: Path, opened) -> None:
    page, _, errors = opened
    html = deck.read_text(encoding="utf-8")
    assert "application/vnd.jupyter.widget-state+json" in html  # the state the deck draws with no kernel
    expected = _widget_outputs(deck)
    assert expected >= 1, "lesson 04 displays its explorers"
    assert wait_for_widgets(page) == expected
    assert page.locator(".attnlib-explorer").count() >= 1  # the explorers' own front end drew
    assert page.get_by_text("Error displaying widget").count() == 0
    assert errors == []


def _url(deck: Path, request: pytest.FixtureRequest, how: str) -> str:
    return deck.as_uri() if how == "file" else f"{request.getfixturevalue('server')}/slides/{deck.name}"


@pytest.mark.parametrize("how", ["file", "http"])
def test_deck_numbers_and_hovers_are_pythons(deck: Path, browser, request: pytest.FixtureRequest, how: str) -> None:
    """At random states reached through the deck's controls, every number a view shows is Python's:
    ``compute(values)`` of the same explorer (the lesson run again in a kernel) formatted by ``annotation``; and
    hovering sampled cells shows, at once (no kernel to wait for), their labels, value and ``view.explain(i, j)``
    at that state (lesson 04's scores explain each product)."""
    page, blocked, errors = open_page(browser, _url(deck, request, how))
    try:
        wait_for_widgets(page)
        states = sample_states(page, seed=4)
    finally:
        page.close()
    assert states, "lesson 04's explorers have controls a deck can move"
    assert not blocked and not errors, (blocked, errors)
    python = python_states(DECK_LESSON, states)  # the lesson the deck shows, run again in a kernel
    problems = compare_with_python(states, python)
    assert not problems, "\n".join(problems)
    explained = [why for py in python for cells in py["cells"].values() for _, _, why in cells if why]
    assert explained, "no hovered cell has an explanation: lesson 04's scores explain every product"


@pytest.mark.parametrize("how", ["file", "http"])
def test_lesson_12s_deck_loads_each_chunk_from_its_file(
    decks: dict[str, Path], browser, request: pytest.FixtureRequest, how: str
) -> None:
    """Lesson 12's deck ships the chunk of its first d_model only and loads another's from slides/attnlib-chunks/
    when chosen, from disk and over http, drawing Python's numbers (harness.static_pages.check_chunk_walk)."""
    if POSITIONS is None:
        pytest.skip("lesson 12 is not selected here (BROWSER_LESSONS)")
    deck = decks[POSITIONS.stem]
    assert any((deck.parent / "attnlib-chunks").glob("*.js")), "the chunk files beside the deck"
    problems = check_chunk_walk(browser, _url(deck, request, how), POSITIONS, counted=how == "http")
    assert not problems, "\n".join(problems)


def test_slides_advance(taken) -> None:
    """Arrow keys move on, Home goes back to the first slide. It changes slides: after the tests that read the
    deck (it takes the page they read)."""
    page, _, errors = taken
    page.wait_for_function("() => location.hash.startsWith('#/')", timeout=30_000)
    before = page.evaluate("location.hash")
    for _ in range(3):  # fragments may take a key press or two first
        page.keyboard.press("ArrowRight")
    page.wait_for_function(f"() => location.hash !== {before!r}", timeout=10_000)
    page.keyboard.press("Home")
    page.wait_for_function("() => ['#/', '#/0', ''].includes(location.hash)", timeout=10_000)
    assert errors == []


def test_explorers_answer_with_no_kernel(taken) -> None:
    """Every control a deck with no kernel can move moves its explorer's views (from the table); every other
    control is disabled and named by the no-kernel note. It moves controls: after the tests that read the deck."""
    page, blocked, errors = taken
    wait_for_widgets(page)
    problems = check_explorers(page)
    assert not problems, "\n".join(problems)
    assert blocked == [] and errors == [], (blocked, errors)


HIDDEN_SLIDES_JS = (
    "() => [...document.querySelectorAll('.reveal .slides section')].filter((s) => !s.checkVisibility()).length"
)


def test_every_slide_has_no_axe_violation(decks: dict[str, Path], browser) -> None:
    """axe-core (WCAG 2.0/2.1/2.2, A and AA) on each deck as shown (its first slide, reveal.js's controls and
    progress bar, and what the other slides hide from a screen reader), then on every slide at once: the deck laid
    out for print (``?print-pdf``: each slide a page, the same styles), where reveal.js leaves the slides it does
    not show aria-hidden, so there aria-hidden-focus is the first run's alone. A run per slide costs 3–4 s here."""
    problems = []
    for name, deck in decks.items():
        for how, skip in (("", []), ("?print-pdf", ["aria-hidden-focus"])):
            page, blocked, errors = open_page(browser, deck.as_uri() + how, viewport={"width": 1280, "height": 800})
            try:
                page.wait_for_selector(".reveal .slides section", timeout=30_000)
                wait_for_widgets(page)
                hidden = page.evaluate(HIDDEN_SLIDES_JS)
                problems += [f"{name}{how}: {v}" for v in axe_violations(page, skip=skip)]
            finally:
                page.close()
            assert not blocked and not errors, (blocked, errors)
            assert how != "?print-pdf" or hidden == 0, f"{name}: laid out for print, {hidden} slides are still hidden"
    assert not problems, "\n".join(problems)


def test_nothing_moves_for_a_reader_who_asks_for_reduced_motion(deck: Path, browser) -> None:
    """With prefers-reduced-motion, a key press changes slide or fragment with no transition running at all."""
    context = browser.new_context(reduced_motion="reduce", viewport={"width": 1280, "height": 800})
    page = context.new_page()
    try:
        page.goto(deck.as_uri(), wait_until="load")
        page.wait_for_selector(".reveal .slides section.present", timeout=30_000)
        wait_for_widgets(page)
        page.wait_for_function(f"() => ({RUNNING_JS})().length === 0", timeout=10_000)
        moving = []
        for _ in range(4):
            page.keyboard.press("ArrowRight")
            moving += page.evaluate(RUNNING_JS)
    finally:
        context.close()
    assert not moving, moving
