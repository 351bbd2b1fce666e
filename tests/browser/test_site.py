"""`make site` works offline: the live lesson pages load in headless Chromium with every non-local request
blocked (and none attempted) and no page or console error, every explorer drawn live from its saved widget
state and answering with no kernel (from disk and over http); every internal link resolves. Every page's
math, images and axe-core check: test_site_pages.py.

The site is built once per run into a temporary folder with site/build.py (the same code as
`make site`; the fixture ``site`` of conftest.py, shared with test_site_pages.py and test_a11y.py), so the test
needs no earlier build step and checks the tree as it is. The lessons of
BROWSER_LESSONS (e.g. ``04,07,12``; unset or ``all``: every lesson) are executed with their widget state,
as `make site` executes all; the others show their stored outputs (each explorer's PNG fallback). Skipped
when Sphinx is not installed, when there is neither node_modules/mathjax-full nor npm, and (the browser part)
when there is no Chromium. Nothing waits on the clock: each step waits for what it checks.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import re
from pathlib import Path
from urllib.parse import unquote, urlparse

import nbformat
import pytest

from harness.labdriver import find_chromium, load_module, offline
from harness.static_pages import (
    SharedPages,
    check_chunk_walk,
    check_explorers,
    compare_with_python,
    lesson_outputs,
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
# the lessons executed with widget state here (`make site`: all of them)
LIVE = os.environ.get("BROWSER_LESSONS", "all").replace(" ", "") or "all"
LIVE_LESSONS = [p for p in LESSONS if LIVE == "all" or p.name[:2] in LIVE.split(",")]
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
HREF = re.compile(r"""<a\b[^>]*\bhref\s*=\s*["']([^"']+)["']""")


def _site_build():
    return load_module(REPO / "site" / "build.py")


# the site: the fixture `site` of conftest.py, built once per run (test_a11y.py checks it too)


def test_each_explorer_holds_at_most_64_kB_of_its_table_up_front(site: Path) -> None:
    """What a page holds of an explorer's table before it fetches anything (issue #37: at most 64 kB gzip): the
    saved ``table`` trait with its buffers. The rest are files beside the page, each named in it: the views' hover
    texts and a small table's other chunks (lesson 08's seeds), each at most 100 kB gzip."""
    executed = _site_build().executed_folder(site.parent / "src")
    state = load_module(REPO / "scripts" / "widget_state.py")
    held: dict[str, int] = {}
    named: list[str] = []
    for path in sorted(executed.glob("[0-9][0-9]_*.ipynb")):
        for model in state.widget_state(nbformat.read(path, as_version=4)).values():
            table = model["state"].get("table")
            if not table:
                continue
            data = b"".join(base64.b64decode(b["data"]) for b in model.get("buffers", []) if b["path"][:1] == ["table"])
            held[f"{path.stem[:2]} {table['explorer']}"] = len(gzip.compress(json.dumps(table).encode() + data, 9))
            named += list(table.get("explanations", {}).values())
            named += [f for part in table["parts"] for f in (part.get("chunk") or {}).get("files", []) if f]
    assert held and max(held.values()) <= 64_000, held
    assert any(t.startswith("07 ") for t in held) <= bool(named), "lesson 07's views are explained: files named"
    for name in named:
        file = site / "notebooks" / name
        assert file.is_file(), name
        assert len(gzip.compress(file.read_bytes(), 9)) <= 100_000, name


@pytest.fixture(scope="module")
def server(site: Path):
    with serve(site) as base:
        yield base


@pytest.fixture(scope="module")
def pages(browser):
    """The lesson pages, each opened once (from disk or over http) for the tests that read it, then taken by the
    test that moves its controls (test_explorers_answer_with_no_kernel, after the readers); a listener for the
    explorers' "attnlib:shown" events runs in each before the page's own scripts (INITIAL_EVENTS_JS)."""
    shared = SharedPages(browser, init_script=INITIAL_EVENTS_JS)
    yield shared
    shared.close()


def test_every_lesson_has_a_page(site: Path) -> None:
    pages = sorted(p.stem for p in (site / "notebooks").glob("*.html"))
    assert pages == [p.stem for p in LESSONS]
    assert (site / "index.html").is_file() and (site / "search.html").is_file()
    assert (site / "docs" / "teaching-guide.html").is_file()


def test_internal_links_resolve(site: Path) -> None:
    broken = []
    for page in sorted(site.rglob("*.html")):
        for href in HREF.findall(page.read_text("utf-8")):
            url = urlparse(href)
            if url.scheme or url.netloc or href.startswith("#") or not url.path:
                continue
            target = (page.parent / unquote(url.path)).resolve()
            if not target.is_file():
                broken.append(f"{page.relative_to(site)} -> {href}")
            elif url.fragment and target.suffix == ".html":
                if f'id="{unquote(url.fragment)}"' not in target.read_text("utf-8"):
                    broken.append(f"{page.relative_to(site)} -> {href} (no such anchor)")
    assert not broken, "\n".join(broken)


def test_each_lesson_links_to_binder(site: Path) -> None:
    """The launch link opens that lesson's learner edition (binder/postBuild) in the repository of pyproject.toml."""
    repository = _site_build().repository()
    for lesson in LESSONS:
        html = (site / "notebooks" / f"{lesson.stem}.html").read_text("utf-8")
        want = f"https://mybinder.org/v2/gh/{repository}/HEAD?labpath=my-lessons%2Flessons%2F{lesson.name}"
        assert f'href="{want}"' in html, lesson.name


