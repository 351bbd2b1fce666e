"""Every page of `make site` (the lessons, the home page, the teaching guide, the documents, search …) loads
offline in headless Chromium: nothing from the network, no page error, its math typeset by the site's own
MathJax, its images and explorers shown, and no WCAG 2.0/2.1/2.2 A or AA violation that axe-core finds (issue 56).

A module of its own, beside test_site.py, so that make test's workers share the site's pages between them (the
site itself is built once per run: the fixture ``site`` of conftest.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.static_pages import axe_violations, lesson_outputs, open_page, wait_for_widgets

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
LESSONS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
# the lessons executed with widget state here (`make site`: all of them)
LIVE = os.environ.get("BROWSER_LESSONS", "all").replace(" ", "") or "all"
LIVE_LESSONS = [p for p in LESSONS if LIVE == "all" or p.name[:2] in LIVE.split(",")]


PAGE_STATE_JS = """
async () => {
  if (document.querySelector('.math')) {  // every page with math (the sidebar has some) must typeset it
    const ready = await new Promise(resolve => {
      const start = Date.now();
      const wait = () => (window.MathJax && MathJax.isReady) ? resolve(true)
        : (Date.now() - start > 20000 ? resolve(false) : setTimeout(wait, 50));
      wait();
    });
    if (!ready) return {mathjaxMissing: true};
    await new Promise(resolve => MathJax.Hub.Queue(resolve));  // after MathJax has typeset the page
  }
  const imgs = [...document.querySelectorAll('article img')];
  return {
    math: document.querySelectorAll('.math').length,
    typeset: document.querySelectorAll('.mjx-chtml').length,
    texErrors: document.querySelectorAll('.mjx-merror, .MathJax_Error').length,
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


@pytest.mark.parametrize("name", PAGES)
def test_page_offline(site: Path, browser, name: str) -> None:
    """Each page loads with nothing from the network and no error, its math typeset, its images and explorers
    shown; and, drawn so, axe-core finds no violation of WCAG 2.0/2.1/2.2 A or AA in it (issue 56)."""
    page, blocked, errors = open_page(browser, (site / f"{name}.html").as_uri())
    try:
        state = page.evaluate(PAGE_STATE_JS)
        drawn = wait_for_widgets(page)
        violations = axe_violations(page)
    finally:
        page.close()
    assert not blocked, f"requests to the network: {blocked}"
    assert not errors, f"page errors: {errors}"
    assert not state.get("mathjaxMissing"), f"{name}: the page has math but MathJax never became ready"
    assert state["typeset"] >= state["math"], state  # every formula typeset
    assert state["texErrors"] == 0, state
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
