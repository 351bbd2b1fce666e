"""Issue 56, the explorers for a learner who does not use a mouse, does not see the screen, sees colours otherwise
or reads on a phone or at 200 % zoom: checked on the site's lesson 04 (the keyboard walk: on every lesson whose
explorers are live, BROWSER_LESSONS) in the site of conftest.py, built once per run (test_site_pages.py runs
axe-core on every page of it, test_slides.py on every slide of a deck, test_lab.py inside every explorer in JupyterLab;
tests/show/test_style.py simulates colour-vision deficiencies).

- keyboard alone: Tab reaches every enabled control, grid and table button of each explorer in the page's order,
  each with a visible focus; arrow keys, Space and Enter operate them; a grid's cells are walked by arrow keys
  and each is read out with its hover explanation;
- a screen reader: from Chromium's accessibility tree, each view is named by its title and described by its
  shape and range, its table is a data table with column and row headers, and a change of state is announced
  once for the explorer;
- a 375 px wide phone and 200 % zoom (640 CSS px): controls wrap inside the page, a heatmap wider than the page
  scrolls in a box that takes the focus, and axe finds nothing; so does a formula wider than the page (lesson 08's
  page has one: the math is typeset at build time, and MathJax 3 does not break in-line formulas, so the site's
  a11y.js gives it a line of its own that scrolls); reduced motion: nothing animates.

Key presses only, from a starting point just before the explorer; nothing waits on the clock.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.static_pages import axe_violations, open_page, wait_for_widgets

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
LESSON = "04_scores"  # its explorers: controls of each kind a page with no kernel moves, views with explanations
LIVE = os.environ.get("BROWSER_LESSONS", "all").replace(" ", "") or "all"
# the lessons whose explorers are drawn live on the site (BROWSER_LESSONS; `make browser`: all of them)
LIVE_LESSONS = [
    p.stem
    for p in sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    if LIVE == "all" or p.name[:2] in LIVE.split(",")
]


@pytest.fixture(scope="module")
def lesson_url(site: Path) -> str:
    if LIVE != "all" and LESSON[:2] not in LIVE.split(","):
        pytest.skip(f"lesson {LESSON[:2]} is not executed with its widget state here (BROWSER_LESSONS)")
    return (site / "notebooks" / f"{LESSON}.html").as_uri()


# focus a button put just before explorer k: the next Tab enters the explorer as a reader's Tab would
START_JS = """(k) => {
  const root = document.querySelectorAll('.attnlib-explorer')[k];
  let start = document.getElementById('a11y-start');
  if (!start) { start = document.createElement('button'); start.id = 'a11y-start'; start.textContent = 'start'; }
  root.before(start);
  start.focus();
}"""

# what has the focus now, in explorer k: what it is, where it is in the page's order and whether its focus shows
FOCUSED_JS = """(k) => {
  const root = document.querySelectorAll('.attnlib-explorer')[k];
  const el = document.activeElement;
  if (!el || !root.contains(el)) return null;
  const style = getComputedStyle(el);
  const control = el.closest('[data-control]');
  return {
    index: Number(el.dataset.a11yOrder ?? -1),
    tag: el.tagName.toLowerCase(),
    type: el.getAttribute('type') || el.getAttribute('role') || '',
    control: control ? control.dataset.control : null,
    view: el.matches('svg.attn-heatmap-grid') ? el.closest('[data-view]')?.dataset.view ?? '?' : null,
    toggle: el.matches('.attn-heatmap-table-toggle'),
    checked: el.getAttribute('aria-checked'),
    atEnd: el.type === 'range' ? Number(el.value) >= Number(el.max) : el.tagName === 'SELECT'
      ? el.selectedIndex === el.options.length - 1 : false,
    outline: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0,
  };
}"""

# every element of explorer k that Tab must reach: enabled controls (a radio group's chosen button: arrow keys move
# in the group), grids, table buttons, links
REACHABLE_JS = """(k) => {
  const root = document.querySelectorAll('.attnlib-explorer')[k];
  const targets = [...root.querySelectorAll(
    'input:not([disabled]), select:not([disabled]), textarea:not([disabled]), button:not([disabled]), '
    + 'svg.attn-heatmap-grid, a[href]')].filter((el) => el.checkVisibility() && el.tabIndex >= 0);
  targets.forEach((el, i) => { el.dataset.a11yOrder = String(i); });  // the page's order, kept while it changes
  return targets.map((_, i) => i);
}"""

SHOWN_JS = "(k) => Number(document.querySelectorAll('.attnlib-explorer')[k].dataset.shown || 0)"

# the grid that has the focus: its cell, its outline, what its live region reads and what its tooltip shows
GRID_JS = """() => {
  const grid = document.activeElement;
  const view = grid.closest('.attn-heatmap');
  const tip = view.querySelector('.attn-heatmap-tooltip');
  return {
    row: grid.dataset.row, col: grid.dataset.col, rows: Number(grid.dataset.rows), cols: Number(grid.dataset.cols),
    outlined: grid.querySelectorAll('.attn-outline rect').length,
    live: view.querySelector('p[aria-live]').textContent,
    head: tip.hidden ? null : tip.querySelector('.attn-tip-head')?.textContent,
    why: tip.querySelector('.attn-tip-why:not(.attn-tip-pending)')?.textContent ?? '',
  };
}"""


def _operate(page, k: int, focused: dict) -> str | None:
    """Operate the focused control with the keys a reader would use; returns what is wrong, or None."""
    if focused["view"] is not None:
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowDown")
        grid = page.evaluate(GRID_JS)
        want = (str(min(1, grid["rows"] - 1)), str(min(1, grid["cols"] - 1)))
        if (grid["row"], grid["col"]) != want:
            return f"view {focused['view']}: arrows reached cell {grid['row'], grid['col']}, not {want}"
        if not grid["outlined"]:
            return f"view {focused['view']}: the focused cell is not outlined"
        if not grid["head"] or not grid["live"].startswith(grid["head"] + ": "):
            return f"view {focused['view']}: the cell read out ({grid['live']!r}) is not the one shown {grid['head']!r}"
        if grid["why"] and grid["why"] not in grid["live"]:
            return f"view {focused['view']}: the hover's explanation {grid['why']!r} is not read out: {grid['live']!r}"
        return None
    if focused["toggle"]:
        page.keyboard.press("Enter")
        shown = page.evaluate("() => document.activeElement.getAttribute('aria-pressed')")
        page.keyboard.press("Enter")  # and back
        return None if shown == "true" else "the table button did not show the table on Enter"
    keys = {
        "range": "ArrowLeft" if focused["atEnd"] else "ArrowRight",
        "select": "ArrowUp" if focused["atEnd"] else "ArrowDown",
    }
    if focused["type"] == "radio":  # the arrows choose the next button, then the one before: back where it was
        for key in ("ArrowRight", "ArrowLeft"):
            before = page.evaluate(SHOWN_JS, k)
            page.keyboard.press(key)
            try:
                page.wait_for_function(f"(k) => ({SHOWN_JS})(k) > {before}", arg=k, timeout=10_000)
            except Exception:
                return f"radio group {focused['control']}: {key} drew no new state"
        return None
    if focused["type"] == "checkbox":
        key = "Space"
    else:
        key = keys.get(focused["type"] or focused["tag"])
    if key is None or focused["control"] is None:
        return None
    before = page.evaluate(SHOWN_JS, k)
    page.keyboard.press(key)
    try:
        page.wait_for_function(f"(k) => ({SHOWN_JS})(k) > {before}", arg=k, timeout=10_000)
    except Exception:
        return f"control {focused['control']} ({focused['type'] or focused['tag']}): {key} drew no new state"
    return None


@pytest.mark.parametrize("lesson", LIVE_LESSONS)
def test_every_explorer_works_from_the_keyboard_alone(browser, site: Path, lesson: str) -> None:
    page, blocked, errors = open_page(browser, (site / "notebooks" / f"{lesson}.html").as_uri())
    problems: list[str] = []
    try:
        wait_for_widgets(page)
        count = page.locator(".attnlib-explorer").count()
        if not count:
            pytest.skip(f"{lesson} shows no explorer")
        for k in range(count):
            want = page.evaluate(REACHABLE_JS, k)
            page.evaluate(START_JS, k)
            reached: list[int] = []
            for _ in range(len(want) + 5):
                page.keyboard.press("Tab")
                focused = page.evaluate(FOCUSED_JS, k)
                if focused is None:
                    break
                if not focused["outline"] and focused["view"] is None:
                    problems.append(f"explorer {k}: no visible focus on {focused}")
                if focused["view"] is not None and not page.evaluate(
                    "() => getComputedStyle(document.activeElement).outlineStyle !== 'none'"
                ):
                    problems.append(f"explorer {k}: view {focused['view']} shows no focus")
                reached.append(focused["index"])
                wrong = _operate(page, k, focused)
                if wrong:
                    problems.append(f"explorer {k}: {wrong}")
            if reached != want:
                problems.append(f"explorer {k}: Tab reached elements {reached}, the page's order is {want}")
    finally:
        page.close()
    assert not problems, "\n".join(problems)
    assert not blocked and not errors, (blocked, errors)


def _ax_nodes(page) -> list[dict]:
    cdp = page.context.new_cdp_session(page)
    try:
        return cdp.send("Accessibility.getFullAXTree")["nodes"]
    finally:
        cdp.detach()


def _value(node: dict, key: str) -> str:
    return str((node.get(key) or {}).get("value", ""))


def _prop(node: dict, name: str) -> str:
    return next((str(p["value"].get("value", "")) for p in node.get("properties", []) if p["name"] == name), "")


# a live region that counts how often its text changes
COUNT_LIVE_JS = """(k) => {
  const root = document.querySelectorAll('.attnlib-explorer')[k];
  window.__liveChanges = [];
  const seen = new MutationObserver((records) => {
    for (const r of records) {
      const region = (r.target.nodeType === 1 ? r.target : r.target.parentElement).closest('[aria-live]');
      if (region && root.contains(region)) window.__liveChanges.push([region.className, region.textContent]);
    }
  });
  seen.observe(root, {subtree: true, childList: true, characterData: true});
}"""


def test_a_screen_reader_gets_each_view_its_table_and_one_announcement_per_change(browser, lesson_url: str) -> None:
    page, blocked, errors = open_page(browser, lesson_url)
    try:
        wait_for_widgets(page)
        grids = page.locator("svg.attn-heatmap-grid")
        shapes = [
            (g.get_attribute("aria-label"), g.get_attribute("data-rows"), g.get_attribute("data-cols"))
            for g in grids.all()
        ]
        nodes = _ax_nodes(page)
        views = [n for n in nodes if _value(n, "role") == "application" and _prop(n, "roledescription") == "heatmap"]
        # every table, opened from its button
        for toggle in page.locator(".attn-heatmap-table-toggle").all():
            toggle.focus()
            page.keyboard.press("Enter")
        tables = [n for n in _ax_nodes(page) if _value(n, "role") == "table"]
        roles = [_value(n, "role") for n in _ax_nodes(page)]
        # a change of state from the keyboard: the first slider moved one step
        k = page.evaluate(
            f"() => [...document.querySelectorAll('.attnlib-explorer')].findIndex((r) => r.querySelector('{MOVABLE}'))"
        )
        assert k >= 0, "lesson 04 has a control a page with no kernel moves"
        page.evaluate(COUNT_LIVE_JS, k)
        control = page.locator(".attnlib-explorer").nth(k).locator(MOVABLE).first
        before = page.evaluate(SHOWN_JS, k)
        control.focus()
        page.keyboard.press(
            control.evaluate(
                "(c) => c.type === 'range' ? (Number(c.value) >= Number(c.max) ? 'ArrowLeft' : 'ArrowRight')"
                " : (c.selectedIndex === c.options.length - 1 ? 'ArrowUp' : 'ArrowDown')"
            )
        )
        page.wait_for_function(f"(k) => ({SHOWN_JS})(k) > {before}", arg=k, timeout=10_000)
        page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
        changes = page.evaluate("() => window.__liveChanges")
        described = page.locator(".attnlib-explorer").nth(k).locator(".attn-heatmap > p.attn-heatmap-description[id]")
        descriptions = described.all_text_contents()
    finally:
        page.close()
    assert not blocked and not errors, (blocked, errors)
    assert len(views) == len(shapes) >= 1, (len(views), shapes)
    for node, (title, rows, cols) in zip(views, shapes):
        name, description = _value(node, "name"), _value(node, "description")
        assert name == title, (name, title)
        assert f"a {rows}×{cols} matrix" in description and "values from" in description, description
        assert "Arrow keys" in description, description  # how to move in it
    assert len(tables) == len(shapes), f"{len(tables)} tables for {len(shapes)} views"
    assert [_value(t, "name") for t in tables] == [title for title, _, _ in shapes]
    n_cells = sum(int(r) * int(c) for _, r, c in shapes)
    assert roles.count("columnheader") == sum(int(c) + 1 for _, _, c in shapes), "a header per column and the corner"
    assert roles.count("rowheader") == sum(int(r) for _, r, _ in shapes)
    assert roles.count("cell") + roles.count("gridcell") == n_cells
    announced = [text for cls, text in changes if "attn-heatmap-change" in cls]
    assert len(announced) == 1, f"one announcement per change, not per view or cell: {changes}"
    rest = announced[0]
    for description in descriptions:  # what was said: the descriptions of the views the change moved, nothing else
        rest = rest.replace(description, "")
    assert announced[0].strip() and not rest.strip(), (announced, descriptions)
    assert not [c for c in changes if "attn-heatmap-change" not in c[0] and "attn-message" not in c[0]], changes


# the explorers' boxes at this width: controls outside the page, heatmaps wider than it and whether they scroll
FIT_JS = """() => {
  const width = document.documentElement.clientWidth;
  const out = [];
  for (const root of document.querySelectorAll('.attnlib-explorer')) {
    for (const c of root.querySelectorAll('.attn-control')) {
      const box = c.getBoundingClientRect();
      const outside = box.right > width + 0.5 || box.left < -0.5;
      if (box.width && outside) out.push(`control ${c.textContent.trim()} at ${box.left}–${box.right} px`);
    }
    for (const figure of root.querySelectorAll('.attn-heatmap-figure')) {
      const box = figure.getBoundingClientRect();
      const scrolls = figure.scrollWidth > figure.clientWidth;
      if (box.right > width + 0.5) out.push(`a heatmap reaches ${box.right} px of ${width}`);
      if (scrolls && getComputedStyle(figure).overflowX !== 'auto') out.push('a heatmap is cut, not scrolled');
      const focusable = figure.querySelector('svg.attn-heatmap-grid[tabindex="0"]');
      if (scrolls && !focusable) out.push('a scrolled heatmap takes no focus');
    }
  }
  return out;
}"""


# every formula of the page's article inside the article's column, or scrolling in a box (its own line: a11y.js's
# data-a11y-wide) that takes the focus and is inside the column; and how many formulas a11y.js put on a line of
# their own
MATH_FIT_JS = """() => {
  const article = document.querySelector('article');
  const column = article.getBoundingClientRect();
  const out = [];
  for (const math of article.querySelectorAll('mjx-container')) {
    let box = math;
    while (box !== article && !(box.scrollWidth > box.clientWidth + 1
           && /auto|scroll/.test(getComputedStyle(box).overflowX))) box = box.parentElement;
    const shown = (box === article ? math : box).getBoundingClientRect();
    const text = math.querySelector('mjx-assistive-mml')?.textContent.slice(0, 60);
    if (shown.right > column.right + 0.5 || shown.left < column.left - 0.5) {
      out.push(`a formula at ${shown.left}–${shown.right} px, the column at ${column.left}–${column.right}: ${text}`);
    }
    if (box !== article && box.getAttribute('tabindex') !== '0') out.push(`scrolls in a box with no focus: ${text}`);
  }
  return {problems: out, ownLine: article.querySelectorAll('mjx-container[data-a11y-wide]').length};
}"""
# once the math's web fonts are there (a formula has its width), the frame a11y.js measures it in has been drawn
MATH_DRAWN_JS = "() => document.fonts.ready.then(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r))))"


@pytest.mark.parametrize("width", [375, 640], ids=["phone-375px", "zoom-200pct"])
def test_explorers_fit_a_phone_and_200_percent_zoom(browser, lesson_url: str, width: int) -> None:
    """375 CSS px is a phone; 640 is a 1280 px window at 200 % zoom (WCAG 1.4.4, 1.4.10)."""
    page, blocked, errors = open_page(browser, lesson_url, viewport={"width": width, "height": 800})
    try:
        wait_for_widgets(page)
        page.evaluate(MATH_DRAWN_JS)
        fit = page.evaluate(FIT_JS) + page.evaluate(MATH_FIT_JS)["problems"]
        violations = axe_violations(page)
    finally:
        page.close()
    assert not fit, "\n".join(fit)
    assert not violations, "\n".join(violations)
    assert not blocked and not errors, (blocked, errors)


WIDE_MATH = "notebooks/08_scaling"  # a page whose in-line softmax(QKᵀ/√d_k)V is wider than a phone's column
# one more in-line formula, wider than any column: the page's first, its characters repeated 30 times, in a
# paragraph of its own; then the window's resize event, on which a11y.js measures the formulas again
WIDE_FORMULA_JS = """() => {
  const math = document.querySelector('article p mjx-container:not([display="true"])');
  const wide = math.cloneNode(true);
  const inner = wide.querySelector('mjx-math');
  for (const child of [...inner.children]) for (let i = 0; i < 30; i++) inner.append(child.cloneNode(true));
  const paragraph = document.createElement('p');
  paragraph.append('A formula wider than the page: ', wide, '.');
  math.closest('p').after(paragraph);
  window.dispatchEvent(new Event('resize'));
}"""


@pytest.mark.parametrize("width", [375, 640], ids=["phone-375px", "zoom-200pct"])
def test_math_fits_a_phone_and_200_percent_zoom(browser, site: Path, width: int) -> None:
    """Every formula of lesson 08's page, and one made wider than any column, fits its column or scrolls in a box
    that takes the focus (a line of its own), at 375 CSS px and at 200 % zoom; axe finds nothing (WCAG 1.4.10,
    2.1.1)."""
    url = (site / f"{WIDE_MATH}.html").as_uri()
    page, blocked, errors = open_page(browser, url, viewport={"width": width, "height": 800})
    try:
        page.evaluate(MATH_DRAWN_JS)
        page.evaluate(WIDE_FORMULA_JS)
        page.evaluate(MATH_DRAWN_JS)
        fit = page.evaluate(MATH_FIT_JS)
        violations = axe_violations(page)
    finally:
        page.close()
    assert not fit["problems"], "\n".join(fit["problems"])
    assert fit["ownLine"] >= 1, "the formula wider than any column is not on a line of its own"
    assert not violations, "\n".join(violations)
    assert not blocked and not errors, (blocked, errors)


RUNNING_JS = """() => document.getAnimations().filter((a) => a.playState === 'running').map((a) => {
  const target = a.effect?.target;
  return `${a.animationName || a.transitionProperty || 'animation'} on ${target?.className || target?.tagName}`;
})"""

# the first explorer with a slider or a menu a page with no kernel moves, and that control
MOVABLE = "input[type=range]:not([disabled]), select:not([disabled])"


def test_nothing_moves_for_a_reader_who_asks_for_reduced_motion(browser, lesson_url: str) -> None:
    context = browser.new_context(reduced_motion="reduce", viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        page.goto(lesson_url, wait_until="load")
        wait_for_widgets(page)
        assert page.evaluate("() => matchMedia('(prefers-reduced-motion: reduce)').matches")
        control = page.locator(".attnlib-explorer").locator(MOVABLE).first
        control.focus()
        page.keyboard.press("ArrowDown" if control.evaluate("(c) => c.tagName === 'SELECT'") else "ArrowRight")
        page.keyboard.press("Tab")  # the focus moves on, the sidebar's and the page's own transitions
        running = page.evaluate(RUNNING_JS)
    finally:
        context.close()
    assert not running, running