@pytest.mark.parametrize("lesson", LIVE_LESSONS, ids=[p.stem for p in LIVE_LESSONS])
def test_live_page_over_http(site: Path, server: str, pages: SharedPages, lesson: Path) -> None:
    """Served over http, a lesson page loads its widget front end from the site only and draws its explorers."""
    page, blocked, errors, loaded = pages.get(f"{server}/notebooks/{lesson.stem}.html")
    drawn = wait_for_widgets(page)
    texts = page.get_by_text("Error displaying widget").count()
    page.evaluate("() => document.fonts.ready.then(() => true)")  # the math's web fonts loaded too
    assert not blocked, f"requests to the network: {blocked}"
    assert not errors, f"page errors: {errors}"
    assert drawn == lesson_outputs(lesson)[1] and texts == 0
    # everything the page loaded (its explorers not moved yet: no chunk file asked for by a change), each file
    # gzip-compressed, within the budget site/build.py enforces
    files = {site / unquote(urlparse(url).path).lstrip("/") for url in loaded if url.startswith(server)}
    weight = sum(len(gzip.compress(f.read_bytes(), 9)) for f in files)
    assert weight <= _site_build().PAGE_BUDGET, f"{lesson.stem}: {weight / 1e6:.2f} MB gzip"


def _lesson_url(site: Path, request: pytest.FixtureRequest, lesson: Path, how: str) -> str:
    if how == "file":
        return (site / "notebooks" / f"{lesson.stem}.html").as_uri()
    return f"{request.getfixturevalue('server')}/notebooks/{lesson.stem}.html"


@pytest.mark.parametrize("how", ["file", "http"])
@pytest.mark.parametrize("lesson", LIVE_LESSONS, ids=[p.stem for p in LIVE_LESSONS])
def test_page_numbers_and_hovers_are_pythons(
    site: Path, browser, request: pytest.FixtureRequest, lesson: Path, how: str
) -> None:
    """At random states reached through the page's controls, every number a view shows is the one Python
    shows: ``compute(values)`` of the same explorer (the lesson run again in a kernel), formatted by
    ``attnlib.formatting.annotation``; and hovering sampled cells of every view shows, at once (no kernel to
    wait for), the cell's labels, its value (the float64 Python computed, exactly: a 64-position view writes no
    number in its cells, its hover says it) and ``view.explain(i, j)`` at that state."""
    page, blocked, errors = open_page(browser, _lesson_url(site, request, lesson, how))
    try:
        wait_for_widgets(page)
        states = sample_states(page, seed=int(lesson.name[:2]))
    finally:
        page.close()
    assert not blocked and not errors, (blocked, errors)
    if not states:
        pytest.skip(f"{lesson.stem}: no explorer a page with no kernel can move")
    python = python_states(lesson, states)
    problems = compare_with_python(states, python)
    assert not problems, "\n".join(problems)
    assert sum(len(cells) for s in states for cells in s.hovers.values()) >= len(states), "cells hovered"


