"""Latency of the explorers with no kernel: the site and the decks, from disk and over http, in headless Chromium.

The site and a deck per lesson are built as ``make site`` and ``make slides`` build them (the lessons executed
once with their widget state, then site/build.py and scripts/build_slides.py), into ``build/bench-static/``.
Each lesson page and each deck is opened from disk (``file://``) and over http (a server on 127.0.0.1); every
other request is blocked and counted. Then every explorer's every control the page can move with no kernel
gets ``--changes`` changes through real input (a key press on a slider, a menu's choice, a click). Each page's
row "page alone" is the same clock on a change that needs no table, as in ``bench_browser``: an arrow key moving
the focused cell of the first explorer's first view (its outline, its tooltip): the lightest change a view makes
of its own on that page (a reference, not counted in the figures of all changes).

The clock is the project's own (docs/performance.md): it starts at the ``timeStamp`` of the input event (a
capturing listener on the window: the key press, the click or the menu's ``input``) and stops in the animation
frame after the one that paints the change: the explorer dispatches ``attnlib:shown`` in the task that drew
it, whose listener asks for an animation frame (the one that paints) and, in it, for the next one. Nothing of
attnlib is instrumented; nothing waits on the clock.

Goal (issue #37): median ≤ 16 ms and p90 ≤ 25 ms per control on the site and in the decks.

Reproduce: ``.venv/bin/python -m bench.bench_static [--lessons 04 05] [--changes 20]``; figures in
``bench/results/static.json``, its table in docs/performance.md through ``python -m bench.report``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import time
from pathlib import Path

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from bench import results
from harness.labdriver import headless_chromium, load_module
from harness.static_pages import SHOW_SLIDE_JS, explorers, movable, move, open_page, serve, wait_for_widgets

GOAL = (16, 25)  # ms: median, p90
PAGE_ALONE = results.PAGE_ALONE
OUT = results.REPO / "build" / "bench-static"

# arm the clock on explorer k: the next input event's timeStamp starts it, the second animation frame after
# what it watches stops it (window.__benchDone resolves to {ms, source}): the explorer's next "attnlib:shown";
# with watch = "mutations" ("page alone"), the first change in its first view, seen by a MutationObserver
ARM_JS = """([k, watch]) => {
  const root = document.querySelectorAll('.attnlib-explorer')[k];
  const INPUTS = ['keydown', 'click', 'input', 'change'];
  let t0 = null;
  const start = (ev) => { if (t0 === null) t0 = ev.timeStamp; };
  for (const type of INPUTS) window.addEventListener(type, start, {capture: true});
  window.__benchDone = new Promise((resolve) => {
    const stop = (source) => {
      for (const type of INPUTS) window.removeEventListener(type, start, {capture: true});
      requestAnimationFrame(() => requestAnimationFrame(() => resolve({ms: performance.now() - t0, source})));
    };
    if (watch === 'mutations') {
      const seen = new MutationObserver(() => { seen.disconnect(); stop('page'); });
      const all = {subtree: true, childList: true, attributes: true, characterData: true};
      seen.observe(root.querySelector('[data-view]'), all);
    } else root.addEventListener('attnlib:shown', (ev) => stop(ev.detail.source), {once: true});
  });
}"""


def page_alone(page, k: int, changes: int) -> list[float]:
    """``changes`` timings of "page alone" on explorer k's first view, its slide shown: as in bench_browser, the
    same clock on a change that needs no table and no new state, an arrow key moving the view's focused cell (its
    outline, its tooltip, the text a screen reader announces)."""
    page.evaluate(SHOW_SLIDE_JS, k)
    grid = page.locator(".attnlib-explorer").nth(k).locator("svg.attn-heatmap-grid").first
    if not grid.count():
        return []
    times = []
    for step in range(changes + 2):  # two to warm up
        grid.focus()
        page.evaluate(ARM_JS, [k, "mutations"])
        page.keyboard.press("ArrowRight" if step % 2 == 0 else "ArrowLeft")
        done = page.evaluate("window.__benchDone")
        page.keyboard.press("Escape")  # the tooltip away
        if step >= 2:
            times.append(done["ms"])
    return times


def build(lessons: list[str] | None) -> tuple[Path, list[Path], dict[str, int]]:
    """The site (every lesson live) and one deck per lesson, in build/bench-static/; returns (site, decks, each
    lesson page's weight: everything it loads, gzip, as site/build.py counts it)."""
    site_build = load_module(results.REPO / "site" / "build.py")
    slides = load_module(results.REPO / "scripts" / "build_slides.py")
    live = ",".join(lessons) if lessons else "all"
    shutil.rmtree(OUT, ignore_errors=True)
    site_build.build(OUT / "site", OUT / "src", live=live, budget=None)  # the weights are recorded, not enforced
    weights = site_build.page_weights(OUT / "site")
    executed = sorted((OUT / "src-executed").glob("[0-9][0-9]_*.ipynb"))
    (OUT / "images").symlink_to(results.REPO / "images")  # a deck shows ../images/*.png like the lessons
    decks = slides.build(executed, OUT / "slides", executed=None)
    return OUT / "site", decks, weights


def measure_page(browser, url: str, changes: int) -> dict:
    """Every explorer's every control that moves with no kernel on the page at ``url``: ``changes`` timings."""
    page, blocked, errors = open_page(browser, url)
    rows: dict[str, list[float]] = {}
    sources: set[str] = set()
    silent: list[str] = []
    try:
        wait_for_widgets(page)
        found = explorers(page)
        if found:
            rows[PAGE_ALONE] = page_alone(page, 0, changes)
        for k, explorer in enumerate(found):
            for control in filter(movable, explorer["controls"]):
                name = f"{explorer['explorer']} {control['name']}"
                times = rows.setdefault(name, [])
                for _ in range(changes):
                    page.evaluate(ARM_JS, [k, "shown"])
                    try:
                        move(page, k, control)
                    except PlaywrightTimeout:  # an enabled control that draws nothing: recorded, not timed
                        silent.append(name)
                        break
                    done = page.evaluate("window.__benchDone")
                    times.append(done["ms"])
                    sources.add(done["source"])
    finally:
        page.close()
    return {"rows": rows, "blocked": blocked, "errors": errors, "sources": sorted(sources), "silent": silent}


def summarise(rows: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    return {name: results.summary(times) for name, times in rows.items() if times}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lessons", nargs="*", metavar="NN", help="only the lessons numbered NN")
    parser.add_argument("--changes", type=int, default=20, help="timed changes per control and page")
    parser.add_argument("--json", type=Path, default=results.RESULTS / "static.json", help="where to write")
    parser.add_argument("--no-build", action="store_true", help="measure build/bench-static/ as the last run built it")
    args = parser.parse_args()
    start = time.perf_counter()
    if args.no_build:
        site_build = load_module(results.REPO / "site" / "build.py")
        site, decks = OUT / "site", sorted((OUT / "slides").glob("*.slides.html"))
        weights = site_build.page_weights(site)
    else:
        site, decks, weights = build(args.lessons)
    built = time.perf_counter() - start
    pages = {p.stem[:2]: p for p in sorted((site / "notebooks").glob("*.html"))}
    if args.lessons:
        pages = {n: p for n, p in pages.items() if n in args.lessons}
        decks = [d for d in decks if d.name[:2] in args.lessons]
    figures: dict[str, dict] = {}
    checks: dict = {"blocked": [], "errors": [], "sources": set(), "silent": []}
    with headless_chromium() as browser, serve(OUT) as base:
        for where, paths in (("site", pages.values()), ("deck", decks)):
            for path in paths:
                for how in ("file", "http"):
                    url = path.as_uri() if how == "file" else f"{base}/{path.relative_to(OUT).as_posix()}"
                    got = measure_page(browser, url, args.changes)
                    checks["blocked"] += got["blocked"]
                    checks["errors"] += [f"{where} {how} {path.name}: {e}" for e in got["errors"]]
                    checks["sources"] |= set(got["sources"])
                    checks["silent"] += [f"{where} {how} {path.name[:2]} {name}" for name in got["silent"]]
                    for name, times in got["rows"].items():
                        if not times:
                            continue
                        key = f"{path.name[:2]} {name}"
                        figures.setdefault(key, {}).setdefault(f"{where} {how}", []).extend(times)
                        print(f"{where} {how} {key}: {results.stats(times)} ms", flush=True)
    table = {name: {column: results.summary(times) for column, times in cols.items()} for name, cols in figures.items()}
    controls = {name: cols for name, cols in figures.items() if not name.endswith(PAGE_ALONE)}
    pooled = [t for cols in controls.values() for times in cols.values() for t in times]
    overall = results.summary(pooled) if pooled else {"median": 0, "p90": 0, "n": 0}
    medians = [s["median"] for name, cols in table.items() if name in controls for s in cols.values()]
    p90s = [s["p90"] for name, cols in table.items() if name in controls for s in cols.values()]
    floors = [t for name, cols in figures.items() if name not in controls for times in cols.values() for t in times]
    if floors:
        print(f"page alone, every page: {results.stats(floors)} ms")
    print(f"all {len(pooled)} changes: median {overall['median']} ms, p90 {overall['p90']} ms")
    print(f"worst control: median {max(medians, default=0)} ms, p90 {max(p90s, default=0)} ms (goal ≤ {GOAL})")
    print(f"blocked requests {len(checks['blocked'])}, page/console errors {len(checks['errors'])}")
    print(f"enabled controls that drew nothing: {checks['silent']}")
    results.write(
        args.json,
        {
            "changes": args.changes,
            "goal": list(GOAL),
            "rows": table,
            "all": overall,
            "pages": len(pages) + len(decks),
            "blocked": checks["blocked"],
            "errors": checks["errors"],
            "sources": sorted(checks["sources"]),
            "silent": checks["silent"],
            "build_s": round(built),
            "page_weights_mb": {Path(page).stem[:2]: round(size / 1e6, 2) for page, size in weights.items()},
            "median_of_medians": round(statistics.median(medians), 1) if medians else None,
        },
    )


if __name__ == "__main__":
    main()
