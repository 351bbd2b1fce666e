"""Live decks: a lesson presented with jupyterlab-slideshow ("Start Deck") keeps its widgets working.

JupyterLab in headless Chromium runs lesson 04, starts the deck (the extension's ``deck:start``
command, as the command palette's "Start Deck" does), moves forward slide by slide to the scores
explorer, and changes its document in deck mode: the live view must redraw to exactly the scores
``attnlib`` computes for the other document. A screenshot of that slide is kept in
test-artifacts/browser/.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.labdriver import (
    OPEN_NOTEBOOK_JS,
    RUN_ALL_JS,
    STATE_JS,
    headless_chromium,
    live_view,
    open_lab,
    start_lab_on_lessons,
    table_numbers,
    view_root,
)

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts" / "browser"
LESSON = "notebooks/04_scores.ipynb"

# the cell holding the scores explorer, and whether the deck shows it now (on screen, not hidden)
EXPLORER_ON_SCREEN_JS = """
(id) => {
  const grid = [...document.querySelectorAll(`#${id} .attn-heatmap-grid[aria-label="scores Q Kᵀ"]`)][0];
  if (!grid) return {found: false};
  const cell = grid.closest('.jp-Cell');
  const box = grid.getBoundingClientRect();
  return {
    found: true,
    deck: 'jpDeckMode' in document.body.dataset && document.getElementById(id).classList.contains('jp-Deck'),
    onscreen: cell.classList.contains('jp-deck-mod-onscreen') && grid.checkVisibility()
      && box.width > 0 && box.bottom > 0 && box.top < window.innerHeight,
  };
}
"""


FIRST_CELL_JS = """
(id) => {
  const widget = [...window.jupyterapp.shell.widgets('main')].find(w => w.id === id);
  widget.content.activeCellIndex = 0;
  window.jupyterapp.shell.activateById(id);
}
"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with headless_chromium() as browser:
        server = start_lab_on_lessons(tmp_path_factory.mktemp("deck"))
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            open_lab(page, server, "deck-test")
            yield page, errors
        finally:
            server.stop()


def test_widgets_stay_live_in_deck_mode(lab) -> None:
    from attnlib import score
    from attnlib.examples import four_inputs

    page, errors = lab
    panel_id = page.evaluate(OPEN_NOTEBOOK_JS, LESSON)
    page.evaluate(RUN_ALL_JS, panel_id)
    page.wait_for_function(
        f"() => {{ const s = ({STATE_JS})('{panel_id}'); "
        "return s.found && s.status === 'idle' && s.prompts.length && s.numbered === s.prompts.length; }",
        timeout=120_000,
    )
    page.wait_for_function(f"() => ({EXPLORER_ON_SCREEN_JS})('{panel_id}').found", timeout=30_000)
    page.evaluate(FIRST_CELL_JS, panel_id)  # run-all left the last cell active: present from the top
    page.evaluate("() => window.jupyterapp.commands.execute('deck:start')")
    page.wait_for_function(f"() => ({EXPLORER_ON_SCREEN_JS})('{panel_id}').deck", timeout=30_000)
    for _ in range(60):  # forward, slide by slide (fragments included), until the explorer is on screen
        if page.evaluate(EXPLORER_ON_SCREEN_JS, panel_id)["onscreen"]:
            break
        page.evaluate("() => window.jupyterapp.commands.execute('deck:forward')")
        page.wait_for_timeout(150)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    state = page.evaluate(EXPLORER_ON_SCREEN_JS, panel_id)
    assert state["deck"] and state["onscreen"], f"the scores explorer never came on screen in deck mode: {state}"

    grid = live_view(page, panel_id, "scores Q Kᵀ")
    document = page.locator(f"#{panel_id} select").filter(has=page.locator("option", has_text="001 — three")).first
    document.select_option(label="000 — four inputs, d_k = 5")  # in deck mode, as a presenter would
    try:
        page.wait_for_function(  # the view redraws for 000's 4×4 scores: look its grid up afresh each time
            '(id) => { const g = document.querySelector(`#${id} .attn-heatmap-grid[aria-label="scores Q Kᵀ"]`);'
            " return g && Number(g.dataset.rows) * Number(g.dataset.cols) === 16; }",
            arg=panel_id,
            timeout=15_000,
        )
    except Exception:
        shown = document.evaluate("s => s.options[s.selectedIndex].text")
        cells = grid.evaluate("g => Number(g.dataset.rows) * Number(g.dataset.cols)")
        page.screenshot(path=str(ARTIFACTS / "deck_04_scores_failed.png"))
        raise AssertionError(f"the view did not redraw in deck mode: document {shown!r}, {cells} cells") from None
    queries, keys, _ = four_inputs.qkv()
    assert table_numbers(view_root(grid)) == pytest.approx(score(queries, keys).flatten().tolist())
    assert page.evaluate(EXPLORER_ON_SCREEN_JS, panel_id)["deck"], "the deck closed"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "deck_04_scores.png"))
    page.evaluate("() => window.jupyterapp.commands.execute('deck:stop')")
    assert not errors, errors