def test_each_lesson_page_offers_its_learner_notebook(site: Path) -> None:
    for lesson in LESSONS:
        html = (site / "notebooks" / f"{lesson.stem}.html").read_text("utf-8")
        assert f'href="{lesson.name}"' in html, lesson.name  # "Download this notebook"
        nb = nbformat.read(site / "notebooks" / lesson.name, as_version=4)
        assert not any(
            c.get("metadata", {}).get("slideshow", {}).get("slide_type") == "notes"
            or "teacher" in c.get("metadata", {}).get("tags", [])
            for c in nb.cells
        ), f"{lesson.name}: the download is not the learner edition"
        source = nbformat.read(lesson, as_version=4)
        assert [c.source for c in nb.cells if c.cell_type == "code"] == [
            c.source for c in source.cells if c.cell_type == "code"
        ]


def test_titles_with_math_are_text_in_the_tab_and_the_search_index(site: Path) -> None:
    titles = {p.stem: re.search(r"<title>([^<]*)</title>", p.read_text("utf-8"))[1] for p in site.rglob("*.html")}
    raw = {name: title for name, title in titles.items() if "\\" in title}
    assert not raw, raw
    assert "√d_k" in titles["08_scaling"]
    index = (site / "searchindex.js").read_text("utf-8")
    assert "\\\\sqrt" not in index and "\\sqrt" not in index.replace("scales-by-sqrt", "")


def test_launch_links_can_name_a_tag_a_teacher_pins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BINDER_REPO", "owner/name")
    monkeypatch.setenv("BINDER_REF", "v1.0")
    conf = load_module(REPO / "site" / "conf.py")
    assert conf.binder_url("01_inputs.ipynb") == (
        "https://mybinder.org/v2/gh/owner/name/v1.0?labpath=my-lessons%2Flessons%2F01_inputs.ipynb"
    )


FINISHED_JS = """() => /finished/.test(document.querySelector('.search-summary')?.textContent)
    && document.querySelectorAll('#search-results li p.context').length
       === document.querySelectorAll('#search-results li').length"""


def test_search_opened_from_disk_shows_excerpts(site: Path, browser) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    blocked, errors = offline(page)
    try:
        page.goto((site / "search.html").as_uri() + "?q=softmax", wait_until="load")
        # Sphinx adds the results one by one and each excerpt when its page has loaded: wait for both
        page.wait_for_function(FINISHED_JS, timeout=30_000)
        results = page.locator("#search-results li").count()
        excerpts = page.locator("#search-results li p.context").all_text_contents()
    finally:
        page.close()
    assert not blocked and not errors, (blocked, errors)
    assert len(excerpts) == results, (len(excerpts), results)
    assert all("softmax" in text.lower() for text in excerpts), excerpts[:3]


NO_KERNEL_NOTES_JS = """() => [...document.querySelectorAll('.attnlib-explorer')].map(root => {
  const note = root.querySelector('[data-note="no-kernel"]');
  const controls = [...root.querySelectorAll('[data-control]')].map(c => ({
    name: c.dataset.control,
    disabled: c.matches('[role=radiogroup]') ? [...c.querySelectorAll('button')].every(b => b.disabled) : c.disabled,
  }));
  return {explorer: root.dataset.explorer, note: note ? note.textContent : null, controls};
})"""


