"""Every page of `make site` (the lessons, the home page, the teaching guide, the documents, search …) loads
offline in headless Chromium: nothing from the network, no page error, its math typeset when the site was built
(site/typeset.mjs: no MathJax loaded, the math's web fonts from the site), its images and explorers shown, and no
WCAG 2.0/2.1/2.2 A or AA violation that axe-core finds (issue 56).

A module of its own, beside test_site.py, so that make test's workers share the site's pages between them (the
site itself is built once per run: the fixture ``site`` of conftest.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.labdriver import load_module
from harness.static_pages import axe_violations, lesson_outputs, math_problems, open_page, wait_for_widgets

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
LESSONS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
# the lessons executed with widget state here (`make site`: all of them)
LIVE = os.environ.get("BROWSER_LESSONS", "all").replace(" ", "") or "all"
LIVE_LESSONS = [p for p in LESSONS if LIVE == "all" or p.name[:2] in LIVE.split(",")]


PAGE_STATE_JS = """
async () => {
  await document.fonts.ready;  // the math's web fonts (those its characters use) loaded, or failed
  const mathFonts = [...document.fonts].filter(f => f.family.startsWith('MJX'));
  const imgs = [...document.querySelectorAll('article img')];
  return {
    math: document.querySelectorAll('.math').length,
    typeset: document.querySelectorAll('.math mjx-container').length,
    mathjax: 'MathJax' in window,
    fontsLoaded: mathFonts.filter(f => f.status === 'loaded').map(f => f.family),
    fontsFailed: mathFonts.filter(f => f.status === 'error').map(f => f.family),
    broken: imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.getAttribute('src')),
    outputImages: [...document.querySelectorAll('.cell_output img')].filter(i => i.naturalWidth > 0).length,
    launch: !!document.querySelector('.launch-link a[href^="https://mybinder.org/"]'),
  };
}
"""


# every lesson page, and the pages that are not lessons: home (the README), teaching guide, documents, search …
PAGES = [f"notebooks/{p.stem}" for p in LESSONS] + [
    "index",
    "docs/teaching-guide",
    "docs/documents",
    "CONTRIBUTING",
    "search",
    "genindex",
]


def test_every_formula_is_typeset_when_the_site_is_built(site: Path) -> None:
    """Every page's math was typeset by the build (site/typeset.mjs), so no page loads MathJax: each formula of
    Sphinx's (``.math``) holds MathJax's output with the MathML a screen reader reads beside it, none is a MathJax
    error, no TeX delimiter is left in a page's text outside code, and the web fonts each page's math names are
    files of the site. MathJax 2 is no longer copied into the site."""
    build = load_module(REPO / "site" / "build.py")
    problems, fonts = [], set()
    for name in PAGES:
        page = site / f"{name}.html"
        html = page.read_text(encoding="utf-8")
        problems += [f"{name}: {problem}" for problem in math_problems(html)]
        fonts |= {(page.parent / url).resolve() for url in build.math_fonts(html)}
    assert not problems, "\n".join(problems)
    assert fonts and all(font.is_file() for font in fonts), sorted(map(str, fonts))
    assert not (site / "_static" / "mathjax").exists()


@pytest.mark.parametrize("name", PAGES)
def test_page_offline(site: Path, browser, name: str) -> None:
    """Each page loads with nothing from the network and no error, its math shown in the site's web fonts with no
    MathJax, its images and explorers shown; and, drawn so, axe-core finds no violation of WCAG 2.0/2.1/2.2 A or
    AA in it (issue 56)."""
    loaded: list[str] = []
    page, blocked, errors = open_page(browser, (site / f"{name}.html").as_uri(), loaded=loaded)
    try:
        state = page.evaluate(PAGE_STATE_JS)
        drawn = wait_for_widgets(page)
        violations = axe_violations(page)
    finally:
        page.close()
    assert not blocked, f"requests to the network: {blocked}"
    assert not errors, f"page errors: {errors}"
    assert state["typeset"] >= state["math"], state  # every formula typeset (by the build)
    assert not state["mathjax"] and not [url for url in loaded if "mathjax/" in url.lower()], "MathJax loaded"
    # the sidebar has math on every page: its fonts come from the site (a wrong fontURL fails to load)
    assert state["fontsLoaded"] and not state["fontsFailed"], state
    assert not state["broken"], f"images not shown: {state['broken']}"
    if name.startswith("notebooks/"):
        lesson = REPO / f"{name}.ipynb"
        figures, widgets, fallbacks = lesson_outputs(lesson)
        live = lesson in LIVE_LESSONS
        assert state["math"] > 0, state
        # every figure; every widget live (drawn from its saved state) or, not executed here, its PNG
        assert state["outputImages"] >= figures + (0 if live else fallbacks), state
        assert drawn == (widgets if live else 0), (drawn, widgets)
        assert state["launch"], state
    assert not violations, f"{name}: axe-core finds\n" + "\n".join(violations)