@pytest.mark.parametrize("lesson", LIVE_LESSONS, ids=[p.stem for p in LIVE_LESSONS])
def test_controls_the_note_names_stay_disabled(site: Path, pages: SharedPages, lesson: Path) -> None:
    """With no kernel, a control the no-kernel note names stays disabled once the saved state is drawn (whose
    controls' traits say ``disabled: false``)."""
    page, blocked, errors, _ = pages.get((site / "notebooks" / f"{lesson.stem}.html").as_uri())
    explorers = page.evaluate(NO_KERNEL_NOTES_JS)
    assert not blocked and not errors, (blocked, errors)
    named = [
        (e, c)
        for e in explorers
        if e["note"]
        for c in e["controls"]
        if re.search(rf"\b{c['name']}\b", e["note"].split(":")[0])
    ]
    enabled = [f"{e['explorer']}.{c['name']}" for e, c in named if not c["disabled"]]
    assert not enabled, f"named by the no-kernel note but enabled: {enabled}"


INITIAL_EVENTS_JS = """
window.attnlibShown = [];
document.addEventListener('attnlib:shown', (event) => window.attnlibShown.push({
  source: event.detail.source,
  explorer: event.target.dataset.explorer,
  connected: event.target.isConnected,
}));
"""


@pytest.mark.parametrize("lesson", LIVE_LESSONS, ids=[p.stem for p in LIVE_LESSONS])
def test_a_listener_on_the_document_sees_each_explorers_initial_state(
    site: Path, pages: SharedPages, lesson: Path
) -> None:
    """Each explorer's first "attnlib:shown" (source "initial") is dispatched once its root is in the document, so a
    listener on the document (``pages``' INITIAL_EVENTS_JS, run before the page's scripts) sees one per explorer."""
    page, blocked, errors, _ = pages.get((site / "notebooks" / f"{lesson.stem}.html").as_uri())
    page.wait_for_function(
        "() => window.attnlibShown.filter(e => e.source === 'initial').length"
        " >= document.querySelectorAll('.attnlib-explorer').length",
        timeout=10_000,
    )
    roots = page.evaluate("() => document.querySelectorAll('.attnlib-explorer').length")
    seen = page.evaluate("() => window.attnlibShown")
    assert not blocked and not errors, (blocked, errors)
    initial = [e for e in seen if e["source"] == "initial"]
    assert roots > 0 and len(initial) == roots and all(e["connected"] for e in initial), (roots, seen)


@pytest.mark.parametrize("how", ["file", "http"])
@pytest.mark.parametrize("lesson", LIVE_LESSONS, ids=[p.stem for p in LIVE_LESSONS])
def test_explorers_answer_with_no_kernel(
    site: Path, pages: SharedPages, request: pytest.FixtureRequest, lesson: Path, how: str
) -> None:
    """Every control a page with no kernel can move moves its explorer's views (from the table); every other
    control is disabled and named by the no-kernel note; nothing leaves the page, nothing fails (lesson 12's
    d_model loads the chunk of the new size from its file beside the page). It moves the controls of the page the
    tests above read (``pages``), so it comes after them: it takes the page, which no later test reads."""
    page, blocked, errors, _ = pages.take(_lesson_url(site, request, lesson, how))
    try:
        problems = check_explorers(page)
    finally:
        page.close()
    assert not problems, "\n".join(problems)
    assert not blocked, f"requests to the network: {blocked}"
    assert not errors, f"page errors: {errors}"


POSITIONS = REPO / "notebooks" / "12_positions.ipynb"


@pytest.mark.parametrize("how", ["file", "http"])
def test_every_d_model_of_lesson_12_loads_its_chunk_with_no_kernel(
    site: Path, browser, request: pytest.FixtureRequest, how: str
) -> None:
    """Lesson 12's table ships the chunk of the first d_model only; another d_model loads its chunk from the file
    beside the page (notebooks/attnlib-chunks/) when chosen, from disk and over http, and draws Python's numbers
    (compared cell by cell where the view writes them, by hover where it is too large to): sampled sizes."""
    if POSITIONS not in LIVE_LESSONS:
        pytest.skip("lesson 12 is not executed here (BROWSER_LESSONS)")
    problems = check_chunk_walk(browser, _lesson_url(site, request, POSITIONS, how), POSITIONS, counted=how == "http")
    assert not problems, "\n".join(problems)


MOVE_TO_ANOTHER_CHUNK_JS = """(root) => {
  const range = root.querySelector('input[type=range][data-control="d_model"]');
  const before = Number(range.value);
  range.value = String(before === Number(range.min) ? Number(range.max) : Number(range.min));
  range.dispatchEvent(new Event('input', {bubbles: true}));
  range.dispatchEvent(new Event('change', {bubbles: true}));
}"""


def test_a_chunk_a_page_with_no_kernel_lacks_is_named_by_its_note(
    site: Path, browser, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Lesson 12's page copied without its chunk files (the site's folders but notebooks/attnlib-chunks/): with no
    kernel, a d_model whose chunk the page was saved without shows the no-kernel note naming it, instead of
    silently drawing nothing, and the controls go back to the state drawn."""
    if POSITIONS not in LIVE_LESSONS:
        pytest.skip("lesson 12 is not executed here (BROWSER_LESSONS)")
    bare = tmp_path_factory.mktemp("bare-site")
    for entry in site.iterdir():
        if entry.name != "notebooks":
            (bare / entry.name).symlink_to(entry)
    (bare / "notebooks").mkdir()
    for entry in (site / "notebooks").iterdir():
        if entry.name != "attnlib-chunks":
            (bare / "notebooks" / entry.name).symlink_to(entry)
    assert (site / "notebooks" / "attnlib-chunks").is_dir()
    page, blocked, errors = open_page(browser, (bare / "notebooks" / f"{POSITIONS.stem}.html").as_uri())
    try:
        wait_for_widgets(page)
        root = page.locator('.attnlib-explorer[data-explorer="PositionsExplorer"]').first
        before = root.locator('[data-control="d_model"]').input_value()
        root.evaluate(MOVE_TO_ANOTHER_CHUNK_JS)
        root.locator('[data-note="no-kernel"]', has_text="d_model").wait_for()
        notes = root.locator('[data-note="no-kernel"]').all_text_contents()
        after = root.locator('[data-control="d_model"]').input_value()
    finally:
        page.close()
    missing_file = "console: Failed to load resource: net::ERR_FILE_NOT_FOUND"  # the chunk's file, not copied
    assert not blocked and not [e for e in errors if e != missing_file], (blocked, errors)
    assert any("d_model" in note and "kernel" in note for note in notes), notes
    assert after == before, "the slider goes back to the size drawn"


def test_pictures_ship_in_256_colours_when_smaller_and_look_the_same() -> None:
    import base64
    import io

    import numpy as np
    from PIL import Image

    from attnlib.show.plots import heatmap_png

    png = heatmap_png([{"matrix": np.linspace(0, 1, 64).reshape(8, 8), "title": "weights", "vmin": 0, "vmax": 1}])
    data = base64.b64encode(png).decode("ascii")
    shipped = base64.b64decode(_site_build().palette_png(data))
    before, after = Image.open(io.BytesIO(png)), Image.open(io.BytesIO(shipped))
    assert len(shipped) < len(png)
    assert after.size == before.size
    diff = np.abs(np.asarray(before.convert("RGB"), dtype=int) - np.asarray(after.convert("RGB"), dtype=int))
    assert np.percentile(diff, 99) <= 16, f"99th percentile of the colour difference: {np.percentile(diff, 99)}"
    transparent = Image.new("RGBA", (4, 4), (0, 0, 0, 0))
    buffer = io.BytesIO()
    transparent.save(buffer, "PNG")
    kept = base64.b64encode(buffer.getvalue()).decode("ascii")
    assert _site_build().palette_png(kept) == kept  # real transparency is left alone
